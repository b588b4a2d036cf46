//! A job after its creation: approval and other changes by PATCH with their events, expiry
//! by the scheduler, deletion, and other organizations' jobs out of reach.

use reqwest::Method;
use serde_json::{Value, json};

use super::*;
use crate::backends;

backends!(
    pending_job_approved_with_patch_appears_in_list,
    patch_updates_fields_and_validates,
    patch_status_moves_emit_events,
    expired_job_leaves_the_list_by_itself,
    concurrent_schedulers_expire_each_job_once,
    delete_removes_the_job,
    delete_of_a_referenced_job_is_a_conflict,
    other_organizations_jobs_are_invisible,
);

async fn pending_job_approved_with_patch_appears_in_list(b: Backend) {
    let t = TestApp::spawn(b).await;
    let id = create(&t, job("Night Nurse")).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(t.get("/jobs").await.body["data"], json!([]));
    let r = t
        .patch(&format!("/jobs/{id}"), json!({"status": "active"}))
        .await;
    r.expect(200);
    let d = &r.body["data"];
    assert_eq!(d["status"], "active");
    assert_eq!(d["id"], id.as_str());
    let mut keys: Vec<&str> = d.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "company_name",
            "id",
            "is_remote",
            "location",
            "status",
            "title",
            "updated_at"
        ]
    );
    let r = t.get("/jobs").await;
    assert_eq!(titles(&r), ["Night Nurse"]);
    assert_eq!(r.body["meta"]["pagination"]["total_items"], 1);

    let ev = events(&t, t.org_id).await;
    let names: Vec<&str> = ev.iter().map(|e| e.0.as_str()).collect();
    assert_eq!(
        names,
        [
            "job.created",
            "job.updated",
            "job.status_changed",
            "job.approved"
        ]
    );
    assert_eq!(ev[1].1["changed"], json!(["status"]));
    assert_eq!(ev[1].1["status"], "active");
    assert_eq!(ev[1].1["url"], "/jobs/night-nurse-acme");
    assert_eq!(
        ev[2].1,
        json!({"job_id": id, "title": "Night Nurse", "company_name": "Acme",
               "previous_status": "pending", "status": "active"})
    );
    assert_eq!(
        ev[3].1,
        json!({"job_id": id, "title": "Night Nurse", "company_name": "Acme", "status": "active"})
    );
}

async fn patch_updates_fields_and_validates(b: Backend) {
    let t = TestApp::spawn(b).await;
    let id = create_active(&t, "Baker", json!({"salary_min": 100, "salary_max": 200})).await;
    let path = format!("/jobs/{id}");
    let before = t.get(&path).await.body["data"].clone();

    t.patch(&path, json!({}))
        .await
        .expect_error(422, "validation_failed");
    let r = t
        .patch(
            &path,
            json!({"title": "", "description": "", "status": "gone", "is_remote": null, "company_name": null, "typo": 1}),
        )
        .await;
    r.expect_error(422, "validation_failed");
    let mut f = r.error_fields();
    f.sort();
    assert_eq!(
        f,
        [
            "company_name",
            "description",
            "is_remote",
            "status",
            "title",
            "typo"
        ]
    );
    // Cross-field checks use the stored values.
    let r = t.patch(&path, json!({"salary_min": 300})).await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["salary_min"]);
    let r = t
        .patch(&path, json!({"category_id": uuid::Uuid::now_v7()}))
        .await;
    assert_eq!(r.error_fields(), ["category_id"]);
    t.patch(
        &format!("/jobs/{}", uuid::Uuid::now_v7()),
        json!({"title": "x"}),
    )
    .await
    .expect_error(404, "not_found");
    t.patch("/jobs/not-a-uuid", json!({"title": "x"}))
        .await
        .expect_error(404, "not_found");
    assert_eq!(
        t.get(&path).await.body["data"],
        before,
        "failed patches change nothing"
    );

    let r = t
        .patch(
            &path,
            json!({"title": "Head Baker", "description": "<i>Bread</i><script>x</script>",
                   "location": "Lyon", "is_remote": true, "salary_max": null,
                   "job_type": "full-time"}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["data"]["title"], "Head Baker");
    assert_eq!(r.body["data"]["location"], "Lyon");
    assert_eq!(r.body["data"]["is_remote"], true);
    let after = t.get(&path).await.body["data"].clone();
    assert_eq!(after["description"], "<i>Bread</i>");
    assert_eq!(after["description_text"], "Bread");
    assert_eq!(after["salary_max"], Value::Null);
    assert_eq!(after["salary_min"].as_f64(), Some(100.0));
    assert_eq!(after["slug"], before["slug"], "the slug is stable");
    assert_eq!(after["created_at"], before["created_at"]);
    assert_ne!(after["updated_at"], before["updated_at"]);
    assert_eq!(r.body["data"]["updated_at"], after["updated_at"]);

    let ev = events(&t, t.org_id).await;
    assert_eq!(ev.len(), 2);
    assert_eq!(ev[1].0, "job.updated");
    assert_eq!(
        ev[1].1["changed"],
        json!([
            "title",
            "description",
            "job_type",
            "location",
            "is_remote",
            "salary_max"
        ])
    );
    assert_eq!(ev[1].1["title"], "Head Baker");
    assert_eq!(ev[1].1["location"], "Lyon");

    // A patch that changes nothing writes nothing.
    let r = t.patch(&path, json!({"title": "Head Baker"})).await;
    r.expect(200);
    assert_eq!(r.body["data"]["updated_at"], after["updated_at"]);
    assert_eq!(events(&t, t.org_id).await.len(), 2);
}

async fn patch_status_moves_emit_events(b: Backend) {
    let t = TestApp::spawn(b).await;
    let id = create_active(&t, "Pilot", json!({})).await;
    let path = format!("/jobs/{id}");
    for s in ["draft", "expired", "pending", "active"] {
        t.patch(&path, json!({"status": s})).await.expect(200);
    }
    let ev = events(&t, t.org_id).await;
    let names: Vec<&str> = ev.iter().map(|e| e.0.as_str()).collect();
    assert_eq!(
        names,
        [
            "job.created",
            "job.updated",
            "job.status_changed",
            "job.updated",
            "job.status_changed",
            "job.expired",
            "job.updated",
            "job.status_changed",
            "job.updated",
            "job.status_changed",
            "job.approved",
        ]
    );
    let prev: Vec<(&str, &str)> = ev
        .iter()
        .filter(|e| e.0 == "job.status_changed")
        .map(|e| {
            (
                e.1["previous_status"].as_str().unwrap(),
                e.1["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        prev,
        [
            ("active", "draft"),
            ("draft", "expired"),
            ("expired", "pending"),
            ("pending", "active")
        ]
    );
    assert_eq!(
        ev[5].1,
        json!({"job_id": id, "title": "Pilot", "company_name": "Acme", "status": "expired"})
    );
    assert_eq!(titles(&t.get("/jobs").await), ["Pilot"]);
}

async fn expired_job_leaves_the_list_by_itself(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.scheduler = false).await;
    let id = create_active(
        &t,
        "Short gig",
        json!({"expires_at": "2099-01-01T00:00:00Z"}),
    )
    .await;
    create_active(&t, "Long gig", json!({})).await;
    assert_eq!(titles(&t.get("/jobs").await), ["Long gig", "Short gig"]);
    // Its moment passes: it leaves the list at once, before the scheduler has run.
    let past = jobboard_store::Ts::now().plus(chrono::Duration::seconds(-1));
    t.patch(
        &format!("/jobs/{id}"),
        json!({"expires_at": past.to_rfc3339()}),
    )
    .await
    .expect(200);
    let r = t.get("/jobs").await;
    assert_eq!(titles(&r), ["Long gig"]);
    assert_eq!(r.body["meta"]["pagination"]["total_items"], 1);
    // Still stored as active until the scheduler runs; then expired, with its events, once.
    let path = format!("/jobs/{id}");
    assert_eq!(t.get(&path).await.body["data"]["status"], "active");
    assert_eq!(jobboard::scheduler::tick(&t.app).await, 1);
    assert_eq!(jobboard::scheduler::tick(&t.app).await, 0);
    let j = t.get(&path).await.body["data"].clone();
    assert_eq!(j["status"], "expired");
    assert_eq!(titles(&t.get("/jobs?status=expired").await), ["Short gig"]);
    assert_eq!(titles(&t.get("/jobs").await), ["Long gig"]);
    let ev = events(&t, t.org_id).await;
    let names: Vec<&str> = ev.iter().map(|e| e.0.as_str()).collect();
    assert_eq!(
        names,
        [
            "job.created",
            "job.created",
            "job.updated",
            "job.status_changed",
            "job.expired"
        ]
    );
    assert_eq!(ev[2].1["changed"], json!(["expires_at"]));
    assert_eq!(
        ev[3].1,
        json!({"job_id": id, "title": "Short gig", "company_name": "Acme",
               "previous_status": "active", "status": "expired"})
    );
    assert_eq!(
        ev[4].1,
        json!({"job_id": id, "title": "Short gig", "company_name": "Acme", "status": "expired"})
    );
}

async fn concurrent_schedulers_expire_each_job_once(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.scheduler = false).await;
    for i in 0..12 {
        create_active(
            &t,
            &format!("Due {i}"),
            json!({"expires_at": "2001-01-01T00:00:00Z"}),
        )
        .await;
    }
    create_active(&t, "Live", json!({})).await;
    // Several nodes' schedulers running at once (on PostgreSQL, truly concurrently).
    let (a, b2, c) = tokio::join!(
        jobboard::scheduler::tick(&t.app),
        jobboard::scheduler::tick(&t.app),
        jobboard::scheduler::tick(&t.app)
    );
    assert_eq!(a + b2 + c, 12);
    let ev = events(&t, t.org_id).await;
    let expired = ev.iter().filter(|e| e.0 == "job.expired").count();
    let changed = ev.iter().filter(|e| e.0 == "job.status_changed").count();
    assert_eq!((expired, changed), (12, 12));
    let r = t.get("/jobs?status=expired").await;
    assert_eq!(r.body["meta"]["pagination"]["total_items"], 12);
    assert_eq!(titles(&t.get("/jobs").await), ["Live"]);
}

async fn delete_removes_the_job(b: Backend) {
    let t = TestApp::spawn(b).await;
    let id = create_active(&t, "Miner", json!({})).await;
    create_active(&t, "Smith", json!({})).await;
    let path = format!("/jobs/{id}");
    let r = t.delete(&path).await;
    r.expect(200);
    assert_eq!(r.body, json!({"data": {"id": id, "deleted": true}}));
    t.get(&path).await.expect_error(404, "not_found");
    t.delete(&path).await.expect_error(404, "not_found");
    t.delete("/jobs/xyz").await.expect_error(404, "not_found");
    let r = t.get("/jobs").await;
    assert_eq!(titles(&r), ["Smith"]);
    assert_eq!(r.body["meta"]["pagination"]["total_items"], 1);
    assert_eq!(t.get("/jobs?search=miner").await.body["data"], json!([]));
    let ev = events(&t, t.org_id).await;
    assert_eq!(ev.last().unwrap().0, "job.deleted");
    assert_eq!(
        ev.last().unwrap().1,
        json!({"job_id": id, "title": "Miner", "company_name": "Acme", "status": "active"})
    );
}

async fn delete_of_a_referenced_job_is_a_conflict(b: Backend) {
    let t = TestApp::spawn(b).await;
    let id = create_active(&t, "Referenced", json!({})).await;
    // A table of another resource that refers to jobs, as payments do.
    let ddl = match b {
        Backend::Sqlite => "CREATE TABLE job_refs (job_id BLOB NOT NULL REFERENCES jobs(id))",
        Backend::Postgres => "CREATE TABLE job_refs (job_id UUID NOT NULL REFERENCES jobs(id))",
    };
    let job_id: uuid::Uuid = id.parse().unwrap();
    jobboard_store::dispatch!(t.db().writer(), p => {
        sqlx::query(ddl).execute(p).await.unwrap();
        sqlx::query("INSERT INTO job_refs (job_id) VALUES ($1)")
            .bind(job_id)
            .execute(p)
            .await
            .unwrap();
    });
    t.delete(&format!("/jobs/{id}"))
        .await
        .expect_error(409, "conflict");
    assert_eq!(titles(&t.get("/jobs").await), ["Referenced"]);
    let ev = events(&t, t.org_id).await;
    assert_eq!(ev.len(), 1, "no job.deleted for a delete that failed");
}

async fn other_organizations_jobs_are_invisible(b: Backend) {
    let t = TestApp::spawn(b).await;
    let (other_org, other) = t.new_org("Other", "*", 1000, 1000).await;
    let r = t
        .req(Method::POST, "/jobs")
        .key(&other)
        .json(json!({"title": "Secret", "description": "x", "company_name": "Them", "status": "active"}))
        .send()
        .await;
    r.expect(201);
    assert_eq!(r.body["meta"]["organization_id"], other_org.0);
    let id = r.body["data"]["id"].as_str().unwrap().to_string();
    let cat = t
        .req(Method::POST, "/categories")
        .key(&other)
        .json(json!({"name": "Theirs"}))
        .send()
        .await
        .body["data"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let path = format!("/jobs/{id}");
    t.get(&path).await.expect_error(404, "not_found");
    t.patch(&path, json!({"status": "draft"}))
        .await
        .expect_error(404, "not_found");
    t.delete(&path).await.expect_error(404, "not_found");
    for q in ["", "?status=all", "?search=secret"] {
        let r = t.get(&format!("/jobs{q}")).await;
        assert_eq!(r.body["data"], json!([]), "{q}");
        assert_eq!(r.body["meta"]["pagination"]["total_items"], 0, "{q}");
    }
    let mut body = job("Mine");
    body["category_id"] = json!(cat);
    assert_eq!(t.post("/jobs", body).await.error_fields(), ["category_id"]);
    t.get(&format!("/jobs?categories={cat}"))
        .await
        .expect_error(422, "validation_failed");
    // Their job is untouched and theirs alone.
    let r = t.req(Method::GET, &path).key(&other).send().await;
    r.expect(200);
    assert_eq!(r.body["data"]["status"], "active");
    assert!(events(&t, t.org_id).await.is_empty());
    assert_eq!(events(&t, other_org).await.len(), 1);
}
