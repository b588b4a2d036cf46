//! Slugs: ASCII, lower-case words joined by `-`.
//!
//! Letters of the Latin script are transliterated by `deunicode` (`é` → `e`, `ł` → `l`,
//! `ß` → `ss`); letters of other scripts separate words instead: a romanised reading of,
//! say, a Japanese title is often wrong, and a slug that reads wrong is worse than the
//! neutral fallback the caller chooses (`job`).

/// An ASCII, lower-case slug: letters and digits, words joined by `-`, at most `max` bytes.
pub fn slugify(input: &str, max: usize) -> String {
    let mut out = String::with_capacity(input.len().min(max));
    let mut dash = false;
    for c in input.chars() {
        for m in fold(c).chars() {
            if m.is_ascii_alphanumeric() {
                if dash && !out.is_empty() {
                    out.push('-');
                }
                dash = false;
                out.push(m.to_ascii_lowercase());
            } else {
                dash = true;
            }
        }
        if out.len() >= max {
            break;
        }
    }
    out.truncate(max);
    out.trim_end_matches('-').to_string()
}

/// What one character contributes to a slug (non-alphanumeric output separates words).
fn fold(c: char) -> &'static str {
    match c {
        '+' => "plus",
        '#' => "sharp",
        // ASCII letters and digits stand for themselves; Latin letters are transliterated.
        c if c.is_ascii_alphanumeric() || is_latin(c) => {
            deunicode::deunicode_char(c).unwrap_or(" ")
        }
        _ => " ",
    }
}

/// Letters of the Latin script beyond ASCII (Latin-1 Supplement to Latin Extended-B,
/// and Latin Extended Additional).
pub fn is_latin(c: char) -> bool {
    matches!(c as u32, 0xC0..=0x24F | 0x1E00..=0x1EFF) && c.is_alphabetic()
}

/// A CSV field: quoted when needed, and kept from being read as a formula by
/// spreadsheets (a leading `=`, `+`, `-`, `@`, tab or carriage return gets a `'`).
pub fn csv_field(s: &str) -> String {
    let s = if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{s}")
    } else {
        s.to_string()
    };
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

/// Appends one CSV row of `cells` (each a [`csv_field`]) to `out`, ended by CRLF.
pub fn push_csv_row(out: &mut String, cells: &[String]) {
    for (i, c) in cells.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&csv_field(c));
    }
    out.push_str("\r\n");
}

#[cfg(test)]
mod tests {
    use super::{csv_field, push_csv_row, slugify};

    #[test]
    fn slugs() {
        assert_eq!(
            slugify("Senior Rust Engineer @ Acme, Inc.", 80),
            "senior-rust-engineer-acme-inc"
        );
        assert_eq!(slugify("  Café Société  ", 80), "cafe-societe");
        assert_eq!(slugify("C++ / C# dev", 80), "cplusplus-csharp-dev");
        assert_eq!(slugify("Łódź Straße Ærø", 80), "lodz-strasse-aero");
        assert_eq!(slugify("日本語", 80), "");
        assert_eq!(slugify("aaaa bbbb", 6), "aaaa-b");
        assert_eq!(slugify("aaaa bbbb", 5), "aaaa");
    }

    #[test]
    fn csv_fields_are_quoted_and_defused() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("=SUM(A1)"), "'=SUM(A1)");
        assert_eq!(csv_field("+1,2"), "\"'+1,2\"");
        let mut out = String::new();
        push_csv_row(&mut out, &["a".into(), "=b".into(), "c,d".into()]);
        assert_eq!(out, "a,'=b,\"c,d\"\r\n");
    }
}
