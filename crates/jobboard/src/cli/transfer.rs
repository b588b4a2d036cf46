//! `export` and `import`: one organization moved between servers as a JSON Lines file
//! (see `jobboard_store::transfer` and docs/operating.md, "Moving an organization").

use std::path::PathBuf;

use clap::Args;
use jobboard_domain::OrgId;
use jobboard_store::{
    Db,
    transfer::{self, ImportOptions},
};

#[derive(Args)]
pub struct ExportArgs {
    /// The organization to export.
    #[arg(long)]
    pub org: OrgId,
    /// The new file to write (never overwritten; readable by its owner only: it holds
    /// the organization's secrets).
    #[arg(long)]
    pub to: PathBuf,
}

#[derive(Args)]
pub struct ImportArgs {
    /// The file `jobboard export` wrote.
    #[arg(long)]
    pub from: PathBuf,
    /// Make a new organization, with new ids for every record, instead of keeping the
    /// organization's id and its records' (a copy; also when that id is taken here).
    #[arg(long)]
    pub as_new_org: bool,
}

/// Writes organization `args.org`'s records to a new file.
pub async fn export(db: &Db, args: ExportArgs) -> anyhow::Result<()> {
    let r = transfer::export(db, args.org, &args.to).await?;
    let rows: u64 = r.rows.iter().map(|(_, n)| n).sum();
    println!(
        "Organization {} exported to {}: {rows} records, {} bytes.",
        args.org,
        args.to.display(),
        r.bytes
    );
    for (table, n) in r.rows.iter().filter(|(_, n)| *n > 0) {
        println!("  {table}: {n}");
    }
    if r.pending_deliveries > 0 || r.pending_mails > 0 {
        println!(
            "Not in the file: {} webhook deliveries and {} mails still waiting to be sent by \
             this server (let them go out before the organization moves).",
            r.pending_deliveries, r.pending_mails
        );
    }
    Ok(())
}

/// Writes the records of an export into this database.
pub async fn import(db: &Db, args: ImportArgs) -> anyhow::Result<()> {
    let opts = ImportOptions {
        as_new_org: args.as_new_org,
    };
    let r = transfer::import(db, &args.from, opts).await?;
    let org = r.org.map_or_else(String::new, |o| o.to_string());
    let already: u64 = r.tables.iter().map(|t| t.already).sum();
    println!(
        "Imported {} into organization {org}: {} records written, {already} already here.",
        args.from.display(),
        r.written(),
    );
    for t in r
        .tables
        .iter()
        .filter(|t| t.written + t.already + t.left_out > 0)
    {
        let left = if t.left_out > 0 {
            format!(", {} left out", t.left_out)
        } else {
            String::new()
        };
        println!(
            "  {}: {} written, {} already here{left}",
            t.table, t.written, t.already
        );
    }
    for note in &r.notes {
        println!("Note: {note}.");
    }
    Ok(())
}
