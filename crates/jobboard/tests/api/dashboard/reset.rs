//! Password reset by mail: the request page (the same answer whether or not anyone has the
//! address, limited per address), the mailed link (built from `public_url`, never from
//! the request's `Host`; hashed in storage; once; 30 minutes) and what using it does (a
//! new password, checked for strength; every session of the user ended).

use std::time::Duration;

use jobboard::{config::Config, delivery::mail::drain};

use super::*;
use crate::{backends, mail::mail_to, smtp_sink::SmtpSink};

backends!(
    a_mailed_link_sets_a_new_password_once_and_ends_every_session,
    reset_links_expire_and_requests_are_limited,
    without_mail_the_page_says_so,
);

const PUBLIC: &str = "http://jobs.example.test";
const REQUEST: &str = "/dashboard/password-reset";

fn with_mail(sink: &SmtpSink) -> impl FnOnce(&mut Config) {
    let mail = mail_to(sink, &[60]);
    move |c: &mut Config| {
        mail(c);
        c.public_url = PUBLIC.into();
    }
}

/// Asks for a reset link for `email`; the answer.
async fn ask(br: &Browser<'_>, email: &str) -> Resp {
    br.submit(REQUEST, REQUEST, &[("email", email)]).await
}

/// The reset links of the mails the sink received, in order.
fn links(sink: &SmtpSink, to: &str) -> Vec<String> {
    sink.received()
        .iter()
        .filter(|m| m.to == [to])
        .map(|m| {
            let text = m.parsed().body_text(0).unwrap_or_default().to_string();
            text.split_whitespace()
                .find(|w| w.contains("/dashboard/password-reset/"))
                .unwrap_or_else(|| panic!("no link in {text}"))
                .to_string()
        })
        .collect()
}

async fn a_mailed_link_sets_a_new_password_once_and_ends_every_session(b: Backend) {
    let sink = SmtpSink::start().await;
    let t = TestApp::spawn_with(b, with_mail(&sink)).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    let here = Browser::signed_in(&t, "ada@example.com").await;
    let there = Browser::signed_in(&t, "ada@example.com").await;
    // The sign-in page leads to the request page.
    let login = Browser::new(&t).get("/dashboard/login").await;
    assert!(
        login
            .html()
            .select(&sel("a[href='/dashboard/password-reset']"))
            .next()
            .is_some()
    );
    let visitor = Browser::new(&t);
    let form = visitor.get(REQUEST).await;
    form.expect(200);
    assert!(
        form.html()
            .select(&sel("label[for=f-email]"))
            .next()
            .is_some()
    );
    // Sent with another Host (from this service's own page): the link is still built
    // from public_url. (A page of another origin is refused by the origin check.)
    let token = csrf_of(&form);
    let r = visitor
        .client
        .post(format!("{}{REQUEST}", t.base))
        .header("host", "attacker.example")
        .header("origin", &t.base)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(
            serde_urlencoded::to_string([("email", "ADA@example.com"), ("csrf", &token)]).unwrap(),
        )
        .send()
        .await
        .unwrap();
    let known = Resp::read(r).await;
    known.expect(200);
    let unknown = ask(&visitor, "nobody@example.com").await;
    unknown.expect(200);
    // The same answer whether or not anyone has the address.
    let sent = text_of(&known, "#reset-sent").unwrap();
    assert!(
        sent.starts_with("If a staff user has this address"),
        "{sent}"
    );
    assert_eq!(text_of(&unknown, "#reset-sent").unwrap(), sent);
    assert_eq!(drain(&t.app).await, 1, "one mail, to the one user");
    let link = links(&sink, "ada@example.com").pop().unwrap();
    let path = link
        .strip_prefix(PUBLIC)
        .unwrap_or_else(|| panic!("not under public_url: {link}"))
        .to_string();
    // Only a hash of the token is stored.
    let token = path.rsplit('/').next().unwrap();
    let stored: Vec<Vec<u8>> = jobboard_store::dispatch!(t.db().reader(), p => {
        sqlx::query_scalar("SELECT token_hash FROM dashboard_reset_tokens")
            .fetch_all(p)
            .await
            .unwrap()
    });
    use sha2::Digest;
    assert_eq!(stored, [sha2::Sha256::digest(token.as_bytes()).to_vec()]);

    let page = visitor.get(&path).await;
    page.expect(200);
    assert!(page.text.contains("ada@example.com"));
    let set = |p: &'static str| {
        let (visitor, path) = (&visitor, &path);
        async move {
            visitor
                .submit(path, path, &[("password", p), ("password_confirm", p)])
                .await
        }
    };
    // A post of the link's form from another site is refused and changes nothing.
    let p = "plum orbit velvet canyon";
    visitor
        .post_from(
            &path,
            &[
                ("password", p),
                ("password_confirm", p),
                ("csrf", &csrf_of(&page)),
            ],
            Some("http://evil.example"),
        )
        .await
        .expect(403);
    // A weak password is refused beside the field, and the link still works.
    let weak = set("aaaaaaaaaaaa").await;
    weak.expect(422);
    let why = text_of(&weak, "#f-password-error").unwrap();
    assert!(
        why.starts_with("This password is too easy to guess"),
        "{why}"
    );
    let new = "plum orbit velvet canyon";
    let done = set(new).await;
    assert_eq!(redirect(&done), "/dashboard/login?notice=password_reset");
    // Every session of the user has ended.
    for br in [&here, &there] {
        assert!(redirect(&br.get("/dashboard").await).starts_with("/dashboard/login"));
    }
    // The link works once.
    visitor.get(&path).await.expect(404);
    let csrf = csrf_of(&visitor.get("/dashboard/login").await);
    let p = "another fine long phrase";
    visitor
        .post(
            &path,
            &[("password", p), ("password_confirm", p), ("csrf", &csrf)],
        )
        .await
        .expect(404);
    Browser::new(&t)
        .sign_in("ada@example.com", PASSWORD)
        .await
        .expect(422);
    redirect(&Browser::new(&t).sign_in("ada@example.com", new).await);
}

async fn reset_links_expire_and_requests_are_limited(b: Backend) {
    let sink = SmtpSink::start().await;
    let t = TestApp::spawn_with(b, with_mail(&sink)).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    let br = Browser::new(&t);
    ask(&br, "ada@example.com").await.expect(200);
    assert_eq!(drain(&t.app).await, 1);
    let path = links(&sink, "ada@example.com")[0]
        .strip_prefix(PUBLIC)
        .unwrap()
        .to_string();
    br.get(&path).await.expect(200);
    t.app.clock.advance(Duration::from_secs(30 * 60 + 1));
    br.get(&path).await.expect(404);
    // Three mails per address in the window; the fourth request waits, whether or not
    // anyone has the address.
    for _ in 0..3 {
        ask(&br, "ada@example.com").await.expect(200);
        ask(&br, "nobody@example.com").await.expect(200);
    }
    for email in ["ada@example.com", "nobody@example.com"] {
        let r = ask(&br, email).await;
        r.expect(429);
        let retry: u64 = r.header("retry-after").unwrap().parse().unwrap();
        assert!((800..=900).contains(&retry), "{retry}");
        let why = text_of(&r, "#f-email-error").unwrap();
        assert!(why.starts_with("Too many reset requests"), "{why}");
    }
    assert_eq!(drain(&t.app).await, 3);
    assert_eq!(links(&sink, "ada@example.com").len(), 4);
    // The form has the anti-forgery checks of the sign-in pages: a forged token, or a
    // post from another site, is refused and mails nothing.
    let r = br
        .post(REQUEST, &[("email", "ada@example.com"), ("csrf", "forged")])
        .await;
    r.expect(403);
    let csrf = csrf_of(&br.get("/dashboard/login").await);
    let r = br
        .post_from(
            REQUEST,
            &[("email", "grace@example.com"), ("csrf", &csrf)],
            Some("http://evil.example"),
        )
        .await;
    r.expect(403);
    assert_eq!(drain(&t.app).await, 0);
    // Spent links and forgotten failures are purged.
    br.sign_in("ada@example.com", "guess guess guess")
        .await
        .expect(422);
    assert_eq!(count(&t, "dashboard_reset_tokens").await, 4);
    assert_eq!(count(&t, "dashboard_login_pairs").await, 1);
    t.app.clock.advance(Duration::from_secs(25 * 3600));
    let policy = &t.app.config.dashboard;
    jobboard_domain::retention::purge_sign_in(t.db(), t.app.clock.now(), policy)
        .await
        .unwrap();
    assert_eq!(count(&t, "dashboard_reset_tokens").await, 0);
    assert_eq!(count(&t, "dashboard_login_pairs").await, 0);
}

async fn without_mail_the_page_says_so(b: Backend) {
    let t = TestApp::spawn(b).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    let br = Browser::new(&t);
    let page = br.get(REQUEST).await;
    page.expect(200);
    assert!(
        text_of(&page, "#reset-unavailable")
            .unwrap()
            .starts_with("This service sends no mail")
    );
    let r = br
        .post(
            REQUEST,
            &[
                ("email", "ada@example.com"),
                ("csrf", &csrf_of(&br.get("/dashboard/login").await)),
            ],
        )
        .await;
    r.expect(409);
    assert!(text_of(&r, "#reset-unavailable").is_some());
}

/// The rows of `table`.
async fn count(t: &TestApp, table: &str) -> i64 {
    let sql = format!("SELECT COUNT(*) FROM {table}");
    jobboard_store::dispatch!(t.db().reader(), p => {
        sqlx::query_scalar(sqlx::AssertSqlSafe(sql)).fetch_one(p).await.unwrap()
    })
}
