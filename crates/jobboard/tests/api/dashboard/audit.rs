//! The audit log of staff actions: sign-in, an approval, a key created, a setting
//! changed and sign-out are recorded with who, which record and the client's address;
//! refused forms and failed sign-ins record nothing; the dashboard's page and
//! `GET /api/audit` (scope `admin`) show an organization its own entries only; entries
//! past their age are deleted, younger ones kept.

use std::time::Duration;

use jobboard_store::Ts;

use jobboard_domain::audit;
use serde_json::Value;

use super::*;
use crate::backends;

backends!(
    staff_actions_are_recorded_with_who_what_and_where,
    refused_forms_and_failed_sign_ins_record_nothing,
    each_organization_sees_its_own_entries,
    entries_past_their_age_are_deleted,
);

/// The organization's entries through the API, newest first.
async fn entries(t: &TestApp, key: &str, query: &str) -> Vec<Value> {
    let r = t
        .req(Method::GET, &format!("/audit{query}"))
        .key(key)
        .send()
        .await;
    r.expect(200);
    r.body["data"].as_array().unwrap().clone()
}

fn actions(rows: &[Value]) -> Vec<String> {
    rows.iter()
        .map(|e| e["action"].as_str().unwrap().to_string())
        .collect()
}

async fn staff_actions_are_recorded_with_who_what_and_where(b: Backend) {
    let t = TestApp::spawn(b).await;
    let user = add_user(&t, t.org_id, "ada@example.com").await;
    let id = api_job(&t, &t.key, "Pilot").await;
    let ada = Browser::signed_in(&t, "ada@example.com").await;
    let r = ada
        .submit(
            "/dashboard/jobs",
            &format!("/dashboard/jobs/{id}/status"),
            &[("status", "active"), ("back", "pending")],
        )
        .await;
    r.expect(303);
    ada.submit(
        "/dashboard/settings/api-keys",
        "/dashboard/settings/api-keys",
        &[
            ("name", "careers site"),
            ("scopes", "jobs:read"),
            ("read_limit", "7"),
            ("write_limit", "3"),
        ],
    )
    .await
    .expect(201);
    ada.submit("/dashboard", "/dashboard/logout", &[])
        .await
        .expect(303);

    let rows = entries(&t, &t.key, "").await;
    assert_eq!(
        actions(&rows),
        [
            "signed_out",
            "key.created",
            "job.status_changed",
            "signed_in"
        ]
    );
    for e in &rows {
        assert_eq!(e["actor_email"], "ada@example.com");
        assert_eq!(e["actor_user_id"], user.to_string());
        assert_eq!(e["ip"], "127.0.0.1");
        assert!(e["at"].is_string());
        assert!(e.get("org_id").is_none());
    }
    let approval = &rows[2];
    assert_eq!(approval["target"], id.as_str());
    assert_eq!(approval["detail"], "status=active");
    assert_eq!(rows[1]["detail"], "name=careers site");
    // Filters.
    assert_eq!(
        actions(&entries(&t, &t.key, "?action=signed_in").await),
        ["signed_in"]
    );
    assert_eq!(entries(&t, &t.key, "?actor=ADA@example.com").await.len(), 4);
    assert_eq!(entries(&t, &t.key, "?actor=bob@example.com").await.len(), 0);
    // The dashboard shows the same, newest first.
    let ada = Browser::signed_in(&t, "ada@example.com").await;
    let page = ada.get("/dashboard/settings/audit").await;
    page.expect(200);
    let doc = page.html();
    let shown: Vec<String> = doc
        .select(&sel("table.audit tbody tr td:nth-child(3)"))
        .map(|td| td.text().collect())
        .collect();
    assert_eq!(
        shown,
        [
            "signed_in",
            "signed_out",
            "key.created",
            "job.status_changed",
            "signed_in"
        ]
    );
    let filtered = ada
        .get("/dashboard/settings/audit?action=key.created")
        .await;
    assert_eq!(
        filtered.html().select(&sel("table.audit tbody tr")).count(),
        1
    );
    // A key without the admin scope cannot read it.
    let reader = t.new_key(t.org_id, "jobs:read", 100, 100).await;
    t.req(Method::GET, "/audit")
        .key(&reader)
        .send()
        .await
        .expect_error(403, "insufficient_scope");
}

async fn refused_forms_and_failed_sign_ins_record_nothing(b: Backend) {
    let t = TestApp::spawn(b).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    let id = api_job(&t, &t.key, "Pilot").await;
    let mallory = Browser::new(&t);
    mallory.sign_in("ada@example.com", "wrong password").await;
    let ada = Browser::signed_in(&t, "ada@example.com").await;
    // A forged form (bad token), one from another site, and one the job form refuses.
    ada.post(
        &format!("/dashboard/jobs/{id}/status"),
        &[("status", "active"), ("csrf", "forged")],
    )
    .await
    .expect(403);
    let token = ada.csrf("/dashboard/jobs").await;
    ada.post_from(
        &format!("/dashboard/jobs/{id}/status"),
        &[("status", "active"), ("csrf", &token)],
        Some("https://evil.example"),
    )
    .await
    .expect(403);
    ada.submit(
        "/dashboard/jobs/new",
        "/dashboard/jobs/new",
        &[("title", ""), ("company_name", "Acme")],
    )
    .await
    .expect(422);
    assert_eq!(actions(&entries(&t, &t.key, "").await), ["signed_in"]);
}

async fn each_organization_sees_its_own_entries(b: Backend) {
    let t = TestApp::spawn(b).await;
    let (other, other_key) = t.new_org("Other", "*", 1000, 1000).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    add_user(&t, other, "bob@example.com").await;
    Browser::signed_in(&t, "ada@example.com").await;
    let bob = Browser::signed_in(&t, "bob@example.com").await;
    let mine = entries(&t, &t.key, "").await;
    assert_eq!(mine.len(), 1);
    assert_eq!(mine[0]["actor_email"], "ada@example.com");
    let theirs = entries(&t, &other_key, "").await;
    assert_eq!(theirs.len(), 1);
    assert_eq!(theirs[0]["actor_email"], "bob@example.com");
    let page = bob.get("/dashboard/settings/audit").await;
    page.expect(200);
    assert!(!page.text.contains("ada@example.com"));
    assert!(page.text.contains("bob@example.com"));
}

async fn entries_past_their_age_are_deleted(b: Backend) {
    // The scheduler off: its own hourly pass (which runs at start) would prune first.
    let t = TestApp::spawn_with(b, |c| c.scheduler = false).await;
    let now = Ts::now();
    for (days, action) in [(400, "old"), (366, "older than a year"), (364, "young")] {
        audit::record(
            t.db(),
            &audit::NewEntry {
                org_id: t.org_id,
                actor_user_id: None,
                actor_email: "ada@example.com".into(),
                action: action.into(),
                target: None,
                detail: None,
                ip: None,
            },
            now.earlier_by(Duration::from_secs(days * 86_400)),
        )
        .await
        .unwrap();
    }
    let year = now.earlier_by(Duration::from_secs(365 * 86_400));
    assert_eq!(audit::prune(t.db(), year).await.unwrap(), 2);
    assert_eq!(actions(&entries(&t, &t.key, "").await), ["young"]);
    assert_eq!(audit::prune(t.db(), year).await.unwrap(), 0);
}
