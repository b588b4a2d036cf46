//! Words as the index and the searches see them.

use super::Doc;
use crate::{
    block::Block,
    postings::{SetRef, pack_set, packed_bound, push_varint_u32, read_varint, unpack_set},
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
/// a map of words to [`crate::postings::Postings`] takes 130. The packed sets are
/// read-only: a job indexed later puts its packed words' ordinals in the tail (while it
/// is short) and its other words in the index's map, where a packed word may then be too
/// (a search joins its sets), until a small index packs them all again.
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
    /// Jobs indexed since, with packed words: word numbers and ordinals, sorted by both
    /// (six bytes a job's word, where the map takes a word about 190).
    tail_words: Vec<u32>,
    tail_lows: Vec<u16>,
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
    pub(super) fn pack<L: AsRef<[u16]>>(mut words: Vec<(Box<str>, L)>) -> PackedWords {
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
            pack_set(lows.as_ref(), &mut set, &mut dense);
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
            tail_words: Vec::new(),
            tail_lows: Vec::new(),
        }
    }

    /// The whole word that begins restart `r`.
    fn restart_word(&self, r: usize) -> &[u8] {
        let mut at = self.restarts[r] as usize;
        let _shared = read_len(&self.bytes, &mut at);
        let n = read_len(&self.bytes, &mut at);
        &self.bytes[at..at + n]
    }

    /// The entry at `*at`: its word made from `word` (the one before), and its set's
    /// bytes; moves past it.
    fn entry(&self, at: &mut usize, word: &mut Vec<u8>) -> (usize, usize) {
        let shared = read_len(&self.bytes, at);
        let n = read_len(&self.bytes, at);
        word.truncate(shared);
        word.extend_from_slice(&self.bytes[*at..*at + n]);
        *at += n;
        let len = read_len(&self.bytes, at);
        *at += len;
        (*at - len, *at)
    }

    /// Where to start reading for the words at or after `w`: the entry and its number.
    fn seek(&self, w: &[u8]) -> (usize, usize) {
        // The first restart at or after `w`; the words from `w` on start in the block
        // before it (or at it).
        let (mut lo, mut hi) = (0, self.restarts.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.restart_word(mid) < w {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        match lo {
            0 => (0, 0),
            r => (self.restarts[r - 1] as usize, (r - 1) * RESTART),
        }
    }

    /// The ordinals of word number `i` indexed since the packing.
    fn tail(&self, i: usize) -> &[u16] {
        let i = i as u32;
        let start = self.tail_words.partition_point(|&x| x < i);
        let end = start + self.tail_words[start..].partition_point(|&x| x == i);
        &self.tail_lows[start..end]
    }

    /// The number of word `w`, when it is packed.
    pub(super) fn find(&self, w: &str) -> Option<u32> {
        let w = w.as_bytes();
        let (mut at, mut i) = self.seek(w);
        let mut word = Vec::new();
        while at < self.bytes.len() {
            self.entry(&mut at, &mut word);
            match word.as_slice().cmp(w) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Equal => return Some(i as u32),
                std::cmp::Ordering::Greater => return None,
            }
        }
        None
    }

    /// How many ordinals the tail holds.
    pub(super) fn tail_len(&self) -> usize {
        self.tail_lows.len()
    }

    /// Adds ordinal `low`, above every ordinal of the words, to the packed words
    /// numbered `words` (a job indexed after the packing).
    pub(super) fn add_job(&mut self, words: &mut [u32], low: u16) {
        words.sort_unstable();
        let n = self.tail_words.len() + words.len();
        let (mut old_words, mut old_lows) =
            (Vec::with_capacity(n + n / 8), Vec::with_capacity(n + n / 8));
        std::mem::swap(&mut old_words, &mut self.tail_words);
        std::mem::swap(&mut old_lows, &mut self.tail_lows);
        // Merged by word; `low` is the largest ordinal, so it goes last in its word.
        let mut new = words.iter().peekable();
        for (w, l) in old_words.into_iter().zip(old_lows) {
            while let Some(&&x) = new.peek()
                && x < w
            {
                self.tail_words.push(x);
                self.tail_lows.push(low);
                new.next();
            }
            self.tail_words.push(w);
            self.tail_lows.push(l);
        }
        for &x in new {
            self.tail_words.push(x);
            self.tail_lows.push(low);
        }
    }

    /// The sets of the words that `w` begins: each packed set, and its ordinals
    /// indexed since.
    pub(super) fn expansions<'a>(&'a self, w: &'a str) -> impl Iterator<Item = SetRef<'a>> + 'a {
        let w = w.as_bytes();
        let (mut at, mut i) = self.seek(w);
        let mut word: Vec<u8> = Vec::new();
        let mut since: Option<&'a [u16]> = None;
        std::iter::from_fn(move || {
            if let Some(l) = since.take() {
                return Some(SetRef::Lows(l));
            }
            while at < self.bytes.len() {
                let (start, end) = self.entry(&mut at, &mut word);
                i += 1;
                if word.as_slice() < w {
                    continue;
                }
                if !word.starts_with(w) {
                    at = self.bytes.len();
                    return None;
                }
                let tail = self.tail(i - 1);
                since = (!tail.is_empty()).then_some(tail);
                return Some(SetRef::Packed(unpack_set(
                    &self.bytes[start..end],
                    &self.dense,
                )));
            }
            None
        })
    }

    /// Every word, in order, with its ordinals (packed and since).
    pub(super) fn words(&self) -> impl Iterator<Item = (Box<str>, Vec<u16>)> + '_ {
        let mut at = 0;
        let mut i = 0;
        let mut word: Vec<u8> = Vec::new();
        std::iter::from_fn(move || {
            if at >= self.bytes.len() {
                return None;
            }
            let (start, end) = self.entry(&mut at, &mut word);
            let mut lows = unpack_set(&self.bytes[start..end], &self.dense).lows();
            lows.extend_from_slice(self.tail(i));
            i += 1;
            // Whole words were written, so the bytes are a word's.
            let w = String::from_utf8_lossy(&word).into();
            Some((w, lows))
        })
    }

    /// The bytes held on the heap.
    pub(super) fn heap_bytes(&self) -> usize {
        self.bytes.len()
            + self.restarts.len() * 4
            + self.tail_words.capacity() * 4
            + self.tail_lows.capacity() * 2
            + self.dense.len() * (std::mem::size_of::<Block>() + 8)
    }
}

/// Appends a length (below 2^32: [`PackedWords::fit`]) as a varint.
fn push_len(bytes: &mut Vec<u8>, n: usize) {
    push_varint_u32(bytes, n as u32);
}

/// Reads a length written by [`push_len`] at `*at`, and moves past it.
fn read_len(bytes: &[u8], at: &mut usize) -> usize {
    read_varint(bytes, at) as usize
}
