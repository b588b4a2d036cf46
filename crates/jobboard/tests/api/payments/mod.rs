//! Paid postings against a stand-in of the card processor on 127.0.0.1
//! (`scripts/processor-standin.py`: the documented subset of Checkout Sessions, its
//! events signed with the processor's official Python library): the board's form, the
//! checkout, the signed events, fulfilment once, expiry and resumption, refunds.

mod credits;
mod featured;
mod flow;
mod kill;
mod packs;
mod prices_page;
mod reconcile;

use std::process::{Child, Command};

use jobboard::config::Config;
use jobboard_domain::{Input, payments};
use serde_json::{Value, json};

use crate::{board::sel, common::*, mail::with_smtp, smtp_sink::SmtpSink};

pub const SECRET_KEY: &str = "sk_test_standin";
pub const WEBHOOK_SECRET: &str = "whsec_standin_secret";

/// The stand-in, running until dropped.
pub struct Processor {
    child: Child,
    pub base: String,
    client: reqwest::Client,
}

impl Drop for Processor {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// True when Python has the processor's library (CI installs it; elsewhere the tests
/// that need it say SKIPPED).
fn standin_available(test: &str) -> bool {
    python_has(
        test,
        "import stripe",
        "Python's stripe library (pip install stripe)",
    )
}

impl Processor {
    /// Starts the stand-in, sending its events to `webhook`.
    pub fn start(test: &str, webhook: &str) -> Option<Processor> {
        if !standin_available(test) {
            return None;
        }
        jobboard::init_tls();
        let client = reqwest::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        let mut cmd = Command::new(python());
        cmd.arg(script("processor-standin.py"))
            .args([SECRET_KEY, WEBHOOK_SECRET, webhook]);
        let (child, base) = start_standin(cmd);
        Some(Processor {
            child,
            base,
            client,
        })
    }

    /// `POST /test/{action}/{session}` (pay, expire, refund, resend?times=N).
    pub async fn control(&self, action: &str, session: &str) -> Value {
        let r = self
            .client
            .post(format!("{}/test/{action}/{session}", self.base))
            .send()
            .await
            .unwrap();
        assert!(
            r.status().is_success(),
            "{action} {session}: {}",
            r.status()
        );
        r.json().await.unwrap()
    }

    pub async fn events(&self, on: bool) {
        let path = if on { "events-on" } else { "events-off" };
        self.client
            .post(format!("{}/test/{path}", self.base))
            .send()
            .await
            .unwrap();
    }

    /// Every session the stand-in holds.
    pub async fn sessions(&self) -> Vec<Value> {
        self.client
            .get(format!("{}/test/sessions", self.base))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// A price defined at the processor (`POST /v1/prices`, as its API takes it): its id.
    pub async fn create_price(&self, unit_amount: i64, currency: &str, name: &str) -> String {
        let r = self
            .client
            .post(format!("{}/v1/prices", self.base))
            .bearer_auth(SECRET_KEY)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(
                serde_urlencoded::to_string([
                    ("unit_amount", unit_amount.to_string().as_str()),
                    ("currency", currency),
                    ("product_data[name]", name),
                ])
                .unwrap(),
            )
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success(), "{}", r.status());
        let v: Value = r.json().await.unwrap();
        v["id"].as_str().unwrap().to_string()
    }

    /// How many events wait to be sent again.
    pub async fn pending(&self) -> i64 {
        let v: Value = self
            .client
            .get(format!("{}/test/pending", self.base))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        v["pending"].as_i64().unwrap()
    }

    /// Pays on the hosted page as a payer does: the redirect back to the board.
    pub async fn pay_page(&self, session: &str) -> String {
        let r = self
            .client
            .post(format!("{}/pay/{session}", self.base))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        r.headers()["location"].to_str().unwrap().to_string()
    }
}

/// A server whose organization sells posts at one price (4900 EUR cents, 30 days)
/// through the stand-in; mail to `sink`; workers and the scheduler off.
pub async fn paid_board(
    b: Backend,
    test: &str,
    sink: &SmtpSink,
) -> Option<(TestApp, Processor, String)> {
    let url = sink.url();
    let t = TestApp::spawn_with(b, move |c: &mut Config| {
        c.worker = false;
        c.scheduler = false;
        c.form_limit = 200;
        c.mail = with_smtp(&c.mail, &url, vec![std::time::Duration::from_secs(60)]);
    })
    .await;
    let p = Processor::start(test, &format!("{}/payments/webhook", t.base))?;
    payments::set_account(
        t.db(),
        t.org_id,
        &payments::Account {
            api_url: p.base.clone(),
            secret_key: SECRET_KEY.into(),
            webhook_secret: WEBHOOK_SECRET.into(),
        },
    )
    .await
    .unwrap();
    let Value::Object(body) =
        json!({"name": "Standard", "amount": 4900, "currency": "eur", "days": 30})
    else {
        unreachable!()
    };
    let price = payments::create_price(t.db(), t.org_id, Input::new(body))
        .await
        .unwrap();
    set_org(&t, json!({"public_posting": true, "paid_posts": "active"})).await;
    Some((t, p, price.id.to_string()))
}

/// Changes the organization's settings.
pub async fn set_org(t: &TestApp, changes: Value) {
    let Value::Object(map) = changes else {
        unreachable!()
    };
    jobboard_domain::orgs::update(t.db(), t.org_id, Input::new(map))
        .await
        .unwrap();
}

/// Posts a job with the board's form at `price`; the answer (a `303` to the checkout).
pub async fn post_paid(t: &TestApp, title: &str, price: &str) -> Resp {
    let page = t.page("/post-a-job").await;
    page.expect(200);
    let doc = page.html();
    let token = doc
        .select(&sel("input[name=_token]"))
        .next()
        .unwrap()
        .value()
        .attr("value")
        .unwrap()
        .to_string();
    crate::board::post_form(
        t,
        "/post-a-job",
        &[
            ("_token", token.as_str()),
            ("reference_code", ""),
            ("title", title),
            ("description", "Bake bread."),
            ("company_name", "Crumbs"),
            ("contact_email", "poster@example.com"),
            ("price_id", price),
        ],
        &[],
    )
    .await
}

/// The session id of a checkout URL (`.../pay/<id>`).
pub fn session_of(location: &str) -> String {
    location.rsplit('/').next().unwrap().to_string()
}
