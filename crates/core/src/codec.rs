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

use crate::{
    countries::Countries,
    values::{JsonDoc, Money, TextEnum, Ts},
};

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

/// Stores a [`TextEnum`] as its text on both backends (`text_enum!` invokes it for every
/// closed set it defines).
#[macro_export]
macro_rules! text_columns {
    ($($t:ty),+ $(,)?) => {$(
        impl ::sqlx::Type<::sqlx::Sqlite> for $t {
            fn type_info() -> ::sqlx::sqlite::SqliteTypeInfo { <String as ::sqlx::Type<::sqlx::Sqlite>>::type_info() }
            fn compatible(ty: &::sqlx::sqlite::SqliteTypeInfo) -> bool { <String as ::sqlx::Type<::sqlx::Sqlite>>::compatible(ty) }
        }
        impl ::sqlx::Encode<'_, ::sqlx::Sqlite> for $t {
            fn encode_by_ref(
                &self,
                buf: &mut <::sqlx::Sqlite as ::sqlx::Database>::ArgumentBuffer,
            ) -> ::std::result::Result<::sqlx::encode::IsNull, ::sqlx::error::BoxDynError> {
                <&str as ::sqlx::Encode<::sqlx::Sqlite>>::encode($crate::values::TextEnum::as_str(*self), buf)
            }
        }
        impl<'r> ::sqlx::Decode<'r, ::sqlx::Sqlite> for $t {
            fn decode(value: <::sqlx::Sqlite as ::sqlx::Database>::ValueRef<'r>) -> ::std::result::Result<Self, ::sqlx::error::BoxDynError> {
                $crate::codec::decode_text(<&str as ::sqlx::Decode<::sqlx::Sqlite>>::decode(value)?)
            }
        }
        impl ::sqlx::Type<::sqlx::Postgres> for $t {
            fn type_info() -> ::sqlx::postgres::PgTypeInfo { <String as ::sqlx::Type<::sqlx::Postgres>>::type_info() }
            fn compatible(ty: &::sqlx::postgres::PgTypeInfo) -> bool { <String as ::sqlx::Type<::sqlx::Postgres>>::compatible(ty) }
        }
        impl ::sqlx::Encode<'_, ::sqlx::Postgres> for $t {
            fn encode_by_ref(
                &self,
                buf: &mut <::sqlx::Postgres as ::sqlx::Database>::ArgumentBuffer,
            ) -> ::std::result::Result<::sqlx::encode::IsNull, ::sqlx::error::BoxDynError> {
                <&str as ::sqlx::Encode<::sqlx::Postgres>>::encode($crate::values::TextEnum::as_str(*self), buf)
            }
        }
        impl<'r> ::sqlx::Decode<'r, ::sqlx::Postgres> for $t {
            fn decode(value: <::sqlx::Postgres as ::sqlx::Database>::ValueRef<'r>) -> ::std::result::Result<Self, ::sqlx::error::BoxDynError> {
                $crate::codec::decode_text(<&str as ::sqlx::Decode<::sqlx::Postgres>>::decode(value)?)
            }
        }
    )+};
}

/// Reads the stored text of a closed set.
pub fn decode_text<E: TextEnum>(s: &str) -> Result<E, BoxDynError> {
    E::parse(s).ok_or_else(|| format!("unknown {} {s:?}", E::NAME).into())
}

/// Stores a serde type as JSON on both backends (what `sqlx::types::Json` does), so the
/// domain types need not wrap themselves in it.
#[macro_export]
macro_rules! json_columns {
    ($($t:ty),+ $(,)?) => {$(
        impl ::sqlx::Type<::sqlx::Sqlite> for $t {
            fn type_info() -> ::sqlx::sqlite::SqliteTypeInfo { <::sqlx::types::Json<$t> as ::sqlx::Type<::sqlx::Sqlite>>::type_info() }
            fn compatible(ty: &::sqlx::sqlite::SqliteTypeInfo) -> bool { <::sqlx::types::Json<$t> as ::sqlx::Type<::sqlx::Sqlite>>::compatible(ty) }
        }

        impl ::sqlx::Encode<'_, ::sqlx::Sqlite> for $t {
            fn encode_by_ref(
                &self,
                buf: &mut <::sqlx::Sqlite as ::sqlx::Database>::ArgumentBuffer,
            ) -> ::std::result::Result<::sqlx::encode::IsNull, ::sqlx::error::BoxDynError> {
                <::sqlx::types::Json<&$t> as ::sqlx::Encode<::sqlx::Sqlite>>::encode_by_ref(&::sqlx::types::Json(self), buf)
            }
        }

        impl<'r> ::sqlx::Decode<'r, ::sqlx::Sqlite> for $t {
            fn decode(value: <::sqlx::Sqlite as ::sqlx::Database>::ValueRef<'r>) -> ::std::result::Result<Self, ::sqlx::error::BoxDynError> {
                Ok(<::sqlx::types::Json<$t> as ::sqlx::Decode<::sqlx::Sqlite>>::decode(value)?.0)
            }
        }

        impl ::sqlx::Type<::sqlx::Postgres> for $t {
            fn type_info() -> ::sqlx::postgres::PgTypeInfo { <::sqlx::types::Json<$t> as ::sqlx::Type<::sqlx::Postgres>>::type_info() }
            fn compatible(ty: &::sqlx::postgres::PgTypeInfo) -> bool { <::sqlx::types::Json<$t> as ::sqlx::Type<::sqlx::Postgres>>::compatible(ty) }
        }

        impl ::sqlx::Encode<'_, ::sqlx::Postgres> for $t {
            fn encode_by_ref(
                &self,
                buf: &mut <::sqlx::Postgres as ::sqlx::Database>::ArgumentBuffer,
            ) -> ::std::result::Result<::sqlx::encode::IsNull, ::sqlx::error::BoxDynError> {
                <::sqlx::types::Json<&$t> as ::sqlx::Encode<::sqlx::Postgres>>::encode_by_ref(&::sqlx::types::Json(self), buf)
            }
        }

        impl<'r> ::sqlx::Decode<'r, ::sqlx::Postgres> for $t {
            fn decode(value: <::sqlx::Postgres as ::sqlx::Database>::ValueRef<'r>) -> ::std::result::Result<Self, ::sqlx::error::BoxDynError> {
                Ok(<::sqlx::types::Json<$t> as ::sqlx::Decode<::sqlx::Postgres>>::decode(value)?.0)
            }
        }
    )+};
}

/// A list of country codes is stored as its codes joined by commas (see [`Countries`]).
impl Type<Sqlite> for Countries {
    fn type_info() -> SqliteTypeInfo {
        <String as Type<Sqlite>>::type_info()
    }
    fn compatible(ty: &SqliteTypeInfo) -> bool {
        <String as Type<Sqlite>>::compatible(ty)
    }
}

impl Encode<'_, Sqlite> for Countries {
    fn encode_by_ref(
        &self,
        buf: &mut <Sqlite as sqlx::Database>::ArgumentBuffer,
    ) -> Result<IsNull, BoxDynError> {
        <String as Encode<Sqlite>>::encode(self.to_text(), buf)
    }
}

impl<'r> Decode<'r, Sqlite> for Countries {
    fn decode(value: <Sqlite as sqlx::Database>::ValueRef<'r>) -> Result<Self, BoxDynError> {
        Ok(Countries::from_text(<&str as Decode<Sqlite>>::decode(
            value,
        )?))
    }
}

impl Type<Postgres> for Countries {
    fn type_info() -> PgTypeInfo {
        <String as Type<Postgres>>::type_info()
    }
    fn compatible(ty: &PgTypeInfo) -> bool {
        <String as Type<Postgres>>::compatible(ty)
    }
}

impl Encode<'_, Postgres> for Countries {
    fn encode_by_ref(
        &self,
        buf: &mut <Postgres as sqlx::Database>::ArgumentBuffer,
    ) -> Result<IsNull, BoxDynError> {
        <String as Encode<Postgres>>::encode(self.to_text(), buf)
    }
}

impl<'r> Decode<'r, Postgres> for Countries {
    fn decode(value: <Postgres as sqlx::Database>::ValueRef<'r>) -> Result<Self, BoxDynError> {
        Ok(Countries::from_text(<&str as Decode<Postgres>>::decode(
            value,
        )?))
    }
}
