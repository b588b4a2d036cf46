//! The dashboard's applications, members, webhooks, CMS and analytics pages: what each
//! shows, and that each action goes through the API's operation (same events, same
//! validation, seen by the API at once).

use serde_json::{Value, json};

use super::*;
use crate::{backends, webhook_receiver::Receiver};

backends!(
    applications_by_job_and_status_move_like_the_api,
    members_are_searched_and_shown_with_access_and_payments,
    webhooks_are_managed_with_their_delivery_log,
    cms_collections_and_the_review_queue,
    analytics_show_totals_a_chart_and_top_jobs,
    new_pages_never_reach_another_organization,
    employer_mail_settings_are_saved_on_the_board_page,
);

fn texts(r: &Resp, css: &str) -> Vec<String> {
    r.html()
        .select(&sel(css))
        .map(|e| e.text().collect::<String>().trim().to_string())
        .collect()
}

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

async fn members_are_searched_and_shown_with_access_and_payments(b: Backend) {
    let t = TestApp::spawn(b).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    t.post(
        "/plans",
        json!({"name": "Pro", "price": 9.5, "currency": "EUR", "interval": "month", "jobsIncluded": 3}),
    )
    .await
    .expect(201);
    let job = t.insert_job(t.org_id, "Paid").await;
    let r = t
        .post(
            "/members/sync",
            json!({"email": "kate@example.com", "name": "Kate Bell", "access": {"planName": "Pro", "processorSubscriptionId": "sub_9"},
                   "payment": {"jobId": job, "amount": 19.99, "currency": "EUR"}}),
        )
        .await;
    r.expect(201);
    let kate = r.body["data"]["member"]["id"].as_str().unwrap().to_string();
    t.post(
        "/members/sync",
        json!({"email": "tom@example.com", "name": "Tom"}),
    )
    .await
    .expect(201);
    let ada = Browser::signed_in(&t, "ada@example.com").await;
    let list = ada.get("/dashboard/members").await;
    list.expect(200);
    assert_eq!(
        texts(&list, "table.members tbody td:first-child a"),
        ["Tom", "Kate Bell"]
    );
    let found = ada.get("/dashboard/members?search=BELL").await;
    assert_eq!(
        texts(&found, "table.members tbody td:first-child a"),
        ["Kate Bell"]
    );
    let none = ada.get("/dashboard/members?search=nobody").await;
    assert!(none.text.contains("No members match"));
    let page = ada.get(&format!("/dashboard/members/{kate}")).await;
    page.expect(200);
    assert_eq!(text_of(&page, "h1").as_deref(), Some("Kate Bell"));
    assert_eq!(text_of(&page, "table.access .plan").as_deref(), Some("Pro"));
    assert_eq!(
        text_of(&page, "table.access .subscription").as_deref(),
        Some("sub_9")
    );
    assert_eq!(
        text_of(&page, "dd.paywall").as_deref(),
        Some("Open: a subscription is valid")
    );
    assert_eq!(
        text_of(&page, "table.payments tbody td:nth-child(2)").as_deref(),
        Some("19.99 EUR")
    );
    // After cancel_now through the API, the page says so.
    t.post(
        "/members/access",
        json!({"email": "kate@example.com", "action": "cancel_now"}),
    )
    .await
    .expect(200);
    let page = ada.get(&format!("/dashboard/members/{kate}")).await;
    assert_eq!(
        text_of(&page, "dd.paywall").as_deref(),
        Some("Closed: no valid subscription")
    );
    ada.get(&format!("/dashboard/members/{}", uuid::Uuid::now_v7()))
        .await
        .expect(404);
    ada.get("/dashboard/members/not-an-id").await.expect(404);
}

async fn webhooks_are_managed_with_their_delivery_log(b: Backend) {
    let t = TestApp::spawn_with(b, |c| {
        c.webhooks.retry_schedule = Vec::new();
    })
    .await;
    add_user(&t, t.org_id, "ada@example.com").await;
    let rx = Receiver::start().await;
    rx.status("/hook", 500);
    let ada = Browser::signed_in(&t, "ada@example.com").await;
    let page = ada.get("/dashboard/webhooks").await;
    page.expect(200);
    assert!(page.text.contains("No subscriptions yet."));
    let token = csrf_of(&page);
    // The API's validation, beside the fields; nothing stored.
    let r = ada
        .post(
            "/dashboard/webhooks",
            &[
                ("event", "job.approved"),
                ("target_type", "webhook"),
                ("target_url", "ftp://example.com/x"),
                ("secret", "short"),
                ("csrf", &token),
            ],
        )
        .await;
    r.expect(422);
    let doc = r.html();
    assert!(doc.select(&sel("#f-target_url-error")).next().is_some());
    assert!(doc.select(&sel("#f-secret-error")).next().is_some());
    assert_eq!(
        doc.select(&sel("#f-secret"))
            .next()
            .unwrap()
            .value()
            .attr("value"),
        Some(""),
        "a secret is never shown back"
    );
    assert_eq!(t.get("/webhooks").await.body["meta"]["total"], 0);
    // Created: the API lists it.
    let r = ada
        .post(
            "/dashboard/webhooks",
            &[
                ("event", "*"),
                ("target_type", "webhook"),
                ("target_url", &rx.url("/hook")),
                ("secret", "a-secret-of-sixteen-or-more"),
                ("csrf", &token),
            ],
        )
        .await;
    let to = redirect(&r);
    let id = to
        .strip_prefix("/dashboard/webhooks/")
        .unwrap()
        .split('?')
        .next()
        .unwrap()
        .to_string();
    let api = t.get(&format!("/webhooks/{id}")).await;
    api.expect(200);
    assert_eq!(api.body["data"]["event"], "*");
    // A test ping fails at the receiver (500): its attempt is in the log.
    let r = ada
        .post(
            &format!("/dashboard/webhooks/{id}/test"),
            &[("csrf", &token)],
        )
        .await;
    assert_eq!(
        redirect(&r),
        format!("/dashboard/webhooks/{id}?notice=ping_queued")
    );
    assert!(
        rx.wait_until(std::time::Duration::from_secs(20), |h| !h.is_empty())
            .await
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let log = loop {
        let page = ada.get(&format!("/dashboard/webhooks/{id}")).await;
        if page.text.contains("status-failed") || std::time::Instant::now() > deadline {
            break page;
        }
        tokio::task::yield_now().await;
    };
    assert_eq!(
        text_of(&log, ".delivery h3")
            .as_deref()
            .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" ")),
        Some("ping failed".to_string())
    );
    assert_eq!(
        text_of(&log, "table.attempts tbody td:nth-child(3)").as_deref(),
        Some("500")
    );
    assert!(
        text_of(&log, "table.attempts tbody td:nth-child(4)")
            .unwrap()
            .contains("500")
    );
    // Retry: it succeeds once the receiver recovers.
    rx.status("/hook", 200);
    let delivery = t.get(&format!("/webhooks/{id}/deliveries")).await.body["data"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let r = ada
        .post(
            &format!("/dashboard/webhooks/{id}/deliveries/{delivery}/retry"),
            &[("csrf", &token)],
        )
        .await;
    assert_eq!(
        redirect(&r),
        format!("/dashboard/webhooks/{id}?notice=retry_queued")
    );
    assert!(
        rx.wait_until(std::time::Duration::from_secs(20), |h| h.len() >= 2)
            .await
    );
    // Disable, then enable: as PATCH is_enabled.
    ada.post(
        &format!("/dashboard/webhooks/{id}/enabled"),
        &[("enabled", "false"), ("csrf", &token)],
    )
    .await;
    assert_eq!(
        t.get(&format!("/webhooks/{id}")).await.body["data"]["is_enabled"],
        false
    );
    let r = ada
        .post(
            &format!("/dashboard/webhooks/{id}/test"),
            &[("csrf", &token)],
        )
        .await;
    assert_eq!(
        redirect(&r),
        format!("/dashboard/webhooks/{id}?notice=webhook_disabled_first")
    );
    ada.post(
        &format!("/dashboard/webhooks/{id}/enabled"),
        &[("enabled", "true"), ("csrf", &token)],
    )
    .await;
    assert_eq!(
        t.get(&format!("/webhooks/{id}")).await.body["data"]["is_enabled"],
        true
    );
    // Delete.
    let r = ada
        .post(
            &format!("/dashboard/webhooks/{id}/delete"),
            &[("csrf", &token)],
        )
        .await;
    assert_eq!(redirect(&r), "/dashboard/webhooks?notice=webhook_deleted");
    t.get(&format!("/webhooks/{id}")).await.expect(404);
}

async fn cms_collections_and_the_review_queue(b: Backend) {
    let t = TestApp::spawn(b).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    let ada = Browser::signed_in(&t, "ada@example.com").await;
    let new = ada.get("/dashboard/cms/new").await;
    new.expect(200);
    let token = csrf_of(&new);
    // A bad schema: each problem beside its row; nothing stored.
    let r = ada
        .post(
            "/dashboard/cms/new",
            &[
                ("name", "Events"),
                ("slug", "events"),
                ("visibility", "public"),
                ("moderation", "manual"),
                ("sort_dir", "asc"),
                ("s0_name", "title"),
                ("s0_type", "text"),
                ("s0_required", "on"),
                ("s1_name", "seats"),
                ("s1_type", "text"),
                ("s1_min", "3"),
                ("s2_name", ""),
                ("s3_name", "kind"),
                ("s3_type", "select"),
                ("csrf", &token),
            ],
        )
        .await;
    r.expect(422);
    let doc = r.html();
    assert!(doc.select(&sel("#e-s1_min")).next().is_some(), "{}", r.text);
    assert!(
        doc.select(&sel("#e-s3_options")).next().is_some(),
        "{}",
        r.text
    );
    assert_eq!(
        t.get("/cms").await.body["collections"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
    // Corrected: created with its rules, as POST /api/cms creates it.
    let r = ada
        .post(
            "/dashboard/cms/new",
            &[
                ("name", "Events"),
                ("slug", "events"),
                ("visibility", "public"),
                ("allow_public_submit", "on"),
                ("moderation", "manual"),
                ("sort_by", "created_at"),
                ("sort_dir", "desc"),
                ("s0_name", "title"),
                ("s0_type", "text"),
                ("s0_required", "on"),
                ("s1_name", "seats"),
                ("s1_type", "number"),
                ("s1_min", "1"),
                ("s3_name", "kind"),
                ("s3_type", "select"),
                ("s3_options", "talk, workshop"),
                ("csrf", &token),
            ],
        )
        .await;
    assert_eq!(
        redirect(&r),
        "/dashboard/cms/events/items?notice=collection_saved"
    );
    let api = t.get("/cms/events/schema").await;
    let c = &api.body["collection"];
    assert_eq!(
        c["rules"],
        json!({"allow_public_submit": true, "moderation": "manual", "sort_by": "created_at", "sort_dir": "desc"})
    );
    assert_eq!(
        c["schema"],
        json!([{"name": "title", "type": "text", "required": true},
               {"name": "seats", "type": "number", "required": false, "min": 1.0},
               {"name": "kind", "type": "select", "required": false, "options": ["talk", "workshop"]}])
    );
    // The slug is taken now.
    let again = ada
        .post(
            "/dashboard/cms/new",
            &[
                ("name", "Other"),
                ("slug", "events"),
                ("s0_name", "x"),
                ("s0_type", "text"),
                ("csrf", &token),
            ],
        )
        .await;
    again.expect(422);
    assert!(again.html().select(&sel("#f-slug-error")).next().is_some());
    // The edit form holds the stored schema; removing a row's name removes the field.
    let edit = ada.get("/dashboard/cms/events/edit").await;
    let doc = edit.html();
    assert_eq!(
        doc.select(&sel("#f-s2_name"))
            .next()
            .unwrap()
            .value()
            .attr("value"),
        Some("kind")
    );
    assert_eq!(
        doc.select(&sel("#f-s2_options"))
            .next()
            .unwrap()
            .value()
            .attr("value"),
        Some("talk, workshop")
    );
    assert!(
        doc.select(&sel("#f-allow_public_submit[checked]"))
            .next()
            .is_some()
    );

    // Submissions wait in the review queue; publishing moves them to the public list.
    for title in ["Rust night", "Spam offer"] {
        let r = Resp::read(
            t.client
                .post(format!("{}/api/cms/events/submit", t.base))
                .json(&json!({"data": {"title": title}}))
                .send()
                .await
                .unwrap(),
        )
        .await;
        r.expect(201);
    }
    let queue = ada.get("/dashboard/cms/events/items").await;
    queue.expect(200);
    assert_eq!(
        text_of(&queue, "nav.tabs a[aria-current=page]").as_deref(),
        Some("Waiting for review")
    );
    let titles = |r: &Resp| texts(r, "table.items tbody td:first-child a");
    assert_eq!(titles(&queue), ["Spam offer", "Rust night"]);
    let pending = t.get("/cms/events?status=pending_review").await;
    let id_of = |title: &str| -> String {
        pending.body["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["data"]["title"] == title)
            .unwrap()["id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let (rust, spam) = (id_of("Rust night"), id_of("Spam offer"));
    let token = csrf_of(&queue);
    let r = ada
        .post(
            &format!("/dashboard/cms/events/items/{rust}/status"),
            &[
                ("status", "published"),
                ("back", "pending_review"),
                ("csrf", &token),
            ],
        )
        .await;
    assert_eq!(
        redirect(&r),
        "/dashboard/cms/events/items?status=pending_review&notice=entry_moved"
    );
    ada.post(
        &format!("/dashboard/cms/events/items/{spam}/status"),
        &[
            ("status", "archived"),
            ("back", "pending_review"),
            ("csrf", &token),
        ],
    )
    .await;
    let public = t.get("/cms/events").await;
    assert_eq!(public.body["items"][0]["data"]["title"], "Rust night");
    assert_eq!(public.body["total"], 1);
    assert!(titles(&ada.get("/dashboard/cms/events/items").await).is_empty());
    // The item form: made from the schema; the API's messages beside the fields.
    let form = ada
        .get(&format!("/dashboard/cms/events/items/{rust}"))
        .await;
    form.expect(200);
    let doc = form.html();
    assert_eq!(
        doc.select(&sel("#f-data_title"))
            .next()
            .unwrap()
            .value()
            .attr("value"),
        Some("Rust night")
    );
    // The body's own problems are answered first (as the API answers them), then the
    // schema's.
    let r = ada
        .post(
            &format!("/dashboard/cms/events/items/{rust}"),
            &[
                ("data_title", "Rust night"),
                ("status", "published"),
                ("position", "2"),
                ("starts_at", "soon"),
                ("csrf", &token),
            ],
        )
        .await;
    r.expect(422);
    assert!(r.html().select(&sel("#f-starts_at-error")).next().is_some());
    let r = ada
        .post(
            &format!("/dashboard/cms/events/items/{rust}"),
            &[
                ("data_title", "Rust night"),
                ("data_seats", "0"),
                ("data_kind", "party"),
                ("status", "published"),
                ("position", "2"),
                ("csrf", &token),
            ],
        )
        .await;
    r.expect(422);
    let doc = r.html();
    for id in ["#e-data_seats", "#e-data_kind"] {
        assert!(
            !doc.select(&sel(id))
                .next()
                .unwrap()
                .text()
                .collect::<String>()
                .trim()
                .is_empty(),
            "{id}"
        );
    }
    let r = ada
        .post(
            &format!("/dashboard/cms/events/items/{rust}"),
            &[
                ("data_title", "Rust night"),
                ("data_seats", "40"),
                ("data_kind", "talk"),
                ("status", "published"),
                ("position", "2"),
                ("starts_at", ""),
                ("expires_at", "2099-01-01T00:00:00Z"),
                ("csrf", &token),
            ],
        )
        .await;
    redirect(&r);
    let item = t.get(&format!("/cms/events/{rust}")).await;
    assert_eq!(
        item.body["item"]["data"],
        json!({"title": "Rust night", "seats": 40, "kind": "talk"})
    );
    assert_eq!(item.body["item"]["position"], 2);
    assert_eq!(item.body["item"]["expires_at"], "2099-01-01T00:00:00Z");
    // A new entry, then delete it.
    let r = ada
        .post(
            "/dashboard/cms/events/items/new",
            &[
                ("data_title", "Written here"),
                ("status", "draft"),
                ("position", "0"),
                ("csrf", &token),
            ],
        )
        .await;
    assert_eq!(
        redirect(&r),
        "/dashboard/cms/events/items?status=draft&notice=entry_saved"
    );
    let drafts = t.get("/cms/events?status=draft").await;
    let draft = drafts.body["items"][0]["id"].as_str().unwrap().to_string();
    let r = ada
        .post(
            &format!("/dashboard/cms/events/items/{draft}/delete"),
            &[("csrf", &token)],
        )
        .await;
    redirect(&r);
    t.get(&format!("/cms/events/{draft}")).await.expect(404);
    // The list of collections.
    let list = ada.get("/dashboard/cms").await;
    assert_eq!(
        texts(&list, "table.collections tbody td:first-child a"),
        ["Events"]
    );
    assert_eq!(
        texts(&list, "table.collections tbody td:nth-child(4)"),
        ["Open, reviewed"]
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

async fn new_pages_never_reach_another_organization(b: Backend) {
    let t = TestApp::spawn(b).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    let (org_b, key_b) = t.new_org("Other org", "*", 1000, 1000).await;
    let as_b = |method: Method, path: &str, body: Value| {
        let t = &t;
        let key_b = key_b.clone();
        let path = path.to_string();
        async move { t.req(method, &path).key(&key_b).json(body).send().await }
    };
    let job_b = api_job(&t, &key_b, "Secret role").await;
    as_b(
        Method::PATCH,
        &format!("/jobs/{job_b}"),
        json!({"status": "active"}),
    )
    .await
    .expect(200);
    let app_b = as_b(
        Method::POST,
        &format!("/jobs/{job_b}/applications"),
        json!({"name": "Hidden Applicant", "email": "hidden@example.com"}),
    )
    .await;
    let app_b = app_b.body["data"]["id"].as_str().unwrap().to_string();
    let member_b = as_b(
        Method::POST,
        "/members/sync",
        json!({"email": "secret@example.com", "name": "Secret Member"}),
    )
    .await;
    let member_b = member_b.body["data"]["member"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let hook_b = as_b(
        Method::POST,
        "/webhooks",
        json!({"event": "*", "target_type": "webhook", "target_url": "https://hooks.example.com/b"}),
    )
    .await;
    let hook_b = hook_b.body["data"]["id"].as_str().unwrap().to_string();
    as_b(
        Method::POST,
        "/cms",
        json!({"slug": "secrets", "name": "Secret things", "schema": [{"name": "title", "type": "text"}]}),
    )
    .await
    .expect(201);
    let item_b = as_b(
        Method::POST,
        "/cms/secrets",
        json!({"data": {"title": "Hidden entry"}, "status": "pending_review"}),
    )
    .await;
    let item_b = item_b.body["item"]["id"].as_str().unwrap().to_string();
    let events_before = event_types(&t, org_b).await;

    let ada = Browser::signed_in(&t, "ada@example.com").await;
    for path in [
        format!("/dashboard/applications?job={job_b}"),
        format!("/dashboard/members/{member_b}"),
        format!("/dashboard/webhooks/{hook_b}"),
        "/dashboard/cms/secrets/items".to_string(),
        "/dashboard/cms/secrets/edit".to_string(),
        format!("/dashboard/cms/secrets/items/{item_b}"),
    ] {
        let r = ada.get(&path).await;
        r.expect(404);
        for secret in ["Secret", "Hidden", "hooks.example.com"] {
            assert!(!r.text.contains(secret), "{path} shows {secret}");
        }
    }
    for path in [
        "/dashboard/applications",
        "/dashboard/applications?status=new",
        "/dashboard/members",
        "/dashboard/members?search=secret",
        "/dashboard/webhooks",
        "/dashboard/cms",
        "/dashboard/analytics?period=12mo",
    ] {
        let r = ada.get(path).await;
        r.expect(200);
        for secret in ["Secret", "Hidden", "hooks.example.com"] {
            assert!(!r.text.contains(secret), "{path} shows {secret}");
        }
    }
    let token = ada.csrf("/dashboard/webhooks").await;
    let tk = token.as_str();
    for (path, fields) in [
        (
            format!("/dashboard/applications/{app_b}/status"),
            vec![("status", "hired")],
        ),
        (
            format!("/dashboard/webhooks/{hook_b}/enabled"),
            vec![("enabled", "false")],
        ),
        (format!("/dashboard/webhooks/{hook_b}/test"), vec![]),
        (format!("/dashboard/webhooks/{hook_b}/delete"), vec![]),
        (
            "/dashboard/cms/secrets/edit".to_string(),
            vec![("name", "Taken"), ("s0_name", "x"), ("s0_type", "text")],
        ),
        (
            format!("/dashboard/cms/secrets/items/{item_b}/status"),
            vec![("status", "published")],
        ),
        (
            format!("/dashboard/cms/secrets/items/{item_b}"),
            vec![("data_title", "Taken"), ("status", "published")],
        ),
        (
            format!("/dashboard/cms/secrets/items/{item_b}/delete"),
            vec![],
        ),
        (
            "/dashboard/cms/secrets/items/new".to_string(),
            vec![("data_title", "Planted"), ("status", "published")],
        ),
    ] {
        let mut all = fields.clone();
        all.push(("csrf", tk));
        ada.post(&path, &all).await.expect(404);
    }
    // A's new collection with B's slug is A's own.
    let r = ada
        .post(
            "/dashboard/cms/new",
            &[
                ("name", "Mine"),
                ("slug", "secrets"),
                ("s0_name", "title"),
                ("s0_type", "text"),
                ("csrf", tk),
            ],
        )
        .await;
    redirect(&r);
    // Nothing of B changed.
    let app = as_b(Method::GET, &format!("/applications/{app_b}"), json!({})).await;
    assert_eq!(app.body["data"]["status"], "new");
    let hook = as_b(Method::GET, &format!("/webhooks/{hook_b}"), json!({})).await;
    assert_eq!(hook.body["data"]["is_enabled"], true);
    let c = as_b(Method::GET, "/cms/secrets/schema", json!({})).await;
    assert_eq!(c.body["collection"]["name"], "Secret things");
    let item = as_b(Method::GET, &format!("/cms/secrets/{item_b}"), json!({})).await;
    assert_eq!(item.body["item"]["status"], "pending_review");
    assert_eq!(item.body["item"]["data"]["title"], "Hidden entry");
    let items = as_b(Method::GET, "/cms/secrets?status=published", json!({})).await;
    assert_eq!(items.body["total"], 0);
    assert_eq!(event_types(&t, org_b).await, events_before);
}

async fn employer_mail_settings_are_saved_on_the_board_page(b: Backend) {
    let t = TestApp::spawn(b).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    let ada = Browser::signed_in(&t, "ada@example.com").await;
    let page = ada.get("/dashboard/settings/board").await;
    let doc = page.html();
    assert!(
        doc.select(&sel("#f-mail_job_live[checked]"))
            .next()
            .is_some()
    );
    assert_eq!(
        doc.select(&sel("#f-mail_expiry_days"))
            .next()
            .unwrap()
            .value()
            .attr("value"),
        Some("3")
    );
    let token = csrf_of(&page);
    let r = ada
        .post(
            "/dashboard/settings/board",
            &[
                ("name", "Test org"),
                ("mail_expiry_days", "7"),
                ("mail_applications", "on"),
                ("csrf", &token),
            ],
        )
        .await;
    redirect(&r);
    let org = jobboard_domain::orgs::get(t.db(), t.org_id).await.unwrap();
    assert!(!org.mail_job_live, "an unticked box turns it off");
    assert_eq!(org.mail_expiry_days, 7);
    assert!(org.mail_applications);
    let r = ada
        .post(
            "/dashboard/settings/board",
            &[
                ("name", "Test org"),
                ("mail_expiry_days", "90"),
                ("csrf", &token),
            ],
        )
        .await;
    r.expect(422);
    assert!(
        r.html()
            .select(&sel("#f-mail_expiry_days-error"))
            .next()
            .is_some()
    );
    assert_eq!(
        jobboard_domain::orgs::get(t.db(), t.org_id)
            .await
            .unwrap()
            .mail_expiry_days,
        7
    );
}
