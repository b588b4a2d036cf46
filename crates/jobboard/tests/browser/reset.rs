//! Password reset in headless Chromium, with mail going to an SMTP server on 127.0.0.1: a
//! staff user who forgot their password follows "Forgot your password?" from the sign-in
//! page, opens the mailed link, is refused a weak password beside the field, sets a
//! strong one and signs in with it; axe-core checks each page.

use std::time::Duration;

use jobboard_store::Ts;

use jobboard_domain::users;
use serde_json::json;

use crate::{
    accessible,
    harness::{self, Browser},
    smtp_sink::SmtpSink,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_staff_user_resets_a_forgotten_password() {
    let Some(b) = Browser::start("a_staff_user_resets_a_forgotten_password").await else {
        return;
    };
    let axe = b.has_axe("a_staff_user_resets_a_forgotten_password (axe-core)");
    let sink = SmtpSink::start().await;
    let t = harness::mailing_app(&sink).await;
    let serde_json::Value::Object(body) =
        json!({"email": "ada@example.com", "password": "correct horse battery staple"})
    else {
        unreachable!()
    };
    users::create(
        t.db(),
        t.org_id,
        jobboard_domain::Input::new(body),
        Ts::now(),
    )
    .await
    .unwrap();

    b.goto(&format!("{}/dashboard/login", t.base)).await;
    b.follow(b.find("a[href='/dashboard/password-reset']").await)
        .await;
    assert_eq!(b.path().await, "/dashboard/password-reset");
    if axe {
        accessible(&b, "the reset request page").await;
    }
    b.find("#f-email")
        .await
        .send_keys("ada@example.com")
        .await
        .unwrap();
    b.follow(b.find("main form button[type=submit]").await)
        .await;
    assert!(
        b.text("#reset-sent")
            .await
            .starts_with("If a staff user has this address")
    );
    if axe {
        accessible(&b, "the link-is-on-its-way page").await;
    }
    assert!(
        sink.wait_until(Duration::from_secs(20), |s| !s.received().is_empty())
            .await,
        "the reset mail arrived"
    );
    let text = sink.received()[0]
        .parsed()
        .body_text(0)
        .unwrap_or_default()
        .to_string();
    let at = text
        .find("/dashboard/password-reset/")
        .expect("a reset link");
    let link: String = text[at..]
        .chars()
        .take_while(|c| !c.is_whitespace())
        .collect();
    b.goto(&format!("{}{link}", t.base)).await;
    assert_eq!(b.text("main h1").await, "Choose a new password");
    if axe {
        accessible(&b, "the new password's page").await;
    }
    let type_twice = |p: &'static str| {
        let b = &b;
        async move {
            for id in ["#f-password", "#f-password_confirm"] {
                let e = b.find(id).await;
                e.clear().await.unwrap();
                e.send_keys(p).await.unwrap();
            }
            b.follow(b.find("main form button[type=submit]").await)
                .await;
        }
    };
    type_twice("aaaaaaaaaaaa").await;
    assert!(
        b.text("#f-password-error")
            .await
            .starts_with("This password is too easy to guess")
    );
    if axe {
        accessible(&b, "the new password's page with a weak password").await;
    }
    type_twice("plum orbit velvet canyon").await;
    assert_eq!(b.path().await, "/dashboard/login?notice=password_reset");
    assert!(
        b.text("[role=status]")
            .await
            .starts_with("Your password was reset")
    );
    if axe {
        accessible(&b, "the sign-in page after a reset").await;
    }
    b.find("#email")
        .await
        .send_keys("ada@example.com")
        .await
        .unwrap();
    b.find("#password")
        .await
        .send_keys("plum orbit velvet canyon")
        .await
        .unwrap();
    b.follow(b.find("main form button[type=submit]").await)
        .await;
    assert_eq!(b.path().await, "/dashboard");
    b.close().await;
}
