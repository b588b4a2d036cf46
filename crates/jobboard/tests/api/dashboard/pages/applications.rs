//! The applications pages, by job and by status, moving applications like the API, and the
//! analytics page with its totals, chart and top jobs.

use serde_json::json;

use super::*;
use crate::backends;

backends!(
    applications_by_job_and_status_move_like_the_api,
    analytics_show_totals_a_chart_and_top_jobs,
);

async fn apply(t: &TestApp, job: &str, name: &str) -> String {
    let r = t
        .post(
            &format!("/jobs/{job}/applications"),
            json!({"name": name, "email": format!("{}@example.com", name.to_lowercase())}),
        )
        .await;
    r.expect(201);
    r.body["data"]["id"].as_str().unwrap().to_string()
}

async fn applications_by_job_and_status_move_like_the_api(b: Backend) {
    let t = TestApp::spawn(b).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    let pilot = api_job(&t, &t.key, "Pilot").await;
    let cook = api_job(&t, &t.key, "Cook").await;
    for id in [&pilot, &cook] {
        t.patch(&format!("/jobs/{id}"), json!({"status": "active"}))
            .await
            .expect(200);
    }
    let grace = apply(&t, &pilot, "Grace").await;
    apply(&t, &pilot, "Alan").await;
    apply(&t, &cook, "Julia").await;
    let ada = Browser::signed_in(&t, "ada@example.com").await;

    let page = ada.get("/dashboard/applications").await;
    page.expect(200);
    assert_eq!(page.header("cache-control"), Some("no-store"));
    let names = |r: &Resp| -> Vec<String> { texts(r, "table.applications tbody .applicant") };
    assert_eq!(names(&page), ["Julia", "Alan", "Grace"]);
    // One job's applications (the jobs list links to them).
    let jobs = ada.get("/dashboard/jobs?status=active").await;
    assert!(
        jobs.html()
            .select(&sel(&format!(
                "a[href='/dashboard/applications?job={pilot}']"
            )))
            .next()
            .is_some()
    );
    let per_job = ada
        .get(&format!("/dashboard/applications?job={pilot}"))
        .await;
    per_job.expect(200);
    assert_eq!(
        text_of(&per_job, "h1").as_deref(),
        Some("Applications to Pilot")
    );
    assert_eq!(names(&per_job), ["Alan", "Grace"]);

    // Move Grace to interviewing: the API sees it, with application.status_changed.
    let before = event_types(&t, t.org_id).await.len();
    let token = csrf_of(&per_job);
    let r = ada
        .post(
            &format!("/dashboard/applications/{grace}/status"),
            &[
                ("status", "interviewing"),
                ("back_status", "all"),
                ("back_job", pilot.as_str()),
                ("csrf", &token),
            ],
        )
        .await;
    assert_eq!(
        redirect(&r),
        format!("/dashboard/applications?status=all&job={pilot}&notice=application_moved")
    );
    let api = t.get(&format!("/applications/{grace}")).await;
    assert_eq!(api.body["data"]["status"], "interviewing");
    let events = event_types(&t, t.org_id).await;
    assert_eq!(&events[before..], ["application.status_changed"]);
    // The status tab lists it; a bad status is refused and changes nothing.
    let tab = ada.get("/dashboard/applications?status=interviewing").await;
    assert_eq!(names(&tab), ["Grace"]);
    ada.post(
        &format!("/dashboard/applications/{grace}/status"),
        &[("status", "promoted"), ("csrf", &token)],
    )
    .await
    .expect(400);
    // Without the token, nothing moves.
    ada.post(
        &format!("/dashboard/applications/{grace}/status"),
        &[("status", "hired")],
    )
    .await
    .expect(403);
    assert_eq!(
        t.get(&format!("/applications/{grace}")).await.body["data"]["status"],
        "interviewing"
    );
}

async fn analytics_show_totals_a_chart_and_top_jobs(b: Backend) {
    let t = TestApp::spawn(b).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    let pilot = api_job(&t, &t.key, "Pilot").await;
    let cook = api_job(&t, &t.key, "Cook").await;
    for id in [&pilot, &cook] {
        t.patch(&format!("/jobs/{id}"), json!({"status": "active"}))
            .await
            .expect(200);
    }
    let mut events = Vec::new();
    for (job, n) in [(&pilot, 3), (&cook, 1)] {
        for i in 0..n {
            events.push(json!({"type": "job_view", "job_id": job, "visitor_id": format!("v{i}")}));
        }
    }
    events.push(json!({"type": "page_view", "visitor_id": "v0"}));
    t.post("/analytics/events", json!({"events": events}))
        .await
        .expect(200);
    apply(&t, &cook, "Julia").await;
    let ada = Browser::signed_in(&t, "ada@example.com").await;
    for period in ["7d", "30d", "6mo", "12mo"] {
        let page = ada
            .get(&format!("/dashboard/analytics?period={period}"))
            .await;
        page.expect(200);
        let api = t.get(&format!("/analytics?period={period}")).await;
        let d = &api.body["data"];
        for (id, key) in [
            ("#t-pageviews", "pageviews"),
            ("#t-job_views", "job_views"),
            ("#t-applications", "applications"),
            ("#t-jobs_posted", "jobs_posted"),
        ] {
            assert_eq!(
                text_of(&page, id),
                Some(d[key].to_string()),
                "{period} {key}"
            );
        }
        // One bar per day of the period, and one table row per day.
        let days = d["timeseries"].as_array().unwrap().len();
        let doc = page.html();
        assert_eq!(
            doc.select(&sel("figure.chart svg rect.bar")).count(),
            days,
            "{period}"
        );
        assert_eq!(
            doc.select(&sel("table.days tbody tr")).count(),
            days,
            "{period}"
        );
        assert!(doc.select(&sel("figure.chart svg title")).next().is_some());
    }
    let page = ada.get("/dashboard/analytics").await;
    assert_eq!(
        text_of(&page, "nav.tabs a[aria-current=page]").as_deref(),
        Some("30 days")
    );
    let viewed = texts(&page, "#top-viewed + ol li");
    assert_eq!(viewed, ["Pilot: 3 views", "Cook: 1 view"]);
    assert_eq!(
        texts(&page, "#top-applied + ol li"),
        ["Cook: 1 application"]
    );
}
