//! Collection schemas: field definitions as sent on `POST /cms`, and validation of an
//! item's `data` against them.

use crate::http::input::Getters;
use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::{
    db::Ts,
    error::FieldError,
    http::input::{Input, is_http_url},
};

/// At most this many fields in one collection schema.
pub const MAX_FIELDS: usize = 40;
/// Longest value of a `text` field.
pub const TEXT_MAX: usize = 5_000;
/// Longest value of a `longtext` field.
pub const LONGTEXT_MAX: usize = 100_000;
/// Longest `url` or `image` value.
const URL_MAX: usize = 2_048;

/// The type of a schema field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum FieldType {
    /// A string of at most 5,000 characters (or `max_length`).
    Text,
    /// A string of at most 100,000 characters (or `max_length`).
    Longtext,
    /// A finite number, within `min`/`max` when given.
    Number,
    /// `true` or `false` (the strings "true" and "false" are accepted and stored as booleans).
    Boolean,
    /// An ISO 8601 date (`2026-01-31`) or date-time with offset (stored in UTC with `Z`).
    Date,
    /// An absolute http(s) URL.
    Url,
    /// An absolute http(s) URL or a site path starting with `/`.
    Image,
    /// One of `options`.
    Select,
}

pub const FIELD_TYPES: &[&str] = &[
    "text", "longtext", "number", "boolean", "date", "url", "image", "select",
];

impl FieldType {
    fn parse(s: &str) -> Option<FieldType> {
        Some(match s {
            "text" => FieldType::Text,
            "longtext" => FieldType::Longtext,
            "number" => FieldType::Number,
            "boolean" => FieldType::Boolean,
            "date" => FieldType::Date,
            "url" => FieldType::Url,
            "image" => FieldType::Image,
            "select" => FieldType::Select,
            _ => return None,
        })
    }

    fn is_text(self) -> bool {
        matches!(self, FieldType::Text | FieldType::Longtext)
    }
}

/// One field of a collection schema, as stored and returned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct FieldDef {
    /// Key of the field in an item's `data`: a letter, then letters, digits or `_` (at most 64).
    pub name: String,
    #[serde(rename = "type")]
    pub kind: FieldType,
    /// Whether items must carry a non-null (for text types: non-empty) value.
    pub required: bool,
    /// Allowed values of a `select` field (present only on select fields).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<Vec<String>>,
    /// Smallest allowed value of a `number` field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    /// Largest allowed value of a `number` field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
    /// Longest allowed value of a `text` or `longtext` field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<i64>,
}

fn valid_field_name(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 64
        && b[0].is_ascii_alphabetic()
        && b[1..]
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

/// Parses the `schema` array of `POST /cms`. Errors are named `schema`, `schema[3].type`, ...
pub fn parse_schema(v: &Value) -> Result<Vec<FieldDef>, Vec<FieldError>> {
    let Some(list) = v.as_array() else {
        return Err(vec![FieldError::new(
            "schema",
            "invalid_type",
            "Must be an array of field definitions.",
        )]);
    };
    let mut errors = Vec::new();
    if list.len() > MAX_FIELDS {
        errors.push(FieldError::new(
            "schema",
            "too_many",
            format!("At most {MAX_FIELDS} fields are allowed."),
        ));
        return Err(errors);
    }
    let mut fields = Vec::with_capacity(list.len());
    for (i, item) in list.iter().enumerate() {
        let prefix = format!("schema[{i}]");
        let Value::Object(map) = item else {
            errors.push(FieldError::new(
                prefix,
                "invalid_type",
                "Must be an object.",
            ));
            continue;
        };
        let mut input = Input::new(map.clone());
        let def = parse_field(&mut input);
        for mut e in input.into_errors() {
            e.field = format!("{prefix}.{}", e.field);
            errors.push(e);
        }
        if let Some(def) = def {
            if fields.iter().any(|f: &FieldDef| f.name == def.name) {
                errors.push(FieldError::new(
                    format!("{prefix}.name"),
                    "duplicate",
                    format!(
                        "The field name {:?} is already used in this schema.",
                        def.name
                    ),
                ));
            }
            fields.push(def);
        }
    }
    if errors.is_empty() {
        Ok(fields)
    } else {
        Err(errors)
    }
}

fn parse_field(input: &mut Input) -> Option<FieldDef> {
    let name = input
        .field_with("name", true, |v| match v.as_str() {
            Some(s) if valid_field_name(s) => Ok(s.to_string()),
            Some(_) => Err((
                "invalid_format",
                "Must be 1 to 64 characters: a letter, then letters, digits or underscores."
                    .to_string(),
            )),
            None => Err(("invalid_type", "Must be a string.".to_string())),
        })
        .opt();
    let kind = input
        .field_with("type", true, |v| {
            match v.as_str().and_then(FieldType::parse) {
                Some(t) => Ok(t),
                None => Err((
                    "invalid_value",
                    format!("Must be one of: {}.", FIELD_TYPES.join(", ")),
                )),
            }
        })
        .opt();
    let required = input.boolean("required", false).opt().unwrap_or(false);
    let options_sent = input.keys().iter().any(|k| k == "options");
    let options = input.field_with("options", false, |v| {
        let arr = v
            .as_array()
            .ok_or(("invalid_type", "Must be an array of strings.".to_string()))?;
        if arr.is_empty() {
            return Err(("too_short", "Must list at least one option.".to_string()));
        }
        let mut out: Vec<String> = Vec::with_capacity(arr.len());
        for o in arr {
            match o.as_str() {
                Some(s) if !s.is_empty() && s.chars().count() <= 255 && !s.contains('\0') => {
                    if out.iter().any(|x| x == s) {
                        return Err(("duplicate", format!("The option {s:?} is listed twice.")));
                    }
                    out.push(s.to_string());
                }
                _ => {
                    return Err((
                        "invalid_type",
                        "Every option must be a string of 1 to 255 characters without NUL."
                            .to_string(),
                    ));
                }
            }
        }
        Ok(out)
    });
    let min = input.number("min", false, f64::MIN, f64::MAX);
    let max = input.number("max", false, f64::MIN, f64::MAX);
    let max_length = input.integer("max_length", false, 1, LONGTEXT_MAX as i64);
    let kind = kind?;
    // Type-specific settings are refused on other types, so a typo cannot go unnoticed.
    let mut options = options.opt();
    match (kind, options.is_some()) {
        (FieldType::Select, false) if !options_sent => {
            input.error(
                "options",
                "required",
                "A select field needs a non-empty options array.",
            );
        }
        (t, true) if t != FieldType::Select => {
            input.error("options", "not_allowed", "Only select fields take options.");
            options = None;
        }
        _ => {}
    }
    let (min, max) = (min.opt(), max.opt());
    if kind != FieldType::Number && (min.is_some() || max.is_some()) {
        let which = if min.is_some() { "min" } else { "max" };
        input.error(which, "not_allowed", "Only number fields take min and max.");
    }
    if let (Some(a), Some(b)) = (min, max)
        && a > b
    {
        input.error("max", "out_of_range", "Must not be less than min.");
    }
    let max_length = max_length.opt();
    if let Some(n) = max_length {
        if !kind.is_text() {
            input.error(
                "max_length",
                "not_allowed",
                "Only text and longtext fields take max_length.",
            );
        } else if kind == FieldType::Text && n > TEXT_MAX as i64 {
            input.error(
                "max_length",
                "out_of_range",
                format!("A text field holds at most {TEXT_MAX} characters."),
            );
        }
    }
    Some(FieldDef {
        name: name?,
        kind,
        required,
        options,
        min: if kind == FieldType::Number { min } else { None },
        max: if kind == FieldType::Number { max } else { None },
        max_length: if kind.is_text() { max_length } else { None },
    })
}

/// Validates an item's `data` against `schema`: returns the data to store (known fields
/// only, values normalised) or every failing field, named `data.<field>`.
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

type Check = Result<Value, (&'static str, String)>;

fn check_value(f: &FieldDef, v: Value) -> Check {
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

    #[test]
    fn schema_errors_name_the_index() {
        let errs = parse_schema(&json!([
            {"name": "a", "type": "text"},
            {"name": "a", "type": "text"},
            {"name": "s", "type": "select", "options": []},
            {"name": "b", "type": "colour"},
            {"name": "n", "type": "number", "min": 5, "max": 1, "typo": 1},
        ]))
        .unwrap_err();
        assert_eq!(
            names(&errs),
            [
                "schema[1].name:duplicate",
                "schema[2].options:too_short",
                "schema[3].type:invalid_value",
                "schema[4].max:out_of_range",
                "schema[4].typo:unknown_field",
            ]
        );
        let too_many: Vec<Value> = (0..41)
            .map(|i| json!({"name": format!("f{i}"), "type": "text"}))
            .collect();
        assert_eq!(
            names(&parse_schema(&Value::Array(too_many)).unwrap_err()),
            ["schema:too_many"]
        );
    }

    #[test]
    fn data_is_checked_normalised_and_trimmed_to_the_schema() {
        let schema = parse_schema(&json!([
            {"name": "title", "type": "text", "required": true, "max_length": 5},
            {"name": "on", "type": "boolean"},
            {"name": "day", "type": "date"},
            {"name": "img", "type": "image"},
            {"name": "n", "type": "number", "min": 0, "max": 10},
        ]))
        .unwrap();
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
