//! Reading an organization's export into a database: the whole file is checked first,
//! then written in batches, each row inserted unless one with its key is already stored.

use std::{
    collections::{HashMap, HashSet},
    io::{BufRead, BufReader},
    path::Path,
};

use anyhow::Context;
use jobboard_core::{JsonDoc, Money, OrgId, Ts};
use serde_json::Value;
use sha2::{Digest, Sha256};
use uuid::Uuid;

use super::{
    BATCH, Cell, FORMAT, FORMAT_VERSION, bind_cell,
    tables::{self, Kind, TABLES, Table},
};
use crate::{Backend, Db, Tx, dispatch_tx};

/// How an import treats the organization's identity.
#[derive(Debug, Clone, Copy, Default)]
pub struct ImportOptions {
    /// Make a new organization with new ids for every record (a copy: the file may come
    /// from this very server), instead of keeping the organization's and records' ids.
    pub as_new_org: bool,
}

/// What an import did, by table.
#[derive(Debug, Clone, Default)]
pub struct ImportReport {
    /// The organization the records were written to.
    pub org: Option<OrgId>,
    pub tables: Vec<TableReport>,
    /// Values that could not be kept, each said in a sentence (a domain or an e-mail
    /// address another organization of this server already uses).
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableReport {
    pub table: &'static str,
    /// Rows inserted.
    pub written: u64,
    /// Rows already stored with the same key (an import run again).
    pub already: u64,
    /// Rows left out: a unique value of theirs (an API key, a staff e-mail address, a
    /// domain claim) belongs to another organization here, or a record they cannot be
    /// without was left out.
    pub left_out: u64,
}

impl ImportReport {
    pub fn written(&self) -> u64 {
        self.tables.iter().map(|t| t.written).sum()
    }
}

/// What the check of a file found.
#[derive(Debug)]
struct Checked {
    /// The format version of the file.
    version: i64,
    org: i64,
    org_created_at: Ts,
}

/// Writes the export at `from` into `db`. The file is checked whole before anything is
/// written: a file of another format or version, a damaged or truncated one, is refused
/// with the line at fault.
pub async fn import(db: &Db, from: &Path, opts: ImportOptions) -> anyhow::Result<ImportReport> {
    let path = from.to_path_buf();
    let checked = tokio::task::spawn_blocking(move || check(&path)).await??;
    write(db, from, &checked, opts).await
}

/// A line of the file, with its number, for errors.
fn at(n: usize, what: impl std::fmt::Display) -> anyhow::Error {
    anyhow::anyhow!("line {n}: {what}; nothing was written")
}

/// Reads the lines of `path`, each with its bytes (newline included) and its number.
fn lines(path: &Path) -> anyhow::Result<impl Iterator<Item = anyhow::Result<(usize, Vec<u8>)>>> {
    let file = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    Ok(lines_of(BufReader::with_capacity(1 << 16, file)))
}

/// The lines of `reader`, each with its bytes (newline included) and its number.
fn lines_of(mut reader: impl BufRead) -> impl Iterator<Item = anyhow::Result<(usize, Vec<u8>)>> {
    let mut n = 0;
    std::iter::from_fn(move || {
        let mut buf = Vec::new();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) => None,
            Ok(_) => {
                n += 1;
                Some(Ok((n, buf)))
            }
            Err(e) => Some(Err(e.into())),
        }
    })
}

/// A row line's table and values, in the table's column order.
fn parse_row(
    n: usize,
    line: &Value,
    (version, org): (i64, i64),
    last_table: usize,
) -> anyhow::Result<(usize, &'static Table, Vec<Cell>)> {
    let obj = line
        .as_object()
        .filter(|o| o.len() == 2)
        .ok_or_else(|| at(n, "not a row line (`table` and `row`)"))?;
    let name = obj
        .get("table")
        .and_then(Value::as_str)
        .ok_or_else(|| at(n, "no `table`"))?;
    let (index, table) =
        Table::named(name).ok_or_else(|| at(n, format!("unknown table `{name}`")))?;
    if index < last_table {
        return Err(at(n, format!("table `{name}` out of order")));
    }
    let row = obj
        .get("row")
        .and_then(Value::as_object)
        .ok_or_else(|| at(n, "no `row` object"))?;
    let cols = table.columns();
    let absent: Vec<Option<Value>> = cols
        .iter()
        .map(|c| tables::absent_means(name, c.name, version))
        .collect();
    let want = absent.iter().filter(|a| a.is_none()).count();
    if row.len() != want {
        return Err(at(
            n,
            format!("`{name}` rows have {want} columns, this one {}", row.len()),
        ));
    }
    let mut cells = Vec::with_capacity(cols.len());
    for (c, absent) in cols.iter().zip(&absent) {
        let v = match absent {
            Some(v) => v,
            None => row
                .get(c.name)
                .ok_or_else(|| at(n, format!("`{name}` row without column {}", c.name)))?,
        };
        let cell = Cell::from_json(c, v).map_err(|e| at(n, format!("{name}: {e}")))?;
        if c.kind == Kind::Org && cell != Cell::Int(org) {
            return Err(at(n, format!("{name}: a row of another organization")));
        }
        cells.push(cell);
    }
    Ok((index, table, cells))
}

/// Reads the whole file and checks it: the header, every row against its table, the
/// order of the tables, the organization's row, and the end line's count and digest.
fn check(path: &Path) -> anyhow::Result<Checked> {
    check_lines(lines(path)?)
}

/// Checks an export read from `reader` as [`import`] does before it writes anything:
/// `Ok` when it would be written, else what is wrong and where. Writes nothing.
pub fn check_export(reader: impl BufRead) -> anyhow::Result<()> {
    check_lines(lines_of(reader)).map(|_| ())
}

fn check_lines(
    lines: impl Iterator<Item = anyhow::Result<(usize, Vec<u8>)>>,
) -> anyhow::Result<Checked> {
    let mut hash = Sha256::new();
    let mut header: Option<(i64, i64)> = None;
    let mut org_created_at = None;
    let (mut rows, mut last_table) = (0u64, 0usize);
    let mut ended = false;
    for line in lines {
        let (n, bytes) = line?;
        if ended {
            return Err(at(n, "text after the end line"));
        }
        if bytes.last() != Some(&b'\n') {
            return Err(at(
                n,
                "the file ends in the middle of a line: it is truncated",
            ));
        }
        let v: Value = serde_json::from_slice(&bytes)
            .map_err(|e| at(n, format!("not a JSON line ({e}): the file is damaged")))?;
        let Some(head) = header else {
            header = Some(read_header(&v).map_err(|e| at(n, e))?);
            hash.update(&bytes);
            continue;
        };
        if let Some(end) = v.get("end") {
            let want_rows = end.get("rows").and_then(Value::as_u64);
            let want_hash = end.get("sha256").and_then(Value::as_str);
            let digest = hex::encode(hash.finalize_reset());
            if want_rows != Some(rows) || want_hash != Some(digest.as_str()) {
                return Err(at(
                    n,
                    "the end line does not match the rows before it: the file is damaged",
                ));
            }
            ended = true;
            continue;
        }
        hash.update(&bytes);
        let (index, table, cells) = parse_row(n, &v, head, last_table)?;
        if table.name == "organizations" {
            if rows > 0 || org_created_at.is_some() {
                return Err(at(n, "the organization's row must come first, once"));
            }
            org_created_at = table
                .columns()
                .iter()
                .zip(&cells)
                .find_map(|(c, cell)| match cell {
                    Cell::Ts(t) if c.name == "created_at" => Some(*t),
                    _ => None,
                });
        } else if org_created_at.is_none() {
            return Err(at(n, "the organization's row must come first"));
        }
        last_table = index;
        rows += 1;
    }
    let (version, org) =
        header.ok_or_else(|| anyhow::anyhow!("the file is empty; nothing was written"))?;
    if !ended {
        anyhow::bail!("the file has no end line: it is truncated; nothing was written");
    }
    Ok(Checked {
        version,
        org,
        org_created_at: org_created_at
            .ok_or_else(|| anyhow::anyhow!("the file has no organization; nothing was written"))?,
    })
}

/// The format version and the organization of a header line.
fn read_header(v: &Value) -> Result<(i64, i64), String> {
    if v.get("format").and_then(Value::as_str) != Some(FORMAT) {
        return Err("not an organization export of jobboard (no `format` header)".into());
    }
    let version = match v.get("version").and_then(Value::as_i64) {
        Some(known @ 1..=FORMAT_VERSION) => known,
        Some(other) => {
            return Err(format!(
                "format version {other} is not one this release reads (it reads versions 1 \
                 to {FORMAT_VERSION})"
            ));
        }
        None => return Err("the header has no format version".into()),
    };
    let org = v
        .get("organization")
        .and_then(Value::as_i64)
        .ok_or("the header names no organization")?;
    Ok((version, org))
}

/// The state of the write pass.
struct Writing {
    opts: ImportOptions,
    /// The organization the rows go to.
    org: i64,
    /// The new id of every id of the file (`--as-new-org`).
    new_ids: HashMap<Uuid, Uuid>,
    /// Ids (as written here) of rows left out: what refers to them is left out too, or
    /// loses the reference where it may be empty.
    left_out: HashSet<Uuid>,
    /// The newest entry of this server's log of jobs that went live.
    cursor: i64,
    report: ImportReport,
}

async fn write(
    db: &Db,
    from: &Path,
    checked: &Checked,
    opts: ImportOptions,
) -> anyhow::Result<ImportReport> {
    let mut w = Writing {
        opts,
        org: checked.org,
        new_ids: HashMap::new(),
        left_out: HashSet::new(),
        cursor: 0,
        report: ImportReport {
            tables: TABLES
                .iter()
                .map(|t| TableReport {
                    table: t.name,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        },
    };
    let mut tx = db.begin().await?;
    w.cursor = dispatch_tx!(tx, t => {
        sqlx::query_scalar::<_, i64>("SELECT COALESCE(MAX(seq), 0) FROM job_live_log")
            .fetch_one(&mut **t)
            .await?
    });
    let mut in_tx = 0;
    let (mut last_table, mut insert) = (usize::MAX, String::new());
    for line in lines(from)? {
        let (n, bytes) = line?;
        let v: Value = serde_json::from_slice(&bytes).map_err(|e| at(n, e))?;
        if n == 1 {
            continue;
        }
        if v.get("end").is_some() {
            break;
        }
        let (index, table, cells) = parse_row(n, &v, (checked.version, checked.org), 0)
            .context("the file changed while it was imported")?;
        if index != last_table {
            last_table = index;
            insert = insert_statement(table, false, IF_NEW);
        }
        let outcome = if table.name == "organizations" {
            organization(&mut w, &mut tx, table, cells, checked).await?
        } else {
            row(&mut w, &mut tx, table, cells, &insert).await?
        };
        let r = &mut w.report.tables[index];
        match outcome {
            Outcome::Written => r.written += 1,
            Outcome::Already => r.already += 1,
            Outcome::LeftOut => r.left_out += 1,
        }
        in_tx += 1;
        if in_tx == BATCH {
            tx.commit().await?;
            tx = db.begin().await?;
            in_tx = 0;
        }
    }
    tx.commit().await?;
    w.report.org = Some(OrgId::from(w.org));
    Ok(w.report)
}

/// What follows a row's insert: nothing where a row with one of its keys is already
/// stored.
const IF_NEW: &str = "ON CONFLICT DO NOTHING";

/// `INSERT INTO table (columns) VALUES (...) tail`, leaving out the id when
/// `without_id`.
fn insert_statement(table: &Table, without_id: bool, tail: &str) -> String {
    let names: Vec<&str> = table
        .columns()
        .iter()
        .map(|c| c.name)
        .filter(|name| !(without_id && *name == "id"))
        .collect();
    let params: Vec<String> = (1..=names.len()).map(|i| format!("${i}")).collect();
    format!(
        "INSERT INTO {} ({}) VALUES ({}) {tail}",
        table.name,
        names.join(", "),
        params.join(", ")
    )
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Written,
    Already,
    LeftOut,
}

/// Runs `sql` with `cells` bound in order; the rows it changed.
async fn execute(tx: &mut Tx, sql: &str, cells: &[Cell]) -> anyhow::Result<u64> {
    Ok(dispatch_tx!(tx, t => {
        let mut q = sqlx::query(sqlx::AssertSqlSafe(sql.to_owned()));
        for c in cells {
            q = bind_cell!(q, c);
        }
        q.execute(&mut **t).await?.rows_affected()
    }))
}

/// The first column of the first row `sql` returns with `cells` bound, as an integer.
async fn fetch_i64(tx: &mut Tx, sql: &str, cells: &[Cell]) -> anyhow::Result<Option<i64>> {
    Ok(dispatch_tx!(tx, t => {
        let mut q = sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(sql.to_owned()));
        for c in cells {
            q = bind_cell!(q, c);
        }
        q.fetch_optional(&mut **t).await?
    }))
}

/// Writes the organization's own row: kept under its id (refused when that id is
/// another organization's here), or made anew with `--as-new-org`. A domain another
/// organization here uses is left out.
async fn organization(
    w: &mut Writing,
    tx: &mut Tx,
    table: &'static Table,
    mut cells: Vec<Cell>,
    checked: &Checked,
) -> anyhow::Result<Outcome> {
    let cols = table.columns();
    let slot = |name: &str| cols.iter().position(|c| c.name == name).expect("a column");
    let (id, domain) = (slot("id"), slot("domain"));
    if !w.opts.as_new_org {
        let here: Option<i64> = fetch_i64(
            tx,
            "SELECT id FROM organizations WHERE id = $1",
            &[Cell::Int(checked.org)],
        )
        .await?;
        if here.is_some() {
            let same = fetch_i64(
                tx,
                "SELECT id FROM organizations WHERE id = $1 AND created_at = $2",
                &[Cell::Int(checked.org), Cell::Ts(checked.org_created_at)],
            )
            .await?;
            if same.is_none() {
                anyhow::bail!(
                    "organization {} of this server is another organization (made at another \
                     time than the exported one); import with --as-new-org to make a new one; \
                     nothing was written",
                    checked.org
                );
            }
            return Ok(Outcome::Already);
        }
    }
    if let Cell::Text(d) = &cells[domain] {
        let taken = fetch_i64(
            tx,
            "SELECT id FROM organizations WHERE domain = $1",
            &[cells[domain].clone()],
        )
        .await?;
        if let Some(other) = taken {
            w.report.notes.push(format!(
                "the domain {d} is organization {other}'s here: the imported organization has \
                 none (set one in the dashboard's board settings)"
            ));
            cells[domain] = Cell::Null(Kind::Text);
        }
    }
    if w.opts.as_new_org {
        cells.remove(id);
        let sql = insert_statement(table, true, "RETURNING id");
        w.org = fetch_i64(tx, &sql, &cells)
            .await?
            .expect("an insert returns its row");
    } else {
        execute(tx, &insert_statement(table, false, IF_NEW), &cells).await?;
        if tx.backend() == Backend::Postgres {
            // Ids given explicitly do not move the identity's sequence.
            execute(
                tx,
                "SELECT setval(pg_get_serial_sequence('organizations', 'id'), \
                 (SELECT MAX(id) FROM organizations))",
                &[],
            )
            .await?;
        }
    }
    Ok(Outcome::Written)
}

/// Writes one row of a table other than the organization's.
async fn row(
    w: &mut Writing,
    tx: &mut Tx,
    table: &'static Table,
    mut cells: Vec<Cell>,
    insert: &str,
) -> anyhow::Result<Outcome> {
    let cols = table.columns();
    let own_id = matches!(
        (cols.first(), cells.first()),
        (Some(c), Some(Cell::Id(_))) if c.name == "id"
    );
    for (i, c) in cols.iter().enumerate() {
        match (c.kind, &cells[i]) {
            (Kind::Org, _) => cells[i] = Cell::Int(w.org),
            (Kind::Cursor, _) => cells[i] = Cell::Int(w.cursor),
            (Kind::Id, &Cell::Id(u)) => {
                let u = if w.opts.as_new_org && !u.is_nil() {
                    *w.new_ids.entry(u).or_insert_with(Uuid::now_v7)
                } else {
                    u
                };
                cells[i] = Cell::Id(u);
                // A reference to a row left out (the row's own id, first, was mapped).
                if (i > 0 || !own_id) && w.left_out.contains(&u) {
                    if !c.nullable {
                        return Ok(leave_out(w, own_id, &cells));
                    }
                    cells[i] = Cell::Null(Kind::Id);
                }
            }
            _ => {}
        }
    }
    if execute(tx, insert, &cells).await? == 1 {
        return Ok(Outcome::Written);
    }
    // Nothing inserted: the row is here already (kept ids, an import run again), or one
    // of its unique values belongs to another row here.
    if !w.opts.as_new_org {
        if !own_id {
            return Ok(Outcome::Already);
        }
        let sql = format!("SELECT COUNT(*) FROM {} WHERE id = $1", table.name);
        if fetch_i64(tx, &sql, &cells[..1]).await?.unwrap_or(0) > 0 {
            return Ok(Outcome::Already);
        }
    }
    let outcome = leave_out(w, own_id, &cells);
    let text = |name: &str| {
        let i = cols.iter().position(|c| c.name == name).expect("a column");
        match &cells[i] {
            Cell::Text(s) => s.clone(),
            _ => String::new(),
        }
    };
    let note = match table.name {
        "dashboard_users" => format!(
            "the staff user {} signs in to another organization here: left out (add a \
             user with `jobboard users create`)",
            text("email")
        ),
        "api_keys" => format!(
            "the API key {}... opens another organization here: left out (make a new one \
             with `jobboard keys create`)",
            text("prefix")
        ),
        "domain_claims" => format!(
            "the claim of the domain {} is another organization's here: left out",
            text("domain")
        ),
        _ => return Ok(outcome),
    };
    w.report.notes.push(note);
    Ok(outcome)
}

/// Leaves a row out: what refers to it (by its own id, when `own_id`) is left out too.
fn leave_out(w: &mut Writing, own_id: bool, cells: &[Cell]) -> Outcome {
    if let (true, Some(Cell::Id(mine))) = (own_id, cells.first()) {
        w.left_out.insert(*mine);
    }
    Outcome::LeftOut
}
