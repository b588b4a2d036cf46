//! Kinds of request values: how one JSON value is read and checked, and how it is
//! documented. A request type names a kind per field (see [`crate::request!`]), so the
//! parser, the every-bad-field-at-once error list and the OpenAPI schema come from one
//! definition.

use std::marker::PhantomData;

use serde_json::{Map, Value};
use utoipa::openapi::{
    KnownFormat, ObjectBuilder, RefOr, SchemaFormat,
    schema::{Schema, Type},
};
use uuid::Uuid;

mod country;
mod money;

pub use super::integer::{Integer, integer_text};
use super::{
    links,
    values::{TextEnum, Ts},
};
pub use country::{Country, CountryList};
pub use money::{Cash, Currency, UpperCurrency};

/// The result of checking one value: the value, or an error code and message.
pub type Check<T> = Result<T, (&'static str, String)>;

/// Component schemas a kind refers to (name, schema), collected for the document.
pub type Refs = Vec<(String, RefOr<Schema>)>;

/// How one kind of value is read from JSON and documented.
pub trait Kind {
    /// The checked value.
    type Value;
    /// Reads a value that is present and not `null`.
    fn parse(v: &Value) -> Check<Self::Value>;
    /// The schema of a non-null value.
    fn schema() -> RefOr<Schema>;
    /// Adds the component schemas [`Kind::schema`] refers to.
    fn refs(_out: &mut Refs) {}
    /// True when a sent value means "not set" (a blank optional line): the field then
    /// reads as `null`.
    fn is_blank(_v: &Self::Value) -> bool {
        false
    }
}

pub(crate) fn type_error(what: &str) -> (&'static str, String) {
    ("invalid_type", format!("Must be {what}."))
}

fn string_schema(min: usize, max: usize) -> ObjectBuilder {
    let b = ObjectBuilder::new().schema_type(Type::String);
    let b = if min > 0 { b.min_length(Some(min)) } else { b };
    if max < usize::MAX {
        b.max_length(Some(max))
    } else {
        b
    }
}

/// The pattern of text without NUL characters (PostgreSQL cannot store them).
pub const NO_NUL: &str = "^[^\\u0000]*$";

/// The pattern of one line: surrounding blanks (trimmed away), and between them no
/// control character (C0, DEL, C1) and no line or paragraph separator. See
/// [`check_one_line`].
pub const ONE_LINE: &str = "^[\\t\\n\\u000b\\f\\r ]*[^\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029]*[\\t\\n\\u000b\\f\\r ]*$";

/// The pattern of one line that is not blank: [`ONE_LINE`] with a character other than a
/// space between the surrounding blanks.
pub const ONE_LINE_NOT_BLANK: &str = "^[\\t\\n\\u000b\\f\\r ]*[^\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029 ]([^\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029]*[^\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029 ])?[\\t\\n\\u000b\\f\\r ]*$";

/// True for the characters a single-line field refuses: control characters (which
/// include CR, LF and tab) and Unicode's line and paragraph separators.
pub fn breaks_line(c: char) -> bool {
    c.is_control() || c == '\u{2028}' || c == '\u{2029}'
}

/// Checks that trimmed text is one line: names, titles, companies, locations end up in
/// mail subjects, page titles and CSV cells, where a line break is a new header, a
/// broken layout or a new row.
pub fn check_one_line(s: &str) -> Check<()> {
    if s.chars().any(breaks_line) {
        return Err((
            "invalid_format",
            "Must be one line: no line breaks, tabs or other control characters.".into(),
        ));
    }
    Ok(())
}

/// Blank text is made of these: ASCII white space (the same set on every side of the
/// API, and as the document's patterns say).
const BLANK: &[char] = &[' ', '\t', '\n', '\u{b}', '\u{c}', '\r'];

/// `s` without surrounding blanks.
pub fn trim_blank(s: &str) -> &str {
    s.trim_matches(BLANK)
}

/// A string of `min..=max` characters without NUL characters.
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

/// Text of `MIN..=MAX` characters, kept as sent.
pub struct Text<const MIN: usize, const MAX: usize>;

impl<const MIN: usize, const MAX: usize> Kind for Text<MIN, MAX> {
    type Value = String;
    fn parse(v: &Value) -> Check<String> {
        check_string(v, MIN, MAX)
    }
    fn schema() -> RefOr<Schema> {
        string_schema(MIN, MAX).pattern(Some(NO_NUL)).into()
    }
}

/// One line of `MIN..=MAX` characters (at least one), stored without surrounding white
/// space; a blank value, or a line break or other control character inside, is refused.
pub struct Trimmed<const MIN: usize, const MAX: usize>;

impl<const MIN: usize, const MAX: usize> Kind for Trimmed<MIN, MAX> {
    type Value = String;
    fn parse(v: &Value) -> Check<String> {
        let s = check_string(v, MIN, MAX)?;
        let t = trim_blank(&s);
        if t.is_empty() {
            return Err(("too_short", "Must not be blank.".into()));
        }
        check_one_line(t)?;
        Ok(t.to_string())
    }
    fn schema() -> RefOr<Schema> {
        string_schema(MIN.max(1), MAX)
            .pattern(Some(ONE_LINE_NOT_BLANK))
            .into()
    }
}

/// An optional line of at most `MAX` characters, stored trimmed; a blank one counts as
/// not set, and a line break or other control character inside is refused.
pub struct Line<const MAX: usize>;

impl<const MAX: usize> Kind for Line<MAX> {
    type Value = String;
    fn parse(v: &Value) -> Check<String> {
        let s = check_string(v, 0, MAX)?;
        let t = trim_blank(&s);
        check_one_line(t)?;
        Ok(t.to_string())
    }
    fn schema() -> RefOr<Schema> {
        string_schema(0, MAX).pattern(Some(ONE_LINE)).into()
    }
    fn is_blank(v: &String) -> bool {
        v.is_empty()
    }
}

/// The rule of a string kind checked by a predicate and documented by a pattern (slugs,
/// names, colours): see [`Matching`].
pub trait TextRule {
    /// The pattern documenting the rule (the predicate is what decides).
    const PATTERN: &'static str;
    /// What the value must be, said to the client.
    const MESSAGE: &'static str;
    const MIN_LENGTH: usize;
    const MAX_LENGTH: usize;
    /// True when `s` (after [`TextRule::normalize`]) follows the rule.
    fn accepts(s: &str) -> bool;
    /// The stored form of a sent value (as sent, by default).
    fn normalize(s: &str) -> String {
        s.to_string()
    }
}

/// A string that follows the rule `R`.
pub struct Matching<R>(PhantomData<R>);

impl<R: TextRule> Kind for Matching<R> {
    type Value = String;
    fn parse(v: &Value) -> Check<String> {
        let s = R::normalize(v.as_str().ok_or_else(|| type_error("a string"))?);
        if R::accepts(&s) {
            Ok(s)
        } else {
            Err(("invalid_format", R::MESSAGE.to_string()))
        }
    }
    fn schema() -> RefOr<Schema> {
        string_schema(R::MIN_LENGTH, R::MAX_LENGTH)
            .pattern(Some(R::PATTERN))
            .into()
    }
}

/// `true` or `false`.
pub struct Flag;

impl Kind for Flag {
    type Value = bool;
    fn parse(v: &Value) -> Check<bool> {
        v.as_bool().ok_or_else(|| type_error("a boolean"))
    }
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new().schema_type(Type::Boolean).into()
    }
}

/// Parses the hyphenated UUID form only.
pub fn parse_uuid(s: &str) -> Option<Uuid> {
    if s.len() != 36 {
        return None;
    }
    Uuid::try_parse(s).ok()
}

/// A UUID in its hyphenated form, read as the id type `T` (`Id<JobId>`: a job's id;
/// plain `Id`: a UUID). Documented as a UUID whatever `T` is.
pub struct Id<T = Uuid>(PhantomData<T>);

impl<T: From<Uuid>> Kind for Id<T> {
    type Value = T;
    fn parse(v: &Value) -> Check<T> {
        let s = v.as_str().ok_or_else(|| type_error("a UUID string"))?;
        parse_uuid(s)
            .map(T::from)
            .ok_or_else(|| ("invalid_format", "Must be a UUID.".into()))
    }
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Uuid)))
            .into()
    }
}

/// An RFC 3339 date-time with an offset, from year 1 to 9999 in UTC.
pub struct Instant;

impl Kind for Instant {
    type Value = Ts;
    fn parse(v: &Value) -> Check<Ts> {
        let s = v
            .as_str()
            .ok_or_else(|| type_error("an RFC 3339 date-time string"))?;
        Ts::parse(s).ok_or_else(|| {
            (
                "invalid_format",
                "Must be an RFC 3339 date-time with offset between years 1 and 9999 in UTC, e.g. 2026-01-31T12:00:00Z."
                    .into(),
            )
        })
    }
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)))
            .into()
    }
}

/// An absolute http(s) URL of at most 2,048 characters (the link policy of
/// [`links::is_http_url`]).
pub struct Link;

impl Kind for Link {
    type Value = String;
    fn parse(v: &Value) -> Check<String> {
        let s = v.as_str().ok_or_else(|| type_error("a URL string"))?;
        if links::is_http_url(s) {
            Ok(s.to_string())
        } else {
            Err(("invalid_format", "Must be an absolute http(s) URL.".into()))
        }
    }
    fn schema() -> RefOr<Schema> {
        string_schema(0, links::MAX_URL)
            .format(Some(SchemaFormat::Custom("uri".into())))
            .pattern(Some("^https?://[^/?#:]"))
            .into()
    }
}

/// An email address (see [`links::is_email`]).
pub struct Email;

impl Kind for Email {
    type Value = String;
    fn parse(v: &Value) -> Check<String> {
        let s = v
            .as_str()
            .ok_or_else(|| type_error("an email address string"))?;
        if links::is_email(s) {
            Ok(s.to_string())
        } else {
            Err(("invalid_format", "Must be an email address.".into()))
        }
    }
    fn schema() -> RefOr<Schema> {
        string_schema(0, links::MAX_EMAIL)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Email)))
            .into()
    }
}

/// The text of a JSON number as sent (exact, thanks to serde_json's arbitrary precision).
fn number_text(v: &Value) -> Option<String> {
    match v {
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// An integer from `MIN` to `MAX`. A number written with a zero fraction (`2095.0`) is
/// an integer too, as in JSON Schema; an integer beyond the 64-bit range is out of range.
pub struct Int<const MIN: i64, const MAX: i64>;

/// Reads a JSON integer, also when written as `2095.0` or `2.095e3`.
pub fn as_integer(v: &Value) -> Option<i64> {
    if let Some(n) = v.as_i64() {
        return Some(n);
    }
    match integer_text(&number_text(v)?) {
        Integer::Fits(n) => Some(n),
        _ => None,
    }
}

impl<const MIN: i64, const MAX: i64> Kind for Int<MIN, MAX> {
    type Value = i64;
    fn parse(v: &Value) -> Check<i64> {
        let read = match v.as_i64() {
            Some(n) => Integer::Fits(n),
            None => number_text(v).map_or(Integer::Not, |t| integer_text(&t)),
        };
        match read {
            Integer::Fits(n) if (MIN..=MAX).contains(&n) => Ok(n),
            Integer::Fits(_) | Integer::Huge => {
                Err(("out_of_range", format!("Must be between {MIN} and {MAX}.")))
            }
            Integer::Not => Err(type_error("an integer")),
        }
    }
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::Integer)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
            .minimum(Some(MIN))
            .maximum(Some(MAX))
            .into()
    }
}

/// A finite number from 0 to 10^12 (salaries).
pub struct Amount;

impl Kind for Amount {
    type Value = f64;
    fn parse(v: &Value) -> Check<f64> {
        match v.as_f64() {
            Some(n) if n.is_finite() && (0.0..=1e12).contains(&n) => Ok(n),
            Some(_) => Err((
                "out_of_range",
                "Must be between 0 and 1000000000000.".into(),
            )),
            None => Err(type_error("a number")),
        }
    }
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::Number)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Double)))
            .minimum(Some(0))
            .maximum(Some(1_000_000_000_000i64))
            .into()
    }
}

/// Any finite number.
pub struct Number;

impl Kind for Number {
    type Value = f64;
    fn parse(v: &Value) -> Check<f64> {
        match v.as_f64() {
            Some(n) if n.is_finite() => Ok(n),
            Some(_) => Err(("out_of_range", "Must be a finite number.".to_string())),
            None => Err(type_error("a number")),
        }
    }
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::Number)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Double)))
            .into()
    }
}

/// One value of a closed set.
pub struct Enum<E>(PhantomData<E>);

impl<E: TextEnum + utoipa::ToSchema> Kind for Enum<E> {
    type Value = E;
    fn parse(v: &Value) -> Check<E> {
        let s = v.as_str().ok_or_else(|| type_error("a string"))?;
        E::parse(s).ok_or_else(|| {
            (
                "invalid_value",
                format!("Must be one of: {}.", E::ALL.join(", ")),
            )
        })
    }
    fn schema() -> RefOr<Schema> {
        RefOr::Ref(utoipa::openapi::Ref::from_schema_name(E::NAME))
    }
    fn refs(out: &mut Refs) {
        out.push((E::NAME.to_string(), <E as utoipa::PartialSchema>::schema()));
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

/// A free-form JSON object.
pub struct Object;

impl Kind for Object {
    type Value = Map<String, Value>;
    fn parse(v: &Value) -> Check<Map<String, Value>> {
        let map = v.as_object().ok_or_else(|| type_error("an object"))?;
        free_form(v)?;
        Ok(map.clone())
    }
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::Object)
            .additional_properties(Some(
                utoipa::openapi::schema::AdditionalProperties::<Schema>::FreeForm(true),
            ))
            .into()
    }
}

/// Any JSON value.
pub struct AnyJson;

impl Kind for AnyJson {
    type Value = Value;
    fn parse(v: &Value) -> Check<Value> {
        free_form(v)?;
        Ok(v.clone())
    }
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::SchemaType::AnyValue)
            .into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn integers_may_carry_a_zero_fraction() {
        assert_eq!(as_integer(&json!(2095)), Some(2095));
        let v: Value = serde_json::from_str("2095.0").unwrap();
        assert_eq!(as_integer(&v), Some(2095));
        let v: Value = serde_json::from_str("2.095e3").unwrap();
        assert_eq!(as_integer(&v), Some(2095));
        let v: Value = serde_json::from_str("2095.5").unwrap();
        assert_eq!(as_integer(&v), None);
        assert_eq!(
            Int::<0, 10>::parse(&json!(11)).unwrap_err().0,
            "out_of_range"
        );
        assert_eq!(
            Int::<0, 10>::parse(&json!("1")).unwrap_err().0,
            "invalid_type"
        );
        // An integer past the 64-bit range is an integer out of range, not a non-integer.
        let v: Value = serde_json::from_str("99999999999999999999").unwrap();
        assert_eq!(Int::<0, 10>::parse(&v).unwrap_err().0, "out_of_range");
        let v: Value = serde_json::from_str("1e30").unwrap();
        assert_eq!(Int::<0, 10>::parse(&v).unwrap_err().0, "out_of_range");
        let v: Value = serde_json::from_str("1.5").unwrap();
        assert_eq!(Int::<0, 10>::parse(&v).unwrap_err().0, "invalid_type");
    }

    #[test]
    fn trimmed_text_refuses_blanks() {
        assert_eq!(Trimmed::<1, 10>::parse(&json!("  a ")).unwrap(), "a");
        assert_eq!(
            Trimmed::<1, 10>::parse(&json!("   ")).unwrap_err().0,
            "too_short"
        );
        assert_eq!(
            Trimmed::<1, 3>::parse(&json!("abcd")).unwrap_err().0,
            "too_long"
        );
        assert!(Line::<10>::is_blank(
            &Line::<10>::parse(&json!("  ")).unwrap()
        ));
    }

    #[test]
    fn single_line_kinds_refuse_line_breaks_and_control_characters() {
        for bad in [
            "Rust engineer\nsecond line",
            "a\rb",
            "a\tb",
            "a\u{7f}b",
            "a\u{85}b",
            "a\u{2028}b",
            "a\u{2029}b",
            "a\u{1b}[31mb",
        ] {
            assert_eq!(
                Trimmed::<1, 100>::parse(&json!(bad)).unwrap_err().0,
                "invalid_format",
                "{bad:?}"
            );
            assert_eq!(
                Line::<100>::parse(&json!(bad)).unwrap_err().0,
                "invalid_format",
                "{bad:?}"
            );
        }
        // Surrounding blanks are trimmed, as before; what is kept is one line.
        assert_eq!(
            Trimmed::<1, 100>::parse(&json!("\t Rust engineer \r\n")).unwrap(),
            "Rust engineer"
        );
        assert_eq!(Line::<100>::parse(&json!(" Berlin\n")).unwrap(), "Berlin");
        assert_eq!(
            Trimmed::<1, 100>::parse(&json!("Café — Zürich")).unwrap(),
            "Café — Zürich"
        );
    }
}
