//! Job alerts through a real SMTP server on 127.0.0.1: subscribe on the board, the
//! confirmation mail, confirm, a new matching job mailed once and a non-matching one
//! never, daily and weekly batching at a controlled time, one-click unsubscribe with the
//! RFC 8058 headers, the refusals, the API (list, CSV, delete), and two nodes sending each
//! mail once.

use std::time::Duration;

use jobboard_store::Ts;

use jobboard_domain::alerts;

use jobboard::{config::Config, delivery::mail::drain, server::App};
use reqwest::Method;
use serde_json::json;

use crate::{
    backends,
    board::{post_form, sel},
    common::*,
    mail::with_smtp,
    smtp_sink::{Received, SmtpSink},
};

backends!(
    the_alert_life_cycle,
    jobs_created_together_each_reach_the_alerts,
    daily_and_weekly_alerts_batch_at_their_hour,
    refused_subscriptions_and_no_enumeration,
    alerts_need_an_smtp_server,
    the_api_lists_exports_and_deletes,
    two_nodes_send_each_alert_once,
);

async fn spawn(b: Backend, sink: &SmtpSink) -> TestApp {
    let url = sink.url();
    TestApp::spawn_with(b, move |c: &mut Config| {
        c.worker = false;
        c.scheduler = false;
        c.form_limit = 50;
        c.mail = with_smtp(&c.mail, &url, vec![Duration::from_secs(60)]);
    })
    .await
}

fn text_of(m: &Received) -> String {
    m.parsed().body_text(0).unwrap_or_default().to_string()
}

fn subject(m: &Received) -> String {
    m.parsed().subject().unwrap_or_default().to_string()
}

/// The path of the first link in `text` that starts with `prefix` (e.g. `/alerts/confirm/`).
fn link(text: &str, prefix: &str) -> String {
    let at = text
        .find(prefix)
        .unwrap_or_else(|| panic!("no {prefix} link in {text}"));
    text[at..]
        .split(|c: char| c.is_whitespace() || c == '>' || c == '"')
        .next()
        .unwrap()
        .to_string()
}

/// Subscribes through the form on `/` (with the list's filters).
async fn subscribe(t: &TestApp, list: &str, email: &str, frequency: &str) -> Resp {
    let page = t.page(&format!("/{list}")).await;
    page.expect(200);
    let doc = page.html();
    let form = doc
        .select(&sel("form.alert-form"))
        .next()
        .expect("the alert form");
    let value = |name: &str| {
        form.select(&sel(&format!("input[name={name}]")))
            .next()
            .unwrap()
            .value()
            .attr("value")
            .unwrap()
            .to_string()
    };
    let (token, query) = (value("_token"), value("query"));
    post_form(
        t,
        "/alerts",
        &[
            ("_token", token.as_str()),
            ("query", query.as_str()),
            ("email", email),
            ("frequency", frequency),
            ("reference_code", ""),
        ],
        &[],
    )
    .await
}

/// Subscribes and confirms; the alert's token.
async fn confirmed(
    t: &TestApp,
    sink: &SmtpSink,
    list: &str,
    email: &str,
    frequency: &str,
) -> String {
    let before = sink.received().len();
    subscribe(t, list, email, frequency).await.expect(303);
    drain(&t.app).await;
    let got = sink.received();
    assert_eq!(got.len(), before + 1, "one confirmation mail");
    let confirm = link(&text_of(&got[before]), "/alerts/confirm/");
    t.page(&confirm).await.expect(200);
    confirm.trim_start_matches("/alerts/confirm/").to_string()
}

async fn live(t: &TestApp, title: &str, extra: serde_json::Value) -> serde_json::Value {
    let mut body = json!({"title": title, "company_name": "Acme", "description": "<p>Work.</p>", "status": "active"});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    let r = t.post("/jobs", body).await;
    r.expect(201);
    r.body["data"].clone()
}

fn later(secs: u64) -> Ts {
    Ts::now().later_by(Duration::from_secs(secs))
}

async fn the_alert_life_cycle(b: Backend) {
    let sink = SmtpSink::start().await;
    let t = spawn(b, &sink).await;
    // The form on `/` keeps the list's filters.
    let page = t.page("/?search=rust&is_remote=true").await;
    let doc = page.html();
    assert_eq!(
        doc.select(&sel("form.alert-form input[name=query]"))
            .next()
            .unwrap()
            .value()
            .attr("value"),
        Some("search=rust&is_remote=true")
    );
    let r = subscribe(&t, "?search=rust", "Ada@Example.com", "instant").await;
    r.expect(303);
    assert_eq!(r.header("location"), Some("/alerts/sent"));
    assert!(
        t.page("/alerts/sent")
            .await
            .text
            .contains("Check your inbox")
    );
    assert_eq!(drain(&t.app).await, 1);
    let got = sink.received();
    assert_eq!(got[0].to, ["Ada@Example.com"]);
    assert!(subject(&got[0]).starts_with("Confirm your job alert"));
    let confirm = link(&text_of(&got[0]), "/alerts/confirm/");
    // Before the confirmation nothing is mailed.
    live(&t, "Rust engineer (early)", json!({})).await;
    assert_eq!(alerts::run(t.db(), later(10), 7).await.unwrap(), 0);
    let page = t.page(&confirm).await;
    page.expect(200);
    assert!(page.text.contains("Job alert confirmed"));
    // A matching job and one that does not match.
    let rust = live(&t, "Rust engineer", json!({"location": "Berlin"})).await;
    live(&t, "Baker", json!({})).await;
    let pending = t
        .post(
            "/jobs",
            json!({"title": "Rust trainee", "company_name": "Acme", "description": "<p>x</p>"}),
        )
        .await;
    // Jobs of the last seconds are left to the next pass, and not lost by this one.
    assert_eq!(alerts::run(t.db(), Ts::now(), 7).await.unwrap(), 0);
    assert_eq!(alerts::run(t.db(), later(10), 7).await.unwrap(), 1);
    assert_eq!(
        alerts::run(t.db(), later(11), 7).await.unwrap(),
        0,
        "never twice"
    );
    assert_eq!(drain(&t.app).await, 1);
    let mail = &sink.received()[1];
    assert_eq!(subject(mail), "New job on Test org: Rust engineer");
    let text = text_of(mail);
    assert!(
        text.contains(&format!("/jobs/{}", rust["slug"].as_str().unwrap())),
        "{text}"
    );
    assert!(!text.contains("Baker") && !text.contains("early"), "{text}");
    let p = mail.parsed();
    assert!(p.body_html(0).unwrap().contains("Rust engineer"));
    let unsub = mail.header("List-Unsubscribe").expect("List-Unsubscribe");
    assert_eq!(
        mail.header("List-Unsubscribe-Post").as_deref(),
        Some("List-Unsubscribe=One-Click")
    );
    let unsub_path = link(&unsub, "/alerts/unsubscribe/");
    // A job approved later is mailed on the next pass.
    let id = pending.body["data"]["id"].as_str().unwrap();
    t.patch(&format!("/jobs/{id}"), json!({"status": "active"}))
        .await
        .expect(200);
    assert_eq!(alerts::run(t.db(), later(10), 7).await.unwrap(), 1);
    drain(&t.app).await;
    assert_eq!(
        subject(&sink.received()[2]),
        "New job on Test org: Rust trainee"
    );
    // The manage page, then a mail client's one-click unsubscribe.
    let manage = t.page(&unsub_path).await;
    manage.expect(200);
    assert_eq!(
        manage
            .html()
            .select(&sel(".alert-state"))
            .next()
            .unwrap()
            .text()
            .collect::<String>(),
        "on"
    );
    let one_click = t
        .client
        .post(format!("{}{unsub_path}", t.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("List-Unsubscribe=One-Click")
        .send()
        .await
        .unwrap();
    assert_eq!(one_click.status(), 200);
    live(&t, "Rust lead", json!({})).await;
    assert_eq!(alerts::run(t.db(), later(10), 7).await.unwrap(), 0);
    let listed = t.get("/alerts").await;
    assert_eq!(listed.body["data"][0]["status"], "unsubscribed");
    // A forged or altered link is not found.
    let mut forged = unsub_path.clone();
    forged.pop();
    forged.push(if unsub_path.ends_with('A') { 'B' } else { 'A' });
    t.page(&forged).await.expect(404);
}

/// The next 07:00 UTC after now, `minute` minutes past.
fn next_seven(minute: u32) -> Ts {
    let now = chrono::Utc::now();
    let mut day = now.date_naive();
    if now.time() >= chrono::NaiveTime::from_hms_opt(7, 0, 0).unwrap() {
        day = day.succ_opt().unwrap();
    }
    Ts::from_datetime(day.and_hms_opt(7, minute, 0).unwrap().and_utc())
}

async fn jobs_created_together_each_reach_the_alerts(b: Backend) {
    let sink = SmtpSink::start().await;
    let t = spawn(b, &sink).await;
    confirmed(&t, &sink, "", "daily@example.com", "daily").await;
    let mails = sink.received().len();
    // 12 creations at once (on SQLite committed in batches, whose live jobs are logged
    // for the alerts by one statement); two stay pending.
    let bodies: Vec<serde_json::Value> = (0..12)
        .map(|i| {
            let status = if i % 6 == 5 { "pending" } else { "active" };
            json!({"title": format!("Role {i:02}"), "company_name": "Acme", "description": "<p>Work.</p>", "status": status})
        })
        .collect();
    let results =
        crate::members::futures_join_all(bodies.iter().map(|b| t.post("/jobs", b.clone()))).await;
    for r in &results {
        r.expect(201);
    }
    assert_eq!(alerts::run(t.db(), next_seven(1), 7).await.unwrap(), 1);
    drain(&t.app).await;
    let got = sink.received();
    assert_eq!(got.len(), mails + 1);
    assert_eq!(subject(&got[mails]), "10 new jobs on Test org");
    let text = text_of(&got[mails]);
    for i in 0..12 {
        let title = format!("Role {i:02}");
        assert_eq!(text.contains(&title), i % 6 != 5, "{title} in {text}");
    }
}

async fn daily_and_weekly_alerts_batch_at_their_hour(b: Backend) {
    let sink = SmtpSink::start().await;
    let t = spawn(b, &sink).await;
    confirmed(&t, &sink, "", "daily@example.com", "daily").await;
    confirmed(
        &t,
        &sink,
        "?locations=Paris",
        "weekly@example.com",
        "weekly",
    )
    .await;
    let mails = sink.received().len();
    live(&t, "Cook", json!({"location": "Paris"})).await;
    live(&t, "Driver", json!({"location": "Lyon"})).await;
    // The next 07:00 UTC after now, and the next Monday 07:00.
    let now = chrono::Utc::now();
    let mut day = now.date_naive();
    if now.time() >= chrono::NaiveTime::from_hms_opt(7, 0, 0).unwrap() {
        day = day.succ_opt().unwrap();
    }
    let at =
        |d: chrono::NaiveDate, m: u32| Ts::from_datetime(d.and_hms_opt(7, m, 0).unwrap().and_utc());
    let before_hour = at(day, 0).earlier_by(Duration::from_secs(60));
    assert_eq!(
        alerts::run(t.db(), before_hour, 7).await.unwrap(),
        0,
        "not before the hour"
    );
    let n = alerts::run(t.db(), at(day, 1), 7).await.unwrap();
    let monday = {
        let mut d = day;
        while chrono::Datelike::weekday(&d) != chrono::Weekday::Mon {
            d = d.succ_opt().unwrap();
        }
        d
    };
    // The daily alert got both jobs in one mail (the weekly one too, when that day is a Monday).
    let expected_now = if monday == day { 2 } else { 1 };
    assert_eq!(n, expected_now);
    assert_eq!(
        alerts::run(t.db(), at(day, 2), 7).await.unwrap(),
        0,
        "once per day"
    );
    drain(&t.app).await;
    let got = sink.received();
    let daily = got[mails..]
        .iter()
        .find(|m| m.to == ["daily@example.com"])
        .unwrap();
    assert_eq!(subject(daily), "2 new jobs on Test org");
    let text = text_of(daily);
    assert!(text.contains("Cook") && text.contains("Driver"), "{text}");
    if monday != day {
        assert_eq!(alerts::run(t.db(), at(monday, 1), 7).await.unwrap(), 1);
        drain(&t.app).await;
    }
    let got = sink.received();
    let weekly = got[mails..]
        .iter()
        .find(|m| m.to == ["weekly@example.com"])
        .unwrap();
    assert_eq!(subject(weekly), "New job on Test org: Cook");
    assert!(!text_of(weekly).contains("Driver"));
    // Unconfirmed alerts are forgotten after 7 days.
    subscribe(&t, "", "late@example.com", "daily")
        .await
        .expect(303);
    let pending = t.get("/alerts?status=pending").await;
    assert_eq!(pending.body["data"].as_array().unwrap().len(), 1);
    assert_eq!(
        jobboard_domain::retention::purge_unconfirmed_alerts(t.db(), later(6 * 86_400))
            .await
            .unwrap(),
        0
    );
    assert_eq!(
        jobboard_domain::retention::purge_unconfirmed_alerts(t.db(), later(8 * 86_400))
            .await
            .unwrap(),
        1
    );
    let pending = t.get("/alerts?status=pending").await;
    assert!(pending.body["data"].as_array().unwrap().is_empty());
}

async fn refused_subscriptions_and_no_enumeration(b: Backend) {
    let sink = SmtpSink::start().await;
    let t = spawn(b, &sink).await;
    let page = t.page("/alerts").await;
    page.expect(200);
    let token = page
        .html()
        .select(&sel("input[name=_token]"))
        .next()
        .unwrap()
        .value()
        .attr("value")
        .unwrap()
        .to_string();
    let send = |fields: Vec<(&'static str, String)>| {
        let t = &t;
        async move {
            let f: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
            post_form(t, "/alerts", &f, &[]).await
        }
    };
    // A bad address: the form again, with the problem beside the field.
    let r = send(vec![
        ("_token", token.clone()),
        ("email", "not an address".into()),
        ("query", "".into()),
    ])
    .await;
    r.expect(422);
    assert!(
        !r.html()
            .select(&sel("#e-email"))
            .next()
            .unwrap()
            .text()
            .collect::<String>()
            .trim()
            .is_empty()
    );
    // Bad filters.
    send(vec![
        ("_token", token.clone()),
        ("email", "a@example.com".into()),
        ("query", "status=all".into()),
    ])
    .await
    .expect(422);
    // The trap, no token, another site.
    send(vec![
        ("_token", token.clone()),
        ("email", "a@example.com".into()),
        ("reference_code", "x".into()),
    ])
    .await
    .expect(400);
    send(vec![("email", "a@example.com".into())])
        .await
        .expect(403);
    let r = post_form(
        &t,
        "/alerts",
        &[("_token", &token), ("email", "a@example.com")],
        &[("origin", "https://evil.example")],
    )
    .await;
    r.expect(403);
    assert_eq!(drain(&t.app).await, 0, "nothing was mailed");
    // An address subscribed twice: the same answer, one confirmation per request while
    // pending, none once confirmed.
    confirmed(&t, &sink, "", "kate@example.com", "daily").await;
    let before = sink.received().len();
    let again = subscribe(&t, "", "KATE@example.com", "daily").await;
    again.expect(303);
    assert_eq!(again.header("location"), Some("/alerts/sent"));
    assert_eq!(drain(&t.app).await, 0, "no mail says it was subscribed");
    assert_eq!(sink.received().len(), before);
    // At most three subscriptions of one address a minute.
    for _ in 0..2 {
        subscribe(&t, "", "flood@example.com", "daily")
            .await
            .expect(303);
    }
    subscribe(&t, "?search=x", "flood@example.com", "daily")
        .await
        .expect(303);
    subscribe(&t, "?search=y", "flood@example.com", "daily")
        .await
        .expect(429);
    let flood = t.get("/alerts?email=flood@example.com").await;
    assert_eq!(
        flood.body["meta"]["pagination"]["total_items"], 2,
        "one alert per filters"
    );
}

async fn alerts_need_an_smtp_server(b: Backend) {
    let t = TestApp::spawn(b).await;
    let home = t.page("/").await;
    assert!(home.html().select(&sel("form.alert-form")).next().is_none());
    t.page("/alerts").await.expect(404);
    post_form(&t, "/alerts", &[("email", "a@example.com")], &[])
        .await
        .expect(404);
    let r = t.get("/alerts").await;
    r.expect_error(409, "conflict");
    assert_eq!(r.body["error"]["details"]["reason"], "mail_not_configured");
    t.get("/alerts.csv").await.expect_error(409, "conflict");
    assert_eq!(alerts::run(t.db(), later(10), 7).await.unwrap(), 0);
}

async fn the_api_lists_exports_and_deletes(b: Backend) {
    let sink = SmtpSink::start().await;
    let t = spawn(b, &sink).await;
    confirmed(&t, &sink, "?search=rust,go", "ann@example.com", "weekly").await;
    subscribe(&t, "", "=cmd@example.com", "daily")
        .await
        .expect(303);
    let all = t.get("/alerts").await;
    all.expect(200);
    let data = all.body["data"].as_array().unwrap();
    assert_eq!(data.len(), 2);
    assert_eq!(data[0]["email"], "=cmd@example.com");
    assert_eq!(data[1]["status"], "active");
    assert_eq!(data[1]["query"], "search=rust%2Cgo");
    assert_eq!(data[1]["frequency"], "weekly");
    let one = t.get("/alerts?email=ANN@example.com&status=active").await;
    assert_eq!(one.body["data"].as_array().unwrap().len(), 1);
    t.get("/alerts?status=maybe")
        .await
        .expect_error(422, "validation_failed");
    let csv = t.req(Method::GET, "/alerts.csv").send().await;
    csv.expect(200);
    assert_eq!(csv.header("content-type"), Some("text/csv; charset=utf-8"));
    let lines: Vec<&str> = csv.text.lines().collect();
    assert_eq!(
        lines[0],
        "id,email,frequency,query,status,created_at,confirmed_at,last_sent_at"
    );
    assert_eq!(lines.len(), 3);
    assert!(
        lines[1].contains(",'=cmd@example.com,daily,,pending,"),
        "{}",
        lines[1]
    );
    // Scopes and organizations.
    let reader = t.new_key(t.org_id, "jobs:read", 100, 100).await;
    t.req(Method::GET, "/alerts")
        .key(&reader)
        .send()
        .await
        .expect_error(403, "insufficient_scope");
    let (_, other) = t.new_org("Other", "*", 100, 100).await;
    let theirs = t.req(Method::GET, "/alerts").key(&other).send().await;
    assert!(theirs.body["data"].as_array().unwrap().is_empty());
    let id = data[1]["id"].as_str().unwrap().to_string();
    t.req(Method::DELETE, &format!("/alerts/{id}"))
        .key(&other)
        .send()
        .await
        .expect_error(404, "not_found");
    let r = t.delete(&format!("/alerts/{id}")).await;
    r.expect(200);
    assert_eq!(r.body["data"]["deleted"], true);
    t.delete(&format!("/alerts/{id}"))
        .await
        .expect_error(404, "not_found");
    assert_eq!(
        t.get("/alerts").await.body["data"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

async fn two_nodes_send_each_alert_once(b: Backend) {
    let sink = SmtpSink::start().await;
    let t = spawn(b, &sink).await;
    for i in 0..5 {
        confirmed(&t, &sink, "", &format!("n{i}@example.com"), "instant").await;
    }
    let before = sink.received().len();
    live(&t, "Pilot", json!({})).await;
    let second = match b {
        Backend::Postgres => {
            let mut config = Config::with_database(&t.database_url);
            config.scheduler = false;
            config.worker = false;
            config.mail = t.app.config.mail.clone();
            Some(App::start(config).await.unwrap())
        }
        Backend::Sqlite => None,
    };
    let other = second.clone().unwrap_or_else(|| t.app.clone());
    let now = later(10);
    let (a, c) = tokio::join!(alerts::run(t.db(), now, 7), alerts::run(&other.db, now, 7));
    assert_eq!(a.unwrap() + c.unwrap(), 5, "one mail per alert");
    drain(&t.app).await;
    let got = sink.received();
    assert_eq!(got.len(), before + 5);
    let mut to: Vec<String> = got[before..].iter().map(|m| m.to[0].clone()).collect();
    to.sort();
    to.dedup();
    assert_eq!(to.len(), 5);
}
