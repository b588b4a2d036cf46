//! Reading request input so that every bad field is reported at once.
//!
//! A body is a JSON object held by [`Input`], a query string by [`QueryInput`]. Request
//! types (see [`crate::request!`]) take each field out with [`Input::read`] and a
//! [`Kind`]; whatever is left when `finish()` is called is unknown and refused. Every
//! problem found becomes one [`FieldError`], answered together as
//! [`Error::Invalid`].

use serde_json::{Map, Value};

use super::{
    error::{Error, FieldError, Result},
    kind::{Check, Kind},
};

/// A field as sent: absent, explicitly `null`, or a value.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Field<T> {
    #[default]
    Absent,
    Null,
    Value(T),
}

impl<T> Field<T> {
    /// The value, treating `null` like absence.
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

    pub fn as_ref(&self) -> Field<&T> {
        match self {
            Field::Absent => Field::Absent,
            Field::Null => Field::Null,
            Field::Value(v) => Field::Value(v),
        }
    }

    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Field<U> {
        match self {
            Field::Absent => Field::Absent,
            Field::Null => Field::Null,
            Field::Value(v) => Field::Value(f(v)),
        }
    }
}

/// What absence and `null` mean for one field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Must be sent, and not as `null`.
    Required,
    /// May be omitted; `null` counts as omitted.
    Optional,
    /// May be omitted, but not sent as `null` (a value that cannot be cleared).
    NotNull,
    /// May be omitted; `null` clears the stored value.
    Nullable,
}

impl Mode {
    pub fn is_required(self) -> bool {
        self == Mode::Required
    }

    /// True when `null` is an accepted value of the field.
    pub fn takes_null(self) -> bool {
        matches!(self, Mode::Optional | Mode::Nullable)
    }
}

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

    /// An object nested in another, reported as `{prefix}field` (e.g. `events[3].type`).
    pub fn nested_at(prefix: &str, map: Map<String, Value>) -> Input {
        Input {
            map,
            prefix: prefix.to_string(),
            errors: Vec::new(),
        }
    }

    /// True when the object has no fields left to read.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The value of field `name` as sent, leaving it to be read (for a rule that needs
    /// it even when other fields are invalid).
    pub fn peek(&self, name: &str) -> Option<&Value> {
        self.map.get(name)
    }

    /// Names of the fields not read yet.
    pub fn keys(&self) -> Vec<String> {
        self.map.keys().cloned().collect()
    }

    /// Sets field `name` to `value`, over anything sent (what the operation decides
    /// itself, e.g. the owner of a member's job).
    pub fn set(&mut self, name: &str, value: Value) {
        self.map.insert(name.to_string(), value);
    }

    /// True when field `name` was sent (as any value, `null` included) and not read yet.
    pub fn has(&self, name: &str) -> bool {
        self.map.contains_key(name)
    }

    /// Records a problem with the object as a whole, reported under its own path
    /// (`access` for a nested object, `body` for the request body).
    pub fn refuse(&mut self, code: &'static str, message: impl Into<String>) {
        let path = match self.prefix.strip_suffix('.') {
            Some(p) if !p.is_empty() => p.to_string(),
            _ => "body".to_string(),
        };
        self.errors.push(FieldError::new(path, code, message));
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

    /// Reads field `name` as a `K` under `mode`, recording any problem.
    pub fn read<K: Kind>(&mut self, name: &str, mode: Mode) -> Field<K::Value> {
        let field = self.field(name, mode, K::parse);
        match field {
            Field::Value(v) if K::is_blank(&v) => {
                if mode == Mode::Required {
                    self.error(name, "too_short", "Must not be blank.");
                    Field::Absent
                } else if mode == Mode::NotNull {
                    self.error(
                        name,
                        "invalid_type",
                        "Must not be null; omit the field instead.",
                    );
                    Field::Absent
                } else {
                    Field::Null
                }
            }
            other => other,
        }
    }

    /// Reads a field with `check` under `mode`, recording any problem.
    pub fn field<T>(
        &mut self,
        name: &str,
        mode: Mode,
        check: impl FnOnce(&Value) -> Check<T>,
    ) -> Field<T> {
        match self.map.remove(name) {
            None if mode == Mode::Required => {
                self.error(name, "required", "This field is required.");
                Field::Absent
            }
            None => Field::Absent,
            Some(Value::Null) => match mode {
                Mode::Required => {
                    self.error(
                        name,
                        "required",
                        "This field is required and cannot be null.",
                    );
                    Field::Null
                }
                Mode::NotNull => {
                    self.error(
                        name,
                        "invalid_type",
                        "Must not be null; omit the field instead.",
                    );
                    Field::Absent
                }
                Mode::Optional | Mode::Nullable => Field::Null,
            },
            Some(v) => match check(&v) {
                Ok(t) => Field::Value(t),
                Err((code, msg)) => {
                    self.error(name, code, msg);
                    Field::Absent
                }
            },
        }
    }

    /// A nested object read with its own fields; its errors are reported as `name.field`.
    pub fn nested(&mut self, name: &str, mode: Mode) -> Field<Input> {
        let prefix = format!("{}{name}.", self.prefix);
        self.field(name, mode, |v| match v {
            Value::Object(m) => Ok(Input::nested_at(&prefix, m.clone())),
            _ => Err(super::kind::type_error("an object")),
        })
    }

    /// Takes back the errors of a nested input, its unknown fields included.
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
    pub fn finish(mut self) -> Result<()> {
        self.reject_unknown();
        if self.errors.is_empty() {
            Ok(())
        } else {
            Err(Error::Invalid(self.errors))
        }
    }

    /// Ends validation, returning the collected errors instead of failing.
    pub fn into_errors(mut self) -> Vec<FieldError> {
        self.reject_unknown();
        self.errors
    }
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

    /// True when a problem with parameter `name` was recorded (so a value read as absent
    /// may have been sent, and refused).
    pub fn has_error(&self, name: &str) -> bool {
        self.errors.iter().any(|e| e.field == name)
    }

    /// The value of `name`. A single-valued parameter sent more than once is refused:
    /// which value was meant cannot be known (lists take repeats: [`QueryInput::list`]).
    pub fn take(&mut self, name: &str) -> Option<String> {
        let mut found: Vec<String> = Vec::new();
        self.pairs.retain(|(k, v)| {
            if k == name {
                found.push(v.clone());
                false
            } else {
                true
            }
        });
        if found.len() > 1 {
            self.error(
                name,
                "repeated_parameter",
                "Send this parameter once: it takes one value.",
            );
            return None;
        }
        found.pop()
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

    /// A list: the parameter repeated (`status=a&status=b`, as most HTTP clients and
    /// generated clients send arrays), comma-separated (`status=a,b`), or both, all with
    /// the same meaning; empty items are ignored.
    pub fn list(&mut self, name: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.pairs.retain(|(k, v)| {
            if k == name {
                out.extend(
                    v.split(',')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .map(String::from),
                );
                false
            } else {
                true
            }
        });
        out
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
    pub fn finish(mut self) -> Result<()> {
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
            Err(Error::Invalid(self.errors))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kind::{Flag, Trimmed};
    use serde_json::json;

    fn input(v: Value) -> Input {
        match v {
            Value::Object(m) => Input::new(m),
            _ => unreachable!(),
        }
    }

    fn codes(e: Error) -> Vec<String> {
        match e {
            Error::Invalid(f) => f
                .iter()
                .map(|f| format!("{}:{}", f.field, f.code))
                .collect(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn reports_every_bad_field_and_unknown_ones() {
        let mut i = input(json!({"title": "", "is_remote": "yes", "typo": 1}));
        let _ = i.read::<Trimmed<1, 255>>("title", Mode::Required);
        let _ = i.read::<Flag>("is_remote", Mode::Optional);
        let _ = i.read::<Trimmed<1, 255>>("company_name", Mode::Required);
        assert_eq!(
            codes(i.finish().unwrap_err()),
            [
                "title:too_short",
                "is_remote:invalid_type",
                "company_name:required",
                "typo:unknown_field"
            ]
        );
    }

    #[test]
    fn null_follows_the_mode() {
        let mut i = input(json!({"a": null, "b": null, "c": null, "d": null}));
        assert_eq!(i.read::<Flag>("a", Mode::Optional), Field::Null);
        assert_eq!(i.read::<Flag>("b", Mode::Nullable), Field::Null);
        assert_eq!(i.read::<Flag>("c", Mode::NotNull), Field::Absent);
        assert_eq!(i.read::<Flag>("d", Mode::Required), Field::Null);
        assert_eq!(
            codes(i.finish().unwrap_err()),
            ["c:invalid_type", "d:required"]
        );
    }

    #[test]
    fn nested_errors_carry_the_path() {
        let mut i = input(json!({"payment": {"amount": "x", "extra": true}}));
        if let Field::Value(mut p) = i.nested("payment", Mode::Optional) {
            let _ = p.read::<Flag>("amount", Mode::Required);
            i.absorb(p);
        }
        assert_eq!(
            codes(i.finish().unwrap_err()),
            ["payment.amount:invalid_type", "payment.extra:unknown_field"]
        );
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
        assert_eq!(codes(q.finish().unwrap_err()).len(), 3);
    }

    #[test]
    fn a_repeated_single_value_is_refused() {
        let mut q = QueryInput::parse(Some("page=1&page=2"));
        assert_eq!(q.integer("page", 1, 1, 10), 1);
        assert_eq!(codes(q.finish().unwrap_err()), ["page:repeated_parameter"]);
    }

    #[test]
    fn lists_take_repeats_commas_and_both() {
        for raw in [
            "status=a,b,c",
            "status=a&status=b&status=c",
            "status=a,b&status=c",
            "status=a&status=,b,&status=c",
        ] {
            let mut q = QueryInput::parse(Some(raw));
            assert_eq!(q.list("status"), ["a", "b", "c"], "{raw}");
            assert!(q.finish().is_ok(), "{raw}");
        }
    }
}
