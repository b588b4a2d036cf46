//! The check of an item's `data` against its collection's schema: every schema field's
//! value must have its type and limits, required fields must be present; values are
//! normalised (booleans sent as text, dates in UTC) and fields the schema does not define
//! are dropped.

use chrono::NaiveDate;
use serde_json::{Map, Value};

use super::schema::{FieldDef, FieldType, LONGTEXT_MAX, TEXT_MAX};
use crate::{FieldError, Ts, kind::Check, links::is_http_url};

/// Longest `url` or `image` value.
const URL_MAX: usize = 2_048;

/// Checks an item's `data` against `schema`: returns the data to store (the schema's
/// fields only, values normalised) or every failing field, named `data.<field>`.
pub fn validate_data(
    schema: &[FieldDef],
    mut data: Map<String, Value>,
) -> Result<Map<String, Value>, Vec<FieldError>> {
    let mut out = Map::new();
    let mut errors = Vec::new();
    for f in schema {
        let path = format!("data.{}", f.name);
        match data.remove(&f.name) {
            None | Some(Value::Null) if f.required => {
                errors.push(FieldError::new(path, "required", "This field is required."));
            }
            None => {}
            Some(Value::Null) => {
                out.insert(f.name.clone(), Value::Null);
            }
            Some(v) => match check_value(f, v) {
                Ok(v) => {
                    out.insert(f.name.clone(), v);
                }
                Err((code, msg)) => errors.push(FieldError::new(path, code, msg)),
            },
        }
    }
    // Whatever is left is unknown to the schema and dropped.
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

fn check_value(f: &FieldDef, v: Value) -> Check<Value> {
    match f.kind {
        FieldType::Text | FieldType::Longtext => {
            let cap = if f.kind == FieldType::Text {
                TEXT_MAX
            } else {
                LONGTEXT_MAX
            };
            let max = f
                .max_length
                .map_or(cap, |n| usize::try_from(n).unwrap_or(cap).min(cap));
            let s = v
                .as_str()
                .ok_or(("invalid_type", "Must be a string.".to_string()))?;
            if s.chars().count() > max {
                return Err(("too_long", format!("Must be at most {max} characters.")));
            }
            if s.contains('\0') {
                return Err(("invalid_format", "Must not contain NUL characters.".into()));
            }
            if f.required && s.trim().is_empty() {
                return Err((
                    "required",
                    "This field is required and must not be empty.".into(),
                ));
            }
            Ok(v)
        }
        FieldType::Number => {
            let n = v
                .as_f64()
                .filter(|n| n.is_finite())
                .ok_or(("invalid_type", "Must be a number.".to_string()))?;
            if let Some(min) = f.min
                && n < min
            {
                return Err(("out_of_range", format!("Must be at least {min}.")));
            }
            if let Some(max) = f.max
                && n > max
            {
                return Err(("out_of_range", format!("Must be at most {max}.")));
            }
            Ok(v)
        }
        FieldType::Boolean => match &v {
            Value::Bool(_) => Ok(v),
            Value::String(s) if s == "true" => Ok(Value::Bool(true)),
            Value::String(s) if s == "false" => Ok(Value::Bool(false)),
            _ => Err(("invalid_type", "Must be true or false.".to_string())),
        },
        FieldType::Date => {
            let s = v.as_str().ok_or((
                "invalid_type",
                "Must be an ISO 8601 date string.".to_string(),
            ))?;
            if s.len() == 10
                && let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d")
            {
                return Ok(Value::String(d.format("%Y-%m-%d").to_string()));
            }
            match Ts::parse(s) {
                Some(t) => Ok(Value::String(t.to_rfc3339())),
                None => Err((
                    "invalid_format",
                    "Must be an ISO 8601 date (2026-01-31) or date-time with offset (2026-01-31T12:00:00Z)."
                        .to_string(),
                )),
            }
        }
        FieldType::Url => match v.as_str() {
            Some(s) if is_http_url(s) => Ok(v),
            Some(_) => Err(("invalid_format", "Must be an absolute http(s) URL.".into())),
            None => Err(("invalid_type", "Must be a URL string.".into())),
        },
        FieldType::Image => match v.as_str() {
            Some(s) if is_http_url(s) || is_site_path(s) => Ok(v),
            Some(_) => Err((
                "invalid_format",
                "Must be an absolute http(s) URL or a path starting with /.".into(),
            )),
            None => Err(("invalid_type", "Must be a URL or path string.".into())),
        },
        FieldType::Select => {
            let options = f.options.as_deref().unwrap_or_default();
            match v.as_str() {
                Some(s) if options.iter().any(|o| o == s) => Ok(v),
                _ => Err((
                    "invalid_value",
                    format!("Must be one of: {}.", options.join(", ")),
                )),
            }
        }
    }
}

/// A path on this site (`/img/a.png`), not a protocol-relative URL (`//host/...`).
fn is_site_path(s: &str) -> bool {
    s.starts_with('/')
        && !s.starts_with("//")
        && s.len() <= URL_MAX
        && s.chars().all(|c| !c.is_whitespace() && !c.is_control())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn names(errs: &[FieldError]) -> Vec<String> {
        errs.iter()
            .map(|e| format!("{}:{}", e.field, e.code))
            .collect()
    }

    fn field(name: &str, kind: FieldType) -> FieldDef {
        FieldDef {
            name: name.into(),
            kind,
            required: false,
            options: None,
            min: None,
            max: None,
            max_length: None,
        }
    }

    #[test]
    fn data_is_checked_normalised_and_trimmed_to_the_schema() {
        let schema = [
            FieldDef {
                required: true,
                max_length: Some(5),
                ..field("title", FieldType::Text)
            },
            field("on", FieldType::Boolean),
            field("day", FieldType::Date),
            field("img", FieldType::Image),
            FieldDef {
                min: Some(0.0),
                max: Some(10.0),
                ..field("n", FieldType::Number)
            },
        ];
        let ok = validate_data(
            &schema,
            json!({"title": "Hi", "on": "true", "day": "2026-01-02T03:00:00+01:00", "img": "/a.png", "n": 10, "extra": 1})
                .as_object()
                .unwrap()
                .clone(),
        )
        .unwrap();
        assert_eq!(
            Value::Object(ok),
            json!({"title": "Hi", "on": true, "day": "2026-01-02T02:00:00Z", "img": "/a.png", "n": 10})
        );
        let errs = validate_data(
            &schema,
            json!({"title": "Too long", "on": "yes", "day": "02/01/2026", "img": "//x", "n": 11})
                .as_object()
                .unwrap()
                .clone(),
        )
        .unwrap_err();
        assert_eq!(
            names(&errs),
            [
                "data.title:too_long",
                "data.on:invalid_type",
                "data.day:invalid_format",
                "data.img:invalid_format",
                "data.n:out_of_range",
            ]
        );
    }
}
