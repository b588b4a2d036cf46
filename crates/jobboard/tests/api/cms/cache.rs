//! HTTP and server caching: ETags and `304 Not Modified`, `Cache-Control` by visibility, reads
//! served from the cache, and a cache never stale after a write on this node or another.

use jobboard::server::{self, App};
use jobboard_domain::cms as store;
use jobboard_store::Ts;
use reqwest::Method;
use serde_json::{Value, json};

use super::*;
use crate::backends;

backends!(
    etag_and_not_modified,
    cache_control_by_visibility,
    reads_are_served_from_the_cache,
    a_read_right_after_a_write_sees_it,
    a_write_on_another_node_purges_this_nodes_cache,
);

async fn etag_and_not_modified(b: Backend) {
    let t = TestApp::spawn(b).await;
    blog(&t, "public").await;
    let it = item(&t, json!({"data": {"title": "a"}})).await;
    let item_path = format!("/cms/blog/{}", it["id"].as_str().unwrap());
    for path in ["/cms/blog", item_path.as_str()] {
        let r = t.get(path).await;
        r.expect(200);
        let etag = r.header("etag").unwrap().to_string();
        assert!(
            etag.starts_with('"') && !etag.starts_with("W/"),
            "strong: {etag}"
        );
        assert_eq!(t.get(path).await.header("etag"), Some(etag.as_str()));

        let nm = t
            .req(Method::GET, path)
            .header("if-none-match", &etag)
            .send()
            .await;
        nm.expect(304);
        assert_eq!(nm.header("etag"), Some(etag.as_str()));
        assert_eq!(nm.text, "");
        assert_eq!(
            nm.header("cache-control"),
            Some("public, s-maxage=60, stale-while-revalidate=60")
        );
        let other = t
            .req(Method::GET, path)
            .header("if-none-match", "\"something-else\"")
            .send()
            .await;
        other.expect(200);
        assert_eq!(other.body, r.body);
        // Other queries have other tags.
        if path == "/cms/blog" {
            let r2 = t.get("/cms/blog?limit=1").await;
            assert_ne!(r2.header("etag"), Some(etag.as_str()));
        }
    }
    // After a write the old tag no longer matches.
    let list = t.get("/cms/blog").await;
    let old = list.header("etag").unwrap().to_string();
    let old_item = t.get(&item_path).await.header("etag").unwrap().to_string();
    t.patch(&item_path, json!({"data": {"title": "b"}}))
        .await
        .expect(200);
    for (path, old) in [("/cms/blog", &old), (item_path.as_str(), &old_item)] {
        let r = t
            .req(Method::GET, path)
            .header("if-none-match", old)
            .send()
            .await;
        r.expect(200);
        assert_ne!(r.header("etag"), Some(old.as_str()));
    }
}

async fn cache_control_by_visibility(b: Backend) {
    let t = TestApp::spawn(b).await;
    for (slug, vis, want) in [
        (
            "pub",
            "public",
            "public, s-maxage=60, stale-while-revalidate=60",
        ),
        ("gat", "gated", "private, no-cache"),
        ("pri", "private", "private, no-cache"),
    ] {
        t.post(
            "/cms",
            json!({"slug": slug, "name": slug, "visibility": vis,
                   "schema": [{"name": "title", "type": "text"}]}),
        )
        .await
        .expect(201);
        let it = t
            .post(&format!("/cms/{slug}"), json!({"data": {"title": "x"}}))
            .await;
        it.expect(201);
        let r = t.get(&format!("/cms/{slug}")).await;
        assert_eq!(r.header("cache-control"), Some(want), "{slug}");
        let r = t
            .get(&format!(
                "/cms/{slug}/{}",
                it.body["item"]["id"].as_str().unwrap()
            ))
            .await;
        assert_eq!(r.header("cache-control"), Some(want), "{slug} item");
    }
    // Changing the visibility changes the header at once.
    t.post(
        "/cms",
        json!({"slug": "pub", "name": "pub", "visibility": "private", "schema": []}),
    )
    .await
    .expect(200);
    assert_eq!(
        t.get("/cms/pub").await.header("cache-control"),
        Some("private, no-cache")
    );
}

/// Inserts an item behind the API's back (no version bump), to observe the cache.
async fn sneak_in(t: &TestApp, title: &str) {
    let coll = store::head(t.db(), t.org_id, "blog")
        .await
        .unwrap()
        .unwrap();
    let now = Ts::now();
    jobboard_store::dispatch!(t.db().writer(), p => {
        sqlx::query(
            "INSERT INTO cms_items (id, org_id, collection_id, data, status, position, created_at, updated_at)
             VALUES ($1, $2, $3, $4, 'published', 0, $5, $5)",
        )
        .bind(uuid::Uuid::now_v7())
        .bind(t.org_id)
        .bind(coll.id)
        .bind(sqlx::types::Json(json!({"title": title})))
        .bind(now)
        .execute(p)
        .await
        .unwrap();
    });
}

async fn reads_are_served_from_the_cache(b: Backend) {
    let t = TestApp::spawn(b).await;
    blog(&t, "public").await;
    item(&t, json!({"data": {"title": "a"}})).await;
    assert_eq!(titles(&t.get("/cms/blog").await), ["a"]);
    sneak_in(&t, "hidden").await;
    // The cached rendering is served (nothing wrote through the API)...
    assert_eq!(titles(&t.get("/cms/blog").await), ["a"]);
    // ...unless the client asks for a fresh one,
    let fresh = t
        .req(Method::GET, "/cms/blog")
        .header("cache-control", "no-cache")
        .send()
        .await;
    assert_eq!(titles(&fresh), ["hidden", "a"]);
    // or another query is asked,
    assert_eq!(titles(&t.get("/cms/blog?limit=10").await), ["hidden", "a"]);
    // and any write to the collection purges every cached query of it.
    item(&t, json!({"data": {"title": "b"}})).await;
    assert_eq!(titles(&t.get("/cms/blog").await), ["b", "hidden", "a"]);
    let (entries, bytes) = t.app.cms_cache.size();
    assert!(entries >= 1 && bytes > 0);
}

async fn a_read_right_after_a_write_sees_it(b: Backend) {
    let t = TestApp::spawn(b).await;
    blog(&t, "public").await;
    for i in 0..5 {
        let r = t.get("/cms/blog").await;
        assert_eq!(r.body["total"], i);
        let it = item(&t, json!({"data": {"title": format!("t{i}")}})).await;
        let r = t.get("/cms/blog").await;
        assert_eq!(r.body["total"], i + 1, "list after create {i}");
        assert_eq!(r.body["items"][0]["id"], it["id"]);
        let path = format!("/cms/blog/{}", it["id"].as_str().unwrap());
        t.get(&path).await.expect(200);
        t.patch(&path, json!({"data": {"title": format!("u{i}")}}))
            .await
            .expect(200);
        assert_eq!(
            t.get(&path).await.body["item"]["data"]["title"],
            format!("u{i}")
        );
        assert_eq!(
            t.get("/cms/blog").await.body["items"][0]["data"]["title"],
            format!("u{i}")
        );
    }
    let first = t.get("/cms/blog").await.body["items"][0].clone();
    let path = format!("/cms/blog/{}", first["id"].as_str().unwrap());
    t.patch(&path, json!({"status": "archived"}))
        .await
        .expect(200);
    assert_eq!(t.get("/cms/blog").await.body["total"], 4);
    assert_eq!(t.get(&path).await.body["item"]["status"], "archived");
    t.delete(&path).await.expect(200);
    t.get(&path).await.expect_error(404, "not_found");
    assert_eq!(t.get("/cms/blog?status=archived").await.body["total"], 0);
}

async fn a_write_on_another_node_purges_this_nodes_cache(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.scheduler = false).await;
    blog(&t, "public").await;
    // A second node on the same database, with its own cache.
    let mut config = jobboard::config::Config::with_database(&t.database_url);
    config.scheduler = false;
    let other = App::start(config).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let running = server::spawn(other.clone(), listener).unwrap();
    let base = format!("http://{}/api", running.addr);
    let read = |path: &str| {
        let url = format!("{base}{path}");
        let req = t.client.get(url).header("x-api-key", &t.key);
        async move {
            let r = req.send().await.unwrap();
            assert_eq!(r.status().as_u16(), 200);
            r.json::<Value>().await.unwrap()
        }
    };
    let it = item(
        &t,
        json!({"data": {"title": "a"}, "expires_at": at(3_600_000).to_rfc3339()}),
    )
    .await;
    let path = format!("/cms/blog/{}", it["id"].as_str().unwrap());
    // The other node caches its reads...
    assert_eq!(read("/cms/blog").await["total"], 1);
    assert_eq!(read(&path).await["item"]["data"]["title"], "a");
    assert!(other.cms_cache.size().0 >= 2);
    // ...and a write on this node is seen there at once.
    item(&t, json!({"data": {"title": "b"}})).await;
    assert_eq!(read("/cms/blog").await["total"], 2);
    t.patch(&path, json!({"data": {"title": "changed"}}))
        .await
        .expect(200);
    assert_eq!(read(&path).await["item"]["data"]["title"], "changed");
    // The scheduler running on this node also invalidates the other node's entries.
    assert_eq!(read(&path).await["item"]["status"], "published");
    t.patch(&path, json!({"expires_at": at(-1).to_rfc3339()}))
        .await
        .expect(200);
    assert_eq!(read(&path).await["item"]["status"], "published");
    assert_eq!(
        read("/cms/blog").await["total"],
        1,
        "hidden at expires_at already"
    );
    jobboard::scheduler::tick(&t.app).await;
    assert_eq!(read(&path).await["item"]["status"], "expired");
    assert_eq!(read("/cms/blog?status=expired").await["total"], 1);
    t.delete(&path).await.expect(200);
    let r = t
        .client
        .get(format!("{base}{path}"))
        .header("x-api-key", &t.key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 404);
    running.shutdown().await.unwrap();
}
