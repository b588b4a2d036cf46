//! Test harness: a real server on 127.0.0.1:0 over a fresh database, on SQLite or PostgreSQL.
//!
//! Every storage-touching test is written once as `async fn name(b: Backend)` and listed in
//! `backends!`, which runs it on both. PostgreSQL cases need `JOBBOARD_TEST_POSTGRES_URL`
//! (a role allowed to create databases); without it they print a SKIPPED line, and under
//! CI (`CI=true`) they fail instead.

#![allow(dead_code)]

use std::path::PathBuf;

use jobboard_domain::keys::store as keys;
use jobboard_store::Db;

use jobboard_domain::{JobId, OrgId, orgs};

use jobboard::{
    config::Config,
    server::{self, App, AppState, Running},
};
use reqwest::{Method, StatusCode};
use serde_json::Value;

/// The `metrics_token` of test servers.
pub const METRICS_TOKEN: &str = "test-metrics-token-0123456789";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// Runs each listed `async fn(Backend)` on SQLite and on PostgreSQL.
#[macro_export]
macro_rules! backends {
    ($($name:ident),* $(,)?) => {
        $(
            mod $name {
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn sqlite() {
                    super::$name($crate::common::Backend::Sqlite).await;
                }
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn postgres() {
                    if $crate::common::postgres_available(concat!(module_path!(), "::postgres")) {
                        super::$name($crate::common::Backend::Postgres).await;
                    }
                }
            }
        )*
    };
}

pub fn postgres_url() -> Option<String> {
    std::env::var("JOBBOARD_TEST_POSTGRES_URL")
        .ok()
        .filter(|s| !s.is_empty())
}

/// True when PostgreSQL tests can run; otherwise prints SKIPPED (and fails under CI).
pub fn postgres_available(test: &str) -> bool {
    if postgres_url().is_some() {
        return true;
    }
    if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
        panic!(
            "{test}: JOBBOARD_TEST_POSTGRES_URL is not set, and CI must not skip PostgreSQL tests"
        );
    }
    eprintln!("SKIPPED {test}: set JOBBOARD_TEST_POSTGRES_URL to run it on PostgreSQL");
    false
}

/// A fresh, empty database URL for one test.
pub async fn fresh_database(b: Backend) -> (String, Option<PathBuf>) {
    let name = format!("jbt_{}", uuid::Uuid::now_v7().simple());
    match b {
        Backend::Sqlite => {
            let path = std::env::temp_dir().join(format!("{name}.db"));
            (format!("sqlite://{}", path.display()), Some(path))
        }
        Backend::Postgres => {
            let admin = postgres_url().expect("postgres url");
            let pool = sqlx::PgPool::connect(&admin)
                .await
                .expect("connect to test PostgreSQL");
            sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
                .execute(&pool)
                .await
                .expect("create test database");
            pool.close().await;
            let base = admin.rsplit_once('/').map(|(b, _)| b).unwrap_or(&admin);
            (format!("{base}/{name}"), None)
        }
    }
}

/// A running test server and a key of a fresh organization on it.
pub struct TestApp {
    pub backend: Backend,
    pub base: String,
    pub client: reqwest::Client,
    pub key: String,
    pub org_id: OrgId,
    pub app: AppState,
    pub database_url: String,
    running: Option<Running>,
    sqlite_path: Option<PathBuf>,
}

impl TestApp {
    pub async fn spawn(b: Backend) -> TestApp {
        TestApp::spawn_with(b, |_| {}).await
    }

    /// Spawns with a config adjusted by `f` (starting from the defaults, with the
    /// worker and scheduler on, private targets allowed, and large rate limits for keys
    /// made by `key()`).
    pub async fn spawn_with(b: Backend, f: impl FnOnce(&mut Config)) -> TestApp {
        let (url, sqlite_path) = fresh_database(b).await;
        TestApp::spawn_on(b, url, sqlite_path, f).await
    }

    /// [`TestApp::spawn_with`] on the database at `url` (made by the caller; removed
    /// with the app when `sqlite_path` is given or it is PostgreSQL).
    pub async fn spawn_on(
        b: Backend,
        url: String,
        sqlite_path: Option<PathBuf>,
        f: impl FnOnce(&mut Config),
    ) -> TestApp {
        let mut config = Config::with_database(&url);
        config.listen = "127.0.0.1:0".parse().unwrap();
        config.db_max_connections = 8;
        config.webhooks.allow_private_targets = true;
        // /metrics is served on the main listener only behind a token.
        config.metrics_token = Some(jobboard::config::Secret(METRICS_TOKEN.into()));
        f(&mut config);
        let app = App::start(config).await.expect("start app");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let running = server::spawn(app.clone(), listener).unwrap();
        let base = format!("http://{}", running.addr);
        let client = {
            jobboard::init_tls();
            reqwest::Client::builder().no_proxy().build().unwrap()
        };
        let mut t = TestApp {
            backend: b,
            base,
            client,
            key: String::new(),
            org_id: OrgId(0),
            app,
            database_url: url,
            running: Some(running),
            sqlite_path,
        };
        let (org, key) = t.new_org("Test org", "*", 10_000, 10_000).await;
        t.org_id = org;
        t.key = key;
        t
    }

    pub fn db(&self) -> &Db {
        &self.app.db
    }

    /// `GET /metrics` with the test server's token ([`METRICS_TOKEN`]).
    pub async fn metrics(&self) -> Resp {
        self.req(Method::GET, "/metrics")
            .no_key()
            .header("authorization", &format!("Bearer {METRICS_TOKEN}"))
            .send()
            .await
    }

    /// The operations listener's address, when the config set `metrics_listen`.
    pub fn metrics_addr(&self) -> Option<std::net::SocketAddr> {
        self.running.as_ref().and_then(|r| r.metrics_addr)
    }

    /// Creates an organization and a key for it.
    pub async fn new_org(
        &self,
        name: &str,
        scopes: &str,
        read: i64,
        write: i64,
    ) -> (OrgId, String) {
        let org = orgs::create(self.db(), name).await.unwrap();
        let key = self.new_key(org.id, scopes, read, write).await;
        (org.id, key)
    }

    pub async fn new_key(&self, org: OrgId, scopes: &str, read: i64, write: i64) -> String {
        keys::create(
            self.db(),
            keys::NewKey {
                org_id: org,
                name: "test",
                scopes,
                read_limit: read,
                write_limit: write,
            },
        )
        .await
        .unwrap()
        .1
    }

    /// Stores a minimal active job of `org` directly (for tests of other resources that
    /// refer to jobs) and returns its id.
    pub async fn insert_job(&self, org: OrgId, title: &str) -> JobId {
        let id = JobId(uuid::Uuid::now_v7());
        let now = jobboard_store::Ts::now();
        let slug = format!(
            "{}-{}",
            jobboard_core::text::slugify(title, 60),
            id.0.simple()
        );
        jobboard_store::dispatch!(self.db().writer(), p => {
            sqlx::query(
                "INSERT INTO jobs (id, org_id, title, description, description_text, company_name, slug, status, created_at, updated_at)
                 VALUES ($1, $2, $3, $4, $4, $5, $6, 'active', $7, $7)",
            )
            .bind(id)
            .bind(org)
            .bind(title)
            .bind("A job.")
            .bind("Acme")
            .bind(slug)
            .bind(now)
            .execute(p)
            .await
            .unwrap();
        });
        id
    }

    /// A request with this app's key.
    pub fn req(&self, method: Method, path: &str) -> Req<'_> {
        Req {
            app: self,
            method,
            path: path.to_string(),
            key: Some(self.key.clone()),
            body: None,
            headers: Vec::new(),
        }
    }

    pub async fn get(&self, path: &str) -> Resp {
        self.req(Method::GET, path).send().await
    }

    /// A request for a page (a path outside `/api`), sent as a browser sends it (asking
    /// for HTML); `.header("host", ...)` picks the board.
    pub fn page_req(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.client
            .request(method, format!("{}{path}", self.base))
            .header("accept", "text/html,application/xhtml+xml")
    }

    /// `GET` of a page, read into a [`Resp`] (its HTML in `text`).
    pub async fn page(&self, path: &str) -> Resp {
        Resp::read(
            self.page_req(Method::GET, path)
                .send()
                .await
                .expect("request failed"),
        )
        .await
    }

    pub async fn post(&self, path: &str, body: Value) -> Resp {
        self.req(Method::POST, path).json(body).send().await
    }

    pub async fn patch(&self, path: &str, body: Value) -> Resp {
        self.req(Method::PATCH, path).json(body).send().await
    }

    pub async fn delete(&self, path: &str) -> Resp {
        self.req(Method::DELETE, path).send().await
    }

    /// Stops the server gracefully.
    pub async fn stop(mut self) {
        if let Some(r) = self.running.take() {
            r.shutdown().await.unwrap();
        }
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if let Some(p) = &self.sqlite_path {
            for suffix in ["", "-wal", "-shm", "-lock"] {
                let _ = std::fs::remove_file(format!("{}{suffix}", p.display()));
            }
        }
        if self.backend == Backend::Postgres {
            drop_postgres_database(&self.database_url);
        }
    }
}

/// Drops the test's own PostgreSQL database (its connections ended by force), so a run
/// leaves no database behind. On a thread of its own: `Drop` cannot await.
pub fn drop_postgres_database(url: &str) {
    let (Some(admin), Some(name)) = (postgres_url(), url.rsplit('/').next()) else {
        return;
    };
    if !name.starts_with("jbt_") || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return;
    }
    let sql = format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)");
    let _ = std::thread::spawn(move || {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            return;
        };
        rt.block_on(async {
            if let Ok(pool) = sqlx::PgPool::connect(&admin).await {
                let _ = sqlx::query(sqlx::AssertSqlSafe(sql)).execute(&pool).await;
                pool.close().await;
            }
        });
    })
    .join();
}

pub struct Req<'a> {
    app: &'a TestApp,
    method: Method,
    path: String,
    key: Option<String>,
    body: Option<Vec<u8>>,
    headers: Vec<(String, String)>,
}

impl Req<'_> {
    pub fn key(mut self, key: &str) -> Self {
        self.key = Some(key.to_string());
        self
    }

    pub fn no_key(mut self) -> Self {
        self.key = None;
        self
    }

    pub fn json(mut self, v: Value) -> Self {
        self.body = Some(serde_json::to_vec(&v).unwrap());
        self.headers
            .push(("content-type".into(), "application/json".into()));
        self
    }

    pub fn raw(mut self, body: impl Into<Vec<u8>>, content_type: Option<&str>) -> Self {
        self.body = Some(body.into());
        if let Some(ct) = content_type {
            self.headers.push(("content-type".into(), ct.into()));
        }
        self
    }

    pub fn header(mut self, k: &str, v: &str) -> Self {
        self.headers.push((k.into(), v.into()));
        self
    }

    pub async fn send(self) -> Resp {
        let url = if self.path.starts_with('/')
            && !self.path.starts_with("/api")
            && !is_root_path(&self.path)
        {
            format!("{}/api{}", self.app.base, self.path)
        } else {
            format!("{}{}", self.app.base, self.path)
        };
        let mut rb = self.app.client.request(self.method, url);
        if let Some(k) = &self.key {
            rb = rb.header("x-api-key", k);
        }
        for (k, v) in &self.headers {
            rb = rb.header(k, v);
        }
        if let Some(b) = self.body {
            rb = rb.body(b);
        }
        Resp::read(rb.send().await.expect("request failed")).await
    }
}

impl Resp {
    /// Reads a response whole: its JSON body when it is JSON, its text always.
    pub async fn read(res: reqwest::Response) -> Resp {
        let status = res.status();
        let headers = res.headers().clone();
        let bytes = res.bytes().await.unwrap_or_default();
        let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        Resp {
            status,
            headers,
            body,
            text: String::from_utf8_lossy(&bytes).into_owned(),
        }
    }

    /// The body parsed as an HTML document.
    pub fn html(&self) -> scraper::Html {
        scraper::Html::parse_document(&self.text)
    }
}

fn is_root_path(p: &str) -> bool {
    ["/healthz", "/readyz", "/metrics"]
        .iter()
        .any(|r| p.starts_with(r))
}

#[derive(Debug)]
pub struct Resp {
    pub status: StatusCode,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
    pub text: String,
}

impl Resp {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Asserts the status, printing the body when it differs.
    #[track_caller]
    pub fn expect(&self, status: u16) -> &Self {
        assert_eq!(
            self.status.as_u16(),
            status,
            "unexpected status; body: {}",
            self.text
        );
        self
    }

    /// Asserts an error envelope with this status and code.
    #[track_caller]
    pub fn expect_error(&self, status: u16, code: &str) -> &Self {
        self.expect(status);
        let e = &self.body["error"];
        assert_eq!(e["code"], code, "body: {}", self.text);
        assert!(
            e["message"].as_str().is_some_and(|m| !m.is_empty()),
            "message missing: {}",
            self.text
        );
        assert_eq!(
            e["url"].as_str().unwrap(),
            format!("/api/docs/errors#{code}")
        );
        assert!(e.get("details").is_some(), "details missing: {}", self.text);
        self
    }

    /// The `field` names of a validation error.
    pub fn error_fields(&self) -> Vec<String> {
        self.body["error"]["details"]["fields"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|f| f["field"].as_str().unwrap_or("").to_string())
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// The `jobboard` binary, with the environment cleared of settings.
pub fn bin() -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_jobboard"));
    c.env_remove("DATABASE_URL")
        .env_remove("JOBBOARD_CONFIG")
        .env("RUST_LOG", "warn");
    c
}

/// Runs `jobboard --database DB ARGS...`: (success, stdout, stderr).
pub fn run_cli(args: &[&str], db: &str) -> (bool, String, String) {
    let out = bin().arg("--database").arg(db).args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// Takes every connection `pool` may hold, all at once, then gives them back: opens those
/// not open yet, and fails (after the pool's acquire time-out) when one cannot be had.
pub async fn take_every_connection(pool: &jobboard_store::Pool) {
    jobboard_store::dispatch!(pool, p => {
        let mut held = Vec::new();
        for _ in 0..p.options().get_max_connections() {
            held.push(p.acquire().await.expect("every pooled connection can be taken"));
        }
    });
}

/// The value of an unlabelled series of a /metrics text.
pub fn gauge(text: &str, name: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .unwrap_or_else(|| panic!("{name} missing: {text}"))
        .parse()
        .unwrap()
}

/// The names of the organization's events, oldest first.
pub async fn event_names(t: &TestApp) -> Vec<String> {
    jobboard_store::events::list_for_org(t.db(), t.org_id)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.event_type)
        .collect()
}

/// How many of the organization's events are named `name`.
pub async fn events_named(t: &TestApp, name: &str) -> usize {
    event_names(t).await.iter().filter(|n| *n == name).count()
}

/// The organization's jobs of every status as the API lists them: (title, status), by
/// title.
pub async fn all_jobs(t: &TestApp) -> Vec<(String, String)> {
    let r = t
        .get("/jobs?status=pending,active,expired,draft&per_page=100")
        .await;
    r.expect(200);
    let mut all: Vec<(String, String)> = r.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["title"].as_str().unwrap().to_string(),
                j["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    all.sort();
    all
}

/// The Python of the test tools (scripts/test-tools.sh installs the libraries the
/// stand-ins use there), else the system's.
pub fn python() -> String {
    let venv = std::env::var("JOBBOARD_VENV").unwrap_or_else(|_| "/var/tmp/jobboard-venv".into());
    let p = format!("{venv}/bin/python");
    if std::path::Path::new(&p).exists() {
        p
    } else {
        "python3".into()
    }
}

/// True when the tools' Python can run `import` (the library a stand-in or a test needs:
/// CI installs it, and there its absence fails the test; elsewhere the test says SKIPPED).
pub fn python_has(test: &str, import: &str, what: &str) -> bool {
    let ok = std::process::Command::new(python())
        .args(["-c", import])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(std::env::var("CI").is_err(), "{test}: {what} is missing");
        eprintln!("SKIPPED {test}: {what} is missing");
    }
    ok
}

/// Starts `cmd` (a stand-in of `scripts/` run by the tools' Python) and reads the port it
/// prints first (`listening on PORT`): the child and its base URL on 127.0.0.1.
pub fn start_standin(mut cmd: std::process::Command) -> (std::process::Child, String) {
    use std::io::BufRead;
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python runs");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line
        .trim()
        .strip_prefix("listening on ")
        .expect("the stand-in's port")
        .to_string();
    (child, format!("http://127.0.0.1:{port}"))
}

/// The path of `scripts/<name>`.
pub fn script(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scripts")
        .join(name)
}
