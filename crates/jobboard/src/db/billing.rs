//! Value types of members, plans, access records and payments: exact money amounts and
//! the fixed-value status fields, each stored as text (and money as `NUMERIC` on PostgreSQL).

use std::str::FromStr;

use rust_decimal::Decimal;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sqlx::{
    Decode, Encode, Postgres, Sqlite, Type, encode::IsNull, error::BoxDynError,
    postgres::PgTypeInfo, sqlite::SqliteTypeInfo,
};

/// An exact, non-negative decimal amount of money (never a binary float).
///
/// Stored as `NUMERIC` on PostgreSQL and as its decimal text on SQLite; serialised as a
/// JSON number with exactly its digits (`19.99` stays `19.99`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Money(Decimal);

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

impl Type<Sqlite> for Money {
    fn type_info() -> SqliteTypeInfo {
        <String as Type<Sqlite>>::type_info()
    }
    fn compatible(ty: &SqliteTypeInfo) -> bool {
        <String as Type<Sqlite>>::compatible(ty)
    }
}

impl Encode<'_, Sqlite> for Money {
    fn encode_by_ref(
        &self,
        buf: &mut <Sqlite as sqlx::Database>::ArgumentBuffer,
    ) -> Result<IsNull, BoxDynError> {
        <String as Encode<Sqlite>>::encode(self.0.to_string(), buf)
    }
}

impl<'r> Decode<'r, Sqlite> for Money {
    fn decode(value: <Sqlite as sqlx::Database>::ValueRef<'r>) -> Result<Self, BoxDynError> {
        let s = <&str as Decode<Sqlite>>::decode(value)?;
        Ok(Money(Decimal::from_str_exact(s)?))
    }
}

impl Type<Postgres> for Money {
    fn type_info() -> PgTypeInfo {
        <Decimal as Type<Postgres>>::type_info()
    }
    fn compatible(ty: &PgTypeInfo) -> bool {
        <Decimal as Type<Postgres>>::compatible(ty)
    }
}

impl Encode<'_, Postgres> for Money {
    fn encode_by_ref(
        &self,
        buf: &mut <Postgres as sqlx::Database>::ArgumentBuffer,
    ) -> Result<IsNull, BoxDynError> {
        <Decimal as Encode<Postgres>>::encode(self.0, buf)
    }
}

impl<'r> Decode<'r, Postgres> for Money {
    fn decode(value: <Postgres as sqlx::Database>::ValueRef<'r>) -> Result<Self, BoxDynError> {
        Ok(Money(
            <Decimal as Decode<Postgres>>::decode(value)?.normalize(),
        ))
    }
}

/// Defines a string enum with fixed values: serialised and documented as those strings
/// (each the snake_case form of its variant), stored as text on both backends.
macro_rules! text_enum {
    ($(#[$m:meta])* $name:ident { $($variant:ident = $s:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
        #[serde(rename_all = "snake_case")]
        pub enum $name {
            $( $variant ),+
        }

        impl $name {
            /// Every accepted value.
            pub const ALL: &'static [&'static str] = &[$($s),+];

            pub fn as_str(self) -> &'static str {
                match self { $(Self::$variant => $s),+ }
            }

            pub fn parse(s: &str) -> Option<Self> {
                match s { $($s => Some(Self::$variant),)+ _ => None }
            }
        }

        impl Type<Sqlite> for $name {
            fn type_info() -> SqliteTypeInfo { <String as Type<Sqlite>>::type_info() }
            fn compatible(ty: &SqliteTypeInfo) -> bool { <String as Type<Sqlite>>::compatible(ty) }
        }

        impl Encode<'_, Sqlite> for $name {
            fn encode_by_ref(
                &self,
                buf: &mut <Sqlite as sqlx::Database>::ArgumentBuffer,
            ) -> Result<IsNull, BoxDynError> {
                <&str as Encode<Sqlite>>::encode(self.as_str(), buf)
            }
        }

        impl<'r> Decode<'r, Sqlite> for $name {
            fn decode(value: <Sqlite as sqlx::Database>::ValueRef<'r>) -> Result<Self, BoxDynError> {
                let s = <&str as Decode<Sqlite>>::decode(value)?;
                Self::parse(s).ok_or_else(|| format!("unknown {} {s:?}", stringify!($name)).into())
            }
        }

        impl Type<Postgres> for $name {
            fn type_info() -> PgTypeInfo { <String as Type<Postgres>>::type_info() }
            fn compatible(ty: &PgTypeInfo) -> bool { <String as Type<Postgres>>::compatible(ty) }
        }

        impl Encode<'_, Postgres> for $name {
            fn encode_by_ref(
                &self,
                buf: &mut <Postgres as sqlx::Database>::ArgumentBuffer,
            ) -> Result<IsNull, BoxDynError> {
                <&str as Encode<Postgres>>::encode(self.as_str(), buf)
            }
        }

        impl<'r> Decode<'r, Postgres> for $name {
            fn decode(value: <Postgres as sqlx::Database>::ValueRef<'r>) -> Result<Self, BoxDynError> {
                let s = <&str as Decode<Postgres>>::decode(value)?;
                Self::parse(s).ok_or_else(|| format!("unknown {} {s:?}", stringify!($name)).into())
            }
        }
    };
}

text_enum!(
    /// What a member does on the board.
    Role { Employee = "employee", Business = "business", Both = "both", Jobseeker = "jobseeker", Employer = "employer" }
);

text_enum!(
    /// Whether a member is admitted to the board.
    ApprovalStatus { Approved = "approved", Pending = "pending", Rejected = "rejected" }
);

text_enum!(
    /// State of an access (subscription) record.
    AccessStatus { Active = "active", Trialing = "trialing", PastDue = "past_due", Canceled = "canceled", Expired = "expired" }
);

text_enum!(
    /// State of a payment.
    PaymentStatus { Pending = "pending", Succeeded = "succeeded", Failed = "failed", Refunded = "refunded" }
);

text_enum!(
    /// Who took a payment: the card processor, the second provider, or recorded by hand.
    PaymentProvider { Processor = "processor", AltProcessor = "alt_processor", Manual = "manual" }
);

text_enum!(
    /// How often a plan is billed.
    PlanInterval { Month = "month", Year = "year", OneTime = "one_time" }
);

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn enums_round_trip() {
        for v in AccessStatus::ALL {
            let parsed = AccessStatus::parse(v).unwrap();
            assert_eq!(serde_json::to_value(parsed).unwrap(), *v);
        }
        for v in PaymentProvider::ALL.iter().chain(PlanInterval::ALL) {
            assert!(serde_json::to_string(v).unwrap().contains(v));
        }
        assert_eq!(AccessStatus::parse("past_due"), Some(AccessStatus::PastDue));
        assert_eq!(AccessStatus::PastDue.as_str(), "past_due");
        assert_eq!(
            serde_json::to_string(&PaymentProvider::AltProcessor).unwrap(),
            "\"alt_processor\""
        );
        assert_eq!(PlanInterval::parse("weekly"), None);
    }
}
