//! Outgoing mail across processes and nodes, through a real SMTP server on 127.0.0.1: a
//! node killed in the middle of its hand-overs loses no mail, several nodes (or claimers)
//! send each mail once, and the SMTP password never shows in errors or logs.

use std::{collections::HashSet, process::Stdio, time::Duration};

use jobboard::{
    config::Config,
    delivery::mail::{self, drain, drain_with},
    server::{self, App},
};
use jobboard_core::Clock;
use jobboard_domain::mail::{Status, enqueue, store};

use crate::{
    backends,
    common::*,
    mail::{FROM, alert, in_seconds, stored, with_smtp},
    smtp_sink::SmtpSink,
};

backends!(
    abrupt_stop_loses_no_mail,
    nodes_send_each_mail_once,
    the_smtp_password_never_shows,
);

async fn abrupt_stop_loses_no_mail(b: Backend) {
    const N: usize = 6;
    let sink = SmtpSink::start().await;
    // This process only queues: no SMTP server, no worker.
    let t = TestApp::spawn_with(b, |c| {
        c.worker = false;
        c.scheduler = false;
    })
    .await;
    let mut ids = Vec::new();
    for i in 0..N {
        let msg = alert(&format!("user{i}@example.com"), i);
        ids.push(mail::enqueue_now(t.db(), t.org_id, &msg).await.unwrap());
    }
    // A node sends them, but the server holds its acceptance: two are in the middle of
    // their hand-over, four still queued, when the node is killed (SIGKILL).
    sink.hold();
    let mut node = bin()
        .args([
            "--database",
            &t.database_url,
            "serve",
            "--listen",
            "127.0.0.1:0",
        ])
        .args(["--no-scheduler"])
        .env("JOBBOARD_SMTP_URL", sink.url())
        .env("JOBBOARD_MAIL_FROM", FROM)
        .env("JOBBOARD_MAIL_CONCURRENCY", "2")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let busy = sink
        .wait_until(Duration::from_secs(30), |s| s.held() == 2)
        .await;
    node.kill().unwrap();
    node.wait().unwrap();
    assert!(busy, "the node started two hand-overs");
    assert!(
        sink.wait_until(Duration::from_secs(10), |s| s.held() == 0)
            .await,
        "the server saw the killed node's connections close"
    );
    sink.release();
    assert!(sink.received().is_empty());

    // A new node on the same database, once the dead node's leases have run out.
    let mut config = Config::with_database(&t.database_url);
    config.mail = with_smtp(&config.mail, &sink.url(), vec![Duration::from_secs(60)]);
    let app = App::start(config).await.unwrap();
    assert_eq!(drain_with(&app, Clock::at(in_seconds(3600))).await, N);
    let got = sink.received();
    assert_eq!(got.len(), N);
    let mut expected = HashSet::new();
    for id in &ids {
        let m = stored(&t, *id).await;
        assert_eq!(m.status, Status::Sent);
        expected.insert(m.message_id.trim_matches(['<', '>']).to_string());
    }
    let arrived: HashSet<String> = got.iter().map(|m| m.message_id()).collect();
    assert_eq!(arrived, expected, "each mail arrived once");
}

async fn nodes_send_each_mail_once(b: Backend) {
    const N: usize = 100;
    let sink = SmtpSink::start().await;
    let url = sink.url();
    // Workers running in the background, on two nodes where the backend allows it.
    let t = TestApp::spawn_with(b, |c| {
        c.scheduler = false;
        c.mail = with_smtp(&c.mail, &url, vec![Duration::from_secs(60)]);
        // Small claims, so that claimers collide on the same rows.
        c.mail.concurrency = 2;
    })
    .await;
    let second = match b {
        Backend::Postgres => {
            let mut config = Config::with_database(&t.database_url);
            config.scheduler = false;
            config.mail = with_smtp(&config.mail, &url, vec![Duration::from_secs(60)]);
            config.mail.concurrency = 2;
            let app = App::start(config).await.unwrap();
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            Some((app.clone(), server::spawn(app, listener).unwrap()))
        }
        // SQLite serves one node: its worker competes with drains instead.
        Backend::Sqlite => None,
    };
    let mut tx = t.db().begin().await.unwrap();
    let mut ids = Vec::new();
    for i in 0..N {
        let msg = alert(&format!("user{i}@example.com"), i);
        ids.push(enqueue(&mut tx, t.org_id, &msg).await.unwrap());
    }
    tx.commit().await.unwrap();
    // Explicit drains, three per node, compete with the background workers: every
    // claimer goes for the same oldest mails at once.
    let other = second.as_ref().map_or(t.app.clone(), |(a, _)| a.clone());
    let drains = [&t.app, &other, &t.app, &other, &t.app, &other].map(|app| {
        let app = app.clone();
        tokio::spawn(async move { drain(&app).await })
    });
    let mut tried = 0;
    for d in drains {
        tried += d.await.unwrap();
    }
    assert!(tried <= N);
    assert!(
        sink.wait_until(Duration::from_secs(30), |s| s.received().len() >= N)
            .await,
        "every mail arrived"
    );
    // Every mail is marked sent right after its acceptance.
    let db = t.db().clone();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while store::counts(&db).await.unwrap() != (0, 0) {
        assert!(tokio::time::Instant::now() < deadline, "mails left queued");
        tokio::task::yield_now().await;
    }
    for id in &ids {
        let m = stored(&t, *id).await;
        assert_eq!((m.status, m.attempts), (Status::Sent, 1));
    }
    // Stop every worker gracefully, so no hand-over is still under way, then count.
    if let Some((_, running)) = second {
        running.shutdown().await.unwrap();
    }
    let expected: HashSet<String> = store::list(&db, t.org_id, 1000)
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.message_id.trim_matches(['<', '>']).to_string())
        .collect();
    t.stop().await;
    let got = sink.received();
    let arrived: HashSet<String> = got.iter().map(|m| m.message_id()).collect();
    assert_eq!((got.len(), arrived.len()), (N, N), "each mail arrived once");
    assert_eq!(arrived, expected);
}

async fn the_smtp_password_never_shows(b: Backend) {
    let out = bin().arg("config").output().unwrap();
    let shown = String::from_utf8(out.stdout).unwrap();
    for setting in [
        "[mail]",
        "JOBBOARD_SMTP_URL",
        "JOBBOARD_MAIL_FROM",
        "smtp_url = \"\"",
    ] {
        assert!(
            shown.contains(setting),
            "{setting} missing from `jobboard config`"
        );
    }
    // A URL lettre cannot use is refused at start-up, named with its password hidden.
    let out = bin()
        .args([
            "--database",
            "sqlite::memory:",
            "serve",
            "--listen",
            "127.0.0.1:0",
        ])
        .env(
            "JOBBOARD_SMTP_URL",
            "smtp://jobs:hunter2@127.0.0.1:1?tls=bogus",
        )
        .env("JOBBOARD_MAIL_FROM", FROM)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("smtp://jobs:***@127.0.0.1:1"), "{err}");
    assert!(!err.contains("hunter2"), "{err}");

    // A node logs its SMTP server and a failed hand-over, at debug level, without it.
    let t = TestApp::spawn_with(b, |c| {
        c.worker = false;
        c.scheduler = false;
    })
    .await;
    mail::enqueue_now(t.db(), t.org_id, &alert("ada@example.com", 1))
        .await
        .unwrap();
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let mut node = bin()
        .args([
            "--database",
            &t.database_url,
            "serve",
            "--listen",
            "127.0.0.1:0",
        ])
        .args(["--no-scheduler"])
        .env(
            "JOBBOARD_SMTP_URL",
            format!("smtps://jobs:hunter2@{closed}"),
        )
        .env("JOBBOARD_MAIL_FROM", FROM)
        .env("RUST_LOG", "debug")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (lines_tx, mut lines) = tokio::sync::mpsc::unbounded_channel();
    let stderr = node.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        use std::io::BufRead;
        let mut all = String::new();
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            let _ = lines_tx.send(line.clone());
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let failed_once = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = lines.recv().await {
            if line.contains("mail hand-over failed") {
                return true;
            }
        }
        false
    })
    .await;
    std::process::Command::new("kill")
        .args(["-TERM", &node.id().to_string()])
        .status()
        .unwrap();
    node.wait().unwrap();
    let logs = reader.join().unwrap();
    assert_eq!(failed_once, Ok(true), "{logs}");
    assert!(logs.contains("mail worker started"), "{logs}");
    assert!(
        logs.contains(&format!("smtps://jobs:***@{closed}")),
        "{logs}"
    );
    assert!(!logs.contains("hunter2"), "{logs}");
}
