//! Two-factor sign-in in headless Chromium: a staff user sets it up in Settings with a
//! code computed here from the secret the page shows, signs out, and signs in with the
//! password and a code; a user of an organization that requires it sets it up in the
//! second step of sign-in. axe-core checks every page of it.

use std::time::Duration;

use jobboard_store::Ts;

use jobboard_domain::{orgs, users};
use serde_json::json;

use crate::{
    accessible,
    common::{Backend, TestApp},
    harness::Browser,
};

const PASSWORD: &str = "correct horse battery staple";

async fn add_user(t: &TestApp, email: &str) {
    let serde_json::Value::Object(body) = json!({"email": email, "password": PASSWORD}) else {
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
}

/// The current code of `secret` (base32, grouped) at the app's clock.
fn code(t: &TestApp, secret: &str) -> String {
    let secret: String = secret.split_whitespace().collect();
    let totp = totp_rs::Builder::new()
        .with_secret(totp_rs::Secret::try_from_base32(&secret).unwrap())
        .build()
        .unwrap();
    let now = u64::try_from(t.app.clock.now().unix_seconds()).unwrap();
    totp.generate(now).to_string()
}

async fn sign_in(b: &Browser, t: &TestApp, email: &str) {
    b.goto(&format!("{}/dashboard/login", t.base)).await;
    b.find("#email").await.send_keys(email).await.unwrap();
    b.find("#password").await.send_keys(PASSWORD).await.unwrap();
    b.follow(b.find("main form button[type=submit]").await)
        .await;
}

async fn type_code(b: &Browser, code: &str) {
    let field = b.find("#f-code").await;
    field.clear().await.unwrap();
    field.send_keys(code).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_staff_user_sets_up_two_factor_and_signs_in_with_a_code() {
    let name = "a_staff_user_sets_up_two_factor_and_signs_in_with_a_code";
    let Some(b) = Browser::start(name).await else {
        return;
    };
    let axe = b.has_axe(&format!("{name} (axe-core)"));
    let t = TestApp::spawn_with(Backend::Sqlite, |c| c.scheduler = false).await;
    add_user(&t, "ada@example.com").await;

    sign_in(&b, &t, "ada@example.com").await;
    assert_eq!(b.path().await, "/dashboard");
    b.goto(&format!("{}/dashboard/settings/two-factor", t.base))
        .await;
    assert!(b.text("#two-factor-status").await.contains("is off"));
    if axe {
        accessible(&b, "Settings > Two-factor sign-in (off)").await;
    }
    b.follow(
        b.find("form[action='/dashboard/settings/two-factor/setup'] button")
            .await,
    )
    .await;
    assert_eq!(b.path().await, "/dashboard/settings/two-factor/setup");
    if axe {
        accessible(&b, "the setup page").await;
    }
    let secret = b.text("code#secret").await;
    // A wrong code first: the message beside the field.
    type_code(
        &b,
        if code(&t, &secret) == "000000" {
            "111111"
        } else {
            "000000"
        },
    )
    .await;
    b.follow(b.find("form[action$='/setup/confirm'] button").await)
        .await;
    assert!(b.text("#f-code-error").await.contains("not right"));
    if axe {
        accessible(&b, "the setup page with a wrong code").await;
    }
    type_code(&b, &code(&t, &secret)).await;
    b.follow(b.find("form[action$='/setup/confirm'] button").await)
        .await;
    assert_eq!(b.find_all("#recovery-codes code").await.len(), 10);
    if axe {
        accessible(&b, "the recovery codes").await;
    }
    b.goto(&format!("{}/dashboard/settings/two-factor", t.base))
        .await;
    assert!(b.text("#two-factor-status").await.contains("is on"));
    if axe {
        accessible(&b, "Settings > Two-factor sign-in (on)").await;
    }

    // Sign out, and in again: the password, then a code (of the next step: the last one
    // was used).
    b.follow(b.find(".account button[type=submit]").await).await;
    assert!(b.path().await.starts_with("/dashboard/login"));
    sign_in(&b, &t, "ada@example.com").await;
    assert_eq!(b.path().await, "/dashboard/login/two-factor");
    if axe {
        accessible(&b, "the second step of sign-in").await;
    }
    t.app.clock.advance(Duration::from_secs(30));
    type_code(&b, &code(&t, &secret)).await;
    b.follow(b.find("main form button[type=submit]").await)
        .await;
    assert_eq!(b.path().await, "/dashboard");

    // An organization that requires it: a new user sets it up in the second step.
    orgs::set_require_2fa(t.db(), t.org_id, true).await.unwrap();
    add_user(&t, "bob@example.com").await;
    b.follow(b.find(".account button[type=submit]").await).await;
    sign_in(&b, &t, "bob@example.com").await;
    assert_eq!(b.path().await, "/dashboard/login/two-factor");
    assert_eq!(b.text("main h1").await, "Set up two-factor sign-in");
    if axe {
        accessible(&b, "the second step of sign-in, setting up").await;
    }
    let secret = b.text("code#secret").await;
    type_code(&b, &code(&t, &secret)).await;
    b.follow(b.find("main form button[type=submit]").await)
        .await;
    assert_eq!(b.find_all("#recovery-codes code").await.len(), 10);
    if axe {
        accessible(&b, "the recovery codes after sign-in").await;
    }
    b.follow(b.find("main a[href='/dashboard']").await).await;
    assert_eq!(b.path().await, "/dashboard");
    b.close().await;
}
