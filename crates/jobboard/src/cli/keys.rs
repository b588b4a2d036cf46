//! `keys create|list|update|revoke`.

use clap::Subcommand;
use jobboard::config::Config;
use jobboard_domain::keys::store as keys;
use jobboard_domain::{OrgId, keys::secret as auth};
use jobboard_store::Db;

use super::{check_limit, org_exists};

#[derive(Subcommand)]
pub enum KeysCmd {
    /// Create a key; prints the full key as the last line (it is not stored and cannot be shown again).
    Create {
        #[arg(long)]
        org: OrgId,
        #[arg(long, default_value = "")]
        name: String,
        /// Comma-separated scopes, or * for all.
        #[arg(long, default_value = "*")]
        scopes: String,
        /// GET requests per minute.
        #[arg(long)]
        read_limit: Option<u32>,
        /// POST, PATCH, PUT and DELETE requests per minute.
        #[arg(long)]
        write_limit: Option<u32>,
    },
    /// List the keys of an organization (prefixes only).
    List {
        #[arg(long)]
        org: OrgId,
    },
    /// Change a key's name, scopes or limits.
    Update {
        /// The key's id or display prefix.
        key: String,
        #[arg(long)]
        name: Option<String>,
        #[arg(long)]
        scopes: Option<String>,
        #[arg(long)]
        read_limit: Option<u32>,
        #[arg(long)]
        write_limit: Option<u32>,
    },
    /// Revoke a key; it is refused from the next request on.
    Revoke {
        /// The key's id or display prefix.
        key: String,
    },
}

pub async fn run(db: &Db, config: &Config, cmd: KeysCmd) -> anyhow::Result<()> {
    match cmd {
        KeysCmd::Create {
            org,
            name,
            scopes,
            read_limit,
            write_limit,
        } => create(db, config, org, &name, &scopes, read_limit, write_limit).await,
        KeysCmd::List { org } => list(db, org).await,
        KeysCmd::Update {
            key,
            name,
            scopes,
            read_limit,
            write_limit,
        } => update(db, &key, name, scopes, read_limit, write_limit).await,
        KeysCmd::Revoke { key } => revoke(db, &key).await,
    }
}

async fn create(
    db: &Db,
    config: &Config,
    org: OrgId,
    name: &str,
    scopes: &str,
    read_limit: Option<u32>,
    write_limit: Option<u32>,
) -> anyhow::Result<()> {
    anyhow::ensure!(
        org_exists(db, org).await?,
        "organization {org} does not exist"
    );
    let scopes = auth::parse_scopes(scopes).map_err(anyhow::Error::msg)?;
    let read =
        check_limit("--read-limit", read_limit)?.unwrap_or(i64::from(config.default_read_limit));
    let write =
        check_limit("--write-limit", write_limit)?.unwrap_or(i64::from(config.default_write_limit));
    let (k, full) = keys::create(
        db,
        keys::NewKey {
            org_id: org,
            name,
            scopes: &scopes,
            read_limit: read,
            write_limit: write,
        },
    )
    .await?;
    println!(
        "Created key {} (prefix {}) for organization {org}; scopes: {}; limits: {read} reads, {write} writes per minute.",
        k.id, k.prefix, k.scopes
    );
    println!("Store it now: it cannot be shown again.");
    println!("{full}");
    Ok(())
}

async fn list(db: &Db, org: OrgId) -> anyhow::Result<()> {
    for k in keys::list(db, org).await? {
        let state = if k.revoked_at.is_some() {
            "revoked"
        } else {
            "active"
        };
        let used = k
            .last_used_at
            .map(|t| t.to_string())
            .unwrap_or_else(|| "never".into());
        println!(
            "{}\t{}\t{state}\t{}\tread {}/min\twrite {}/min\tlast used {used}\t{}",
            k.id, k.prefix, k.scopes, k.read_limit, k.write_limit, k.name
        );
    }
    Ok(())
}

async fn update(
    db: &Db,
    key: &str,
    name: Option<String>,
    scopes: Option<String>,
    read_limit: Option<u32>,
    write_limit: Option<u32>,
) -> anyhow::Result<()> {
    let k = find_one(db, key).await?;
    let update = keys::KeyUpdate {
        name,
        scopes: scopes
            .map(|s| auth::parse_scopes(&s))
            .transpose()
            .map_err(anyhow::Error::msg)?,
        read_limit: check_limit("--read-limit", read_limit)?,
        write_limit: check_limit("--write-limit", write_limit)?,
    };
    let k = keys::update(db, k.id, &update)
        .await?
        .ok_or_else(|| anyhow::anyhow!("key vanished"))?;
    println!(
        "Updated key {} ({}): scopes {}; read {}/min; write {}/min",
        k.id, k.prefix, k.scopes, k.read_limit, k.write_limit
    );
    Ok(())
}

async fn revoke(db: &Db, key: &str) -> anyhow::Result<()> {
    let k = find_one(db, key).await?;
    keys::revoke(db, k.id).await?;
    println!("Revoked key {} ({})", k.id, k.prefix);
    Ok(())
}

async fn find_one(db: &Db, key: &str) -> anyhow::Result<keys::ApiKey> {
    let mut found = keys::find(db, key).await?;
    match found.len() {
        0 => anyhow::bail!("no key with id or prefix {key:?}"),
        1 => Ok(found.remove(0)),
        n => anyhow::bail!("{n} keys share the prefix {key:?}; use the key id"),
    }
}
