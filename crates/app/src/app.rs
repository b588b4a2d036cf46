//! The state every request and background task shares: the database, the settings, the
//! limiters, the caches, and the bootstrap of an empty database.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use tokio::sync::watch;
use uuid::Uuid;

use jobboard_domain::{OrgId, keys::store as keys};
use jobboard_store::{Db, Ts};

use jobboard_domain::orgs;

use jobboard_store::ratelimit::RateLimiter;

use crate::{config::Config, metrics::Metrics};

/// State shared by every request and background task.
pub struct App {
    pub db: Db,
    pub config: Config,
    pub limiter: RateLimiter,
    pub metrics: Metrics,
    /// Rendered CMS reads of this node.
    pub cms_cache: jobboard_domain::cms::Cache,
    /// Rendered job lists of this node, by organization and normalised query.
    pub jobs_cache: jobboard_core::cache::Cache<(OrgId, String)>,
    /// Rendered board pages and feeds of this node, by organization and normalised address.
    pub pages_cache: jobboard_core::cache::Cache<(OrgId, String)>,
    /// Key lookups by key hash and bucket (reads or writes), shared by concurrent requests
    /// (see [`jobboard_store::coalesce`]); on PostgreSQL each also takes the requests it answers from
    /// the key's rate limit.
    pub key_lookups: Arc<jobboard_store::coalesce::Coalescer<(Vec<u8>, bool), KeyLookup>>,
    /// Counts the scheduler's completed passes, so callers can await one.
    pub scheduler_passes: watch::Sender<u64>,
    /// When the scheduler's occasional steps (pruning, retention) last ran on this node.
    pub cadence: jobboard_core::clock::Cadence,
    /// The client of the card processor's API (paid postings).
    pub processor: jobboard_delivery::processor::Processor,
    /// The client that reads import sources (under the webhooks' address rules).
    pub imports: jobboard_delivery::imports::Fetcher,
    /// True once the background upgrade work (see
    /// [`jobboard_domain::analytics::finish_upgrade`]) is complete.
    pub upgrades_done: watch::Sender<bool>,
    key_usage: Mutex<HashMap<Uuid, Ts>>,
    /// Board visits waiting to be recorded (see [`App::record_view`]).
    views: Mutex<Vec<jobboard_domain::analytics::View>>,
    /// The key that signs anti-forgery tokens of forms (shared by every node).
    form_key: tokio::sync::OnceCell<Vec<u8>>,
    /// The service's time: the database's (every operation's "now"), the scheduler's, the
    /// workers' and the pages' (sessions, sign-in limits, caches). One clock, so moving it
    /// (tests) moves every rule.
    pub clock: jobboard_core::clock::Clock,
    /// The address the HTTP server listens on, once bound (`listen` may name port 0).
    local_addr: std::sync::OnceLock<std::net::SocketAddr>,
}

pub type AppState = Arc<App>;

/// The outcome of looking up a key by its hash: the key, and on PostgreSQL what was taken
/// from its rate limit for the requests the lookup answered.
pub type KeyLookup =
    Result<Option<(keys::KeyAuth, Option<keys::Taken>)>, Arc<jobboard_store::StoreError>>;

impl App {
    /// Connects to the database and applies migrations.
    pub async fn start(config: Config) -> anyhow::Result<AppState> {
        crate::error::set_public_url(&config.public_url);
        jobboard_domain::mail::message::set_message_id_domain(config.mail.from.as_ref());
        let db = Db::connect_with(
            &config.database,
            config.db_max_connections,
            config.sqlite_synchronous,
            config.db_page_cache,
        )
        .await?;
        let applied = db.migrate().await?;
        if !applied.is_empty() {
            tracing::info!(?applied, "migrations applied");
        }
        Ok(App::with_db(config, db))
    }

    pub fn with_db(config: Config, db: Db) -> AppState {
        if let Some(o) = config.outgoing() {
            db.set_outgoing(o);
        }
        let limiter = match db.pg() {
            Some(pool) => RateLimiter::Postgres(pool.clone()),
            None => RateLimiter::memory(),
        };
        let render = config.render_cache;
        let imports = jobboard_delivery::imports::Fetcher::new(&config.webhooks)
            .expect("an HTTP client with the platform's TLS roots");
        // The node's search indexes, with their budget (made here, before any list).
        db.queue(|_| jobboard_domain::jobs::indexes::Indexes::new(config.search_index));
        // The database's clock is the service's: the scheduler, the workers and the pages
        // read the same time as the operations.
        let clock = db.clock().clone();
        Arc::new(App {
            db,
            config,
            limiter,
            metrics: Metrics::default(),
            // The rendered-cache budget: half for job lists, a quarter each for board
            // pages and CMS reads.
            cms_cache: jobboard_core::cache::Cache::new(
                jobboard_core::cache::MAX_ENTRIES,
                render / 4,
            ),
            jobs_cache: jobboard_core::cache::Cache::new(
                jobboard_core::cache::MAX_ENTRIES,
                render / 2,
            ),
            pages_cache: jobboard_core::cache::Cache::new(
                jobboard_core::cache::MAX_ENTRIES,
                render / 4,
            ),
            key_lookups: Arc::default(),
            scheduler_passes: watch::channel(0).0,
            cadence: Default::default(),
            processor: jobboard_delivery::processor::Processor::new()
                .expect("an HTTP client with the platform's TLS roots"),
            imports,
            upgrades_done: watch::channel(false).0,
            key_usage: Mutex::new(HashMap::new()),
            views: Mutex::new(Vec::new()),
            form_key: tokio::sync::OnceCell::new(),
            clock,
            local_addr: std::sync::OnceLock::new(),
        })
    }

    /// Notes the address the HTTP server was bound to (the first one noted stays).
    pub fn set_local_addr(&self, addr: std::net::SocketAddr) {
        let _ = self.local_addr.set(addr);
    }

    /// The origin of the listen address (`http://127.0.0.1:8080`): the address the
    /// server was bound to, else `listen`; loopback when it listens on every interface.
    pub fn listen_origin(&self) -> String {
        let mut addr = self.local_addr.get().copied().unwrap_or(self.config.listen);
        if addr.ip().is_unspecified() {
            addr.set_ip(match addr.ip() {
                std::net::IpAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
                std::net::IpAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
            });
        }
        format!("http://{addr}")
    }

    /// The key that signs the anti-forgery tokens of forms, read (or made) once.
    pub async fn form_key(&self) -> Result<&[u8], jobboard_store::StoreError> {
        self.form_key
            .get_or_try_init(|| jobboard_store::secrets::get_or_create(&self.db, "form_tokens"))
            .await
            .map(Vec::as_slice)
    }

    /// Notes that a key was used; written to the database in batches.
    pub fn record_key_use(&self, id: Uuid, at: Ts) {
        self.key_usage
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, at);
    }

    /// Notes a visit the board saw. Visits are written in batches (every second, and at
    /// shutdown) so a page view never waits for a write; past [`MAX_PENDING_VIEWS`]
    /// waiting (the database far behind) further ones are dropped, not queued.
    pub fn record_view(&self, view: jobboard_domain::analytics::View) {
        let mut views = self.views.lock().unwrap_or_else(|e| e.into_inner());
        if views.len() < MAX_PENDING_VIEWS {
            views.push(view);
        }
    }

    /// Writes the visits noted so far.
    pub async fn flush_views(&self) {
        let views = std::mem::take(&mut *self.views.lock().unwrap_or_else(|e| e.into_inner()));
        if views.is_empty() {
            return;
        }
        if let Err(e) = jobboard_domain::analytics::record_views(&self.db, views).await {
            tracing::warn!(error = ?e, "could not record board visits");
        }
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

/// Board visits a node keeps waiting for their batch at most.
pub const MAX_PENDING_VIEWS: usize = 100_000;

/// What the first start of an empty database made: organization 1, a key with every
/// scope and a one-time link to create the first staff user (both shown once).
#[derive(Debug)]
pub struct Bootstrapped {
    pub org_id: OrgId,
    pub key: String,
    /// The token of the setup link (`/dashboard/setup/<token>`).
    pub setup_token: String,
}

/// Arbitrary constant naming the advisory lock that serialises first starts across nodes.
const PG_BOOTSTRAP_LOCK: i64 = 0x6a62_6669_7273_7431;

/// On a database without organizations, creates organization 1, a key with every scope
/// and a setup link for the first staff user. Nodes starting together on one PostgreSQL
/// database take turns (an advisory lock), so exactly one of them makes these.
pub async fn bootstrap(app: &App) -> anyhow::Result<Option<Bootstrapped>> {
    let Some(pool) = app.db.pg() else {
        return bootstrap_unlocked(app).await;
    };
    let mut conn = pool.acquire().await?;
    sqlx::query("SELECT pg_advisory_lock($1)")
        .bind(PG_BOOTSTRAP_LOCK)
        .execute(&mut *conn)
        .await?;
    let made = bootstrap_unlocked(app).await;
    let unlocked = sqlx::query("SELECT pg_advisory_unlock($1)")
        .bind(PG_BOOTSTRAP_LOCK)
        .execute(&mut *conn)
        .await;
    if unlocked.is_err() {
        // The lock ends with its session: close the connection instead of pooling it.
        drop(conn.detach());
    }
    made
}

async fn bootstrap_unlocked(app: &App) -> anyhow::Result<Option<Bootstrapped>> {
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
    let setup_token = jobboard_domain::users::setup::create_link(
        &app.db,
        org.id,
        app.clock.now(),
        app.config.dashboard.setup_link_lifetime,
    )
    .await?;
    Ok(Some(Bootstrapped {
        org_id: org.id,
        key,
        setup_token,
    }))
}

// What the workers need of the running service.
impl jobboard_delivery::outbox::HasSetup<jobboard_delivery::mail::Setup> for App {
    fn setup(&self) -> jobboard_delivery::mail::Setup {
        jobboard_delivery::mail::Setup {
            db: self.db.clone(),
            config: self.config.mail.clone(),
        }
    }
}

impl jobboard_delivery::outbox::HasSetup<jobboard_delivery::indexing::Setup> for App {
    fn setup(&self) -> jobboard_delivery::indexing::Setup {
        jobboard_delivery::indexing::Setup {
            db: self.db.clone(),
            endpoints: self.config.indexing.clone(),
            links: self.config.links(),
        }
    }
}

impl jobboard_delivery::outbox::HasSetup<jobboard_delivery::webhooks::Setup> for App {
    fn setup(&self) -> jobboard_delivery::webhooks::Setup {
        jobboard_delivery::webhooks::Setup {
            db: self.db.clone(),
            config: self.config.webhooks.clone(),
            public_url: self.config.public_url.clone(),
        }
    }
}
