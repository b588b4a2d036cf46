//! Outgoing mail through a real SMTP server on 127.0.0.1 (see `smtp_sink`): queued in the
//! caller's transaction, sent once with every part and header, retried on temporary
//! refusals, failed on permanent ones. `mail_nodes` covers crashes and several nodes.

use std::time::Duration;

use jobboard_domain::mail::{EnqueueError, Message, Status, enqueue, store};
use jobboard_store::{Ts, events};

use jobboard::{
    config::Config,
    delivery::mail::{self, drain, drain_with},
    server::App,
};
use jobboard_core::Clock;
use uuid::Uuid;

use crate::{
    backends,
    common::*,
    smtp_sink::{SmtpSink, Stage},
};

backends!(
    committed_mail_arrives_once_with_every_part,
    rolled_back_mail_is_never_sent,
    invalid_mail_is_refused_in_the_callers_transaction,
    temporary_refusals_are_retried_on_schedule,
    unreachable_server_is_retried_and_queued_mail_waits,
    permanent_refusals_fail_without_retry,
);

pub(crate) const FROM: &str = "Job Board <jobs@example.test>";

/// Mail to the sink, sent only by explicit drains.
pub(crate) fn mail_to(sink: &SmtpSink, retry: &[u64]) -> impl FnOnce(&mut Config) {
    let url = sink.url();
    let retry: Vec<Duration> = retry.iter().copied().map(Duration::from_secs).collect();
    move |c: &mut Config| {
        c.worker = false;
        c.scheduler = false;
        c.mail = with_smtp(&c.mail, &url, retry);
    }
}

pub(crate) fn with_smtp(
    base: &mail::MailConfig,
    url: &str,
    retry: Vec<Duration>,
) -> mail::MailConfig {
    mail::MailConfig {
        smtp_url: Some(url.to_string()),
        from: Some(FROM.parse().unwrap()),
        retry_schedule: retry,
        timeout: Duration::from_secs(10),
        ..base.clone()
    }
}

pub(crate) fn alert(to: &str, n: usize) -> Message {
    Message::new(
        "job_alert",
        to,
        format!("New jobs for you ({n})"),
        format!("Hello,\n\n{n} new jobs match your alert.\n"),
    )
}

pub(crate) async fn stored(t: &TestApp, id: Uuid) -> store::Mail {
    store::get(t.db(), t.org_id, id)
        .await
        .unwrap()
        .expect("the mail is stored")
}

/// The value of a metric line `name value`.
pub(crate) async fn metric(t: &TestApp, name: &str) -> f64 {
    let r = t.metrics().await;
    r.expect(200);
    r.text
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .unwrap_or_else(|| panic!("{name} missing from /metrics"))
        .parse()
        .unwrap()
}

pub(crate) fn in_seconds(s: i64) -> Ts {
    Ts::now().plus(chrono::Duration::seconds(s))
}

async fn committed_mail_arrives_once_with_every_part(b: Backend) {
    let sink = SmtpSink::start().await;
    let t = TestApp::spawn_with(b, mail_to(&sink, &[60])).await;
    assert!(mail::enabled(&t.app));
    let msg = Message::new(
        "job_alert",
        "Ada Lovelace <ada@example.com>",
        "Neue Stellen für Sie ✓",
        "Two new jobs match your alert.\nhttps://example.test/jobs/rust\n",
    )
    .html("<p>Two new jobs match <b>your alert</b>.</p>")
    .header(
        "List-Unsubscribe",
        "<https://example.test/unsubscribe/abc>, <mailto:unsubscribe@example.test>",
    )
    .header("List-Unsubscribe-Post", "List-Unsubscribe=One-Click");
    // The mail and the change that causes it commit together.
    let mut tx = t.db().begin().await.unwrap();
    events::emit(
        &mut tx,
        t.org_id,
        "alert.matched",
        serde_json::json!({"jobs": 2}),
    )
    .await
    .unwrap();
    let id = enqueue(&mut tx, t.org_id, &msg).await.unwrap();
    tx.commit().await.unwrap();
    let queued = stored(&t, id).await;
    assert_eq!(queued.status, Status::Queued);
    assert_eq!(queued.attempts, 0);
    assert!(queued.message_id.starts_with('<') && queued.message_id.ends_with(">"));
    assert_eq!(metric(&t, "jobboard_mail_queued").await, 1.0);
    // Another organization cannot read it.
    let (other, _) = t.new_org("Other", "*", 100, 100).await;
    assert!(store::get(t.db(), other, id).await.unwrap().is_none());

    assert_eq!(drain(&t.app).await, 1);
    let got = sink.received();
    assert_eq!(got.len(), 1);
    let m = &got[0];
    assert_eq!(m.from, "jobs@example.test");
    assert_eq!(m.to, ["ada@example.com"]);
    let p = m.parsed();
    assert_eq!(format!("<{}>", p.message_id().unwrap()), queued.message_id);
    let from = p.from().unwrap().first().unwrap();
    assert_eq!(
        (from.name(), from.address()),
        (Some("Job Board"), Some("jobs@example.test"))
    );
    let to = p.to().unwrap().first().unwrap();
    assert_eq!(
        (to.name(), to.address()),
        (Some("Ada Lovelace"), Some("ada@example.com"))
    );
    assert_eq!(p.subject(), Some("Neue Stellen für Sie ✓"));
    assert_eq!(
        p.body_text(0).unwrap().replace("\r\n", "\n"),
        "Two new jobs match your alert.\nhttps://example.test/jobs/rust\n"
    );
    assert_eq!(
        p.body_html(0).unwrap(),
        "<p>Two new jobs match <b>your alert</b>.</p>"
    );
    assert_eq!(
        m.header("List-Unsubscribe").unwrap(),
        "<https://example.test/unsubscribe/abc>, <mailto:unsubscribe@example.test>"
    );
    assert_eq!(
        m.header("List-Unsubscribe-Post").unwrap(),
        "List-Unsubscribe=One-Click"
    );
    assert_eq!(m.header("Auto-Submitted").unwrap(), "auto-generated");
    let date = p.date().expect("a Date header").to_timestamp();
    assert!((date - queued.created_at.unix_seconds()).abs() <= 1);

    let sent = stored(&t, id).await;
    assert_eq!(sent.status, Status::Sent);
    assert_eq!(sent.attempts, 1);
    assert!(sent.sent_at.is_some() && sent.next_attempt_at.is_none());
    // Sent once: nothing is due any more, now or later.
    assert_eq!(drain(&t.app).await, 0);
    assert_eq!(drain_with(&t.app, Clock::at(in_seconds(86_400))).await, 0);
    assert_eq!(sink.received().len(), 1);
    assert_eq!(metric(&t, "jobboard_mail_queued").await, 0.0);
    assert_eq!(metric(&t, "jobboard_mail_failed").await, 0.0);
}

async fn rolled_back_mail_is_never_sent(b: Backend) {
    let sink = SmtpSink::start().await;
    let t = TestApp::spawn_with(b, mail_to(&sink, &[60])).await;
    let mut tx = t.db().begin().await.unwrap();
    events::emit(&mut tx, t.org_id, "alert.matched", serde_json::json!({}))
        .await
        .unwrap();
    let id = enqueue(&mut tx, t.org_id, &alert("ada@example.com", 1))
        .await
        .unwrap();
    drop(tx); // rolled back
    assert!(store::get(t.db(), t.org_id, id).await.unwrap().is_none());
    assert!(
        events::list_for_org(t.db(), t.org_id)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(drain_with(&t.app, Clock::at(in_seconds(86_400))).await, 0);
    assert!(sink.received().is_empty());
    assert_eq!(sink.rcpt_attempts("ada@example.com"), 0);
    assert_eq!(metric(&t, "jobboard_mail_queued").await, 0.0);
}

async fn invalid_mail_is_refused_in_the_callers_transaction(b: Backend) {
    // Without an SMTP server nothing is sent, yet mail can be queued (it waits).
    let t = TestApp::spawn_with(b, |c| c.worker = false).await;
    assert!(!mail::enabled(&t.app));
    let mut tx = t.db().begin().await.unwrap();
    events::emit(&mut tx, t.org_id, "alert.matched", serde_json::json!({}))
        .await
        .unwrap();
    let bad = alert("ada@example.com", 1).header("X-Note", "one\r\nBcc: eve@example.com");
    let err = enqueue(&mut tx, t.org_id, &bad).await.unwrap_err();
    assert!(
        matches!(&err, EnqueueError::Invalid(m) if m.contains("X-Note")),
        "{err}"
    );
    let err = enqueue(&mut tx, t.org_id, &alert("not an address", 1))
        .await
        .unwrap_err();
    assert!(matches!(err, EnqueueError::Invalid(_)), "{err}");
    // The transaction is intact: the caller decides whether to commit.
    tx.commit().await.unwrap();
    assert_eq!(
        events::list_for_org(t.db(), t.org_id).await.unwrap().len(),
        1
    );
    assert!(store::list(t.db(), t.org_id, 10).await.unwrap().is_empty());

    let id = mail::enqueue_now(t.db(), t.org_id, &alert("ada@example.com", 1))
        .await
        .unwrap();
    assert_eq!(drain(&t.app).await, 0);
    assert_eq!(stored(&t, id).await.status, Status::Queued);
    assert_eq!(metric(&t, "jobboard_mail_queued").await, 1.0);
}

async fn temporary_refusals_are_retried_on_schedule(b: Backend) {
    let sink = SmtpSink::start().await;
    let t = TestApp::spawn_with(b, mail_to(&sink, &[60, 300])).await;
    // Greylisted twice at RCPT, then accepted; the other always refused at the end of DATA.
    sink.refuse("ada@example.com", 451, Some(2));
    sink.refuse_at(Stage::DataEnd, "bob@example.com", 452, None);
    let ada = mail::enqueue_now(t.db(), t.org_id, &alert("ada@example.com", 1))
        .await
        .unwrap();
    let bob = mail::enqueue_now(t.db(), t.org_id, &alert("bob@example.com", 2))
        .await
        .unwrap();

    let start = Ts::now();
    assert_eq!(drain(&t.app).await, 2);
    for id in [ada, bob] {
        let m = stored(&t, id).await;
        assert_eq!((m.status, m.attempts), (Status::Queued, 1));
        let due = m.next_attempt_at.unwrap().micros() - start.micros();
        assert!((54_000_000..=70_000_000).contains(&due), "due in {due} us");
    }
    assert!(stored(&t, ada).await.last_error.unwrap().contains("451"));
    assert!(stored(&t, bob).await.last_error.unwrap().contains("452"));
    // Not due before its time.
    assert_eq!(drain(&t.app).await, 0);
    assert_eq!(drain_with(&t.app, Clock::at(in_seconds(50))).await, 0);
    // The second attempt, a minute later, is refused again; the next waits five minutes.
    let second = in_seconds(70);
    assert_eq!(drain_with(&t.app, Clock::at(second)).await, 2);
    let m = stored(&t, ada).await;
    assert_eq!((m.status, m.attempts), (Status::Queued, 2));
    let due = m.next_attempt_at.unwrap().micros() - second.micros();
    assert!(
        (270_000_000..=330_000_000).contains(&due),
        "due in {due} us"
    );
    assert!(sink.received().is_empty());
    // The third attempt gets through for Ada; Bob's retries are exhausted.
    assert_eq!(drain_with(&t.app, Clock::at(in_seconds(500))).await, 2);
    let got = sink.received();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].to, ["ada@example.com"]);
    assert_eq!(
        got[0].message_id(),
        stored(&t, ada).await.message_id.trim_matches(['<', '>'])
    );
    assert_eq!(sink.rcpt_attempts("ada@example.com"), 3);
    let m = stored(&t, ada).await;
    assert_eq!((m.status, m.attempts), (Status::Sent, 3));
    let m = stored(&t, bob).await;
    assert_eq!((m.status, m.attempts), (Status::Failed, 3));
    assert!(m.last_error.unwrap().contains("452"));
    assert_eq!(drain_with(&t.app, Clock::at(in_seconds(86_400))).await, 0);
    assert_eq!(metric(&t, "jobboard_mail_queued").await, 0.0);
    assert_eq!(metric(&t, "jobboard_mail_failed").await, 1.0);
}

async fn unreachable_server_is_retried_and_queued_mail_waits(b: Backend) {
    // A port nothing listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let t = TestApp::spawn_with(b, |c| {
        c.worker = false;
        c.scheduler = false;
        c.mail = with_smtp(
            &c.mail,
            &format!("smtp://{closed}"),
            vec![Duration::from_secs(60)],
        );
    })
    .await;
    let id = mail::enqueue_now(t.db(), t.org_id, &alert("ada@example.com", 1))
        .await
        .unwrap();
    assert_eq!(drain(&t.app).await, 1);
    let m = stored(&t, id).await;
    assert_eq!((m.status, m.attempts), (Status::Queued, 1));
    assert!(m.last_error.is_some());
    // A node with a working server sends it once it is due.
    let sink = SmtpSink::start().await;
    let mut config = Config::with_database(&t.database_url);
    config.mail = with_smtp(&config.mail, &sink.url(), vec![Duration::from_secs(60)]);
    let node = App::start(config).await.unwrap();
    assert_eq!(drain(&node).await, 0);
    assert_eq!(drain_with(&node, Clock::at(in_seconds(120))).await, 1);
    assert_eq!(sink.received().len(), 1);
    let m = stored(&t, id).await;
    assert_eq!((m.status, m.attempts), (Status::Sent, 2));
}

async fn permanent_refusals_fail_without_retry(b: Backend) {
    let sink = SmtpSink::start().await;
    let t = TestApp::spawn_with(b, mail_to(&sink, &[60, 300])).await;
    sink.refuse("gone@example.com", 550, None);
    sink.refuse_at(Stage::DataEnd, "spam@example.com", 554, None);
    let gone = mail::enqueue_now(t.db(), t.org_id, &alert("gone@example.com", 1))
        .await
        .unwrap();
    let spam = mail::enqueue_now(t.db(), t.org_id, &alert("spam@example.com", 1))
        .await
        .unwrap();
    let fine = mail::enqueue_now(t.db(), t.org_id, &alert("ada@example.com", 1))
        .await
        .unwrap();
    assert_eq!(drain(&t.app).await, 3);
    for (id, code) in [(gone, "550"), (spam, "554")] {
        let m = stored(&t, id).await;
        assert_eq!((m.status, m.attempts), (Status::Failed, 1));
        assert!(m.next_attempt_at.is_none());
        assert!(m.last_error.unwrap().contains(code));
    }
    assert_eq!(stored(&t, fine).await.status, Status::Sent);
    // Never tried again.
    assert_eq!(drain_with(&t.app, Clock::at(in_seconds(86_400))).await, 0);
    assert_eq!(sink.rcpt_attempts("gone@example.com"), 1);
    assert_eq!(sink.rcpt_attempts("spam@example.com"), 1);
    let got = sink.received();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].to, ["ada@example.com"]);
    assert_eq!(metric(&t, "jobboard_mail_failed").await, 2.0);
    assert_eq!(metric(&t, "jobboard_mail_queued").await, 0.0);
}
