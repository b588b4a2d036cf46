//! A webhook receiver on 127.0.0.1 for tests: records every request, verifies signatures
//! with a constant-time comparison, and answers as told per path.

#![allow(dead_code)]

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use axum::{
    body::Bytes,
    extract::State,
    http::{HeaderMap, StatusCode, Uri},
    response::{IntoResponse, Response},
};
use hmac::{Hmac, KeyInit, Mac};
use serde_json::Value;

#[derive(Clone, Debug)]
pub struct Behavior {
    pub status: u16,
    pub retry_after: Option<String>,
    pub delay: Duration,
    pub body: String,
}

impl Default for Behavior {
    fn default() -> Self {
        Behavior {
            status: 200,
            retry_after: None,
            delay: Duration::ZERO,
            body: "ok".into(),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Hit {
    pub path: String,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
    /// `Some(true)` when a signature was sent and verified with the path's secret.
    pub signature_valid: Option<bool>,
}

impl Hit {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("the body is JSON")
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

#[derive(Clone, Default)]
struct RecvState {
    hits: Arc<Mutex<Vec<Hit>>>,
    behavior: Arc<Mutex<HashMap<String, Behavior>>>,
    secrets: Arc<Mutex<HashMap<String, String>>>,
    arrived: Arc<tokio::sync::Notify>,
}

pub struct Receiver {
    pub base: String,
    state: RecvState,
}

/// Verifies a lowercase hex HMAC-SHA256 signature in constant time.
pub fn verify(secret: &str, body: &[u8], signature: &str) -> bool {
    let Ok(raw) = hex::decode(signature) else {
        return false;
    };
    if signature.chars().any(|c| c.is_ascii_uppercase()) {
        return false;
    }
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(body);
    mac.verify_slice(&raw).is_ok()
}

async fn handle(State(s): State<RecvState>, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    let path = uri.path().to_string();
    let signature_valid = headers
        .get("x-service-signature")
        .and_then(|v| v.to_str().ok())
        .map(|sig| {
            let secret = s.secrets.lock().unwrap().get(&path).cloned();
            secret.is_some_and(|k| verify(&k, &body, sig))
        });
    let behavior = s
        .behavior
        .lock()
        .unwrap()
        .get(&path)
        .cloned()
        .unwrap_or_default();
    s.hits.lock().unwrap().push(Hit {
        path,
        headers,
        body: body.to_vec(),
        signature_valid,
    });
    s.arrived.notify_waiters();
    if !behavior.delay.is_zero() {
        tokio::time::sleep(behavior.delay).await;
    }
    let mut res = (
        StatusCode::from_u16(behavior.status).unwrap(),
        behavior.body.clone(),
    )
        .into_response();
    if let Some(ra) = &behavior.retry_after {
        res.headers_mut().insert("retry-after", ra.parse().unwrap());
    }
    res
}

impl Receiver {
    pub async fn start() -> Receiver {
        let state = RecvState::default();
        let app = axum::Router::new()
            .fallback(handle)
            .with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Receiver {
            base: format!("http://{addr}"),
            state,
        }
    }

    pub fn port(&self) -> u16 {
        self.base.rsplit(':').next().unwrap().parse().unwrap()
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub fn answer(&self, path: &str, b: Behavior) {
        self.state
            .behavior
            .lock()
            .unwrap()
            .insert(path.to_string(), b);
    }

    pub fn status(&self, path: &str, status: u16) {
        self.answer(
            path,
            Behavior {
                status,
                ..Behavior::default()
            },
        );
    }

    pub fn secret(&self, path: &str, secret: &str) {
        self.state
            .secrets
            .lock()
            .unwrap()
            .insert(path.to_string(), secret.to_string());
    }

    pub fn hits(&self, path: &str) -> Vec<Hit> {
        self.state
            .hits
            .lock()
            .unwrap()
            .iter()
            .filter(|h| h.path == path)
            .cloned()
            .collect()
    }

    pub fn all(&self) -> Vec<Hit> {
        self.state.hits.lock().unwrap().clone()
    }

    /// Waits (up to `limit`) until `done` holds for the requests received so far.
    pub async fn wait_until(&self, limit: Duration, done: impl Fn(&[Hit]) -> bool) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let arrived = self.state.arrived.notified();
            tokio::pin!(arrived);
            arrived.as_mut().enable();
            if done(&self.state.hits.lock().unwrap()) {
                return true;
            }
            if tokio::time::timeout_at(deadline, arrived).await.is_err() {
                return done(&self.state.hits.lock().unwrap());
            }
        }
    }
}
