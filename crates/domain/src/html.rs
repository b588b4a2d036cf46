//! User-given HTML (job descriptions): sanitised with an allow-list before it is stored,
//! and its plain text for search and plain-text renderings.
//!
//! HTML parsing can cost time that grows faster than the input with deep nesting (an
//! HTML parser looks through its stack of open elements at each tag), so input is
//! refused past [`MAX_DEPTH`] levels, estimated by one linear scan, and the parsing runs
//! on the blocking pool, a few at a time, never on the threads that serve requests.

use std::sync::LazyLock;

use tokio::sync::Semaphore;

/// Deepest nesting of elements accepted.
pub const MAX_DEPTH: usize = 100;

/// Why HTML was refused before sanitising.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// Elements nested deeper than [`MAX_DEPTH`].
    TooDeep,
    /// The sanitiser did not finish (it panicked): an internal failure.
    Failed,
}

/// Sanitised HTML and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clean {
    pub html: String,
    pub text: String,
}

/// At most this many sanitisations run at once (each on a blocking thread).
static SANITISERS: LazyLock<Semaphore> = LazyLock::new(|| {
    Semaphore::new(
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2),
    )
});

/// Sanitises `html` off the request threads (see the module documentation).
pub async fn sanitize(html: String) -> Result<Clean, Refused> {
    if nesting_depth(&html) > MAX_DEPTH {
        return Err(Refused::TooDeep);
    }
    let _permit = SANITISERS.acquire().await.ok();
    tokio::task::spawn_blocking(move || sanitize_now(&html))
        .await
        .map_err(|_| Refused::Failed)
}

/// Sanitises on the calling thread (callers that already run off the request threads,
/// and tests). Refuses nothing: check [`nesting_depth`] first.
pub fn sanitize_now(html: &str) -> Clean {
    let clean = ammonia::clean(html);
    let text = html_text(&clean);
    Clean { html: clean, text }
}

/// Elements that never have content.
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr",
];

/// Elements that an opening tag of the same group closes implicitly (an `li` closes the
/// open `li`, a `p` the open `p`, ...), as HTML parsers do.
fn closes_open(tag: &str, open: &str) -> bool {
    match tag {
        "li" => open == "li",
        "dt" | "dd" => matches!(open, "dt" | "dd"),
        "tr" => matches!(open, "tr" | "td" | "th"),
        "td" | "th" => matches!(open, "td" | "th"),
        "option" => open == "option",
        "p" | "div" | "ul" | "ol" | "dl" | "table" | "h1" | "h2" | "h3" | "h4" | "h5" | "h6"
        | "pre" | "blockquote" | "section" | "article" | "header" | "footer" => open == "p",
        _ => false,
    }
}

/// An estimate of how deeply the elements of `html` nest, from one linear scan of its
/// tags (implicit end tags of list items, paragraphs and table cells included). Stops
/// counting once past [`MAX_DEPTH`].
pub fn nesting_depth(html: &str) -> usize {
    let mut stack: Vec<String> = Vec::new();
    let mut deepest = 0;
    let bytes = html.as_bytes();
    let mut i = 0;
    while let Some(off) = html[i..].find('<') {
        let start = i + off + 1;
        let Some(end_off) = html[start..].find('>') else {
            break;
        };
        let end = start + end_off;
        i = end + 1;
        let inner = &html[start..end];
        if inner.starts_with('!') || inner.starts_with('?') {
            continue;
        }
        let (closing, body) = match inner.strip_prefix('/') {
            Some(b) => (true, b),
            None => (false, inner),
        };
        let name: String = body
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        if name.is_empty() {
            continue;
        }
        if closing {
            if let Some(pos) = stack.iter().rposition(|t| *t == name) {
                stack.truncate(pos);
            }
            continue;
        }
        if VOID.contains(&name.as_str()) || bytes[end - 1] == b'/' {
            continue;
        }
        while stack.last().is_some_and(|open| closes_open(&name, open)) {
            stack.pop();
        }
        stack.push(name);
        deepest = deepest.max(stack.len());
        if deepest > MAX_DEPTH {
            return deepest;
        }
    }
    deepest
}

/// The text of serialised (sanitised) HTML: tags become spaces, entities are decoded,
/// white space is collapsed.
pub fn html_text(html: &str) -> String {
    let mut raw = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                raw.push(' ');
            }
            _ if !in_tag => raw.push(c),
            _ => {}
        }
    }
    let decoded = decode_entities(&raw);
    decoded.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Text as HTML: `&`, `<`, `>` and `"` escaped (safe in element content and in quoted
/// attribute values).
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// `s` with its character references decoded (`&lt;` is `<`, `&#233;` is `é`, `&nbsp;` a
/// no-break space); an unknown or unterminated one is kept as written.
pub(crate) fn decode_entities(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let end = rest.find(';').filter(|&e| e <= 10);
        let decoded = end.and_then(|e| {
            let name = &rest[1..e];
            let c = match name {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                "nbsp" => Some('\u{a0}'),
                _ => name
                    .strip_prefix("#x")
                    .or_else(|| name.strip_prefix("#X"))
                    .and_then(|h| u32::from_str_radix(h, 16).ok())
                    .or_else(|| name.strip_prefix('#').and_then(|d| d.parse().ok()))
                    .and_then(char::from_u32),
            };
            c.map(|c| (c, e))
        });
        match decoded {
            Some((c, e)) => {
                out.push(c);
                rest = &rest[e + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The elements the sanitiser keeps.
static KEPT: LazyLock<std::collections::HashSet<&'static str>> =
    LazyLock::new(|| ammonia::Builder::default().clone_tags());

/// True when `text` holds a tag of an element the sanitiser keeps (`<p>`, `</li>`,
/// `<a href=...>`): it was written as HTML.
fn is_markup(text: &str) -> bool {
    text.match_indices('<').any(|(i, _)| {
        let rest = text[i + 1..].trim_start_matches('/');
        let name = rest
            .chars()
            .take_while(char::is_ascii_alphanumeric)
            .collect::<String>()
            .to_ascii_lowercase();
        let after = rest[name.len()..].chars().next();
        KEPT.contains(name.as_str()) && matches!(after, Some('>' | '/' | ' ' | '\t' | '\n' | '\r'))
    })
}

/// Long text as a form's prose field takes it: HTML when it is written with the tags
/// the sanitiser keeps (sanitised later, by the operation), else plain text whose blank
/// lines separate paragraphs and whose line breaks are kept (`a < b` and `<soon>` stay
/// text).
pub fn from_prose(text: &str) -> String {
    if is_markup(text) {
        return text.to_string();
    }
    let text = text
        .replace("\r\n", "\n")
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    let mut out = String::new();
    for para in text.split("\n\n") {
        let lines: Vec<&str> = para
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        if !lines.is_empty() {
            out.push_str("<p>");
            out.push_str(&lines.join("<br>"));
            out.push_str("</p>");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by fuzzing (fuzz/, `html`): a character before `javascript:` that a browser's
    /// URL parser does not drop (DEL) is kept, and is harmless: the link is relative. What
    /// a browser does drop (spaces, controls below it, tabs and newlines) cannot hide the
    /// scheme from the sanitiser.
    #[test]
    fn a_link_that_hides_its_scheme_is_relative_or_gone() {
        let base = url::Url::parse("https://board.example/jobs/x").unwrap();
        for input in [
            "<a href=\u{7f}javascript:alert(1)>x</a>",
            "<a href=\" javascript:alert(1)\">x</a>",
            "<a href=\"\u{1}javascript:alert(1)\">x</a>",
            "<a href=\"java\tscript:alert(1)\">x</a>",
            "<a href=\"java\nscript:alert(1)\">x</a>",
            "<a href=\"JAVASCRIPT:alert(1)\">x</a>",
        ] {
            let out = sanitize_now(input).html;
            let href = out
                .split("href=\"")
                .nth(1)
                .and_then(|rest| rest.split('"').next())
                .map(|h| h.replace("&amp;", "&").replace("&quot;", "\""));
            if let Some(href) = href {
                let resolved = base.join(&href).unwrap();
                assert_eq!(resolved.scheme(), "https", "{input} -> {out}");
            }
        }
    }

    /// Found by fuzzing: sanitised markup that an HTML parser rebuilds (a link inside a
    /// link) changes when sanitised again (a description edited and saved), and stays
    /// free of scripts and handlers.
    #[test]
    fn sanitising_again_may_rebuild_but_stays_clean() {
        let input = "<a href=x>2><table><t<ahrer><s://exx</a>< &amp; <a href=img srk</a>";
        let once = sanitize_now(input).html;
        let twice = sanitize_now(&once).html;
        for out in [&once, &twice] {
            assert!(!out.contains("<script") && !out.contains(" on"), "{out}");
        }
        assert_eq!(
            sanitize_now(&twice).html,
            twice,
            "a rebuilt document is stable"
        );
    }

    #[test]
    fn plain_text_becomes_paragraphs() {
        assert_eq!(
            from_prose("We build R&D tools.\nRemote.\r\n\r\nApply now"),
            "<p>We build R&amp;D tools.<br>Remote.</p><p>Apply now</p>"
        );
        assert_eq!(from_prose("<p>Hi</p>"), "<p>Hi</p>");
        assert_eq!(from_prose("Hi<BR/>there"), "Hi<BR/>there");
        assert_eq!(
            from_prose("<div><span>kept</span></div>"),
            "<div><span>kept</span></div>"
        );
        assert_eq!(from_prose("a < b, <soon>"), "<p>a &lt; b, &lt;soon&gt;</p>");
        assert_eq!(from_prose("  \n "), "");
    }

    #[test]
    fn descriptions_are_sanitised_and_stripped() {
        let c = sanitize_now(
            "<p onclick=\"x()\">Hello <b>Rust</b> &amp; <a href=\"javascript:alert(1)\">friends</a></p><script>alert(1)</script>",
        );
        assert!(!c.html.contains("script"), "{}", c.html);
        assert!(!c.html.contains("onclick"), "{}", c.html);
        assert!(!c.html.contains("javascript"), "{}", c.html);
        assert!(c.html.contains("<b>Rust</b>"), "{}", c.html);
        assert_eq!(c.text, "Hello Rust & friends");
        assert_eq!(
            html_text("a&lt;b&#62;c &#x41; &bogus; &"),
            "a<b>c A &bogus; &"
        );
    }

    #[test]
    fn nesting_is_estimated_with_implicit_end_tags() {
        assert_eq!(nesting_depth("<p>a</p><p>b</p>"), 1);
        assert_eq!(nesting_depth("<ul><li>a<li>b<li>c</ul>"), 2);
        assert_eq!(nesting_depth("<p>a<p>b<p>c"), 1);
        assert_eq!(nesting_depth("<div><br><img src=x><hr/></div>"), 1);
        assert!(nesting_depth(&"<ul><li>".repeat(12_000)) > MAX_DEPTH);
        assert!(nesting_depth(&"<div>".repeat(101)) > MAX_DEPTH);
        assert_eq!(nesting_depth(&"<div>".repeat(100)), 100);
    }
}
