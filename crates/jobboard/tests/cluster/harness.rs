//! The cluster under test: three `jobboard serve` processes of the built binary on one
//! fresh PostgreSQL database, and HAProxy in front of them (round robin, a generated
//! `haproxy.cfg` in a directory of the test's own), all on 127.0.0.1. Setup goes through
//! the binary's commands (`orgs`, `keys`, `users`); every request of a test goes through the
//! balancer, and each node's own `/metrics` tells which node answered what.
//!
//! Without `JOBBOARD_TEST_POSTGRES_URL` or without HAProxy a test prints SKIPPED, and under
//! CI (`CI=true`) fails instead. The tests of this binary run one at a time: each starts
//! four processes on a small machine.

use std::{
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
};

use reqwest::Method;
use serde_json::{Value, json};

use crate::{
    common::{self, Backend, Resp},
    observe::{Counters, parse_counters, poll, secs},
};

/// The nodes behind the balancer.
pub const NODES: usize = 3;

/// One test at a time (each runs its own cluster).
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// HAProxy's binary: `haproxy` on the `PATH`, else where Debian installs it.
pub fn haproxy_binary() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default();
    on_path
        .into_iter()
        .chain(["/usr/sbin", "/usr/local/sbin"].map(PathBuf::from))
        .map(|dir| dir.join("haproxy"))
        .find(|p| p.is_file())
}

/// HAProxy's binary when the cluster can run; otherwise prints SKIPPED (and fails under CI).
fn requirements(test: &str) -> Option<PathBuf> {
    if !common::postgres_available(test) {
        return None;
    }
    match haproxy_binary() {
        Some(p) => Some(p),
        None if under_ci() => panic!(
            "{test}: HAProxy is not installed, and CI must not skip the cluster tests (apt-get install haproxy)"
        ),
        None => {
            eprintln!("SKIPPED {test}: install HAProxy (Debian's haproxy package) to run it");
            None
        }
    }
}

/// `n` distinct free ports on 127.0.0.1 (bound together, then released).
pub fn free_ports(n: usize) -> Vec<u16> {
    let listeners: Vec<_> = (0..n)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0"))
        .collect();
    listeners
        .iter()
        .map(|l| l.local_addr().unwrap().port())
        .collect()
}

/// The binary with an empty environment: nothing it was not told here (no SMTP server, no
/// configuration file, no proxy) can send it anywhere but 127.0.0.1.
pub fn jobboard() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_jobboard"));
    c.env_clear().env("RUST_LOG", "warn");
    c
}

/// Runs `jobboard --database DB ARGS...` with `stdin`; its standard output (panics when
/// the command fails).
pub fn cli(database: &str, args: &[&str], stdin: Option<&str>) -> String {
    use std::io::Write;
    let mut child = jobboard()
        .arg("--database")
        .arg(database)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run jobboard");
    let mut input = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        input.write_all(text.as_bytes()).unwrap();
    }
    drop(input);
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "jobboard {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The last line of a command's output (where `orgs create`, `keys create` and `users
/// create` print what they made).
pub fn last_line(out: &str) -> String {
    out.lines().last().unwrap_or("").trim().to_string()
}

/// The `metrics_token` of the cluster's nodes (their `/metrics` tells which node
/// answered what).
pub const METRICS_TOKEN: &str = "cluster-metrics-token-0123456789";

/// One `jobboard serve` process.
pub struct Node {
    pub port: u16,
    pub base: String,
    child: Option<Child>,
    log: PathBuf,
    stdout: PathBuf,
}

impl Node {
    /// Starts `serve` on `port` over `database`, with `public_url` as its address.
    pub fn spawn(database: &str, port: u16, public_url: &str, dir: &Path, n: usize) -> Node {
        let log = dir.join(format!("node{n}.log"));
        let stdout = dir.join(format!("node{n}.out"));
        let child = jobboard()
            // Webhooks may go to this machine's receiver, and nowhere else private.
            .env("JOBBOARD_WEBHOOK_ALLOWED_CIDRS", "127.0.0.1/32")
            // A killed node's leases run out 5 s after the attempt time-out.
            .env("JOBBOARD_WEBHOOK_TIMEOUT", "5")
            .env("JOBBOARD_WEBHOOK_RETRY_SCHEDULE", "1,1,1,1,1,1,1,1")
            .env("JOBBOARD_TRUSTED_PROXIES", "127.0.0.1")
            .env("JOBBOARD_DB_MAX_CONNECTIONS", "8")
            .env("JOBBOARD_METRICS_TOKEN", METRICS_TOKEN)
            .args(["--database", database, "serve", "--listen"])
            .arg(format!("127.0.0.1:{port}"))
            .args(["--public-url", public_url])
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&stdout).unwrap())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("start jobboard serve");
        Node {
            port,
            base: format!("http://127.0.0.1:{port}"),
            child: Some(child),
            log,
            stdout,
        }
    }

    pub fn alive(&self) -> bool {
        self.child.is_some()
    }

    /// What the node printed on its standard output.
    pub fn printed(&self) -> String {
        std::fs::read_to_string(&self.stdout).unwrap_or_default()
    }

    /// Kills the process with SIGKILL and waits until it is gone.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// True when `/readyz` answers 200 now.
    pub async fn is_ready(&self, client: &reqwest::Client) -> bool {
        let url = format!("{}/readyz", self.base);
        matches!(client.get(&url).send().await, Ok(r) if r.status() == 200)
    }

    /// Waits (up to 30 s) until `/readyz` answers 200.
    pub async fn ready(&self, client: &reqwest::Client) {
        let url = format!("{}/readyz", self.base);
        poll(
            &format!("node {} ready", self.base),
            secs(30),
            async || match client.get(&url).send().await {
                Ok(r) if r.status() == 200 => Ok(()),
                Ok(r) => Err(format!("status {}", r.status())),
                Err(e) => Err(e.to_string()),
            },
        )
        .await
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.kill();
    }
}

/// An HTTP client for 127.0.0.1 (no proxy from the environment).
pub fn client() -> reqwest::Client {
    jobboard::init_tls();
    reqwest::Client::builder()
        .no_proxy()
        .timeout(secs(30))
        .build()
        .unwrap()
}

/// HAProxy's configuration: round robin over `nodes`, each request balanced on its own,
/// no health checks (every node stays in rotation; a node that refuses connections is
/// skipped by retrying on another: `retries` with `redispatch`).
pub fn haproxy_config(port: u16, nodes: &[u16]) -> String {
    let mut cfg = format!(
        "global
    maxconn 1000

defaults
    mode http
    timeout connect 1s
    timeout client 30s
    timeout server 30s
    timeout http-request 10s
    retries 3
    option redispatch 1
    option forwardfor

frontend board
    bind 127.0.0.1:{port}
    default_backend nodes

backend nodes
    balance roundrobin
"
    );
    for (i, p) in nodes.iter().enumerate() {
        cfg.push_str(&format!("    server node{} 127.0.0.1:{p}\n", i + 1));
    }
    cfg
}

/// The running cluster and a key (with large limits) of its organization.
pub struct Cluster {
    /// The balancer's address: every request of a test goes here.
    pub base: String,
    pub client: reqwest::Client,
    pub key: String,
    pub org_id: i64,
    pub database_url: String,
    pub nodes: Vec<Node>,
    haproxy: Option<Child>,
    dir: PathBuf,
    _serial: tokio::sync::MutexGuard<'static, ()>,
}

impl Cluster {
    /// A fresh database with one organization and its key (made with the binary's
    /// commands), three nodes on it and HAProxy in front; `None` when skipped.
    pub async fn start(test: &str) -> Option<Cluster> {
        let haproxy = requirements(test)?;
        let serial = SERIAL.lock().await;
        let (database_url, _) = common::fresh_database(Backend::Postgres).await;
        let org = last_line(&cli(
            &database_url,
            &["orgs", "create", "--name", "Cluster board"],
            None,
        ));
        let org_id: i64 = org.parse().expect("organization id");
        let key = last_line(&cli(
            &database_url,
            &[
                "keys",
                "create",
                "--org",
                &org,
                "--read-limit",
                "100000",
                "--write-limit",
                "100000",
            ],
            None,
        ));
        let mut c = Cluster::empty(database_url, serial, org_id, key);
        c.launch(&haproxy).await;
        Some(c)
    }

    fn empty(
        database_url: String,
        serial: tokio::sync::MutexGuard<'static, ()>,
        org_id: i64,
        key: String,
    ) -> Cluster {
        let dir = std::env::temp_dir().join(format!("jobboard-cluster-{}", uuid::Uuid::now_v7()));
        std::fs::create_dir_all(&dir).unwrap();
        Cluster {
            base: String::new(),
            client: client(),
            key,
            org_id,
            database_url,
            nodes: Vec::new(),
            haproxy: None,
            dir,
            _serial: serial,
        }
    }

    /// A fresh, empty database and no node yet (first starts are under test); `None` when
    /// skipped.
    pub async fn empty_database(test: &str) -> Option<Cluster> {
        if !common::postgres_available(test) {
            return None;
        }
        let serial = SERIAL.lock().await;
        let (database_url, _) = common::fresh_database(Backend::Postgres).await;
        Some(Cluster::empty(database_url, serial, 0, String::new()))
    }

    /// Starts the three nodes at once, without a balancer (they link to the address it
    /// would have).
    pub fn spawn_nodes(&mut self) {
        let ports = free_ports(NODES + 1);
        self.base = format!("http://127.0.0.1:{}", ports[0]);
        for (i, port) in ports[1..].iter().enumerate() {
            let node = Node::spawn(&self.database_url, *port, &self.base, &self.dir, i + 1);
            self.nodes.push(node);
        }
    }

    async fn launch(&mut self, haproxy: &Path) {
        self.spawn_nodes();
        let port = self.base.rsplit(':').next().unwrap().parse().unwrap();
        let nodes: Vec<u16> = self.nodes.iter().map(|n| n.port).collect();
        let cfg = self.dir.join("haproxy.cfg");
        std::fs::write(&cfg, haproxy_config(port, &nodes)).unwrap();
        let log = std::fs::File::create(self.dir.join("haproxy.log")).unwrap();
        self.haproxy = Some(
            Command::new(haproxy)
                .env_clear()
                .arg("-db")
                .arg("-f")
                .arg(&cfg)
                .stdin(Stdio::null())
                .stdout(log.try_clone().unwrap())
                .stderr(log)
                .spawn()
                .expect("start haproxy"),
        );
        for n in &self.nodes {
            n.ready(&self.client).await;
        }
        let url = format!("{}/healthz", self.base);
        let client = self.client.clone();
        poll("the balancer answers", secs(30), async || {
            match client.get(&url).send().await {
                Ok(r) if r.status() == 200 => Ok(()),
                Ok(r) => Err(format!("status {}", r.status())),
                Err(e) => Err(e.to_string()),
            }
        })
        .await;
    }

    /// Runs one of the binary's commands on the cluster's database.
    pub fn cli(&self, args: &[&str], stdin: Option<&str>) -> String {
        cli(&self.database_url, args, stdin)
    }

    /// Each node's request counters (`None` for a node that was killed).
    pub async fn counters(&self) -> Vec<Option<Counters>> {
        let mut out = Vec::new();
        for n in &self.nodes {
            if !n.alive() {
                out.push(None);
                continue;
            }
            let text = self
                .client
                .get(format!("{}/metrics", n.base))
                .bearer_auth(METRICS_TOKEN)
                .send()
                .await
                .expect("a node's /metrics")
                .text()
                .await
                .unwrap();
            out.push(Some(parse_counters(&text)));
        }
        out
    }

    /// An API request through the balancer with the cluster's key (`path` under `/api`).
    pub fn api(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.api_with(&self.key, method, path)
    }

    /// An API request through the balancer with `key`.
    pub fn api_with(&self, key: &str, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.client
            .request(method, format!("{}/api{path}", self.base))
            .header("x-api-key", key)
    }

    pub async fn get(&self, path: &str) -> Resp {
        Resp::read(self.api(Method::GET, path).send().await.expect("GET")).await
    }

    pub async fn post(&self, path: &str, body: Value) -> Resp {
        self.send_json(Method::POST, path, body).await
    }

    pub async fn patch(&self, path: &str, body: Value) -> Resp {
        self.send_json(Method::PATCH, path, body).await
    }

    async fn send_json(&self, method: Method, path: &str, body: Value) -> Resp {
        let sent = self.api(method.clone(), path).json(&body).send().await;
        Resp::read(sent.unwrap_or_else(|e| panic!("{method} {path}: {e}"))).await
    }

    /// A page through the balancer, asked for as a browser does.
    pub async fn page(&self, path: &str) -> Resp {
        page(&self.client, &self.base, path).await
    }
}

/// The page at `path` of `base`, asked for as a browser does, with `client`.
pub async fn page(client: &reqwest::Client, base: &str, path: &str) -> Resp {
    Resp::read(
        client
            .get(format!("{base}{path}"))
            .header("accept", "text/html")
            .send()
            .await
            .expect("GET page"),
    )
    .await
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if let Some(mut h) = self.haproxy.take() {
            let _ = h.kill();
            let _ = h.wait();
        }
        for n in &mut self.nodes {
            n.kill();
        }
        if std::thread::panicking() {
            for n in &self.nodes {
                let log = std::fs::read_to_string(&n.log).unwrap_or_default();
                let lines: Vec<&str> = log.lines().collect();
                eprintln!(
                    "--- the last lines of the log of the node on port {}:",
                    n.port
                );
                for line in &lines[lines.len().saturating_sub(30)..] {
                    eprintln!("{line}");
                }
            }
            let log = std::fs::read_to_string(self.dir.join("haproxy.log")).unwrap_or_default();
            eprintln!("--- haproxy:\n{log}");
        }
        let _ = std::fs::remove_dir_all(&self.dir);
        drop_database(&self.database_url);
    }
}

/// The secret of the subscriptions [`subscribe`] makes.
pub const SECRET: &str = "cluster-webhook-secret";

/// Subscribes `path` of the receiver to `event`; the subscription's id.
pub async fn subscribe(
    c: &Cluster,
    rx: &crate::webhook_receiver::Receiver,
    event: &str,
    path: &str,
) -> String {
    rx.secret(path, SECRET);
    let r = c
        .post(
            "/webhooks",
            json!({"event": event, "target_type": "webhook", "target_url": rx.url(path), "secret": SECRET}),
        )
        .await;
    r.expect(201);
    r.body["data"]["id"].as_str().unwrap().to_string()
}

/// Drops the test's database (its connections ended by force), saying why when it cannot.
/// On a thread of its own: `Drop` cannot await.
fn drop_database(url: &str) {
    let (Some(admin), Some(name)) = (common::postgres_url(), url.rsplit('/').next()) else {
        return;
    };
    if !name.starts_with("jbt_") || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return;
    }
    let sql = format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)");
    let outcome = std::thread::spawn(move || -> Result<(), String> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        rt.block_on(async {
            let pool = sqlx::PgPool::connect(&admin)
                .await
                .map_err(|e| e.to_string())?;
            let dropped = sqlx::query(sqlx::AssertSqlSafe(sql)).execute(&pool).await;
            pool.close().await;
            dropped.map(|_| ()).map_err(|e| e.to_string())
        })
    })
    .join();
    if let Ok(Err(e)) = outcome {
        eprintln!("could not drop the test database {name}: {e}");
    }
}
