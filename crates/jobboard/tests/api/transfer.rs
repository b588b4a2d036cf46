//! `jobboard export` and `jobboard import`: an organization with every kind of record
//! moves from SQLite to the backend under test and back to SQLite. After each move the
//! file written from the new database holds the same rows as the first, and the API
//! answers every list and item the same (with the organization's own key, which moved
//! with it). An import run again writes nothing; a truncated, altered or newer file is
//! refused with nothing written; `--as-new-org` makes a copy beside the original.

use std::path::{Path, PathBuf};

use jobboard_store::{
    Db, Ts,
    transfer::{self, ImportOptions, ImportReport},
};
use reqwest::Method;
use serde_json::{Value, json};

use jobboard_domain::OrgId;

use crate::{
    backends, common::*, dashboard::add_user, mail::with_smtp, smtp_sink::SmtpSink,
    webhook_receiver::Receiver,
};

backends!(an_organization_moves_to_another_backend_and_back);

/// A server that keeps job alerts (mail goes to `sink`), with no background workers or
/// scheduler: nothing changes its records but the test.
pub async fn spawn(b: Backend, sink: &SmtpSink) -> TestApp {
    let url = sink.url();
    TestApp::spawn_with(b, move |c| {
        c.worker = false;
        c.scheduler = false;
        c.mail = with_smtp(&c.mail, &url, vec![std::time::Duration::from_secs(60)]);
    })
    .await
}

/// The site's analytics compared: the last 30 days.
const MONTH: &str = "period=30d";

fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("jbt_transfer_{}", uuid::Uuid::now_v7().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Gives organization `org` of `t` one or more records of every exported kind: through
/// the API where it writes them, directly where only a flow with outside services does.
pub async fn populate(t: &TestApp, org: OrgId, key: &str) -> Receiver {
    let post = |path: &str, body: Value| {
        let req = t.req(Method::POST, path).key(key).json(body);
        async move {
            let r = req.send().await;
            assert!(r.status.is_success(), "{}", r.text);
            r.body["data"].clone()
        }
    };
    let rx = Receiver::start().await;
    post(
        "/webhooks",
        json!({"event": "*", "target_type": "webhook", "target_url": rx.url("/all"),
               "secret": "a-secret-of-sixteen-plus"}),
    )
    .await;
    let cat = post("/categories", json!({"name": "Engineering"})).await;
    let mut jobs = Vec::new();
    for (i, title) in ["Rust Engineer", "Site Reliability Engineer", "Data Analyst"]
        .iter()
        .enumerate()
    {
        let j = post(
            "/jobs",
            json!({"title": title, "company_name": "Acme", "status": "active",
                   "description": "<p>Build <strong>things</strong> that last.</p>",
                   "category_id": cat["id"], "location": "Berlin, Germany",
                   "is_remote": i == 1, "salary_min": 50000.5 + i as f64,
                   "salary_max": 90000, "salary_currency": "EUR", "salary_period": "yearly",
                   "job_type": "full-time", "how_to_apply": "https://acme.example/apply"}),
        )
        .await;
        jobs.push(j["id"].as_str().unwrap().to_string());
    }
    post(
        "/plans",
        json!({"name": "Pro", "price": 19.99, "currency": "USD", "interval": "month",
               "jobsIncluded": 5}),
    )
    .await;
    let m = post(
        "/members/sync",
        json!({"email": "ada@example.com", "name": "Ada", "role": "employer",
               "customFields": {"team": 4}, "access": {"planName": "Pro"},
               "payment": {"jobId": jobs[0], "amount": 49.5, "currency": "USD"}}),
    )
    .await;
    let member = m["member"]["id"].as_str().unwrap().to_string();
    post(
        "/cms",
        json!({"slug": "guides", "name": "Guides", "visibility": "public",
               "schema": [{"name": "title", "type": "text", "required": true}]}),
    )
    .await;
    post("/cms/guides", json!({"data": {"title": "How to hire"}})).await;
    post(
        "/cms/guides",
        json!({"data": {"title": "Draft"}, "status": "draft"}),
    )
    .await;
    post(
        &format!("/jobs/{}/applications", jobs[0]),
        json!({"name": "Grace", "email": "grace@example.com", "answers": {"years": 7},
               "resume_url": "https://example.com/grace.pdf", "cover_letter": "Hello"}),
    )
    .await;
    post(
        "/analytics/events",
        json!({"events": [
            {"type": "job_view", "job_id": jobs[0], "visitor_id": "v1"},
            {"type": "apply_click", "job_id": jobs[0], "visitor_id": "v1"},
            {"type": "page_view", "path": "/", "visitor_id": "v2"}]}),
    )
    .await;
    let user = add_user(t, org, "staff@moving.example").await;
    // What only flows with outside services (a checkout, a feed, a mailed alert, a
    // signed-in member) write.
    let now = Ts::now();
    let later = Ts::from_micros(now.micros() + 30 * 86_400_000_000);
    let (price, order, source) = (
        uuid::Uuid::now_v7(),
        uuid::Uuid::now_v7(),
        uuid::Uuid::now_v7(),
    );
    let job0: uuid::Uuid = jobs[0].parse().unwrap();
    let member: uuid::Uuid = member.parse().unwrap();
    let statements: Vec<(&str, Vec<Bound>)> = vec![
        (
            "INSERT INTO dashboard_two_factor (user_id, secret, last_step, enabled_at) VALUES ($1, 'JBSWY3DPEHPK3PXP', 7, $2)",
            vec![Bound::Id(user.0), Bound::Ts(now)],
        ),
        (
            "INSERT INTO dashboard_recovery_codes (user_id, code_hash) VALUES ($1, $2)",
            vec![Bound::Id(user.0), Bound::Bytes(vec![1, 2, 3, 254])],
        ),
        (
            "INSERT INTO prices (id, org_id, name, amount, currency, days, featured_days, created_at) VALUES ($1, $2, 'Standard', 4900, 'USD', 30, 7, $3)",
            vec![Bound::Id(price), Bound::Org(org), Bound::Ts(now)],
        ),
        (
            "INSERT INTO orders (id, org_id, job_id, price_id, kind, member_id, email, status, amount, currency, session_id, created_at, updated_at, fulfilled_at) VALUES ($1, $2, $3, $4, 'post', $5, 'ada@example.com', 'fulfilled', 4900, 'USD', 'cs_moving', $6, $6, $6)",
            vec![
                Bound::Id(order),
                Bound::Org(org),
                Bound::Id(job0),
                Bound::Id(price),
                Bound::Id(member),
                Bound::Ts(now),
            ],
        ),
        (
            "INSERT INTO saved_jobs (org_id, member_id, job_id, created_at) VALUES ($1, $2, $3, $4)",
            vec![
                Bound::Org(org),
                Bound::Id(member),
                Bound::Id(job0),
                Bound::Ts(now),
            ],
        ),
        (
            "INSERT INTO domain_claims (org_id, domain, token, created_at) VALUES ($1, 'jobs.moving.example', $2, $3)",
            vec![
                Bound::Org(org),
                Bound::Text(format!("claim-{}", org.0)),
                Bound::Ts(now),
            ],
        ),
        (
            "INSERT INTO payment_accounts (org_id, api_url, secret_key, webhook_secret, updated_at) VALUES ($1, 'http://127.0.0.1:9/', 'sk_test_moving', 'whsec_moving', $2)",
            vec![Bound::Org(org), Bound::Ts(now)],
        ),
        (
            "INSERT INTO import_sources (id, org_id, kind, url, every_minutes, job_status, next_run_at, created_at) VALUES ($1, $2, 'jsonfeed', 'http://127.0.0.1:9/feed.json', 60, 'active', $3, $4)",
            vec![
                Bound::Id(source),
                Bound::Org(org),
                Bound::Ts(later),
                Bound::Ts(now),
            ],
        ),
        (
            "INSERT INTO import_items (source_id, external_id, job_id, digest) VALUES ($1, 'ext-1', $2, 'abc')",
            vec![Bound::Id(source), Bound::Id(job0)],
        ),
        (
            "INSERT INTO job_alerts (id, org_id, email, email_lower, frequency, query, status, cursor, created_at) VALUES ($1, $2, 'Al@Example.com', 'al@example.com', 'daily', 'q=rust', 'pending', 0, $3)",
            vec![
                Bound::Id(uuid::Uuid::now_v7()),
                Bound::Org(org),
                Bound::Ts(now),
            ],
        ),
        (
            "INSERT INTO audit_log (id, org_id, at, actor_user_id, actor_email, action, target, ip) VALUES ($1, $2, $3, $4, 'staff@moving.example', 'key.created', 'key k', '127.0.0.1')",
            vec![
                Bound::Id(uuid::Uuid::now_v7()),
                Bound::Org(org),
                Bound::Ts(now),
                Bound::Id(user.0),
            ],
        ),
    ];
    for (sql, binds) in statements {
        run(t.db(), sql, binds).await;
    }
    // Every delivery finished (by the server's worker or here): the log moves with the
    // organization.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        jobboard::delivery::webhooks::drain(&t.app).await;
        let [waiting, finished] = [
            "SELECT (SELECT COUNT(*) FROM events WHERE org_id = $1 AND dispatched_at IS NULL) \
             + (SELECT COUNT(*) FROM webhook_deliveries WHERE org_id = $1 AND status = 'pending')",
            "SELECT COUNT(*) FROM webhook_deliveries WHERE org_id = $1 AND status <> 'pending'",
        ]
        .map(|sql| count(t.db(), sql, org));
        let (waiting, finished) = (waiting.await, finished.await);
        if waiting == 0 && finished > 0 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "deliveries still waiting"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    rx
}

async fn count(db: &Db, sql: &'static str, org: OrgId) -> i64 {
    jobboard_store::dispatch!(db.reader(), p => {
        sqlx::query_scalar::<_, i64>(sql).bind(org).fetch_one(p).await.unwrap()
    })
}

enum Bound {
    Id(uuid::Uuid),
    Org(OrgId),
    Ts(Ts),
    Text(String),
    Bytes(Vec<u8>),
}

async fn run(db: &Db, sql: &'static str, binds: Vec<Bound>) {
    jobboard_store::dispatch!(db.writer(), p => {
        let mut q = sqlx::query(sql);
        for b in binds {
            q = match b {
                Bound::Id(u) => q.bind(u),
                Bound::Org(o) => q.bind(o),
                Bound::Ts(t) => q.bind(t),
                Bound::Text(s) => q.bind(s),
                Bound::Bytes(v) => q.bind(v),
            };
        }
        q.execute(p).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    });
}

/// `text`, an export of format version 2, as version 1 wrote it: without the column
/// version 2 added, with its end line made anew.
fn as_version_1(text: &str) -> String {
    use sha2::Digest;
    let mut body = String::new();
    let mut rows = 0;
    for line in text.lines() {
        let mut v: Value = serde_json::from_str(line).unwrap();
        if v.get("end").is_some() {
            break;
        }
        if v.get("format").is_some() {
            v["version"] = json!(1);
        } else {
            rows += 1;
            if v["table"] == "organizations" {
                let row = v["row"].as_object_mut().unwrap();
                assert!(row.remove("keep_applications_after_job_days").is_some());
            }
        }
        body.push_str(&serde_json::to_string(&v).unwrap());
        body.push('\n');
    }
    let digest = hex::encode(sha2::Sha256::digest(body.as_bytes()));
    body + &json!({"end": {"rows": rows, "sha256": digest}}).to_string() + "\n"
}

/// The row lines of an export (the header's time and the end line's digest apart).
fn rows_of(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    assert!(lines.len() > 2, "{text}");
    lines[1..lines.len() - 1].to_vec()
}

async fn export(t: &TestApp, org: OrgId, dir: &Path, name: &str) -> PathBuf {
    let to = dir.join(name);
    transfer::export(t.db(), org, &to).await.unwrap();
    to
}

async fn import(t: &TestApp, from: &Path, as_new_org: bool) -> anyhow::Result<ImportReport> {
    transfer::import(t.db(), from, ImportOptions { as_new_org }).await
}

/// Every list and item the API reads for the organization of `key`, by path (with the
/// site's analytics of `analytics`, a query string).
pub async fn answers(t: &TestApp, key: &str, analytics: &str) -> Vec<(String, Value)> {
    let get = |path: String| {
        let req = t.req(Method::GET, &path).key(key);
        async move {
            let r = req.send().await;
            assert!(r.status.is_success(), "{path}: {}", r.text);
            (path, r.body)
        }
    };
    let mut out = Vec::new();
    for path in [
        "/jobs?per_page=100",
        "/jobs?search=engineer",
        "/categories",
        "/members",
        "/payments",
        "/plans",
        "/cms",
        "/cms/guides",
        "/webhooks",
        "/applications",
        "/alerts",
        "/audit",
        "/cms/guides?status=draft",
    ] {
        out.push(get(path.to_string()).await);
    }
    out.push(get(format!("/analytics?{analytics}")).await);
    let ids = |v: &Value, list: &str| -> Vec<String> {
        v[list]
            .as_array()
            .unwrap_or_else(|| panic!("{list} in {v}"))
            .iter()
            .map(|x| x["id"].as_str().unwrap().to_string())
            .collect()
    };
    let jobs = ids(&out[0].1, "data");
    for id in &jobs {
        out.push(get(format!("/jobs/{id}")).await);
    }
    // The figures of jobs are read over a period ending today only.
    if !analytics.starts_with("from=") {
        out.push(get(format!("/analytics/jobs?jobIds={}", jobs.join(","))).await);
    }
    for id in ids(&out[3].1, "data") {
        out.push(get(format!("/members/{id}")).await);
    }
    for id in ids(&out[7].1, "items") {
        out.push(get(format!("/cms/guides/{id}")).await);
    }
    for id in ids(&out[8].1, "data") {
        out.push(get(format!("/webhooks/{id}")).await);
        out.push(get(format!("/webhooks/{id}/deliveries")).await);
    }
    for id in ids(&out[9].1, "data") {
        out.push(get(format!("/applications/{id}")).await);
    }
    out
}

/// The answers hold what `populate` made (the comparison is of something).
pub fn holds_every_kind(answers: &[(String, Value)]) {
    let len = |path: &str, list: &str| {
        let (_, v) = answers.iter().find(|(p, _)| p == path).unwrap();
        v[list].as_array().map_or(0, Vec::len)
    };
    for (path, list, n) in [
        ("/jobs?per_page=100", "data", 3),
        ("/jobs?search=engineer", "data", 2),
        ("/categories", "data", 1),
        ("/members", "data", 1),
        ("/payments", "data", 1),
        ("/plans", "data", 1),
        ("/cms/guides", "items", 1),
        ("/cms/guides?status=draft", "items", 1),
        ("/webhooks", "data", 1),
        ("/applications", "data", 1),
        ("/alerts", "data", 1),
        ("/audit", "data", 1),
    ] {
        assert!(len(path, list) >= n, "{path}: fewer than {n} in {list}");
    }
    let deliveries = answers
        .iter()
        .find(|(p, _)| p.ends_with("/deliveries"))
        .unwrap();
    assert!(
        deliveries.1["data"]
            .as_array()
            .is_some_and(|d| !d.is_empty())
    );
}

fn assert_same(a: &[(String, Value)], b: &[(String, Value)]) {
    assert_eq!(a.len(), b.len());
    for ((path, x), (_, y)) in a.iter().zip(b) {
        assert_eq!(x, y, "GET {path} answers differently after the move");
    }
}

/// The number of rows of every table the organization has records in.
async fn counts(db: &Db) -> Vec<i64> {
    let mut out = Vec::new();
    for t in transfer::tables::TABLES {
        let sql = format!("SELECT COUNT(*) FROM {}", t.name);
        out.push(jobboard_store::dispatch!(db.reader(), p => {
            sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(sql)).fetch_one(p).await.unwrap()
        }));
    }
    out
}

async fn an_organization_moves_to_another_backend_and_back(b: Backend) {
    let sink = SmtpSink::start().await;
    let a = spawn(Backend::Sqlite, &sink).await;
    let (org, key) = a.new_org("Moving Board", "*", 1000, 1000).await;
    let _rx = populate(&a, org, &key).await;
    let dir = scratch();
    let first = export(&a, org, &dir, "first.jsonl").await;
    let rows = rows_of(&first);
    for t in transfer::tables::TABLES {
        let tag = format!("{{\"table\":\"{}\"", t.name);
        assert!(
            rows.iter().any(|r| r.starts_with(&tag)),
            "no {} row",
            t.name
        );
    }

    // Into the backend under test, ids kept: the same rows, the same answers.
    let to = spawn(b, &sink).await;
    let r = import(&to, &first, false).await.unwrap();
    assert_eq!(r.org, Some(org));
    assert_eq!(r.written() as usize, rows.len());
    assert!(r.notes.is_empty(), "{:?}", r.notes);
    let second = export(&to, org, &dir, "second.jsonl").await;
    assert_eq!(rows_of(&second), rows);
    let before = answers(&a, &key, MONTH).await;
    holds_every_kind(&before);
    assert_same(&before, &answers(&to, &key, MONTH).await);

    // Again: nothing written, nothing changed.
    let counted = counts(to.db()).await;
    let again = import(&to, &first, false).await.unwrap();
    assert_eq!(again.written(), 0);
    assert!(again.tables.iter().all(|t| t.left_out == 0));
    assert_eq!(counts(to.db()).await, counted);

    // Refused whole, nothing written: a truncated file, an altered one, a newer format.
    let text = std::fs::read_to_string(&second).unwrap();
    let damaged = [
        (
            "truncated",
            text[..text.len() * 2 / 3].to_string(),
            "truncated",
        ),
        (
            "altered",
            text.replacen("Rust Engineer", "Rust Engineers", 1),
            "damaged",
        ),
        (
            "newer",
            text.replacen("\"version\":2", "\"version\":3", 1),
            "format version 3",
        ),
        (
            "foreign",
            text.replacen(&format!("\"org_id\":{}", org.0), "\"org_id\":999", 1),
            "another organization",
        ),
    ];
    let fresh = spawn(Backend::Sqlite, &sink).await;
    let empty = counts(fresh.db()).await;
    for (name, body, says) in damaged {
        let path = dir.join(name);
        std::fs::write(&path, body).unwrap();
        let e = import(&fresh, &path, false).await.unwrap_err().to_string();
        assert!(
            e.contains(says) && e.contains("nothing was written"),
            "{name}: {e}"
        );
        assert_eq!(counts(fresh.db()).await, empty, "{name}");
    }
    // A file of format version 1 (before `keep_applications_after_job_days`) is read,
    // the setting taking the value its absence means.
    let v1 = dir.join("v1.jsonl");
    std::fs::write(&v1, as_version_1(&text)).unwrap();
    let older = spawn(Backend::Sqlite, &sink).await;
    import(&older, &v1, false).await.unwrap();
    let moved = jobboard_domain::orgs::get(older.db(), org).await.unwrap();
    assert_eq!(moved.keep_applications_after_job_days, 0);
    assert_eq!(moved.name, "Moving Board");

    // The commands: the file readable by its owner only; a refusal exits non-zero.
    let by_cli = dir.join("cli.jsonl");
    let org_arg = org.0.to_string();
    let (ok, out, err) = run_cli(
        &[
            "export",
            "--org",
            &org_arg,
            "--to",
            by_cli.to_str().unwrap(),
        ],
        &a.database_url,
    );
    assert!(ok && out.contains("exported"), "{out}{err}");
    assert_eq!(rows_of(&by_cli), rows);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&by_cli).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let (ok, _, err) = run_cli(
        &["import", "--from", dir.join("altered").to_str().unwrap()],
        &fresh.database_url,
    );
    assert!(!ok && err.contains("damaged"), "{err}");
    // The organization's id is another organization's on the first server.
    let e = import(&fresh, &second, false).await;
    assert!(e.is_ok(), "org {org} is free on a fresh server");
    let taken = spawn(Backend::Sqlite, &sink).await;
    taken.new_org("Someone else", "*", 10, 10).await;
    let e = import(&taken, &second, false)
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("--as-new-org"), "{e}");

    // Back to SQLite from the backend under test.
    let back = spawn(Backend::Sqlite, &sink).await;
    import(&back, &second, false).await.unwrap();
    assert_eq!(
        rows_of(&export(&back, org, &dir, "third.jsonl").await),
        rows
    );
    assert_same(&before, &answers(&back, &key, MONTH).await);

    // A copy beside the original: new ids; what is unique on a server (the key, the
    // staff address, the domain claim) stays with the original and is said so.
    let copy = import(&a, &second, true).await.unwrap();
    let new_org = copy.org.unwrap();
    assert_ne!(new_org, org);
    let left: Vec<(&str, u64)> = copy
        .tables
        .iter()
        .filter(|t| t.left_out > 0)
        .map(|t| (t.table, t.left_out))
        .collect();
    assert_eq!(
        left,
        [
            ("domain_claims", 1),
            ("api_keys", 1),
            ("dashboard_users", 1),
            ("dashboard_two_factor", 1),
            ("dashboard_recovery_codes", 1)
        ]
    );
    assert!(
        copy.notes
            .iter()
            .any(|n| n.contains("staff@moving.example")),
        "{:?}",
        copy.notes
    );
    let copy_key = a.new_key(new_org, "*", 1000, 1000).await;
    let (orig, dup) = (
        answers(&a, &key, MONTH).await,
        answers(&a, &copy_key, MONTH).await,
    );
    let titles = |v: &Value| -> Vec<String> {
        v["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["title"].to_string())
            .collect()
    };
    assert_eq!(titles(&orig[0].1), titles(&dup[0].1));
    assert_ne!(orig[0].1["data"][0]["id"], dup[0].1["data"][0]["id"]);
    assert_eq!(orig[0].1["meta"], dup[0].1["meta"]);
    let _ = std::fs::remove_dir_all(&dir);
}
