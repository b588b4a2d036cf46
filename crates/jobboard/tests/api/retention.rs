//! Retention: an organization that keeps applications for a limited time
//! (`keep_applications_days`) loses exactly those made longer ago than that, and nothing
//! younger; an organization that keeps them (the default, 0) loses none. One that keeps
//! the applications of an ended job for a limited time (`keep_applications_after_job_days`)
//! loses those of jobs that expired or were deleted longer ago, never those of live jobs.

use std::time::Duration;

use reqwest::Method;
use serde_json::json;

use crate::{backends, common::*};
use jobboard_domain::{Input, orgs, retention};

backends!(
    applications_go_after_the_days_their_organization_keeps_them,
    applications_go_the_days_after_their_job_ended,
);

/// Applies to `job` on the API with `key`: the application's id.
async fn apply(t: &TestApp, key: &str, job: jobboard_domain::JobId, name: &str) -> String {
    let r = t
        .req(Method::POST, &format!("/api/jobs/{job}/applications"))
        .key(key)
        .json(json!({"name": name, "email": "ada@example.com"}))
        .send()
        .await;
    r.expect(201);
    r.body["data"]["id"].as_str().unwrap().to_string()
}

async fn found(t: &TestApp, key: &str, id: &str) -> u16 {
    t.req(Method::GET, &format!("/api/applications/{id}"))
        .key(key)
        .send()
        .await
        .status
        .as_u16()
}

async fn applications_go_after_the_days_their_organization_keeps_them(b: Backend) {
    let t = TestApp::spawn(b).await;
    let (other, other_key) = t.new_org("Keeps everything", "*", 1000, 1000).await;
    let job = t.insert_job(t.org_id, "Baker").await;
    let other_job = t.insert_job(other, "Cook").await;
    let old = apply(&t, &t.key, job, "Old").await;
    let other_old = apply(&t, &other_key, other_job, "Other old").await;

    let body = |v: serde_json::Value| Input::new(v.as_object().unwrap().clone());
    let org = orgs::update(
        t.db(),
        t.org_id,
        body(json!({"keep_applications_days": 30})),
    )
    .await
    .unwrap();
    assert_eq!(org.keep_applications_days, 30);
    let refused = orgs::update(
        t.db(),
        t.org_id,
        body(json!({"keep_applications_days": 3651})),
    )
    .await
    .unwrap_err();
    assert!(
        format!("{refused:?}").contains("keep_applications_days"),
        "{refused:?}"
    );

    // A day short of the limit, nothing goes.
    t.app.clock.advance(Duration::from_secs(29 * 86_400));
    let younger = apply(&t, &t.key, job, "Younger").await;
    assert_eq!(
        retention::purge_applications(t.db(), t.app.clock.now())
            .await
            .unwrap(),
        0
    );
    assert_eq!(found(&t, &t.key, &old).await, 200);

    // Past it, the old application goes; the younger one and the other organization's
    // stay.
    t.app.clock.advance(Duration::from_secs(2 * 86_400));
    assert_eq!(
        retention::purge_applications(t.db(), t.app.clock.now())
            .await
            .unwrap(),
        1
    );
    assert_eq!(found(&t, &t.key, &old).await, 404);
    assert_eq!(found(&t, &t.key, &younger).await, 200);
    assert_eq!(found(&t, &other_key, &other_old).await, 200);
    let listed = t.get("/applications").await;
    let names: Vec<&str> = listed.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Younger"]);
    // Run again: nothing more.
    assert_eq!(
        retention::purge_applications(t.db(), t.app.clock.now())
            .await
            .unwrap(),
        0
    );
}

async fn applications_go_the_days_after_their_job_ended(b: Backend) {
    let t = TestApp::spawn(b).await;
    let (other, other_key) = t.new_org("Keeps everything", "*", 1000, 1000).await;
    let body = |v: serde_json::Value| Input::new(v.as_object().unwrap().clone());
    let org = orgs::update(
        t.db(),
        t.org_id,
        body(json!({"keep_applications_after_job_days": 10})),
    )
    .await
    .unwrap();
    assert_eq!(org.keep_applications_after_job_days, 10);
    let refused = orgs::update(
        t.db(),
        t.org_id,
        body(json!({"keep_applications_after_job_days": -1})),
    )
    .await
    .unwrap_err();
    assert!(format!("{refused:?}").contains("keep_applications_after_job_days"));

    let live = t.insert_job(t.org_id, "Live").await;
    let ended = t.insert_job(t.org_id, "Ended").await;
    let deleted = t.insert_job(t.org_id, "Deleted").await;
    let other_ended = t.insert_job(other, "Other ended").await;
    let to_live = apply(&t, &t.key, live, "To live").await;
    let to_ended = apply(&t, &t.key, ended, "To ended").await;
    let to_deleted = apply(&t, &t.key, deleted, "To deleted").await;
    let to_other = apply(&t, &other_key, other_ended, "To other").await;
    t.patch(&format!("/jobs/{ended}"), json!({"status": "expired"}))
        .await
        .expect(200);
    t.delete(&format!("/jobs/{deleted}")).await.expect(200);
    t.req(Method::PATCH, &format!("/api/jobs/{other_ended}"))
        .key(&other_key)
        .json(json!({"status": "expired"}))
        .send()
        .await
        .expect(200);

    // Nine days after the job ended, nothing goes.
    t.app.clock.advance(Duration::from_secs(9 * 86_400));
    let purge = || retention::purge_applications(t.db(), t.app.clock.now());
    assert_eq!(purge().await.unwrap(), 0);
    assert_eq!(found(&t, &t.key, &to_ended).await, 200);

    // Past ten, the applications of the expired and the deleted job go; the live job's
    // and the other organization's stay, and a new application to the live job too. The
    // node's purge step does it, and counts it in /metrics.
    t.app.clock.advance(Duration::from_secs(2 * 86_400));
    let fresh = apply(&t, &t.key, live, "Fresh").await;
    jobboard::scheduler::purge(&t.app, t.app.clock.now()).await;
    let metrics = t.metrics().await.text;
    assert!(
        metrics.contains("jobboard_retention_deleted_total{records=\"applications\"} 2\n"),
        "{metrics}"
    );
    assert!(metrics.contains("jobboard_retention_applications_deleted 2\n"));
    assert!(metrics.contains("jobboard_retention_deleted_total{records=\"audit_log\"} 0\n"));
    assert_eq!(found(&t, &t.key, &to_ended).await, 404);
    assert_eq!(found(&t, &t.key, &to_deleted).await, 404);
    assert_eq!(found(&t, &t.key, &to_live).await, 200);
    assert_eq!(found(&t, &t.key, &fresh).await, 200);
    assert_eq!(found(&t, &other_key, &to_other).await, 200);
    assert_eq!(purge().await.unwrap(), 0);
}
