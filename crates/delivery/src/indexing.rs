//! The indexing worker: delivers the notices job changes leave for search engines
//! (`jobboard_domain::indexing`) through the shared outbox loop, to each engine as it
//! documents itself:
//!
//! - **IndexNow** (`POST {indexnow_url}`, JSON `host`, `key`, `keyLocation`, `urlList`):
//!   one request per organization's batch; the engine checks the key against
//!   `{board}/{key}.txt`, which the board serves. `200`/`202` take the batch; `429` is
//!   tried again in an hour; `400`, `403` and `422` are refused for good.
//! - **Google Indexing API** (`POST {google_indexing_url}` with `url` and `type`
//!   `URL_UPDATED` or `URL_DELETED`, a bearer token): the token comes from
//!   `{google_token_url}` for a JWT the service account's key signs (RS256, scope
//!   `https://www.googleapis.com/auth/indexing`), kept until shortly before it expires.
//!   `429` (the engine's own quota spent) waits for the next quota day; `401` drops the
//!   token and tries again; `400`, `403` and `404` are refused for good.
//!
//! Anything else (a time-out, a `5xx`) is tried again after 1 and 5 minutes, 30 minutes,
//! 2 and 6 hours, then daily for three days, then recorded as failed.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use base64::{Engine as _, engine::general_purpose::URL_SAFE_NO_PAD};
use jobboard_core::Clock;
use jobboard_domain::{
    OrgId,
    indexing::{
        Action, Engine, next_quota_day,
        store::{self, Batch, CHANNEL, Outcome, WAKE},
    },
};
use jobboard_store::{Db, Outgoing, Ts};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::watch;
use uuid::Uuid;

use crate::outbox::{self, Limits, Outbox};

/// How long a claim holds its notices.
const LEASE: Duration = Duration::from_secs(120);
/// One request's time limit.
const TIMEOUT: Duration = Duration::from_secs(30);
/// The waits before each retry, in seconds.
const RETRIES: &[u64] = &[60, 300, 1_800, 7_200, 21_600, 86_400, 86_400, 86_400];
/// The scope of the Indexing API.
const SCOPE: &str = "https://www.googleapis.com/auth/indexing";

/// Where the engines are (settings: tests point them at a stand-in).
#[derive(Debug, Clone)]
pub struct Endpoints {
    pub indexnow_url: String,
    pub google_indexing_url: String,
    pub google_token_url: String,
}

impl Default for Endpoints {
    fn default() -> Self {
        Endpoints {
            indexnow_url: "https://api.indexnow.org/indexnow".into(),
            google_indexing_url: "https://indexing.googleapis.com/v3/urlNotifications:publish"
                .into(),
            google_token_url: "https://oauth2.googleapis.com/token".into(),
        }
    }
}

/// What the worker needs.
#[derive(Clone)]
pub struct Setup {
    pub db: Db,
    pub endpoints: Endpoints,
    /// Where the boards' pages are (their own domain, else the service's address).
    pub links: Outgoing,
}

/// A use of the outbox worker reads its setup through [`HasSetup`].
pub use crate::outbox::HasSetup;

impl HasSetup<Setup> for Setup {
    fn setup(&self) -> Setup {
        self.clone()
    }
}

/// A service account's key as Google issues it (a JSON file); only what signing needs.
#[derive(Debug, Clone, Deserialize)]
pub struct ServiceAccount {
    pub client_email: String,
    private_key: String,
    #[serde(default)]
    private_key_id: Option<String>,
}

impl ServiceAccount {
    /// Reads and checks a key file's text: a service account with an RSA private key.
    pub fn parse(text: &str) -> anyhow::Result<ServiceAccount> {
        let a: ServiceAccount = serde_json::from_str(text).map_err(|e| {
            anyhow::anyhow!(
                "not a service account key (JSON with client_email and private_key): {e}"
            )
        })?;
        anyhow::ensure!(
            a.client_email.contains('@'),
            "the key's client_email is not an address"
        );
        a.key_pair()?;
        Ok(a)
    }

    fn key_pair(&self) -> anyhow::Result<ring::signature::RsaKeyPair> {
        let body: String = self
            .private_key
            .lines()
            .filter(|l| !l.starts_with("-----"))
            .collect();
        let der = base64::engine::general_purpose::STANDARD
            .decode(body.trim())
            .map_err(|_| anyhow::anyhow!("the key's private_key is not PEM"))?;
        ring::signature::RsaKeyPair::from_pkcs8(&der)
            .map_err(|e| anyhow::anyhow!("the key's private_key is not an RSA key: {e}"))
    }

    /// The signed assertion (RFC 7523) exchanged for a token at `token_url`, issued at
    /// the real time (the engine checks it against its own clock).
    pub fn assertion(&self, token_url: &str) -> anyhow::Result<String> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        let mut header = json!({"alg": "RS256", "typ": "JWT"});
        if let Some(kid) = &self.private_key_id {
            header["kid"] = json!(kid);
        }
        let claims = json!({
            "iss": self.client_email,
            "scope": SCOPE,
            "aud": token_url,
            "iat": now,
            "exp": now + 3_600,
        });
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let pair = self.key_pair()?;
        let mut sig = vec![0; pair.public().modulus_len()];
        pair.sign(
            &ring::signature::RSA_PKCS1_SHA256,
            &ring::rand::SystemRandom::new(),
            input.as_bytes(),
            &mut sig,
        )
        .map_err(|_| anyhow::anyhow!("signing failed"))?;
        Ok(format!("{input}.{}", URL_SAFE_NO_PAD.encode(sig)))
    }
}

/// A bearer token and when to stop using it.
#[derive(Clone)]
struct Token {
    value: String,
    until: std::time::Instant,
}

/// The indexing outbox.
pub struct Indexer {
    setup: Setup,
    client: reqwest::Client,
    /// This worker, as its leases name it.
    owner: Uuid,
    tokens: Mutex<HashMap<OrgId, Token>>,
}

/// Why a request did not go through.
enum Refusal {
    /// Try again at this time.
    Later(String, Option<Ts>),
    /// Refused for good.
    Never(String),
}

impl Indexer {
    pub fn new(setup: Setup) -> anyhow::Result<Indexer> {
        Ok(Indexer {
            setup,
            client: crate::api_client(TIMEOUT)?,
            owner: Uuid::now_v7(),
            tokens: Mutex::new(HashMap::new()),
        })
    }

    async fn deliver_batch(&self, batch: &Batch, clock: &Clock) -> Result<(), Refusal> {
        let account = store::account(&self.setup.db, batch.org_id)
            .await
            .map_err(|e| Refusal::Later(format!("reading the account failed: {e}"), None))?
            .ok_or_else(|| Refusal::Never("the organization is gone".into()))?;
        let domain = account.domain.as_deref();
        match batch.engine {
            Engine::IndexNow => {
                let key = account
                    .indexnow_key
                    .ok_or_else(|| Refusal::Never("the IndexNow key was removed".into()))?;
                let home = self.setup.links.board_url(domain, "/");
                let host = reqwest::Url::parse(&home)
                    .ok()
                    .and_then(|u| u.host_str().map(str::to_string))
                    .unwrap_or_default();
                let urls: Vec<String> = batch
                    .notices
                    .iter()
                    .map(|n| self.setup.links.board_url(domain, &n.path))
                    .collect();
                let body = json!({
                    "host": host,
                    "key": key,
                    "keyLocation": self.setup.links.board_url(domain, &format!("/{key}.txt")),
                    "urlList": urls,
                });
                let res = self
                    .client
                    .post(&self.setup.endpoints.indexnow_url)
                    .header("content-type", "application/json; charset=utf-8")
                    .body(body.to_string())
                    .send()
                    .await;
                match res {
                    Ok(r) if matches!(r.status().as_u16(), 200 | 202) => Ok(()),
                    Ok(r) => {
                        let status = r.status().as_u16();
                        let why = answer(r).await;
                        Err(match status {
                            429 => Refusal::Later(
                                why,
                                Some(clock.now().later_by(Duration::from_secs(3_600))),
                            ),
                            400 | 403 | 422 => Refusal::Never(why),
                            _ => Refusal::Later(why, None),
                        })
                    }
                    Err(e) => Err(Refusal::Later(format!("IndexNow: {e}"), None)),
                }
            }
            Engine::Google => {
                let key = account
                    .google_indexing_key
                    .ok_or_else(|| Refusal::Never("the Google key was removed".into()))?;
                let notice = &batch.notices[0];
                let token = self.token(batch.org_id, &key).await?;
                let kind = match notice.action {
                    Action::Updated => "URL_UPDATED",
                    Action::Deleted => "URL_DELETED",
                };
                let res = self
                    .client
                    .post(&self.setup.endpoints.google_indexing_url)
                    .bearer_auth(&token)
                    .json(&json!({"url": self.setup.links.board_url(domain, &notice.path), "type": kind}))
                    .send()
                    .await;
                match res {
                    Ok(r) if r.status().is_success() => Ok(()),
                    Ok(r) => {
                        let status = r.status().as_u16();
                        let why = answer(r).await;
                        Err(match status {
                            401 => {
                                self.forget(batch.org_id);
                                Refusal::Later(why, None)
                            }
                            429 => Refusal::Later(why, Some(next_quota_day(clock.now()))),
                            400 | 403 | 404 => Refusal::Never(why),
                            _ => Refusal::Later(why, None),
                        })
                    }
                    Err(e) => Err(Refusal::Later(format!("Google: {e}"), None)),
                }
            }
        }
    }

    fn forget(&self, org: OrgId) {
        self.tokens
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&org);
    }

    /// A bearer token of the organization's service account: the one kept, else a new
    /// one for a signed assertion.
    async fn token(&self, org: OrgId, key: &str) -> Result<String, Refusal> {
        if let Some(t) = self
            .tokens
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&org)
            .filter(|t| t.until > std::time::Instant::now())
        {
            return Ok(t.value.clone());
        }
        let account = ServiceAccount::parse(key)
            .map_err(|e| Refusal::Never(format!("the Google key is unusable: {e}")))?;
        let url = &self.setup.endpoints.google_token_url;
        let assertion = account
            .assertion(url)
            .map_err(|e| Refusal::Never(format!("the Google key is unusable: {e}")))?;
        let res = self
            .client
            .post(url)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(
                serde_urlencoded::to_string([
                    ("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"),
                    ("assertion", assertion.as_str()),
                ])
                .unwrap_or_default(),
            )
            .send()
            .await
            .map_err(|e| Refusal::Later(format!("Google token: {e}"), None))?;
        let status = res.status().as_u16();
        if !res.status().is_success() {
            let why = format!("Google token: {}", answer(res).await);
            // A key Google refuses (deleted, disabled) stays refused.
            return Err(if matches!(status, 400 | 401 | 403) {
                Refusal::Never(why)
            } else {
                Refusal::Later(why, None)
            });
        }
        #[derive(Deserialize)]
        struct Granted {
            access_token: String,
            #[serde(default)]
            expires_in: Option<u64>,
        }
        let granted: Granted = res
            .json()
            .await
            .map_err(|e| Refusal::Later(format!("Google token: {e}"), None))?;
        let life = granted.expires_in.unwrap_or(3_600).saturating_sub(60);
        self.tokens
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(
                org,
                Token {
                    value: granted.access_token.clone(),
                    until: std::time::Instant::now() + Duration::from_secs(life),
                },
            );
        Ok(granted.access_token)
    }

    async fn process(&self, batch: Batch, clock: Clock) {
        let now = clock.now();
        let tried = batch.notices.iter().map(|n| n.attempts).max().unwrap_or(0);
        let outcome = match self.deliver_batch(&batch, &clock).await {
            Ok(()) => Outcome::Sent,
            Err(Refusal::Never(error)) => Outcome::Failed { error },
            Err(Refusal::Later(error, at)) => {
                match at.or_else(|| {
                    RETRIES
                        .get(usize::try_from(tried).unwrap_or(usize::MAX))
                        .map(|s| now.later_by(Duration::from_secs(*s)))
                }) {
                    Some(at) => Outcome::Retry { error, at },
                    None => Outcome::Failed { error },
                }
            }
        };
        let failed = match &outcome {
            Outcome::Sent => None,
            Outcome::Retry { error, .. } | Outcome::Failed { error } => Some(error.clone()),
        };
        if let Some(error) = failed {
            tracing::warn!(org_id = batch.org_id.0, engine = batch.engine.as_str(), notices = batch.notices.len(), %error, "search engine notice not delivered");
        }
        if let Err(e) = store::record(&self.setup.db, batch.id, clock.now(), outcome).await {
            tracing::warn!(error = ?e, "recording a search engine notice failed");
        }
    }
}

/// An engine's answer, short, for the log and the notice.
async fn answer(r: reqwest::Response) -> String {
    let status = r.status().as_u16();
    let body = r.text().await.unwrap_or_default();
    let body: String = body.chars().take(300).collect();
    format!("{status} {}", body.trim())
}

impl Outbox for Indexer {
    type Item = Batch;

    const NAME: &'static str = "indexing";

    fn wake(&self) -> &'static tokio::sync::Notify {
        &WAKE
    }

    fn channel(&self) -> &'static str {
        CHANNEL
    }

    fn id(item: &Batch) -> Uuid {
        item.id
    }

    async fn claim(&self, now: Ts, limit: usize, _per_group: usize) -> Vec<Batch> {
        let until = now.later_by(LEASE);
        match store::claim(&self.setup.db, self.owner, now, until, limit).await {
            Ok(b) => b,
            Err(e) => {
                tracing::warn!(error = ?e, "claiming search engine notices failed");
                Vec::new()
            }
        }
    }

    async fn deliver(&self, item: Batch, clock: Clock) {
        self.process(item, clock).await
    }

    async fn release(&self, ids: &[Uuid]) {
        if let Err(e) = store::release(&self.setup.db, self.owner, ids).await {
            tracing::warn!(error = ?e, "releasing search engine notices failed");
        }
    }

    async fn next_due(&self) -> Option<Ts> {
        store::next_due(&self.setup.db).await.ok().flatten()
    }
}

fn limits() -> Limits {
    Limits {
        concurrency: 8,
        per_group: 8,
        drain_batch: 8,
        grace: Duration::from_secs(10),
    }
}

/// Delivers every notice due at `clock` until none is left; returns the deliveries
/// tried. For tests and tools: deterministic, no background task involved.
pub async fn drain_with(setup: impl HasSetup<Setup>, clock: Clock) -> usize {
    match Indexer::new(setup.setup()) {
        Ok(i) => outbox::drain(Arc::new(i), limits(), clock).await,
        Err(e) => {
            tracing::warn!(error = ?e, "the indexing client could not be built");
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

/// The indexing worker: delivers due notices until `stop`.
pub async fn run(setup: impl HasSetup<Setup>, stop: watch::Receiver<bool>) {
    let setup = setup.setup();
    let db = setup.db.clone();
    match Indexer::new(setup) {
        Ok(i) => outbox::run(Arc::new(i), limits(), &db, stop).await,
        Err(e) => tracing::error!(error = ?e, "the indexing worker could not start"),
    }
}
