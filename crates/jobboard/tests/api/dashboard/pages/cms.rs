//! The CMS pages: collections and the review queue of submitted items.

use serde_json::json;

use super::*;
use crate::backends;

backends!(cms_collections_and_the_review_queue);

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
