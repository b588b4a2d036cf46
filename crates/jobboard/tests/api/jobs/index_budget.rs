//! The search indexes' budget shared by use: with room for one index, the board listed
//! more keeps it, and a board listed less is answered by an index built for its list and
//! not kept, until it is listed more. Indexes that grow with their boards are held to
//! the same budget.

use reqwest::Method;
use serde_json::{Value, json};

use super::*;
use crate::backends;

backends!(
    a_board_listed_more_keeps_its_index,
    boards_that_grow_stay_within_the_budget,
);

/// Three active jobs of the organization of `key`.
async fn stock(t: &TestApp, key: &str) {
    for title in ["Night Baker", "Day Baker", "Harbour Pilot"] {
        let mut body = job(title);
        body["status"] = json!("active");
        t.req(Method::POST, "/jobs")
            .key(key)
            .json(body)
            .send()
            .await
            .expect(201);
    }
}

/// The total of the list `query` of the organization of `key`, read afresh.
async fn total(t: &TestApp, key: &str, query: &str) -> Value {
    let r = t
        .req(Method::GET, &format!("/jobs?{query}"))
        .key(key)
        .header("cache-control", "no-cache")
        .send()
        .await;
    r.expect(200);
    r.body["meta"]["pagination"]["total_items"].clone()
}

/// The total of a search of the organization of `key`, read afresh.
async fn bakers(t: &TestApp, key: &str) -> Value {
    total(t, key, "search=baker").await
}

/// Indexes held, and builds (first and again) so far.
async fn held_and_built(t: &TestApp) -> (f64, f64) {
    let m = t.metrics().await;
    let built = gauge(
        &m.text,
        r#"jobboard_search_index_builds_total{cause="first"}"#,
    ) + gauge(
        &m.text,
        r#"jobboard_search_index_builds_total{cause="again"}"#,
    );
    (gauge(&m.text, "jobboard_search_indexes"), built)
}

async fn a_board_listed_more_keeps_its_index(b: Backend) {
    // One board's index, measured on a node with room for many.
    let probe = TestApp::spawn_with(b, |c| c.scheduler = false).await;
    stock(&probe, &probe.key).await;
    assert_eq!(bakers(&probe, &probe.key).await, 2);
    let one = gauge(&probe.metrics().await.text, "jobboard_search_index_bytes") as usize;
    assert!(one > 0);
    // Room for one such index, not two.
    let t = TestApp::spawn_with(b, |c| {
        c.scheduler = false;
        c.search_index = one * 3 / 2;
    })
    .await;
    let (_, other) = t.new_org("Other", "jobs:read jobs:write", 1000, 1000).await;
    let key = t.key.clone();
    stock(&t, &key).await;
    stock(&t, &other).await;
    for _ in 0..4 {
        assert_eq!(bakers(&t, &key).await, 2);
    }
    assert_eq!(held_and_built(&t).await, (1.0, 1.0));
    // Listed once: answered by an index built for it, not kept.
    assert_eq!(bakers(&t, &other).await, 2);
    assert_eq!(held_and_built(&t).await, (1.0, 2.0));
    // The board listed more still has its index: nothing built.
    assert_eq!(bakers(&t, &key).await, 2);
    assert_eq!(held_and_built(&t).await, (1.0, 2.0));
    // Listed as often as the first board (5 times), the other board's index is kept in
    // its place: its next list builds nothing, the first board's builds again.
    for n in 2..=5 {
        assert_eq!(bakers(&t, &other).await, 2);
        assert_eq!(held_and_built(&t).await, (1.0, 1.0 + n as f64));
    }
    assert_eq!(bakers(&t, &other).await, 2);
    assert_eq!(held_and_built(&t).await, (1.0, 6.0));
    assert_eq!(bakers(&t, &key).await, 2);
    assert_eq!(held_and_built(&t).await, (1.0, 7.0));
}

/// Posts active jobs `jobs` (numbers) to the organization of `key`, each with words of
/// its own, and lists the board after each (so its index follows it job by job).
async fn grow(t: &TestApp, key: &str, board: &str, jobs: std::ops::Range<usize>) {
    for i in jobs {
        let mut body = job(&format!("Baker {board} {i}"));
        body["status"] = json!("active");
        body["description"] = json!(
            (0..30)
                .map(|w| format!("{board}word{i}x{w}"))
                .collect::<Vec<_>>()
                .join(" ")
        );
        t.req(Method::POST, "/jobs")
            .key(key)
            .json(body)
            .send()
            .await
            .expect(201);
        bakers(t, key).await;
    }
}

/// Indexes held and the bytes they hold.
async fn held_bytes(t: &TestApp) -> (f64, usize) {
    let m = t.metrics().await;
    (
        gauge(&m.text, "jobboard_search_indexes"),
        gauge(&m.text, "jobboard_search_index_bytes") as usize,
    )
}

async fn boards_that_grow_stay_within_the_budget(b: Backend) {
    // A board's index grown to 48 jobs, measured on a node with room.
    let probe = TestApp::spawn_with(b, |c| c.scheduler = false).await;
    assert_eq!(bakers(&probe, &probe.key).await, 0);
    grow(&probe, &probe.key, "p", 0..48).await;
    let (_, grown) = held_bytes(&probe).await;
    // Room for one such index and a half.
    let budget = grown * 3 / 2;
    let t = TestApp::spawn_with(b, |c| {
        c.scheduler = false;
        c.search_index = budget;
    })
    .await;
    let (_, other) = t.new_org("Other", "jobs:read jobs:write", 1000, 1000).await;
    let key = t.key.clone();
    assert_eq!(bakers(&t, &other).await, 0);
    grow(&t, &key, "a", 0..48).await;
    for _ in 0..20 {
        bakers(&t, &key).await;
    }
    // The grown index is counted as it grew (the same board as the probe's, but for its
    // words' first letter).
    let (held, bytes) = held_bytes(&t).await;
    assert_eq!(held, 2.0);
    assert!(bytes >= grown * 9 / 10, "{bytes} counted, {grown} grown");
    // The other board grows past what the budget leaves it: what the indexes hold stays
    // within the budget at every step; the board listed more keeps its index, the
    // other's is dropped and built again (packed, smaller than grown job by job).
    for i in 0..48 {
        grow(&t, &other, "b", i..i + 1).await;
        let (_, bytes) = held_bytes(&t).await;
        assert!(bytes <= budget, "after {i}: {bytes} held, {budget} allowed");
    }
    assert!(
        held_and_built(&t).await.1 >= 3.0,
        "the growing index was dropped"
    );
    assert_eq!(bakers(&t, &other).await, 48);
    assert_eq!(bakers(&t, &key).await, 48);
    assert_eq!(total(&t, &other, "search=bword47x29").await, 1);
}
