//! The `jobboard` command: `serve`, `migrate`, `orgs`, `keys`, `plans`, `users`, `openapi`,
//! `config`.

use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use jobboard::{
    auth,
    config::{Config, Layer, WebhookLayer},
    db::{Db, keys},
    domain::orgs,
    ratelimit::MAX_LIMIT,
    server::{self, App},
};

#[derive(Parser)]
#[command(name = "jobboard", version, about = "Job Board Service API server")]
struct Cli {
    /// Configuration file (TOML); see `jobboard config` for every setting.
    #[arg(long, global = true, env = "JOBBOARD_CONFIG")]
    config: Option<String>,
    /// Database URL: sqlite://PATH or postgres://USER:PASS@HOST:PORT/DB.
    #[arg(long, global = true, env = "DATABASE_URL", hide_env_values = true)]
    database: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the API, the webhook and mail workers and the scheduler.
    Serve(ServeArgs),
    /// Apply database migrations.
    Migrate,
    /// Manage organizations.
    #[command(subcommand)]
    Orgs(OrgsCmd),
    /// Manage API keys.
    #[command(subcommand)]
    Keys(KeysCmd),
    /// Manage plans (what members subscribe to).
    #[command(subcommand)]
    Plans(PlansCmd),
    /// Manage dashboard staff users.
    #[command(subcommand)]
    Users(UsersCmd),
    /// Print the OpenAPI document.
    Openapi,
    /// Print the commented default configuration.
    Config,
}

#[derive(Args)]
struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "JOBBOARD_LISTEN")]
    listen: Option<String>,
    /// Absolute base URL of the service, used in links.
    #[arg(long, env = "JOBBOARD_PUBLIC_URL")]
    public_url: Option<String>,
    /// Log format: text or json.
    #[arg(long, env = "JOBBOARD_LOG_FORMAT")]
    log_format: Option<String>,
    /// Do not serve the HTTP API (worker or scheduler node).
    #[arg(long)]
    no_api: bool,
    /// Do not run the webhook delivery and mail workers.
    #[arg(long)]
    no_worker: bool,
    /// Do not run the scheduler (expiry of jobs and CMS items).
    #[arg(long)]
    no_scheduler: bool,
    /// Allow webhook targets on loopback and private addresses.
    #[arg(long)]
    allow_private_targets: bool,
}

#[derive(Subcommand)]
enum OrgsCmd {
    /// Create an organization; prints its id as the last line.
    Create {
        #[arg(long)]
        name: String,
        /// The host name its public board answers on (e.g. jobs.example.com).
        #[arg(long)]
        domain: Option<String>,
    },
    /// Change an organization's name, board domain and board look.
    Update {
        /// The organization's id.
        id: i64,
        #[arg(long)]
        name: Option<String>,
        /// The host name its board answers on; an empty value removes it.
        #[arg(long)]
        domain: Option<String>,
        /// A line shown under the board's name; an empty value removes it.
        #[arg(long)]
        tagline: Option<String>,
        /// An absolute http(s) URL of the board's logo; an empty value removes it.
        #[arg(long)]
        logo_url: Option<String>,
        /// The board's accent colour, #rrggbb; an empty value returns to the default.
        #[arg(long)]
        accent_color: Option<String>,
        /// Whether visitors may submit jobs on the board: on or off.
        #[arg(long, value_parser = ["on", "off"])]
        public_posting: Option<String>,
    },
    /// List organizations.
    List,
}

#[derive(Subcommand)]
enum KeysCmd {
    /// Create a key; prints the full key as the last line (it is not stored and cannot be shown again).
    Create {
        #[arg(long)]
        org: i64,
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
        org: i64,
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

#[derive(Subcommand)]
enum PlansCmd {
    /// Create a plan; prints its id as the last line.
    Create {
        #[arg(long)]
        org: i64,
        #[arg(long)]
        name: String,
        /// Exact decimal price, e.g. 49.99.
        #[arg(long)]
        price: String,
        /// Three-letter currency code.
        #[arg(long)]
        currency: String,
        /// month, year or one_time.
        #[arg(long)]
        interval: String,
        /// Job posts an access record on this plan starts with.
        #[arg(long, default_value_t = 0)]
        jobs_included: i64,
        #[arg(long)]
        processor_price_id: Option<String>,
        #[arg(long)]
        alt_processor_plan_id: Option<String>,
    },
    /// List the plans of an organization.
    List {
        #[arg(long)]
        org: i64,
    },
}

#[derive(Subcommand)]
enum UsersCmd {
    /// Create a staff user; reads the password (at least 12 characters) from standard
    /// input and prints the user's id as the last line.
    Create {
        #[arg(long)]
        org: i64,
        #[arg(long)]
        email: String,
    },
    /// List the staff users of an organization.
    List {
        #[arg(long)]
        org: i64,
    },
    /// Remove a staff user; their sessions end at once.
    Remove {
        /// The user's id.
        id: String,
    },
}

fn env_flag(name: &str) -> Option<bool> {
    std::env::var(name).ok().map(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "1" | "true" | "yes" | "on"
        )
    })
}

fn env_parse<T: std::str::FromStr>(name: &str) -> anyhow::Result<Option<T>> {
    match std::env::var(name) {
        Ok(v) if !v.trim().is_empty() => v
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| anyhow::anyhow!("{name} has an invalid value: {v:?}")),
        _ => Ok(None),
    }
}

/// A comma-separated list from the environment.
fn env_list(name: &str) -> Option<Vec<String>> {
    std::env::var(name).ok().map(|v| {
        v.split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect()
    })
}

/// Settings from the environment (beyond those clap reads) and flags.
fn top_layer(cli: &Cli) -> anyhow::Result<Layer> {
    let mut l = Layer {
        database: cli.database.clone(),
        db_max_connections: env_parse("JOBBOARD_DB_MAX_CONNECTIONS")?,
        request_timeout: env_parse("JOBBOARD_REQUEST_TIMEOUT")?,
        body_read_timeout: env_parse("JOBBOARD_BODY_READ_TIMEOUT")?,
        metrics_listen: std::env::var("JOBBOARD_METRICS_LISTEN").ok(),
        metrics_token: std::env::var("JOBBOARD_METRICS_TOKEN").ok(),
        sqlite_synchronous: std::env::var("JOBBOARD_SQLITE_SYNCHRONOUS").ok(),
        api: env_flag("JOBBOARD_API"),
        worker: env_flag("JOBBOARD_WORKER"),
        scheduler: env_flag("JOBBOARD_SCHEDULER"),
        default_read_limit: env_parse("JOBBOARD_DEFAULT_READ_LIMIT")?,
        default_write_limit: env_parse("JOBBOARD_DEFAULT_WRITE_LIMIT")?,
        auth_failure_limit: env_parse("JOBBOARD_AUTH_FAILURE_LIMIT")?,
        trusted_proxies: env_list("JOBBOARD_TRUSTED_PROXIES"),
        webhooks: WebhookLayer {
            allow_private_targets: env_flag("JOBBOARD_ALLOW_PRIVATE_TARGETS"),
            allowed_cidrs: env_list("JOBBOARD_WEBHOOK_ALLOWED_CIDRS"),
            retry_schedule: match std::env::var("JOBBOARD_WEBHOOK_RETRY_SCHEDULE") {
                Ok(v) if !v.trim().is_empty() => Some(
                    v.split(',')
                        .map(|s| s.trim().parse::<u64>())
                        .collect::<Result<_, _>>()
                        .map_err(|_| {
                            anyhow::anyhow!(
                                "JOBBOARD_WEBHOOK_RETRY_SCHEDULE must be comma-separated seconds"
                            )
                        })?,
                ),
                _ => None,
            },
            disable_after: env_parse("JOBBOARD_WEBHOOK_DISABLE_AFTER")?,
            timeout: env_parse("JOBBOARD_WEBHOOK_TIMEOUT")?,
            concurrency: env_parse("JOBBOARD_WEBHOOK_CONCURRENCY")?,
            concurrency_per_target: env_parse("JOBBOARD_WEBHOOK_CONCURRENCY_PER_TARGET")?,
        },
        mail: jobboard::mail::MailLayer::from_env()?,
        ..Layer::default()
    };
    if let Command::Serve(s) = &cli.command {
        l.listen = s.listen.clone();
        l.public_url = s.public_url.clone();
        l.log_format = s.log_format.clone();
        if s.no_api {
            l.api = Some(false);
        }
        if s.no_worker {
            l.worker = Some(false);
        }
        if s.no_scheduler {
            l.scheduler = Some(false);
        }
        if s.allow_private_targets {
            l.webhooks.allow_private_targets = Some(true);
        }
    }
    Ok(l)
}

fn init_logging(json: bool) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,sqlx=warn"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if json {
        builder.json().init();
    } else {
        builder.init();
    }
}

fn check_limit(name: &str, v: Option<u32>) -> anyhow::Result<Option<i64>> {
    match v {
        Some(n) if n == 0 || n > MAX_LIMIT => {
            anyhow::bail!("{name} must be between 1 and {MAX_LIMIT}")
        }
        other => Ok(other.map(i64::from)),
    }
}

async fn open(config: &Config) -> anyhow::Result<Db> {
    let db = Db::connect_with(&config.database, 2, config.sqlite_synchronous).await?;
    db.migrate().await?;
    Ok(db)
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    let config = Config::load(cli.config.as_deref(), &top_layer(&cli)?)?;
    match cli.command {
        Command::Openapi => {
            println!(
                "{}",
                serde_json::to_string_pretty(&jobboard::http::openapi())?
            );
        }
        Command::Config => print!("{}", jobboard::config::DEFAULT_FILE),
        Command::Serve(_) => {
            init_logging(config.log_json);
            let listen = config.listen;
            tracing::info!(database = %jobboard::db::redact_url(&config.database), "starting");
            let app = App::start(config).await?;
            if let Some(first) = server::bootstrap(&app).await? {
                // One write, whose failure (standard output closed) does not stop the
                // server: whoever reads it may stop reading after the key.
                let text = format!(
                    "Created organization {} and its first API key (shown only this once):\n{}\n\
                     Create the first dashboard user with this one-time link (valid for {}):\n{}\n",
                    first.org_id,
                    first.key,
                    lifetime(app.config.dashboard.setup_link_lifetime),
                    jobboard::web::dashboard::setup_url(&app.config, &first.setup_token)
                );
                let mut out = std::io::stdout().lock();
                let _ = std::io::Write::write_all(&mut out, text.as_bytes());
                let _ = std::io::Write::flush(&mut out);
            }
            let listener = tokio::net::TcpListener::bind(listen).await?;
            tracing::info!(address = %listener.local_addr()?, api = app.config.api, worker = app.config.worker,
                scheduler = app.config.scheduler, "listening");
            server::run(app.clone(), listener, server::shutdown_signal()).await?;
            app.db.close().await;
        }
        Command::Migrate => {
            let db = Db::connect_with(&config.database, 2, config.sqlite_synchronous).await?;
            let applied = db.migrate().await?;
            // The data work of the upgrade too, to the end (serve would do it in the
            // background).
            db.finish_upgrades().await?;
            if applied.is_empty() {
                println!("Database is up to date.");
            }
            for m in applied {
                println!("applied {m}");
            }
        }
        Command::Orgs(cmd) => {
            let db = open(&config).await?;
            match cmd {
                OrgsCmd::Create { name, domain } => {
                    let org = orgs::create_with(&db, &name, domain.as_deref())
                        .await
                        .map_err(described)?;
                    println!("Created organization {:?}", org.name);
                    println!("{}", org.id);
                }
                OrgsCmd::Update {
                    id,
                    name,
                    domain,
                    tagline,
                    logo_url,
                    accent_color,
                    public_posting,
                } => {
                    let mut changes = serde_json::Map::new();
                    let text = |v: String| {
                        if v.is_empty() {
                            serde_json::Value::Null
                        } else {
                            serde_json::Value::String(v)
                        }
                    };
                    for (field, value) in [
                        ("name", name),
                        ("domain", domain),
                        ("tagline", tagline),
                        ("logo_url", logo_url),
                        ("accent_color", accent_color),
                    ] {
                        if let Some(v) = value {
                            changes.insert(field.into(), text(v));
                        }
                    }
                    if let Some(v) = public_posting {
                        changes.insert("public_posting".into(), (v == "on").into());
                    }
                    anyhow::ensure!(!changes.is_empty(), "nothing to change");
                    let org = orgs::update(&db, id, jobboard::domain::Input::new(changes))
                        .await
                        .map_err(described)?;
                    println!(
                        "Updated organization {} {:?} (domain {}, public posting {})",
                        org.id,
                        org.name,
                        org.domain.as_deref().unwrap_or("none"),
                        if org.public_posting { "on" } else { "off" }
                    );
                }
                OrgsCmd::List => {
                    for o in orgs::list(&db).await? {
                        println!(
                            "{}\t{}\t{}\t{}",
                            o.id,
                            o.created_at,
                            o.name,
                            o.domain.as_deref().unwrap_or("-")
                        );
                    }
                }
            }
        }
        Command::Keys(cmd) => {
            let db = open(&config).await?;
            match cmd {
                KeysCmd::Create {
                    org,
                    name,
                    scopes,
                    read_limit,
                    write_limit,
                } => {
                    anyhow::ensure!(
                        org_exists(&db, org).await?,
                        "organization {org} does not exist"
                    );
                    let scopes = auth::parse_scopes(&scopes).map_err(anyhow::Error::msg)?;
                    let read = check_limit("--read-limit", read_limit)?
                        .unwrap_or(i64::from(config.default_read_limit));
                    let write = check_limit("--write-limit", write_limit)?
                        .unwrap_or(i64::from(config.default_write_limit));
                    let (k, full) = keys::create(
                        &db,
                        keys::NewKey {
                            org_id: org,
                            name: &name,
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
                }
                KeysCmd::List { org } => {
                    for k in keys::list(&db, org).await? {
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
                }
                KeysCmd::Update {
                    key,
                    name,
                    scopes,
                    read_limit,
                    write_limit,
                } => {
                    let k = find_one(&db, &key).await?;
                    let update = keys::KeyUpdate {
                        name,
                        scopes: scopes
                            .map(|s| auth::parse_scopes(&s))
                            .transpose()
                            .map_err(anyhow::Error::msg)?,
                        read_limit: check_limit("--read-limit", read_limit)?,
                        write_limit: check_limit("--write-limit", write_limit)?,
                    };
                    let k = keys::update(&db, k.id, &update)
                        .await?
                        .ok_or_else(|| anyhow::anyhow!("key vanished"))?;
                    println!(
                        "Updated key {} ({}): scopes {}; read {}/min; write {}/min",
                        k.id, k.prefix, k.scopes, k.read_limit, k.write_limit
                    );
                }
                KeysCmd::Revoke { key } => {
                    let k = find_one(&db, &key).await?;
                    keys::revoke(&db, k.id).await?;
                    println!("Revoked key {} ({})", k.id, k.prefix);
                }
            }
        }
        Command::Plans(cmd) => {
            let db = open(&config).await?;
            plans_command(&db, cmd).await?;
        }
        Command::Users(cmd) => {
            let db = open(&config).await?;
            users_command(&db, cmd).await?;
        }
    }
    Ok(())
}

async fn plans_command(db: &Db, cmd: PlansCmd) -> anyhow::Result<()> {
    use jobboard::db::{
        billing::{Money, PlanInterval},
        plans,
    };
    match cmd {
        PlansCmd::Create {
            org,
            name,
            price,
            currency,
            interval,
            jobs_included,
            processor_price_id,
            alt_processor_plan_id,
        } => {
            anyhow::ensure!(
                org_exists(db, org).await?,
                "organization {org} does not exist"
            );
            let name = name.trim().to_string();
            anyhow::ensure!(
                !name.is_empty() && name.chars().count() <= 100,
                "--name must be 1 to 100 characters"
            );
            let price =
                Money::parse(price.trim()).map_err(|(_, m)| anyhow::anyhow!("--price: {m}"))?;
            anyhow::ensure!(
                currency.len() == 3 && currency.bytes().all(|b| b.is_ascii_alphabetic()),
                "--currency must be a three-letter code"
            );
            let interval = PlanInterval::parse(&interval).ok_or_else(|| {
                anyhow::anyhow!(
                    "--interval must be one of: {}",
                    PlanInterval::ALL.join(", ")
                )
            })?;
            anyhow::ensure!(
                (0..=1_000_000_000).contains(&jobs_included),
                "--jobs-included must be between 0 and 1000000000"
            );
            for (flag, v) in [
                ("--processor-price-id", &processor_price_id),
                ("--alt-processor-plan-id", &alt_processor_plan_id),
            ] {
                if let Some(v) = v {
                    anyhow::ensure!(
                        !v.is_empty() && v.chars().count() <= 255,
                        "{flag} must be 1 to 255 characters"
                    );
                }
            }
            let new = plans::NewPlan {
                name,
                processor_price_id,
                alt_processor_plan_id,
                price,
                currency: currency.to_ascii_uppercase(),
                interval,
                jobs_included,
            };
            match plans::create(db, org, &new).await {
                Ok(p) => {
                    println!(
                        "Created plan {:?} ({} {} per {}, {} jobs included)",
                        p.name,
                        p.price,
                        p.currency,
                        p.interval.as_str(),
                        p.jobs_included
                    );
                    println!("{}", p.id);
                }
                Err(plans::CreateError::Taken(field)) => {
                    anyhow::bail!("a plan with this {field} already exists in organization {org}")
                }
                Err(plans::CreateError::Db(e)) => return Err(e.into()),
            }
        }
        PlansCmd::List { org } => {
            for p in plans::list(db, org).await? {
                println!(
                    "{}\t{}\t{} {}\t{}\t{} jobs\t{}\t{}",
                    p.id,
                    p.name,
                    p.price,
                    p.currency,
                    p.interval.as_str(),
                    p.jobs_included,
                    p.processor_price_id.as_deref().unwrap_or("-"),
                    p.alt_processor_plan_id.as_deref().unwrap_or("-"),
                );
            }
        }
    }
    Ok(())
}

async fn users_command(db: &Db, cmd: UsersCmd) -> anyhow::Result<()> {
    use jobboard::domain::users;
    match cmd {
        UsersCmd::Create { org, email } => {
            anyhow::ensure!(
                org_exists(db, org).await?,
                "organization {org} does not exist"
            );
            let password = read_password()?;
            let mut body = serde_json::Map::new();
            body.insert("email".into(), email.into());
            body.insert("password".into(), password.into());
            let user = users::create(
                db,
                org,
                jobboard::domain::Input::new(body),
                jobboard::db::Ts::now(),
            )
            .await
            .map_err(described)?;
            println!(
                "Created staff user {} of organization {org}; they sign in at /dashboard/login.",
                user.email
            );
            println!("{}", user.id);
        }
        UsersCmd::List { org } => {
            for u in users::list(db, org).await? {
                let last = u
                    .last_login_at
                    .map_or_else(|| "never".to_string(), |t| t.to_string());
                println!(
                    "{}\t{}\tcreated {}\tlast sign-in {last}",
                    u.id, u.email, u.created_at
                );
            }
        }
        UsersCmd::Remove { id } => {
            let id = uuid::Uuid::parse_str(id.trim())
                .map_err(|_| anyhow::anyhow!("{id:?} is not a user id"))?;
            let user = match users::remove_any(db, id).await {
                Err(jobboard::domain::Error::NotFound(_)) => {
                    anyhow::bail!("no staff user with id {id}")
                }
                other => other.map_err(described)?,
            };
            println!(
                "Removed staff user {} ({}) of organization {}; their sessions have ended.",
                user.id, user.email, user.org_id
            );
        }
    }
    Ok(())
}

/// A duration as people say it: "24 hours", "90 minutes".
fn lifetime(d: std::time::Duration) -> String {
    let secs = d.as_secs();
    match secs {
        s if s % 3600 == 0 => format!("{} hour{}", s / 3600, if s == 3600 { "" } else { "s" }),
        s if s % 60 == 0 => format!("{} minutes", s / 60),
        s => format!("{s} seconds"),
    }
}

/// Reads a password from standard input: one line (without echo, and twice, on a
/// terminal). Never from the command line, where other users of the machine could read it.
fn read_password() -> anyhow::Result<String> {
    use std::io::{BufRead, IsTerminal};
    let stdin = std::io::stdin();
    let terminal = stdin.is_terminal();
    let read_line = |prompt: &str| -> anyhow::Result<String> {
        if terminal {
            eprint!("{prompt}");
            set_echo(false);
        }
        let mut line = String::new();
        let read = stdin.lock().read_line(&mut line);
        if terminal {
            set_echo(true);
            eprintln!();
        }
        read?;
        Ok(line.trim_end_matches(['\n', '\r']).to_string())
    };
    let password = read_line("Password (at least 12 characters): ")?;
    anyhow::ensure!(
        !password.is_empty(),
        "no password on standard input (e.g. `printf '%s\\n' \"$PASSWORD\" | jobboard users create ...`)"
    );
    if let Some(problem) = jobboard::domain::users::password::check(&password) {
        anyhow::bail!("the password is refused: {problem}");
    }
    if terminal {
        let again = read_line("The same password again: ")?;
        anyhow::ensure!(again == password, "the two passwords differ");
    }
    Ok(password)
}

/// Turns the terminal's echo off or back on (`stty`; nothing happens where it is missing).
fn set_echo(on: bool) {
    let _ = std::process::Command::new("stty")
        .arg(if on { "echo" } else { "-echo" })
        .stdin(std::process::Stdio::inherit())
        .status();
}

async fn find_one(db: &Db, key: &str) -> anyhow::Result<keys::ApiKey> {
    let mut found = keys::find(db, key).await?;
    match found.len() {
        0 => anyhow::bail!("no key with id or prefix {key:?}"),
        1 => Ok(found.remove(0)),
        n => anyhow::bail!("{n} keys share the prefix {key:?}; use the key id"),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    jobboard::init_tls();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// True when organization `id` exists.
async fn org_exists(db: &Db, id: i64) -> anyhow::Result<bool> {
    match orgs::get(db, id).await {
        Ok(_) => Ok(true),
        Err(jobboard::domain::Error::NotFound(_)) => Ok(false),
        Err(e) => Err(described(e)),
    }
}

/// A refused operation as a command-line error: every field problem on its own line.
fn described(e: jobboard::domain::Error) -> anyhow::Error {
    use jobboard::domain::Error as E;
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
