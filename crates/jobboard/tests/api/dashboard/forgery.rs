//! Anti-forgery: a dashboard form without its token, with another session's token, or
//! sent from another site changes nothing; so does a sign-in form without its token.

use super::*;
use crate::backends;

backends!(
    forged_forms_change_nothing,
    forged_sign_ins_are_refused,
    every_new_action_refuses_forged_forms,
);

async fn forged_forms_change_nothing(b: Backend) {
    let t = TestApp::spawn(b).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    add_user(&t, t.org_id, "grace@example.com").await;
    let job = api_job(&t, &t.key, "Pilot").await;
    let ada = Browser::signed_in(&t, "ada@example.com").await;
    let grace = Browser::signed_in(&t, "grace@example.com").await;
    let action = format!("/dashboard/jobs/{job}/status");
    let ada_token = ada.csrf("/dashboard/jobs").await;
    let grace_token = grace.csrf("/dashboard/jobs").await;
    assert_ne!(ada_token, grace_token);
    let approve = |token: &str| {
        vec![
            ("status", "active".to_string()),
            ("back", "pending".to_string()),
            ("csrf", token.to_string()),
        ]
    };
    let base = Some(t.base.as_str());
    // No token.
    let r = post_as(&ada, &action, vec![("status", "active".into())], base).await;
    r.expect(403);
    assert_eq!(
        text_of(&r, "main h1").as_deref(),
        Some("This form cannot be accepted")
    );
    // Another session's token.
    post_as(&ada, &action, approve(&grace_token), base)
        .await
        .expect(403);
    // A garbled token.
    post_as(&ada, &action, approve("AAAA"), base)
        .await
        .expect(403);
    // The right token, from another site (by Origin, or by Referer without Origin).
    post_as(
        &ada,
        &action,
        approve(&ada_token),
        Some("https://evil.example"),
    )
    .await
    .expect(403);
    post_as(&ada, &action, approve(&ada_token), Some("null"))
        .await
        .expect(403);
    let by_referer = ada
        .client
        .post(format!("{}{action}", t.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .header("referer", "https://evil.example/page")
        .body(serde_urlencoded::to_string(approve(&ada_token)).unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(by_referer.status(), 403);
    // Sign-out and key creation are forms like any other.
    ada.post("/dashboard/logout", &[("csrf", &grace_token)])
        .await
        .expect(403);
    ada.post(
        "/dashboard/settings/api-keys",
        &[("name", "stolen"), ("scopes", "*"), ("csrf", &grace_token)],
    )
    .await
    .expect(403);
    // Nothing changed.
    let r = t.get(&format!("/jobs/{job}")).await;
    assert_eq!(r.body["data"]["status"], "pending");
    assert_eq!(event_types(&t, t.org_id).await, ["job.created"]);
    assert_eq!(
        jobboard_domain::keys::list(t.db(), t.org_id)
            .await
            .unwrap()
            .len(),
        1
    );
    ada.get("/dashboard").await.expect(200);
    // The genuine form works.
    let ok = post_as(&ada, &action, approve(&ada_token), base).await;
    assert_eq!(
        redirect(&ok),
        "/dashboard/jobs?status=pending&notice=approved"
    );
}

async fn post_as(
    br: &Browser<'_>,
    action: &str,
    fields: Vec<(&str, String)>,
    origin: Option<&str>,
) -> Resp {
    let refs: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
    br.post_from(action, &refs, origin).await
}

async fn forged_sign_ins_are_refused(b: Backend) {
    let t = TestApp::spawn(b).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    let br = Browser::new(&t);
    let token = br.csrf("/dashboard/login").await;
    let creds = [("email", "ada@example.com"), ("password", PASSWORD)];
    // Without the token.
    br.post("/dashboard/login", &creds).await.expect(403);
    // From another site.
    let mut with_token = creds.to_vec();
    with_token.push(("csrf", &token));
    br.post_from(
        "/dashboard/login",
        &with_token,
        Some("https://evil.example"),
    )
    .await
    .expect(403);
    // With a token bound to another browser's cookie.
    let other = Browser::new(&t);
    let other_token = other.csrf("/dashboard/login").await;
    let mut foreign = creds.to_vec();
    foreign.push(("csrf", &other_token));
    br.post("/dashboard/login", &foreign).await.expect(403);
    // Without the sign-in cookie at all.
    let bare = t
        .page_req(reqwest::Method::POST, "/dashboard/login")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(serde_urlencoded::to_string(&with_token).unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(bare.status(), 403);
    assert_eq!(redirect(&br.get("/dashboard").await), "/dashboard/login");
    // The genuine one signs in.
    assert_eq!(
        redirect(&br.post("/dashboard/login", &with_token).await),
        "/dashboard"
    );
}

/// Every action of the applications, CMS and webhooks pages: without a token, with
/// another session's token and from another site, refused (403) with nothing changed.
async fn every_new_action_refuses_forged_forms(b: Backend) {
    let t = TestApp::spawn(b).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    add_user(&t, t.org_id, "grace@example.com").await;
    let job = api_job(&t, &t.key, "Pilot").await;
    t.patch(
        &format!("/jobs/{job}"),
        serde_json::json!({"status": "active"}),
    )
    .await
    .expect(200);
    let app = t
        .post(
            &format!("/jobs/{job}/applications"),
            serde_json::json!({"name": "Ann", "email": "ann@example.com"}),
        )
        .await;
    let app = app.body["data"]["id"].as_str().unwrap().to_string();
    t.post(
        "/cms",
        serde_json::json!({"slug": "events", "name": "Events", "schema": [{"name": "title", "type": "text"}]}),
    )
    .await
    .expect(201);
    let item = t
        .post(
            "/cms/events",
            serde_json::json!({"data": {"title": "Meetup"}, "status": "pending_review"}),
        )
        .await;
    let item = item.body["item"]["id"].as_str().unwrap().to_string();
    let hook = t
        .post(
            "/webhooks",
            serde_json::json!({"event": "*", "target_type": "webhook", "target_url": "https://hooks.example.com/x"}),
        )
        .await;
    let hook = hook.body["data"]["id"].as_str().unwrap().to_string();
    let events_before = event_types(&t, t.org_id).await;
    let ada = Browser::signed_in(&t, "ada@example.com").await;
    let grace = Browser::signed_in(&t, "grace@example.com").await;
    let ada_token = ada.csrf("/dashboard/webhooks").await;
    let grace_token = grace.csrf("/dashboard/webhooks").await;
    let actions: Vec<(String, Vec<(&str, String)>)> = vec![
        (
            format!("/dashboard/applications/{app}/status"),
            vec![("status", "hired".into())],
        ),
        (
            "/dashboard/webhooks".into(),
            vec![
                ("event", "*".into()),
                ("target_type", "webhook".into()),
                ("target_url", "https://evil.example/x".into()),
            ],
        ),
        (
            format!("/dashboard/webhooks/{hook}/enabled"),
            vec![("enabled", "false".into())],
        ),
        (format!("/dashboard/webhooks/{hook}/test"), vec![]),
        (format!("/dashboard/webhooks/{hook}/delete"), vec![]),
        (
            "/dashboard/cms/new".into(),
            vec![
                ("name", "Stolen"),
                ("slug", "stolen"),
                ("s0_name", "title"),
                ("s0_type", "text"),
            ]
            .into_iter()
            .map(|(k, v)| (k, v.to_string()))
            .collect(),
        ),
        (
            "/dashboard/cms/events/edit".into(),
            vec![
                ("name", "Taken".into()),
                ("s0_name", "x".into()),
                ("s0_type", "text".into()),
            ],
        ),
        (
            "/dashboard/cms/events/items/new".into(),
            vec![
                ("data_title", "Planted".into()),
                ("status", "published".into()),
            ],
        ),
        (
            format!("/dashboard/cms/events/items/{item}"),
            vec![
                ("data_title", "Changed".into()),
                ("status", "published".into()),
            ],
        ),
        (
            format!("/dashboard/cms/events/items/{item}/status"),
            vec![("status", "published".into())],
        ),
        (format!("/dashboard/cms/events/items/{item}/delete"), vec![]),
    ];
    let base = Some(t.base.as_str());
    for (action, fields) in &actions {
        post_as(&ada, action, fields.clone(), base)
            .await
            .expect(403);
        let mut with = fields.clone();
        with.push(("csrf", grace_token.clone()));
        post_as(&ada, action, with, base).await.expect(403);
        let mut with = fields.clone();
        with.push(("csrf", ada_token.clone()));
        post_as(&ada, action, with, Some("https://evil.example"))
            .await
            .expect(403);
    }
    // Nothing changed.
    assert_eq!(
        t.get(&format!("/applications/{app}")).await.body["data"]["status"],
        "new"
    );
    let hooks = t.get("/webhooks").await;
    assert_eq!(hooks.body["meta"]["total"], 1);
    assert_eq!(hooks.body["data"][0]["is_enabled"], true);
    assert_eq!(
        t.get(&format!("/webhooks/{hook}/deliveries")).await.body["meta"]["total"],
        0
    );
    let cms = t.get("/cms").await;
    assert_eq!(cms.body["collections"].as_array().unwrap().len(), 1);
    assert_eq!(cms.body["collections"][0]["name"], "Events");
    let i = t.get(&format!("/cms/events/{item}")).await;
    assert_eq!(i.body["item"]["status"], "pending_review");
    assert_eq!(i.body["item"]["data"]["title"], "Meetup");
    assert_eq!(t.get("/cms/events?status=published").await.body["total"], 0);
    assert_eq!(event_types(&t, t.org_id).await, events_before);
}
