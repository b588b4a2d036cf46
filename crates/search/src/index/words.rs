//! Words as the index and the searches see them.

use super::Doc;

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
