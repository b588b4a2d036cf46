//! Two-factor sign-in: setting it up (a wrong code switches nothing on), the second step
//! of sign-in (wrong codes refused and throttled, a code's step used once, recovery codes
//! used once), turning it off (password and code), and the organization's requirement
//! (`jobboard orgs update ID --require-2fa on`). Codes are computed here from the secret
//! the page shows, at the time of the app's clock.

use std::time::Duration;

use super::*;
use crate::backends;

backends!(
    setting_up_needs_a_right_code,
    sign_in_asks_for_a_code_once_per_step,
    turning_off_needs_the_password_and_a_code,
    an_organization_can_require_two_factor,
    a_pending_sign_in_is_bound_to_its_browser,
    finished_sign_ins_leave_nothing_counted
);

const SETUP: &str = "/dashboard/settings/two-factor/setup";
const SECOND: &str = "/dashboard/login/two-factor";

/// The code of `secret` (base32, spaces allowed) at the app's clock, `steps` steps away.
fn code(t: &TestApp, secret: &str, steps: i64) -> String {
    let secret: String = secret.split_whitespace().collect();
    let totp = totp_rs::Builder::new()
        .with_secret(totp_rs::Secret::try_from_base32(&secret).unwrap())
        .build()
        .unwrap();
    let at = t.app.clock.now().unix_seconds() + steps * 30;
    totp.generate(u64::try_from(at).unwrap()).to_string()
}

/// A six-digit code that is not one of `secret`'s at the clock or a step away.
fn wrong_code(t: &TestApp, secret: &str) -> String {
    let near: Vec<String> = (-1..=1).map(|s| code(t, secret, s)).collect();
    (0..10)
        .map(|d| format!("{d}{d}{d}{d}{d}{d}"))
        .find(|c| !near.contains(c))
        .unwrap()
}

/// The next step: a code of it was not used yet.
fn next_step(t: &TestApp) {
    t.app.clock.advance(Duration::from_secs(30));
}

/// The secret a setup page shows, after checking the page draws it as a link and a QR
/// code that needs no inline styles.
fn secret_of(page: &Resp) -> String {
    let html = page.html();
    let svg = html
        .select(&sel("div.qr svg[role=img][aria-label]"))
        .next()
        .expect("the QR code, inline");
    assert!(svg.value().attr("style").is_none());
    assert!(!page.text.contains("style="), "no inline styles");
    let uri = html
        .select(&sel("a#otpauth"))
        .next()
        .and_then(|a| a.value().attr("href"))
        .expect("the otpauth link")
        .to_string();
    assert!(uri.starts_with("otpauth://totp/"), "{uri}");
    assert!(
        uri.contains("example.com"),
        "the account is the email: {uri}"
    );
    let secret = text_of(page, "code#secret").expect("the secret as text");
    assert!(
        uri.contains(&format!("secret={}", secret.replace(' ', ""))),
        "{uri}"
    );
    let field = html
        .select(&sel("input#f-code"))
        .next()
        .expect("the code field");
    assert_eq!(field.value().attr("autocomplete"), Some("one-time-code"));
    assert!(
        html.select(&sel("label[for=f-code]")).next().is_some(),
        "labelled"
    );
    secret
}

/// The field error of `name` on a refused form, checking the field is marked invalid.
#[track_caller]
fn field_error(page: &Resp, name: &str) -> String {
    let html = page.html();
    let input = html
        .select(&sel(&format!("#f-{name}")))
        .next()
        .unwrap_or_else(|| panic!("no field {name}: {}", page.text));
    assert_eq!(input.value().attr("aria-invalid"), Some("true"));
    let described = input.value().attr("aria-describedby").unwrap_or("");
    assert!(
        described.contains(&format!("f-{name}-error")),
        "{described}"
    );
    text_of(page, &format!("#f-{name}-error")).expect("the message beside the field")
}

/// The recovery codes a page shows.
fn recovery_codes(page: &Resp) -> Vec<String> {
    page.html()
        .select(&sel("#recovery-codes code"))
        .map(|e| e.text().collect::<String>())
        .collect()
}

/// The actions of the organization's audit log, newest first.
async fn audit_actions(t: &TestApp) -> Vec<String> {
    let r = t
        .req(reqwest::Method::GET, "/audit")
        .key(&t.key)
        .send()
        .await;
    r.expect(200);
    r.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap().to_string())
        .collect()
}

/// Sets two-factor sign-in up for the signed-in `br`: the secret and the recovery codes.
async fn set_up(t: &TestApp, br: &Browser<'_>) -> (String, Vec<String>) {
    let r = br
        .submit("/dashboard/settings/two-factor", SETUP, &[])
        .await;
    assert_eq!(redirect(&r), SETUP);
    let page = br.get(SETUP).await;
    page.expect(200);
    let secret = secret_of(&page);
    let r = br
        .submit(
            SETUP,
            "/dashboard/settings/two-factor/setup/confirm",
            &[("code", &code(t, &secret, 0))],
        )
        .await;
    r.expect(200);
    let codes = recovery_codes(&r);
    assert_eq!(codes.len(), 10, "{}", r.text);
    (secret, codes)
}

/// Signs in with the password and answers the second step with `code`.
async fn second_step(br: &Browser<'_>, code: &str) -> Resp {
    assert_eq!(
        redirect(&br.sign_in("ada@example.com", PASSWORD).await),
        SECOND
    );
    br.submit(SECOND, SECOND, &[("code", code)]).await
}

async fn setting_up_needs_a_right_code(b: Backend) {
    let t = TestApp::spawn(b).await;
    let ada_id = add_user(&t, t.org_id, "ada@example.com").await;
    let ada = Browser::signed_in(&t, "ada@example.com").await;
    let status = ada.get("/dashboard/settings/two-factor").await;
    status.expect(200);
    assert!(
        text_of(&status, "#two-factor-status")
            .unwrap()
            .contains("is off")
    );
    let r = ada
        .submit("/dashboard/settings/two-factor", SETUP, &[])
        .await;
    assert_eq!(redirect(&r), SETUP);
    let page = ada.get(SETUP).await;
    page.expect(200);
    let secret = secret_of(&page);
    // The secret being set up is kept on the server: the form carries only the code.
    let form_fields: Vec<String> = page
        .html()
        .select(&sel("form[action$='/confirm'] input"))
        .filter_map(|e| e.value().attr("name").map(str::to_string))
        .collect();
    assert_eq!(form_fields, ["csrf", "code"]);
    // A wrong code: refused beside the field, nothing switched on.
    let wrong = wrong_code(&t, &secret);
    let r = ada
        .submit(
            SETUP,
            "/dashboard/settings/two-factor/setup/confirm",
            &[("code", &wrong)],
        )
        .await;
    r.expect(422);
    assert!(field_error(&r, "code").contains("not right"));
    assert!(recovery_codes(&r).is_empty());
    assert!(
        !jobboard_domain::two_factor::is_on(t.db(), ada_id)
            .await
            .unwrap()
    );
    // Without the anti-forgery token: refused.
    ada.post(
        "/dashboard/settings/two-factor/setup/confirm",
        &[("code", &code(&t, &secret, 0))],
    )
    .await
    .expect(403);
    // The right one: on, and ten recovery codes shown once.
    let r = ada
        .submit(
            SETUP,
            "/dashboard/settings/two-factor/setup/confirm",
            &[("code", &code(&t, &secret, 0))],
        )
        .await;
    r.expect(200);
    let codes = recovery_codes(&r);
    assert_eq!(codes.len(), 10);
    let distinct: std::collections::HashSet<_> = codes.iter().collect();
    assert_eq!(distinct.len(), 10);
    assert!(
        jobboard_domain::two_factor::is_on(t.db(), ada_id)
            .await
            .unwrap()
    );
    let status = ada.get("/dashboard/settings/two-factor").await;
    assert!(
        text_of(&status, "#two-factor-status")
            .unwrap()
            .contains("is on")
    );
    assert!(!status.text.contains(&codes[0]), "shown once only");
    // The audit log has the setup and its confirmation (without the code).
    let actions = audit_actions(&t).await;
    assert_eq!(
        actions[..2],
        ["two_factor.enabled", "two_factor.setup_started"]
    );
    // The setup page has nothing to show any more.
    assert_eq!(
        redirect(&ada.get(SETUP).await),
        "/dashboard/settings/two-factor"
    );
}

async fn sign_in_asks_for_a_code_once_per_step(b: Backend) {
    let t = TestApp::spawn(b).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    let setup = Browser::signed_in(&t, "ada@example.com").await;
    let (secret, recovery) = set_up(&t, &setup).await;
    next_step(&t);

    // The password alone gives no session.
    let br = Browser::new(&t);
    assert_eq!(
        redirect(&br.sign_in("ada@example.com", PASSWORD).await),
        SECOND
    );
    assert_eq!(redirect(&br.get("/dashboard").await), "/dashboard/login");
    let page = br.get(SECOND).await;
    page.expect(200);
    assert!(page.html().select(&sel("input#f-code")).next().is_some());
    // Wrong codes are refused, and count as failures of the account from this client
    // (the password step stays counted until the second step succeeds).
    let wrong = wrong_code(&t, &secret);
    let r = br.submit(SECOND, SECOND, &[("code", &wrong)]).await;
    r.expect(422);
    assert!(field_error(&r, "code").contains("not right"));
    br.submit(SECOND, SECOND, &[("code", &wrong)])
        .await
        .expect(422);
    let r = br
        .submit(SECOND, SECOND, &[("code", &code(&t, &secret, 0))])
        .await;
    r.expect(429);
    let retry: u64 = r.header("retry-after").unwrap().parse().unwrap();
    assert!((55..=60).contains(&retry), "{retry}");
    assert!(field_error(&r, "code").contains("Too many"));
    assert_eq!(redirect(&br.get("/dashboard").await), "/dashboard/login");

    // After the wait, the right code signs in.
    t.app.clock.advance(Duration::from_secs(retry + 1));
    let used = code(&t, &secret, 0);
    let r = br.submit(SECOND, SECOND, &[("code", &used)]).await;
    assert_eq!(redirect(&r), "/dashboard");
    assert!(
        r.header("set-cookie")
            .is_some_and(|c| c.contains("jobboard_session="))
    );
    br.get("/dashboard").await.expect(200);
    // The pending sign-in is over.
    assert!(redirect(&br.get(SECOND).await).starts_with("/dashboard/login"));

    // The same code (its step used) does not work twice, even in another browser.
    let other = Browser::new(&t);
    let r = second_step(&other, &used).await;
    r.expect(422);
    assert_eq!(redirect(&other.get("/dashboard").await), "/dashboard/login");
    // A code of the step before (or after) the current one works.
    next_step(&t);
    next_step(&t);
    let r = other
        .submit(SECOND, SECOND, &[("code", &code(&t, &secret, -1))])
        .await;
    assert_eq!(redirect(&r), "/dashboard");

    // A recovery code works once.
    let third = Browser::new(&t);
    let r = second_step(&third, &recovery[3].to_uppercase()).await;
    assert_eq!(redirect(&r), "/dashboard");
    third.get("/dashboard").await.expect(200);
    let fourth = Browser::new(&t);
    second_step(&fourth, &recovery[3]).await.expect(422);

    // A pending sign-in lasts five minutes.
    let late = Browser::new(&t);
    assert_eq!(
        redirect(&late.sign_in("ada@example.com", PASSWORD).await),
        SECOND
    );
    let token = late.csrf(SECOND).await;
    t.app.clock.advance(Duration::from_secs(5 * 60 + 1));
    let r = late
        .post(SECOND, &[("code", &code(&t, &secret, 0)), ("csrf", &token)])
        .await;
    assert_eq!(redirect(&r), "/dashboard/login?notice=two_factor_expired");
    assert_eq!(redirect(&late.get("/dashboard").await), "/dashboard/login");
}

async fn turning_off_needs_the_password_and_a_code(b: Backend) {
    let t = TestApp::spawn(b).await;
    let ada_id = add_user(&t, t.org_id, "ada@example.com").await;
    let ada = Browser::signed_in(&t, "ada@example.com").await;
    let (secret, _) = set_up(&t, &ada).await;
    next_step(&t);
    let page = "/dashboard/settings/two-factor";
    let off = "/dashboard/settings/two-factor/off";
    let r = ada
        .submit(
            page,
            off,
            &[
                ("current_password", "not the password at all"),
                ("code", &code(&t, &secret, 0)),
            ],
        )
        .await;
    r.expect(422);
    assert!(field_error(&r, "current_password").contains("not your current password"));
    let r = ada
        .submit(
            page,
            off,
            &[
                ("current_password", PASSWORD),
                ("code", &wrong_code(&t, &secret)),
            ],
        )
        .await;
    r.expect(422);
    assert!(field_error(&r, "code").contains("not right"));
    let r = ada
        .submit(page, off, &[("current_password", PASSWORD), ("code", "")])
        .await;
    r.expect(422);
    field_error(&r, "code");
    assert!(
        jobboard_domain::two_factor::is_on(t.db(), ada_id)
            .await
            .unwrap()
    );
    let r = ada
        .submit(
            page,
            off,
            &[
                ("current_password", PASSWORD),
                ("code", &code(&t, &secret, 0)),
            ],
        )
        .await;
    assert_eq!(
        redirect(&r),
        "/dashboard/settings/two-factor?notice=two_factor_off"
    );
    assert!(
        !jobboard_domain::two_factor::is_on(t.db(), ada_id)
            .await
            .unwrap()
    );
    // Signing in asks for the password only again.
    Browser::signed_in(&t, "ada@example.com").await;
}

async fn an_organization_can_require_two_factor(b: Backend) {
    let t = TestApp::spawn(b).await;
    let ada_id = add_user(&t, t.org_id, "ada@example.com").await;
    let org = t.org_id.to_string();
    let (ok, out, err) = run_cli(
        &["orgs", "update", &org, "--require-2fa", "on"],
        &t.database_url,
    );
    assert!(ok, "{err}");
    assert!(out.contains("two-factor sign-in required"), "{out}");

    // The password step leads to setting it up, and nothing else.
    let br = Browser::new(&t);
    assert_eq!(
        redirect(&br.sign_in("ada@example.com", PASSWORD).await),
        SECOND
    );
    for path in [
        "/dashboard",
        "/dashboard/settings/two-factor",
        "/dashboard/jobs",
    ] {
        assert_eq!(redirect(&br.get(path).await), "/dashboard/login", "{path}");
    }
    let page = br.get(SECOND).await;
    page.expect(200);
    let secret = secret_of(&page);
    let r = br
        .submit(SECOND, SECOND, &[("code", &wrong_code(&t, &secret))])
        .await;
    r.expect(422);
    field_error(&r, "code");
    assert_eq!(redirect(&br.get("/dashboard").await), "/dashboard/login");
    assert!(
        !jobboard_domain::two_factor::is_on(t.db(), ada_id)
            .await
            .unwrap()
    );
    // Confirming a code switches it on, starts the session and shows the recovery codes.
    let r = br
        .submit(SECOND, SECOND, &[("code", &code(&t, &secret, 0))])
        .await;
    r.expect(200);
    assert_eq!(recovery_codes(&r).len(), 10);
    assert!(
        r.header("set-cookie")
            .is_some_and(|c| c.contains("jobboard_session="))
    );
    br.get("/dashboard").await.expect(200);
    // The audit log has the sign-in (only the finished one).
    assert_eq!(audit_actions(&t).await, ["signed_in"]);
    // Settings show the rule; it cannot be turned off while required.
    let status = br.get("/dashboard/settings/two-factor").await;
    assert!(
        text_of(&status, "#two-factor-rule")
            .unwrap()
            .contains("requires two-factor")
    );
    assert!(
        status
            .html()
            .select(&sel("form[action$='/off']"))
            .next()
            .is_none()
    );
    next_step(&t);
    br.submit(
        "/dashboard/settings/two-factor",
        "/dashboard/settings/two-factor/off",
        &[
            ("current_password", PASSWORD),
            ("code", &code(&t, &secret, 0)),
        ],
    )
    .await
    .expect(409);
    assert!(
        jobboard_domain::two_factor::is_on(t.db(), ada_id)
            .await
            .unwrap()
    );
    let (ok, out, err) = run_cli(
        &["orgs", "update", &org, "--require-2fa", "off"],
        &t.database_url,
    );
    assert!(ok, "{err}");
    assert!(out.contains("not required"), "{out}");
}

/// The value of cookie `name` that a response sets (its only cookie).
fn set_cookie(r: &Resp, name: &str) -> String {
    r.header("set-cookie")
        .and_then(|v| v.split(';').next())
        .and_then(|pair| pair.split_once('='))
        .filter(|(k, _)| *k == name)
        .map(|(_, v)| v.to_string())
        .unwrap_or_else(|| panic!("no {name} cookie set"))
}

async fn a_pending_sign_in_is_bound_to_its_browser(b: Backend) {
    let t = TestApp::spawn(b).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    let setup = Browser::signed_in(&t, "ada@example.com").await;
    let (secret, _) = set_up(&t, &setup).await;
    next_step(&t);
    // The victim's browser passes the password step.
    let br = Browser::new(&t);
    let login = br.get("/dashboard/login").await;
    let visitor = set_cookie(&login, "jobboard_login");
    let r = br
        .post(
            "/dashboard/login",
            &[
                ("email", "ada@example.com"),
                ("password", PASSWORD),
                ("csrf", &csrf_of(&login)),
            ],
        )
        .await;
    assert_eq!(redirect(&r), SECOND);
    let pending = set_cookie(&r, "jobboard_2fa");
    // Another browser with the pending cookie but its own sign-in cookie gets nothing.
    let plain = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let get = |cookies: String| {
        let plain = plain.clone();
        let url = format!("{}{SECOND}", t.base);
        async move {
            Resp::read(
                plain
                    .get(url)
                    .header("cookie", cookies)
                    .send()
                    .await
                    .unwrap(),
            )
            .await
        }
    };
    let thief = get(format!(
        "jobboard_login=someone-else; jobboard_2fa={pending}"
    ))
    .await;
    assert_eq!(
        redirect(&thief),
        "/dashboard/login?notice=two_factor_expired"
    );
    // With both cookies of the browser it is the second step.
    get(format!("jobboard_login={visitor}; jobboard_2fa={pending}"))
        .await
        .expect(200);
    // The second step's form is refused without its token or from another site.
    br.post(SECOND, &[("code", &code(&t, &secret, 0))])
        .await
        .expect(403);
    let token = br.csrf(SECOND).await;
    br.post_from(
        SECOND,
        &[("code", &code(&t, &secret, 0)), ("csrf", &token)],
        Some("https://evil.example"),
    )
    .await
    .expect(403);
    assert_eq!(redirect(&br.get("/dashboard").await), "/dashboard/login");
    // The browser itself finishes.
    let r = br
        .submit(SECOND, SECOND, &[("code", &code(&t, &secret, 0))])
        .await;
    assert_eq!(redirect(&r), "/dashboard");
}

async fn finished_sign_ins_leave_nothing_counted(b: Backend) {
    // Few attempts per client address: a right password and a right code must not use
    // them up.
    let t = TestApp::spawn_with(b, |c| c.dashboard.attempts_per_address = 3).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    let setup = Browser::signed_in(&t, "ada@example.com").await;
    let (secret, _) = set_up(&t, &setup).await;
    for round in 0..5 {
        next_step(&t);
        let br = Browser::new(&t);
        let r = second_step(&br, &code(&t, &secret, 0)).await;
        assert_eq!(redirect(&r), "/dashboard", "sign-in {round}");
    }
}
