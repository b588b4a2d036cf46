//! Collection schemas: the field definitions a collection is created with, read from the
//! `schema` array of `POST /cms` with every problem named `schema[3].type`, ... (the check
//! of an item's `data` against them is in [`super::data`]).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{
    PartialSchema, ToSchema,
    openapi::{
        ArrayBuilder, ObjectBuilder, Ref, RefOr,
        schema::{Schema, Type},
    },
};

use crate::{
    Field, Input,
    kind::{Check, Enum, Flag, Int, Kind, Matching, Number, Refs, TextRule, free_form},
    request, text_enum,
};

/// The field definitions of a collection, in order: stored as JSON.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Fields(pub Vec<FieldDef>);

/// At most this many fields in one collection schema.
pub const MAX_FIELDS: usize = 40;
/// Longest value of a `text` field.
pub const TEXT_MAX: usize = 5_000;
/// Longest value of a `longtext` field.
pub const LONGTEXT_MAX: usize = 100_000;

text_enum!(
    /// The type of a schema field, and what an item's value of it must be: `text`, a string
    /// of at most 5,000 characters (or `max_length`); `longtext`, at most 100,000 (or
    /// `max_length`); `number`, a finite number within `min` and `max` when given;
    /// `boolean`, `true` or `false` (the strings "true" and "false" are stored as booleans);
    /// `date`, an ISO 8601 date (`2026-01-31`, kept) or date-time with offset (stored in UTC
    /// with `Z`); `url`, an absolute http(s) URL; `image`, an absolute http(s) URL or a site
    /// path starting with a single `/`; `select`, one of `options`.
    FieldType {
        Text = "text",
        Longtext = "longtext",
        Number = "number",
        Boolean = "boolean",
        Date = "date",
        Url = "url",
        Image = "image",
        Select = "select",
    }
);

impl FieldType {
    pub(super) fn is_text(self) -> bool {
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

/// True when `s` is a valid collection slug: `^[a-z][a-z0-9_-]{0,63}$`.
pub fn valid_slug(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 64
        && b[0].is_ascii_lowercase()
        && b[1..]
            .iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_' || *c == b'-')
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

/// A collection slug, `^[a-z][a-z0-9_-]{0,63}$`.
pub type Slug = Matching<SlugRule>;

pub struct SlugRule;

impl TextRule for SlugRule {
    const PATTERN: &'static str = "^[a-z][a-z0-9_-]{0,63}$";
    const MESSAGE: &'static str = "Must match ^[a-z][a-z0-9_-]{0,63}$.";
    const MIN_LENGTH: usize = 1;
    const MAX_LENGTH: usize = 64;
    fn accepts(s: &str) -> bool {
        valid_slug(s)
    }
}

/// The name of a schema field: a letter, then letters, digits or `_`; at most 64.
pub type FieldName = Matching<FieldNameRule>;

pub struct FieldNameRule;

impl TextRule for FieldNameRule {
    const PATTERN: &'static str = "^[A-Za-z][A-Za-z0-9_]{0,63}$";
    const MESSAGE: &'static str =
        "Must be 1 to 64 characters: a letter, then letters, digits or underscores.";
    const MIN_LENGTH: usize = 1;
    const MAX_LENGTH: usize = 64;
    fn accepts(s: &str) -> bool {
        valid_field_name(s)
    }
}

/// The options of a select field: at least one, each a string of 1 to 255 characters
/// without NUL characters, no two alike.
pub struct Options;

impl Kind for Options {
    type Value = Vec<String>;
    fn parse(v: &Value) -> Check<Vec<String>> {
        let arr = v
            .as_array()
            .ok_or(("invalid_type", "Must be an array of strings.".to_string()))?;
        if arr.is_empty() {
            return Err(("too_short", "Must list at least one option.".into()));
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
                        "Every option must be a string of 1 to 255 characters without NUL.".into(),
                    ));
                }
            }
        }
        Ok(out)
    }
    fn schema() -> RefOr<Schema> {
        let option = ObjectBuilder::new()
            .schema_type(Type::String)
            .min_length(Some(1))
            .max_length(Some(255));
        ArrayBuilder::new()
            .items(option)
            .min_items(Some(1))
            .unique_items(true)
            .into()
    }
}

/// The `schema` array of `POST /cms`: at most [`MAX_FIELDS`] values, each read on its own
/// as a [`FieldDefIn`] by [`read_fields`] (so that each one's problems are named by its
/// index).
pub struct FieldArray;

impl Kind for FieldArray {
    type Value = Vec<Value>;
    fn parse(v: &Value) -> Check<Vec<Value>> {
        free_form(v)?;
        let list = v.as_array().ok_or((
            "invalid_type",
            "Must be an array of field definitions.".to_string(),
        ))?;
        if list.len() > MAX_FIELDS {
            return Err((
                "too_many",
                format!("At most {MAX_FIELDS} fields are allowed."),
            ));
        }
        Ok(list.clone())
    }
    fn schema() -> RefOr<Schema> {
        ArrayBuilder::new()
            .items(Ref::from_schema_name("FieldDefIn"))
            .max_items(Some(MAX_FIELDS))
            .into()
    }
    fn refs(out: &mut Refs) {
        out.push(("FieldDefIn".into(), FieldDefIn::schema()));
        <FieldDefIn as ToSchema>::schemas(out);
    }
}

request! {
    /// A field definition in `POST /cms`. `options` is required on, and only allowed on,
    /// `select` fields; `min` and `max` only on `number` fields; `max_length` only on `text`
    /// and `longtext` fields.
    #[sent = FieldDefSent]
    pub struct FieldDefIn {
        /// Unique in the schema.
        pub name: required FieldName,
        #[json = "type"]
        pub kind: required Enum<FieldType>,
        /// Items must carry a non-null (for text types non-empty) value. Default false.
        pub required: optional Flag,
        /// The allowed values of a `select` field.
        pub options: optional Options,
        /// Only on `number` fields.
        pub min: optional Number,
        /// Only on `number` fields; not less than `min`.
        pub max: optional Number,
        /// Only on `text` (1 to 5,000) and `longtext` (1 to 100,000) fields.
        pub max_length: optional Int<1, { LONGTEXT_MAX as i64 }>,
    }
}

/// Reads the field definitions of a `schema` array, recording every problem in `body`
/// (named `schema[3].type`, ...). The definitions are complete when `body` has no errors.
pub fn read_fields(body: &mut Input, items: &[Value]) -> Fields {
    let mut fields: Vec<FieldDef> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = format!("schema[{i}]");
        let Value::Object(map) = item else {
            body.error(&at, "invalid_type", "Must be an object.");
            continue;
        };
        // Sent as `null`, options count as not sent; sent but invalid, their own problem
        // is reported instead of a missing one.
        let options_sent = map.get("options").is_some_and(|v| !v.is_null());
        let mut input = Input::nested_at(&format!("{at}."), map.clone());
        let sent = FieldDefIn::read_sent(&mut input);
        if let Field::Value(kind) = sent.kind {
            check_settings(&mut input, kind, &sent, options_sent);
        }
        body.absorb(input);
        let Some(def) = sent.complete() else { continue };
        if fields.iter().any(|f| f.name == def.name) {
            body.error(
                &format!("{at}.name"),
                "duplicate",
                format!(
                    "The field name {:?} is already used in this schema.",
                    def.name
                ),
            );
        }
        fields.push(FieldDef {
            name: def.name,
            kind: def.kind,
            required: def.required.unwrap_or(false),
            options: def.options,
            min: def.min,
            max: def.max,
            max_length: def.max_length,
        });
    }
    Fields(fields)
}

/// The rules of a field's type-specific settings. A setting sent for another type is
/// refused, so a typo cannot go unnoticed.
fn check_settings(input: &mut Input, kind: FieldType, sent: &FieldDefSent, options_sent: bool) {
    match (kind, &sent.options) {
        (FieldType::Select, _) if !options_sent => {
            input.error(
                "options",
                "required",
                "A select field needs a non-empty options array.",
            );
        }
        (t, Field::Value(_)) if t != FieldType::Select => {
            input.error("options", "not_allowed", "Only select fields take options.");
        }
        _ => {}
    }
    let (min, max) = (sent.min.clone().opt(), sent.max.clone().opt());
    if kind != FieldType::Number && (min.is_some() || max.is_some()) {
        let which = if min.is_some() { "min" } else { "max" };
        input.error(which, "not_allowed", "Only number fields take min and max.");
    }
    if let (Some(a), Some(b)) = (min, max)
        && a > b
    {
        input.error("max", "out_of_range", "Must not be less than min.");
    }
    if let Field::Value(n) = sent.max_length {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Error, FieldError};
    use serde_json::{Map, json};

    fn names(errs: &[FieldError]) -> Vec<String> {
        errs.iter()
            .map(|e| format!("{}:{}", e.field, e.code))
            .collect()
    }

    /// Reads a `schema` array as `POST /cms` does.
    fn parse_schema(v: Value) -> Result<Vec<FieldDef>, Vec<FieldError>> {
        let mut body = Input::new(Map::new());
        let items = FieldArray::parse(&v)
            .map_err(|(code, msg)| vec![FieldError::new("schema", code, msg)])?;
        let fields = read_fields(&mut body, &items);
        match body.finish() {
            Ok(()) => Ok(fields.0),
            Err(Error::Invalid(errs)) => Err(errs),
            Err(other) => panic!("{other:?}"),
        }
    }

    #[test]
    fn slugs() {
        assert!(valid_slug("a"));
        assert!(valid_slug("blog_posts-2"));
        assert!(valid_slug(&format!("a{}", "b".repeat(63))));
        assert!(!valid_slug(&format!("a{}", "b".repeat(64))));
        assert!(!valid_slug(""));
        assert!(!valid_slug("1abc"));
        assert!(!valid_slug("Abc"));
        assert!(!valid_slug("a b"));
    }

    #[test]
    fn schema_errors_name_the_index() {
        let errs = parse_schema(json!([
            {"name": "a", "type": "text"},
            {"name": "a", "type": "text"},
            {"name": "s", "type": "select", "options": []},
            {"name": "b", "type": "colour"},
            {"name": "n", "type": "number", "min": 5, "max": 1, "typo": 1},
            {"type": "select", "options": null},
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
                "schema[5].name:required",
                "schema[5].options:required",
            ]
        );
        let too_many: Vec<Value> = (0..41)
            .map(|i| json!({"name": format!("f{i}"), "type": "text"}))
            .collect();
        assert_eq!(
            names(&parse_schema(Value::Array(too_many)).unwrap_err()),
            ["schema:too_many"]
        );
    }
}
