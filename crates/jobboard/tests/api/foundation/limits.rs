//! Rate limits: reads exact under concurrency, writes and their headers, per-key overrides,
//! failed authentication per address, and the client address from a trusted proxy.

use reqwest::Method;
use serde_json::json;

use crate::{backends, common::*};

backends!(
    read_limit_is_exact_under_concurrency,
    write_limit_and_headers,
    per_key_limit_override,
    failed_auth_is_limited_per_address,
    a_trusted_proxy_forwards_the_client_address,
);

async fn read_limit_is_exact_under_concurrency(b: Backend) {
    let t = TestApp::spawn(b).await;
    let key = t.new_key(t.org_id, "*", 100, 30).await;
    let mut handles = Vec::new();
    for _ in 0..101 {
        let client = t.client.clone();
        let url = format!("{}/api/categories", t.base);
        let key = key.clone();
        handles.push(tokio::spawn(async move {
            let r = client
                .get(url)
                .header("x-api-key", key)
                .send()
                .await
                .unwrap();
            let header = |name: &str| {
                r.headers()
                    .get(name)
                    .map(|v| v.to_str().unwrap().to_string())
            };
            let (retry, remaining) = (header("retry-after"), header("x-ratelimit-remaining"));
            (r.status().as_u16(), retry, remaining)
        }));
    }
    let mut ok = 0;
    let mut limited = Vec::new();
    let mut remaining = Vec::new();
    for h in handles {
        let (status, retry, left) = h.await.unwrap();
        match status {
            200 => {
                ok += 1;
                remaining.push(left.unwrap().parse::<u32>().unwrap());
            }
            429 => limited.push(retry),
            s => panic!("unexpected status {s}"),
        }
    }
    assert_eq!(ok, 100, "exactly 100 of 101 concurrent GETs pass");
    // Each admitted request was told its own place in the window, as if they had come one
    // by one (requests decided together take consecutive places).
    remaining.sort_unstable();
    assert_eq!(remaining, (0..100).collect::<Vec<u32>>());
    assert_eq!(limited.len(), 1);
    assert!(
        limited[0]
            .as_deref()
            .is_some_and(|v| v.parse::<u64>().unwrap() >= 1)
    );
    // The next sequential one is limited too, in the envelope with details.
    let r = t.req(Method::GET, "/categories").key(&key).send().await;
    r.expect_error(429, "rate_limited");
    let d = &r.body["error"]["details"];
    assert_eq!(d["limit"], 100);
    assert_eq!(d["window_seconds"], 60);
    assert!(d["retry_after_seconds"].as_u64().unwrap() >= 1);
    assert_eq!(r.header("x-ratelimit-remaining"), Some("0"));
    // Writes have their own bucket.
    t.req(Method::POST, "/categories")
        .key(&key)
        .json(json!({"name": "Ops"}))
        .send()
        .await
        .expect(201);
}

async fn write_limit_and_headers(b: Backend) {
    let t = TestApp::spawn(b).await;
    let key = t.new_key(t.org_id, "*", 100, 30).await;
    for i in 0..30 {
        let r = t
            .req(Method::POST, "/categories")
            .key(&key)
            .json(json!({"name": format!("Category {i}")}))
            .send()
            .await;
        r.expect(201);
        assert_eq!(r.header("x-ratelimit-limit"), Some("30"));
        assert_eq!(
            r.header("x-ratelimit-remaining"),
            Some((29 - i).to_string().as_str())
        );
        let reset: u64 = r.header("x-ratelimit-reset").unwrap().parse().unwrap();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        assert!(reset >= now && reset <= now + 61, "reset {reset} now {now}");
    }
    let r = t
        .req(Method::POST, "/categories")
        .key(&key)
        .json(json!({"name": "One too many"}))
        .send()
        .await;
    r.expect_error(429, "rate_limited");
    assert!(r.header("retry-after").is_some());
    // PATCH and DELETE count against the write bucket too.
    t.req(Method::DELETE, "/categories")
        .key(&key)
        .send()
        .await
        .expect_error(429, "rate_limited");
    // Reads are unaffected, and nothing of the refused write was stored.
    let r = t.req(Method::GET, "/categories").key(&key).send().await;
    r.expect(200);
    assert_eq!(r.body["data"].as_array().unwrap().len(), 30);
    assert_eq!(r.header("x-ratelimit-limit"), Some("100"));
}

async fn per_key_limit_override(b: Backend) {
    let t = TestApp::spawn(b).await;
    let key = t.new_key(t.org_id, "*", 5, 30).await;
    for _ in 0..5 {
        t.req(Method::GET, "/categories")
            .key(&key)
            .send()
            .await
            .expect(200);
    }
    t.req(Method::GET, "/categories")
        .key(&key)
        .send()
        .await
        .expect_error(429, "rate_limited");
    // Another key of the same organization has its own buckets.
    t.get("/categories").await.expect(200);
}

async fn failed_auth_is_limited_per_address(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.auth_failure_limit = 5).await;
    let guess = format!("jb_{}", "B".repeat(40));
    for _ in 0..5 {
        t.req(Method::GET, "/categories")
            .key(&guess)
            .send()
            .await
            .expect_error(401, "invalid_api_key");
    }
    let r = t.req(Method::GET, "/categories").key(&guess).send().await;
    r.expect_error(429, "rate_limited");
    assert!(r.header("retry-after").is_some());
    // A valid key from the same address still works.
    t.get("/categories").await.expect(200);
}

async fn a_trusted_proxy_forwards_the_client_address(b: Backend) {
    let trusted = |c: &mut jobboard::config::Config| {
        c.auth_failure_limit = 3;
        c.trusted_proxies = vec![jobboard_core::net::Cidr::parse("127.0.0.1/32").unwrap()];
    };
    let t = TestApp::spawn_with(b, trusted).await;
    let guess = format!("jb_{}", "C".repeat(40));
    let attempt = |xff: &'static str| {
        t.req(Method::GET, "/categories")
            .key(&guess)
            .header("x-forwarded-for", xff)
            .send()
    };
    // Behind a trusted proxy each client has its own failed-authentication bucket.
    for _ in 0..3 {
        attempt("203.0.113.7")
            .await
            .expect_error(401, "invalid_api_key");
    }
    attempt("203.0.113.7")
        .await
        .expect_error(429, "rate_limited");
    attempt("203.0.113.8")
        .await
        .expect_error(401, "invalid_api_key");
    // A trusted hop appended by a second proxy is skipped: still 203.0.113.8.
    attempt("203.0.113.8, 127.0.0.1")
        .await
        .expect_error(401, "invalid_api_key");
    attempt("203.0.113.8")
        .await
        .expect_error(401, "invalid_api_key");
    attempt("203.0.113.8")
        .await
        .expect_error(429, "rate_limited");
    // What a client writes left of the last untrusted hop is not believed.
    attempt("203.0.113.8, 198.51.100.1")
        .await
        .expect_error(401, "invalid_api_key");
    // A valid key is not affected.
    t.get("/categories").await.expect(200);

    // Without trusted proxies the header is ignored: every attempt counts against the
    // TCP peer, whatever it claims.
    let u = TestApp::spawn_with(b, |c| c.auth_failure_limit = 3).await;
    for xff in ["203.0.113.1", "203.0.113.2", "203.0.113.3"] {
        u.req(Method::GET, "/categories")
            .key(&guess)
            .header("x-forwarded-for", xff)
            .send()
            .await
            .expect_error(401, "invalid_api_key");
    }
    u.req(Method::GET, "/categories")
        .key(&guess)
        .header("x-forwarded-for", "203.0.113.4")
        .send()
        .await
        .expect_error(429, "rate_limited");
}
