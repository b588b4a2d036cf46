//! Staff accounts: the sign-in throttle per account and client (growing delays, a
//! slower ceiling per account, a client without failures let through), the same
//! throttle on the password form, the strength of every new password, and the answer to
//! an address another organization's user has.

use std::time::Duration;

use jobboard_domain::users::setup;

use jobboard::config::Config;

use super::*;
use crate::backends;

backends!(
    a_client_without_failures_signs_in_while_another_is_throttled,
    delays_grow_with_each_failure_of_a_client,
    an_account_ceiling_holds_for_clients_that_failed,
    the_password_form_is_throttled_like_sign_in,
    weak_passwords_are_refused_wherever_a_password_is_set,
    an_address_taken_in_another_organization_gets_a_neutral_answer,
);

/// Requests from 127.0.0.1 name their client in `X-Forwarded-For`.
fn behind_proxy(c: &mut Config) {
    c.trusted_proxies = vec![jobboard_core::net::Cidr::parse("127.0.0.1/32").unwrap()];
}

/// The `Retry-After` of a refused attempt, asserting the status is `429` and the message
/// says why.
#[track_caller]
fn locked(r: &Resp, error_at: &str) -> u64 {
    r.expect(429);
    let message = text_of(r, error_at).unwrap_or_default();
    assert!(message.starts_with("Too many"), "{message}");
    r.header("retry-after").unwrap().parse().unwrap()
}

const WRONG: &str = "guess guess guess";

async fn a_client_without_failures_signs_in_while_another_is_throttled(b: Backend) {
    let t = TestApp::spawn_with(b, behind_proxy).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    let attacker = Browser::from_address(&t, "203.0.113.7");
    for _ in 0..3 {
        attacker.sign_in("ada@example.com", WRONG).await.expect(422);
        attacker
            .sign_in("ghost@example.com", WRONG)
            .await
            .expect(422);
    }
    // The attacker's next attempt waits, even with the right password.
    let refused = attacker.sign_in("ada@example.com", PASSWORD).await;
    let retry = locked(&refused, "#login-error");
    assert!((55..=60).contains(&retry), "{retry}");
    // An address nobody has is throttled alike: nothing tells who exists.
    let ghost = attacker.sign_in("ghost@example.com", WRONG).await;
    assert!((55..=60).contains(&locked(&ghost, "#login-error")));
    assert_eq!(
        text_of(&ghost, "#login-error"),
        text_of(&refused, "#login-error")
    );
    // The owner, from another address without failures, signs in at once.
    let owner = Browser::from_address(&t, "198.51.100.20");
    assert_eq!(
        redirect(&owner.sign_in("ada@example.com", PASSWORD).await),
        "/dashboard"
    );
    owner.get("/dashboard").await.expect(200);
}

async fn delays_grow_with_each_failure_of_a_client(b: Backend) {
    let t = TestApp::spawn_with(b, behind_proxy).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    let br = Browser::from_address(&t, "203.0.113.7");
    for _ in 0..3 {
        br.sign_in("ada@example.com", WRONG).await.expect(422);
    }
    let mut expected = 60;
    for _ in 0..3 {
        let retry = locked(&br.sign_in("ada@example.com", WRONG).await, "#login-error");
        assert!((expected - 5..=expected).contains(&retry), "{retry}");
        t.app.clock.advance(Duration::from_secs(retry + 1));
        // One attempt after the wait; it fails, and the next wait is twice as long.
        br.sign_in("ada@example.com", WRONG).await.expect(422);
        expected *= 2;
    }
    let retry = locked(
        &br.sign_in("ada@example.com", PASSWORD).await,
        "#login-error",
    );
    assert!((expected - 5..=expected).contains(&retry), "{retry}");
    t.app.clock.advance(Duration::from_secs(retry + 1));
    assert_eq!(
        redirect(&br.sign_in("ada@example.com", PASSWORD).await),
        "/dashboard"
    );
    // Signing in clears the client's failures.
    let again = Browser::from_address(&t, "203.0.113.7");
    for _ in 0..3 {
        again.sign_in("ada@example.com", WRONG).await.expect(422);
    }
}

async fn an_account_ceiling_holds_for_clients_that_failed(b: Backend) {
    let t = TestApp::spawn_with(b, |c| {
        behind_proxy(c);
        c.dashboard.attempts_per_account = 4;
    })
    .await;
    add_user(&t, t.org_id, "ada@example.com").await;
    for i in 1..=5 {
        Browser::from_address(&t, &format!("203.0.113.{i}"))
            .sign_in("ada@example.com", WRONG)
            .await
            .expect(422);
    }
    // Past the ceiling, a client that failed waits for the window, whatever it types.
    let again = Browser::from_address(&t, "203.0.113.1");
    let retry = locked(
        &again.sign_in("ada@example.com", PASSWORD).await,
        "#login-error",
    );
    assert!((800..=900).contains(&retry), "{retry}");
    // A client without failures still gets its attempt.
    let owner = Browser::from_address(&t, "198.51.100.20");
    assert_eq!(
        redirect(&owner.sign_in("ada@example.com", PASSWORD).await),
        "/dashboard"
    );
    // When the window is over, the ceiling is lifted.
    t.app.clock.advance(Duration::from_secs(15 * 60 + 1));
    redirect(&again.sign_in("ada@example.com", PASSWORD).await);
}

async fn the_password_form_is_throttled_like_sign_in(b: Backend) {
    let t = TestApp::spawn_with(b, behind_proxy).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    let br = Browser::from_address(&t, "203.0.113.7");
    redirect(&br.sign_in("ada@example.com", PASSWORD).await);
    let page = "/dashboard/settings/password";
    let new = "a much longer new secret";
    let change = |current: &'static str| {
        let br = &br;
        async move {
            br.submit(
                page,
                page,
                &[
                    ("current_password", current),
                    ("new_password", new),
                    ("new_password_confirm", new),
                ],
            )
            .await
        }
    };
    for _ in 0..3 {
        let wrong = change(WRONG).await;
        wrong.expect(422);
        assert_eq!(
            text_of(&wrong, "#f-current_password-error").as_deref(),
            Some("This is not your current password.")
        );
    }
    // The fourth try waits, even with the right password, and changes nothing.
    let refused = change(PASSWORD).await;
    let retry = locked(&refused, "#f-current_password-error");
    assert!((55..=60).contains(&retry), "{retry}");
    assert!(
        refused
            .html()
            .select(&sel("#f-current_password[aria-invalid=true]"))
            .next()
            .is_some()
    );
    br.get("/dashboard").await.expect(200);
    // The same throttle as sign-in: this client's sign-ins wait too; another client's
    // do not, and the password is still the old one.
    locked(
        &Browser::from_address(&t, "203.0.113.7")
            .sign_in("ada@example.com", PASSWORD)
            .await,
        "#login-error",
    );
    redirect(
        &Browser::from_address(&t, "198.51.100.20")
            .sign_in("ada@example.com", PASSWORD)
            .await,
    );
    // After the wait, the right password changes it.
    t.app.clock.advance(Duration::from_secs(retry + 1));
    assert_eq!(
        redirect(&change(PASSWORD).await),
        "/dashboard/settings/password?notice=password_changed"
    );
}

/// Asserts `r` refused a weak password beside `field` and says why.
#[track_caller]
fn weak(r: &Resp, field: &str) {
    r.expect(422);
    let message = text_of(r, &format!("#f-{field}-error")).unwrap_or_default();
    assert!(
        message.starts_with("This password is too easy to guess"),
        "{field}: {message}"
    );
}

async fn weak_passwords_are_refused_wherever_a_password_is_set(b: Backend) {
    let t = TestApp::spawn(b).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    let ada = Browser::signed_in(&t, "ada@example.com").await;
    let staff = "/dashboard/settings/staff";
    for (email, password) in [
        ("grace@example.com", "aaaaaaaaaaaa"),
        ("grace@example.com", "password1234"),
        ("grace@example.com", "qwertyuiop12"),
        ("grace.hopper@example.com", "grace.hopper@example.com"),
    ] {
        let r = ada
            .submit(staff, staff, &[("email", email), ("password", password)])
            .await;
        weak(&r, "password");
    }
    // Twelve spaces are refused too (as empty or as weak, beside the field).
    let spaces = ada
        .submit(
            staff,
            staff,
            &[("email", "grace@example.com"), ("password", "            ")],
        )
        .await;
    spaces.expect(422);
    assert!(text_of(&spaces, "#f-password-error").is_some());
    assert_eq!(
        jobboard_domain::users::list(t.db(), t.org_id)
            .await
            .unwrap()
            .len(),
        1,
        "nothing stored"
    );
    // One's own password.
    let page = "/dashboard/settings/password";
    for new in [
        "aaaaaaaaaaaa",
        "ada@example.com!",
        "correct horse battery staple1",
    ] {
        let r = ada
            .submit(
                page,
                page,
                &[
                    ("current_password", PASSWORD),
                    ("new_password", new),
                    ("new_password_confirm", new),
                ],
            )
            .await;
        if new.starts_with("correct") {
            // Strong enough; changed back below.
            assert_eq!(
                redirect(&r),
                "/dashboard/settings/password?notice=password_changed"
            );
        } else {
            weak(&r, "new_password");
        }
    }
    // The setup link: a weak password leaves the link unused.
    let token = setup::create_link(t.db(), t.org_id, t.app.clock.now(), setup::DEFAULT_LIFETIME)
        .await
        .unwrap();
    let path = format!("/dashboard/setup/{token}");
    let visitor = Browser::new(&t);
    let r = visitor
        .submit(
            &path,
            &path,
            &[
                ("email", "linus@example.com"),
                ("password", "111111111111"),
                ("password_confirm", "111111111111"),
            ],
        )
        .await;
    weak(&r, "password");
    visitor.get(&path).await.expect(200);
}

async fn an_address_taken_in_another_organization_gets_a_neutral_answer(b: Backend) {
    let t = TestApp::spawn(b).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    add_user(&t, t.org_id, "grace@example.com").await;
    let (other_org, _) = t.new_org("Elsewhere Inc", "*", 100, 100).await;
    add_user(&t, other_org, "taken@example.com").await;
    let ada = Browser::signed_in(&t, "ada@example.com").await;
    let page = "/dashboard/settings/staff";
    let other = ada
        .submit(
            page,
            page,
            &[("email", "Taken@Example.com"), ("password", PASSWORD)],
        )
        .await;
    other.expect(422);
    let same = ada
        .submit(
            page,
            page,
            &[("email", "grace@example.com"), ("password", PASSWORD)],
        )
        .await;
    same.expect(422);
    let message = text_of(&other, "#f-email-error").unwrap();
    // The same answer as for a colleague's address: nothing says that another
    // organization has a user with it.
    assert_eq!(text_of(&same, "#f-email-error").unwrap(), message);
    assert!(!message.contains("Another dashboard user"), "{message}");
    assert!(
        !other.text.contains("Elsewhere"),
        "the other organization named"
    );
    assert_eq!(
        jobboard_domain::users::list(t.db(), t.org_id)
            .await
            .unwrap()
            .len(),
        2
    );
}
