//! Standard Webhooks: every `webhook` delivery carries `webhook-id`, `webhook-timestamp`
//! and, with a secret, `webhook-signature`, verified here by the reference Python library
//! (`standardwebhooks` from PyPI, which we did not write) given `whsec_` + base64 of the
//! secret. The library comes from the virtual environment `scripts/test-tools.sh` makes
//! (`JOBBOARD_VENV`); without it the test prints SKIPPED, and fails under CI.

use std::{io::Write, process::Command, time::Duration};

use base64::Engine;
use serde_json::json;

use crate::{backends, common::*, webhook_receiver::Receiver};

backends!(deliveries_verify_with_a_standard_webhooks_library);

const SECRET: &str = "a-secret-of-sixteen-or-more";

/// The Python of the test tools' environment, when it has the library.
fn python() -> Option<String> {
    let venv = std::env::var("JOBBOARD_VENV").unwrap_or_else(|_| "/var/tmp/jobboard-venv".into());
    let py = format!("{venv}/bin/python");
    let ok = Command::new(&py)
        .args(["-c", "import standardwebhooks"])
        .output()
        .is_ok_and(|o| o.status.success());
    ok.then_some(py)
}

/// Runs the library's `Webhook(secret).verify(body, headers)`; Ok(the payload's event) or
/// Err(the library's complaint).
fn verify(py: &str, secret: &str, body: &[u8], headers: &[(&str, &str)]) -> Result<String, String> {
    let script = r#"
import json, os, sys
from standardwebhooks.webhooks import Webhook
body = sys.stdin.buffer.read()
headers = json.loads(os.environ["HEADERS"])
try:
    payload = Webhook(os.environ["SECRET"]).verify(body, headers)
except Exception as e:
    print(type(e).__name__, e)
    sys.exit(1)
print(payload["event"])
"#;
    let mut child = Command::new(py)
        .args(["-c", script])
        .env("SECRET", secret)
        .env(
            "HEADERS",
            serde_json::to_string(
                &headers
                    .iter()
                    .copied()
                    .collect::<std::collections::HashMap<_, _>>(),
            )
            .unwrap(),
        )
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(body).unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if out.status.success() {
        Ok(text)
    } else {
        Err(text)
    }
}

async fn deliveries_verify_with_a_standard_webhooks_library(b: Backend) {
    let Some(py) = python() else {
        let msg = "SKIPPED: the standardwebhooks library is not installed (scripts/test-tools.sh)";
        if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
            panic!("{msg}");
        }
        eprintln!("{msg}");
        return;
    };
    let t = TestApp::spawn(b).await;
    let rx = Receiver::start().await;
    t.post(
        "/webhooks",
        json!({"event": "job.created", "target_type": "webhook", "target_url": rx.url("/signed"), "secret": SECRET}),
    )
    .await
    .expect(201);
    t.post(
        "/webhooks",
        json!({"event": "job.created", "target_type": "webhook", "target_url": rx.url("/plain")}),
    )
    .await
    .expect(201);
    t.post(
        "/jobs",
        json!({"title": "Signed", "company_name": "Acme", "description": "x", "status": "active"}),
    )
    .await
    .expect(201);
    assert!(
        rx.wait_until(Duration::from_secs(20), |h| h.len() >= 2)
            .await,
        "no deliveries"
    );
    let hit = rx
        .hits("/signed")
        .into_iter()
        .next()
        .expect("a signed delivery");
    let id = hit.header("webhook-id").unwrap().to_string();
    assert_eq!(Some(id.as_str()), hit.header("x-service-delivery"));
    let ts = hit.header("webhook-timestamp").unwrap().to_string();
    let age = chrono::Utc::now().timestamp() - ts.parse::<i64>().unwrap();
    assert!((0..60).contains(&age), "timestamp {ts}");
    let sig = hit.header("webhook-signature").unwrap().to_string();
    assert!(sig.starts_with("v1,"), "{sig}");
    let whsec = format!(
        "whsec_{}",
        base64::engine::general_purpose::STANDARD.encode(SECRET)
    );
    let headers = [
        ("webhook-id", id.as_str()),
        ("webhook-timestamp", ts.as_str()),
        ("webhook-signature", sig.as_str()),
    ];
    assert_eq!(
        verify(&py, &whsec, &hit.body, &headers),
        Ok("job.created".into())
    );
    // The library refuses a changed body, another secret, and another id.
    let mut changed = hit.body.clone();
    changed.push(b' ');
    assert!(verify(&py, &whsec, &changed, &headers).is_err());
    let other = format!(
        "whsec_{}",
        base64::engine::general_purpose::STANDARD.encode("another-secret-entirely")
    );
    assert!(verify(&py, &other, &hit.body, &headers).is_err());
    let forged = [headers[0], headers[1], ("webhook-signature", "v1,AAAA")];
    assert!(verify(&py, &whsec, &hit.body, &forged).is_err());
    // Without a secret: the id and timestamp, no signature.
    let plain = rx
        .hits("/plain")
        .into_iter()
        .next()
        .expect("a plain delivery");
    assert!(plain.header("webhook-id").is_some());
    assert!(plain.header("webhook-timestamp").is_some());
    assert!(plain.header("webhook-signature").is_none());
}
