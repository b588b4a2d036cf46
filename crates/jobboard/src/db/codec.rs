//! How domain values are stored, the same on both backends: instants as `timestamptz` on
//! PostgreSQL and integer microseconds since the Unix epoch on SQLite (plain integer
//! comparisons and indexes there), money as `NUMERIC` on PostgreSQL and its exact decimal
//! text on SQLite, closed sets ([`TextEnum`]) as their text, and documents (free-form
//! JSON [`JsonDoc`], a CMS collection's fields, an item's data) as JSON: `JSONB` on
//! PostgreSQL, text on SQLite.

use std::str::FromStr;

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use sqlx::{
    Decode, Encode, Postgres, Sqlite, Type, encode::IsNull, error::BoxDynError,
    postgres::PgTypeInfo, sqlite::SqliteTypeInfo, types::Json,
};

use crate::domain::{JsonDoc, Money, TextEnum, Ts};

impl Type<Sqlite> for Ts {
    fn type_info() -> SqliteTypeInfo {
        <i64 as Type<Sqlite>>::type_info()
    }
    fn compatible(ty: &SqliteTypeInfo) -> bool {
        <i64 as Type<Sqlite>>::compatible(ty)
    }
}

impl Encode<'_, Sqlite> for Ts {
    fn encode_by_ref(
        &self,
        buf: &mut <Sqlite as sqlx::Database>::ArgumentBuffer,
    ) -> Result<IsNull, BoxDynError> {
        <i64 as Encode<Sqlite>>::encode(self.micros(), buf)
    }
}

impl<'r> Decode<'r, Sqlite> for Ts {
    fn decode(value: <Sqlite as sqlx::Database>::ValueRef<'r>) -> Result<Self, BoxDynError> {
        Ok(Ts::from_micros(<i64 as Decode<Sqlite>>::decode(value)?))
    }
}

impl Type<Postgres> for Ts {
    fn type_info() -> PgTypeInfo {
        <DateTime<Utc> as Type<Postgres>>::type_info()
    }
    fn compatible(ty: &PgTypeInfo) -> bool {
        <DateTime<Utc> as Type<Postgres>>::compatible(ty)
    }
}

impl Encode<'_, Postgres> for Ts {
    fn encode_by_ref(
        &self,
        buf: &mut <Postgres as sqlx::Database>::ArgumentBuffer,
    ) -> Result<IsNull, BoxDynError> {
        <DateTime<Utc> as Encode<Postgres>>::encode(self.0, buf)
    }
}

impl<'r> Decode<'r, Postgres> for Ts {
    fn decode(value: <Postgres as sqlx::Database>::ValueRef<'r>) -> Result<Self, BoxDynError> {
        Ok(Ts::from_datetime(
            <DateTime<Utc> as Decode<Postgres>>::decode(value)?,
        ))
    }
}

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
        Ok(Money(Decimal::from_str(s)?.normalize()))
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

impl Type<Sqlite> for JsonDoc {
    fn type_info() -> SqliteTypeInfo {
        <Json<serde_json::Value> as Type<Sqlite>>::type_info()
    }
    fn compatible(ty: &SqliteTypeInfo) -> bool {
        <Json<serde_json::Value> as Type<Sqlite>>::compatible(ty)
    }
}

impl Encode<'_, Sqlite> for JsonDoc {
    fn encode_by_ref(
        &self,
        buf: &mut <Sqlite as sqlx::Database>::ArgumentBuffer,
    ) -> Result<IsNull, BoxDynError> {
        <Json<&serde_json::Value> as Encode<Sqlite>>::encode(Json(&self.0), buf)
    }
}

impl<'r> Decode<'r, Sqlite> for JsonDoc {
    fn decode(value: <Sqlite as sqlx::Database>::ValueRef<'r>) -> Result<Self, BoxDynError> {
        Ok(JsonDoc(
            <Json<serde_json::Value> as Decode<Sqlite>>::decode(value)?.0,
        ))
    }
}

impl Type<Postgres> for JsonDoc {
    fn type_info() -> PgTypeInfo {
        <Json<serde_json::Value> as Type<Postgres>>::type_info()
    }
    fn compatible(ty: &PgTypeInfo) -> bool {
        <Json<serde_json::Value> as Type<Postgres>>::compatible(ty)
    }
}

impl Encode<'_, Postgres> for JsonDoc {
    fn encode_by_ref(
        &self,
        buf: &mut <Postgres as sqlx::Database>::ArgumentBuffer,
    ) -> Result<IsNull, BoxDynError> {
        <Json<&serde_json::Value> as Encode<Postgres>>::encode(Json(&self.0), buf)
    }
}

impl<'r> Decode<'r, Postgres> for JsonDoc {
    fn decode(value: <Postgres as sqlx::Database>::ValueRef<'r>) -> Result<Self, BoxDynError> {
        Ok(JsonDoc(
            <Json<serde_json::Value> as Decode<Postgres>>::decode(value)?.0,
        ))
    }
}

/// Stores a [`TextEnum`] as its text on both backends.
macro_rules! text_columns {
    ($($t:ty),+ $(,)?) => {$(
        impl Type<Sqlite> for $t {
            fn type_info() -> SqliteTypeInfo { <String as Type<Sqlite>>::type_info() }
            fn compatible(ty: &SqliteTypeInfo) -> bool { <String as Type<Sqlite>>::compatible(ty) }
        }

        impl Encode<'_, Sqlite> for $t {
            fn encode_by_ref(
                &self,
                buf: &mut <Sqlite as sqlx::Database>::ArgumentBuffer,
            ) -> Result<IsNull, BoxDynError> {
                <&str as Encode<Sqlite>>::encode(TextEnum::as_str(*self), buf)
            }
        }

        impl<'r> Decode<'r, Sqlite> for $t {
            fn decode(value: <Sqlite as sqlx::Database>::ValueRef<'r>) -> Result<Self, BoxDynError> {
                decode_text(<&str as Decode<Sqlite>>::decode(value)?)
            }
        }

        impl Type<Postgres> for $t {
            fn type_info() -> PgTypeInfo { <String as Type<Postgres>>::type_info() }
            fn compatible(ty: &PgTypeInfo) -> bool { <String as Type<Postgres>>::compatible(ty) }
        }

        impl Encode<'_, Postgres> for $t {
            fn encode_by_ref(
                &self,
                buf: &mut <Postgres as sqlx::Database>::ArgumentBuffer,
            ) -> Result<IsNull, BoxDynError> {
                <&str as Encode<Postgres>>::encode(TextEnum::as_str(*self), buf)
            }
        }

        impl<'r> Decode<'r, Postgres> for $t {
            fn decode(value: <Postgres as sqlx::Database>::ValueRef<'r>) -> Result<Self, BoxDynError> {
                decode_text(<&str as Decode<Postgres>>::decode(value)?)
            }
        }
    )+};
}

fn decode_text<E: TextEnum>(s: &str) -> Result<E, BoxDynError> {
    E::parse(s).ok_or_else(|| format!("unknown {} {s:?}", E::NAME).into())
}

text_columns!(
    crate::domain::members::Role,
    crate::domain::members::ApprovalStatus,
    crate::domain::members::AccessStatus,
    crate::domain::members::PaymentStatus,
    crate::domain::members::PaymentProvider,
    crate::domain::plans::PlanInterval,
    crate::domain::jobs::JobStatus,
    crate::domain::jobs::JobType,
    crate::domain::jobs::ApplyMethod,
    crate::domain::jobs::SalaryPeriod,
    crate::domain::cms::ItemStatus,
    crate::domain::cms::Visibility,
    crate::domain::cms::Moderation,
    crate::domain::cms::SortBy,
    crate::domain::cms::SortDir,
    crate::domain::alerts::Frequency,
    crate::domain::alerts::AlertStatus,
    crate::domain::applications::ApplicationStatus,
    crate::domain::webhooks::EventName,
    crate::domain::webhooks::TargetType,
    crate::domain::webhooks::DeliveryStatus,
);

/// Stores a serde type as JSON on both backends (what `sqlx::types::Json` does), so the
/// domain types need not wrap themselves in it.
macro_rules! json_columns {
    ($($t:ty),+ $(,)?) => {$(
        impl Type<Sqlite> for $t {
            fn type_info() -> SqliteTypeInfo { <Json<$t> as Type<Sqlite>>::type_info() }
            fn compatible(ty: &SqliteTypeInfo) -> bool { <Json<$t> as Type<Sqlite>>::compatible(ty) }
        }

        impl Encode<'_, Sqlite> for $t {
            fn encode_by_ref(
                &self,
                buf: &mut <Sqlite as sqlx::Database>::ArgumentBuffer,
            ) -> Result<IsNull, BoxDynError> {
                <Json<&$t> as Encode<Sqlite>>::encode_by_ref(&Json(self), buf)
            }
        }

        impl<'r> Decode<'r, Sqlite> for $t {
            fn decode(value: <Sqlite as sqlx::Database>::ValueRef<'r>) -> Result<Self, BoxDynError> {
                Ok(<Json<$t> as Decode<Sqlite>>::decode(value)?.0)
            }
        }

        impl Type<Postgres> for $t {
            fn type_info() -> PgTypeInfo { <Json<$t> as Type<Postgres>>::type_info() }
            fn compatible(ty: &PgTypeInfo) -> bool { <Json<$t> as Type<Postgres>>::compatible(ty) }
        }

        impl Encode<'_, Postgres> for $t {
            fn encode_by_ref(
                &self,
                buf: &mut <Postgres as sqlx::Database>::ArgumentBuffer,
            ) -> Result<IsNull, BoxDynError> {
                <Json<&$t> as Encode<Postgres>>::encode_by_ref(&Json(self), buf)
            }
        }

        impl<'r> Decode<'r, Postgres> for $t {
            fn decode(value: <Postgres as sqlx::Database>::ValueRef<'r>) -> Result<Self, BoxDynError> {
                Ok(<Json<$t> as Decode<Postgres>>::decode(value)?.0)
            }
        }
    )+};
}

json_columns!(crate::domain::cms::Fields, crate::domain::cms::ItemData);
