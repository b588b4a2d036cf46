//! Query strings defined once: [`crate::query!`] turns one struct definition into the
//! struct, its reader (every bad parameter at once, unknown and repeated ones refused)
//! and its OpenAPI parameters.
//!
//! Each field reads `name: Kind = mode`. Modes: `optional` (`Option`), `default(expr)` (the
//! value, or `expr` when omitted), `list(max)` (a list of at most `max` values, the
//! parameter repeated or comma-separated or both, documented as an array with
//! `style: form, explode: true`; empty items are ignored) and `required_list(max)` (the same, with at least one value). A field named
//! otherwise in the query string than in Rust says so with `#[param = "jobIds"]`.

use std::marker::PhantomData;

use utoipa::openapi::{
    KnownFormat, ObjectBuilder, RefOr, Required, SchemaFormat,
    path::{Parameter, ParameterBuilder, ParameterIn, ParameterStyle},
    schema::{ArrayBuilder, Schema, Type},
};
use uuid::Uuid;

use super::{
    input::QueryInput,
    kind::{Check, Int, Integer, Kind, integer_text, parse_uuid},
    request::doc_text,
    values::TextEnum,
};

/// How one kind of query value is read from its text and documented.
pub trait QueryKind {
    type Value;
    fn parse(s: &str) -> Check<Self::Value>;
    /// The schema of one value (inline: parameters are not collected as components).
    fn schema() -> RefOr<Schema>;
}

/// An integer from `MIN` to `MAX`, written with digits only (an optional `-` first): a
/// query string is text, and `1e1` or `2.0` are refused rather than read as numbers. An
/// integer beyond the 64-bit range is out of range, not of the wrong type.
pub struct QInt<const MIN: i64, const MAX: i64>;

impl<const MIN: i64, const MAX: i64> QueryKind for QInt<MIN, MAX> {
    type Value = i64;
    fn parse(s: &str) -> Check<i64> {
        let digits = s.strip_prefix('-').unwrap_or(s);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err((
                "invalid_type",
                "Must be an integer written with digits only (no sign but -, no fraction or exponent)."
                    .into(),
            ));
        }
        match integer_text(s) {
            Integer::Fits(n) if (MIN..=MAX).contains(&n) => Ok(n),
            Integer::Fits(_) | Integer::Huge => {
                Err(("out_of_range", format!("Must be between {MIN} and {MAX}.")))
            }
            Integer::Not => Err(("invalid_type", "Must be an integer.".into())),
        }
    }
    /// The same schema as the body's integers of that range.
    fn schema() -> RefOr<Schema> {
        <Int<MIN, MAX> as Kind>::schema()
    }
}

/// An amount from 0 to 10^12, a decimal number (`52000`, `17.5`, `5e4`).
pub struct QAmount;

impl QueryKind for QAmount {
    type Value = f64;
    fn parse(s: &str) -> Check<f64> {
        match s.parse::<f64>() {
            Ok(n) if n.is_finite() && (0.0..=1e12).contains(&n) => Ok(n),
            Ok(n) if n.is_finite() => Err((
                "out_of_range",
                "Must be between 0 and 1000000000000.".into(),
            )),
            _ => Err((
                "invalid_type",
                "Must be a number, such as 52000 or 17.5.".into(),
            )),
        }
    }
    fn schema() -> RefOr<Schema> {
        <crate::kind::Amount as Kind>::schema()
    }
}

/// A country's ISO 3166-1 alpha-2 code, any case (read upper-case).
pub struct QCountry;

impl QueryKind for QCountry {
    type Value = String;
    fn parse(s: &str) -> Check<String> {
        <crate::kind::Country as Kind>::parse(&serde_json::Value::String(s.to_string()))
    }
    fn schema() -> RefOr<Schema> {
        <crate::kind::Country as Kind>::schema()
    }
}

/// `true`/`1` or `false`/`0`.
pub struct QBool;

impl QueryKind for QBool {
    type Value = bool;
    fn parse(s: &str) -> Check<bool> {
        match s {
            "true" | "1" => Ok(true),
            "false" | "0" => Ok(false),
            _ => Err(("invalid_type", "Must be true or false.".into())),
        }
    }
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new().schema_type(Type::Boolean).into()
    }
}

/// Text of at most `MAX` characters, without NUL characters.
pub struct QText<const MAX: usize>;

impl<const MAX: usize> QueryKind for QText<MAX> {
    type Value = String;
    fn parse(s: &str) -> Check<String> {
        if s.chars().count() > MAX {
            return Err(("too_long", format!("Must be at most {MAX} characters.")));
        }
        if s.contains('\0') {
            return Err(("invalid_format", "Must not contain NUL characters.".into()));
        }
        Ok(s.to_string())
    }
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .max_length(Some(MAX))
            .pattern(Some(crate::kind::NO_NUL))
            .into()
    }
}

/// A UUID in its hyphenated form, read as the id type `T` (`QId<JobId>`: a job's id;
/// plain `QId`: a UUID). Documented as a UUID whatever `T` is.
pub struct QId<T = Uuid>(PhantomData<T>);

impl<T: From<Uuid>> QueryKind for QId<T> {
    type Value = T;
    fn parse(s: &str) -> Check<T> {
        parse_uuid(s)
            .map(T::from)
            .ok_or_else(|| ("invalid_format", format!("{s:?} is not a UUID.")))
    }
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Uuid)))
            .into()
    }
}

/// A date, `YYYY-MM-DD`.
pub struct QDate;

impl QueryKind for QDate {
    type Value = chrono::NaiveDate;
    fn parse(s: &str) -> Check<chrono::NaiveDate> {
        chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
            .ok()
            .filter(|_| s.len() == 10)
            .ok_or_else(|| ("invalid_format", "Must be a date, YYYY-MM-DD.".into()))
    }
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Date)))
            .pattern(Some(r"^\d{4}-\d{2}-\d{2}$"))
            .into()
    }
}

/// One value of a closed set.
pub struct QEnum<E>(PhantomData<E>);

impl<E: TextEnum> QueryKind for QEnum<E> {
    type Value = E;
    fn parse(s: &str) -> Check<E> {
        E::parse(s).ok_or_else(|| {
            (
                "invalid_value",
                format!(
                    "Unknown value {s:?}; must be one of: {}.",
                    E::ALL.join(", ")
                ),
            )
        })
    }
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(E::ALL.iter().copied()))
            .into()
    }
}

impl QueryInput {
    /// Reads an optional parameter as a `K`.
    pub fn read<K: QueryKind>(&mut self, name: &str) -> Option<K::Value> {
        let raw = self.take(name)?;
        match K::parse(&raw) {
            Ok(v) => Some(v),
            Err((code, msg)) => {
                self.error(name, code, msg);
                None
            }
        }
    }

    /// Reads a comma-separated list of at most `max` values of `K` (empty items
    /// ignored); the first bad item is reported.
    pub fn read_list<K: QueryKind>(&mut self, name: &str, max: usize) -> Vec<K::Value> {
        let items = self.list(name);
        if items.len() > max {
            self.error(name, "too_long", format!("At most {max} values."));
            return Vec::new();
        }
        let mut out = Vec::new();
        for item in items {
            match K::parse(&item) {
                Ok(v) => out.push(v),
                Err((code, msg)) => {
                    self.error(name, code, msg);
                    return Vec::new();
                }
            }
        }
        out
    }

    /// Reads a comma-separated list of 1 to `max` values of `K`: as
    /// [`QueryInput::read_list`], and a list without any value is `required`.
    pub fn read_required_list<K: QueryKind>(&mut self, name: &str, max: usize) -> Vec<K::Value> {
        let out = self.read_list::<K>(name, max);
        if out.is_empty() && !self.has_error(name) {
            self.error(
                name,
                "required",
                format!("Give 1 to {max} values (the parameter repeated, or comma-separated)."),
            );
        }
        out
    }
}

/// The OpenAPI parameter of one query field: a list when `list` gives its most values,
/// a required one when `required`.
pub fn parameter<K: QueryKind>(
    name: &str,
    list: Option<usize>,
    default: Option<serde_json::Value>,
    required: bool,
    doc: &[&str],
) -> Parameter {
    let schema = if let Some(max) = list {
        ArrayBuilder::new()
            .items(K::schema())
            .min_items(required.then_some(1))
            .max_items(Some(max))
            .into()
    } else {
        match (K::schema(), default) {
            (RefOr::T(Schema::Object(mut o)), Some(d)) => {
                o.default = Some(d);
                RefOr::T(Schema::Object(o))
            }
            (s, _) => s,
        }
    };
    let mut text = doc_text(doc);
    if list.is_some() {
        let sep = if text.as_deref().is_some_and(|t| !t.is_empty()) {
            " "
        } else {
            ""
        };
        text = Some(format!(
            "{}{sep}Several values: repeat the parameter (`{name}=a&{name}=b`) or separate them with commas (`{name}=a,b`); both mean the same.",
            text.unwrap_or_default()
        ));
    }
    let b = ParameterBuilder::new()
        .name(name)
        .parameter_in(ParameterIn::Query)
        .description(text)
        .required(if required {
            Required::True
        } else {
            Required::False
        })
        .schema(Some(schema));
    // Several values: the parameter repeated (what generated clients and most HTTP
    // libraries send) or comma-separated; the server takes both, and a mix.
    let b = if list.is_some() {
        b.style(Some(ParameterStyle::Form)).explode(Some(true))
    } else {
        b
    };
    b.build()
}

/// Defines a query type; see the module documentation.
#[macro_export]
macro_rules! query {
    (@ty optional $k:ty) => { Option<<$k as $crate::query::QueryKind>::Value> };
    (@ty list($n:expr) $k:ty) => { Vec<<$k as $crate::query::QueryKind>::Value> };
    (@ty required_list($n:expr) $k:ty) => { Vec<<$k as $crate::query::QueryKind>::Value> };
    (@ty default($d:expr) $k:ty) => { <$k as $crate::query::QueryKind>::Value };
    (@read $q:ident $name:expr; optional $k:ty) => { $q.read::<$k>($name) };
    (@read $q:ident $name:expr; list($n:expr) $k:ty) => { $q.read_list::<$k>($name, $n) };
    (@read $q:ident $name:expr; required_list($n:expr) $k:ty) => { $q.read_required_list::<$k>($name, $n) };
    (@read $q:ident $name:expr; default($d:expr) $k:ty) => { $q.read::<$k>($name).unwrap_or($d) };
    (@list list($n:expr)) => { Some($n) };
    (@list required_list($n:expr)) => { Some($n) };
    (@list $($other:tt)*) => { None };
    (@required required_list($n:expr)) => { true };
    (@required $($other:tt)*) => { false };
    (@default default($d:expr)) => { Some(serde_json::json!($d)) };
    (@default $($other:tt)*) => { None };
    (@name $f:ident) => { stringify!($f) };
    (@name $f:ident $param:literal) => { $param };
    (
        $(#[doc = $doc:literal])*
        $vis:vis struct $name:ident {
            $(
                $(#[doc = $fdoc:literal])*
                $(#[param = $param:literal])?
                $fvis:vis $field:ident : $kind:ty = $mode:ident $(($d:expr))?
            ),* $(,)?
        }
    ) => {
        $(#[doc = $doc])*
        #[derive(Debug, Clone)]
        $vis struct $name {
            $( $(#[doc = $fdoc])* $fvis $field: $crate::query!(@ty $mode $(($d))? $kind), )*
        }

        impl $name {
            /// Reads the parameters from `q`, recording every problem.
            pub fn read(q: &mut $crate::input::QueryInput) -> Self {
                Self { $( $field: $crate::query!(@read q $crate::query!(@name $field $($param)?); $mode $(($d))? $kind), )* }
            }
        }

        impl utoipa::IntoParams for $name {
            fn into_params(
                _: impl Fn() -> Option<utoipa::openapi::path::ParameterIn>,
            ) -> Vec<utoipa::openapi::path::Parameter> {
                vec![$(
                    $crate::query::parameter::<$kind>(
                        $crate::query!(@name $field $($param)?),
                        $crate::query!(@list $mode $(($d))?),
                        $crate::query!(@default $mode $(($d))?),
                        $crate::query!(@required $mode $(($d))?),
                        &[$($fdoc),*],
                    ),
                )*]
            }
        }
    };
}
