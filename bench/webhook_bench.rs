//! Webhook delivery benchmark (run by bench/webhooks.sh).
//!
//! Starts the service in process on a fresh database with the delivery worker on, and a
//! receiver on 127.0.0.1 answering 200. Events are written to the outbox the way API writes
//! do (one transaction each); each carries its write time, so the receiver measures
//! write-to-arrival latency. Scenarios:
//!
//! - burst: 10 targets, E events at once (10 E deliveries): deliveries per second.
//! - paced: 1 target, events at a steady rate: write-to-arrival p50 / p99.
//! - stalled: the burst again with one of the ten targets answering after 10 s: the rate of
//!   the nine others.
//!
//! Usage: webhook_bench <sqlite|postgres> [events]  (PostgreSQL: JOBBOARD_TEST_POSTGRES_URL)

use std::{
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use axum::{body::Bytes, extract::State, http::Uri};
use jobboard::{
    config::Config,
    server::{self, App},
};
use jobboard_domain::{
    orgs,
    webhooks::{self, EventName, TargetType},
};
use jobboard_store::{Ts, events};
use serde_json::{Value, json};

#[derive(Default)]
struct Arrivals {
    /// (path, written at, arrived at), microseconds.
    seen: Mutex<Vec<(String, i64, i64)>>,
    notify: tokio::sync::Notify,
}

async fn receive(State(a): State<Arc<Arrivals>>, uri: Uri, body: Bytes) -> &'static str {
    let now = Ts::now().micros();
    let v: Value = serde_json::from_slice(&body).unwrap_or_default();
    let sent = v["data"]["t"].as_i64().unwrap_or(now);
    let path = uri.path().to_string();
    let slow = path == "/slow";
    a.seen.lock().unwrap().push((path, sent, now));
    a.notify.notify_waiters();
    if slow {
        tokio::time::sleep(Duration::from_secs(10)).await;
    }
    "ok"
}

async fn receiver() -> (String, Arc<Arrivals>) {
    let a = Arc::new(Arrivals::default());
    let app = axum::Router::new().fallback(receive).with_state(a.clone());
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", l.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(l, app).await });
    (base, a)
}

async fn fresh_url(backend: &str) -> String {
    let name = format!("jbbench_{}", uuid::Uuid::now_v7().simple());
    if backend == "postgres" {
        let admin = std::env::var("JOBBOARD_TEST_POSTGRES_URL")
            .expect("JOBBOARD_TEST_POSTGRES_URL for the PostgreSQL run");
        let pool = sqlx::PgPool::connect(&admin).await.unwrap();
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .execute(&pool)
            .await
            .unwrap();
        pool.close().await;
        format!("{}/{name}", admin.rsplit_once('/').unwrap().0)
    } else {
        let p = std::env::temp_dir().join(format!("{name}.db"));
        format!("sqlite://{}", p.display())
    }
}

fn pct(sorted: &[i64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i] as f64 / 1000.0
}

struct Run {
    rate: f64,
    p50: f64,
    p99: f64,
    count: usize,
}

/// Runs one scenario on a fresh database: `targets` paths, `events` events written
/// `pace` apart (zero: as fast as possible); waits for every delivery to a path other
/// than `/slow`.
async fn scenario(backend: &str, targets: &[&str], events_n: usize, pace: Duration) -> Run {
    let url = fresh_url(backend).await;
    let mut config = Config::with_database(&url);
    config.scheduler = false;
    config.webhooks.allow_private_targets = true;
    let app = App::start(config).await.unwrap();
    let org = orgs::create(&app.db, "bench").await.unwrap().id;
    let (base, arrivals) = receiver().await;
    for t in targets {
        webhooks::upsert(
            &app.db,
            org,
            EventName::All,
            TargetType::Webhook,
            &format!("{base}{t}"),
            Some("bench-secret-0123456789"),
        )
        .await
        .unwrap();
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let running = server::spawn(app.clone(), listener).unwrap();
    let fast = targets.iter().filter(|t| **t != "/slow").count();
    let expected = fast * events_n;
    let start = Instant::now();
    for i in 0..events_n {
        let mut tx = app.db.begin().await.unwrap();
        events::emit(
            &mut tx,
            org,
            "job.created",
            json!({"n": i, "t": Ts::now().micros(), "title": "Benchmark job", "company_name": "Acme", "status": "active", "location": null}),
        )
        .await
        .unwrap();
        tx.commit().await.unwrap();
        if !pace.is_zero() {
            tokio::time::sleep(pace).await;
        }
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    loop {
        let n = arrivals.notify.notified();
        tokio::pin!(n);
        n.as_mut().enable();
        let got = arrivals
            .seen
            .lock()
            .unwrap()
            .iter()
            .filter(|s| s.0 != "/slow")
            .count();
        if got >= expected || tokio::time::timeout_at(deadline, n).await.is_err() {
            break;
        }
    }
    let elapsed = start.elapsed();
    let seen: Vec<(String, i64, i64)> = arrivals.seen.lock().unwrap().clone();
    let fast_seen: Vec<&(String, i64, i64)> = seen.iter().filter(|s| s.0 != "/slow").collect();
    let mut lat: Vec<i64> = fast_seen.iter().map(|s| s.2 - s.1).collect();
    lat.sort();
    let first = fast_seen.iter().map(|s| s.1).min().unwrap_or(0);
    let last = fast_seen.iter().map(|s| s.2).max().unwrap_or(0);
    let span = ((last - first) as f64 / 1e6).max(1e-6);
    let _ = elapsed;
    let _ = running.shutdown().await;
    app.db.close().await;
    if let Some(p) = url.strip_prefix("sqlite://") {
        for s in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{p}{s}"));
        }
    }
    Run {
        rate: fast_seen.len() as f64 / span,
        p50: pct(&lat, 0.5),
        p99: pct(&lat, 0.99),
        count: fast_seen.len(),
    }
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let backend = args.next().unwrap_or_else(|| "sqlite".into());
    let events_n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(300);
    let ten: Vec<String> = (0..10).map(|i| format!("/t{i}")).collect();
    let ten: Vec<&str> = ten.iter().map(String::as_str).collect();
    let mut stalled = ten.clone();
    stalled[0] = "/slow";

    let burst = scenario(&backend, &ten, events_n, Duration::ZERO).await;
    let paced = scenario(&backend, &["/t0"], 200, Duration::from_millis(10)).await;
    let stall = scenario(&backend, &stalled, events_n, Duration::ZERO).await;
    let nine_share = burst.rate * 0.9;
    println!(
        "| {backend} | burst, 10 targets, {events_n} events | {} | {:.0} | {:.1} | {:.1} |",
        burst.count, burst.rate, burst.p50, burst.p99
    );
    println!(
        "| {backend} | paced, 1 target, 100 events/s | {} | {:.0} | {:.1} | {:.1} |",
        paced.count, paced.rate, paced.p50, paced.p99
    );
    println!(
        "| {backend} | burst, 1 of 10 targets answers after 10 s (rate of the other 9) | {} | {:.0} ({:+.0}% vs 9/10 of burst) | {:.1} | {:.1} |",
        stall.count,
        stall.rate,
        (stall.rate / nine_share - 1.0) * 100.0,
        stall.p50,
        stall.p99
    );
}
