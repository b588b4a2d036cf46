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
//! [`Field`](super::input::Field): `null` clears). `block` names another request type
//! instead of a kind: an object nested in the body (`Option`: `null` counts as omitted),
//! whose problems are reported with its path (`payment.amount`) among the body's own.
//!
//! `#[check = path]` before the struct names a `fn(&mut Input)` run before the fields are
//! read: a rule on which fields were sent, reported under the object's own path (see
//! [`Input::refuse`](super::input::Input::refuse)), ahead of the fields' problems.
//!
//! `#[sent = PlanSent]` (not with `block` fields) before the struct also defines `PlanSent`, every field as sent
//! (absent, `null` or its checked value), read by `PlanIn::read_sent` also when a required
//! field is missing or invalid. An operation whose other rules need some fields (a
//! nested part read on its own, a window of two instants, a record looked up by id) reads
//! the sent fields, checks those rules, and reports their problems together with the
//! fields' own; `PlanSent::complete` then gives the request.

use utoipa::openapi::{
    ObjectBuilder, RefOr,
    schema::{AdditionalProperties, OneOfBuilder, Schema, SchemaType, Type},
};

use super::{
    input::{Field, Input, Mode},
    kind::{Kind, Refs},
};

pub use jobboard_core::values::doc_text;

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

/// Reads field `name` of `input` as a nested object of request type `T`; its problems are
/// reported as `name.field`. `null` counts as omitted.
pub fn read_block<T>(
    input: &mut Input,
    name: &str,
    read: impl FnOnce(&mut Input) -> Option<T>,
) -> Field<T> {
    match input.nested(name, Mode::Optional) {
        Field::Value(mut nested) => {
            let value = read(&mut nested);
            input.absorb(nested);
            value.map_or(Field::Absent, Field::Value)
        }
        Field::Null => Field::Null,
        Field::Absent => Field::Absent,
    }
}

/// Adds request type `T` and the component schemas it refers to to `out`.
pub fn block_refs<T: utoipa::ToSchema>(out: &mut Refs) {
    out.push((T::name().into_owned(), T::schema()));
    T::schemas(out);
}

impl ObjectDoc {
    /// Adds a nested object of request type `T` (may be omitted; `null` counts as omitted).
    pub fn block<T: utoipa::ToSchema>(&mut self, name: &str, doc: &[&str]) {
        let schema = RefOr::Ref(utoipa::openapi::Ref::from_schema_name(T::name()));
        self.property(name, described(nullable(schema), doc_text(doc)), false);
    }
}

/// Adds the component schemas of `K` to `out`.
pub fn refs_of<K: Kind>(out: &mut Refs) {
    K::refs(out);
}

/// Defines a request type; see the module documentation.
#[macro_export]
macro_rules! request {
    (@ty block $k:ty) => { Option<$k> };
    (@ty required $k:ty) => { <$k as $crate::kind::Kind>::Value };
    (@ty optional $k:ty) => { Option<<$k as $crate::kind::Kind>::Value> };
    (@ty not_null $k:ty) => { Option<<$k as $crate::kind::Kind>::Value> };
    (@ty nullable $k:ty) => { $crate::input::Field<<$k as $crate::kind::Kind>::Value> };
    (@mode required) => { $crate::input::Mode::Required };
    (@mode optional) => { $crate::input::Mode::Optional };
    (@mode not_null) => { $crate::input::Mode::NotNull };
    (@mode nullable) => { $crate::input::Mode::Nullable };
    (@take block $f:ident) => { $f.opt() };
    (@take required $f:ident) => { $f.opt()? };
    (@take optional $f:ident) => { $f.opt() };
    (@take not_null $f:ident) => { $f.opt() };
    (@take nullable $f:ident) => { $f };
    (@read $input:ident block $k:ty, $name:expr) => {
        $crate::request::read_block($input, $name, <$k>::read)
    };
    (@read $input:ident $mode:ident $k:ty, $name:expr) => {
        $input.read::<$k>($name, $crate::request!(@mode $mode))
    };
    (@doc $doc:ident block $k:ty, $name:expr, $fdoc:expr) => { $doc.block::<$k>($name, $fdoc) };
    (@doc $doc:ident $mode:ident $k:ty, $name:expr, $fdoc:expr) => {
        $doc.field::<$k>($name, $crate::request!(@mode $mode), $fdoc)
    };
    (@refs $out:ident block $k:ty) => { $crate::request::block_refs::<$k>($out) };
    (@refs $out:ident $mode:ident $k:ty) => { $crate::request::refs_of::<$k>($out) };
    (@name $f:ident) => { stringify!($f) };
    (@name $f:ident $json:literal) => { $json };
    // `#[sent = ...]` given: the sent fields' struct and its reader.
    (@sent [] $($rest:tt)*) => {};
    (@sent [$Sent:ident] $vis:vis $name:ident {
        $( $(#[json = $json:literal])? $field:ident : $mode:ident $kind:ty ),*
    }) => {
        #[doc = concat!("The fields of [`", stringify!($name), "`] as sent: each absent, `null` or its checked value.")]
        #[derive(Debug, Clone)]
        $vis struct $Sent {
            $( pub $field: $crate::input::Field<<$kind as $crate::kind::Kind>::Value>, )*
        }

        impl $name {
            /// Reads every field from `input`, recording every problem, also when a
            /// required field is missing or invalid.
            pub fn read_sent(input: &mut $crate::input::Input) -> $Sent {
                $Sent {
                    $(
                        $field: input.read::<$kind>(
                            $crate::request!(@name $field $($json)?),
                            $crate::request!(@mode $mode),
                        ),
                    )*
                }
            }
        }

        impl $Sent {
            /// The request, when every required field was sent and valid (the problems of
            /// the others were recorded when they were read).
            pub fn complete(self) -> Option<$name> {
                let $Sent { $($field),* } = self;
                Some($name { $( $field: $crate::request!(@take $mode $field), )* })
            }
        }
    };
    (
        $(#[doc = $doc:literal])*
        $(#[min_properties = $minp:literal])?
        $(#[sent = $Sent:ident])?
        $(#[check = $check:path])?
        $vis:vis struct $name:ident {
            $(
                $(#[doc = $fdoc:literal])*
                $(#[json = $json:literal])?
                $fvis:vis $field:ident : $mode:ident $kind:ty
            ),* $(,)?
        }
    ) => {
        $crate::request!(@sent [$($Sent)?] $vis $name {
            $( $(#[json = $json])? $field : $mode $kind ),*
        });

        $(#[doc = $doc])*
        #[derive(Debug, Clone)]
        $vis struct $name {
            $( $(#[doc = $fdoc])* $fvis $field: $crate::request!(@ty $mode $kind), )*
        }

        impl $name {
            /// The JSON names of the fields, in order.
            pub const FIELDS: &'static [&'static str] = &[$( $crate::request!(@name $field $($json)?) ),*];

            /// Reads the fields from `input`, recording every problem; `None` when a
            /// required field is missing or invalid (its problem is recorded).
            pub fn read(input: &mut $crate::input::Input) -> Option<Self> {
                $( $check(input); )?
                $(
                    let $field = $crate::request!(
                        @read input $mode $kind,
                        $crate::request!(@name $field $($json)?)
                    );
                )*
                Some(Self { $( $field: $crate::request!(@take $mode $field), )* })
            }

            /// Reads the whole body: every field, and nothing else.
            pub fn parse(mut input: $crate::input::Input) -> $crate::error::Result<Self> {
                let read = Self::read(&mut input);
                input.finish()?;
                // A missing required field was recorded as an error above.
                read.ok_or_else(|| $crate::error::Error::Invalid(Vec::new()))
            }
        }

        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                let mut doc = $crate::request::ObjectDoc::new(&[$($doc),*]);
                $(
                    $crate::request!(
                        @doc doc $mode $kind,
                        $crate::request!(@name $field $($json)?),
                        &[$($fdoc),*]
                    );
                )*
                $( doc.min_properties($minp); )?
                doc.build()
            }
        }

        impl utoipa::ToSchema for $name {
            fn schemas(out: &mut Vec<(String, utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>)>) {
                $( $crate::request!(@refs out $mode $kind); )*
            }
        }
    };
}
