//! Typed ids: one type per kind of record, so that an organization's id cannot be passed
//! where a job's is expected (the compiler refuses it). Each is a newtype over the stored
//! value, the same in JSON (`#[serde(transparent)]`), in the database (stored as its
//! inner value on either backend) and in the OpenAPI document (the inner value's schema).
//!
//! A new kind of id is one [`crate::id_type!`] line.

use uuid::Uuid;

/// Defines a typed id: `id_type!(/// docs pub struct JobId(Uuid);)`.
///
/// The type is `Copy`, ordered, hashable, `Default`, serialised as its inner value, shown
/// (`Display`) and parsed (`FromStr`) as it, converts to and from it (`From` both ways),
/// is stored as it on any sqlx database (`Type`, `Encode`, `Decode`, and PostgreSQL arrays)
/// and documented as it ([`utoipa::PartialSchema`], [`utoipa::ToSchema`]). The inner type
/// must be one of [`IdValue`]'s. The defining crate needs `serde` (for the derive).
///
/// In a struct that derives `utoipa::ToSchema`, a field of an id type names its inner
/// type (`#[schema(value_type = Uuid)]`): the document then shows the value inline, as it
/// did before ids were typed, instead of a reference to a component of the id's name.
#[macro_export]
macro_rules! id_type {
    ($(#[$meta:meta])* $vis:vis struct $Name:ident($inner:ty);) => {
        $(#[$meta])*
        #[derive(
            Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default,
            serde::Serialize, serde::Deserialize,
        )]
        #[serde(transparent)]
        $vis struct $Name(pub $inner);

        impl ::std::fmt::Display for $Name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                ::std::fmt::Display::fmt(&self.0, f)
            }
        }

        impl ::std::str::FromStr for $Name {
            type Err = <$inner as ::std::str::FromStr>::Err;
            fn from_str(s: &str) -> ::std::result::Result<Self, Self::Err> {
                <$inner as ::std::str::FromStr>::from_str(s).map($Name)
            }
        }

        impl ::std::convert::From<$inner> for $Name {
            fn from(v: $inner) -> $Name {
                $Name(v)
            }
        }

        impl ::std::convert::From<$Name> for $inner {
            fn from(v: $Name) -> $inner {
                v.0
            }
        }

        impl<DB: $crate::ids::__private::sqlx::Database> $crate::ids::__private::sqlx::Type<DB>
            for $Name
        where
            $inner: $crate::ids::__private::sqlx::Type<DB>,
        {
            fn type_info() -> DB::TypeInfo {
                <$inner as $crate::ids::__private::sqlx::Type<DB>>::type_info()
            }
            fn compatible(ty: &DB::TypeInfo) -> bool {
                <$inner as $crate::ids::__private::sqlx::Type<DB>>::compatible(ty)
            }
        }

        impl<'q, DB: $crate::ids::__private::sqlx::Database>
            $crate::ids::__private::sqlx::Encode<'q, DB> for $Name
        where
            $inner: $crate::ids::__private::sqlx::Encode<'q, DB>,
        {
            fn encode_by_ref(
                &self,
                buf: &mut <DB as $crate::ids::__private::sqlx::Database>::ArgumentBuffer,
            ) -> ::std::result::Result<
                $crate::ids::__private::sqlx::encode::IsNull,
                $crate::ids::__private::sqlx::error::BoxDynError,
            > {
                <$inner as $crate::ids::__private::sqlx::Encode<'q, DB>>::encode_by_ref(
                    &self.0, buf,
                )
            }
            fn produces(&self) -> ::std::option::Option<DB::TypeInfo> {
                <$inner as $crate::ids::__private::sqlx::Encode<'q, DB>>::produces(&self.0)
            }
            fn size_hint(&self) -> usize {
                <$inner as $crate::ids::__private::sqlx::Encode<'q, DB>>::size_hint(&self.0)
            }
        }

        impl<'r, DB: $crate::ids::__private::sqlx::Database>
            $crate::ids::__private::sqlx::Decode<'r, DB> for $Name
        where
            $inner: $crate::ids::__private::sqlx::Decode<'r, DB>,
        {
            fn decode(
                value: <DB as $crate::ids::__private::sqlx::Database>::ValueRef<'r>,
            ) -> ::std::result::Result<Self, $crate::ids::__private::sqlx::error::BoxDynError>
            {
                <$inner as $crate::ids::__private::sqlx::Decode<'r, DB>>::decode(value).map($Name)
            }
        }

        impl $crate::ids::__private::sqlx::postgres::PgHasArrayType for $Name {
            fn array_type_info() -> $crate::ids::__private::sqlx::postgres::PgTypeInfo {
                <$inner as $crate::ids::__private::sqlx::postgres::PgHasArrayType>::array_type_info()
            }
            fn array_compatible(ty: &$crate::ids::__private::sqlx::postgres::PgTypeInfo) -> bool {
                <$inner as $crate::ids::__private::sqlx::postgres::PgHasArrayType>::array_compatible(
                    ty,
                )
            }
        }

        impl $crate::ids::__private::utoipa::PartialSchema for $Name {
            fn schema() -> $crate::ids::__private::utoipa::openapi::RefOr<
                $crate::ids::__private::utoipa::openapi::schema::Schema,
            > {
                <$inner as $crate::ids::IdValue>::schema()
            }
        }

        impl $crate::ids::__private::utoipa::ToSchema for $Name {}
    };
}

/// What an id may be made of: its OpenAPI schema is the one the document gives the value
/// itself (what a derived schema shows for a field of that type).
pub trait IdValue {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>;
}

impl IdValue for i64 {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        <i64 as utoipa::PartialSchema>::schema()
    }
}

impl IdValue for Uuid {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .format(Some(utoipa::openapi::SchemaFormat::KnownFormat(
                utoipa::openapi::KnownFormat::Uuid,
            )))
            .into()
    }
}

/// The crates [`id_type!`] expands to, under names every crate can reach.
#[doc(hidden)]
pub mod __private {
    pub use sqlx;
    pub use utoipa;
}

id_type!(
    /// An organization: the tenant every other record belongs to.
    pub struct OrgId(i64);
);

id_type!(
    /// A job of an organization.
    pub struct JobId(Uuid);
);

id_type!(
    /// A member of an organization's board (someone who signs up there, holds access and
    /// pays), not one of its staff.
    pub struct MemberId(Uuid);
);

id_type!(
    /// A category of an organization's jobs.
    pub struct CategoryId(Uuid);
);

id_type!(
    /// A staff user: someone who signs in to an organization's dashboard.
    pub struct UserId(Uuid);
);

id_type!(
    /// An application a candidate sent to a job.
    pub struct ApplicationId(Uuid);
);

id_type!(
    /// A webhook subscription of an organization.
    pub struct WebhookId(Uuid);
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_the_inner_value() {
        let org = OrgId(7);
        assert_eq!(serde_json::to_string(&org).unwrap(), "7");
        assert_eq!(serde_json::from_str::<OrgId>("7").unwrap(), org);
        let u = Uuid::nil();
        assert_eq!(
            serde_json::to_value(JobId(u)).unwrap(),
            serde_json::to_value(u).unwrap()
        );
    }

    #[test]
    fn shown_and_parsed_as_the_inner_value() {
        let u = Uuid::now_v7();
        assert_eq!(JobId(u).to_string(), u.to_string());
        assert_eq!(u.to_string().parse::<JobId>().unwrap(), JobId(u));
        assert_eq!("42".parse::<OrgId>().unwrap(), OrgId(42));
        assert!("x".parse::<OrgId>().is_err());
        assert_eq!(i64::from(OrgId::from(3)), 3);
    }

    #[tokio::test]
    async fn stored_as_the_inner_value() {
        let pool = sqlx::SqlitePool::connect("sqlite::memory:").await.unwrap();
        let u = Uuid::now_v7();
        let (org, job, raw): (OrgId, Option<JobId>, i64) = sqlx::query_as("SELECT $1, $2, $1")
            .bind(OrgId(9))
            .bind(Some(JobId(u)))
            .fetch_one(&pool)
            .await
            .unwrap();
        assert_eq!((org, job, raw), (OrgId(9), Some(JobId(u)), 9));
    }

    #[test]
    fn documented_as_the_inner_value() {
        use utoipa::PartialSchema;
        let json = |s| serde_json::to_value(s).unwrap();
        assert_eq!(
            json(OrgId::schema()),
            json(<i64 as PartialSchema>::schema())
        );
        assert_eq!(
            json(JobId::schema()),
            serde_json::json!({"type": "string", "format": "uuid"})
        );
    }
}
