//! The fuzz targets: each takes the fuzzer's bytes to one parser of untrusted input and
//! checks what must hold for any input. A panic (the parser's, or a failed check) is a
//! finding. `src/bin/<target>.rs` hands each to AFL++.

use jobboard_domain::{Input, QueryInput};
use serde_json::Value;

/// The API's JSON reader: never panics; reads what `serde_json` reads, except documents
/// with a repeated key, and reads it the same.
pub fn strict_json(data: &[u8]) {
    let strict = jobboard_api::strict_json::from_slice(data);
    let plain = serde_json::from_slice::<Value>(data);
    match (strict, plain) {
        (Ok(s), Ok(p)) => assert_eq!(s, p, "the strict reader read another value"),
        (Ok(_), Err(e)) => panic!("the strict reader took what serde_json refuses: {e}"),
        (Err(_), _) => {}
    }
}

/// The HTML sanitiser, as job descriptions and CMS text go through it: never panics; its
/// output, and the output of sanitising that again (a description edited and saved),
/// hold no element or attribute that runs code. (The two may differ: an HTML parser
/// rebuilds mis-nested markup, such as a link inside a link, as browsers do.)
pub fn html(data: &[u8]) {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    if jobboard_domain::html::nesting_depth(s) > jobboard_domain::html::MAX_DEPTH {
        return;
    }
    let clean = jobboard_domain::html::sanitize_now(s);
    let again = jobboard_domain::html::sanitize_now(&clean.html);
    safe(&clean.html);
    safe(&again.html);
    let _ = jobboard_domain::html::html_text(s);
    let _ = jobboard_domain::html::from_prose(s);
}

/// Sanitised `html` holds no element or attribute that runs code.
fn safe(html: &str) {
    for (tag, attrs) in tags(html) {
        let tag = tag.to_ascii_lowercase();
        let banned = [
            "script", "iframe", "style", "object", "embed", "frame", "base", "form", "meta", "link",
        ];
        assert!(!banned.contains(&tag.as_str()), "<{tag}> survived: {html}");
        for (name, value) in attrs {
            let name = name.to_ascii_lowercase();
            assert!(
                !name.starts_with("on"),
                "{name}= survived on <{tag}>: {html}"
            );
            // What a browser's URL parser reads the scheme from (WHATWG URL): leading
            // and trailing C0 controls and spaces dropped, tabs and newlines dropped
            // anywhere. (Another character first, such as DEL, makes a relative URL.)
            let scheme: String = value
                .trim_matches(|c: char| c <= ' ')
                .chars()
                .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
                .collect::<String>()
                .to_ascii_lowercase();
            assert!(
                !scheme.starts_with("javascript:") && !scheme.starts_with("data:text/html"),
                "{name}=\"{value}\" survived on <{tag}>: {html}"
            );
        }
    }
}

/// The start tags of serialised HTML (the sanitiser's output: text never holds a raw
/// `<`), each with its attributes (name, value as written, entities left as they are).
fn tags(html: &str) -> Vec<(String, Vec<(String, String)>)> {
    let b = html.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'<' {
            i += 1;
            continue;
        }
        i += 1;
        if i < b.len() && (b[i] == b'/' || b[i] == b'!') {
            while i < b.len() && b[i] != b'>' {
                i += 1;
            }
            continue;
        }
        let start = i;
        while i < b.len() && b[i].is_ascii_alphanumeric() {
            i += 1;
        }
        let name = html[start..i].to_string();
        let mut attrs = Vec::new();
        loop {
            while i < b.len() && (b[i].is_ascii_whitespace() || b[i] == b'/') {
                i += 1;
            }
            if i >= b.len() || b[i] == b'>' {
                break;
            }
            let a = i;
            while i < b.len() && !b[i].is_ascii_whitespace() && !matches!(b[i], b'=' | b'>' | b'/')
            {
                i += 1;
            }
            let attr = html[a..i].to_string();
            let mut value = String::new();
            if i < b.len() && b[i] == b'=' {
                i += 1;
                if i < b.len() && b[i] == b'"' {
                    let v = i + 1;
                    i = v;
                    while i < b.len() && b[i] != b'"' {
                        i += 1;
                    }
                    value = html[v..i.min(b.len())].to_string();
                    i += 1;
                } else {
                    let v = i;
                    while i < b.len() && !b[i].is_ascii_whitespace() && b[i] != b'>' {
                        i += 1;
                    }
                    value = html[v..i].to_string();
                }
            }
            attrs.push((attr, value));
        }
        out.push((name, attrs));
    }
    out
}

/// The job list's query string, as `GET /api/jobs` and the board read it: never panics;
/// a query read without errors pages within its limits.
pub fn query(data: &[u8]) {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let mut q = QueryInput::parse(Some(s));
    let list = jobboard_domain::jobs::ListQuery::read(&mut q);
    if q.finish().is_ok() {
        assert!(list.page >= 1, "page {}", list.page);
        assert!(
            (1..=100).contains(&list.per_page),
            "per_page {}",
            list.per_page
        );
    }
}

/// A posted form, as the board's job form reads it: the form body, then the job's
/// fields from it. Never panics.
pub fn form(data: &[u8]) {
    let form = jobboard_pages::forms::FormData::parse(&bytes::Bytes::copy_from_slice(data));
    let fields = jobboard_domain::jobs::Job::form_fields();
    use jobboard_pages::model_form::Door;
    for door in [Door::Public, Door::Member, Door::Staff] {
        let mut body = jobboard_pages::model_form::body_of(&fields, door, &form);
        let _ = jobboard_domain::jobs::JobChanges::read(&mut body, true);
        let _ = body.into_errors();
    }
}

/// The import sources' formats (the first byte chooses one): never panics; every job read
/// has an id of its own. (A job without a title is read, and refused by the job's own
/// checks when it is imported: the import lists it with the reason.)
pub fn imports(data: &[u8]) {
    use jobboard_domain::imports::{Kind, parse};
    let Some((&first, body)) = data.split_first() else {
        return;
    };
    let kind = [
        Kind::Greenhouse,
        Kind::Lever,
        Kind::Ashby,
        Kind::Xml,
        Kind::JsonFeed,
    ][usize::from(first) % 5];
    if let Ok(read) = parse::read(kind, body, "Acme") {
        let mut ids = std::collections::HashSet::new();
        for item in &read.items {
            assert!(!item.external_id.trim().is_empty(), "a job without an id");
            assert!(
                ids.insert(&item.external_id),
                "the id {} twice",
                item.external_id
            );
        }
    }
}

/// A CMS collection's schema and an item's data (a JSON array `[schema, data]`): never
/// panics; data that passes is an object of the schema's fields only.
pub fn cms(data: &[u8]) {
    let Ok(Value::Array(parts)) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let (Some(Value::Array(schema)), Some(Value::Object(item))) = (parts.first(), parts.get(1))
    else {
        return;
    };
    let mut body = Input::new(serde_json::Map::new());
    let fields = jobboard_domain::cms::schema::read_fields(&mut body, schema);
    if !body.into_errors().is_empty() {
        return;
    }
    if let Ok(stored) = jobboard_domain::cms::validate_data(&fields.0, item.clone()) {
        for key in stored.keys() {
            assert!(
                fields.0.iter().any(|f| &f.name == key),
                "{key} is not in the schema"
            );
        }
    }
}

/// An organization's export, as `jobboard import` checks it before writing: never
/// panics.
pub fn export(data: &[u8]) {
    let _ = jobboard_store::transfer::check_export(data);
}
