//! Transport-level hardening: malformed and oversized requests answered with the error
//! envelope, the body-read time-out, duplicate JSON keys, security headers, the guarded
//! `/metrics`, and SQLite's durability setting.

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::{backends, common::*};

backends!(
    undecodable_path_parameters_are_answered_like_unknown_ids,
    framework_errors_use_the_envelope,
    oversized_uri_and_headers_are_answered_with_the_envelope,
    a_stalled_body_is_answered_408_and_the_connection_closed,
    duplicate_json_keys_are_refused,
    security_headers_on_every_response,
    metrics_token_guards_metrics,
    metrics_on_a_separate_listener,
    sqlite_synchronous_is_a_setting,
);

/// An answer read off a raw connection.
struct RawResp {
    status: u16,
    headers: Vec<(String, String)>,
    body: Value,
}

impl RawResp {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Writes `request` on a new connection, leaves it open, and reads until the server
/// closes it (at most `limit`). Returns the answer and the time it took.
async fn raw(base: &str, request: &[u8], limit: Duration) -> (RawResp, Duration) {
    let addr = base.trim_start_matches("http://");
    let started = Instant::now();
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(request).await.unwrap();
    let mut buf = Vec::new();
    tokio::time::timeout(limit, s.read_to_end(&mut buf))
        .await
        .expect("the server answers and closes the connection in time")
        .unwrap();
    let elapsed = started.elapsed();
    let text = String::from_utf8_lossy(&buf);
    let (head, body) = text.split_once("\r\n\r\n").expect("a complete answer");
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let body = serde_json::from_str(body).unwrap_or(Value::Null);
    (
        RawResp {
            status,
            headers,
            body,
        },
        elapsed,
    )
}

async fn undecodable_path_parameters_are_answered_like_unknown_ids(b: Backend) {
    let t = TestApp::spawn(b).await;
    // Percent-encodings that are not UTF-8 (a lone byte, a truncated sequence, an invalid
    // continuation) can name no record: the same 404 as any malformed id, by the handler.
    for (method, path, resource) in [
        (Method::GET, "/jobs/%FF", "job"),
        (Method::DELETE, "/jobs/%E2%82", "job"),
        (Method::GET, "/applications/%C3%28", "application"),
        (Method::GET, "/webhooks/%FF/deliveries", "webhook"),
        (Method::GET, "/cms/%FF/schema", "collection"),
        (Method::GET, "/cms/%FF/some-id", "collection"),
    ] {
        let r = t.req(method, path).send().await;
        r.expect_error(404, "not_found");
        assert_eq!(r.body["error"]["details"]["resource"], resource, "{path}");
    }
    let r = t
        .req(Method::PATCH, "/jobs/%FF")
        .json(json!({"title": "x"}))
        .send()
        .await;
    r.expect_error(404, "not_found");
    // Authentication still comes first, as for any id.
    t.req(Method::GET, "/jobs/%FF")
        .no_key()
        .send()
        .await
        .expect_error(401, "missing_api_key");
    // Valid encodings are untouched: %62 is "b".
    t.post(
        "/cms",
        json!({"slug": "blog", "name": "Blog", "schema": []}),
    )
    .await
    .expect(201);
    let r = t.get("/cms/%62log/schema").await;
    r.expect(200);
    assert_eq!(r.body["collection"]["slug"], "blog");
    // In a fixed segment the path matches no route.
    t.get("/jo%FFbs").await.expect_error(404, "route_not_found");
}

async fn framework_errors_use_the_envelope(b: Backend) {
    let t = TestApp::spawn(b).await;
    // The bundled docs answer unknown files with an empty 404 of their own.
    let r = t
        .req(Method::GET, "/api/docs/no-such-file.js")
        .no_key()
        .send()
        .await;
    r.expect_error(404, "route_not_found");
    assert_eq!(r.header("content-type"), Some("application/json"));
}

async fn oversized_uri_and_headers_are_answered_with_the_envelope(b: Backend) {
    let t = TestApp::spawn(b).await;
    let target = |len: usize| {
        let prefix = "/api/categories?x=";
        format!("{prefix}{}", "a".repeat(len - prefix.len()))
    };
    // At the limit the request is handled (the unknown parameter is named).
    let r = t.get(&target(8192)).await;
    r.expect_error(422, "validation_failed");
    // One byte more: 414, before authentication.
    for key in [true, false] {
        let req = t.req(Method::GET, &target(8193));
        let req = if key { req } else { req.no_key() };
        let r = req.send().await;
        r.expect_error(414, "uri_too_long");
        assert_eq!(r.body["error"]["details"]["limit_bytes"], 8192);
        assert!(r.header("x-request-id").is_some());
    }
    // Header fields over 32 KiB in all.
    let r = t
        .req(Method::GET, "/categories")
        .header("cookie", &"c".repeat(40 * 1024))
        .send()
        .await;
    r.expect_error(431, "headers_too_large");
    assert_eq!(
        r.body["error"]["details"],
        json!({"limit_bytes": 32768, "limit_count": 100})
    );
    // More than 100 fields (the HTTP parser itself accepts up to 256).
    let mut req = t.req(Method::GET, "/categories");
    for i in 0..150 {
        req = req.header(&format!("x-extra-{i}"), "1");
    }
    req.send().await.expect_error(431, "headers_too_large");
    // 90 extra fields of a few bytes each are fine.
    let mut req = t.req(Method::GET, "/categories");
    for i in 0..90 {
        req = req.header(&format!("x-extra-{i}"), "1");
    }
    req.send().await.expect(200);
}

async fn a_stalled_body_is_answered_408_and_the_connection_closed(b: Backend) {
    let t = TestApp::spawn_with(b, |c| {
        c.request_timeout = Duration::from_secs(30);
        c.body_read_timeout = Duration::from_millis(500);
    })
    .await;
    // 100 bytes announced, 8 sent, the connection left open.
    let request = format!(
        "POST /api/categories HTTP/1.1\r\nhost: test\r\nx-api-key: {}\r\n\
         content-type: application/json\r\ncontent-length: 100\r\n\r\n{{\"name\":",
        t.key
    );
    let (r, elapsed) = raw(&t.base, request.as_bytes(), Duration::from_secs(20)).await;
    assert_eq!(r.status, 408, "{:?}", r.body);
    assert_eq!(r.body["error"]["code"], "request_timeout");
    assert_eq!(r.body["error"]["details"]["timeout_seconds"], 0.5);
    assert_eq!(r.header("connection"), Some("close"));
    // Answered at the body-read time-out, far from the request time-out, and the
    // connection was closed (the read above ended).
    assert!(elapsed < Duration::from_secs(10), "{elapsed:?}");
    assert!(elapsed >= Duration::from_millis(500), "{elapsed:?}");
    assert_eq!(t.get("/categories").await.body["data"], json!([]));
    // A complete body is read as before.
    t.post("/categories", json!({"name": "Design"}))
        .await
        .expect(201);
}

async fn duplicate_json_keys_are_refused(b: Backend) {
    let t = TestApp::spawn(b).await;
    let job = "{\n  \"title\": \"Engineer\",\n  \"description\": \"Builds.\",\n  \
               \"company_name\": \"Acme\",\n  \"status\": \"draft\",\n  \"status\": \"active\"\n}";
    let r = t
        .req(Method::POST, "/jobs")
        .raw(job, Some("application/json"))
        .send()
        .await;
    r.expect_error(400, "invalid_json");
    assert!(
        r.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("duplicate key \"status\""),
        "{}",
        r.text
    );
    // Line 6, just after the repeated key.
    assert_eq!(r.body["error"]["details"], json!({"line": 6, "column": 10}));
    // At any depth: in a nested object, in an object inside an array.
    for (path, body) in [
        (
            "/members/sync",
            r#"{"email": "a@example.com", "customFields": {"a": 1, "b": {"c": 1, "c": 2}}}"#,
        ),
        (
            "/analytics/events",
            r#"{"events": [{"type": "page_view"}, {"type": "page_view", "type": "job_view"}]}"#,
        ),
        ("/categories", r#"{"name": "A", "name": "B"}"#),
    ] {
        t.req(Method::POST, path)
            .raw(body, Some("application/json"))
            .send()
            .await
            .expect_error(400, "invalid_json");
    }
    // Nothing was stored.
    assert_eq!(t.get("/jobs?status=all").await.body["data"], json!([]));
    assert_eq!(t.get("/categories").await.body["data"], json!([]));
    // The same key in sibling objects is no repetition.
    t.req(Method::POST, "/members/sync")
        .raw(
            r#"{"email": "b@example.com", "customFields": {"x": {"k": 1}, "y": {"k": 1}}}"#,
            Some("application/json"),
        )
        .send()
        .await
        .expect(201);
    // Money keeps its exact digits through the reader.
    let r = t
        .req(Method::POST, "/plans")
        .raw(
            r#"{"name": "Exact", "price": 99999999999.9999, "currency": "USD", "interval": "month", "jobsIncluded": 1}"#,
            Some("application/json"),
        )
        .send()
        .await;
    r.expect(201);
    assert!(r.text.contains("\"price\":99999999999.9999,"), "{}", r.text);
}

const DEFAULT_CSP: &str = "default-src 'none'; frame-ancestors 'none'";

async fn security_headers_on_every_response(b: Backend) {
    let t = TestApp::spawn(b).await;
    let json_answers = [
        t.get("/categories").await,
        t.get("/jobs/nope").await,
        t.get("/no-such-route").await,
        t.req(Method::GET, "/categories").no_key().send().await,
        t.req(Method::GET, "/healthz").no_key().send().await,
        t.req(Method::GET, "/metrics").no_key().send().await,
        t.req(Method::GET, "/api/openapi.json")
            .no_key()
            .send()
            .await,
        t.req(Method::GET, "/api/docs/swagger-ui-bundle.js")
            .no_key()
            .send()
            .await,
    ];
    for r in &json_answers {
        assert_eq!(r.header("x-content-type-options"), Some("nosniff"), "{r:?}");
        assert_eq!(r.header("referrer-policy"), Some("no-referrer"), "{r:?}");
        assert_eq!(
            r.header("content-security-policy"),
            Some(DEFAULT_CSP),
            "{r:?}"
        );
    }
    for page in ["/api/docs/", "/api/docs/errors"] {
        let r = t.req(Method::GET, page).no_key().send().await;
        r.expect(200);
        assert!(r.header("content-type").unwrap().starts_with("text/html"));
        assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
        assert_eq!(r.header("referrer-policy"), Some("no-referrer"));
        let csp = r.header("content-security-policy").unwrap();
        for directive in [
            "default-src 'none'",
            "script-src 'self'",
            "style-src 'self'",
            "frame-ancestors 'none'",
            "base-uri 'none'",
        ] {
            assert!(csp.contains(directive), "{page}: {csp}");
        }
        assert!(!csp.contains("unsafe") && !csp.contains("http"), "{csp}");
        // Nothing inline that the policy would block.
        assert!(!r.text.contains("<style"), "{page}");
        assert!(!r.text.contains("<script>"), "{page}");
    }
    let r = t
        .req(Method::GET, "/api/docs/errors.css")
        .no_key()
        .send()
        .await;
    r.expect(200);
    assert!(r.header("content-type").unwrap().starts_with("text/css"));
}

const TOKEN: &str = "metrics-token-0123456789";

async fn metrics_token_guards_metrics(b: Backend) {
    let t = TestApp::spawn_with(b, |c| {
        c.metrics_token = Some(jobboard::config::Secret(TOKEN.into()));
        c.auth_failure_limit = 3;
    })
    .await;
    let scrape = |auth: Option<String>| {
        let req = t.req(Method::GET, "/metrics").no_key();
        match auth {
            Some(a) => req.header("authorization", &a).send(),
            None => req.send(),
        }
    };
    let r = scrape(None).await;
    r.expect_error(401, "invalid_token");
    assert_eq!(
        r.header("www-authenticate"),
        Some("Bearer realm=\"metrics\"")
    );
    scrape(Some(format!("Bearer {TOKEN}x")))
        .await
        .expect_error(401, "invalid_token");
    let r = scrape(Some(format!("bearer {TOKEN}"))).await;
    r.expect(200);
    assert!(r.text.contains("jobboard_outbox_pending_events"));
    // Wrong tokens count as failed authentications of the address.
    scrape(Some("Bearer guess".into()))
        .await
        .expect_error(401, "invalid_token");
    scrape(Some("Basic Z3Vlc3M6Z3Vlc3M=".into()))
        .await
        .expect_error(429, "rate_limited");
    // Health and readiness stay open for probes; the API is unaffected.
    t.req(Method::GET, "/healthz")
        .no_key()
        .send()
        .await
        .expect(200);
    t.get("/categories").await.expect(200);
}

async fn metrics_on_a_separate_listener(b: Backend) {
    let t = TestApp::spawn_with(b, |c| {
        c.metrics_listen = Some("127.0.0.1:0".parse().unwrap());
        c.metrics_token = None;
    })
    .await;
    t.get("/categories").await.expect(200);
    // Not on the main port any more; health and readiness are.
    t.req(Method::GET, "/metrics")
        .no_key()
        .send()
        .await
        .expect_error(404, "route_not_found");
    t.req(Method::GET, "/readyz")
        .no_key()
        .send()
        .await
        .expect(200);
    let ops = format!(
        "http://{}",
        t.metrics_addr().expect("an operations listener")
    );
    let get = |path: &str| t.client.get(format!("{ops}{path}")).send();
    let r = get("/metrics").await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.headers()["x-content-type-options"].to_str().unwrap(),
        "nosniff"
    );
    let text = r.text().await.unwrap();
    assert!(
        text.contains(
            "jobboard_http_requests_total{route=\"/api/categories\",method=\"GET\",status=\"200\"} 1"
        ),
        "{text}"
    );
    assert_eq!(get("/healthz").await.unwrap().status(), 200);
    assert_eq!(get("/readyz").await.unwrap().status(), 200);
    // The operations listener serves no API.
    let r = get("/api/categories").await.unwrap();
    assert_eq!(r.status(), 404);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "route_not_found");
    t.stop().await;
}

async fn sqlite_synchronous_is_a_setting(b: Backend) {
    use jobboard_store::{Pool, Synchronous};
    match b {
        Backend::Sqlite => {
            // PRAGMA synchronous: 1 is NORMAL, 2 is FULL; on the writer and the readers.
            for (setting, expected) in [(Synchronous::Normal, 1), (Synchronous::Full, 2)] {
                let t = TestApp::spawn_with(b, |c| c.sqlite_synchronous = setting).await;
                for pool in [&*t.db().writer(), t.db().reader()] {
                    let Pool::Sqlite(p) = pool else {
                        unreachable!()
                    };
                    let mode: i64 = sqlx::query_scalar("PRAGMA synchronous")
                        .fetch_one(p)
                        .await
                        .unwrap();
                    assert_eq!(mode, expected, "{setting:?}");
                }
            }
            // The command line reads it from the environment and refuses other values.
            let (db, path) = fresh_database(b).await;
            let out = bin()
                .env("JOBBOARD_SQLITE_SYNCHRONOUS", "off")
                .args(["--database", &db, "migrate"])
                .output()
                .unwrap();
            assert!(!out.status.success());
            assert!(String::from_utf8_lossy(&out.stderr).contains("sqlite_synchronous"));
            let out = bin()
                .env("JOBBOARD_SQLITE_SYNCHRONOUS", "full")
                .args(["--database", &db, "migrate"])
                .output()
                .unwrap();
            assert!(out.status.success());
            if let Some(p) = path {
                let _ = std::fs::remove_file(p);
            }
        }
        Backend::Postgres => {
            // The setting is SQLite's: on PostgreSQL durability is the server's, and our
            // sessions never lower `synchronous_commit` for themselves.
            let t = TestApp::spawn_with(b, |c| c.sqlite_synchronous = Synchronous::Normal).await;
            let Pool::Postgres(p) = &*t.db().writer() else {
                unreachable!()
            };
            let (source,): (String,) =
                sqlx::query_as("SELECT source FROM pg_settings WHERE name = 'synchronous_commit'")
                    .fetch_one(p)
                    .await
                    .unwrap();
            assert!(
                !["session", "client"].contains(&source.as_str()),
                "{source}"
            );
            // The durable CI pass checks that its server really syncs.
            if std::env::var("JOBBOARD_TEST_PG_DURABLE").is_ok_and(|v| v == "1") {
                for name in ["fsync", "synchronous_commit", "full_page_writes"] {
                    let (setting,): (String,) =
                        sqlx::query_as("SELECT setting FROM pg_settings WHERE name = $1")
                            .bind(name)
                            .fetch_one(p)
                            .await
                            .unwrap();
                    assert_eq!(setting, "on", "{name}");
                }
            }
        }
    }
}
