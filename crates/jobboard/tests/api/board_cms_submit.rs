//! `/c/<collection>/submit`: the board's submission form of a public collection whose
//! rules allow submissions, made from its schema; a submission is stored as the keyless
//! API stores it (moderated or published), problems are shown beside their fields, and a
//! refused one stores nothing. The list page links to the form, and shows the collection
//! in its `sort_by` order.

use serde_json::{Value, json};

use crate::{
    backends,
    board::{post_form, sel},
    common::*,
};

backends!(
    the_form_is_made_from_the_schema,
    a_submission_is_moderated_or_listed,
    problems_are_shown_beside_their_fields,
    refused_submissions_store_nothing,
    only_open_public_collections_have_a_form,
    the_list_page_follows_the_sort_rules,
);

async fn collection(t: &TestApp, slug: &str, visibility: &str, rules: Value) {
    let r = t
        .post(
            "/cms",
            json!({"slug": slug, "name": "Community events", "visibility": visibility, "rules": rules, "schema": [
                {"name": "title", "type": "text", "required": true, "max_length": 80},
                {"name": "summary", "type": "longtext"},
                {"name": "seats", "type": "number", "min": 1, "max": 500},
                {"name": "free_entry", "type": "boolean"},
                {"name": "on", "type": "date", "required": true},
                {"name": "site", "type": "url"},
                {"name": "kind", "type": "select", "options": ["talk", "workshop"]},
                {"name": "reference_code", "type": "text"},
            ]}),
        )
        .await;
    assert!(r.status.is_success(), "{}", r.text);
}

async fn token(t: &TestApp, slug: &str) -> String {
    let r = t.page(&format!("/c/{slug}/submit")).await;
    r.expect(200);
    let doc = r.html();
    doc.select(&sel("input[name=_token]"))
        .next()
        .expect("a token")
        .value()
        .attr("value")
        .unwrap()
        .to_string()
}

async fn send(t: &TestApp, slug: &str, fields: &[(&str, &str)]) -> Resp {
    post_form(t, &format!("/c/{slug}/submit"), fields, &[]).await
}

async fn stored(t: &TestApp, slug: &str, status: &str) -> Vec<Value> {
    let r = t.get(&format!("/cms/{slug}?status={status}")).await;
    r.expect(200);
    r.body["items"].as_array().unwrap().clone()
}

async fn the_form_is_made_from_the_schema(b: Backend) {
    let t = TestApp::spawn(b).await;
    collection(&t, "events", "public", json!({"allow_public_submit": true})).await;
    let r = t.page("/c/events/submit").await;
    r.expect(200);
    assert_eq!(r.header("cache-control"), Some("private, no-store"));
    let doc = r.html();
    let control = |name: &str| {
        doc.select(&sel(&format!("[name=data_{name}]")))
            .next()
            .unwrap_or_else(|| panic!("a control for {name}"))
    };
    assert_eq!(control("title").value().attr("type"), Some("text"));
    assert_eq!(control("title").value().attr("maxlength"), Some("80"));
    assert!(control("title").value().attr("required").is_some());
    assert_eq!(control("summary").value().name(), "textarea");
    assert_eq!(control("seats").value().attr("type"), Some("number"));
    assert_eq!(control("seats").value().attr("min"), Some("1"));
    assert_eq!(control("seats").value().attr("max"), Some("500"));
    assert_eq!(control("free_entry").value().attr("type"), Some("checkbox"));
    assert_eq!(control("on").value().attr("type"), Some("date"));
    assert_eq!(control("site").value().attr("type"), Some("url"));
    assert_eq!(control("kind").value().name(), "select");
    let options: Vec<_> = doc
        .select(&sel("select[name=data_kind] option"))
        .map(|o| o.value().attr("value").unwrap().to_string())
        .collect();
    assert_eq!(options, ["", "talk", "workshop"]);
    // Every control has its label; the schema's own `reference_code` field does not meet
    // the form's trap field.
    for input in doc.select(&sel("form [name^=data_]")) {
        let id = input.value().attr("id").unwrap();
        assert_eq!(
            doc.select(&sel(&format!("label[for='{id}']"))).count(),
            1,
            "{id}"
        );
    }
    assert_eq!(doc.select(&sel("[name=reference_code]")).count(), 1);
    assert_eq!(doc.select(&sel("[name=data_reference_code]")).count(), 1);
    assert_eq!(
        doc.select(&sel("label[for=f-data_free_entry]"))
            .next()
            .unwrap()
            .text()
            .collect::<String>()
            .trim(),
        "Free entry"
    );
    assert!(
        r.text
            .contains("Entries are checked before they are listed.")
    );
    // The list page links to it.
    let list = t.page("/c/events").await.html();
    let link = list.select(&sel("a[href='/c/events/submit']")).next();
    assert!(link.is_some(), "the list offers the form");
}

async fn a_submission_is_moderated_or_listed(b: Backend) {
    let t = TestApp::spawn(b).await;
    collection(&t, "events", "public", json!({"allow_public_submit": true})).await;
    let tok = token(&t, "events").await;
    let r = send(
        &t,
        "events",
        &[
            ("_token", &tok),
            ("reference_code", ""),
            ("data_title", "Rust <b>night</b>"),
            ("data_summary", "Talks\nand pizza"),
            ("data_seats", "40"),
            ("data_free_entry", "on"),
            ("data_on", "2026-12-01"),
            ("data_site", "https://rust.example/night"),
            ("data_kind", "talk"),
            ("data_reference_code", "R-7"),
            ("status", "published"),
        ],
    )
    .await;
    r.expect(303);
    assert_eq!(r.header("location"), Some("/c/events/submit?sent=1"));
    let pending = stored(&t, "events", "pending_review").await;
    assert_eq!(pending.len(), 1);
    assert_eq!(
        pending[0]["data"],
        json!({"title": "Rust <b>night</b>", "summary": "Talks\nand pizza", "seats": 40, "free_entry": true,
               "on": "2026-12-01", "site": "https://rust.example/night", "kind": "talk", "reference_code": "R-7"})
    );
    let done = t.page("/c/events/submit?sent=1").await;
    assert!(
        done.text
            .contains("It will be listed as soon as it has been checked.")
    );
    // Not on the public page until staff publish it.
    let list = t.page("/c/events").await.html();
    assert_eq!(list.select(&sel("ol.cms-items li")).count(), 0);
    let id = pending[0]["id"].as_str().unwrap();
    t.patch(&format!("/cms/events/{id}"), json!({"status": "published"}))
        .await
        .expect(200);
    let list = t.page("/c/events").await.html();
    let shown: Vec<String> = list
        .select(&sel("ol.cms-items li h2 a"))
        .map(|a| a.text().collect())
        .collect();
    assert_eq!(shown, ["Rust <b>night</b>"], "listed, as text");
    assert_eq!(list.select(&sel("ol.cms-items b")).count(), 0, "escaped");

    // Under auto moderation it is listed at once.
    collection(&t, "events", "public", json!({"moderation": "auto"})).await;
    let tok = token(&t, "events").await;
    send(
        &t,
        "events",
        &[
            ("_token", &tok),
            ("data_title", "Open day"),
            ("data_on", "2026-12-24"),
        ],
    )
    .await
    .expect(303);
    let done = t.page("/c/events/submit?sent=1").await;
    assert!(done.text.contains("It is listed now."));
    let list = t.page("/c/events").await;
    assert!(list.text.contains("Open day"));
    let published = stored(&t, "events", "published").await;
    let open_day = published
        .iter()
        .find(|i| i["data"]["title"] == "Open day")
        .unwrap();
    assert_eq!(
        open_day["data"]["free_entry"], false,
        "an unticked box is false"
    );
}

async fn problems_are_shown_beside_their_fields(b: Backend) {
    let t = TestApp::spawn(b).await;
    collection(&t, "events", "public", json!({"allow_public_submit": true})).await;
    let tok = token(&t, "events").await;
    let r = send(
        &t,
        "events",
        &[
            ("_token", &tok),
            ("data_title", ""),
            ("data_seats", "many"),
            ("data_on", "next week"),
            ("data_site", "javascript:alert(1)"),
            ("data_kind", "party"),
        ],
    )
    .await;
    r.expect(422);
    let doc = r.html();
    let mut invalid: Vec<String> = doc
        .select(&sel(".field.invalid [aria-invalid=true]"))
        .map(|e| e.value().attr("name").unwrap().to_string())
        .collect();
    invalid.sort();
    assert_eq!(
        invalid,
        [
            "data_kind",
            "data_on",
            "data_seats",
            "data_site",
            "data_title"
        ]
    );
    for name in &invalid {
        let msg = doc
            .select(&sel(&format!("#e-f-{name}, #e-{name}")))
            .next()
            .unwrap()
            .text()
            .collect::<String>();
        assert!(!msg.trim().is_empty(), "a message beside {name}");
    }
    let summary: Vec<_> = doc
        .select(&sel(".notice.error li a"))
        .map(|a| a.value().attr("href").unwrap().to_string())
        .collect();
    assert_eq!(summary.len(), 5);
    assert!(
        summary.iter().all(|h| h.starts_with("#f-data_")),
        "{summary:?}"
    );
    assert!(r.text.contains("5 fields need a correction"));
    // What was typed is kept.
    assert_eq!(
        doc.select(&sel("#f-data_seats"))
            .next()
            .unwrap()
            .value()
            .attr("value"),
        Some("many")
    );
    assert!(stored(&t, "events", "pending_review").await.is_empty());
}

async fn refused_submissions_store_nothing(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.form_limit = 3).await;
    collection(&t, "events", "public", json!({"allow_public_submit": true})).await;
    let tok = token(&t, "events").await;
    let good = |tok: &str| {
        vec![
            ("_token".to_string(), tok.to_string()),
            ("data_title".to_string(), "Meetup".to_string()),
            ("data_on".to_string(), "2026-12-01".to_string()),
        ]
    };
    let send_owned = |fields: Vec<(String, String)>, headers: Vec<(&'static str, String)>| {
        let t = &t;
        async move {
            let f: Vec<(&str, &str)> = fields
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            let h: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
            post_form(t, "/c/events/submit", &f, &h).await
        }
    };
    // The trap field, a missing token, another site.
    let mut trapped = good(&tok);
    trapped.push(("reference_code".into(), "BUY".into()));
    send_owned(trapped, vec![]).await.expect(400);
    let mut none = good(&tok);
    none.remove(0);
    let r = send_owned(none, vec![]).await;
    r.expect(403);
    assert_eq!(
        r.html()
            .select(&sel("#f-data_title"))
            .next()
            .unwrap()
            .value()
            .attr("value"),
        Some("Meetup"),
        "what was typed is kept"
    );
    send_owned(good(&tok), vec![("origin", "https://evil.example".into())])
        .await
        .expect(403);
    // A token of another collection's form does not open this one.
    collection(&t, "talks", "public", json!({"allow_public_submit": true})).await;
    let other = token(&t, "talks").await;
    send_owned(good(&other), vec![]).await.expect(403);
    assert!(stored(&t, "events", "pending_review").await.is_empty());
    // The per-address limit (3 a minute, counted once the token is good and the trap
    // empty).
    for _ in 0..3 {
        send_owned(good(&tok), vec![]).await.expect(303);
    }
    let r = send_owned(good(&tok), vec![]).await;
    r.expect(429);
    assert!(r.header("retry-after").is_some());
    assert_eq!(stored(&t, "events", "pending_review").await.len(), 3);
}

async fn only_open_public_collections_have_a_form(b: Backend) {
    let t = TestApp::spawn(b).await;
    collection(&t, "closed", "public", json!({})).await;
    collection(&t, "gated", "gated", json!({"allow_public_submit": true})).await;
    for slug in ["closed", "gated", "missing"] {
        t.page(&format!("/c/{slug}/submit")).await.expect(404);
        post_form(
            &t,
            &format!("/c/{slug}/submit"),
            &[("data_title", "x")],
            &[],
        )
        .await
        .expect(404);
    }
    let list = t.page("/c/closed").await.html();
    assert_eq!(list.select(&sel("a[href='/c/closed/submit']")).count(), 0);
    // Another board's open collection is not this board's.
    let org = jobboard_domain::orgs::create_with(t.db(), "Second", Some("jobs.example.test"))
        .await
        .unwrap();
    let key = t.new_key(org.id, "*", 1000, 1000).await;
    t.req(reqwest::Method::POST, "/cms")
        .key(&key)
        .json(json!({"slug": "theirs", "name": "Theirs", "schema": [{"name": "title", "type": "text"}],
                     "rules": {"allow_public_submit": true}}))
        .send()
        .await
        .expect(201);
    t.page("/c/theirs/submit").await.expect(404);
    let r = Resp::read(
        t.page_req(reqwest::Method::GET, "/c/theirs/submit")
            .header("host", "jobs.example.test")
            .send()
            .await
            .unwrap(),
    )
    .await;
    r.expect(200);
}

async fn the_list_page_follows_the_sort_rules(b: Backend) {
    let t = TestApp::spawn(b).await;
    collection(
        &t,
        "events",
        "public",
        json!({"sort_by": "created_at", "sort_dir": "desc"}),
    )
    .await;
    for title in ["first", "second", "third"] {
        t.post(
            "/cms/events",
            json!({"data": {"title": title, "on": "2026-12-01"}}),
        )
        .await
        .expect(201);
    }
    let titles = |doc: scraper::Html| -> Vec<String> {
        doc.select(&sel("ol.cms-items li h2 a"))
            .map(|a| a.text().collect::<String>())
            .collect()
    };
    assert_eq!(
        titles(t.page("/c/events").await.html()),
        ["third", "second", "first"]
    );
    collection(&t, "events", "public", json!({"sort_dir": "asc"})).await;
    assert_eq!(
        titles(t.page("/c/events").await.html()),
        ["first", "second", "third"]
    );
}
