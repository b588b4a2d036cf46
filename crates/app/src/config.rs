//! Settings: the embedded, commented default file (`jobboard.toml` at the repository root),
//! overridden by a user file, then by environment variables and flags (merged by clap).

use std::{net::SocketAddr, time::Duration};

use anyhow::Context;
use serde::Deserialize;

pub use jobboard_delivery::webhooks::WebhookConfig;

/// The commented default configuration; its values are the defaults.
pub const DEFAULT_FILE: &str = include_str!("../../../jobboard.toml");

/// One layer of settings; every field optional so layers can be stacked.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Layer {
    pub listen: Option<String>,
    pub database: Option<String>,
    pub db_max_connections: Option<u32>,
    pub db_page_cache_mb: Option<u64>,
    pub render_cache_mb: Option<u64>,
    pub search_index_mb: Option<u64>,
    pub public_url: Option<String>,
    pub log_format: Option<String>,
    pub request_timeout: Option<u64>,
    pub body_read_timeout: Option<u64>,
    pub metrics_listen: Option<String>,
    pub metrics_token: Option<String>,
    pub sqlite_synchronous: Option<String>,
    pub api: Option<bool>,
    pub worker: Option<bool>,
    pub scheduler: Option<bool>,
    pub default_read_limit: Option<u32>,
    pub default_write_limit: Option<u32>,
    pub auth_failure_limit: Option<u32>,
    pub form_limit: Option<u32>,
    pub alert_hour: Option<u32>,
    pub audit_keep_days: Option<u32>,
    pub trusted_proxies: Option<Vec<String>>,
    pub indexnow_url: Option<String>,
    pub google_indexing_url: Option<String>,
    pub google_token_url: Option<String>,
    #[serde(default)]
    pub webhooks: WebhookLayer,
    #[serde(default)]
    pub mail: jobboard_delivery::mail::MailLayer,
    #[serde(default)]
    pub dashboard: DashboardLayer,
}

/// The `[dashboard]` settings: sessions and sign-in limits, in seconds and counts.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DashboardLayer {
    pub session_idle_timeout: Option<u64>,
    pub session_lifetime: Option<u64>,
    pub setup_link_lifetime: Option<u64>,
    pub login_attempts_per_account: Option<u32>,
    pub login_attempts_per_address: Option<u32>,
    pub login_attempts_window: Option<u64>,
    pub login_free_failures: Option<u32>,
    pub login_delay: Option<u64>,
    pub login_delay_max: Option<u64>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebhookLayer {
    pub allow_private_targets: Option<bool>,
    pub allowed_cidrs: Option<Vec<String>>,
    pub retry_schedule: Option<Vec<u64>>,
    pub disable_after: Option<u64>,
    pub delivery_log_days: Option<u32>,
    pub timeout: Option<u64>,
    pub concurrency: Option<usize>,
    pub concurrency_per_target: Option<usize>,
}

macro_rules! overlay {
    ($base:expr, $top:expr, $($f:ident),*) => { $( if $top.$f.is_some() { $base.$f = $top.$f.clone(); } )* };
}

impl Layer {
    /// Applies `top` over `self`.
    pub fn overlay(mut self, top: &Layer) -> Layer {
        overlay!(
            self,
            top,
            listen,
            database,
            db_max_connections,
            db_page_cache_mb,
            render_cache_mb,
            search_index_mb,
            public_url,
            log_format,
            request_timeout,
            body_read_timeout,
            metrics_listen,
            metrics_token,
            sqlite_synchronous,
            api,
            worker,
            scheduler,
            default_read_limit,
            default_write_limit,
            auth_failure_limit,
            form_limit,
            alert_hour,
            audit_keep_days,
            trusted_proxies,
            indexnow_url,
            google_indexing_url,
            google_token_url
        );
        overlay!(
            self.webhooks,
            top.webhooks,
            allow_private_targets,
            allowed_cidrs,
            retry_schedule,
            disable_after,
            delivery_log_days,
            timeout,
            concurrency,
            concurrency_per_target
        );
        self.mail = self.mail.overlay(&top.mail);
        overlay!(
            self.dashboard,
            top.dashboard,
            session_idle_timeout,
            session_lifetime,
            setup_link_lifetime,
            login_attempts_per_account,
            login_attempts_per_address,
            login_attempts_window,
            login_free_failures,
            login_delay,
            login_delay_max
        );
        self
    }
}

/// Resolved settings.
#[derive(Debug, Clone)]
pub struct Config {
    pub listen: SocketAddr,
    pub database: String,
    pub db_max_connections: u32,
    /// Bytes all SQLite page caches of a node may hold together.
    pub db_page_cache: u64,
    /// Bytes all rendered caches (job lists, board pages, CMS reads) of a node may hold
    /// together.
    pub render_cache: usize,
    /// Bytes all in-memory search indexes of a node may hold together (0: none; lists
    /// are answered by SQL).
    pub search_index: usize,
    /// Base URL without trailing slash; empty for relative links.
    pub public_url: String,
    pub log_json: bool,
    pub request_timeout: Duration,
    /// Time allowed to receive a whole request body, from the moment it is first read.
    pub body_read_timeout: Duration,
    /// A separate listener for `/metrics`, `/healthz` and `/readyz`; `/metrics` is then no
    /// longer served on `listen`.
    pub metrics_listen: Option<SocketAddr>,
    /// When set, `/metrics` needs `Authorization: Bearer <token>`.
    pub metrics_token: Option<Secret>,
    /// SQLite's `synchronous` pragma (no effect on PostgreSQL).
    pub sqlite_synchronous: jobboard_store::Synchronous,
    pub api: bool,
    pub worker: bool,
    pub scheduler: bool,
    pub default_read_limit: u32,
    pub default_write_limit: u32,
    pub auth_failure_limit: u32,
    /// Forms (post a job, apply) a client address may send per minute on the board.
    pub form_limit: u32,
    /// The hour (UTC, 0 to 23) daily and weekly (Mondays) job alerts are sent at.
    pub alert_hour: u32,
    /// Days the audit log keeps an entry (0: for ever).
    pub audit_keep_days: u32,
    /// Peers whose `X-Forwarded-For` names the client (reverse proxies, load balancers).
    pub trusted_proxies: Vec<jobboard_core::net::Cidr>,
    pub webhooks: WebhookConfig,
    /// The search engines' endpoints of instant indexing.
    pub indexing: jobboard_delivery::indexing::Endpoints,
    pub mail: jobboard_delivery::mail::MailConfig,
    /// Dashboard sessions and sign-in limits.
    pub dashboard: jobboard_domain::sessions::Policy,
    /// Names the check of a claimed board domain (`crate::domain_check`) reaches at these
    /// addresses (with their port) instead of asking DNS, as curl's `--resolve` does; set
    /// by code (tests), not by the settings file. The address rules still apply.
    pub domain_check_resolve: Vec<(String, SocketAddr)>,
}

/// A secret setting: never printed by `Debug`, so a logged configuration cannot leak it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(pub String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(..)")
    }
}

impl Config {
    /// Loads defaults, then `file` (if any), then `top` (environment and flags).
    pub fn load(file: Option<&str>, top: &Layer) -> anyhow::Result<Config> {
        let mut layer: Layer =
            toml::from_str(DEFAULT_FILE).context("embedded default configuration")?;
        if let Some(path) = file {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading config file {path}"))?;
            let user: Layer =
                toml::from_str(&text).with_context(|| format!("parsing config file {path}"))?;
            layer = layer.overlay(&user);
        }
        Config::resolve(layer.overlay(top))
    }

    /// The service's own address, no trailing slash: `public_url`, else the listen
    /// address (loopback when it listens on every interface).
    pub fn base_url(&self) -> String {
        if self.public_url.is_empty() {
            let mut addr = self.listen;
            if addr.ip().is_unspecified() {
                addr.set_ip(std::net::Ipv4Addr::LOCALHOST.into());
            }
            format!("http://{addr}")
        } else {
            self.public_url.trim_end_matches('/').to_string()
        }
    }

    /// Where links to the boards point ([`jobboard_store::Outgoing`]).
    pub fn links(&self) -> jobboard_store::Outgoing {
        jobboard_store::Outgoing {
            base_url: self.base_url(),
            domain_scheme: if self.public_url.starts_with("http://") {
                "http".into()
            } else {
                "https".into()
            },
        }
    }

    /// What mail links need ([`Config::links`]), when mail is sent.
    pub fn outgoing(&self) -> Option<jobboard_store::Outgoing> {
        self.mail.enabled().then(|| self.links())
    }

    /// Defaults with `database` replaced; for tools and tests.
    pub fn with_database(database: &str) -> Config {
        let top = Layer {
            database: Some(database.to_string()),
            ..Layer::default()
        };
        Config::load(None, &top).expect("embedded defaults are valid")
    }

    fn resolve(l: Layer) -> anyhow::Result<Config> {
        // Every field is present in the embedded default file.
        let listen = l.listen.unwrap_or_default();
        let listen: SocketAddr = listen
            .parse()
            .with_context(|| format!("listen address {listen:?}"))?;
        let log_format = l.log_format.unwrap_or_default();
        anyhow::ensure!(
            matches!(log_format.as_str(), "text" | "json"),
            "log_format must be \"text\" or \"json\""
        );
        let public_url = l
            .public_url
            .unwrap_or_default()
            .trim_end_matches('/')
            .to_string();
        if !public_url.is_empty() {
            anyhow::ensure!(
                public_url.starts_with("http://") || public_url.starts_with("https://"),
                "public_url must be an absolute http(s) URL"
            );
        }
        let read = l.default_read_limit.unwrap_or(100);
        let write = l.default_write_limit.unwrap_or(30);
        anyhow::ensure!(
            (1..=jobboard_store::ratelimit::MAX_LIMIT).contains(&read),
            "default_read_limit out of range"
        );
        anyhow::ensure!(
            (1..=jobboard_store::ratelimit::MAX_LIMIT).contains(&write),
            "default_write_limit out of range"
        );
        let w = l.webhooks;
        let schedule = w.retry_schedule.unwrap_or_default();
        let concurrency = w.concurrency.unwrap_or(64);
        let per_target = w.concurrency_per_target.unwrap_or(4);
        anyhow::ensure!(
            concurrency >= 1 && per_target >= 1,
            "webhook concurrency must be at least 1"
        );
        let mut trusted_proxies = Vec::new();
        for entry in l.trusted_proxies.unwrap_or_default() {
            let cidr = jobboard_core::net::Cidr::parse(&entry).with_context(|| {
                format!("trusted_proxies: {entry:?} is not an address or a CIDR range")
            })?;
            trusted_proxies.push(cidr);
        }
        let metrics_listen = match l.metrics_listen.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(a) => Some(
                a.parse::<SocketAddr>()
                    .with_context(|| format!("metrics_listen address {a:?}"))?,
            ),
        };
        let metrics_token = match l.metrics_token {
            Some(t) if !t.is_empty() => {
                anyhow::ensure!(
                    t.len() >= 16 && t.bytes().all(|b| b.is_ascii_graphic()),
                    "metrics_token must be at least 16 printable ASCII characters without spaces"
                );
                Some(Secret(t))
            }
            _ => None,
        };
        let sqlite_synchronous = match l.sqlite_synchronous.as_deref().unwrap_or("normal") {
            s if s.eq_ignore_ascii_case("normal") => jobboard_store::Synchronous::Normal,
            s if s.eq_ignore_ascii_case("full") => jobboard_store::Synchronous::Full,
            other => {
                anyhow::bail!("sqlite_synchronous must be \"normal\" or \"full\", not {other:?}")
            }
        };
        let timeout = w.timeout.unwrap_or(15);
        anyhow::ensure!(timeout >= 1, "webhook timeout must be at least 1 second");
        let defaults = jobboard_delivery::indexing::Endpoints::default();
        let endpoint = |v: Option<String>, default: String, name: &str| -> anyhow::Result<String> {
            let v = v.filter(|v| !v.trim().is_empty()).unwrap_or(default);
            anyhow::ensure!(
                v.starts_with("https://") || v.starts_with("http://"),
                "{name} must be an absolute http(s) URL"
            );
            Ok(v)
        };
        let indexing = jobboard_delivery::indexing::Endpoints {
            indexnow_url: endpoint(l.indexnow_url, defaults.indexnow_url, "indexnow_url")?,
            google_indexing_url: endpoint(
                l.google_indexing_url,
                defaults.google_indexing_url,
                "google_indexing_url",
            )?,
            google_token_url: endpoint(
                l.google_token_url,
                defaults.google_token_url,
                "google_token_url",
            )?,
        };
        Ok(Config {
            listen,
            database: l.database.unwrap_or_default(),
            db_max_connections: l.db_max_connections.unwrap_or(16).max(1),
            db_page_cache: l.db_page_cache_mb.unwrap_or(8).clamp(1, 1 << 20) << 20,
            render_cache: (l.render_cache_mb.unwrap_or(16).clamp(1, 1 << 20) << 20) as usize,
            search_index: l
                .search_index_mb
                .map_or(jobboard_domain::jobs::indexes::DEFAULT_BUDGET, |mb| {
                    (mb.min(1 << 20) << 20) as usize
                }),
            public_url,
            log_json: log_format == "json",
            request_timeout: Duration::from_secs(l.request_timeout.unwrap_or(30).max(1)),
            body_read_timeout: Duration::from_secs(l.body_read_timeout.unwrap_or(10).max(1)),
            metrics_listen,
            metrics_token,
            sqlite_synchronous,
            api: l.api.unwrap_or(true),
            worker: l.worker.unwrap_or(true),
            scheduler: l.scheduler.unwrap_or(true),
            default_read_limit: read,
            default_write_limit: write,
            auth_failure_limit: l.auth_failure_limit.unwrap_or(20).max(1),
            form_limit: l
                .form_limit
                .unwrap_or(10)
                .clamp(1, jobboard_store::ratelimit::MAX_LIMIT),
            alert_hour: {
                let h = l.alert_hour.unwrap_or(7);
                anyhow::ensure!(h < 24, "alert_hour must be 0 to 23 (UTC), not {h}");
                h
            },
            audit_keep_days: l.audit_keep_days.unwrap_or(365),
            trusted_proxies,
            webhooks: WebhookConfig {
                allow_private_targets: w.allow_private_targets.unwrap_or(false),
                allowed_cidrs: w.allowed_cidrs.unwrap_or_default(),
                retry_schedule: schedule.into_iter().map(Duration::from_secs).collect(),
                disable_after: Duration::from_secs(w.disable_after.unwrap_or(432_000)),
                delivery_log_days: w.delivery_log_days.unwrap_or(90),
                timeout: Duration::from_secs(timeout),
                concurrency,
                concurrency_per_target: per_target,
            },
            indexing,
            mail: jobboard_delivery::mail::MailConfig::resolve(l.mail)?,
            dashboard: resolve_dashboard(&l.dashboard)?,
            domain_check_resolve: Vec::new(),
        })
    }
}

fn resolve_dashboard(d: &DashboardLayer) -> anyhow::Result<jobboard_domain::sessions::Policy> {
    let defaults = jobboard_domain::sessions::Policy::default();
    let secs = |v: Option<u64>, default: Duration, name: &str| -> anyhow::Result<Duration> {
        match v {
            None => Ok(default),
            Some(0) => anyhow::bail!("dashboard.{name} must be at least 1 second"),
            Some(n) => Ok(Duration::from_secs(n)),
        }
    };
    let count = |v: Option<u32>, default: u32, name: &str| -> anyhow::Result<u32> {
        match v {
            None => Ok(default),
            Some(0) => anyhow::bail!("dashboard.{name} must be at least 1"),
            Some(n) => Ok(n),
        }
    };
    let policy = jobboard_domain::sessions::Policy {
        idle: secs(
            d.session_idle_timeout,
            defaults.idle,
            "session_idle_timeout",
        )?,
        lifetime: secs(d.session_lifetime, defaults.lifetime, "session_lifetime")?,
        setup_link_lifetime: secs(
            d.setup_link_lifetime,
            defaults.setup_link_lifetime,
            "setup_link_lifetime",
        )?,
        attempts_per_account: count(
            d.login_attempts_per_account,
            defaults.attempts_per_account,
            "login_attempts_per_account",
        )?,
        attempts_per_address: count(
            d.login_attempts_per_address,
            defaults.attempts_per_address,
            "login_attempts_per_address",
        )?,
        attempts_window: secs(
            d.login_attempts_window,
            defaults.attempts_window,
            "login_attempts_window",
        )?,
        free_failures: count(
            d.login_free_failures,
            defaults.free_failures,
            "login_free_failures",
        )?,
        delay: secs(d.login_delay, defaults.delay, "login_delay")?,
        delay_max: secs(d.login_delay_max, defaults.delay_max, "login_delay_max")?,
    };
    anyhow::ensure!(
        policy.delay <= policy.delay_max,
        "dashboard.login_delay must not exceed dashboard.login_delay_max"
    );
    anyhow::ensure!(
        policy.idle <= policy.lifetime,
        "dashboard.session_idle_timeout must not exceed dashboard.session_lifetime"
    );
    Ok(policy)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trusted_proxies_must_be_addresses_or_ranges() {
        let layer = |v: &str| Layer {
            trusted_proxies: Some(vec!["10.0.0.0/8".into(), v.into()]),
            ..Layer::default()
        };
        let c = Config::load(None, &layer("192.0.2.1")).unwrap();
        assert_eq!(c.trusted_proxies.len(), 2);
        assert!(c.trusted_proxies[0].contains("10.2.3.4".parse().unwrap()));
        let err = Config::load(None, &layer("proxy.internal")).unwrap_err();
        assert!(format!("{err:#}").contains("trusted_proxies"), "{err:#}");
        assert!(
            Config::load(None, &Layer::default())
                .unwrap()
                .trusted_proxies
                .is_empty()
        );
    }

    #[test]
    fn the_search_engines_endpoints_are_settings() {
        let c = Config::load(None, &Layer::default()).unwrap();
        assert_eq!(c.indexing.indexnow_url, "https://api.indexnow.org/indexnow");
        assert_eq!(
            c.indexing.google_indexing_url,
            "https://indexing.googleapis.com/v3/urlNotifications:publish"
        );
        assert_eq!(
            c.indexing.google_token_url,
            "https://oauth2.googleapis.com/token"
        );
        let top = Layer {
            indexnow_url: Some("http://127.0.0.1:9/indexnow".into()),
            google_token_url: Some("http://127.0.0.1:9/token".into()),
            ..Layer::default()
        };
        let c = Config::load(None, &top).unwrap();
        assert_eq!(c.indexing.indexnow_url, "http://127.0.0.1:9/indexnow");
        assert_eq!(c.indexing.google_token_url, "http://127.0.0.1:9/token");
        let bad = Layer {
            google_indexing_url: Some("indexing.example".into()),
            ..Layer::default()
        };
        let err = Config::load(None, &bad).unwrap_err();
        assert!(
            format!("{err:#}").contains("google_indexing_url"),
            "{err:#}"
        );
    }

    #[test]
    fn embedded_defaults_match_the_contract() {
        let c = Config::load(None, &Layer::default()).unwrap();
        assert_eq!(c.listen.to_string(), "127.0.0.1:8080");
        assert_eq!(c.database, "sqlite://jobboard.db");
        assert_eq!(
            (
                c.default_read_limit,
                c.default_write_limit,
                c.auth_failure_limit
            ),
            (100, 30, 20)
        );
        let secs: Vec<u64> = c
            .webhooks
            .retry_schedule
            .iter()
            .map(Duration::as_secs)
            .collect();
        assert_eq!(secs, [5, 300, 1800, 7200, 18000, 36000, 36000]);
        assert_eq!(c.webhooks.timeout, Duration::from_secs(15));
        assert_eq!(c.webhooks.disable_after, Duration::from_secs(5 * 24 * 3600));
        assert!(c.api && c.worker && c.scheduler);
        let mail: Vec<u64> = c
            .mail
            .retry_schedule
            .iter()
            .map(Duration::as_secs)
            .collect();
        assert_eq!(mail, [60, 300, 1800, 7200, 21600]);
        assert!(
            !c.mail.enabled(),
            "no mail is sent unless an SMTP server is set"
        );
        assert_eq!(c.body_read_timeout, Duration::from_secs(10));
        assert!(c.body_read_timeout < c.request_timeout);
        assert_eq!(c.metrics_listen, None);
        assert_eq!(c.metrics_token, None);
        assert_eq!(c.sqlite_synchronous, jobboard_store::Synchronous::Normal);
        assert_eq!(c.dashboard, jobboard_domain::sessions::Policy::default());
    }

    #[test]
    fn hardening_settings_are_checked() {
        let load = |l: Layer| Config::load(None, &l);
        let c = load(Layer {
            metrics_listen: Some("127.0.0.1:9100".into()),
            metrics_token: Some("0123456789abcdef".into()),
            sqlite_synchronous: Some("FULL".into()),
            body_read_timeout: Some(3),
            ..Layer::default()
        })
        .unwrap();
        assert_eq!(c.metrics_listen, Some("127.0.0.1:9100".parse().unwrap()));
        assert_eq!(c.sqlite_synchronous, jobboard_store::Synchronous::Full);
        assert_eq!(c.body_read_timeout, Duration::from_secs(3));
        // The token is kept but never printed.
        assert!(!format!("{c:?}").contains("0123456789abcdef"));
        for bad in [
            Layer {
                metrics_listen: Some("localhost".into()),
                ..Layer::default()
            },
            Layer {
                metrics_token: Some("short".into()),
                ..Layer::default()
            },
            Layer {
                metrics_token: Some("has a space in the middle".into()),
                ..Layer::default()
            },
            Layer {
                sqlite_synchronous: Some("off".into()),
                ..Layer::default()
            },
        ] {
            assert!(load(bad).is_err());
        }
    }

    #[test]
    fn later_layers_win() {
        let top = Layer {
            listen: Some("127.0.0.1:9999".into()),
            ..Layer::default()
        };
        let c = Config::load(None, &top).unwrap();
        assert_eq!(c.listen.port(), 9999);
        assert!(
            Config::load(
                None,
                &Layer {
                    log_format: Some("xml".into()),
                    ..Layer::default()
                }
            )
            .is_err()
        );
    }
}
