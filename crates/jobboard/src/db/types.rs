//! Column types shared by both backends.

use chrono::{DateTime, SecondsFormat, TimeZone, Utc};
use serde::{Deserialize, Serialize, Serializer};
use sqlx::{
    Decode, Encode, Postgres, Sqlite, Type, encode::IsNull, error::BoxDynError,
    postgres::PgTypeInfo, sqlite::SqliteTypeInfo,
};

/// A UTC instant with microsecond precision.
///
/// Stored as `timestamptz` on PostgreSQL and as integer microseconds since the Unix epoch
/// on SQLite (so comparisons and indexes there are plain integer ones). Serialised as
/// RFC 3339 with a `Z`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
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

    /// Parses an RFC 3339 / ISO 8601 date-time with an offset.
    pub fn parse(s: &str) -> Option<Ts> {
        DateTime::parse_from_rfc3339(s)
            .ok()
            .map(|d| Ts::from_datetime(d.with_timezone(&Utc)))
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
}
