//! `serve` and `migrate`.

use clap::Args;
use jobboard::{
    config::Config,
    server::{self, App},
};
use jobboard_store::Db;

#[derive(Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "JOBBOARD_LISTEN")]
    pub listen: Option<String>,
    /// Absolute base URL of the service, used in links.
    #[arg(long, env = "JOBBOARD_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// Log format: text or json.
    #[arg(long, env = "JOBBOARD_LOG_FORMAT")]
    pub log_format: Option<String>,
    /// Do not serve the HTTP API (worker or scheduler node).
    #[arg(long)]
    pub no_api: bool,
    /// Do not run the webhook delivery and mail workers.
    #[arg(long)]
    pub no_worker: bool,
    /// Do not run the scheduler (expiry of jobs and CMS items).
    #[arg(long)]
    pub no_scheduler: bool,
    /// Allow webhook targets on loopback and private addresses.
    #[arg(long)]
    pub allow_private_targets: bool,
}

/// Runs the service until SIGTERM or SIGINT.
pub async fn serve(config: Config) -> anyhow::Result<()> {
    super::settings::init_logging(config.log_json);
    let listen = config.listen;
    tracing::info!(database = %jobboard_store::redact_url(&config.database), "starting");
    let app = App::start(config).await?;
    if let Some(first) = server::bootstrap(&app).await? {
        // One write, whose failure (standard output closed) does not stop the server:
        // whoever reads it may stop reading after the key.
        let text = format!(
            "Created organization {} and its first API key (shown only this once):\n{}\n\
             Create the first dashboard user with this one-time link (valid for {}):\n{}\n",
            first.org_id,
            first.key,
            lifetime(app.config.dashboard.setup_link_lifetime),
            jobboard::pages::dashboard::setup_url(&app.config, &first.setup_token)
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
    Ok(())
}

/// Applies pending migrations and completes the upgrade work they leave.
pub async fn migrate(config: &Config) -> anyhow::Result<()> {
    let db = Db::connect_with(
        &config.database,
        2,
        config.sqlite_synchronous,
        config.db_page_cache,
    )
    .await?;
    let applied = db.migrate().await?;
    // The data work of the upgrade too, to the end (serve would do it in the
    // background).
    jobboard_domain::analytics::finish_upgrade(&db).await?;
    if applied.is_empty() {
        println!("Database is up to date.");
    }
    for m in applied {
        println!("applied {m}");
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
