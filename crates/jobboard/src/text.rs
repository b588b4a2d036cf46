//! Text helpers shared by resources.

/// An ASCII, lower-case slug: letters and digits, words joined by `-`, at most `max` bytes.
/// Accented Latin letters lose their accents; other characters separate words.
pub fn slugify(input: &str, max: usize) -> String {
    let mut out = String::with_capacity(input.len().min(max));
    let mut dash = false;
    for c in input.chars() {
        let mapped = fold(c);
        for m in mapped.chars() {
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

fn fold(c: char) -> &'static str {
    match c {
        'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' | 'À' | 'Á' | 'Â' | 'Ã' | 'Ä' | 'Å' => "a",
        'æ' | 'Æ' => "ae",
        'ç' | 'Ç' => "c",
        'è' | 'é' | 'ê' | 'ë' | 'È' | 'É' | 'Ê' | 'Ë' => "e",
        'ì' | 'í' | 'î' | 'ï' | 'Ì' | 'Í' | 'Î' | 'Ï' => "i",
        'ñ' | 'Ñ' => "n",
        'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ø' | 'Ò' | 'Ó' | 'Ô' | 'Õ' | 'Ö' | 'Ø' => "o",
        'ù' | 'ú' | 'û' | 'ü' | 'Ù' | 'Ú' | 'Û' | 'Ü' => "u",
        'ý' | 'ÿ' | 'Ý' => "y",
        'ß' => "ss",
        '+' => "plus",
        '#' => "sharp",
        c if c.is_ascii_alphanumeric() => ascii(c),
        _ => " ",
    }
}

fn ascii(c: char) -> &'static str {
    const TABLE: &str = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let i = TABLE.find(c).unwrap_or(0);
    &TABLE[i..i + 1]
}

#[cfg(test)]
mod tests {
    use super::slugify;

    #[test]
    fn slugs() {
        assert_eq!(
            slugify("Senior Rust Engineer @ Acme, Inc.", 80),
            "senior-rust-engineer-acme-inc"
        );
        assert_eq!(slugify("  Café Société  ", 80), "cafe-societe");
        assert_eq!(slugify("C++ / C# dev", 80), "cplusplus-csharp-dev");
        assert_eq!(slugify("日本語", 80), "");
        assert_eq!(slugify("aaaa bbbb", 6), "aaaa-b");
        assert_eq!(slugify("aaaa bbbb", 5), "aaaa");
    }
}
