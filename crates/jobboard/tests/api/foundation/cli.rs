//! The command line: managing organizations and keys, and a first start that creates a key
//! and stops gracefully.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use crate::{backends, common::*};

backends!(
    cli_manages_orgs_and_keys,
    first_start_creates_a_key_and_stops_gracefully,
);

fn run_ok(args: &[&str], db: &str) -> String {
    let (ok, out, err) = run_cli(args, db);
    assert!(ok, "{args:?} failed: {err}");
    out
}

fn last_line(s: &str) -> String {
    s.trim_end().lines().last().unwrap_or("").to_string()
}

async fn cli_manages_orgs_and_keys(b: Backend) {
    let (db, path) = fresh_database(b).await;
    run_ok(&["migrate"], &db);
    let org: i64 = last_line(&run_ok(&["orgs", "create", "--name", "Acme Jobs"], &db))
        .parse()
        .unwrap();
    assert!(run_ok(&["orgs", "list"], &db).contains("Acme Jobs"));
    let out = run_ok(
        &[
            "keys",
            "create",
            "--org",
            &org.to_string(),
            "--name",
            "ats",
            "--scopes",
            "jobs:read",
            "--read-limit",
            "3",
        ],
        &db,
    );
    let key = last_line(&out);
    assert!(key.starts_with("jb_") && key.len() >= 35, "{key}");
    let listed = run_ok(&["keys", "list", "--org", &org.to_string()], &db);
    assert!(
        listed.contains(&key[..11]) && !listed.contains(&key),
        "list shows the prefix only: {listed}"
    );
    assert!(listed.contains("read 3/min"));
    // The key works against a server on the same database, with its scope and limit.
    let mut config = jobboard::config::Config::with_database(&db);
    config.listen = "127.0.0.1:0".parse().unwrap();
    let app = jobboard::server::App::start(config).await.unwrap();
    let running = jobboard::server::spawn(
        app,
        tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap(),
    )
    .unwrap();
    let client = {
        jobboard::init_tls();
        reqwest::Client::builder().no_proxy().build().unwrap()
    };
    let url = format!("http://{}/api/categories", running.addr);
    let get = |k: String| {
        let (client, url) = (client.clone(), url.clone());
        async move {
            client
                .get(url)
                .header("x-api-key", k)
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        }
    };
    assert_eq!(get(key.clone()).await, 200);
    run_ok(&["keys", "update", &key[..11], "--read-limit", "1"], &db);
    // Limits and scopes are read per request: the new limit holds at once.
    assert_eq!(get(key.clone()).await, 429);
    let revoked = run_ok(&["keys", "revoke", &key[..11]], &db);
    assert!(revoked.contains("Revoked"));
    assert_eq!(get(key.clone()).await, 401);
    running.shutdown().await.unwrap();
    // Bad input is refused with a message and a failing exit code.
    let out = bin()
        .args(["--database", &db, "keys", "create", "--org", "999"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not exist"));
    let out = bin()
        .args([
            "--database",
            &db,
            "keys",
            "create",
            "--org",
            &org.to_string(),
            "--scopes",
            "jobs:admin",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    if let Some(p) = path {
        let _ = std::fs::remove_file(p);
    }
}

async fn first_start_creates_a_key_and_stops_gracefully(b: Backend) {
    let (db, path) = fresh_database(b).await;
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut child = bin()
        .args([
            "--database",
            &db,
            "serve",
            "--listen",
            &format!("127.0.0.1:{port}"),
        ])
        .env("JOBBOARD_METRICS_TOKEN", METRICS_TOKEN)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    assert!(first.contains("organization 1"), "{first}");
    let key = lines.next().unwrap().unwrap();
    assert!(key.starts_with("jb_"));
    // Beside it, the one-time link that creates the first dashboard user.
    let said = lines.next().unwrap().unwrap();
    assert!(said.contains("dashboard user"), "{said}");
    let link = lines.next().unwrap().unwrap();
    let prefix = format!("http://127.0.0.1:{port}/dashboard/setup/");
    assert!(
        link.starts_with(&prefix) && link.len() > prefix.len() + 40,
        "{link}"
    );
    let client = {
        jobboard::init_tls();
        reqwest::Client::builder().no_proxy().build().unwrap()
    };
    let url = format!("http://127.0.0.1:{port}/api/categories");
    let mut status = 0;
    for _ in 0..200 {
        match client.get(&url).header("x-api-key", &key).send().await {
            Ok(r) => {
                status = r.status().as_u16();
                break;
            }
            Err(_) => tokio::time::sleep(std::time::Duration::from_millis(25)).await,
        }
    }
    assert_eq!(status, 200);
    // The allocator's figures, where the binary's allocator gives them (jemalloc).
    let metrics = client
        .get(format!("http://127.0.0.1:{port}/metrics"))
        .bearer_auth(METRICS_TOKEN)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let (allocated, resident) = (
        gauge(&metrics, "jobboard_allocator_allocated_bytes"),
        gauge(&metrics, "jobboard_allocator_resident_bytes"),
    );
    if cfg!(feature = "jemalloc") {
        assert!(
            allocated > 1e6 && resident >= allocated,
            "allocated {allocated}, resident {resident}"
        );
    } else {
        assert!(allocated.is_nan() && resident.is_nan(), "{metrics}");
    }
    let setup = client
        .get(&link)
        .header("accept", "text/html")
        .send()
        .await
        .unwrap();
    assert_eq!(setup.status(), 200);
    assert!(setup.text().await.unwrap().contains("name=\"password\""));
    // SIGTERM: a graceful exit with status 0.
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let exit = child.wait().unwrap();
    assert!(exit.success(), "{exit:?}");
    // A second start does not create another key.
    let out = bin()
        .args(["--database", &db, "serve", "--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = out.id();
    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    let output = out.wait_with_output().unwrap();
    assert!(!String::from_utf8_lossy(&output.stdout).contains("jb_"));
    if let Some(p) = path {
        let _ = std::fs::remove_file(p);
    }
}
