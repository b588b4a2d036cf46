//! The `jobboard` command line: one module per command group, one function per command.
//! Every command calls the same domain operations as the API.

mod backup;
mod imports;
mod keys;
mod members;
mod orgs;
mod plans;
mod prices;
mod serve;
mod settings;
mod transfer;
mod users;

use clap::{Parser, Subcommand};
use jobboard::config::Config;
use jobboard_domain::{OrgId, orgs as org_ops};
use jobboard_store::Db;
use jobboard_store::ratelimit::MAX_LIMIT;

#[derive(Parser)]
#[command(name = "jobboard", version, about = "Job Board Service API server")]
pub struct Cli {
    /// Configuration file (TOML); see `jobboard config` for every setting.
    #[arg(long, global = true, env = "JOBBOARD_CONFIG")]
    pub config: Option<String>,
    /// Database URL: sqlite://PATH or postgres://USER:PASS@HOST:PORT/DB.
    #[arg(long, global = true, env = "DATABASE_URL", hide_env_values = true)]
    pub database: Option<String>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Run the API, the webhook and mail workers and the scheduler.
    Serve(serve::ServeArgs),
    /// Apply database migrations.
    Migrate,
    /// Manage organizations.
    #[command(subcommand)]
    Orgs(Box<orgs::OrgsCmd>),
    /// Manage API keys.
    #[command(subcommand)]
    Keys(keys::KeysCmd),
    /// Manage the sources an organization's jobs are imported from.
    #[command(subcommand)]
    Imports(imports::ImportsCmd),
    /// Manage the prices of a post (what the board sells, with a payment account).
    #[command(subcommand)]
    Prices(prices::PricesCmd),
    /// Act on members of an organization's board.
    #[command(subcommand)]
    Members(members::MembersCmd),
    /// Manage plans (what members subscribe to).
    #[command(subcommand)]
    Plans(plans::PlansCmd),
    /// Manage the staff users who sign in to the dashboard.
    #[command(subcommand)]
    Users(users::UsersCmd),
    /// Write a consistent, checked copy of an SQLite database to a new file, while it
    /// serves (on PostgreSQL use pg_dump).
    Backup(backup::BackupArgs),
    /// Replace an SQLite database with a backup (refused while a server uses it; the
    /// database it replaces is kept beside it).
    Restore(backup::RestoreArgs),
    /// Write every record of one organization to a new JSON Lines file (to move it to
    /// another server, of either backend).
    Export(transfer::ExportArgs),
    /// Write the records of an organization's export into this database (refused whole
    /// when the file is damaged; run again, it changes nothing).
    Import(transfer::ImportArgs),
    /// Print the OpenAPI document.
    Openapi,
    /// Print the commented default configuration.
    Config,
}

/// Runs the command `cli` names.
pub async fn run(cli: Cli) -> anyhow::Result<()> {
    let config = Config::load(cli.config.as_deref(), &settings::top_layer(&cli)?)?;
    match cli.command {
        Command::Openapi => {
            println!(
                "{}",
                serde_json::to_string_pretty(&jobboard::api::openapi())?
            );
            Ok(())
        }
        Command::Config => {
            print!("{}", jobboard::config::DEFAULT_FILE);
            Ok(())
        }
        Command::Serve(_) => serve::serve(config).await,
        Command::Migrate => serve::migrate(&config).await,
        Command::Backup(args) => backup::backup(&config, args).await,
        Command::Restore(args) => backup::restore(&config, args).await,
        command => {
            let db = open(&config).await?;
            let writes = jobboard_store::committed_writes();
            let done = match command {
                Command::Orgs(cmd) => orgs::run(&db, &config, *cmd).await,
                Command::Keys(cmd) => keys::run(&db, &config, cmd).await,
                Command::Plans(cmd) => plans::run(&db, cmd).await,
                Command::Members(cmd) => members::run(&db, cmd).await,
                Command::Prices(cmd) => prices::run(&db, cmd).await,
                Command::Imports(cmd) => imports::run(&db, &config, cmd).await,
                Command::Users(cmd) => users::run(&db, cmd).await,
                Command::Export(args) => transfer::export(&db, args).await,
                Command::Import(args) => transfer::import(&db, args).await,
                _ => unreachable!("handled above"),
            };
            let wrote = jobboard_store::committed_writes() != writes;
            if wrote {
                // PostgreSQL: the servers reuse what they read until a commit is
                // announced; the announcements of this command's commits are sent in the
                // background, which ends with it.
                db.announce_change().await;
            }
            db.close().await;
            drop(db);
            if wrote {
                let_servers_see(&config).await;
            }
            done
        }
    }
}

/// After a command wrote to an SQLite file that a server has open: waits out the time
/// the server may answer from what it read before (see `jobboard_store::reuse`), so that
/// once the command has reported, every request sees its change (a revoked key is
/// refused, a new domain answers).
async fn let_servers_see(config: &Config) {
    let Ok(file) = jobboard_store::backup::sqlite_file(&config.database) else {
        return;
    };
    if jobboard_store::backup::open_elsewhere(&file) {
        tokio::time::sleep(jobboard_store::reuse::REUSE).await;
    }
}

pub(crate) fn check_limit(name: &str, v: Option<u32>) -> anyhow::Result<Option<i64>> {
    match v {
        Some(n) if n == 0 || n > MAX_LIMIT => {
            anyhow::bail!("{name} must be between 1 and {MAX_LIMIT}")
        }
        other => Ok(other.map(i64::from)),
    }
}

pub(crate) async fn open(config: &Config) -> anyhow::Result<Db> {
    let db = Db::connect_with(
        &config.database,
        2,
        config.sqlite_synchronous,
        config.db_page_cache,
    )
    .await?;
    db.migrate().await?;
    Ok(db)
}

/// True when organization `id` exists.
pub(crate) async fn org_exists(db: &Db, id: OrgId) -> anyhow::Result<bool> {
    match org_ops::get(db, id).await {
        Ok(_) => Ok(true),
        Err(jobboard_domain::Error::NotFound(_)) => Ok(false),
        Err(e) => Err(described(e)),
    }
}

/// A refused operation as a command-line error: every field problem on its own line.
pub(crate) fn described(e: jobboard_domain::Error) -> anyhow::Error {
    use jobboard_domain::Error as E;
    match e {
        E::Invalid(fields) | E::Schema(fields) => anyhow::anyhow!(
            "{}",
            fields
                .iter()
                .map(|f| format!("--{}: {}", f.field.replace('_', "-"), f.message))
                .collect::<Vec<_>>()
                .join("\n")
        ),
        other => anyhow::anyhow!("{other}"),
    }
}
