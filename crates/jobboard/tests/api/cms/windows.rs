//! Publishing windows: public lists relative to now, exact boundaries, the scheduler's
//! expiry of published items, and cached lists turning over at the next boundary.

use jobboard_domain::cms::{self as store, ListFilter};
use jobboard_store::Ts;
use serde_json::json;

use super::*;
use crate::backends;

backends!(
    public_list_windows_relative_to_now,
    window_boundaries_are_exact,
    a_cached_list_turns_over_at_the_next_window_boundary,
    scheduler_expires_published_items_once,
);

async fn public_list_windows_relative_to_now(b: Backend) {
    let t = TestApp::spawn(b).await;
    blog(&t, "public").await;
    let item_at = |title: &str, starts: Option<i64>, expires: Option<i64>| {
        let mut body = json!({"data": {"title": title}});
        if let Some(s) = starts {
            body["starts_at"] = json!(at(s).to_rfc3339());
        }
        if let Some(e) = expires {
            body["expires_at"] = json!(at(e).to_rfc3339());
        }
        body
    };
    // Just before and just after now, on both edges.
    item(&t, item_at("started", Some(-1), None)).await;
    item(&t, item_at("not yet", Some(60_000), None)).await;
    item(&t, item_at("expired", None, Some(-1))).await;
    item(&t, item_at("expiring later", None, Some(60_000))).await;
    item(&t, item_at("inside window", Some(-1), Some(60_000))).await;
    item(&t, item_at("always", None, None)).await;
    let r = t.get("/cms/blog").await;
    let mut got = titles(&r);
    got.sort();
    assert_eq!(
        got,
        ["always", "expiring later", "inside window", "started"]
    );
    assert_eq!(r.body["total"], 4);
    // With a status, windows do not matter.
    assert_eq!(t.get("/cms/blog?status=published").await.body["total"], 6);
    // Moving a window is a write: the next read reflects it.
    let later = t.get("/cms/blog?status=published").await;
    let id = later.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["data"]["title"] == "not yet")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    t.patch(
        &format!("/cms/blog/{id}"),
        json!({"starts_at": at(-1).to_rfc3339()}),
    )
    .await
    .expect(200);
    assert_eq!(t.get("/cms/blog").await.body["total"], 5);
}

async fn window_boundaries_are_exact(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.scheduler = false).await;
    blog(&t, "public").await;
    let s = at(3_600_000);
    let e = at(7_200_000);
    item(
        &t,
        json!({"data": {"title": "w"}, "starts_at": s.to_rfc3339(), "expires_at": e.to_rfc3339()}),
    )
    .await;
    let coll = store::head(t.db(), t.org_id, "blog")
        .await
        .unwrap()
        .unwrap();
    let order = coll.order();
    let visible = |now: Ts| {
        let db = t.db().clone();
        let org = t.org_id;
        async move {
            store::list_items(&db, org, coll.id, ListFilter::Public(now), order, 50, 0)
                .await
                .unwrap()
                .1
        }
    };
    let us = |t: Ts, d: i64| Ts::from_micros(t.micros() + d);
    assert_eq!(
        visible(us(s, -1)).await,
        0,
        "one microsecond before starts_at"
    );
    assert_eq!(visible(s).await, 1, "at starts_at");
    assert_eq!(
        visible(us(e, -1)).await,
        1,
        "one microsecond before expires_at"
    );
    assert_eq!(visible(e).await, 0, "at expires_at");
    // The cache deadline is the next boundary.
    assert_eq!(
        store::next_boundary(t.db(), coll.id, us(s, -1))
            .await
            .unwrap(),
        Some(s)
    );
    assert_eq!(
        store::next_boundary(t.db(), coll.id, s).await.unwrap(),
        Some(e)
    );
    assert_eq!(
        store::next_boundary(t.db(), coll.id, e).await.unwrap(),
        None
    );
    // The scheduler step uses the same boundary.
    assert_eq!(store::expire_due(t.db(), us(e, -1)).await.unwrap(), 0);
    assert_eq!(store::expire_due(t.db(), e).await.unwrap(), 1);
    assert_eq!(store::expire_due(t.db(), e).await.unwrap(), 0);
}

async fn scheduler_expires_published_items_once(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.scheduler = false).await;
    blog(&t, "public").await;
    let gone = item(
        &t,
        json!({"data": {"title": "gone"}, "expires_at": at(-1).to_rfc3339()}),
    )
    .await;
    let draft = item(
        &t,
        json!({"data": {"title": "draft"}, "status": "draft", "expires_at": at(-1).to_rfc3339()}),
    )
    .await;
    item(
        &t,
        json!({"data": {"title": "stays"}, "expires_at": at(3_600_000).to_rfc3339()}),
    )
    .await;
    // Cached status list before the tick.
    let before = t.get("/cms/blog?status=published").await;
    assert_eq!(before.body["total"], 2);
    let one = t
        .get(&format!("/cms/blog/{}", gone["id"].as_str().unwrap()))
        .await;
    assert_eq!(one.body["item"]["status"], "published");

    assert_eq!(jobboard::scheduler::tick(&t.app).await, 1);
    assert_eq!(jobboard::scheduler::tick(&t.app).await, 0, "idempotent");

    let r = t
        .get(&format!("/cms/blog/{}", gone["id"].as_str().unwrap()))
        .await;
    assert_eq!(r.body["item"]["status"], "expired");
    assert_ne!(r.header("etag"), one.header("etag"));
    assert_eq!(
        titles(&t.get("/cms/blog?status=published").await),
        ["stays"]
    );
    assert_eq!(titles(&t.get("/cms/blog?status=expired").await), ["gone"]);
    // Only published items expire.
    let r = t
        .get(&format!("/cms/blog/{}", draft["id"].as_str().unwrap()))
        .await;
    assert_eq!(r.body["item"]["status"], "draft");
}

async fn a_cached_list_turns_over_at_the_next_window_boundary(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.scheduler = false).await;
    blog(&t, "public").await;
    // One item appears and another leaves at the same moment, an hour from now.
    let boundary = t.app.clock.now().plus(chrono::Duration::hours(1));
    item(
        &t,
        json!({"data": {"title": "arriving"}, "starts_at": boundary.to_rfc3339()}),
    )
    .await;
    item(
        &t,
        json!({"data": {"title": "leaving"}, "expires_at": boundary.to_rfc3339()}),
    )
    .await;
    let before = t.get("/cms/blog").await;
    assert_eq!(titles(&before), ["leaving"]);
    assert_eq!(
        titles(&t.get("/cms/blog").await),
        ["leaving"],
        "served again before the boundary"
    );
    // No write and no scheduler run happen in between: only the service's clock moves
    // past the boundary (without waiting), and the cached rendering must not outlive it.
    t.app
        .clock
        .advance(std::time::Duration::from_secs(2 * 3600));
    let after = t.get("/cms/blog").await;
    assert_eq!(titles(&after), ["arriving"]);
    assert_ne!(after.header("etag"), before.header("etag"));
}
