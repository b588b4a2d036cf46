//! Webhook delivery: fan-out of outbox events into deliveries, the delivery worker, signed
//! attempts, retries, chat bodies and SSRF protection.
//!
//! ```text
//! events (outbox) --fan_out--> webhook_deliveries --claim (lease)--> attempt --> record
//! ```
//!
//! The worker is the one outbox worker ([`crate::outbox`]) with webhook deliveries as its
//! items: fan-out before each claim, attempts bounded overall (`concurrency`) and per
//! subscription (`concurrency_per_target`), so a slow target only ever occupies its own
//! slots. [`drain`] runs the same steps to completion for tests.

pub mod chat;
mod recorder;
pub mod ssrf;

use std::{
    collections::HashMap,
    sync::Arc,
    time::{Duration, Instant},
};

use hmac::{Hmac, KeyInit, Mac};
use rand::Rng;
use tokio::sync::watch;
use uuid::Uuid;

use jobboard_core::Clock;
use jobboard_store::{
    Backend, Db, Ts,
    events::{OUTBOX_CHANNEL, OUTBOX_WAKE},
};

use jobboard_domain::webhooks::{self as store, Claimed, Next, Outcome, Subscription, TargetType};

use crate::outbox::{self, Limits, Outbox};
use jobboard_domain::WebhookId;

/// The most of a response body kept in the attempt log.
pub const EXCERPT_BYTES: usize = 2048;
/// The longest wait a `Retry-After` header can ask for.
pub const RETRY_AFTER_MAX: Duration = Duration::from_secs(3600);
/// How long past the attempt time-out a claimed delivery stays leased.
const LEASE_MARGIN: Duration = Duration::from_secs(5);
/// How long a shutdown waits for attempts in flight before handing the rest back.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);
/// Events fanned out per transaction.
const FAN_OUT_BATCH: i64 = 500;

pub const USER_AGENT: &str = concat!("jobboard-webhooks/", env!("CARGO_PKG_VERSION"));

/// The webhook settings (`[webhooks]` of the configuration).
#[derive(Debug, Clone)]
pub struct WebhookConfig {
    pub allow_private_targets: bool,
    pub allowed_cidrs: Vec<String>,
    pub retry_schedule: Vec<Duration>,
    pub disable_after: Duration,
    /// Days a finished delivery stays in the delivery log; 0: kept.
    pub delivery_log_days: u32,
    pub timeout: Duration,
    pub concurrency: usize,
    pub concurrency_per_target: usize,
}

/// What the delivery worker needs of the running service: its database and settings.
#[derive(Debug, Clone)]
pub struct Setup {
    pub db: Db,
    pub config: WebhookConfig,
    /// Base URL that relative links of chat bodies are made absolute with.
    pub public_url: String,
}

/// A use of the outbox worker reads its setup through [`HasSetup`].
pub use crate::outbox::HasSetup;

impl HasSetup<Setup> for Setup {
    fn setup(&self) -> Setup {
        self.clone()
    }
}

/// Lowercase hex HMAC-SHA256 of `body` keyed with `secret`.
pub fn sign(secret: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes())
        .expect("HMAC takes keys of any length");
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}

/// The `webhook-signature` of the Standard Webhooks specification: `v1,` and the base64
/// HMAC-SHA256, keyed by the secret's own bytes, of `{id}.{timestamp}.{body}`. A receiver
/// verifies it with any Standard Webhooks library given `whsec_` + base64 of the secret.
pub fn standard_signature(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> String {
    use base64::Engine;
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes())
        .expect("HMAC takes keys of any length");
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
    )
}

/// Sends attempts and records them.
pub struct Sender {
    db: Db,
    config: WebhookConfig,
    public_url: String,
    policy: Arc<ssrf::Policy>,
    client: reqwest::Client,
    owner: Uuid,
}

impl Sender {
    pub fn new(setup: &Setup) -> anyhow::Result<Sender> {
        crate::init_tls();
        let config = setup.config.clone();
        let policy = Arc::new(ssrf::Policy::new(&config));
        let client = reqwest::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(config.timeout)
            .connect_timeout(config.timeout)
            .user_agent(USER_AGENT)
            .dns_resolver(Arc::new(ssrf::Resolver(policy.clone())))
            .pool_max_idle_per_host(config.concurrency)
            .build()?;
        Ok(Sender {
            db: setup.db.clone(),
            public_url: setup.public_url.clone(),
            config,
            policy,
            client,
            owner: Uuid::now_v7(),
        })
    }

    fn lease(&self) -> chrono::Duration {
        chrono::Duration::from_std(self.config.timeout + LEASE_MARGIN).unwrap_or_default()
    }

    /// Claims up to `limit` due deliveries.
    async fn claim_due(&self, now: Ts, limit: usize, per_target: usize) -> Vec<Claimed> {
        let res = store::claim(
            &self.db,
            self.owner,
            now,
            now.plus(self.lease()),
            limit as i64,
            per_target as i64,
        )
        .await;
        res.unwrap_or_else(|e| {
            tracing::warn!(error = ?e, "claiming webhook deliveries failed");
            Vec::new()
        })
    }

    /// The body bytes for the subscription's target type.
    fn body(&self, sub: &Subscription, d: &Claimed) -> Vec<u8> {
        let chat = match sub.target_type {
            TargetType::Webhook => return d.payload.clone().into_bytes(),
            TargetType::ChatA => chat::chat_a,
            TargetType::ChatB => chat::chat_b,
        };
        let payload: serde_json::Value = serde_json::from_str(&d.payload).unwrap_or_default();
        chat(&payload, &self.public_url).to_string().into_bytes()
    }

    /// Sends one attempt; returns what happened and the `Retry-After` asked for, if any.
    async fn send(&self, sub: &Subscription, d: &Claimed) -> (Outcome, Option<Duration>) {
        let attempted_at = self.db.now();
        let start = Instant::now();
        let fail = |error: String, start: Instant| Outcome {
            status_code: None,
            error: Some(error),
            duration_ms: start.elapsed().as_millis() as i64,
            response_excerpt: None,
            attempted_at,
        };
        let url = match reqwest::Url::parse(&sub.target_url) {
            Ok(u) => u,
            Err(e) => return (fail(format!("invalid target URL: {e}"), start), None),
        };
        if let Err(e) = self.policy.check_literal(&url) {
            return (fail(e, start), None);
        }
        let body = self.body(sub, d);
        let mut req = self
            .client
            .post(url)
            .header("content-type", "application/json")
            .header("x-service-event", &d.event_type)
            .header("x-service-delivery", d.id.to_string());
        if sub.target_type == TargetType::Webhook {
            // The Standard Webhooks headers beside our own: the delivery id (the same on
            // every retry, for deduplication) and the attempt's time, both signed.
            let id = d.id.to_string();
            let timestamp = attempted_at.0.timestamp();
            req = req
                .header("webhook-id", &id)
                .header("webhook-timestamp", timestamp.to_string());
            // During a secret rotation the replaced secret signs too: its hex signature in
            // `X-Service-Signature-Previous`, its Standard Webhooks signature after the
            // current one in `webhook-signature` (space-separated, as the specification
            // allows), so a receiver holding either secret verifies.
            let secrets = sub.signing_secrets(attempted_at);
            if let Some(current) = secrets.first() {
                req = req.header("x-service-signature", sign(current, &body));
                if let Some(previous) = secrets.get(1) {
                    req = req.header("x-service-signature-previous", sign(previous, &body));
                }
                let standard: Vec<String> = secrets
                    .iter()
                    .map(|s| standard_signature(s, &id, timestamp, &body))
                    .collect();
                req = req.header("webhook-signature", standard.join(" "));
            }
        }
        let mut res = match req.body(body).send().await {
            Ok(r) => r,
            Err(e) => return (fail(describe(&e), start), None),
        };
        let status = res.status();
        let retry_after = res
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after);
        let mut excerpt = Vec::new();
        let mut read_error = None;
        while excerpt.len() < EXCERPT_BYTES {
            match res.chunk().await {
                Ok(Some(c)) => excerpt.extend_from_slice(&c),
                Ok(None) => break,
                Err(e) => {
                    read_error = Some(describe(&e));
                    break;
                }
            }
        }
        let ok = status.is_success();
        let error = if ok {
            None
        } else {
            Some(read_error.unwrap_or_else(|| format!("HTTP status {}", status.as_u16())))
        };
        (
            Outcome {
                status_code: Some(i64::from(status.as_u16())),
                error,
                duration_ms: start.elapsed().as_millis() as i64,
                response_excerpt: Some(excerpt_text(&excerpt)),
                attempted_at,
            },
            retry_after,
        )
    }

    /// What follows a failed attempt: the next retry (schedule with jitter, at least as late
    /// as a `Retry-After` within bounds) or failure.
    fn after_failure(&self, d: &Claimed, now: Ts, retry_after: Option<Duration>) -> Next {
        let Some(delay) = usize::try_from(d.retry_step)
            .ok()
            .and_then(|i| self.config.retry_schedule.get(i))
        else {
            return Next::Failed;
        };
        let jitter = rand::rng().random_range(0.9..=1.1);
        let mut wait = delay.mul_f64(jitter);
        if let Some(ra) = retry_after {
            wait = wait.max(ra.min(RETRY_AFTER_MAX.max(*delay)));
        }
        Next::RetryAt(now.plus(chrono::Duration::from_std(wait).unwrap_or_default()))
    }

    /// The subscriptions of a claimed batch; on failure the batch is handed back.
    async fn targets(&self, claimed: &[Claimed]) -> Option<HashMap<WebhookId, Arc<Subscription>>> {
        let mut ids: Vec<WebhookId> = claimed.iter().map(|d| d.subscription_id).collect();
        ids.sort();
        ids.dedup();
        match store::targets(&self.db, &ids).await {
            Ok(found) => Some(found.into_iter().map(|(k, v)| (k, Arc::new(v))).collect()),
            Err(e) => {
                tracing::warn!(error = ?e, "loading webhook subscriptions failed");
                let ids: Vec<Uuid> = claimed.iter().map(|d| d.id).collect();
                let _ = store::release(&self.db, self.owner, &ids).await;
                None
            }
        }
    }

    /// Sends a claimed delivery to `sub` (as loaded after the claim) and records the attempt.
    pub async fn process(&self, d: Claimed, sub: Option<Arc<Subscription>>, clock: Clock) {
        let sub = match sub {
            Some(s) if s.is_enabled => s,
            _ => {
                // Deleted or disabled meanwhile: hand it back.
                let _ = store::release(&self.db, self.owner, &[d.id]).await;
                return;
            }
        };
        let (outcome, retry_after) = self.send(&sub, &d).await;
        let now = clock.now();
        let next = match outcome.status_code {
            Some(s) if (200..300).contains(&s) => Next::Succeeded,
            Some(410) => Next::Gone,
            _ => self.after_failure(&d, now, retry_after),
        };
        let disable_after = self.config.disable_after.as_micros() as i64;
        let (id, status) = (d.id, outcome.status_code);
        match recorder::record(&self.db, self.owner, d, outcome, next, now, disable_after).await {
            Ok(true) => {
                tracing::debug!(delivery = %id, subscription = %sub.id, ?status, ?next, "webhook attempt")
            }
            Ok(false) => {
                tracing::debug!(delivery = %id, "webhook lease lost before recording")
            }
            Err(e) => {
                tracing::warn!(error = ?e, delivery = %id, "recording a webhook attempt failed")
            }
        }
    }
}

/// A readable error with its causes, without the request URL repeated.
fn describe(e: &reqwest::Error) -> String {
    let mut msg = if e.is_timeout() {
        "timed out".to_string()
    } else if e.is_connect() {
        "connection failed".to_string()
    } else if e.is_redirect() {
        "redirect not followed".to_string()
    } else {
        "request failed".to_string()
    };
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        msg.push_str(": ");
        msg.push_str(&s.to_string());
        source = s.source();
    }
    msg.chars().take(1000).collect()
}

/// At most [`EXCERPT_BYTES`] of the body as text, cut at a character boundary.
fn excerpt_text(bytes: &[u8]) -> String {
    let mut b = &bytes[..bytes.len().min(EXCERPT_BYTES)];
    // A character cut at the end is dropped rather than replaced.
    if let Err(e) = std::str::from_utf8(b)
        && e.error_len().is_none()
    {
        b = &b[..e.valid_up_to()];
    }
    let s = String::from_utf8_lossy(b);
    let mut end = s.len().min(EXCERPT_BYTES);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

/// `Retry-After` as seconds or an HTTP date.
fn parse_retry_after(v: &str) -> Option<Duration> {
    if let Ok(secs) = v.trim().parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = chrono::DateTime::parse_from_rfc2822(v.trim()).ok()?;
    let secs = at.timestamp() - chrono::Utc::now().timestamp();
    Some(Duration::from_secs(secs.max(0) as u64))
}

/// Fans out every pending event into deliveries; returns the deliveries written.
pub async fn fan_out_all(db: &Db) -> usize {
    let mut written = 0;
    loop {
        match store::fan_out(db, FAN_OUT_BATCH).await {
            Ok((0, _)) => return written,
            Ok((_, n)) => written += n,
            Err(e) => {
                tracing::warn!(error = ?e, "webhook fan-out failed");
                return written;
            }
        }
    }
}

impl Setup {
    fn limits(&self) -> Limits {
        Limits {
            concurrency: self.config.concurrency,
            per_group: self.config.concurrency_per_target,
            drain_batch: 10_000,
            grace: SHUTDOWN_GRACE,
        }
    }
}

/// Webhook deliveries as an outbox: fan-out before each claim, grouped by subscription.
impl Outbox for Sender {
    type Item = (Claimed, Option<Arc<Subscription>>);

    const NAME: &'static str = "webhook";

    fn wake(&self) -> &'static tokio::sync::Notify {
        &OUTBOX_WAKE
    }

    fn channel(&self) -> &'static str {
        OUTBOX_CHANNEL
    }

    fn id(item: &Self::Item) -> Uuid {
        item.0.id
    }

    fn group(item: &Self::Item) -> Option<Uuid> {
        Some(item.0.subscription_id.0)
    }

    async fn start(&self) {
        if self.db.backend() == Backend::Sqlite {
            // One node: leases left by a previous process are void.
            if let Err(e) = store::release_all(&self.db).await {
                tracing::warn!(error = ?e, "releasing stale webhook leases failed");
            }
        }
    }

    async fn prepare(&self) {
        fan_out_all(&self.db).await;
    }

    async fn claim(&self, now: Ts, limit: usize, per_group: usize) -> Vec<Self::Item> {
        let claimed = self.claim_due(now, limit, per_group).await;
        if claimed.is_empty() {
            return Vec::new();
        }
        let Some(subs) = self.targets(&claimed).await else {
            return Vec::new();
        };
        claimed
            .into_iter()
            .map(|d| {
                let sub = subs.get(&d.subscription_id).cloned();
                (d, sub)
            })
            .collect()
    }

    async fn deliver(&self, (d, sub): Self::Item, clock: Clock) {
        self.process(d, sub, clock).await
    }

    async fn release(&self, ids: &[Uuid]) {
        if let Err(e) = store::release(&self.db, self.owner, ids).await {
            tracing::warn!(error = ?e, "releasing webhook leases failed");
        }
    }

    async fn next_due(&self) -> Option<Ts> {
        store::next_due(&self.db).await.ok().flatten()
    }
}

/// Runs fan-out and every due attempt until nothing is due at `clock`; returns the number
/// of attempts made. For tests and tools: deterministic, no background task involved.
pub async fn drain_with(setup: impl HasSetup<Setup>, clock: Clock) -> usize {
    let setup = setup.setup();
    match Sender::new(&setup) {
        Ok(s) => outbox::drain(Arc::new(s), setup.limits(), clock).await,
        Err(e) => {
            tracing::warn!(error = ?e, "webhook client could not be built");
            0
        }
    }
}

/// [`drain_with`] at the time of the setup's database (the service's clock).
pub async fn drain(setup: impl HasSetup<Setup>) -> usize {
    let setup = setup.setup();
    let clock = setup.db.clock().clone();
    drain_with(setup, clock).await
}

/// The delivery worker: runs until `stop`, then hands unfinished attempts back.
pub async fn run(setup: impl HasSetup<Setup>, stop: watch::Receiver<bool>) {
    let setup = setup.setup();
    match Sender::new(&setup) {
        Ok(s) => outbox::run(Arc::new(s), setup.limits(), &setup.db, stop).await,
        Err(e) => tracing::error!(error = ?e, "webhook worker could not start"),
    }
}
