//! Value types shared by every resource: instants, exact money, free-form JSON documents
//! and the closed sets of text values (`text_enum!`). They know neither HTTP nor SQL: their
//! database codecs live in [`crate::codec`], their JSON readers in [`super::kind`].

use std::str::FromStr;

use chrono::{DateTime, Datelike, SecondsFormat, TimeZone, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A UTC instant with microsecond precision, written as RFC 3339 with a `Z`.
///
/// Only instants from year 1 to year 9999 in UTC exist: what RFC 3339 can write back.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
pub struct Ts(pub DateTime<Utc>);

impl Ts {
    pub fn now() -> Ts {
        Ts::from_micros(Utc::now().timestamp_micros())
    }

    pub fn from_micros(us: i64) -> Ts {
        Ts(Utc.timestamp_micros(us).single().unwrap_or_default())
    }

    /// Truncates to microseconds, the precision both backends store.
    pub fn from_datetime(dt: DateTime<Utc>) -> Ts {
        Ts::from_micros(dt.timestamp_micros())
    }

    /// This instant plus `d` (the last instant when that is past it).
    pub fn later_by(&self, d: std::time::Duration) -> Ts {
        Ts::from_micros(
            self.micros()
                .saturating_add(i64::try_from(d.as_micros()).unwrap_or(i64::MAX)),
        )
    }

    /// This instant less `d` (the first instant when that is before it).
    pub fn earlier_by(&self, d: std::time::Duration) -> Ts {
        Ts::from_micros(
            self.micros()
                .saturating_sub(i64::try_from(d.as_micros()).unwrap_or(i64::MAX)),
        )
    }

    pub fn micros(&self) -> i64 {
        self.0.timestamp_micros()
    }

    pub fn unix_seconds(&self) -> i64 {
        self.0.timestamp()
    }

    pub fn to_rfc3339(&self) -> String {
        self.0.to_rfc3339_opts(SecondsFormat::AutoSi, true)
    }

    pub fn plus(&self, d: chrono::Duration) -> Ts {
        Ts(self.0 + d)
    }

    /// Parses an RFC 3339 date-time with an offset. An instant that falls outside years
    /// 1 to 9999 once moved to UTC (`9999-12-31T23:59:59-14:00`) is refused: it could not
    /// be written back as RFC 3339.
    pub fn parse(s: &str) -> Option<Ts> {
        let utc = DateTime::parse_from_rfc3339(s).ok()?.with_timezone(&Utc);
        (1..=9999)
            .contains(&utc.year())
            .then(|| Ts::from_datetime(utc))
    }
}

impl std::fmt::Display for Ts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_rfc3339())
    }
}

impl Serialize for Ts {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_rfc3339())
    }
}

impl utoipa::PartialSchema for Ts {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .format(Some(utoipa::openapi::SchemaFormat::KnownFormat(
                utoipa::openapi::KnownFormat::DateTime,
            )))
            .description(Some("RFC 3339 date-time in UTC"))
            .into()
    }
}

impl utoipa::ToSchema for Ts {}

/// An exact, non-negative decimal amount of money (never a binary float), serialised as
/// a JSON number with exactly its digits (`19.99` stays `19.99`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Money(pub Decimal);

/// Largest accepted amount (exclusive).
const MONEY_LIMIT: i64 = 1_000_000_000_000;
/// Most digits accepted after the decimal point.
pub const MONEY_MAX_SCALE: u32 = 4;

impl Money {
    /// Parses the text of a JSON number (`19.99`, `5`, `1.5e2`) exactly. The result is
    /// normalised (no trailing zeros after the point), so equal amounts read back equal.
    pub fn parse(text: &str) -> Result<Money, (&'static str, &'static str)> {
        let d = if text.contains(['e', 'E']) {
            Decimal::from_scientific(text)
        } else {
            Decimal::from_str_exact(text)
        }
        .map_err(|_| {
            (
                "out_of_range",
                "Must be a decimal from 0 to less than 1000000000000, at most 4 digits after the point.",
            )
        })?;
        let d = d.normalize();
        if d.is_zero() {
            return Ok(Money(Decimal::ZERO));
        }
        if d.is_sign_negative() {
            return Err(("out_of_range", "Must be zero or more."));
        }
        if d >= Decimal::from(MONEY_LIMIT) {
            return Err(("out_of_range", "Must be less than 1000000000000."));
        }
        if d.scale() > MONEY_MAX_SCALE {
            return Err((
                "invalid_format",
                "Must have at most 4 digits after the decimal point.",
            ));
        }
        Ok(Money(d))
    }

    pub fn decimal(&self) -> Decimal {
        self.0
    }

    /// The amount in minor units of a currency with `exponent` digits after the point
    /// (4900 for 49 with 2), rounded half away from zero to them.
    pub fn minor_units(&self, exponent: u32) -> i64 {
        use rust_decimal::prelude::ToPrimitive;
        (self.0 * Decimal::from(10_i64.pow(exponent)))
            .round_dp_with_strategy(0, rust_decimal::RoundingStrategy::MidpointAwayFromZero)
            .to_i64()
            .unwrap_or(0)
    }

    /// The amount as a JSON number with exactly its digits.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::Value::Number(
            serde_json::Number::from_str(&self.0.to_string()).expect("a decimal is a JSON number"),
        )
    }
}

impl std::fmt::Display for Money {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl Serialize for Money {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // serde_json keeps the digits of a number as written (arbitrary_precision).
        self.to_json().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Money {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let n = serde_json::Number::deserialize(d)?;
        Money::parse(&n.to_string()).map_err(|(_, m)| serde::de::Error::custom(m))
    }
}

impl utoipa::PartialSchema for Money {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::Number)
            .minimum(Some(0))
            .exclusive_maximum(Some(1_000_000_000_000i64))
            .description(Some(
                "Exact decimal amount, at most 4 digits after the point (19.99 stays 19.99).",
            ))
            .into()
    }
}

impl utoipa::ToSchema for Money {}

/// A free-form JSON value kept whole: a document column (JSONB on PostgreSQL, JSON text
/// on SQLite), serialised as the value itself. Its storage codec is in [`crate::codec`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct JsonDoc(pub serde_json::Value);

impl JsonDoc {
    /// An object as a document.
    pub fn object(map: serde_json::Map<String, serde_json::Value>) -> JsonDoc {
        JsonDoc(serde_json::Value::Object(map))
    }
}

/// A closed set of text values: what the JSON reader, the storage codecs and the OpenAPI
/// document of a `text_enum!` type share.
pub trait TextEnum: Sized + Copy + 'static {
    /// Every accepted value, in documentation order.
    const ALL: &'static [&'static str];
    /// The name of the type's schema in the OpenAPI document.
    const NAME: &'static str;
    fn as_str(self) -> &'static str;
    fn parse(s: &str) -> Option<Self>;
}

/// Defines an enum of fixed text values: serialised, stored and documented as those
/// strings, with their storage codecs ([`crate::text_columns!`]).
#[macro_export]
macro_rules! text_enum {
    ($(#[doc = $doc:literal])* $name:ident { $($variant:ident = $s:literal),+ $(,)? }) => {
        $(#[doc = $doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
        pub enum $name {
            $( #[serde(rename = $s)] $variant ),+
        }

        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                utoipa::openapi::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::schema::Type::String)
                    .description($crate::values::doc_text(&[$($doc),*]))
                    .enum_values(Some([$($s),+]))
                    .into()
            }
        }

        impl utoipa::ToSchema for $name {}

        impl $crate::values::TextEnum for $name {
            const ALL: &'static [&'static str] = &[$($s),+];
            const NAME: &'static str = stringify!($name);

            fn as_str(self) -> &'static str {
                match self { $(Self::$variant => $s),+ }
            }

            fn parse(s: &str) -> Option<Self> {
                match s { $($s => Some(Self::$variant),)+ _ => None }
            }
        }

        impl $name {
            /// Every accepted value.
            pub const ALL: &'static [&'static str] = &[$($s),+];

            pub fn as_str(self) -> &'static str {
                <Self as $crate::values::TextEnum>::as_str(self)
            }

            pub fn parse(s: &str) -> Option<Self> {
                <Self as $crate::values::TextEnum>::parse(s)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        $crate::text_columns!($name);
    };
}

/// Joins the lines of a doc comment the way rustdoc shows them (`None` when empty): the
/// description of a schema.
pub fn doc_text(lines: &[&str]) -> Option<String> {
    let text = lines
        .iter()
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n");
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_round_trip_with_z() {
        let t = Ts::parse("2026-01-02T03:04:05.123+01:00").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-01-02T02:04:05.123Z");
        assert_eq!(Ts::parse(&t.to_rfc3339()), Some(t));
        assert!(Ts::parse("yesterday").is_none());
    }

    #[test]
    fn instants_that_cannot_be_written_back_are_refused() {
        assert!(Ts::parse("9999-12-31T23:59:59-14:00").is_none());
        assert!(Ts::parse("0000-01-01T00:00:00+01:00").is_none());
        let last = Ts::parse("9999-12-31T23:59:59Z").unwrap();
        assert_eq!(last.to_rfc3339(), "9999-12-31T23:59:59Z");
        assert!(Ts::parse("0001-01-01T00:00:00Z").is_some());
    }

    #[test]
    fn money_is_exact() {
        assert_eq!(Money::parse("19.99").unwrap().to_string(), "19.99");
        assert_eq!(Money::parse("19.90").unwrap().to_string(), "19.9");
        assert_eq!(Money::parse("1.5e2").unwrap().to_string(), "150");
        assert_eq!(Money::parse("-0").unwrap().to_string(), "0");
        assert_eq!(
            serde_json::to_string(&Money::parse("0.1").unwrap()).unwrap(),
            "0.1"
        );
        assert_eq!(
            serde_json::to_string(&Money::parse("999999999999.9999").unwrap()).unwrap(),
            "999999999999.9999"
        );
        assert!(Money::parse("-0.01").is_err());
        assert!(Money::parse("1.23456").is_err());
        assert!(Money::parse("1e12").is_err());
        assert!(Money::parse("1e400").is_err());
    }
}
