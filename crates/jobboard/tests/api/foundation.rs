//! Authentication, tenancy, errors, rate limits, operations, API description, CLI.

use std::{
    io::{BufRead, BufReader},
    process::{Command, Stdio},
};

use reqwest::Method;
use serde_json::{Value, json};

use crate::{backends, common::*};

backends!(
    missing_and_invalid_keys,
    revoked_key_is_refused_at_once,
    scopes_are_enforced,
    tenants_are_isolated,
    body_errors,
    routing_errors,
    request_ids,
    read_limit_is_exact_under_concurrency,
    write_limit_and_headers,
    per_key_limit_override,
    failed_auth_is_limited_per_address,
    operations_endpoints,
    memory_budgets_are_applied_and_reported,
    api_description,
    cli_manages_orgs_and_keys,
    first_start_creates_a_key_and_stops_gracefully,
    free_form_json_with_nul_characters_is_refused,
    the_scheduler_runs_inside_serve,
    a_trusted_proxy_forwards_the_client_address,
);

async fn missing_and_invalid_keys(b: Backend) {
    let t = TestApp::spawn(b).await;
    let r = t.req(Method::GET, "/categories").no_key().send().await;
    r.expect_error(401, "missing_api_key");
    assert_eq!(r.body["error"]["details"], Value::Null);
    t.req(Method::GET, "/categories")
        .key("jb_nope")
        .send()
        .await
        .expect_error(401, "invalid_api_key");
    let fake = format!("jb_{}", "A".repeat(40));
    t.req(Method::GET, "/categories")
        .key(&fake)
        .send()
        .await
        .expect_error(401, "invalid_api_key");
    // POST without key is refused before the body is looked at.
    t.req(Method::POST, "/categories")
        .no_key()
        .json(json!({"name": "x"}))
        .send()
        .await
        .expect_error(401, "missing_api_key");
    t.get("/categories").await.expect(200);
}

async fn revoked_key_is_refused_at_once(b: Backend) {
    let t = TestApp::spawn(b).await;
    t.get("/categories").await.expect(200);
    let found = jobboard_domain::keys::store::list(t.db(), t.org_id)
        .await
        .unwrap();
    jobboard_domain::keys::store::revoke(t.db(), found[0].id)
        .await
        .unwrap();
    t.get("/categories")
        .await
        .expect_error(401, "invalid_api_key");
}

async fn scopes_are_enforced(b: Backend) {
    let t = TestApp::spawn(b).await;
    let read_only = t.new_key(t.org_id, "jobs:read", 100, 30).await;
    t.req(Method::GET, "/categories")
        .key(&read_only)
        .send()
        .await
        .expect(200);
    let r = t
        .req(Method::POST, "/categories")
        .key(&read_only)
        .json(json!({"name": "Design"}))
        .send()
        .await;
    r.expect_error(403, "insufficient_scope");
    assert_eq!(r.body["error"]["details"]["required"], "jobs:write");
    let cms_only = t.new_key(t.org_id, "cms:read", 100, 30).await;
    t.req(Method::GET, "/categories")
        .key(&cms_only)
        .send()
        .await
        .expect_error(403, "insufficient_scope");
}

async fn tenants_are_isolated(b: Backend) {
    let t = TestApp::spawn(b).await;
    t.post("/categories", json!({"name": "Engineering"}))
        .await
        .expect(201);
    let (_, other) = t.new_org("Other", "*", 100, 30).await;
    let r = t.req(Method::GET, "/categories").key(&other).send().await;
    r.expect(200);
    assert_eq!(r.body["data"], json!([]));
    // The same slug is free in the other organization.
    t.req(Method::POST, "/categories")
        .key(&other)
        .json(json!({"name": "Engineering"}))
        .send()
        .await
        .expect(201);
    let mine = t.get("/categories").await;
    assert_eq!(mine.body["data"].as_array().unwrap().len(), 1);
}

async fn body_errors(b: Backend) {
    let t = TestApp::spawn(b).await;
    let r = t
        .req(Method::POST, "/categories")
        .raw("{\"name\": ", Some("application/json"))
        .send()
        .await;
    r.expect_error(400, "invalid_json");
    assert_eq!(r.body["error"]["details"]["line"], 1);
    assert!(r.body["error"]["details"]["column"].as_u64().is_some());
    t.req(Method::POST, "/categories")
        .raw("[1, 2]", Some("application/json"))
        .send()
        .await
        .expect_error(400, "invalid_json");
    t.req(Method::POST, "/categories")
        .raw("", Some("application/json"))
        .send()
        .await
        .expect_error(400, "invalid_json");
    t.req(Method::POST, "/categories")
        .raw("{\"name\": \"x\"}", Some("text/plain"))
        .send()
        .await
        .expect_error(415, "unsupported_media_type");
    t.req(Method::POST, "/categories")
        .raw("{\"name\": \"x\"}", None)
        .send()
        .await
        .expect_error(415, "unsupported_media_type");
    let big = format!("{{\"name\": \"{}\"}}", "x".repeat(2 * 1024 * 1024));
    let r = t
        .req(Method::POST, "/categories")
        .raw(big, Some("application/json"))
        .send()
        .await;
    r.expect_error(413, "payload_too_large");
    assert_eq!(r.body["error"]["details"]["limit_bytes"], 1024 * 1024);
    // Every bad field at once, unknown fields named.
    let r = t
        .post(
            "/categories",
            json!({"name": 5, "slug": "Not A Slug", "colour": "red"}),
        )
        .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["name", "slug", "colour"]);
    let f = &r.body["error"]["details"]["fields"][0];
    assert_eq!(f["code"], "invalid_type");
    assert!(f["message"].as_str().is_some());
    // Nothing was stored by the failures.
    assert_eq!(t.get("/categories").await.body["data"], json!([]));
    // A conflict on the slug.
    t.post("/categories", json!({"name": "Sales"}))
        .await
        .expect(201);
    t.post("/categories", json!({"name": "Sales!"}))
        .await
        .expect_error(409, "conflict");
}

async fn routing_errors(b: Backend) {
    let t = TestApp::spawn(b).await;
    t.get("/no-such-thing")
        .await
        .expect_error(404, "route_not_found");
    t.req(Method::GET, "/api/no/such")
        .no_key()
        .send()
        .await
        .expect_error(404, "route_not_found");
    let r = t.delete("/categories").await;
    r.expect_error(405, "method_not_allowed");
    let allowed: Vec<&str> = r.body["error"]["details"]["allowed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        allowed.contains(&"GET") && allowed.contains(&"POST"),
        "{allowed:?}"
    );
    assert!(r.header("allow").unwrap().contains("POST"));
    // Unknown query parameters are refused, naming the parameter.
    let r = t.get("/categories?colour=red").await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["colour"]);
}

async fn request_ids(b: Backend) {
    let t = TestApp::spawn(b).await;
    let a = t.get("/categories").await;
    let b2 = t.get("/nope").await;
    let id_a = a.header("x-request-id").unwrap().to_string();
    assert!(!id_a.is_empty());
    assert_ne!(Some(id_a.as_str()), b2.header("x-request-id"));
    let r = t
        .req(Method::GET, "/categories")
        .header("x-request-id", "client-chosen-42")
        .send()
        .await;
    assert_eq!(r.header("x-request-id"), Some("client-chosen-42"));
    let r = t.req(Method::GET, "/healthz").no_key().send().await;
    assert!(r.header("x-request-id").is_some());
}

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

async fn operations_endpoints(b: Backend) {
    let t = TestApp::spawn(b).await;
    let r = t.req(Method::GET, "/healthz").no_key().send().await;
    r.expect(200);
    assert_eq!(r.body["status"], "ok");
    let r = t.req(Method::GET, "/readyz").no_key().send().await;
    r.expect(200);
    assert_eq!(r.body["status"], "ready");
    t.get("/categories").await.expect(200);
    t.get("/nope").await;
    let r = t.metrics().await;
    r.expect(200);
    assert!(r.header("content-type").unwrap().starts_with("text/plain"));
    assert!(r.text.contains("jobboard_http_requests_total{route=\"/api/categories\",method=\"GET\",status=\"200\"} 1"), "{}", r.text);
    assert!(r.text.contains(
        "jobboard_http_request_duration_seconds_bucket{route=\"/api/categories\",le=\"+Inf\"}"
    ));
    assert!(r.text.contains("jobboard_outbox_pending_events 0"));
}

/// The page cache budget is shared out between the connections (SQLite), the rendered
/// cache budget between the caches, and /metrics reports both with the process's memory.
async fn memory_budgets_are_applied_and_reported(b: Backend) {
    let t = TestApp::spawn_with(b, |c| {
        c.db_page_cache = 9 << 20;
        c.render_cache = 8 << 20;
    })
    .await;
    // Lists are cached within their share of the rendered budget.
    t.get("/jobs").await.expect(200);
    let r = t.metrics().await;
    r.expect(200);
    assert_eq!(
        gauge(&r.text, "jobboard_render_cache_budget_bytes"),
        (8 << 20) as f64
    );
    assert!(
        gauge(&r.text, "jobboard_resident_memory_bytes") > 1e6,
        "{}",
        r.text
    );
    assert!(
        r.text.contains("jobboard_cache_entries{cache=\"jobs\"} 1"),
        "{}",
        r.text
    );
    let page_cache = gauge(&r.text, "jobboard_db_page_cache_budget_bytes");
    match b {
        // 8 readers and the writer: 1 MiB each.
        Backend::Sqlite => {
            assert_eq!(page_cache, (9 << 20) as f64);
            let size: i64 = jobboard_store::dispatch!(t.db().reader(), p => {
                sqlx::query_scalar("PRAGMA cache_size").fetch_one(p).await.unwrap()
            });
            assert_eq!(size, -1024);
        }
        Backend::Postgres => assert_eq!(page_cache, 0.0),
    }
    assert_eq!(t.app.jobs_cache.max_bytes(), 4 << 20);
    assert_eq!(t.app.pages_cache.max_bytes(), 2 << 20);
    assert_eq!(t.app.cms_cache.max_bytes(), 2 << 20);
}

async fn api_description(b: Backend) {
    let t = TestApp::spawn(b).await;
    let r = t
        .req(Method::GET, "/api/openapi.json")
        .no_key()
        .send()
        .await;
    r.expect(200);
    assert_eq!(r.body["openapi"], "3.1.0");
    assert_eq!(r.body["servers"][0]["url"], "/api");
    assert!(r.body["paths"]["/categories"]["post"]["responses"]["422"].is_object());
    assert_eq!(
        r.body,
        serde_json::to_value(jobboard::http::openapi()).unwrap()
    );
    let r = t.req(Method::GET, "/api/docs/").no_key().send().await;
    r.expect(200);
    assert!(r.text.contains("swagger-ui"), "{}", r.text);
    // Every asset the page loads is served by us.
    for asset in [
        "swagger-ui.css",
        "swagger-ui-bundle.js",
        "swagger-initializer.js",
    ] {
        let r = t
            .req(Method::GET, &format!("/api/docs/{asset}"))
            .no_key()
            .send()
            .await;
        r.expect(200);
    }
    assert!(
        !r.text.contains("https://"),
        "docs page must not load remote assets"
    );
    let r = t.req(Method::GET, "/api/docs/errors").no_key().send().await;
    r.expect(200);
    for (code, _, _) in jobboard::error::CODES {
        assert!(r.text.contains(&format!("id=\"{code}\"")), "missing {code}");
    }
}

async fn free_form_json_with_nul_characters_is_refused(b: Backend) {
    let t = TestApp::spawn(b).await;
    // PostgreSQL cannot store NUL in text or JSONB: refused up front on both backends.
    let r = t
        .post(
            "/members/sync",
            json!({"email": "nul@example.com", "customFields": {"a\u{0}": 1, "b": ["x"]}}),
        )
        .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["customFields"]);
    let r = t
        .post(
            "/members/sync",
            json!({"email": "nul@example.com", "customFields": {"b": [{"c": "x\u{0}"}]}}),
        )
        .await;
    r.expect_error(422, "validation_failed");
    t.post(
        "/members/sync",
        json!({"email": "nul@example.com", "customFields": {"b": ["x"]}}),
    )
    .await
    .expect(201);
}

async fn the_scheduler_runs_inside_serve(b: Backend) {
    // The default configuration runs the scheduler in the serving process.
    let t = TestApp::spawn(b).await;
    let r = t.post("/jobs", json!({"title": "Soon gone", "description": "x", "company_name": "Acme", "status": "active"})).await;
    let id = r.body["data"]["id"].as_str().unwrap().to_string();
    let past = jobboard_store::Ts::now().plus(chrono::Duration::seconds(-1));
    jobboard_store::dispatch!(t.db().writer(), p => {
        sqlx::query("UPDATE jobs SET expires_at = $1 WHERE id = $2")
            .bind(past)
            .bind(uuid::Uuid::parse_str(&id).unwrap())
            .execute(p)
            .await
            .unwrap();
    });
    // Two completed passes: at least one started after the job became due.
    let mut passes = t.app.scheduler_passes.subscribe();
    passes.borrow_and_update();
    for _ in 0..2 {
        tokio::time::timeout(std::time::Duration::from_secs(30), passes.changed())
            .await
            .unwrap()
            .unwrap();
    }
    let r = t.get(&format!("/jobs/{id}")).await;
    assert_eq!(r.body["data"]["status"], "expired");
    let kinds: Vec<String> = jobboard_store::events::list_for_org(t.db(), t.org_id)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.event_type)
        .collect();
    assert!(kinds.contains(&"job.expired".to_string()), "{kinds:?}");
}

fn run_ok(args: &[&str], db: &str) -> String {
    let (ok, out, err) = run_cli(args, db);
    assert!(ok, "{args:?} failed: {err}");
    out
}

fn last_line(s: &str) -> String {
    s.trim_end().lines().last().unwrap_or("").to_string()
}

async fn cli_manages_orgs_and_keys(b: Backend) {
    let (db, path) = fresh_database(b).await;
    run_ok(&["migrate"], &db);
    let org: i64 = last_line(&run_ok(&["orgs", "create", "--name", "Acme Jobs"], &db))
        .parse()
        .unwrap();
    assert!(run_ok(&["orgs", "list"], &db).contains("Acme Jobs"));
    let out = run_ok(
        &[
            "keys",
            "create",
            "--org",
            &org.to_string(),
            "--name",
            "ats",
            "--scopes",
            "jobs:read",
            "--read-limit",
            "3",
        ],
        &db,
    );
    let key = last_line(&out);
    assert!(key.starts_with("jb_") && key.len() >= 35, "{key}");
    let listed = run_ok(&["keys", "list", "--org", &org.to_string()], &db);
    assert!(
        listed.contains(&key[..11]) && !listed.contains(&key),
        "list shows the prefix only: {listed}"
    );
    assert!(listed.contains("read 3/min"));
    // The key works against a server on the same database, with its scope and limit.
    let mut config = jobboard::config::Config::with_database(&db);
    config.listen = "127.0.0.1:0".parse().unwrap();
    let app = jobboard::server::App::start(config).await.unwrap();
    let running = jobboard::server::spawn(
        app,
        tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap(),
    )
    .unwrap();
    let client = {
        jobboard::init_tls();
        reqwest::Client::builder().no_proxy().build().unwrap()
    };
    let url = format!("http://{}/api/categories", running.addr);
    let get = |k: String| {
        let (client, url) = (client.clone(), url.clone());
        async move {
            client
                .get(url)
                .header("x-api-key", k)
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        }
    };
    assert_eq!(get(key.clone()).await, 200);
    run_ok(&["keys", "update", &key[..11], "--read-limit", "1"], &db);
    // Limits and scopes are read per request: the new limit holds at once.
    assert_eq!(get(key.clone()).await, 429);
    let revoked = run_ok(&["keys", "revoke", &key[..11]], &db);
    assert!(revoked.contains("Revoked"));
    assert_eq!(get(key.clone()).await, 401);
    running.shutdown().await.unwrap();
    // Bad input is refused with a message and a failing exit code.
    let out = bin()
        .args(["--database", &db, "keys", "create", "--org", "999"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not exist"));
    let out = bin()
        .args([
            "--database",
            &db,
            "keys",
            "create",
            "--org",
            &org.to_string(),
            "--scopes",
            "jobs:admin",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    if let Some(p) = path {
        let _ = std::fs::remove_file(p);
    }
}

async fn first_start_creates_a_key_and_stops_gracefully(b: Backend) {
    let (db, path) = fresh_database(b).await;
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut child = bin()
        .args([
            "--database",
            &db,
            "serve",
            "--listen",
            &format!("127.0.0.1:{port}"),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    assert!(first.contains("organization 1"), "{first}");
    let key = lines.next().unwrap().unwrap();
    assert!(key.starts_with("jb_"));
    // Beside it, the one-time link that creates the first dashboard user.
    let said = lines.next().unwrap().unwrap();
    assert!(said.contains("dashboard user"), "{said}");
    let link = lines.next().unwrap().unwrap();
    let prefix = format!("http://127.0.0.1:{port}/dashboard/setup/");
    assert!(
        link.starts_with(&prefix) && link.len() > prefix.len() + 40,
        "{link}"
    );
    let client = {
        jobboard::init_tls();
        reqwest::Client::builder().no_proxy().build().unwrap()
    };
    let url = format!("http://127.0.0.1:{port}/api/categories");
    let mut status = 0;
    for _ in 0..200 {
        match client.get(&url).header("x-api-key", &key).send().await {
            Ok(r) => {
                status = r.status().as_u16();
                break;
            }
            Err(_) => tokio::time::sleep(std::time::Duration::from_millis(25)).await,
        }
    }
    assert_eq!(status, 200);
    let setup = client
        .get(&link)
        .header("accept", "text/html")
        .send()
        .await
        .unwrap();
    assert_eq!(setup.status(), 200);
    assert!(setup.text().await.unwrap().contains("name=\"password\""));
    // SIGTERM: a graceful exit with status 0.
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let exit = child.wait().unwrap();
    assert!(exit.success(), "{exit:?}");
    // A second start does not create another key.
    let out = bin()
        .args(["--database", &db, "serve", "--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = out.id();
    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    let output = out.wait_with_output().unwrap();
    assert!(!String::from_utf8_lossy(&output.stdout).contains("jb_"));
    if let Some(p) = path {
        let _ = std::fs::remove_file(p);
    }
}

/// The whole OpenAPI document is locked: any API change shows up as a diff of
/// `openapi.json` at the repository root. Regenerate with `UPDATE_SNAPSHOTS=1 cargo test openapi`.
#[test]
fn openapi_document_matches_the_snapshot() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../openapi.json");
    let current = serde_json::to_string_pretty(&jobboard::http::openapi()).unwrap() + "\n";
    if std::env::var("UPDATE_SNAPSHOTS").is_ok_and(|v| v == "1") {
        std::fs::write(path, &current).unwrap();
    }
    let stored = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        stored == current,
        "the OpenAPI document changed; review the difference and run `UPDATE_SNAPSHOTS=1 cargo test openapi` to accept it"
    );
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
