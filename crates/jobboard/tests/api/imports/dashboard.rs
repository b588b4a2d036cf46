//! `/dashboard/imports`: staff add a source (a bad address refused beside its field), run
//! it now and read what the run did (created, refused with reasons, or why it failed),
//! and delete it (its jobs stay); another organization's staff reach none of it.

use std::time::{Duration, Instant};

use super::*;
use crate::{
    board::sel,
    dashboard::{Browser, add_user, csrf_of},
};

backends!(staff_manage_import_sources_in_the_dashboard);

/// Waits (with a deadline) until source `id` has run `runs` times since `after`.
async fn ran(t: &TestApp, id: uuid::Uuid, after: Option<jobboard_store::Ts>) -> Counts {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let s = imports::get(t.db(), Some(t.org_id), id).await.unwrap();
        if s.last_run_at.is_some() && s.last_run_at != after {
            return serde_json::from_value(s.last_result.unwrap().0).unwrap();
        }
        assert!(Instant::now() < deadline, "the run did not finish");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn staff_manage_import_sources_in_the_dashboard(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.scheduler = false).await;
    let feeds = Feeds::start().await;
    let mut body = greenhouse(&[(1, "Baker"), (2, "Cook")], None);
    // A job the board refuses: no title.
    body = body.replacen("\"title\":\"Cook\"", "\"title\":\"\"", 1);
    feeds.put("crumbs", body, None);
    add_user(&t, t.org_id, "staff@example.com").await;
    let staff = Browser::signed_in(&t, "staff@example.com").await;
    let page = staff.get("/dashboard/imports").await;
    page.expect(200);
    assert!(page.text.contains("No import sources yet."));
    let nav = page.html();
    assert!(
        nav.select(&sel(
            "nav a[aria-current=page][href=\"/dashboard/imports\"]"
        ))
        .next()
        .is_some()
    );

    // A bad address, beside its field; nothing added.
    let r = staff
        .submit(
            "/dashboard/imports",
            "/dashboard/imports",
            &[
                ("kind", "greenhouse"),
                ("url", "ftp://example.com/jobs"),
                ("status", "active"),
            ],
        )
        .await;
    r.expect(422);
    assert!(r.html().select(&sel("#f-url-error")).next().is_some());
    assert!(imports::list(t.db(), t.org_id).await.unwrap().is_empty());
    let url = feeds.url("crumbs");
    let r = staff
        .submit(
            "/dashboard/imports",
            "/dashboard/imports",
            &[
                ("kind", "greenhouse"),
                ("url", &url),
                ("every", "30"),
                ("status", "active"),
            ],
        )
        .await;
    r.expect(303);
    let sources = imports::list(t.db(), t.org_id).await.unwrap();
    assert_eq!(sources.len(), 1);
    let s = &sources[0];
    assert_eq!((s.every_minutes, s.job_status.as_str()), (30, "active"));
    let page = staff.get("/dashboard/imports").await;
    let doc = page.html();
    let row = doc.select(&sel("tr.source")).next().unwrap();
    let text: String = row.text().collect();
    assert!(
        text.contains(&url) && text.contains("Not run yet"),
        "{text}"
    );

    // Run now: the run goes on in the background; its result is then on the page.
    let token = csrf_of(&page);
    staff
        .post(
            &format!("/dashboard/imports/{}/run", s.id),
            &[("csrf", token.as_str())],
        )
        .await
        .expect(303);
    let counts = ran(&t, s.id, None).await;
    assert_eq!((counts.created, counts.refused), (1, 1), "{counts:?}");
    let page = staff.get("/dashboard/imports").await;
    let doc = page.html();
    let result: String = doc
        .select(&sel("tr.source .result"))
        .next()
        .unwrap()
        .text()
        .collect();
    assert_eq!(
        result,
        "created 1, updated 0, unchanged 0, expired 0, refused 1"
    );
    let refused: String = doc
        .select(&sel("tr.source details.refusals li"))
        .next()
        .unwrap()
        .text()
        .collect();
    assert!(
        refused.starts_with("2: ") && refused.contains("title"),
        "{refused}"
    );
    assert_eq!(all_jobs(&t).await.len(), 1);

    // A source that fails says why.
    feeds.put("crumbs", "<html>Gateway timeout</html>", None);
    let before = imports::get(t.db(), Some(t.org_id), s.id)
        .await
        .unwrap()
        .last_run_at;
    staff
        .post(
            &format!("/dashboard/imports/{}/run", s.id),
            &[("csrf", token.as_str())],
        )
        .await
        .expect(303);
    ran(&t, s.id, before).await;
    let page = staff.get("/dashboard/imports").await;
    let doc = page.html();
    let failed: String = doc
        .select(&sel("tr.source .result.error"))
        .next()
        .expect("the failure is marked")
        .text()
        .collect();
    assert!(failed.starts_with("failed: not JSON"), "{failed}");

    // Another organization's staff reach none of it.
    let (other, _) = t.new_org("Elsewhere", "*", 100, 100).await;
    add_user(&t, other, "other@example.com").await;
    let them = Browser::signed_in(&t, "other@example.com").await;
    let theirs = them.get("/dashboard/imports").await;
    assert!(theirs.text.contains("No import sources yet."));
    let their_token = csrf_of(&theirs);
    for action in ["run", "delete"] {
        them.post(
            &format!("/dashboard/imports/{}/{action}", s.id),
            &[("csrf", their_token.as_str())],
        )
        .await
        .expect(404);
    }

    // Deleted: the source goes, its job stays.
    staff
        .post(
            &format!("/dashboard/imports/{}/delete", s.id),
            &[("csrf", token.as_str())],
        )
        .await
        .expect(303);
    assert!(imports::list(t.db(), t.org_id).await.unwrap().is_empty());
    assert_eq!(all_jobs(&t).await.len(), 1);
    // Each action is in the audit log.
    let audit = t.get("/audit?per_page=100").await;
    audit.expect(200);
    let actions: Vec<&str> = audit.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    for a in [
        "import_source.created",
        "import_source.run",
        "import_source.deleted",
    ] {
        assert!(actions.contains(&a), "{a}: {actions:?}");
    }
    // Without the form's token, nothing happens.
    let r = staff
        .post("/dashboard/imports", &[("kind", "lever"), ("url", &url)])
        .await;
    assert_eq!(r.status, 403);
    assert!(imports::list(t.db(), t.org_id).await.unwrap().is_empty());
}
