//! Request types defined once: [`crate::request!`] turns one struct definition (each
//! field with its mode and [`Kind`]) into the struct, its reader (every bad field at once,
//! unknown fields refused) and its OpenAPI schema, so the parser and the document cannot
//! drift apart.
//!
//! ```ignore
//! jobboard::request! {
//!     /// Body of `POST /plans`.
//!     pub struct PlanIn {
//!         /// Unique in the organization.
//!         pub name: required Trimmed<1, 100>,
//!         #[json = "processorPriceId"]
//!         pub processor_price_id: optional Text<1, 255>,
//!     }
//! }
//! ```
//!
//! Modes: `required` (a `K::Value`), `optional` (`Option`: `null` counts as omitted),
//! `not_null` (`Option`: may be omitted, `null` refused) and `nullable` (a
//! [`Field`](super::input::Field): `null` clears).

use utoipa::openapi::{
    ObjectBuilder, RefOr,
    schema::{AdditionalProperties, OneOfBuilder, Schema, SchemaType, Type},
};

use super::{
    input::Mode,
    kind::{Kind, Refs},
};

/// Joins the lines of a doc comment the way rustdoc shows them.
pub fn doc_text(lines: &[&str]) -> Option<String> {
    let text = lines
        .iter()
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n");
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// `schema` accepting `null` as well.
pub fn nullable(schema: RefOr<Schema>) -> RefOr<Schema> {
    match schema {
        RefOr::T(Schema::Object(mut o)) => {
            o.schema_type = match o.schema_type {
                SchemaType::Type(t) => SchemaType::Array(vec![t, Type::Null]),
                SchemaType::Array(mut ts) => {
                    if !ts.contains(&Type::Null) {
                        ts.push(Type::Null);
                    }
                    SchemaType::Array(ts)
                }
                SchemaType::AnyValue => SchemaType::AnyValue,
            };
            RefOr::T(Schema::Object(o))
        }
        other => OneOfBuilder::new()
            .item(other)
            .item(ObjectBuilder::new().schema_type(Type::Null))
            .into(),
    }
}

/// `schema` with a description.
pub fn described(schema: RefOr<Schema>, doc: Option<String>) -> RefOr<Schema> {
    let Some(doc) = doc else { return schema };
    match schema {
        RefOr::T(Schema::Object(mut o)) => {
            o.description = Some(doc);
            RefOr::T(Schema::Object(o))
        }
        RefOr::T(Schema::OneOf(mut o)) => {
            o.description = Some(doc);
            RefOr::T(Schema::OneOf(o))
        }
        RefOr::T(Schema::Array(mut a)) => {
            a.description = Some(doc);
            RefOr::T(Schema::Array(a))
        }
        RefOr::Ref(mut r) => {
            r.description = doc;
            RefOr::Ref(r)
        }
        other => other,
    }
}

/// The schema of one field under its mode.
pub fn field_schema<K: Kind>(mode: Mode, doc: &[&str]) -> RefOr<Schema> {
    let schema = K::schema();
    let schema = if mode.takes_null() {
        nullable(schema)
    } else {
        schema
    };
    described(schema, doc_text(doc))
}

/// Builds the schema of a request object: its properties, which are required, and that
/// no other property is accepted.
pub struct ObjectDoc {
    builder: ObjectBuilder,
}

impl ObjectDoc {
    pub fn new(doc: &[&str]) -> ObjectDoc {
        ObjectDoc {
            builder: ObjectBuilder::new()
                .schema_type(Type::Object)
                .description(doc_text(doc))
                .additional_properties(Some(AdditionalProperties::<Schema>::FreeForm(false))),
        }
    }

    /// Adds a field read as a `K`.
    pub fn field<K: Kind>(&mut self, name: &str, mode: Mode, doc: &[&str]) {
        self.property(name, field_schema::<K>(mode, doc), mode.is_required());
    }

    /// Adds a property with its own schema.
    pub fn property(&mut self, name: &str, schema: RefOr<Schema>, required: bool) {
        let b = std::mem::take(&mut self.builder).property(name, schema);
        self.builder = if required { b.required(name) } else { b };
    }

    /// At least `n` properties (a PATCH body must change something).
    pub fn min_properties(&mut self, n: usize) {
        self.builder = std::mem::take(&mut self.builder).min_properties(Some(n));
    }

    pub fn build(self) -> RefOr<Schema> {
        self.builder.into()
    }
}

/// Adds the component schemas of `K` to `out`.
pub fn refs_of<K: Kind>(out: &mut Refs) {
    K::refs(out);
}

/// Defines a request type; see the module documentation.
#[macro_export]
macro_rules! request {
    (@ty required $k:ty) => { <$k as $crate::domain::kind::Kind>::Value };
    (@ty optional $k:ty) => { Option<<$k as $crate::domain::kind::Kind>::Value> };
    (@ty not_null $k:ty) => { Option<<$k as $crate::domain::kind::Kind>::Value> };
    (@ty nullable $k:ty) => { $crate::domain::input::Field<<$k as $crate::domain::kind::Kind>::Value> };
    (@mode required) => { $crate::domain::input::Mode::Required };
    (@mode optional) => { $crate::domain::input::Mode::Optional };
    (@mode not_null) => { $crate::domain::input::Mode::NotNull };
    (@mode nullable) => { $crate::domain::input::Mode::Nullable };
    (@take required $f:ident) => { $f.opt()? };
    (@take optional $f:ident) => { $f.opt() };
    (@take not_null $f:ident) => { $f.opt() };
    (@take nullable $f:ident) => { $f };
    (@name $f:ident) => { stringify!($f) };
    (@name $f:ident $json:literal) => { $json };
    (
        $(#[doc = $doc:literal])*
        $(#[min_properties = $minp:literal])?
        $vis:vis struct $name:ident {
            $(
                $(#[doc = $fdoc:literal])*
                $(#[json = $json:literal])?
                $fvis:vis $field:ident : $mode:ident $kind:ty
            ),* $(,)?
        }
    ) => {
        $(#[doc = $doc])*
        #[derive(Debug, Clone)]
        $vis struct $name {
            $( $(#[doc = $fdoc])* $fvis $field: $crate::request!(@ty $mode $kind), )*
        }

        impl $name {
            /// The JSON names of the fields, in order.
            #[allow(dead_code)]
            pub const FIELDS: &'static [&'static str] = &[$( $crate::request!(@name $field $($json)?) ),*];

            /// Reads the fields from `input`, recording every problem; `None` when a
            /// required field is missing or invalid (its problem is recorded).
            pub fn read(input: &mut $crate::domain::input::Input) -> Option<Self> {
                $(
                    let $field = input.read::<$kind>(
                        $crate::request!(@name $field $($json)?),
                        $crate::request!(@mode $mode),
                    );
                )*
                Some(Self { $( $field: $crate::request!(@take $mode $field), )* })
            }

            /// Reads the whole body: every field, and nothing else.
            #[allow(dead_code)]
            pub fn parse(mut input: $crate::domain::input::Input) -> $crate::domain::error::Result<Self> {
                let read = Self::read(&mut input);
                input.finish()?;
                // A missing required field was recorded as an error above.
                read.ok_or_else(|| $crate::domain::error::Error::Invalid(Vec::new()))
            }
        }

        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                let mut doc = $crate::domain::request::ObjectDoc::new(&[$($doc),*]);
                $(
                    doc.field::<$kind>(
                        $crate::request!(@name $field $($json)?),
                        $crate::request!(@mode $mode),
                        &[$($fdoc),*],
                    );
                )*
                $( doc.min_properties($minp); )?
                doc.build()
            }
        }

        impl utoipa::ToSchema for $name {
            fn schemas(out: &mut Vec<(String, utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>)>) {
                $( $crate::domain::request::refs_of::<$kind>(out); )*
            }
        }
    };
}
