//! HTML forms: the posted body, its anti-forgery token, its origin, and its conversion
//! into the JSON object a domain operation reads (so a form is validated by exactly the
//! rules of the API, and each problem is shown beside its field).
//!
//! Anti-forgery: every form carries a token signed with the installation's key
//! ([`jobboard_app::app::App::form_key`]) and bound to what the form belongs to (a dashboard
//! session, or a board and form for anonymous visitors), valid for a few hours; and a post
//! whose `Origin` (or, without it, `Referer`) names another site is refused.

use std::collections::HashMap;

use axum::{
    body::Bytes,
    extract::{FromRequest, Request},
    http::{HeaderMap, header},
};
use base64::Engine as _;
use hmac::{Hmac, KeyInit, Mac};
use serde_json::{Map, Number, Value};
use sha2::Sha256;

use super::error::PageError;
use jobboard_domain::{FieldError, Input};

pub use jobboard_app::MAX_FORM_BYTES;

/// The fields of a posted form (`application/x-www-form-urlencoded`).
#[derive(Debug, Clone, Default)]
pub struct FormData(pub Vec<(String, String)>);

impl<S: Send + Sync> FromRequest<S> for FormData {
    type Rejection = PageError;

    async fn from_request(req: Request, _: &S) -> Result<Self, PageError> {
        let urlencoded = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|ct| {
                ct.split(';')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .eq_ignore_ascii_case("application/x-www-form-urlencoded")
            });
        if !urlencoded {
            return Err(PageError::bad_request(
                "This form must be sent by a browser, as a normal form.",
            ));
        }
        let body = axum::body::to_bytes(req.into_body(), MAX_FORM_BYTES)
            .await
            .map_err(|_| {
                PageError::new(
                    axum::http::StatusCode::PAYLOAD_TOO_LARGE,
                    "Too much text",
                    format!(
                        "The form is larger than {} KiB. Please shorten your text and send it again.",
                        MAX_FORM_BYTES / 1024
                    ),
                )
            })?;
        Ok(FormData::parse(&body))
    }
}

impl FormData {
    pub fn parse(body: &Bytes) -> FormData {
        FormData(serde_urlencoded::from_bytes(body).unwrap_or_default())
    }

    /// The first value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of `name` (checkbox groups, multiple selects).
    pub fn all(&self, name: &str) -> Vec<&str> {
        self.0
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// True when the hidden trap field `name`, which people never see, was filled in.
    pub fn trapped(&self, name: &str) -> bool {
        self.get(name).is_some_and(|v| !v.trim().is_empty())
    }

    /// The object a domain operation reads, from the fields named in `spec`: each value
    /// converted as its [`FormValue`] says (other fields are ignored).
    pub fn to_input(&self, spec: &[(&str, FormValue)]) -> Input {
        let mut map = Map::new();
        for (name, kind) in spec {
            let raw = self.get(name);
            if let Some(v) = kind.convert(raw) {
                map.insert((*name).to_string(), v);
            }
        }
        Input::new(map)
    }
}

/// How a form field becomes a JSON value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormValue {
    /// Text as typed; an empty field is not sent.
    Text,
    /// Text as typed; an empty field is sent as `null` (it clears the stored value).
    Clearable,
    /// A checkbox: `true` when checked, `false` when not.
    Checkbox,
    /// A number; an empty field is not sent, text that is not a number is sent as text
    /// (the operation then says it must be a number).
    Number,
    /// Text as typed, sent even when empty: an edit form's required field that was
    /// cleared is then refused by the operation ("must not be empty") instead of keeping
    /// the stored value unseen.
    Required,
    /// A number, as [`FormValue::Number`]; an empty field is sent as `null` (it clears
    /// the stored value).
    ClearableNumber,
    /// Codes separated by commas or blanks (`DE, FR`), sent as an array of them; an
    /// empty field is not sent.
    Codes,
    /// Codes, as [`FormValue::Codes`]; an empty field is sent as `null` (it clears the
    /// stored value).
    ClearableCodes,
}

impl FormValue {
    pub fn convert(self, raw: Option<&str>) -> Option<Value> {
        match self {
            FormValue::Checkbox => Some(Value::Bool(
                raw.is_some_and(|v| matches!(v, "on" | "true" | "1" | "yes")),
            )),
            FormValue::Text => raw
                .filter(|v| !v.trim().is_empty())
                .map(|v| Value::String(v.to_string())),
            FormValue::Clearable => raw.map(|v| {
                if v.trim().is_empty() {
                    Value::Null
                } else {
                    Value::String(v.to_string())
                }
            }),
            FormValue::Required => raw.map(|v| Value::String(v.to_string())),
            FormValue::ClearableNumber => match raw.map(str::trim) {
                Some("") => Some(Value::Null),
                other => FormValue::Number.convert(other),
            },
            FormValue::Codes | FormValue::ClearableCodes => {
                let codes: Vec<Value> = raw
                    .unwrap_or("")
                    .split(|c: char| c == ',' || c == ';' || c.is_whitespace())
                    .filter(|c| !c.is_empty())
                    .map(|c| Value::String(c.to_string()))
                    .collect();
                match (codes.is_empty(), self) {
                    (false, _) => Some(Value::Array(codes)),
                    (true, FormValue::ClearableCodes) if raw.is_some() => Some(Value::Null),
                    (true, _) => None,
                }
            }
            FormValue::Number => {
                let v = raw.map(str::trim).filter(|v| !v.is_empty())?;
                let n = v
                    .parse::<Number>()
                    .ok()
                    .or_else(|| v.replace(',', "").parse::<Number>().ok());
                Some(n.map_or_else(|| Value::String(v.to_string()), Value::Number))
            }
        }
    }
}

/// The problems of a refused form, by field name, to show beside each field.
#[derive(Debug, Clone, Default)]
pub struct FieldMessages(pub HashMap<String, String>);

impl FieldMessages {
    pub fn of(errors: &[FieldError]) -> FieldMessages {
        let mut m = HashMap::new();
        for e in errors {
            // The first problem of a field is the one shown.
            m.entry(e.field.clone())
                .or_insert_with(|| e.message.clone());
        }
        FieldMessages(m)
    }

    pub fn get(&self, field: &str) -> Option<&str> {
        self.0.get(field).map(String::as_str)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

type HmacSha256 = Hmac<Sha256>;

/// How long a form's token stays valid.
pub const TOKEN_MAX_AGE_SECS: i64 = 4 * 3600;

fn mac(key: &[u8], binding: &str, issued: i64) -> HmacSha256 {
    let mut m = <HmacSha256 as KeyInit>::new_from_slice(key).expect("HMAC takes any key length");
    m.update(binding.as_bytes());
    m.update(b"\0");
    m.update(&issued.to_be_bytes());
    m
}

/// A token for a form bound to `binding` (a session id, or `board:<org>:<form>`), issued
/// at `now` (Unix seconds).
pub fn token(key: &[u8], binding: &str, now: i64) -> String {
    let sig = mac(key, binding, now).finalize().into_bytes();
    let mut raw = now.to_be_bytes().to_vec();
    raw.extend_from_slice(&sig);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw)
}

/// True when `token` was issued for `binding` by this installation less than
/// [`TOKEN_MAX_AGE_SECS`] before `now` (compared in constant time).
pub fn verify(key: &[u8], binding: &str, token: &str, now: i64) -> bool {
    let Ok(raw) = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(token.trim()) else {
        return false;
    };
    if raw.len() != 8 + 32 {
        return false;
    }
    let issued = i64::from_be_bytes(raw[..8].try_into().expect("eight bytes"));
    if issued > now + 60 || now - issued > TOKEN_MAX_AGE_SECS {
        return false;
    }
    mac(key, binding, issued).verify_slice(&raw[8..]).is_ok()
}

/// True unless the post names another origin than one of `allowed` (`https://host` or
/// `http://host:port`; a `public_url` with a path counts by its origin): the scheme, host
/// and port of its `Origin` header (or, without one, its `Referer`) must be one of them.
/// A post naming neither (not sent by a browser) passes here; its token still has to be
/// valid.
pub fn same_origin(headers: &HeaderMap, allowed: &[String]) -> bool {
    let named = headers
        .get(header::ORIGIN)
        .or_else(|| headers.get(header::REFERER))
        .and_then(|v| v.to_str().ok());
    let Some(named) = named else {
        return true;
    };
    let Some(named) = origin_of(named) else {
        return false;
    };
    allowed
        .iter()
        .filter_map(|a| origin_of(a))
        .any(|a| a == named)
}

/// The origin (scheme, host, port with the scheme's default filled in) of an http(s)
/// URL; `None` for anything else (`null`, opaque origins).
fn origin_of(url: &str) -> Option<String> {
    let url = reqwest::Url::parse(url).ok()?;
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    let origin = url.origin();
    origin.is_tuple().then(|| origin.ascii_serialization())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_bound_and_expire() {
        let key = b"0123456789abcdef0123456789abcdef";
        let t = token(key, "board:1:apply", 1_000);
        assert!(verify(key, "board:1:apply", &t, 1_000));
        assert!(verify(key, "board:1:apply", &t, 1_000 + TOKEN_MAX_AGE_SECS));
        assert!(!verify(
            key,
            "board:1:apply",
            &t,
            1_001 + TOKEN_MAX_AGE_SECS
        ));
        assert!(!verify(key, "board:2:apply", &t, 1_000), "another binding");
        assert!(!verify(b"another key", "board:1:apply", &t, 1_000));
        assert!(!verify(key, "board:1:apply", "garbage", 1_000));
        let mut forged = t.clone();
        forged.replace_range(20..21, if &t[20..21] == "A" { "B" } else { "A" });
        assert!(!verify(key, "board:1:apply", &forged, 1_000));
    }

    #[test]
    fn origins_match_by_scheme_host_and_port() {
        let h = |name: header::HeaderName, v: &str| {
            let mut m = HeaderMap::new();
            m.insert(name, v.parse().unwrap());
            m
        };
        let allowed = [
            "https://jobs.example.com/base".to_string(),
            "http://127.0.0.1:8080".to_string(),
        ];
        let ok = |name, v| same_origin(&h(name, v), &allowed);
        assert!(ok(header::ORIGIN, "https://jobs.example.com"));
        assert!(ok(header::ORIGIN, "https://JOBS.example.com:443"));
        assert!(ok(header::ORIGIN, "http://127.0.0.1:8080"));
        assert!(ok(header::REFERER, "https://jobs.example.com/jobs/x?y=1"));
        assert!(!ok(header::ORIGIN, "http://jobs.example.com"), "scheme");
        assert!(!ok(header::ORIGIN, "https://jobs.example.com:8443"), "port");
        assert!(!ok(header::ORIGIN, "http://127.0.0.1:9090"), "port");
        assert!(!ok(header::ORIGIN, "http://127.0.0.1"), "port");
        assert!(!ok(header::ORIGIN, "https://evil.example"));
        assert!(!ok(header::ORIGIN, "null"));
        assert!(!ok(header::REFERER, "ftp://jobs.example.com/"));
        assert!(same_origin(&HeaderMap::new(), &allowed));
    }

    #[test]
    fn form_values_become_json() {
        let f = FormData(vec![
            ("title".into(), "Dev".into()),
            ("empty".into(), "".into()),
            ("salary".into(), "50,000".into()),
            ("bad".into(), "lots".into()),
            ("remote".into(), "on".into()),
        ]);
        let v = |k: FormValue, name: &str| k.convert(f.get(name));
        assert_eq!(v(FormValue::Text, "title"), Some(Value::from("Dev")));
        assert_eq!(v(FormValue::Text, "empty"), None);
        assert_eq!(v(FormValue::Clearable, "empty"), Some(Value::Null));
        assert_eq!(v(FormValue::Number, "salary").unwrap().to_string(), "50000");
        assert_eq!(v(FormValue::Number, "bad"), Some(Value::from("lots")));
        assert_eq!(v(FormValue::Checkbox, "remote"), Some(Value::Bool(true)));
        assert_eq!(v(FormValue::Checkbox, "absent"), Some(Value::Bool(false)));
        assert_eq!(v(FormValue::Required, "empty"), Some(Value::from("")));
        assert_eq!(v(FormValue::Required, "absent"), None);
        assert_eq!(v(FormValue::ClearableNumber, "empty"), Some(Value::Null));
        assert_eq!(
            v(FormValue::ClearableNumber, "salary").unwrap().to_string(),
            "50000"
        );
    }
}
