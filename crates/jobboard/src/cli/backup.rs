//! `backup` and `restore` of an SQLite database (see `jobboard_store::backup`).

use std::path::PathBuf;

use clap::Args;
use jobboard::config::Config;
use jobboard_store::backup;

#[derive(Args)]
pub struct BackupArgs {
    /// The new file to write the backup to (never overwritten).
    #[arg(long)]
    pub to: PathBuf,
}

#[derive(Args)]
pub struct RestoreArgs {
    /// The backup to restore (made by `jobboard backup`).
    #[arg(long)]
    pub from: PathBuf,
}

/// Takes a checked backup of the configured database while it may be serving.
pub async fn backup(config: &Config, args: BackupArgs) -> anyhow::Result<()> {
    let r = backup::backup(&config.database, &args.to).await?;
    println!(
        "Backup written to {}: {} bytes, schema version {}, integrity check ok (copied in {} ms).",
        args.to.display(),
        r.bytes,
        r.schema_version,
        r.copy_took.as_millis()
    );
    Ok(())
}

/// Replaces the configured database with a backup; refused while it is in use.
pub async fn restore(config: &Config, args: RestoreArgs) -> anyhow::Result<()> {
    let r = backup::restore(&config.database, &args.from).await?;
    println!(
        "Restored {} (schema version {}, {} bytes); the next start applies this release's migrations.",
        args.from.display(),
        r.schema_version,
        r.bytes
    );
    if let Some(p) = r.previous {
        println!("The database it replaced was moved to {}.", p.display());
    }
    Ok(())
}
