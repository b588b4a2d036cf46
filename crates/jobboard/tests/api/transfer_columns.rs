//! `jobboard export`'s list of tables and columns against the schema of each backend.

use jobboard_store::transfer::{self, tables::Kind};

use crate::{backends, common::*};

backends!(the_export_names_every_table_and_column);

/// How a column of `kind` is declared on `b`.
fn declared(b: Backend, kind: Kind) -> &'static str {
    match (b, kind) {
        (Backend::Sqlite, Kind::Org | Kind::Int | Kind::Ts | Kind::Bool | Kind::Cursor) => {
            "INTEGER"
        }
        (Backend::Sqlite, Kind::Id | Kind::Bytes) => "BLOB",
        (Backend::Sqlite, Kind::Float) => "REAL",
        (Backend::Sqlite, Kind::Text | Kind::Json | Kind::Money) => "TEXT",
        (Backend::Postgres, Kind::Org | Kind::Int | Kind::Cursor) => "bigint",
        (Backend::Postgres, Kind::Id) => "uuid",
        (Backend::Postgres, Kind::Ts) => "timestamp with time zone",
        (Backend::Postgres, Kind::Bool) => "boolean",
        (Backend::Postgres, Kind::Float) => "double precision",
        (Backend::Postgres, Kind::Text) => "text",
        (Backend::Postgres, Kind::Json) => "jsonb",
        (Backend::Postgres, Kind::Bytes) => "bytea",
        (Backend::Postgres, Kind::Money) => "numeric",
    }
}

/// Every table of the schema is exported or left out with a reason, and every column of
/// an exported table is in the export with the kind and nullability it is declared with:
/// a migration that adds one fails here until the export says what it does with it.
async fn the_export_names_every_table_and_column(b: Backend) {
    let t = TestApp::spawn(b).await;
    // (table, column, declared type, may be null)
    let columns: Vec<(String, String, String, bool)> = match b {
        Backend::Sqlite => jobboard_store::dispatch!(t.db().reader(), p => {
            sqlx::query_as(
                "SELECT m.name, c.name, c.type, c.\"notnull\" = 0 AND c.pk = 0
                 FROM sqlite_master m JOIN pragma_table_info(m.name) c
                 WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'
                   AND NOT EXISTS (SELECT 1 FROM sqlite_master v
                       WHERE v.sql LIKE 'CREATE VIRTUAL TABLE%'
                         AND (m.name = v.name OR m.name LIKE v.name || '_%'))",
            )
            .fetch_all(p)
            .await
            .unwrap()
        }),
        Backend::Postgres => jobboard_store::dispatch!(t.db().reader(), p => {
            sqlx::query_as(
                "SELECT table_name::text, column_name::text, data_type::text, is_nullable = 'YES'
                 FROM information_schema.columns WHERE table_schema = current_schema()",
            )
            .fetch_all(p)
            .await
            .unwrap()
        }),
    };
    let mut tables: Vec<&str> = columns.iter().map(|c| c.0.as_str()).collect();
    tables.dedup();
    for table in &tables {
        let exported = transfer::tables::TABLES.iter().any(|t| t.name == *table);
        let left_out = transfer::tables::LEFT_OUT.iter().any(|(t, _)| t == table);
        assert!(
            exported ^ left_out,
            "{table}: neither exported nor left out with a reason"
        );
    }
    for table in transfer::tables::TABLES {
        let mut want: Vec<(String, String, bool)> = table
            .columns()
            .iter()
            .map(|c| {
                (
                    c.name.to_string(),
                    declared(b, c.kind).to_string(),
                    c.nullable,
                )
            })
            .collect();
        let mut have: Vec<(String, String, bool)> = columns
            .iter()
            .filter(|c| c.0 == table.name)
            .filter(|c| !transfer::tables::DERIVED.contains(&(table.name, c.1.as_str())))
            .map(|c| (c.1.clone(), c.2.clone(), c.3))
            .collect();
        want.sort();
        have.sort();
        assert_eq!(have, want, "the columns of {} on {b:?}", table.name);
    }
}
