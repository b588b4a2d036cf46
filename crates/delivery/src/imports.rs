//! Reading import sources (docs/distribution.md): one GET of the source's address with
//! the validators of the last read (`If-None-Match`, `If-Modified-Since`), a time-out, a
//! size limit and the webhooks' address rules (no loopback, private or other special
//! address unless allowed, checked at connect time and on every redirect), then the
//! source's parser and the domain's mirror ([`jobboard_domain::imports`]).

use std::{sync::Arc, time::Duration};

use jobboard_domain::{
    Result,
    imports::{self, Counts, Source},
};
use jobboard_store::Db;

use crate::webhooks::{WebhookConfig, ssrf};

/// How long one read may take.
pub const TIMEOUT: Duration = Duration::from_secs(60);

/// The largest body read (a 10,000-job source with full descriptions is about 40 MB).
pub const MAX_BYTES: usize = 64 * 1024 * 1024;

/// What a read of a source gave.
pub enum Fetched {
    /// The source says nothing changed since the validators sent.
    NotModified,
    Body {
        bytes: Vec<u8>,
        etag: Option<String>,
        last_modified: Option<String>,
    },
}

/// The HTTP client of imports.
#[derive(Clone)]
pub struct Fetcher {
    client: reqwest::Client,
    policy: Arc<ssrf::Policy>,
    max_bytes: usize,
}

impl Fetcher {
    /// A client under the address rules of `config` (the webhooks' settings).
    pub fn new(config: &WebhookConfig) -> anyhow::Result<Fetcher> {
        crate::init_tls();
        let policy = Arc::new(ssrf::Policy::new(config));
        let on_redirect = policy.clone();
        let client = reqwest::Client::builder()
            .no_proxy()
            .timeout(TIMEOUT)
            .connect_timeout(Duration::from_secs(10))
            .user_agent(concat!(
                "jobboard/",
                env!("CARGO_PKG_VERSION"),
                " (imports)"
            ))
            .dns_resolver(Arc::new(ssrf::Resolver(policy.clone())))
            .redirect(reqwest::redirect::Policy::custom(move |attempt| {
                if attempt.previous().len() >= 5 {
                    attempt.error("too many redirects")
                } else if let Err(e) = on_redirect.check_literal(attempt.url()) {
                    attempt.error(e)
                } else {
                    attempt.follow()
                }
            }))
            .build()?;
        Ok(Fetcher {
            client,
            policy,
            max_bytes: MAX_BYTES,
        })
    }

    /// The same client with another size limit (tests).
    pub fn with_max_bytes(mut self, max_bytes: usize) -> Fetcher {
        self.max_bytes = max_bytes;
        self
    }

    /// Reads `source`; the error says why in words (for the run's report).
    pub async fn fetch(&self, source: &Source) -> std::result::Result<Fetched, String> {
        let url = reqwest::Url::parse(&source.url).map_err(|_| "not a URL".to_string())?;
        self.policy.check_literal(&url)?;
        let mut req = self.client.get(url);
        if let Some(e) = &source.etag {
            req = req.header("if-none-match", e);
        }
        if let Some(m) = &source.last_modified {
            req = req.header("if-modified-since", m);
        }
        let mut res = req
            .send()
            .await
            .map_err(|e| format!("not reached: {}", e.without_url()))?;
        if res.status() == reqwest::StatusCode::NOT_MODIFIED {
            return Ok(Fetched::NotModified);
        }
        if !res.status().is_success() {
            return Err(format!("answered {}", res.status().as_u16()));
        }
        if res
            .content_length()
            .is_some_and(|n| n > self.max_bytes as u64)
        {
            return Err(format!("larger than {} bytes", self.max_bytes));
        }
        let header = |name: &str| {
            res.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let (etag, last_modified) = (header("etag"), header("last-modified"));
        let mut bytes = Vec::new();
        while let Some(chunk) = res
            .chunk()
            .await
            .map_err(|e| format!("cut off: {}", e.without_url()))?
        {
            if bytes.len() + chunk.len() > self.max_bytes {
                return Err(format!("larger than {} bytes", self.max_bytes));
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(Fetched::Body {
            bytes,
            etag,
            last_modified,
        })
    }
}

/// Runs `source` once: reads it, mirrors what it lists, and records the run. A source
/// that cannot be read, or reads as something its parser refuses, changes nothing.
pub async fn run(db: &Db, fetcher: &Fetcher, source: &Source) -> Result<Counts> {
    let (counts, validators) = match fetcher.fetch(source).await {
        Err(e) => (
            Counts {
                error: Some(e),
                ..Counts::default()
            },
            None,
        ),
        Ok(Fetched::NotModified) => (
            Counts {
                not_modified: true,
                ..Counts::default()
            },
            None,
        ),
        Ok(Fetched::Body {
            bytes,
            etag,
            last_modified,
        }) => match imports::parse::read(source.kind, &bytes, &source.board_name()) {
            Err(imports::Unreadable(e)) => (
                Counts {
                    error: Some(e),
                    ..Counts::default()
                },
                None,
            ),
            Ok(read) => (
                imports::apply(db, source, &read).await?,
                Some((etag, last_modified)),
            ),
        },
    };
    imports::finish(db, source, &counts, validators).await?;
    Ok(counts)
}

/// Runs every source due now, one after another (each claimed, so that several nodes
/// share them); how many ran.
pub async fn run_due(db: &Db, fetcher: &Fetcher) -> Result<u64> {
    let mut ran = 0;
    while let Some(source) = imports::claim_due(db, db.now()).await? {
        run(db, fetcher, &source).await?;
        ran += 1;
    }
    Ok(ran)
}
