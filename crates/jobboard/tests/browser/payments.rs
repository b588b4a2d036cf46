//! A paid post in headless Chromium: the board's form with its price, the processor's
//! hosted page (the stand-in, scripts/processor-standin.py, on 127.0.0.1), paying there,
//! and the thanks page with the job live; axe-core checks the board's pages.

use std::{
    io::{BufRead, BufReader},
    process::{Command, Stdio},
};

use jobboard_domain::{Input, orgs, payments};
use serde_json::{Value, json};

use crate::{
    accessible,
    common::{Backend, TestApp},
    harness::Browser,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_visitor_pays_for_a_post_and_sees_it_live() {
    let test = "a_visitor_pays_for_a_post_and_sees_it_live";
    let venv = std::env::var("JOBBOARD_VENV").unwrap_or_else(|_| "/var/tmp/jobboard-venv".into());
    let python = format!("{venv}/bin/python");
    let has_stripe = Command::new(&python)
        .args(["-c", "import stripe"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_stripe {
        assert!(
            std::env::var("CI").is_err(),
            "{test}: the stripe library is missing"
        );
        eprintln!("SKIPPED {test}: the stripe library is missing (scripts/test-tools.sh)");
        return;
    }
    let Some(b) = Browser::start(test).await else {
        return;
    };
    let axe = b.has_axe(&format!("{test} (axe-core)"));
    let t = TestApp::spawn(Backend::Sqlite).await;
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/processor-standin.py");
    let mut standin = Command::new(&python)
        .arg(script)
        .args([
            "sk_test_b",
            "whsec_b",
            &format!("{}/payments/webhook", t.base),
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(standin.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let api = format!(
        "http://127.0.0.1:{}",
        line.trim().strip_prefix("listening on ").unwrap()
    );
    payments::set_account(
        t.db(),
        t.org_id,
        &payments::Account {
            api_url: api.clone(),
            secret_key: "sk_test_b".into(),
            webhook_secret: "whsec_b".into(),
        },
    )
    .await
    .unwrap();
    let Value::Object(price) =
        json!({"name": "Standard", "amount": 4900, "currency": "EUR", "days": 30})
    else {
        unreachable!()
    };
    payments::create_price(t.db(), t.org_id, Input::new(price))
        .await
        .unwrap();
    let Value::Object(changes) = json!({"public_posting": true, "paid_posts": "active"}) else {
        unreachable!()
    };
    orgs::update(t.db(), t.org_id, Input::new(changes))
        .await
        .unwrap();

    b.goto(&format!("{}/post-a-job", t.base)).await;
    if axe {
        accessible(&b, "the post form with its prices").await;
    }
    b.find("#f-title")
        .await
        .send_keys("Night baker")
        .await
        .unwrap();
    b.find("#f-description")
        .await
        .send_keys("Bake bread at night.")
        .await
        .unwrap();
    b.find("#f-company_name")
        .await
        .send_keys("Crumbs Ltd")
        .await
        .unwrap();
    b.follow(b.find("form.post-form button[type=submit]").await)
        .await;
    // The processor's page (another origin, allowed by the form's policy).
    let here = b.client.current_url().await.unwrap();
    assert_eq!(here.port(), api.rsplit(':').next().unwrap().parse().ok());
    assert!(here.path().starts_with("/pay/"), "{here}");
    assert_eq!(b.text("h1").await, "Pay 49.00 EUR");
    b.follow(b.find("form button[type=submit]").await).await;
    // Back on the board: paid, and live.
    assert!(b.path().await.starts_with("/post-a-job/thanks?session_id="));
    assert_eq!(
        b.text("main h1").await,
        "Thank you: your payment was received"
    );
    assert!(b.text("main").await.contains("is live on the board now"));
    if axe {
        accessible(&b, "the thanks page").await;
    }
    b.goto(&format!("{}/", t.base)).await;
    assert!(b.text("main").await.contains("Night baker"));
    b.close().await;
    let _ = standin.kill();
    let _ = standin.wait();
}
