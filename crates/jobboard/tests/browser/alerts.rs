//! Job alerts in headless Chromium, with mail going to an SMTP server on 127.0.0.1: a
//! visitor subscribes with the form on a filtered list, opens the confirmation link from
//! the mail, and stops the alert from its page; axe-core checks each page.

use std::time::Duration;

use crate::{
    accessible,
    harness::{self, Browser},
    smtp_sink::SmtpSink,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_visitor_subscribes_confirms_and_stops_an_alert() {
    let Some(b) = Browser::start("a_visitor_subscribes_confirms_and_stops_an_alert").await else {
        return;
    };
    let axe = b.has_axe("a_visitor_subscribes_confirms_and_stops_an_alert (axe-core)");
    let sink = SmtpSink::start().await;
    let t = harness::mailing_app(&sink).await;
    b.goto(&format!("{}/?search=rust", t.base)).await;
    if axe {
        accessible(&b, "a list with the alert form").await;
    }
    b.find(".alert-form #f-email")
        .await
        .send_keys("reader@example.com")
        .await
        .unwrap();
    b.follow(b.find(".alert-form button[type=submit]").await)
        .await;
    assert_eq!(b.path().await, "/alerts/sent");
    if axe {
        accessible(&b, "the check-your-inbox page").await;
    }
    assert!(
        sink.wait_until(Duration::from_secs(20), |s| !s.received().is_empty())
            .await,
        "the confirmation mail arrived"
    );
    let text = sink.received()[0]
        .parsed()
        .body_text(0)
        .unwrap_or_default()
        .to_string();
    let at = text.find("/alerts/confirm/").expect("a confirmation link");
    let confirm: String = text[at..]
        .chars()
        .take_while(|c| !c.is_whitespace())
        .collect();
    b.goto(&format!("{}{confirm}", t.base)).await;
    assert_eq!(b.text("main h1").await, "Job alert confirmed");
    assert_eq!(b.text(".alert-state").await, "on");
    if axe {
        accessible(&b, "the confirmation page").await;
    }
    b.follow(b.find("main form button[type=submit]").await)
        .await;
    assert_eq!(b.text("main h1").await, "Job alert stopped");
    if axe {
        accessible(&b, "the stopped page").await;
    }
    let listed = t.get("/alerts").await;
    assert_eq!(listed.body["data"][0]["status"], "unsubscribed");
    assert_eq!(listed.body["data"][0]["query"], "search=rust");
    b.close().await;
}
