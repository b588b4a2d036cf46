//! The policies for values that reach other people: links the board or a mail may render,
//! email addresses, and when two addresses name the same person.

/// Longest accepted URL.
pub const MAX_URL: usize = 2048;
/// Longest accepted email address (RFC 5321 path limit).
pub const MAX_EMAIL: usize = 254;

/// An absolute http(s) URL with a host, no white space or control characters, at most
/// [`MAX_URL`] characters, that a browser reads as it reads: no user name or password
/// before the host (`https://good.example@evil.example/`) and no backslash (which a browser
/// reads as `/`, so `https://evil.example\@good.example/` goes to `evil.example`). Every
/// user-given link stored as a URL passes this check.
pub fn is_http_url(s: &str) -> bool {
    let Some(rest) = s
        .strip_prefix("https://")
        .or_else(|| s.strip_prefix("http://"))
    else {
        return false;
    };
    s.len() <= MAX_URL
        && !rest.starts_with(['/', ':', '?', '#'])
        && !s.contains('\\')
        && s.chars().all(|c| !c.is_whitespace() && !c.is_control())
        && url::Url::parse(s).is_ok_and(|u| {
            matches!(u.scheme(), "http" | "https")
                && u.host_str().is_some_and(|h| !h.is_empty())
                && u.username().is_empty()
                && u.password().is_none()
        })
}

/// The host a browser goes to for the http(s) URL `s` (lower case, as it shows it).
pub fn url_host(s: &str) -> Option<String> {
    let u = url::Url::parse(s).ok()?;
    matches!(u.scheme(), "http" | "https")
        .then(|| u.host_str().map(str::to_string))
        .flatten()
}

/// True for Unicode's format characters (general category Cf, Unicode 16.0): invisible
/// characters such as the zero-width space (U+200B), joiners, the soft hyphen, the byte
/// order mark, and the bidirectional controls (U+202A to U+202E, U+2066 to U+2069) that
/// reorder what is displayed. None belongs in an address, and with them a displayed
/// address can imitate another.
pub fn is_format_char(c: char) -> bool {
    matches!(
        c as u32,
        0x00AD
            | 0x0600..=0x0605
            | 0x061C
            | 0x06DD
            | 0x070F
            | 0x0890..=0x0891
            | 0x08E2
            | 0x180E
            | 0x200B..=0x200F
            | 0x202A..=0x202E
            | 0x2060..=0x2064
            | 0x2066..=0x206F
            | 0xFEFF
            | 0xFFF9..=0xFFFB
            | 0x110BD
            | 0x110CD
            | 0x13430..=0x1343F
            | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A
            | 0xE0001
            | 0xE0020..=0xE007F
    )
}

/// An address as RFC 5321 paths and RFC 5322 `addr-spec`s write it, nothing else: a
/// local part of atoms joined by dots (letters, digits and `!#$%&'*+/=?^_`{|}~-`, and any
/// non-ASCII character that is not white space, a control or a format character, as
/// RFC 6531 allows), one `@`, and a domain of dotted labels (letters, digits, `-`, and
/// non-ASCII letters). No display name (`Ada <ada@example.com>`), no quoted local part
/// (`"ada"@example.com`), no angle brackets or comments: every form of one mailbox
/// other than the plain one is refused, so limits and identities count mailboxes.
pub fn is_email(s: &str) -> bool {
    let Some((local, domain)) = s.split_once('@') else {
        return false;
    };
    let wide =
        |c: char| !c.is_ascii() && !c.is_whitespace() && !c.is_control() && !is_format_char(c);
    let atext = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+/=?^_`{|}~-".contains(c) || wide(c);
    let dotted = |part: &str, ok: &dyn Fn(char) -> bool| {
        !part.is_empty()
            && part
                .split('.')
                .all(|atom| !atom.is_empty() && atom.chars().all(ok))
    };
    let label = |c: char| c.is_ascii_alphanumeric() || c == '-' || wide(c);
    s.len() <= MAX_EMAIL
        && local.len() <= 64
        && dotted(local, &atext)
        && domain.contains('.')
        && dotted(domain, &label)
        && domain
            .split('.')
            .all(|l| !l.starts_with('-') && !l.ends_with('-'))
}

/// The identity of an email address: two addresses name the same person exactly when
/// their identities are equal.
///
/// Only ASCII letters are folded to lower case; every other character must match as
/// written. Full Unicode case folding would let different addresses meet (the Kelvin sign
/// `K` (U+212A) folds to `k`, `İ` to `i` + U+0307), so one could take over another's
/// record; ASCII folding keeps the common case (`Jane@Example.com`) matching.
pub fn email_identity(email: &str) -> String {
    email.to_ascii_lowercase()
}

/// A phone number as people write it: an optional `+`, then 6 to 20 digits, with spaces,
/// dots, dashes and parentheses between them.
pub fn is_phone(s: &str) -> bool {
    let body = s.strip_prefix('+').unwrap_or(s);
    let digits = body.chars().filter(char::is_ascii_digit).count();
    (6..=20).contains(&digits)
        && s.len() <= 40
        && body
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, ' ' | '.' | '-' | '(' | ')'))
}

/// What a user-given link may become on a page or in a mail: an http(s) URL, a `mailto:`
/// or a `tel:` link. Anything else (`javascript:`, `data:`, relative paths) is rendered
/// as text, never as a link.
pub fn renderable_href(s: &str) -> Option<String> {
    let s = s.trim();
    if is_http_url(s) {
        return Some(s.to_string());
    }
    let lower = s.to_ascii_lowercase();
    // ASCII lower-casing keeps byte offsets, so `s[7..]` is the address.
    if lower.starts_with("mailto:") {
        return is_email(&s[7..]).then(|| s.to_string());
    }
    if lower.starts_with("tel:") {
        return is_phone(&s[4..]).then(|| s.to_string());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_emails() {
        assert!(is_http_url("https://example.com/x?y=1"));
        assert!(!is_http_url("javascript:alert(1)"));
        assert!(!is_http_url("https:///nohost"));
        assert!(!is_http_url("http://exa mple.com"));
        assert!(is_email("a.b+c@example.co"));
        assert!(!is_email("a@b"));
        assert!(!is_email("a b@example.com"));
        assert!(!is_email("@example.com"));
        // One mailbox, one form: no display name, quotes, brackets or comments.
        for variant in [
            "n0 <victim@example.com>",
            "<victim@example.com>",
            "\"victim\"@example.com",
            "victim@example.com (x)",
            "victim@[127.0.0.1]",
            "vic..tim@example.com",
            ".victim@example.com",
            "victim@-example.com",
            "victim@example..com",
            "a@b@example.com",
        ] {
            assert!(!is_email(variant), "{variant}");
        }
        assert!(is_email("o'brien+jobs@mail.example.org"));
    }

    #[test]
    fn different_addresses_never_share_an_identity() {
        assert_eq!(email_identity("Jane@Example.COM"), "jane@example.com");
        assert_ne!(
            email_identity("\u{212A}ate@example.com"),
            email_identity("kate@example.com")
        );
        assert_ne!(
            email_identity("\u{130}van@example.com"),
            email_identity("i\u{307}van@example.com")
        );
        assert_ne!(
            email_identity("ÉLodie@example.com"),
            email_identity("élodie@example.com")
        );
    }

    #[test]
    fn only_safe_links_render() {
        assert!(renderable_href("https://example.com/apply").is_some());
        assert!(renderable_href("mailto:jobs@example.com").is_some());
        assert!(renderable_href("tel:+44 20 7946 0958").is_some());
        assert!(renderable_href("javascript:alert(1)").is_none());
        assert!(renderable_href("JaVaScRiPt:alert(1)").is_none());
        assert!(renderable_href("data:text/html,<script>").is_none());
        assert!(renderable_href("/relative").is_none());
        assert!(renderable_href("mailto:javascript:alert(1)").is_none());
    }

    #[test]
    fn invisible_and_direction_changing_characters_are_no_address() {
        for c in [
            '\u{200B}',
            '\u{200D}',
            '\u{202E}',
            '\u{2066}',
            '\u{FEFF}',
            '\u{AD}',
            '\u{E0041}',
        ] {
            assert!(!is_email(&format!("ad{c}a@example.com")), "{:X}", c as u32);
            assert!(!is_email(&format!("ada@exa{c}mple.com")), "{:X}", c as u32);
        }
        assert!(is_email("ada@example.com"));
        assert!(is_email("jürgen@bücher.example"));
    }

    #[test]
    fn links_that_read_otherwise_in_a_browser_are_refused() {
        for bad in [
            "https://evil.example\\@good.example/",
            "https://good.example@evil.example/",
            "https://user:pass@evil.example/",
            "https://evil.example\\good.example",
            "https:///nohost",
        ] {
            assert!(!is_http_url(bad), "{bad}");
        }
        assert!(is_http_url("https://acme.example/jobs/42?ref=board#apply"));
        assert!(is_http_url("http://127.0.0.1:8080/x"));
        assert_eq!(
            url_host("https://Acme.Example/jobs").as_deref(),
            Some("acme.example")
        );
    }
}
