//! Tenant isolation: a session of organization A tries every page and action with
//! organization B's ids. Each is answered 404, like a missing record, and nothing of B
//! changes.

use super::*;
use crate::backends;

backends!(a_session_never_reaches_another_organization);

async fn a_session_never_reaches_another_organization(b: Backend) {
    let t = TestApp::spawn(b).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    let (org_b, key_b) = t.new_org("Other org", "*", 1000, 1000).await;
    let user_b = add_user(&t, org_b, "bob@example.com").await;
    let job_b = api_job(&t, &key_b, "Secret role").await;
    let b_keys = jobboard_domain::keys::list(t.db(), org_b).await.unwrap();
    let key_b_id = b_keys[0].id.to_string();
    let key_b_prefix = b_keys[0].prefix.clone();
    let events_before = event_types(&t, org_b).await;

    let ada = Browser::signed_in(&t, "ada@example.com").await;
    // Pages with B's ids are not found.
    for path in [
        format!("/dashboard/jobs/{job_b}"),
        format!("/dashboard/jobs/{job_b}/delete"),
    ] {
        let r = ada.get(&path).await;
        r.expect(404);
        assert!(!r.text.contains("Secret role"), "{path}");
    }
    // Lists never show B's records.
    for (path, secret) in [
        ("/dashboard/jobs?status=all", "Secret role"),
        ("/dashboard/jobs?status=pending", "Secret role"),
        ("/dashboard/jobs?status=all&search=secret", "Secret role"),
        ("/dashboard/settings/api-keys", key_b_prefix.as_str()),
        ("/dashboard/settings/staff", "bob@example.com"),
        ("/dashboard/settings/board", "Other org"),
        ("/dashboard", "Other org"),
    ] {
        let r = ada.get(path).await;
        r.expect(200);
        assert!(!r.text.contains(secret), "{path} shows {secret}");
    }
    // Actions with B's ids are not found.
    let token = ada.csrf("/dashboard/jobs").await;
    let t_ = token.as_str();
    for status in ["active", "draft", "expired"] {
        ada.post(
            &format!("/dashboard/jobs/{job_b}/status"),
            &[("status", status), ("csrf", t_)],
        )
        .await
        .expect(404);
    }
    ada.post(
        &format!("/dashboard/jobs/{job_b}"),
        &[
            ("title", "Taken over"),
            ("company_name", "Evil"),
            ("description", "x"),
            ("status", "active"),
            ("csrf", t_),
        ],
    )
    .await
    .expect(404);
    ada.post(&format!("/dashboard/jobs/{job_b}/delete"), &[("csrf", t_)])
        .await
        .expect(404);
    ada.post(
        &format!("/dashboard/settings/api-keys/{key_b_id}/revoke"),
        &[("csrf", t_)],
    )
    .await
    .expect(404);
    ada.post(
        &format!("/dashboard/settings/staff/{user_b}/remove"),
        &[("csrf", t_)],
    )
    .await
    .expect(404);
    // A's own forms only ever change A.
    let saved = ada
        .post(
            "/dashboard/settings/board",
            &[("name", "Renamed A"), ("csrf", t_)],
        )
        .await;
    assert_eq!(
        redirect(&saved),
        "/dashboard/settings/board?notice=board_saved"
    );
    let created = ada
        .post(
            "/dashboard/jobs/new",
            &[
                ("title", "A's job"),
                ("company_name", "A"),
                ("description", "Work."),
                ("status", "pending"),
                ("csrf", t_),
            ],
        )
        .await;
    redirect(&created);

    // Nothing of B changed.
    let org = jobboard_domain::orgs::get(t.db(), org_b).await.unwrap();
    assert_eq!(org.name, "Other org");
    assert_eq!(
        jobboard_domain::orgs::get(t.db(), t.org_id)
            .await
            .unwrap()
            .name,
        "Renamed A"
    );
    let r = t
        .req(Method::GET, &format!("/jobs/{job_b}"))
        .key(&key_b)
        .send()
        .await;
    r.expect(200);
    assert_eq!(r.body["data"]["status"], "pending");
    assert_eq!(r.body["data"]["title"], "Secret role");
    assert_eq!(event_types(&t, org_b).await, events_before);
    t.req(Method::GET, "/jobs")
        .key(&key_b)
        .send()
        .await
        .expect(200);
    let users_b = jobboard_domain::users::list(t.db(), org_b).await.unwrap();
    assert_eq!(users_b.len(), 1);
    redirect(&Browser::new(&t).sign_in("bob@example.com", PASSWORD).await);
    // And B's job is not A's: A's API key cannot see it either.
    t.get(&format!("/jobs/{job_b}")).await.expect(404);
}
