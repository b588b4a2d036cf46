//! Applications: create, list, read, status changes, their events, tenancy.

use reqwest::Method;
use serde_json::{Value, json};

use crate::{backends, common::*};

backends!(
    an_application_is_received_with_its_event,
    application_input_is_validated,
    applications_are_listed_with_filters_and_paging,
    status_changes_emit_events,
    applications_are_invisible_to_other_organizations,
    list_query_reads_integers_and_lists_as_documented,
);

async fn events_of(t: &TestApp, kind: &str) -> Vec<Value> {
    jobboard_store::events::list_for_org(t.db(), t.org_id)
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.event_type == kind)
        .map(|e| e.data.0)
        .collect()
}

async fn an_application_is_received_with_its_event(b: Backend) {
    let t = TestApp::spawn(b).await;
    let job = t.insert_job(t.org_id, "Rust Engineer").await;
    let r = t
        .post(
            &format!("/jobs/{job}/applications"),
            json!({
                "name": "Ada Lovelace",
                "email": "ada@example.com",
                "resume_url": "https://example.com/ada.pdf",
                "cover_letter": "Hello",
                "answers": {"years": 5}
            }),
        )
        .await;
    r.expect(201);
    let a = &r.body["data"];
    assert_eq!(a["status"], "new");
    assert_eq!(a["job_id"], job.to_string());
    assert_eq!(a["job_title"], "Rust Engineer");
    assert_eq!(a["answers"]["years"], 5);
    assert!(a["created_at"].as_str().unwrap().ends_with('Z'));
    let id = a["id"].as_str().unwrap();
    let got = t.get(&format!("/applications/{id}")).await;
    got.expect(200);
    assert_eq!(got.body["data"], *a);
    let ev = events_of(&t, "application.received").await;
    assert_eq!(
        ev,
        [
            json!({"application_id": id, "job_id": job, "job_title": "Rust Engineer", "name": "Ada Lovelace", "email": "ada@example.com"})
        ]
    );
    // Optional fields may be left out.
    let r = t
        .post(
            &format!("/jobs/{job}/applications"),
            json!({"name": "Bob", "email": "bob@example.com"}),
        )
        .await;
    r.expect(201);
    assert_eq!(r.body["data"]["resume_url"], Value::Null);
    assert_eq!(r.body["data"]["answers"], Value::Null);
}

async fn application_input_is_validated(b: Backend) {
    let t = TestApp::spawn(b).await;
    let job = t.insert_job(t.org_id, "Designer").await;
    let path = format!("/jobs/{job}/applications");
    let r = t
        .post(
            &path,
            json!({"email": "not-an-email", "resume_url": "ftp://x", "answers": [1], "extra": 1}),
        )
        .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(
        r.error_fields(),
        ["name", "email", "resume_url", "answers", "extra"]
    );
    t.post(&path, json!({"name": "   ", "email": "a@example.com"}))
        .await
        .expect_error(422, "validation_failed");
    let missing = uuid::Uuid::now_v7();
    t.post(
        &format!("/jobs/{missing}/applications"),
        json!({"name": "A", "email": "a@example.com"}),
    )
    .await
    .expect_error(404, "not_found");
    t.post(
        "/jobs/not-a-uuid/applications",
        json!({"name": "A", "email": "a@example.com"}),
    )
    .await
    .expect_error(404, "not_found");
    assert!(events_of(&t, "application.received").await.is_empty());
    t.get("/applications/not-a-uuid")
        .await
        .expect_error(404, "not_found");
}

async fn applications_are_listed_with_filters_and_paging(b: Backend) {
    let t = TestApp::spawn(b).await;
    let j1 = t.insert_job(t.org_id, "One").await;
    let j2 = t.insert_job(t.org_id, "Two").await;
    let mut ids = Vec::new();
    for i in 0..5 {
        let job = if i < 3 { j1 } else { j2 };
        let r = t
            .post(
                &format!("/jobs/{job}/applications"),
                json!({"name": format!("N{i}"), "email": format!("n{i}@example.com")}),
            )
            .await;
        ids.push(r.body["data"]["id"].as_str().unwrap().to_string());
    }
    t.patch(
        &format!("/applications/{}", ids[0]),
        json!({"status": "hired"}),
    )
    .await
    .expect(200);
    let r = t.get("/applications").await;
    r.expect(200);
    let listed: Vec<&str> = r.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap())
        .collect();
    let mut newest_first = ids.clone();
    newest_first.reverse();
    assert_eq!(listed, newest_first);
    assert_eq!(
        r.body["meta"]["pagination"],
        json!({"current_page": 1, "per_page": 20, "total_items": 5, "total_pages": 1, "has_more": false})
    );
    let r = t.get(&format!("/applications?job_id={j1}")).await;
    assert_eq!(r.body["data"].as_array().unwrap().len(), 3);
    assert_eq!(r.body["meta"]["filters"]["job_id"], j1.to_string());
    let r = t.get("/applications?status=hired,rejected").await;
    assert_eq!(r.body["data"].as_array().unwrap().len(), 1);
    assert_eq!(
        r.body["meta"]["filters"]["status"],
        json!(["hired", "rejected"])
    );
    let r = t.get("/applications?per_page=2&page=2").await;
    assert_eq!(r.body["data"].as_array().unwrap().len(), 2);
    assert_eq!(r.body["meta"]["pagination"]["total_pages"], 3);
    assert_eq!(r.body["meta"]["pagination"]["has_more"], true);
    let r = t.get("/applications?per_page=2&page=9").await;
    assert_eq!(r.body["data"], json!([]));
    assert_eq!(r.body["meta"]["pagination"]["has_more"], false);
    let r = t
        .get("/applications?status=lost&job_id=nope&per_page=0&page=0")
        .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["job_id", "status", "page", "per_page"]);
}

async fn status_changes_emit_events(b: Backend) {
    let t = TestApp::spawn(b).await;
    let job = t.insert_job(t.org_id, "Analyst").await;
    let r = t
        .post(
            &format!("/jobs/{job}/applications"),
            json!({"name": "C", "email": "c@example.com"}),
        )
        .await;
    let id = r.body["data"]["id"].as_str().unwrap().to_string();
    let r = t
        .patch(
            &format!("/applications/{id}"),
            json!({"status": "reviewing"}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["data"]["status"], "reviewing");
    t.patch(
        &format!("/applications/{id}"),
        json!({"status": "reviewing"}),
    )
    .await
    .expect(200);
    t.patch(&format!("/applications/{id}"), json!({"status": "offered"}))
        .await
        .expect(200);
    let ev = events_of(&t, "application.status_changed").await;
    assert_eq!(
        ev,
        [
            json!({"application_id": id, "job_id": job, "previous_status": "new", "status": "reviewing"}),
            json!({"application_id": id, "job_id": job, "previous_status": "reviewing", "status": "offered"}),
        ]
    );
    let r = t
        .patch(
            &format!("/applications/{id}"),
            json!({"status": "promoted"}),
        )
        .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["status"]);
    t.patch(&format!("/applications/{id}"), json!({}))
        .await
        .expect_error(422, "validation_failed");
    t.patch(
        &format!("/applications/{}", uuid::Uuid::now_v7()),
        json!({"status": "new"}),
    )
    .await
    .expect_error(404, "not_found");
}

async fn applications_are_invisible_to_other_organizations(b: Backend) {
    let t = TestApp::spawn(b).await;
    let job = t.insert_job(t.org_id, "Mine").await;
    let r = t
        .post(
            &format!("/jobs/{job}/applications"),
            json!({"name": "D", "email": "d@example.com"}),
        )
        .await;
    let id = r.body["data"]["id"].as_str().unwrap().to_string();
    let (_, other) = t.new_org("Other", "*", 1000, 1000).await;
    t.req(Method::GET, &format!("/applications/{id}"))
        .key(&other)
        .send()
        .await
        .expect_error(404, "not_found");
    t.req(Method::PATCH, &format!("/applications/{id}"))
        .key(&other)
        .json(json!({"status": "hired"}))
        .send()
        .await
        .expect_error(404, "not_found");
    let r = t.req(Method::GET, "/applications").key(&other).send().await;
    assert_eq!(r.body["data"], json!([]));
    // Another organization cannot apply to this organization's job through its key.
    t.req(Method::POST, &format!("/jobs/{job}/applications"))
        .key(&other)
        .json(json!({"name": "E", "email": "e@example.com"}))
        .send()
        .await
        .expect_error(404, "not_found");
    let mine = t.get(&format!("/applications/{id}")).await;
    assert_eq!(mine.body["data"]["status"], "new");
}

async fn list_query_reads_integers_and_lists_as_documented(b: Backend) {
    let t = TestApp::spawn(b).await;
    let job = t.insert_job(t.org_id, "Paged").await;
    for i in 0..3 {
        t.post(
            &format!("/jobs/{job}/applications"),
            json!({"name": format!("P{i}"), "email": format!("p{i}@example.com")}),
        )
        .await
        .expect(201);
    }
    // Integers are written with digits only (`2.0` and `2e0` are refused: see
    // clients.rs).
    let r = t.get("/applications?page=2&per_page=2").await;
    r.expect(200);
    assert_eq!(r.body["data"].as_array().unwrap().len(), 1);
    // The keys come in the documented order.
    assert!(
        r.text.starts_with(r#"{"data":[{"id":"#)
            && r.text.contains(
                r#""meta":{"pagination":{"current_page":2,"per_page":2,"total_items":3,"total_pages":2,"has_more":false},"filters":{"job_id":null,"status":[]}}}"#
            ),
        "{}",
        r.text
    );
    let codes = |r: &Resp| -> Vec<String> {
        r.body["error"]["details"]["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                format!(
                    "{}:{}",
                    f["field"].as_str().unwrap(),
                    f["code"].as_str().unwrap()
                )
            })
            .collect()
    };
    // A fraction is not an integer; an integer past the maximum (even past 64 bits) is
    // out of range.
    let r = t
        .get("/applications?page=99999999999999999999&per_page=2.5")
        .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(codes(&r), ["page:out_of_range", "per_page:invalid_type"]);
    let r = t.get("/applications?page=1000001").await;
    assert_eq!(codes(&r), ["page:out_of_range"]);
    t.get("/applications?page=1000000").await.expect(200);
    // At most the six statuses; each status is one of them.
    let r = t
        .get("/applications?status=new,new,new,new,new,new,new")
        .await;
    assert_eq!(codes(&r), ["status:too_long"]);
    let r = t.get("/applications?status=new,reviewing,hired").await;
    r.expect(200);
    assert_eq!(
        r.body["meta"]["filters"]["status"],
        json!(["new", "reviewing", "hired"])
    );
}
