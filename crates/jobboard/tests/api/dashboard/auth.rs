//! Signing in and out, sessions (idle and absolute expiry, rotation), the limit per
//! client address, the setup link, and the cookies' attributes (the throttle per account
//! and client is in `accounts.rs`).

use std::time::Duration;

use jobboard_domain::users::setup;

use super::*;
use crate::backends;

backends!(
    the_sign_in_page_has_the_form,
    right_and_wrong_passwords,
    an_unknown_email_is_answered_like_a_wrong_password,
    repeated_failures_lock_the_address,
    sessions_end_when_idle_and_at_their_end,
    signing_out_ends_the_session,
    signing_in_replaces_the_previous_session,
    pages_without_a_session_lead_to_sign_in,
    the_setup_link_works_once,
    the_setup_link_expires,
    cookies_are_secure_behind_https,
);

async fn the_sign_in_page_has_the_form(b: Backend) {
    let t = TestApp::spawn(b).await;
    let br = Browser::new(&t);
    let page = br.get("/dashboard/login").await;
    page.expect(200);
    assert_eq!(page.header("cache-control"), Some("no-store"));
    let doc = page.html();
    let form = doc
        .select(&sel("form[method=post][action='/dashboard/login']"))
        .next()
        .expect("the sign-in form");
    for s in [
        "input[type=email][name=email]",
        "input[type=password][name=password]",
        "input[type=hidden][name=csrf]",
    ] {
        assert!(form.select(&sel(s)).next().is_some(), "{s} missing");
    }
    // Every input has a label.
    for id in ["email", "password"] {
        assert!(
            doc.select(&sel(&format!("label[for={id}]")))
                .next()
                .is_some(),
            "label for {id}"
        );
    }
    let cookie = page.header("set-cookie").unwrap();
    assert!(cookie.starts_with("jobboard_login="), "{cookie}");
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax"),
        "{cookie}"
    );
}

async fn right_and_wrong_passwords(b: Backend) {
    let t = TestApp::spawn(b).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    let br = Browser::new(&t);
    let wrong = br.sign_in("ada@example.com", "not the password").await;
    wrong.expect(422);
    assert_eq!(
        text_of(&wrong, "#login-error").as_deref(),
        Some("The email address or the password is not correct.")
    );
    assert!(
        wrong
            .header("set-cookie")
            .is_none_or(|c| !c.contains("jobboard_session"))
    );
    assert!(redirect(&br.get("/dashboard").await).starts_with("/dashboard/login"));
    // The right password, typed with another case of the address.
    let right = br.sign_in("ADA@example.com", PASSWORD).await;
    assert_eq!(redirect(&right), "/dashboard");
    let cookie = right.header("set-cookie").unwrap();
    assert!(cookie.starts_with("jobboard_session="), "{cookie}");
    for attr in ["HttpOnly", "SameSite=Lax", "Path=/"] {
        assert!(cookie.contains(attr), "{attr} missing: {cookie}");
    }
    assert!(!cookie.contains("Secure"), "plain http: {cookie}");
    let home = br.get("/dashboard").await;
    home.expect(200);
    assert_eq!(text_of(&home, "main h1").as_deref(), Some("Test org"));
    assert_eq!(text_of(&home, ".who").as_deref(), Some("ada@example.com"));
    // Signed in, the sign-in page leads to the dashboard.
    assert_eq!(redirect(&br.get("/dashboard/login").await), "/dashboard");
}

async fn an_unknown_email_is_answered_like_a_wrong_password(b: Backend) {
    let t = TestApp::spawn(b).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    let br = Browser::new(&t);
    let known = br.sign_in("ada@example.com", "not the password").await;
    let unknown = br.sign_in("nobody@example.com", "not the password").await;
    assert_eq!(known.status, unknown.status);
    assert_eq!(text_of(&known, "main"), text_of(&unknown, "main"));
    // Only the typed address differs between the two pages.
    let without_email =
        |r: &Resp, email: &str| r.text.replace(email, "EMAIL").replace(&csrf_of(r), "TOKEN");
    assert_eq!(
        without_email(&known, "ada@example.com"),
        without_email(&unknown, "nobody@example.com")
    );
}

async fn repeated_failures_lock_the_address(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.dashboard.attempts_per_address = 4).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    let br = Browser::new(&t);
    for i in 0..4 {
        br.sign_in(&format!("guess{i}@example.com"), "guess guess guess")
            .await
            .expect(422);
    }
    // A fifth address from the same client is refused, whatever the account.
    br.sign_in("ada@example.com", PASSWORD).await.expect(429);
    t.app.clock.advance(Duration::from_secs(15 * 60 + 1));
    redirect(&br.sign_in("ada@example.com", PASSWORD).await);
}

async fn sessions_end_when_idle_and_at_their_end(b: Backend) {
    let t = TestApp::spawn_with(b, |c| {
        c.dashboard.idle = Duration::from_secs(3600);
        c.dashboard.lifetime = Duration::from_secs(3 * 3600);
    })
    .await;
    add_user(&t, t.org_id, "ada@example.com").await;
    // Idle: a request within the hour keeps the session; an hour without one ends it.
    let br = Browser::signed_in(&t, "ada@example.com").await;
    t.app.clock.advance(Duration::from_secs(50 * 60));
    br.get("/dashboard").await.expect(200);
    t.app.clock.advance(Duration::from_secs(50 * 60));
    br.get("/dashboard").await.expect(200);
    t.app.clock.advance(Duration::from_secs(3600 + 1));
    let r = br.get("/dashboard").await;
    assert_eq!(redirect(&r), "/dashboard/login?notice=session_ended");
    assert!(r.header("set-cookie").unwrap().contains("Max-Age=0"));
    // Absolute: however active, three hours after sign-in it has ended.
    let br = Browser::signed_in(&t, "ada@example.com").await;
    for _ in 0..3 {
        t.app.clock.advance(Duration::from_secs(50 * 60));
        br.get("/dashboard/jobs").await.expect(200);
    }
    t.app.clock.advance(Duration::from_secs(30 * 60 + 1));
    assert!(redirect(&br.get("/dashboard/jobs").await).starts_with("/dashboard/login"));
}

/// `GET /dashboard` with only this cookie, redirects not followed.
async fn with_cookie(t: &TestApp, cookie: &str) -> reqwest::Response {
    Browser::new(t)
        .client
        .get(format!("{}/dashboard", t.base))
        .header("cookie", cookie)
        .send()
        .await
        .unwrap()
}

/// The session cookie a browser holds.
fn session_cookie_of(r: &Resp) -> String {
    let c = r.header("set-cookie").unwrap();
    c.split(';').next().unwrap().to_string()
}

async fn signing_out_ends_the_session(b: Backend) {
    let t = TestApp::spawn(b).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    let br = Browser::new(&t);
    let signed = br.sign_in("ada@example.com", PASSWORD).await;
    let cookie = session_cookie_of(&signed);
    let out = br.submit("/dashboard", "/dashboard/logout", &[]).await;
    assert_eq!(redirect(&out), "/dashboard/login?notice=signed_out");
    assert!(out.header("set-cookie").unwrap().contains("Max-Age=0"));
    let page = br.get("/dashboard/login?notice=signed_out").await;
    assert_eq!(
        text_of(&page, "[role=status]").as_deref(),
        Some("You have signed out.")
    );
    // The old cookie, replayed, opens nothing.
    assert_eq!(with_cookie(&t, &cookie).await.status(), 303);
}

async fn signing_in_replaces_the_previous_session(b: Backend) {
    let t = TestApp::spawn(b).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    let br = Browser::new(&t);
    let token = br.csrf("/dashboard/login").await;
    let form = [
        ("email", "ada@example.com"),
        ("password", PASSWORD),
        ("csrf", token.as_str()),
    ];
    let first = session_cookie_of(&br.post("/dashboard/login", &form).await);
    // Signed in, the browser signs in again (the form was open in another tab).
    let second = session_cookie_of(&br.post("/dashboard/login", &form).await);
    assert_ne!(first, second, "a new id at every sign-in");
    assert_eq!(
        with_cookie(&t, &first).await.status(),
        303,
        "the old session ended"
    );
    assert_eq!(with_cookie(&t, &second).await.status(), 200);
}

async fn pages_without_a_session_lead_to_sign_in(b: Backend) {
    let t = TestApp::spawn(b).await;
    let job = api_job(&t, &t.key, "Pilot").await;
    let br = Browser::new(&t);
    for path in [
        "/dashboard".to_string(),
        "/dashboard/jobs".into(),
        "/dashboard/jobs?status=all".into(),
        "/dashboard/jobs/new".into(),
        format!("/dashboard/jobs/{job}"),
        format!("/dashboard/jobs/{job}/delete"),
        "/dashboard/settings".into(),
        "/dashboard/settings/api-keys".into(),
        "/dashboard/settings/board".into(),
        "/dashboard/settings/staff".into(),
        "/dashboard/settings/password".into(),
        "/dashboard/no-such-page".into(),
    ] {
        assert_eq!(
            redirect(&br.get(&path).await),
            "/dashboard/login",
            "GET {path}"
        );
    }
    for path in [
        format!("/dashboard/jobs/{job}/status"),
        format!("/dashboard/jobs/{job}/delete"),
        format!("/dashboard/jobs/{job}"),
        "/dashboard/jobs/new".into(),
        "/dashboard/settings/api-keys".into(),
        "/dashboard/logout".into(),
    ] {
        let r = br.post(&path, &[("status", "active")]).await;
        assert_eq!(redirect(&r), "/dashboard/login", "POST {path}");
    }
    let r = t.get(&format!("/jobs/{job}")).await;
    assert_eq!(r.body["data"]["status"], "pending");
    assert_eq!(event_types(&t, t.org_id).await, ["job.created"]);
}

async fn the_setup_link_works_once(b: Backend) {
    let t = TestApp::spawn(b).await;
    let token = setup::create_link(t.db(), t.org_id, t.app.clock.now(), setup::DEFAULT_LIFETIME)
        .await
        .unwrap();
    let path = format!("/dashboard/setup/{token}");
    let br = Browser::new(&t);
    let page = br.get(&path).await;
    page.expect(200);
    assert!(page.text.contains("Test org"));
    // A refused form leaves the link usable, and says why beside the field.
    let short = br
        .submit(
            &path,
            &path,
            &[
                ("email", "ada@example.com"),
                ("password", "short"),
                ("password_confirm", "short"),
            ],
        )
        .await;
    short.expect(422);
    assert_eq!(
        text_of(&short, "#f-password-error").as_deref(),
        Some("Must be at least 12 characters.")
    );
    let differ = br
        .submit(
            &path,
            &path,
            &[
                ("email", "ada@example.com"),
                ("password", PASSWORD),
                ("password_confirm", "something else"),
            ],
        )
        .await;
    assert_eq!(
        text_of(&differ, "#f-password_confirm-error").as_deref(),
        Some("The two passwords differ.")
    );
    let made = br
        .submit(
            &path,
            &path,
            &[
                ("email", "ada@example.com"),
                ("password", PASSWORD),
                ("password_confirm", PASSWORD),
            ],
        )
        .await;
    assert_eq!(redirect(&made), "/dashboard");
    br.get("/dashboard").await.expect(200);
    // Used: the link works no more, for a page or a post.
    br.get(&path).await.expect(404);
    let token_again = csrf_of(&page);
    let again = br
        .post(
            &path,
            &[
                ("email", "eve@example.com"),
                ("password", PASSWORD),
                ("password_confirm", PASSWORD),
                ("csrf", &token_again),
            ],
        )
        .await;
    again.expect(404);
    let users = jobboard_domain::users::list(t.db(), t.org_id)
        .await
        .unwrap();
    assert_eq!(users.len(), 1);
    assert_eq!(users[0].email, "ada@example.com");
    // The new user signs in with the password chosen.
    redirect(&Browser::new(&t).sign_in("ada@example.com", PASSWORD).await);
}

async fn the_setup_link_expires(b: Backend) {
    let t = TestApp::spawn(b).await;
    let token = setup::create_link(t.db(), t.org_id, t.app.clock.now(), setup::DEFAULT_LIFETIME)
        .await
        .unwrap();
    let path = format!("/dashboard/setup/{token}");
    let br = Browser::new(&t);
    let csrf = br.csrf(&path).await;
    t.app.clock.advance(Duration::from_secs(24 * 3600 + 1));
    br.get(&path).await.expect(404);
    let r = br
        .post(
            &path,
            &[
                ("email", "ada@example.com"),
                ("password", PASSWORD),
                ("password_confirm", PASSWORD),
                ("csrf", &csrf),
            ],
        )
        .await;
    // The form's token has expired too; either way nobody was created.
    assert!(r.status == 404 || r.status == 403, "{}", r.status);
    assert!(
        jobboard_domain::users::list(t.db(), t.org_id)
            .await
            .unwrap()
            .is_empty()
    );
    br.get("/dashboard/setup/not-a-token").await.expect(404);
}

async fn cookies_are_secure_behind_https(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.public_url = "https://jobs.example.test".into()).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    // By hand: a cookie store would not send Secure cookies over plain http.
    let page = t.page("/dashboard/login").await;
    let login_cookie = page.header("set-cookie").unwrap().to_string();
    assert!(
        login_cookie.starts_with("__Host-jobboard_login="),
        "{login_cookie}"
    );
    assert!(login_cookie.contains("; Secure") && login_cookie.contains("Path=/"));
    let csrf = csrf_of(&page);
    let r = Browser::new(&t)
        .client
        .post(format!("{}/dashboard/login", t.base))
        .header("cookie", login_cookie.split(';').next().unwrap())
        .header("content-type", "application/x-www-form-urlencoded")
        .body(
            serde_urlencoded::to_string([
                ("email", "ada@example.com"),
                ("password", PASSWORD),
                ("csrf", csrf.as_str()),
            ])
            .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let r = Resp::read(r).await;
    assert_eq!(redirect(&r), "/dashboard");
    let session = r.header("set-cookie").unwrap();
    assert!(session.starts_with("__Host-jobboard_session="), "{session}");
    for attr in ["; Secure", "; HttpOnly", "; SameSite=Lax", "; Path=/"] {
        assert!(session.contains(attr), "{attr} missing: {session}");
    }
    assert!(!session.contains("Domain="), "{session}");
    let home = with_cookie(&t, session.split(';').next().unwrap()).await;
    assert_eq!(home.status(), 200);
}
