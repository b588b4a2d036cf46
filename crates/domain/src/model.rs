//! [`crate::model!`]: a resource's stored row defined once. From one list of columns,
//! each with its role, it makes the row type (serialised, documented and read from the
//! database), its column lists for `SELECT`, `INSERT` and `UPDATE`, the binding of every
//! column in that order, the changes a request may make (read from a create or a patch
//! body, applied to a row, named in the `changed` list of events), and the OpenAPI
//! schemas of the create and patch bodies.
//!
//! Roles: `key` (the id; inserted, never updated), `fixed` (inserted, never updated),
//! `stamp` (inserted and set on every update), `derived` (computed by the operation from
//! other fields; inserted and updated) and `write` (sent by clients). A `write` column
//! names its class and [`Kind`](super::kind::Kind): `required` (must be sent on create,
//! never `null`), `flag` (has a default, never `null`) or `optional` (`null` clears it).
//!
//! A column of an id type says how the document shows it (`#[schema(value_type = Uuid)]`,
//! after its doc comment): the row's schema is derived.
//!
//! A `write` column may end with `=> Field::...`: how it appears on forms
//! ([`crate::form`]); every form of the resource is derived from those lines.
//!
//! Adding an optional column to such a model is one `write` line (and a migration per
//! backend): everything above follows from it.

/// The mode of a `write` column in a create body.
#[macro_export]
#[doc(hidden)]
macro_rules! model_create_mode {
    (required) => {
        $crate::input::Mode::Required
    };
    (flag) => {
        $crate::input::Mode::Optional
    };
    (optional) => {
        $crate::input::Mode::Optional
    };
}

/// The mode of a `write` column in a patch body.
#[macro_export]
#[doc(hidden)]
macro_rules! model_patch_mode {
    (required) => {
        $crate::input::Mode::NotNull
    };
    (flag) => {
        $crate::input::Mode::NotNull
    };
    (optional) => {
        $crate::input::Mode::Nullable
    };
}

/// Applies one sent change to a row's column.
#[macro_export]
#[doc(hidden)]
macro_rules! model_apply {
    (optional, $target:expr, $v:expr) => {
        if let Some(v) = $v.patch() {
            $target = v;
        }
    };
    ($class:ident, $target:expr, $v:expr) => {
        if let $crate::input::Field::Value(v) = $v {
            $target = v;
        }
    };
}

/// Adds a column's form field, when its line describes one.
#[macro_export]
#[doc(hidden)]
macro_rules! model_form {
    ($f:ident, $class:ident, [$form:expr]) => {
        Some(($form).named(stringify!($f), $crate::model_class!($class)))
    };
    ($f:ident, $class:ident, []) => {
        None::<$crate::form::Field>
    };
}

/// The form class of a `write` column.
#[macro_export]
#[doc(hidden)]
macro_rules! model_class {
    (required) => {
        $crate::form::Class::Required
    };
    (flag) => {
        $crate::form::Class::Flag
    };
    (optional) => {
        $crate::form::Class::Optional
    };
}

/// Defines a stored row; see the module documentation.
#[macro_export]
macro_rules! model {
    // Entry: collect the columns, tagging each with its role.
    (
        $(#[doc = $doc:literal])*
        pub struct $Row:ident in $table:literal;
        changes $Changes:ident;
        $(#[doc = $cdoc:literal])* create $CreateDoc:ident;
        $(#[doc = $pdoc:literal])* patch $PatchDoc:ident;
        { $($body:tt)* }
    ) => {
        $crate::model!(@munch
            [ [$($doc)*] $Row $table $Changes [$($cdoc)*] $CreateDoc [$($pdoc)*] $PatchDoc ]
            [] [] [] [] []
            $($body)*
        );
    };

    // A `write` column.
    (@munch $head:tt [$($all:tt)*] [$($ins:tt)*] [$($upd:tt)*] [$($w:tt)*] [$($cmp:tt)*]
        $(#[doc = $fd:literal])* $(#[schema $sa:tt])? write $f:ident : $t:ty = $class:ident $kind:ty $(=> $form:expr)?, $($rest:tt)*
    ) => {
        $crate::model!(@munch $head
            [$($all)* { [$($fd)*] [$(schema $sa)?] $f $t }]
            [$($ins)* $f]
            [$($upd)* $f]
            [$($w)* { [$($fd)*] $f $class $kind [$($form)?] }]
            [$($cmp)* $f]
            $($rest)*
        );
    };
    // A `derived` column.
    (@munch $head:tt [$($all:tt)*] [$($ins:tt)*] [$($upd:tt)*] $w:tt $cmp:tt
        $(#[doc = $fd:literal])* $(#[schema $sa:tt])? derived $f:ident : $t:ty, $($rest:tt)*
    ) => {
        $crate::model!(@munch $head
            [$($all)* { [$($fd)*] [$(schema $sa)?] $f $t }]
            [$($ins)* $f]
            [$($upd)* $f]
            $w $cmp
            $($rest)*
        );
    };
    // A `stamp` column.
    (@munch $head:tt [$($all:tt)*] [$($ins:tt)*] [$($upd:tt)*] $w:tt $cmp:tt
        $(#[doc = $fd:literal])* $(#[schema $sa:tt])? stamp $f:ident : $t:ty, $($rest:tt)*
    ) => {
        $crate::model!(@munch $head
            [$($all)* { [$($fd)*] [$(schema $sa)?] $f $t }]
            [$($ins)* $f]
            [$($upd)* $f]
            $w $cmp
            $($rest)*
        );
    };
    // A `key` or `fixed` column.
    (@munch $head:tt [$($all:tt)*] [$($ins:tt)*] $upd:tt $w:tt $cmp:tt
        $(#[doc = $fd:literal])* $(#[schema $sa:tt])? $role:ident $f:ident : $t:ty, $($rest:tt)*
    ) => {
        $crate::model!(@munch $head
            [$($all)* { [$($fd)*] [$(schema $sa)?] $f $t }]
            [$($ins)* $f]
            $upd $w $cmp
            $($rest)*
        );
    };

    // Every column read: emit.
    (@munch
        [ [$($doc:literal)*] $Row:ident $table:literal $Changes:ident
          [$($cdoc:literal)*] $CreateDoc:ident [$($pdoc:literal)*] $PatchDoc:ident ]
        [$({ [$($fd:literal)*] [$($sattr:meta)?] $f:ident $t:ty })*]
        [$($ins:ident)*]
        [$($upd:ident)*]
        [$({ [$($wd:literal)*] $wf:ident $class:ident $kind:ty [$($form:expr)?] })*]
        [$($cmp:ident)*]
    ) => {
        $(#[doc = $doc])*
        #[derive(Debug, Clone, Default, PartialEq, serde::Serialize, sqlx::FromRow, utoipa::ToSchema)]
        pub struct $Row {
            $( $(#[doc = $fd])* $(#[$sattr])? pub $f: $t, )*
        }

        impl $Row {
            /// The table.
            pub const TABLE: &'static str = $table;
            /// Every column, in the order of the row type.
            pub const COLUMNS: &'static [&'static str] = &[$(stringify!($f)),*];
            /// The columns written by an insert (every column), in binding order.
            pub const INSERTED: &'static [&'static str] = &[$(stringify!($ins)),*];
            /// The columns written by an update, in binding order.
            pub const UPDATED: &'static [&'static str] = &[$(stringify!($upd)),*];

            /// Binds the inserted columns of this row, in [`Self::INSERTED`] order.
            pub fn bind_insert<'q, DB, O>(
                &self,
                q: sqlx::query::QueryAs<'q, DB, O, <DB as sqlx::Database>::Arguments>,
            ) -> sqlx::query::QueryAs<'q, DB, O, <DB as sqlx::Database>::Arguments>
            where
                DB: sqlx::Database,
                $( $t: sqlx::Encode<'q, DB> + sqlx::Type<DB> + 'q, )*
            {
                q $( .bind(self.$ins.clone()) )*
            }

            /// Binds the updated columns of this row, in [`Self::UPDATED`] order.
            pub fn bind_update<'q, DB, O>(
                &self,
                q: sqlx::query::QueryAs<'q, DB, O, <DB as sqlx::Database>::Arguments>,
            ) -> sqlx::query::QueryAs<'q, DB, O, <DB as sqlx::Database>::Arguments>
            where
                DB: sqlx::Database,
                $( $t: sqlx::Encode<'q, DB> + sqlx::Type<DB> + 'q, )*
            {
                q $( .bind(self.$upd.clone()) )*
            }

            /// The client-writable fields, in order.
            pub const WRITTEN: &'static [&'static str] = &[$(stringify!($wf)),*];

            /// The form fields of the client-writable columns, in order: each column's
            /// `=> Field` description, named. A column without one is on no form.
            pub fn form_fields() -> Vec<$crate::form::Field> {
                [$( $crate::model_form!($wf, $class, [$($form)?]) ),*]
                    .into_iter()
                    .flatten()
                    .collect()
            }

            /// What a form shows of each client-writable column, to edit this row.
            pub fn form_values(&self) -> Vec<(&'static str, String)> {
                vec![$( (stringify!($wf), $crate::form::FormText::form_text(&self.$wf)) ),*]
            }

            /// The names of the client-writable fields whose values differ in `other`.
            pub fn changed(&self, other: &$Row) -> Vec<&'static str> {
                let mut out = Vec::new();
                $( if self.$cmp != other.$cmp { out.push(stringify!($cmp)); } )*
                out
            }
        }

        /// The fields a request sent, each absent, `null` or a checked value.
        #[derive(Debug, Clone, Default)]
        pub struct $Changes {
            $( pub $wf: $crate::input::Field<<$kind as $crate::kind::Kind>::Value>, )*
        }

        impl $Changes {
            /// Reads a create body (`create`) or a patch body, recording every problem.
            pub fn read(input: &mut $crate::input::Input, create: bool) -> $Changes {
                $Changes {
                    $(
                        $wf: input.read::<$kind>(
                            stringify!($wf),
                            if create {
                                $crate::model_create_mode!($class)
                            } else {
                                $crate::model_patch_mode!($class)
                            },
                        ),
                    )*
                }
            }

            /// Writes the sent values into `row`.
            pub fn apply(self, row: &mut $Row) {
                $( $crate::model_apply!($class, row.$wf, self.$wf); )*
            }
        }

        $(#[doc = $cdoc])*
        pub struct $CreateDoc;

        impl utoipa::PartialSchema for $CreateDoc {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                let mut doc = $crate::request::ObjectDoc::new(&[$($cdoc),*]);
                $( doc.field::<$kind>(stringify!($wf), $crate::model_create_mode!($class), &[$($wd),*]); )*
                doc.build()
            }
        }

        impl utoipa::ToSchema for $CreateDoc {
            fn schemas(out: &mut Vec<(String, utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>)>) {
                $( $crate::request::refs_of::<$kind>(out); )*
            }
        }

        $(#[doc = $pdoc])*
        pub struct $PatchDoc;

        impl utoipa::PartialSchema for $PatchDoc {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                let mut doc = $crate::request::ObjectDoc::new(&[$($pdoc),*]);
                $( doc.field::<$kind>(stringify!($wf), $crate::model_patch_mode!($class), &[$($wd),*]); )*
                doc.min_properties(1);
                doc.build()
            }
        }

        impl utoipa::ToSchema for $PatchDoc {
            fn schemas(out: &mut Vec<(String, utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>)>) {
                $( $crate::request::refs_of::<$kind>(out); )*
            }
        }
    };
}
