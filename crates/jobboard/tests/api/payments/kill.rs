//! The server killed with SIGKILL while the processor's events stream in (some between
//! their arrival and their answer), then started again: the processor sends what was
//! not answered again, and every paid session is fulfilled exactly once.

use std::{
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use jobboard::delivery::processor::{Checkout, Line, Processor as Client};
use jobboard_domain::{OrgId, orgs};
use jobboard_store::Db;

use super::*;
use crate::backends;

backends!(sigkill_under_paid_sessions_fulfils_each_once);

/// Sessions paid in the stream.
const SESSIONS: usize = 40;

/// The real binary serving `db_url` on `port` (the processor's endpoint names it, so a
/// restart keeps it).
fn serve(db_url: &str, port: u16) -> Child {
    Command::new(env!("CARGO_BIN_EXE_jobboard"))
        .env_remove("DATABASE_URL")
        .env_remove("JOBBOARD_CONFIG")
        .env("RUST_LOG", "warn")
        .args(["--database", db_url, "serve", "--listen"])
        .arg(format!("127.0.0.1:{port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

async fn wait_healthy(port: u16) {
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if let Ok(r) = client
            .get(format!("http://127.0.0.1:{port}/healthz"))
            .send()
            .await
            && r.status() == 200
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the server did not start");
}

async fn count(db: &Db, sql: &'static str) -> i64 {
    jobboard_store::dispatch!(db.reader(), p => {
        sqlx::query_scalar::<_, i64>(sql).fetch_one(p).await.unwrap()
    })
}

async fn sigkill_under_paid_sessions_fulfils_each_once(b: Backend) {
    let test = "sigkill_under_paid_sessions_fulfils_each_once";
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let Some(p) = Processor::start(test, &format!("http://127.0.0.1:{port}/payments/webhook"))
    else {
        return;
    };
    let (db_url, path) = fresh_database(b).await;
    let mut server = serve(&db_url, port);
    wait_healthy(port).await;
    // The first start made organization 1, whose board answers 127.0.0.1.
    let db = Db::connect(&db_url, 4).await.unwrap();
    let org_id = OrgId(1);
    let account = payments::Account {
        api_url: p.base.clone(),
        secret_key: SECRET_KEY.into(),
        webhook_secret: WEBHOOK_SECRET.into(),
    };
    payments::set_account(&db, org_id, &account).await.unwrap();
    let Value::Object(price) =
        json!({"name": "Standard", "amount": 4900, "currency": "eur", "days": 30})
    else {
        unreachable!()
    };
    let price = payments::create_price(&db, org_id, Input::new(price))
        .await
        .unwrap();
    let Value::Object(paid) = json!({"paid_posts": "active"}) else {
        unreachable!()
    };
    orgs::update(&db, org_id, Input::new(paid)).await.unwrap();
    let org = orgs::get(&db, org_id).await.unwrap();
    // Orders with open sessions, as the post form leaves them.
    let client = Client::new().unwrap();
    let mut sessions = Vec::new();
    for i in 0..SESSIONS {
        let Value::Object(body) = json!({"title": format!("Paid job {i}"),
            "description": "Bake bread.", "company_name": "Crumbs"})
        else {
            unreachable!()
        };
        let (job, order, price) =
            payments::start_post(&db, &org, Some(price.id), Input::new(body), None)
                .await
                .unwrap();
        let checkout = Checkout {
            order: &order,
            line: Line::Priced {
                price: &price,
                title: &job.title,
            },
            success_url: format!(
                "http://127.0.0.1:{port}/post-a-job/thanks?session_id={{CHECKOUT_SESSION_ID}}"
            ),
            cancel_url: format!("http://127.0.0.1:{port}/"),
            customer_email: None,
        };
        let session = client.create_session(&account, &checkout).await.unwrap();
        payments::session_opened(&db, &order, &session)
            .await
            .unwrap();
        sessions.push(session.id);
    }
    // The payers pay, four at a time; the server dies once a quarter are fulfilled.
    let payers = tokio::spawn({
        let sessions = sessions.clone();
        let base = p.base.clone();
        async move {
            let http = reqwest::Client::builder().no_proxy().build().unwrap();
            for chunk in sessions.chunks(4) {
                let pays: Vec<_> = chunk
                    .iter()
                    .map(|s| {
                        let http = http.clone();
                        let url = format!("{base}/test/pay/{s}");
                        tokio::spawn(async move { http.post(url).send().await.unwrap().status() })
                    })
                    .collect();
                for pay in pays {
                    assert!(pay.await.unwrap().is_success());
                }
            }
        }
    });
    let fulfilled = "SELECT COUNT(*) FROM orders WHERE status = 'fulfilled'";
    let deadline = Instant::now() + Duration::from_secs(60);
    while count(&db, fulfilled).await < (SESSIONS / 4) as i64 {
        assert!(Instant::now() < deadline, "nothing was fulfilled");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    Command::new("kill")
        .args(["-KILL", &server.id().to_string()])
        .status()
        .unwrap();
    let _ = server.wait();
    payers.await.unwrap();
    let before_restart = count(&db, fulfilled).await;
    let waiting = p.pending().await;
    assert!(
        before_restart < SESSIONS as i64 && waiting > 0,
        "the kill came before the stream ended: {before_restart} fulfilled, {waiting} events waiting"
    );
    let mut server = serve(&db_url, port);
    wait_healthy(port).await;
    let deadline = Instant::now() + Duration::from_secs(120);
    while p.pending().await > 0 || count(&db, fulfilled).await < SESSIONS as i64 {
        assert!(
            Instant::now() < deadline,
            "{} of {SESSIONS} fulfilled, {} events waiting",
            count(&db, fulfilled).await,
            p.pending().await
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Every paid session once: one order, one payment, one event, one live job each.
    assert_eq!(count(&db, fulfilled).await, SESSIONS as i64);
    assert_eq!(
        count(&db, "SELECT COUNT(*) FROM payments").await,
        SESSIONS as i64
    );
    assert_eq!(
        count(
            &db,
            "SELECT COUNT(DISTINCT processor_session_id) FROM payments WHERE status = 'succeeded'"
        )
        .await,
        SESSIONS as i64
    );
    assert_eq!(
        count(
            &db,
            "SELECT COUNT(*) FROM events WHERE event_type = 'payment.received'"
        )
        .await,
        SESSIONS as i64
    );
    assert_eq!(
        count(&db, "SELECT COUNT(*) FROM jobs WHERE status = 'active'").await,
        SESSIONS as i64
    );
    let stored: Vec<String> = jobboard_store::dispatch!(db.reader(), pool => {
        sqlx::query_scalar("SELECT session_id FROM orders ORDER BY session_id")
            .fetch_all(pool)
            .await
            .unwrap()
    });
    let mut expected = sessions.clone();
    expected.sort();
    assert_eq!(stored, expected);
    Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status()
        .unwrap();
    assert!(server.wait().unwrap().success());
    db.close().await;
    if let Some(path) = path {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
    }
}
