//! The running service: shared state, background tasks, and `serve`.

use std::{
    collections::HashMap,
    future::Future,
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::Duration,
};

use tokio::{net::TcpListener, sync::watch, task::JoinHandle};
use uuid::Uuid;

use crate::{
    config::Config,
    db::{Db, Ts, keys, orgs},
    metrics::Metrics,
    ratelimit::RateLimiter,
};

/// State shared by every request and background task.
pub struct App {
    pub db: Db,
    pub config: Config,
    pub limiter: RateLimiter,
    pub metrics: Metrics,
    /// Rendered CMS reads of this node.
    pub cms_cache: crate::cms::Cache,
    /// Rendered job lists of this node, by organization and normalised query.
    pub jobs_cache: crate::cache::Cache<(i64, String)>,
    /// Key lookups by key hash, shared by concurrent requests (see [`crate::coalesce`]).
    pub key_lookups: Arc<crate::coalesce::Coalescer<Vec<u8>, KeyLookup>>,
    /// Counts the scheduler's completed passes, so callers can await one.
    pub scheduler_passes: watch::Sender<u64>,
    /// True once the background upgrade work (see [`Db::finish_upgrades`]) is complete.
    pub upgrades_done: watch::Sender<bool>,
    key_usage: Mutex<HashMap<Uuid, Ts>>,
}

pub type AppState = Arc<App>;

impl From<&AppState> for crate::webhooks::Setup {
    fn from(app: &AppState) -> Self {
        crate::webhooks::Setup::new(&app.db, &app.config)
    }
}

impl From<AppState> for crate::webhooks::Setup {
    fn from(app: AppState) -> Self {
        crate::webhooks::Setup::new(&app.db, &app.config)
    }
}

/// The outcome of looking up a key by its hash.
pub type KeyLookup = Result<Option<keys::KeyAuth>, Arc<crate::db::StoreError>>;

impl App {
    /// Connects to the database and applies migrations.
    pub async fn start(config: Config) -> anyhow::Result<AppState> {
        crate::error::set_public_url(&config.public_url);
        let db = Db::connect(&config.database, config.db_max_connections).await?;
        let applied = db.migrate().await?;
        if !applied.is_empty() {
            tracing::info!(?applied, "migrations applied");
        }
        Ok(App::with_db(config, db))
    }

    pub fn with_db(config: Config, db: Db) -> AppState {
        let limiter = match db.pg() {
            Some(pool) => RateLimiter::Postgres(pool.clone()),
            None => RateLimiter::memory(),
        };
        Arc::new(App {
            db,
            config,
            limiter,
            metrics: Metrics::default(),
            cms_cache: crate::cms::Cache::default(),
            jobs_cache: crate::cache::Cache::default(),
            key_lookups: Arc::default(),
            scheduler_passes: watch::channel(0).0,
            upgrades_done: watch::channel(false).0,
            key_usage: Mutex::new(HashMap::new()),
        })
    }

    /// Notes that a key was used; written to the database in batches.
    pub fn record_key_use(&self, id: Uuid, at: Ts) {
        self.key_usage
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, at);
    }

    /// Writes pending `last_used_at` updates.
    pub async fn flush_key_usage(&self) {
        let used: Vec<(Uuid, Ts)> = self
            .key_usage
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain()
            .collect();
        if let Err(e) = keys::touch(&self.db, &used).await {
            tracing::warn!(error = ?e, "could not record key usage");
        }
    }
}

/// On a database without organizations, creates organization 1 and a key with every
/// scope, and returns the key (to be shown once).
pub async fn bootstrap(app: &App) -> anyhow::Result<Option<(i64, String)>> {
    if orgs::count(&app.db).await? > 0 {
        return Ok(None);
    }
    let org = orgs::create(&app.db, "Default organization").await?;
    let (_, key) = keys::create(
        &app.db,
        keys::NewKey {
            org_id: org.id,
            name: "initial key",
            scopes: "*",
            read_limit: i64::from(app.config.default_read_limit),
            write_limit: i64::from(app.config.default_write_limit),
        },
    )
    .await?;
    Ok(Some((org.id, key)))
}

/// A running server: its address and the handle to stop it.
pub struct Running {
    pub addr: SocketAddr,
    stop: watch::Sender<bool>,
    done: JoinHandle<anyhow::Result<()>>,
}

impl Running {
    /// Stops gracefully: in-flight requests complete, background tasks finish their step.
    pub async fn shutdown(self) -> anyhow::Result<()> {
        let _ = self.stop.send(true);
        self.done.await?
    }
}

/// Starts the API (when enabled) on `listener` and the background roles; returns at once.
pub fn spawn(app: AppState, listener: TcpListener) -> anyhow::Result<Running> {
    let addr = listener.local_addr()?;
    let (stop, stop_rx) = watch::channel(false);
    let done = tokio::spawn(run(app, listener, wait_for(stop_rx)));
    Ok(Running { addr, stop, done })
}

async fn wait_for(mut rx: watch::Receiver<bool>) {
    while !*rx.borrow() {
        if rx.changed().await.is_err() {
            return;
        }
    }
}

/// Serves until `shutdown` completes, then drains requests and stops background tasks.
pub async fn run(
    app: AppState,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let (stop_tx, stop_rx) = watch::channel(false);
    let tasks = spawn_background(&app, stop_rx.clone());
    let result = if app.config.api {
        let router = crate::http::router(app.clone());
        axum::serve(
            listener,
            router.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .with_graceful_shutdown(shutdown)
        .await
        .map_err(anyhow::Error::from)
    } else {
        drop(listener);
        shutdown.await;
        Ok(())
    };
    let _ = stop_tx.send(true);
    for t in tasks {
        let _ = t.await;
    }
    app.flush_key_usage().await;
    result
}

fn spawn_background(app: &AppState, stop: watch::Receiver<bool>) -> Vec<JoinHandle<()>> {
    let mut tasks = Vec::new();
    // Housekeeping: key usage and rate-limit state.
    tasks.push(tokio::spawn(every(
        Duration::from_secs(15),
        stop.clone(),
        {
            let app = app.clone();
            move || {
                let app = app.clone();
                async move {
                    app.flush_key_usage().await;
                    if let Err(e) = app.limiter.prune().await {
                        tracing::warn!(error = ?e, "rate-limit prune failed");
                    }
                }
            }
        },
    )));
    if app.config.scheduler {
        // The data work of an upgrade, while the API already serves (reads are correct
        // meanwhile); stopped by shutdown and resumed at the next start.
        tasks.push(tokio::spawn({
            let app = app.clone();
            let mut stop = stop.clone();
            async move {
                let work = async {
                    match app.db.finish_upgrades().await {
                        Ok(()) => app.upgrades_done.send_replace(true),
                        Err(e) => {
                            tracing::warn!(error = ?e, "upgrade work failed; resumed at the next start");
                            false
                        }
                    };
                };
                tokio::select! {
                    () = work => {}
                    _ = stop.wait_for(|s| *s) => {}
                }
            }
        }));
        tasks.push(tokio::spawn(crate::scheduler::run(
            app.clone(),
            stop.clone(),
        )));
    }
    // Webhook delivery worker.
    if app.config.worker {
        tasks.push(tokio::spawn(crate::webhooks::run(
            app.clone(),
            stop.clone(),
        )));
    }
    tasks
}

/// Runs `step` every `period` until `stop` turns true.
pub async fn every<F, Fut>(period: Duration, mut stop: watch::Receiver<bool>, mut step: F)
where
    F: FnMut() -> Fut + Send,
    Fut: Future<Output = ()> + Send,
{
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        if *stop.borrow() {
            return;
        }
        tokio::select! {
            _ = tick.tick() => step().await,
            changed = stop.changed() => if changed.is_err() { return },
        }
    }
}

/// Resolves on SIGTERM or SIGINT.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
    tracing::info!("shutting down: finishing in-flight requests");
}
