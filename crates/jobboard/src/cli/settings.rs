//! Settings from the environment and the flags (the layer over the configuration files),
//! and logging.

use jobboard::config::{Layer, WebhookLayer};

use super::{Cli, Command};

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
pub(super) fn top_layer(cli: &Cli) -> anyhow::Result<Layer> {
    let mut l = Layer {
        database: cli.database.clone(),
        db_max_connections: env_parse("JOBBOARD_DB_MAX_CONNECTIONS")?,
        db_page_cache_mb: env_parse("JOBBOARD_DB_PAGE_CACHE_MB")?,
        render_cache_mb: env_parse("JOBBOARD_RENDER_CACHE_MB")?,
        search_index_mb: env_parse("JOBBOARD_SEARCH_INDEX_MB")?,
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
        form_limit: env_parse("JOBBOARD_FORM_LIMIT")?,
        alert_hour: env_parse("JOBBOARD_ALERT_HOUR")?,
        audit_keep_days: env_parse("JOBBOARD_AUDIT_KEEP_DAYS")?,
        trusted_proxies: env_list("JOBBOARD_TRUSTED_PROXIES"),
        indexnow_url: std::env::var("JOBBOARD_INDEXNOW_URL").ok(),
        google_indexing_url: std::env::var("JOBBOARD_GOOGLE_INDEXING_URL").ok(),
        google_token_url: std::env::var("JOBBOARD_GOOGLE_TOKEN_URL").ok(),
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
            delivery_log_days: env_parse("JOBBOARD_WEBHOOK_DELIVERY_LOG_DAYS")?,
            timeout: env_parse("JOBBOARD_WEBHOOK_TIMEOUT")?,
            concurrency: env_parse("JOBBOARD_WEBHOOK_CONCURRENCY")?,
            concurrency_per_target: env_parse("JOBBOARD_WEBHOOK_CONCURRENCY_PER_TARGET")?,
        },
        mail: jobboard::delivery::mail::MailLayer::from_env()?,
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

pub(super) fn init_logging(json: bool) {
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
