//! Words as the index and the searches see them.

use super::Doc;
use crate::{
    block::Block,
    postings::{SetRef, pack_set, packed_bound, unpack_set},
};

/// The words of `text` as the index and the searches see them: runs of letters and
/// digits, lower-cased, with the accents of Latin letters taken off (`Café` is `cafe`).
pub fn for_each_word(text: &str, mut f: impl FnMut(&str)) {
    let mut word = String::new();
    for c in text.chars() {
        if c.is_alphanumeric() {
            if c.is_ascii() {
                word.push(c.to_ascii_lowercase());
            } else if jobboard_core::text::is_latin(c) {
                match deunicode::deunicode_char(c) {
                    Some(s) => word.extend(
                        s.chars()
                            .filter(char::is_ascii_alphanumeric)
                            .map(|c| c.to_ascii_lowercase()),
                    ),
                    None => word.extend(c.to_lowercase()),
                }
            } else {
                word.extend(c.to_lowercase());
            }
        } else if !word.is_empty() {
            f(&word);
            word.clear();
        }
    }
    if !word.is_empty() {
        f(&word);
    }
}

/// The words of a job (title, company name, description) into `words`, sorted (a word
/// may repeat): returns how many. The strings of `words` are reused from call to call,
/// so a build allocates nothing per word.
pub(super) fn doc_words(doc: &Doc, words: &mut Vec<String>) -> usize {
    let mut n = 0;
    for text in [&doc.title, &doc.company_name, &doc.description_text] {
        for_each_word(text, |w| {
            match words.get_mut(n) {
                Some(s) => {
                    s.clear();
                    s.push_str(w);
                }
                None => words.push(w.to_string()),
            }
            n += 1;
        });
    }
    words[..n].sort_unstable();
    n
}

/// The words of a search, in the index's form.
pub fn query_words(words: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for w in words {
        for_each_word(w, |t| out.push(t.to_string()));
    }
    out.sort();
    out.dedup();
    out
}

/// Words between restarts of [`PackedWords`]: a lookup reads at most this many.
const RESTART: usize = 16;

/// The words of a built index of at most 65,536 jobs, each with the jobs that had it at
/// the build, in one buffer: about 40 bytes a word for a board of a thousand jobs, where
/// a map of words to [`crate::postings::Postings`] takes 130. Read-only: jobs indexed
/// later put their words in the index's map, where a word may then be too (its sets are
/// joined), until a small index packs them all again.
///
/// The words are sorted, each written as the bytes it shares with the one before and
/// the rest (every [`RESTART`]th word whole, where a lookup may begin), followed by its
/// set ([`pack_set`]): `shared`, `rest len`, `rest`, `set len` (varints), `set`.
#[derive(Debug, Default)]
pub(super) struct PackedWords {
    bytes: Box<[u8]>,
    /// Where words 0, [`RESTART`], 2 x [`RESTART`], ... begin.
    restarts: Box<[u32]>,
    /// The sets kept as bitsets.
    dense: Box<[Box<Block>]>,
}

impl PackedWords {
    /// True when `words` words of `text` bytes in all, with `members` ordinals in all,
    /// can be packed (where a word begins is a `u32`).
    pub(super) fn fit(words: usize, text: usize, members: usize) -> bool {
        text.checked_add(packed_bound(words, members))
            .is_some_and(|n| u32::try_from(n).is_ok())
    }

    /// Packs `words` (distinct, any order; [`PackedWords::fit`] says they fit), each
    /// with its ordinals (ascending, below 65,536).
    pub(super) fn pack(mut words: Vec<(Box<str>, &[u16])>) -> PackedWords {
        words.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut bytes = Vec::new();
        let mut restarts = Vec::with_capacity(words.len().div_ceil(RESTART));
        let mut dense = Vec::new();
        let mut set = Vec::new();
        let mut prev: &[u8] = &[];
        for (i, (w, lows)) in words.iter().enumerate() {
            let w = w.as_bytes();
            let shared = if i % RESTART == 0 {
                restarts.push(bytes.len() as u32);
                0
            } else {
                w.iter().zip(prev).take_while(|(a, b)| a == b).count()
            };
            set.clear();
            pack_set(lows, &mut set, &mut dense);
            for n in [shared, w.len() - shared] {
                push_len(&mut bytes, n);
            }
            bytes.extend_from_slice(&w[shared..]);
            push_len(&mut bytes, set.len());
            bytes.extend_from_slice(&set);
            prev = w;
        }
        PackedWords {
            bytes: bytes.into_boxed_slice(),
            restarts: restarts.into_boxed_slice(),
            dense: dense.into_boxed_slice(),
        }
    }

    /// The whole word that begins restart `r`.
    fn restart_word(&self, r: usize) -> &[u8] {
        let mut at = self.restarts[r] as usize;
        let _shared = read_len(&self.bytes, &mut at);
        let n = read_len(&self.bytes, &mut at);
        &self.bytes[at..at + n]
    }

    /// The sets of the words that `w` begins.
    pub(super) fn expansions<'a>(&'a self, w: &'a str) -> impl Iterator<Item = SetRef<'a>> + 'a {
        let w = w.as_bytes();
        // The first restart at or after `w`; the words that `w` begins start in the
        // block before it (or at it).
        let (mut lo, mut hi) = (0, self.restarts.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.restart_word(mid) < w {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let mut at = match lo {
            0 => 0,
            r => self.restarts[r - 1] as usize,
        };
        let mut word: Vec<u8> = Vec::new();
        std::iter::from_fn(move || {
            while at < self.bytes.len() {
                let shared = read_len(&self.bytes, &mut at);
                let n = read_len(&self.bytes, &mut at);
                word.truncate(shared);
                word.extend_from_slice(&self.bytes[at..at + n]);
                at += n;
                let len = read_len(&self.bytes, &mut at);
                let set = &self.bytes[at..at + len];
                at += len;
                if word.as_slice() < w {
                    continue;
                }
                if !word.starts_with(w) {
                    at = self.bytes.len();
                    return None;
                }
                return Some(SetRef::Packed(unpack_set(set, &self.dense)));
            }
            None
        })
    }

    /// Every word, in order, with its ordinals.
    pub(super) fn words(&self) -> impl Iterator<Item = (Box<str>, Vec<u16>)> + '_ {
        let mut at = 0;
        let mut word: Vec<u8> = Vec::new();
        std::iter::from_fn(move || {
            if at >= self.bytes.len() {
                return None;
            }
            let shared = read_len(&self.bytes, &mut at);
            let n = read_len(&self.bytes, &mut at);
            word.truncate(shared);
            word.extend_from_slice(&self.bytes[at..at + n]);
            at += n;
            let len = read_len(&self.bytes, &mut at);
            let set = unpack_set(&self.bytes[at..at + len], &self.dense);
            at += len;
            // Whole words were written, so the bytes are a word's.
            let w = String::from_utf8_lossy(&word).into();
            Some((w, set.lows()))
        })
    }

    /// The bytes held on the heap.
    pub(super) fn heap_bytes(&self) -> usize {
        self.bytes.len()
            + self.restarts.len() * 4
            + self.dense.len() * (std::mem::size_of::<Block>() + 8)
    }
}

/// Appends a length as a varint.
fn push_len(bytes: &mut Vec<u8>, mut n: usize) {
    while n >= 0x80 {
        bytes.push((n as u8) | 0x80);
        n >>= 7;
    }
    bytes.push(n as u8);
}

/// Reads a length written by [`push_len`] at `*at`, and moves past it.
fn read_len(bytes: &[u8], at: &mut usize) -> usize {
    let mut n = 0;
    let mut shift = 0;
    while let Some(&b) = bytes.get(*at) {
        *at += 1;
        n |= usize::from(b & 0x7f) << shift;
        if b < 0x80 {
            break;
        }
        shift += 7;
    }
    n
}
