//! Members on the board (docs/members.md): signing in with a link mailed through a real
//! SMTP server on 127.0.0.1, the organization's switches, an employer's jobs, a job
//! seeker's saved jobs, and a member's export and deletion, through a browser-like client
//! that keeps cookies and never follows redirects.

mod data;
mod employer;
mod plans;
mod sign_in;

use std::time::Duration;

use jobboard::{config::Config, delivery::mail::drain};
use jobboard_domain::{Input, orgs};
use serde_json::{Value, json};

use crate::{
    board::sel,
    common::*,
    dashboard::Browser,
    mail::with_smtp,
    smtp_sink::{Received, SmtpSink},
};

/// A server sending mail to `sink` (drained explicitly), with the organization's member
/// switches set to `signup`, `approval` and `posts`.
pub async fn spawn(
    b: Backend,
    sink: &SmtpSink,
    signup: &str,
    approval: &str,
    posts: &str,
) -> TestApp {
    let url = sink.url();
    let t = TestApp::spawn_with(b, move |c: &mut Config| {
        c.worker = false;
        c.scheduler = false;
        c.form_limit = 200;
        c.mail = with_smtp(&c.mail, &url, vec![Duration::from_secs(60)]);
    })
    .await;
    switches(&t, signup, approval, posts).await;
    t
}

/// Sets the organization's member switches.
pub async fn switches(t: &TestApp, signup: &str, approval: &str, posts: &str) {
    let body = json!({"member_signup": signup, "member_approval": approval, "member_posts": posts});
    let Value::Object(map) = body else {
        unreachable!()
    };
    orgs::update(t.db(), t.org_id, Input::new(map))
        .await
        .expect("the switches are set");
}

/// Creates a member through the API.
pub async fn member(t: &TestApp, email: &str, role: &str, approval: &str) -> String {
    let r = t
        .post(
            "/members/sync",
            json!({"email": email, "role": role, "approvalStatus": approval}),
        )
        .await;
    r.expect(201);
    r.body["data"]["member"]["id"].as_str().unwrap().to_string()
}

/// The value of the input `name` of the first form on the page.
pub fn input(page: &Resp, name: &str) -> String {
    page.html()
        .select(&sel(&format!("input[name={name}]")))
        .next()
        .and_then(|e| e.value().attr("value").map(str::to_string))
        .unwrap_or_else(|| panic!("no {name} input on the page: {}", page.text))
}

/// Asks for a sign-in link with the form of `/account/sign-in`.
pub async fn ask_link(b: &Browser<'_>, email: &str, role: Option<&str>) -> Resp {
    let page = b.get("/account/sign-in").await;
    page.expect(200);
    let token = input(&page, "_token");
    let mut fields = vec![
        ("_token", token.as_str()),
        ("email", email),
        ("reference_code", ""),
    ];
    if let Some(r) = role {
        fields.push(("role", r));
    }
    b.post("/account/sign-in", &fields).await
}

/// The mails `sink` received for `to`.
pub fn mails_to(sink: &SmtpSink, to: &str) -> Vec<Received> {
    sink.received()
        .into_iter()
        .filter(|m| m.to.iter().any(|r| r.eq_ignore_ascii_case(to)))
        .collect()
}

/// The path of the sign-in link in the latest mail to `to`, after delivering the queue.
pub async fn mailed_link(t: &TestApp, sink: &SmtpSink, to: &str) -> String {
    drain(&t.app).await;
    let text = mails_to(sink, to)
        .iter()
        .rev()
        .map(|m| m.parsed().body_text(0).unwrap_or_default().to_string())
        .find(|text| text.contains("/account/sign-in/"))
        .unwrap_or_else(|| panic!("no mail with a sign-in link to {to}"));
    let at = text.find("/account/sign-in/").unwrap();
    text[at..]
        .split(|c: char| c.is_whitespace())
        .next()
        .unwrap()
        .to_string()
}

/// A browser signed in as `email` (a member already, or one the link creates).
pub async fn signed_in<'a>(
    t: &'a TestApp,
    sink: &SmtpSink,
    email: &str,
    role: Option<&str>,
) -> Browser<'a> {
    let b = Browser::new(t);
    ask_link(&b, email, role).await.expect(200);
    let link = mailed_link(t, sink, email).await;
    let r = b.get(&link).await;
    r.expect(303);
    assert!(r.header("location").unwrap().starts_with("/account"));
    b
}

/// A receiver subscribed to `event` (signed webhooks to 127.0.0.1).
pub async fn receiver_of(t: &TestApp, event: &str) -> crate::webhook_receiver::Receiver {
    let rx = crate::webhook_receiver::Receiver::start().await;
    t.post(
        "/webhooks",
        json!({"event": event, "target_type": "webhook", "target_url": rx.url("/in")}),
    )
    .await
    .expect(201);
    rx
}

/// The `event` fields of what `rx` received, after delivering every queued event.
pub async fn delivered(t: &TestApp, rx: &crate::webhook_receiver::Receiver) -> Vec<String> {
    jobboard::delivery::webhooks::drain(&t.app).await;
    rx.hits("/in")
        .iter()
        .map(|h| h.json()["event"].as_str().unwrap_or_default().to_string())
        .collect()
}
