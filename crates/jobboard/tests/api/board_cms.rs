//! `/c/<collection>` and `/c/<collection>/<id>`: the public list of a public CMS
//! collection rendered from its schema, escaped, with links and images only where safe;
//! gated and private collections and items outside their window are 404.

use serde_json::{Value, json};

use crate::{backends, board::sel, common::*};

backends!(
    a_public_collection_is_a_page,
    only_public_live_items_are_shown,
    a_write_shows_on_the_next_page,
);

async fn collection(t: &TestApp, slug: &str, visibility: &str) {
    t.post(
        "/cms",
        json!({"slug": slug, "name": "Partner events", "visibility": visibility, "schema": [
            {"name": "title", "type": "text", "required": true},
            {"name": "summary", "type": "longtext"},
            {"name": "seats", "type": "number"},
            {"name": "free", "type": "boolean"},
            {"name": "on", "type": "date"},
            {"name": "site", "type": "url"},
            {"name": "poster", "type": "image"},
            {"name": "kind", "type": "select", "options": ["talk", "workshop"]},
        ]}),
    )
    .await
    .expect(201);
}

async fn item(t: &TestApp, slug: &str, body: Value) -> String {
    let r = t.post(&format!("/cms/{slug}"), body).await;
    r.expect(201);
    r.body["item"]["id"].as_str().unwrap().to_string()
}

fn text(doc: &scraper::Html, css: &str) -> Vec<String> {
    doc.select(&sel(css))
        .map(|e| e.text().collect::<String>().trim().to_string())
        .collect()
}

async fn a_public_collection_is_a_page(b: Backend) {
    let t = TestApp::spawn(b).await;
    collection(&t, "events", "public").await;
    let id = item(
        &t,
        "events",
        json!({"data": {
            "title": "<script>alert(1)</script> Rust meetup",
            "summary": "Line one\nLine two",
            "seats": 40,
            "free": true,
            "on": "2026-12-01",
            "site": "https://meetup.example/rust",
            "poster": "https://img.example/poster.png",
            "kind": "talk"
        }}),
    )
    .await;
    let r = t.page("/c/events").await;
    r.expect(200);
    assert!(r.header("etag").is_some());
    let doc = r.html();
    assert_eq!(text(&doc, "main h1"), ["Partner events"]);
    // Escaped: the title is text, no script element came from it.
    assert_eq!(
        text(&doc, "ol.cms-items h2 a"),
        ["<script>alert(1)</script> Rust meetup"]
    );
    assert_eq!(doc.select(&sel("main script")).count(), 0);
    let link = doc.select(&sel("ol.cms-items h2 a")).next().unwrap();
    assert_eq!(
        link.value().attr("href"),
        Some(format!("/c/events/{id}").as_str())
    );

    let r = t.page(&format!("/c/events/{id}")).await;
    r.expect(200);
    let doc = r.html();
    assert_eq!(
        text(&doc, "main h1"),
        ["<script>alert(1)</script> Rust meetup"]
    );
    let facts: Vec<(String, String)> = doc
        .select(&sel("dl.facts-list > div"))
        .map(|d| {
            let dt = d
                .select(&sel("dt"))
                .next()
                .unwrap()
                .text()
                .collect::<String>();
            let dd = d
                .select(&sel("dd"))
                .next()
                .unwrap()
                .text()
                .collect::<String>();
            (dt, dd)
        })
        .collect();
    let want: Vec<(String, String)> = [
        ("summary", "Line one\nLine two"),
        ("seats", "40"),
        ("free", "Yes"),
        ("on", "2026-12-01"),
        ("site", "https://meetup.example/rust"),
        ("poster", ""),
        ("kind", "talk"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(facts, want);
    let a = doc.select(&sel("dd a")).next().unwrap();
    assert_eq!(a.value().attr("href"), Some("https://meetup.example/rust"));
    let img = doc.select(&sel("dd img")).next().unwrap();
    assert_eq!(
        img.value().attr("src"),
        Some("https://img.example/poster.png")
    );
    assert_eq!(img.value().attr("alt"), Some("poster"));
}

async fn only_public_live_items_are_shown(b: Backend) {
    let t = TestApp::spawn(b).await;
    collection(&t, "events", "public").await;
    collection(&t, "members-only", "gated").await;
    collection(&t, "internal", "private").await;
    let live = item(&t, "events", json!({"data": {"title": "Live"}})).await;
    let draft = item(
        &t,
        "events",
        json!({"data": {"title": "Draft"}, "status": "draft"}),
    )
    .await;
    let later = item(
        &t,
        "events",
        json!({"data": {"title": "Later"}, "starts_at": "2999-01-01T00:00:00Z"}),
    )
    .await;
    let over = item(
        &t,
        "events",
        json!({"data": {"title": "Over"}, "starts_at": "2001-01-01T00:00:00Z", "expires_at": "2002-01-01T00:00:00Z"}),
    )
    .await;
    let doc = t.page("/c/events").await.html();
    assert_eq!(text(&doc, "ol.cms-items h2 a"), ["Live"]);
    t.page(&format!("/c/events/{live}")).await.expect(200);
    for id in [&draft, &later, &over] {
        t.page(&format!("/c/events/{id}")).await.expect(404);
    }
    let gated = item(&t, "members-only", json!({"data": {"title": "G"}})).await;
    let private = item(&t, "internal", json!({"data": {"title": "P"}})).await;
    t.page("/c/members-only").await.expect(404);
    t.page(&format!("/c/members-only/{gated}"))
        .await
        .expect(404);
    t.page("/c/internal").await.expect(404);
    t.page(&format!("/c/internal/{private}")).await.expect(404);
    t.page("/c/no-such").await.expect(404);
    t.page("/c/events/not-an-id").await.expect(404);
    // Another organization's item, by its id, on this board.
    let (_, other_key) = t.new_org("Other", "*", 1000, 1000).await;
    let r = t
        .req(reqwest::Method::POST, "/cms")
        .key(&other_key)
        .json(json!({"slug": "events", "name": "Theirs", "schema": [{"name": "title", "type": "text"}]}))
        .send()
        .await;
    r.expect(201);
    let r = t
        .req(reqwest::Method::POST, "/cms/events")
        .key(&other_key)
        .json(json!({"data": {"title": "Theirs"}}))
        .send()
        .await;
    let theirs = r.body["item"]["id"].as_str().unwrap().to_string();
    t.page(&format!("/c/events/{theirs}")).await.expect(404);
    t.page("/c/events?page=0").await.expect(400);
}

async fn a_write_shows_on_the_next_page(b: Backend) {
    let t = TestApp::spawn(b).await;
    collection(&t, "events", "public").await;
    item(&t, "events", json!({"data": {"title": "First"}})).await;
    assert_eq!(
        text(&t.page("/c/events").await.html(), "ol.cms-items h2 a"),
        ["First"]
    );
    // Served from the page cache, and changed by the next write at once.
    item(&t, "events", json!({"data": {"title": "Second"}})).await;
    assert_eq!(
        text(&t.page("/c/events").await.html(), "ol.cms-items h2 a"),
        ["Second", "First"]
    );
}
