//! A real browser for tests: Debian's chromedriver driving headless Chromium through
//! WebDriver (fantoccini), with a fresh profile, and every host name but 127.0.0.1
//! resolving to nothing, so no page can reach another host. Also runs axe-core in the
//! page for accessibility checks.
//!
//! The tools come from `scripts/browser-setup.sh` (which `.ci/run` runs with
//! `--install`). When they are missing a test prints SKIPPED, and fails under CI
//! (`CI=true`), like the PostgreSQL cases.
//!
//! ```ignore
//! let Some(browser) = Browser::start("my_journey").await else { return };
//! browser.goto(&format!("{base}/")).await;
//! assert!(browser.axe_violations().await.is_empty());
//! browser.close().await;
//! ```

use std::{
    net::TcpListener,
    path::PathBuf,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use fantoccini::{Client, ClientBuilder, Locator, elements::Element};
use serde_json::{Value, json};

/// The tools `scripts/browser-setup.sh` found.
#[derive(Debug, Clone, Default)]
pub struct Tools {
    pub chromium: String,
    pub chromedriver: String,
    /// axe-core's script, when installed.
    pub axe_js: Option<String>,
}

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// Prints SKIPPED for `test` because of `why`, or fails under CI.
pub fn skip(test: &str, why: &str) {
    if in_ci() {
        panic!(
            "{test}: {why}, and CI must not skip browser tests (scripts/browser-setup.sh --install)"
        );
    }
    eprintln!("SKIPPED {test}: {why} (scripts/browser-setup.sh --install)");
}

/// The browser tools, from `scripts/browser-setup.sh` (installing what is missing under
/// CI).
pub fn tools() -> Tools {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scripts/browser-setup.sh"
    );
    let mut cmd = Command::new("bash");
    cmd.arg(script);
    if in_ci() {
        cmd.arg("--install");
    }
    let out = cmd
        .stderr(Stdio::inherit())
        .output()
        .expect("run browser-setup.sh");
    let mut t = Tools::default();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        match line.split_once('=') {
            Some(("CHROMIUM", v)) => t.chromium = v.to_string(),
            Some(("CHROMEDRIVER", v)) => t.chromedriver = v.to_string(),
            Some(("AXE_JS", v)) if !v.is_empty() => t.axe_js = Some(v.to_string()),
            _ => {}
        }
    }
    t
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A running chromedriver and one browser session.
pub struct Browser {
    pub client: Client,
    pub tools: Tools,
    driver: Child,
    profile: PathBuf,
    axe_source: Option<String>,
}

impl Browser {
    /// Starts chromedriver and a headless Chromium session; `None` (after printing
    /// SKIPPED) when the tools are missing outside CI.
    pub async fn start(test: &str) -> Option<Browser> {
        let tools = tools();
        if tools.chromium.is_empty() || tools.chromedriver.is_empty() {
            skip(test, "Chromium or chromedriver is not installed");
            return None;
        }
        let port = free_port();
        let driver = Command::new(&tools.chromedriver)
            .arg(format!("--port={port}"))
            .arg("--allowed-ips=127.0.0.1")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        let profile = std::env::temp_dir().join(format!(
            "jobboard-browser-{}",
            uuid::Uuid::now_v7().simple()
        ));
        std::fs::create_dir_all(&profile).unwrap();
        let url = format!("http://127.0.0.1:{port}");
        // chromedriver answers once it listens.
        let deadline = Instant::now() + Duration::from_secs(30);
        jobboard::init_tls();
        let probe = reqwest::Client::builder().no_proxy().build().unwrap();
        while probe.get(format!("{url}/status")).send().await.is_err() {
            assert!(Instant::now() < deadline, "chromedriver did not start");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let mut caps = serde_json::Map::new();
        caps.insert(
            "goog:chromeOptions".into(),
            json!({
                "binary": tools.chromium,
                "args": [
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--no-first-run",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    "--disable-dev-shm-usage",
                    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
                    format!("--user-data-dir={}", profile.display()),
                    "--window-size=1280,900",
                ],
            }),
        );
        let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(caps)
            .connect(&url)
            .await
            .expect("open a browser session");
        let axe_source = tools
            .axe_js
            .as_ref()
            .map(|p| std::fs::read_to_string(p).expect("read axe-core"));
        Some(Browser {
            client,
            tools,
            driver,
            profile,
            axe_source,
        })
    }

    /// True when axe-core is available (else accessibility checks are skipped, or fail
    /// under CI).
    pub fn has_axe(&self, test: &str) -> bool {
        if self.axe_source.is_none() {
            skip(test, "axe-core is not installed");
        }
        self.axe_source.is_some()
    }

    pub async fn goto(&self, url: &str) {
        self.client
            .goto(url)
            .await
            .unwrap_or_else(|e| panic!("open {url}: {e}"));
    }

    pub async fn find(&self, css: &str) -> Element {
        match self
            .client
            .wait()
            .at_most(Duration::from_secs(10))
            .for_element(Locator::Css(css))
            .await
        {
            Ok(e) => e,
            Err(e) => panic!("no {css} on {}: {e}", self.path().await),
        }
    }

    /// Clicks `e`, which loads another page (a link, a form's submit button), and waits
    /// until the new page has loaded, so nothing is then read from the old one.
    pub async fn follow(&self, e: Element) {
        self.client
            .execute("window.__jbLeaving = true; return true;", vec![])
            .await
            .unwrap();
        e.click().await.unwrap();
        self.wait_for_new_page().await;
    }

    /// Presses Enter on `e` (a button or link, as a keyboard user does), which loads
    /// another page, and waits until it has loaded.
    pub async fn press_enter(&self, e: Element) {
        self.client
            .execute("window.__jbLeaving = true; return true;", vec![])
            .await
            .unwrap();
        e.send_keys("\u{E007}").await.unwrap();
        self.wait_for_new_page().await;
    }

    async fn wait_for_new_page(&self) {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            // While the page changes the script may fail; that is "not yet".
            let loaded = self
                .client
                .execute(
                    "return window.__jbLeaving === undefined && document.readyState === 'complete';",
                    vec![],
                )
                .await
                .is_ok_and(|v| v == Value::Bool(true));
            if loaded {
                return;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no new page after the click (still on {})",
                self.path().await
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    pub async fn find_all(&self, css: &str) -> Vec<Element> {
        self.client.find_all(Locator::Css(css)).await.unwrap()
    }

    pub async fn text(&self, css: &str) -> String {
        self.find(css).await.text().await.unwrap()
    }

    /// Runs `script` (a function body) in the page and returns its value.
    pub async fn eval(&self, script: &str) -> Value {
        self.client.execute(script, vec![]).await.unwrap()
    }

    /// The current path and query.
    pub async fn path(&self) -> String {
        let u = self.client.current_url().await.unwrap();
        match u.query() {
            Some(q) => format!("{}?{q}", u.path()),
            None => u.path().to_string(),
        }
    }

    /// axe-core's violations on the current page (WCAG 2.x A and AA and best practices):
    /// `id: help (targets)` per violation.
    pub async fn axe_violations(&self) -> Vec<String> {
        let Some(src) = &self.axe_source else {
            return Vec::new();
        };
        // Scripts run by WebDriver are not subject to the page's policy.
        let loaded = self.eval("return typeof window.axe !== 'undefined';").await;
        if loaded != json!(true) {
            self.client
                .execute(src, vec![])
                .await
                .expect("inject axe-core");
        }
        let result = self
            .client
            .execute_async(
                "const done = arguments[arguments.length - 1];
                 axe.run(document, {resultTypes: ['violations']})
                   .then(r => done(r.violations.map(v =>
                       v.id + ': ' + v.help + ' (' + v.nodes.map(n => n.target.join(' ')).join(', ') + ')')))
                   .catch(e => done(['axe failed: ' + e]));",
                vec![],
            )
            .await
            .expect("run axe-core");
        result
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    }

    /// Ends the session and stops chromedriver.
    pub async fn close(mut self) {
        let _ = self.client.clone().close().await;
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // A failed test still stops its driver (and so its browser).
        let _ = self.driver.kill();
        let _ = self.driver.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

/// A server on SQLite whose mail goes to `sink` (delivered by the worker, the scheduler
/// off): what the journeys that follow a mailed link start from.
pub async fn mailing_app(sink: &crate::smtp_sink::SmtpSink) -> crate::common::TestApp {
    let url = sink.url();
    crate::common::TestApp::spawn_with(crate::common::Backend::Sqlite, move |c| {
        c.scheduler = false;
        c.mail.smtp_url = Some(url);
        c.mail.from = Some("Job Board <jobs@example.test>".parse().unwrap());
        c.mail.retry_schedule = vec![std::time::Duration::from_secs(60)];
    })
    .await
}
