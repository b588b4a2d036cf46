//! Request input parsing that reports every bad field at once.
//!
//! Handlers take the body as a JSON object ([`Input`]) or the query string ([`QueryInput`]),
//! pull each field out with a typed getter, and call `finish()`: fields left over are
//! unknown and rejected, and all problems found are answered together as
//! `422 validation_failed`.

use serde_json::{Map, Value};
use uuid::Uuid;

use crate::{
    db::Ts,
    error::{ApiError, ApiResult, FieldError},
};

/// A field as sent: absent, explicitly `null`, or a value.
#[derive(Debug, Clone, PartialEq)]
pub enum Field<T> {
    Absent,
    Null,
    Value(T),
}

impl<T> Field<T> {
    /// The value, treating `null` like absence (create semantics).
    pub fn opt(self) -> Option<T> {
        match self {
            Field::Value(v) => Some(v),
            _ => None,
        }
    }

    /// `None` when absent, `Some(None)` when null (clear), `Some(Some(v))` when set.
    pub fn patch(self) -> Option<Option<T>> {
        match self {
            Field::Absent => None,
            Field::Null => Some(None),
            Field::Value(v) => Some(Some(v)),
        }
    }

    pub fn is_present(&self) -> bool {
        !matches!(self, Field::Absent)
    }
}

type Check<T> = Result<T, (&'static str, String)>;

/// A JSON object being validated.
pub struct Input {
    map: Map<String, Value>,
    prefix: String,
    errors: Vec<FieldError>,
}

impl Input {
    pub fn new(map: Map<String, Value>) -> Input {
        Input {
            map,
            prefix: String::new(),
            errors: Vec::new(),
        }
    }

    /// An object nested in a list, reported as `{prefix}field` (e.g. `events[3].type`).
    pub fn nested_at(prefix: &str, map: Map<String, Value>) -> Input {
        Input {
            map,
            prefix: prefix.to_string(),
            errors: Vec::new(),
        }
    }

    /// Parses a value that must be an object (a body).
    pub fn from_value(v: Value) -> ApiResult<Input> {
        match v {
            Value::Object(map) => Ok(Input::new(map)),
            _ => Err(ApiError::invalid_json(
                "The request body must be a JSON object.",
                None,
                None,
            )),
        }
    }

    /// True when the object has no fields left to read.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Names of the fields sent (before any was read).
    pub fn keys(&self) -> Vec<String> {
        self.map.keys().cloned().collect()
    }

    pub fn path(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    /// Records a problem with `field` (a name inside this object).
    pub fn error(&mut self, field: &str, code: &'static str, message: impl Into<String>) {
        let path = self.path(field);
        self.errors.push(FieldError::new(path, code, message));
    }

    pub fn has_errors(&self) -> bool {
        !self.errors.is_empty()
    }

    /// Reads a field with `check`; records an error when it fails or when a required field
    /// is absent or null.
    pub fn field<T>(
        &mut self,
        name: &str,
        required: bool,
        check: impl FnOnce(&Value) -> Check<T>,
    ) -> Field<T> {
        match self.map.remove(name) {
            None if required => {
                self.error(name, "required", "This field is required.");
                Field::Absent
            }
            None => Field::Absent,
            Some(Value::Null) if required => {
                self.error(
                    name,
                    "required",
                    "This field is required and cannot be null.",
                );
                Field::Null
            }
            Some(Value::Null) => Field::Null,
            Some(v) => match check(&v) {
                Ok(t) => Field::Value(t),
                Err((code, msg)) => {
                    self.error(name, code, msg);
                    Field::Absent
                }
            },
        }
    }

    /// A string of `min..=max` characters (after trimming when `trim`).
    pub fn string(&mut self, name: &str, required: bool, min: usize, max: usize) -> Field<String> {
        self.field(name, required, |v| check_string(v, min, max))
    }

    pub fn boolean(&mut self, name: &str, required: bool) -> Field<bool> {
        self.field(name, required, |v| {
            v.as_bool().ok_or_else(|| type_error("a boolean"))
        })
    }

    /// One of `allowed`.
    pub fn one_of(&mut self, name: &str, required: bool, allowed: &[&str]) -> Field<String> {
        self.field(name, required, |v| check_one_of(v, allowed))
    }

    pub fn uuid(&mut self, name: &str, required: bool) -> Field<Uuid> {
        self.field(name, required, check_uuid)
    }

    /// An absolute http(s) URL of at most 2,048 characters.
    pub fn url(&mut self, name: &str, required: bool) -> Field<String> {
        self.field(name, required, check_url)
    }

    pub fn email(&mut self, name: &str, required: bool) -> Field<String> {
        self.field(name, required, check_email)
    }

    /// An integer within `min..=max`.
    pub fn integer(&mut self, name: &str, required: bool, min: i64, max: i64) -> Field<i64> {
        self.field(name, required, |v| match v.as_i64() {
            Some(n) if (min..=max).contains(&n) => Ok(n),
            Some(_) => Err(("out_of_range", format!("Must be between {min} and {max}."))),
            None => Err(type_error("an integer")),
        })
    }

    /// A finite number within `min..=max`.
    pub fn number(&mut self, name: &str, required: bool, min: f64, max: f64) -> Field<f64> {
        self.field(name, required, |v| match v.as_f64() {
            Some(n) if n.is_finite() && n >= min && n <= max => Ok(n),
            Some(_) => Err(("out_of_range", format!("Must be between {min} and {max}."))),
            None => Err(type_error("a number")),
        })
    }

    pub fn timestamp(&mut self, name: &str, required: bool) -> Field<Ts> {
        self.field(name, required, check_timestamp)
    }

    /// A JSON object (returned as is).
    pub fn object(&mut self, name: &str, required: bool) -> Field<Map<String, Value>> {
        self.field(name, required, |v| {
            let map = v.as_object().ok_or_else(|| type_error("an object"))?;
            free_form(v)?;
            Ok(map.clone())
        })
    }

    /// Any JSON value.
    pub fn any(&mut self, name: &str) -> Field<Value> {
        self.field(name, false, |v| {
            free_form(v)?;
            Ok(v.clone())
        })
    }

    /// A nested object validated with its own fields; errors are reported as `name.field`.
    pub fn nested(&mut self, name: &str, required: bool) -> Field<Input> {
        let prefix = format!("{}{name}.", self.prefix);
        self.field(name, required, |v| match v {
            Value::Object(m) => Ok(Input::nested_at(&prefix, m.clone())),
            _ => Err(type_error("an object")),
        })
    }

    /// Takes back the errors of a nested input (after its own `leftovers`).
    pub fn absorb(&mut self, mut nested: Input) {
        nested.reject_unknown();
        self.errors.append(&mut nested.errors);
    }

    fn reject_unknown(&mut self) {
        let unknown: Vec<String> = self.map.keys().cloned().collect();
        for k in unknown {
            self.error(&k, "unknown_field", "This field is not accepted here.");
        }
        self.map.clear();
    }

    /// Ends validation: unknown fields are errors; any error fails the request.
    pub fn finish(mut self) -> ApiResult<()> {
        self.reject_unknown();
        if self.errors.is_empty() {
            Ok(())
        } else {
            Err(ApiError::validation(self.errors))
        }
    }

    /// Ends validation, returning the collected errors instead of failing.
    pub fn into_errors(mut self) -> Vec<FieldError> {
        self.reject_unknown();
        self.errors
    }
}

/// Checks a free-form JSON value before it is stored: no NUL characters in any key or
/// string (PostgreSQL cannot store them in text or JSONB), and at most 32 levels deep.
pub fn free_form(v: &Value) -> Check<()> {
    fn walk(v: &Value, depth: usize) -> Check<()> {
        if depth > 32 {
            return Err((
                "too_deep",
                "Must not be nested more than 32 levels deep.".into(),
            ));
        }
        let nul = || Err(("invalid_format", "Must not contain NUL characters.".into()));
        match v {
            Value::String(s) if s.contains('\0') => nul(),
            Value::Array(a) => a.iter().try_for_each(|x| walk(x, depth + 1)),
            Value::Object(m) => m.iter().try_for_each(|(k, x)| {
                if k.contains('\0') {
                    nul()
                } else {
                    walk(x, depth + 1)
                }
            }),
            _ => Ok(()),
        }
    }
    walk(v, 0)
}

fn type_error(what: &str) -> (&'static str, String) {
    ("invalid_type", format!("Must be {what}."))
}

pub fn check_string(v: &Value, min: usize, max: usize) -> Check<String> {
    let s = v.as_str().ok_or_else(|| type_error("a string"))?;
    let n = s.chars().count();
    if n < min {
        return Err(if min == 1 {
            ("too_short", "Must not be empty.".to_string())
        } else {
            ("too_short", format!("Must be at least {min} characters."))
        });
    }
    if n > max {
        return Err(("too_long", format!("Must be at most {max} characters.")));
    }
    if s.contains('\0') {
        return Err(("invalid_format", "Must not contain NUL characters.".into()));
    }
    Ok(s.to_string())
}

pub fn check_one_of(v: &Value, allowed: &[&str]) -> Check<String> {
    let s = v.as_str().ok_or_else(|| type_error("a string"))?;
    if allowed.contains(&s) {
        Ok(s.to_string())
    } else {
        Err((
            "invalid_value",
            format!("Must be one of: {}.", allowed.join(", ")),
        ))
    }
}

pub fn check_uuid(v: &Value) -> Check<Uuid> {
    let s = v.as_str().ok_or_else(|| type_error("a UUID string"))?;
    parse_uuid(s).ok_or_else(|| ("invalid_format", "Must be a UUID.".into()))
}

/// Parses the hyphenated UUID form only.
pub fn parse_uuid(s: &str) -> Option<Uuid> {
    if s.len() != 36 {
        return None;
    }
    Uuid::try_parse(s).ok()
}

pub fn check_url(v: &Value) -> Check<String> {
    let s = v.as_str().ok_or_else(|| type_error("a URL string"))?;
    if is_http_url(s) {
        Ok(s.to_string())
    } else {
        Err(("invalid_format", "Must be an absolute http(s) URL.".into()))
    }
}

/// An absolute http(s) URL with a host, no spaces or control characters, at most 2,048 chars.
pub fn is_http_url(s: &str) -> bool {
    let rest = if let Some(r) = s.strip_prefix("https://") {
        r
    } else if let Some(r) = s.strip_prefix("http://") {
        r
    } else {
        return false;
    };
    let host_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..host_end];
    let host = authority.rsplit('@').next().unwrap_or("");
    s.len() <= 2048
        && !host.is_empty()
        && !host.starts_with(':')
        && s.chars().all(|c| !c.is_whitespace() && !c.is_control())
}

pub fn check_email(v: &Value) -> Check<String> {
    let s = v
        .as_str()
        .ok_or_else(|| type_error("an email address string"))?;
    if is_email(s) {
        Ok(s.to_string())
    } else {
        Err(("invalid_format", "Must be an email address.".into()))
    }
}

/// A pragmatic address check: one `@`, a non-empty local part, a dotted domain, no spaces.
pub fn is_email(s: &str) -> bool {
    let Some((local, domain)) = s.split_once('@') else {
        return false;
    };
    s.len() <= 254
        && !local.is_empty()
        && local.len() <= 64
        && !domain.contains('@')
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !domain.contains("..")
        && s.chars().all(|c| {
            c.is_ascii_graphic() || (!c.is_ascii() && !c.is_whitespace() && !c.is_control())
        })
}

pub fn check_timestamp(v: &Value) -> Check<Ts> {
    let s = v
        .as_str()
        .ok_or_else(|| type_error("an RFC 3339 date-time string"))?;
    Ts::parse(s).ok_or_else(|| {
        (
            "invalid_format",
            "Must be an RFC 3339 date-time with offset, e.g. 2026-01-31T12:00:00Z.".into(),
        )
    })
}

/// The query string being validated.
pub struct QueryInput {
    pairs: Vec<(String, String)>,
    errors: Vec<FieldError>,
}

impl QueryInput {
    pub fn parse(raw: Option<&str>) -> QueryInput {
        let pairs = raw
            .map(|q| serde_urlencoded::from_str::<Vec<(String, String)>>(q).unwrap_or_default())
            .unwrap_or_default();
        QueryInput {
            pairs,
            errors: Vec::new(),
        }
    }

    pub fn error(&mut self, field: &str, code: &'static str, message: impl Into<String>) {
        self.errors.push(FieldError::new(field, code, message));
    }

    /// The value of `name` (the last one when repeated); removes every occurrence.
    pub fn take(&mut self, name: &str) -> Option<String> {
        let mut found = None;
        self.pairs.retain(|(k, v)| {
            if k == name {
                found = Some(v.clone());
                false
            } else {
                true
            }
        });
        found
    }

    pub fn string(&mut self, name: &str, max: usize) -> Option<String> {
        let v = self.take(name)?;
        if v.chars().count() > max {
            self.error(
                name,
                "too_long",
                format!("Must be at most {max} characters."),
            );
            return None;
        }
        Some(v)
    }

    pub fn integer(&mut self, name: &str, default: i64, min: i64, max: i64) -> i64 {
        match self.take(name) {
            None => default,
            Some(v) => match v.trim().parse::<i64>() {
                Ok(n) if (min..=max).contains(&n) => n,
                Ok(_) => {
                    self.error(
                        name,
                        "out_of_range",
                        format!("Must be between {min} and {max}."),
                    );
                    default
                }
                Err(_) => {
                    self.error(name, "invalid_type", "Must be an integer.");
                    default
                }
            },
        }
    }

    pub fn boolean(&mut self, name: &str) -> Option<bool> {
        match self.take(name)?.as_str() {
            "true" | "1" => Some(true),
            "false" | "0" => Some(false),
            _ => {
                self.error(name, "invalid_type", "Must be true or false.");
                None
            }
        }
    }

    /// A comma-separated list; empty items are ignored.
    pub fn list(&mut self, name: &str) -> Vec<String> {
        self.take(name)
            .map(|v| {
                v.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default()
    }

    pub fn one_of(&mut self, name: &str, allowed: &[&str]) -> Option<String> {
        let v = self.take(name)?;
        if allowed.contains(&v.as_str()) {
            Some(v)
        } else {
            self.error(
                name,
                "invalid_value",
                format!("Must be one of: {}.", allowed.join(", ")),
            );
            None
        }
    }

    /// Unknown parameters are errors; any error fails the request.
    pub fn finish(mut self) -> ApiResult<()> {
        let unknown: Vec<String> = self.pairs.drain(..).map(|(k, _)| k).collect();
        for k in unknown {
            if !self.errors.iter().any(|e| e.field == k) {
                self.error(
                    &k,
                    "unknown_parameter",
                    "This query parameter is not accepted here.",
                );
            }
        }
        if self.errors.is_empty() {
            Ok(())
        } else {
            Err(ApiError::validation(self.errors))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reports_every_bad_field_and_unknown_ones() {
        let mut i = Input::from_value(json!({"title": "", "is_remote": "yes", "typo": 1})).unwrap();
        let _ = i.string("title", true, 1, 255);
        let _ = i.boolean("is_remote", false);
        let _ = i.string("company_name", true, 1, 255);
        let err = i.finish().unwrap_err();
        let fields: Vec<String> = err.details["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                format!(
                    "{}:{}",
                    f["field"].as_str().unwrap(),
                    f["code"].as_str().unwrap()
                )
            })
            .collect();
        assert_eq!(
            fields,
            [
                "title:too_short",
                "is_remote:invalid_type",
                "company_name:required",
                "typo:unknown_field"
            ]
        );
    }

    #[test]
    fn nested_errors_carry_the_path() {
        let mut i = Input::from_value(json!({"payment": {"amount": "x", "extra": true}})).unwrap();
        if let Field::Value(mut p) = i.nested("payment", false) {
            let _ = p.number("amount", true, 0.0, 1e12);
            i.absorb(p);
        }
        let err = i.finish().unwrap_err();
        let fields = err.details["fields"].as_array().unwrap();
        assert_eq!(fields[0]["field"], "payment.amount");
        assert_eq!(fields[1]["field"], "payment.extra");
    }

    #[test]
    fn free_form_values_refuse_nul_characters() {
        let mut i = Input::from_value(
            json!({"a": {"k\u{0}": 1}, "b": {"k": ["x\u{0}"]}, "c": {"k": [1, {"d": "ok"}]}}),
        )
        .unwrap();
        assert_eq!(i.object("a", false), Field::Absent);
        assert_eq!(i.object("b", false), Field::Absent);
        assert!(matches!(i.object("c", false), Field::Value(_)));
        let err = i.finish().unwrap_err();
        assert_eq!(err.details["fields"].as_array().unwrap().len(), 2);
    }

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
    }

    #[test]
    fn query_parsing() {
        let mut q = QueryInput::parse(Some(
            "page=2&per_page=500&is_remote=maybe&x=1&job_types=a,,b",
        ));
        assert_eq!(q.integer("page", 1, 1, i64::MAX), 2);
        assert_eq!(q.integer("per_page", 20, 1, 100), 20);
        assert_eq!(q.boolean("is_remote"), None);
        assert_eq!(q.list("job_types"), ["a", "b"]);
        let err = q.finish().unwrap_err();
        assert_eq!(err.details["fields"].as_array().unwrap().len(), 3);
    }
}
