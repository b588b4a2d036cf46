//! Moving one organization between servers: `jobboard export` writes every record of an
//! organization to a JSON Lines file, `jobboard import` writes such a file into a
//! database of either backend (docs/operating.md, "Moving an organization").
//!
//! The file (format version [`FORMAT_VERSION`]):
//!
//! - line 1, the header: `{"format": "jobboard-organization", "version": 2,
//!   "organization": ID, "schema": N, "exported_at": "..."}`;
//! - one line per row, `{"table": "jobs", "row": {...}}`, tables in the order of
//!   [`tables::TABLES`] (a row's parents before it), each row with every column of its
//!   table, values as [`tables::Kind`] says;
//! - the last line: `{"end": {"rows": N, "sha256": "..."}}`, the number of row lines and
//!   the SHA-256 of every byte before that line, so a truncated or altered file is told
//!   apart from a whole one.
//!
//! An import reads the whole file once to check it (header, every line, every value, the
//! end line) before it writes anything, then writes it in transactions of
//! [`BATCH`] rows. A row already stored (same key) is left as it is, so running an import
//! again changes nothing and completes one that was interrupted.

mod export;
mod import;
pub mod tables;

use jobboard_core::{JsonDoc, Money, Ts};
use serde_json::Value;
use uuid::Uuid;

pub use export::{ExportReport, export};
pub use import::{ImportOptions, ImportReport, check_export, import};
use tables::{Column, Kind};

/// What the first line's `format` says.
pub const FORMAT: &str = "jobboard-organization";
/// The version of the file's layout this release writes; it reads every version up to
/// it. It changes when an exported table or column does (version 2 added
/// `organizations.keep_applications_after_job_days`, see [`tables::ADDED`]).
pub const FORMAT_VERSION: i64 = 2;
/// Rows written per transaction on import.
pub const BATCH: usize = 1_000;

/// One value of a row, typed by its column's kind.
#[derive(Debug, Clone, PartialEq)]
enum Cell {
    Null(Kind),
    Int(i64),
    Id(Uuid),
    Ts(Ts),
    Bool(bool),
    Float(f64),
    Text(String),
    Json(JsonDoc),
    Bytes(Vec<u8>),
    Money(Money),
}

impl Cell {
    /// The value as the file writes it.
    fn to_json(&self) -> Value {
        match self {
            Cell::Null(_) => Value::Null,
            Cell::Int(n) => Value::from(*n),
            Cell::Id(u) => Value::String(u.hyphenated().to_string()),
            Cell::Ts(t) => Value::String(t.to_rfc3339()),
            Cell::Bool(b) => Value::Bool(*b),
            Cell::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
            Cell::Text(s) => Value::String(s.clone()),
            Cell::Json(d) => d.0.clone(),
            Cell::Bytes(b) => Value::String(hex::encode(b)),
            Cell::Money(m) => m.to_json(),
        }
    }

    /// Reads the file's value of a column of `col`'s kind, or says what is wrong with it.
    fn from_json(col: &Column, v: &Value) -> Result<Cell, String> {
        let wrong = |what: &str| format!("column {}: {what}", col.name);
        if v.is_null() {
            return if col.nullable {
                Ok(Cell::Null(col.kind))
            } else {
                Err(wrong("null where a value is required"))
            };
        }
        let text = || v.as_str().ok_or_else(|| wrong("not a string"));
        Ok(match col.kind {
            Kind::Org | Kind::Int | Kind::Cursor => {
                Cell::Int(v.as_i64().ok_or_else(|| wrong("not a 64-bit integer"))?)
            }
            Kind::Id => Cell::Id(
                Uuid::try_parse(text()?)
                    .ok()
                    .filter(|_| text().is_ok_and(|s| s.len() == 36))
                    .ok_or_else(|| wrong("not a hyphenated UUID"))?,
            ),
            Kind::Ts => {
                Cell::Ts(Ts::parse(text()?).ok_or_else(|| wrong("not an RFC 3339 instant"))?)
            }
            Kind::Bool => Cell::Bool(v.as_bool().ok_or_else(|| wrong("not true or false"))?),
            Kind::Float => Cell::Float(
                v.as_f64()
                    .filter(|f| f.is_finite())
                    .ok_or_else(|| wrong("not a number"))?,
            ),
            Kind::Text => Cell::Text(text()?.to_string()),
            Kind::Json => Cell::Json(JsonDoc(v.clone())),
            Kind::Bytes => {
                Cell::Bytes(hex::decode(text()?).map_err(|_| wrong("not hexadecimal bytes"))?)
            }
            Kind::Money => {
                let n = v.as_number().ok_or_else(|| wrong("not a number"))?;
                Cell::Money(Money::parse(&n.to_string()).map_err(|(_, m)| wrong(m))?)
            }
        })
    }
}

/// Binds `cell` to the statement `$q` (of either backend).
macro_rules! bind_cell {
    ($q:expr, $cell:expr) => {
        match $cell {
            Cell::Null(kind) => match kind {
                Kind::Org | Kind::Int | Kind::Cursor => $q.bind(None::<i64>),
                Kind::Id => $q.bind(None::<uuid::Uuid>),
                Kind::Ts => $q.bind(None::<Ts>),
                Kind::Bool => $q.bind(None::<bool>),
                Kind::Float => $q.bind(None::<f64>),
                Kind::Text => $q.bind(None::<String>),
                Kind::Json => $q.bind(None::<JsonDoc>),
                Kind::Bytes => $q.bind(None::<Vec<u8>>),
                Kind::Money => $q.bind(None::<Money>),
            },
            Cell::Int(n) => $q.bind(*n),
            Cell::Id(u) => $q.bind(*u),
            Cell::Ts(t) => $q.bind(*t),
            Cell::Bool(b) => $q.bind(*b),
            Cell::Float(f) => $q.bind(*f),
            Cell::Text(s) => $q.bind(s.clone()),
            Cell::Json(d) => $q.bind(d.clone()),
            Cell::Bytes(b) => $q.bind(b.clone()),
            Cell::Money(m) => $q.bind(*m),
        }
    };
}
use bind_cell;

/// Reads column `$i` of `$row` (of either backend) as a value of `kind`.
macro_rules! read_cell {
    ($row:expr, $i:expr, $kind:expr) => {{
        use sqlx::Row as _;
        let kind = $kind;
        let cell = match kind {
            Kind::Org | Kind::Int | Kind::Cursor => {
                $row.try_get::<Option<i64>, _>($i)?.map(Cell::Int)
            }
            Kind::Id => $row.try_get::<Option<uuid::Uuid>, _>($i)?.map(Cell::Id),
            Kind::Ts => $row.try_get::<Option<Ts>, _>($i)?.map(Cell::Ts),
            Kind::Bool => $row.try_get::<Option<bool>, _>($i)?.map(Cell::Bool),
            Kind::Float => $row.try_get::<Option<f64>, _>($i)?.map(Cell::Float),
            Kind::Text => $row.try_get::<Option<String>, _>($i)?.map(Cell::Text),
            Kind::Json => $row.try_get::<Option<JsonDoc>, _>($i)?.map(Cell::Json),
            Kind::Bytes => $row.try_get::<Option<Vec<u8>>, _>($i)?.map(Cell::Bytes),
            Kind::Money => $row.try_get::<Option<Money>, _>($i)?.map(Cell::Money),
        };
        cell.unwrap_or(Cell::Null(kind))
    }};
}
use read_cell;

#[cfg(test)]
mod tests {
    use super::*;

    fn col(kind: Kind, nullable: bool) -> Column {
        Column {
            name: "c",
            kind,
            nullable,
        }
    }

    #[test]
    fn every_kind_reads_back_what_it_wrote() {
        let cells = [
            (Kind::Int, Cell::Int(-42)),
            (Kind::Id, Cell::Id(Uuid::now_v7())),
            (Kind::Ts, Cell::Ts(Ts::from_micros(1_790_000_000_123_456))),
            (Kind::Bool, Cell::Bool(true)),
            (Kind::Float, Cell::Float(52_000.5)),
            (Kind::Text, Cell::Text("é \"x\"\n".into())),
            (
                Kind::Json,
                Cell::Json(JsonDoc(serde_json::json!({"a": [1, "b"]}))),
            ),
            (Kind::Bytes, Cell::Bytes(vec![0, 1, 254, 255])),
            (Kind::Money, Cell::Money(Money::parse("19.99").unwrap())),
            (Kind::Text, Cell::Null(Kind::Text)),
        ];
        for (kind, cell) in cells {
            let back = Cell::from_json(&col(kind, true), &cell.to_json()).unwrap();
            assert_eq!(back, cell);
        }
    }

    #[test]
    fn a_wrong_value_is_named() {
        let bad = [
            (Kind::Int, serde_json::json!("1")),
            (Kind::Id, serde_json::json!("not-a-uuid")),
            (
                Kind::Id,
                serde_json::json!("0190f0f0f0f07000800000000000000a"),
            ),
            (Kind::Ts, serde_json::json!("yesterday")),
            (Kind::Bool, serde_json::json!(1)),
            (Kind::Bytes, serde_json::json!("zz")),
            (Kind::Money, serde_json::json!(-1)),
            (Kind::Text, serde_json::json!(null)),
        ];
        for (kind, v) in bad {
            let e = Cell::from_json(&col(kind, false), &v).unwrap_err();
            assert!(e.starts_with("column c: "), "{e}");
        }
    }
}
