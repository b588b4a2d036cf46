//! The board's feeds, sitemaps and robots.txt: valid documents (read by real XML and
//! JSON parsers) listing exactly the live jobs, with the list's filters.

use std::collections::BTreeSet;

use reqwest::Method;
use serde_json::{Value, json};

use jobboard_domain::OrgId;

use crate::{
    backends,
    board::{api_slugs, job},
    common::*,
};

backends!(
    feeds_follow_any_search,
    the_sitemap_lists_the_live_jobs,
    past_fifty_thousand_jobs_the_sitemap_is_an_index,
    robots_names_the_sitemap
);

async fn fetch(t: &TestApp, path: &str) -> Resp {
    Resp::read(t.page_req(Method::GET, path).send().await.unwrap()).await
}

/// The item links of an RSS document, after checking its shape.
fn rss_links(text: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(text).expect("well-formed RSS");
    let rss = doc.root_element();
    assert_eq!(rss.tag_name().name(), "rss");
    assert_eq!(rss.attribute("version"), Some("2.0"));
    let channel = rss.children().find(|n| n.has_tag_name("channel")).unwrap();
    for required in ["title", "link", "description"] {
        assert!(
            channel.children().any(|n| n.has_tag_name(required)),
            "{required}"
        );
    }
    channel
        .children()
        .filter(|n| n.has_tag_name("item"))
        .map(|item| {
            let child = |name: &str| {
                item.children()
                    .find(|n| n.has_tag_name(name))
                    .and_then(|n| n.text())
                    .unwrap_or_default()
                    .to_string()
            };
            assert_eq!(child("link"), child("guid"));
            assert!(chrono::DateTime::parse_from_rfc2822(&child("pubDate")).is_ok());
            child("link")
        })
        .collect()
}

fn urls(t: &TestApp, slugs: &[String]) -> Vec<String> {
    slugs
        .iter()
        .map(|s| format!("{}/jobs/{s}", t.base))
        .collect()
}

async fn feeds_follow_any_search(b: Backend) {
    let t = TestApp::spawn(b).await;
    job(&t, json!({"title": "Rust engineer", "job_type": "contract", "description": "<p>Ship & <em>test</em> \u{1}</p>"})).await;
    job(
        &t,
        json!({"title": "Rust tester", "job_type": "full-time", "is_remote": true}),
    )
    .await;
    job(
        &t,
        json!({"title": "Baker <b>", "company_name": "Bread & Co"}),
    )
    .await;
    job(&t, json!({"title": "Pending", "status": "pending"})).await;
    job(&t, json!({"title": "Expired", "status": "expired"})).await;
    for (board, api) in [
        ("", ""),
        ("?search=rust", "?search=rust"),
        (
            "?job_types=contract&job_types=full-time&is_remote=true",
            "?job_types=contract,full-time&is_remote=true",
        ),
        ("?per_page=1&page=2", "?per_page=1&page=2"),
    ] {
        let expected = urls(&t, &api_slugs(&t, api).await);
        let r = fetch(&t, &format!("/feed.xml{board}")).await;
        r.expect(200);
        assert_eq!(
            r.header("content-type"),
            Some("application/rss+xml; charset=utf-8")
        );
        assert_eq!(rss_links(&r.text), expected, "rss {board}");
        let r = fetch(&t, &format!("/feed.json{board}")).await;
        r.expect(200);
        assert_eq!(
            r.header("content-type"),
            Some("application/feed+json; charset=utf-8")
        );
        let feed: Value = serde_json::from_str(&r.text).unwrap();
        assert_eq!(feed["version"], "https://jsonfeed.org/version/1.1");
        assert!(feed["title"].is_string() && feed["home_page_url"].is_string());
        assert_eq!(
            feed["feed_url"],
            format!("{}/feed.json{}", t.base, board_canonical(board))
        );
        let items = feed["items"].as_array().unwrap();
        let got: Vec<String> = items
            .iter()
            .map(|i| i["url"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(got, expected, "json feed {board}");
        for i in items {
            assert!(i["id"].is_string() && i["content_html"].is_string());
            assert!(
                chrono::DateTime::parse_from_rfc3339(i["date_published"].as_str().unwrap()).is_ok()
            );
        }
    }
    // A paged feed names its next page.
    let feed: Value = serde_json::from_str(&fetch(&t, "/feed.json?per_page=1").await.text).unwrap();
    assert_eq!(
        feed["next_url"],
        format!("{}/feed.json?page=2&per_page=1", t.base)
    );
    // Feeds are cached like pages.
    let r = fetch(&t, "/feed.xml").await;
    let etag = r.header("etag").unwrap().to_string();
    let again = t
        .page_req(Method::GET, "/feed.xml")
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);
    // The markup and the characters XML cannot carry are escaped or dropped.
    let doc = roxmltree::Document::parse(&r.text).unwrap();
    let titles: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("item"))
        .map(|n| {
            n.children()
                .find(|c| c.has_tag_name("title"))
                .unwrap()
                .text()
                .unwrap()
                .to_string()
        })
        .collect();
    assert!(
        titles.contains(&"Baker <b> at Bread & Co".to_string()),
        "{titles:?}"
    );
    fetch(&t, "/feed.xml?page=0").await.expect(400);
}

fn board_canonical(board: &str) -> &str {
    match board {
        "?job_types=contract&job_types=full-time&is_remote=true" => {
            "?job_types=contract%2Cfull-time&is_remote=true"
        }
        "?per_page=1&page=2" => "?page=2&per_page=1",
        other => other,
    }
}

/// The `<loc>`s of a sitemap urlset, after checking each has a `lastmod`.
fn locs(text: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(text).expect("well-formed sitemap");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "urlset");
    assert_eq!(
        root.tag_name().namespace(),
        Some("http://www.sitemaps.org/schemas/sitemap/0.9")
    );
    root.children()
        .filter(|n| n.has_tag_name("url"))
        .map(|u| {
            let lastmod = u.children().find(|n| n.has_tag_name("lastmod")).unwrap();
            assert!(chrono::DateTime::parse_from_rfc3339(lastmod.text().unwrap()).is_ok());
            u.children()
                .find(|n| n.has_tag_name("loc"))
                .unwrap()
                .text()
                .unwrap()
                .to_string()
        })
        .collect()
}

async fn the_sitemap_lists_the_live_jobs(b: Backend) {
    let t = TestApp::spawn(b).await;
    let mut live = BTreeSet::new();
    for i in 0..5 {
        live.insert(
            job(
                &t,
                json!({"title": format!("Job {i}"), "is_sticky": i == 3}),
            )
            .await,
        );
    }
    job(&t, json!({"title": "Pending", "status": "pending"})).await;
    job(&t, json!({"title": "Draft", "status": "draft"})).await;
    job(&t, json!({"title": "Expired", "status": "expired"})).await;
    let r = fetch(&t, "/sitemap.xml").await;
    r.expect(200);
    assert_eq!(
        r.header("content-type"),
        Some("application/xml; charset=utf-8")
    );
    let got: BTreeSet<String> = locs(&r.text).into_iter().collect();
    let want: BTreeSet<String> = live
        .iter()
        .map(|s| format!("{}/jobs/{s}", t.base))
        .collect();
    assert_eq!(got, want);
    // Conditional requests: the same board version answers 304; a write changes it.
    let etag = r.header("etag").unwrap().to_string();
    let again = t
        .page_req(Method::GET, "/sitemap.xml")
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);
    job(&t, json!({"title": "Newest"})).await;
    let r = t
        .page_req(Method::GET, "/sitemap.xml")
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(locs(&r.text().await.unwrap()).len(), 6);
    fetch(&t, "/sitemaps/jobs-2.xml").await.expect(404);
    fetch(&t, "/sitemaps/nonsense").await.expect(404);
    assert_eq!(locs(&fetch(&t, "/sitemaps/jobs-1.xml").await.text).len(), 6);
}

/// Stores `n` live jobs of organization `org` at once (the API would take minutes).
async fn bulk_jobs(t: &TestApp, org: OrgId, n: i64) {
    let now = jobboard_store::Ts::now();
    match t.backend {
        Backend::Sqlite => {
            let pool = sqlx::SqlitePool::connect(&t.database_url).await.unwrap();
            sqlx::query(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $1)
                 INSERT INTO jobs (id, org_id, title, description, description_text, company_name, slug, status, created_at, updated_at)
                 SELECT randomblob(16), $2, 'Bulk ' || i, 'x', 'x', 'Acme', 'bulk-' || i, 'active', $3 + i, $3 + i FROM n",
            )
            .bind(n)
            .bind(org)
            .bind(now.micros())
            .execute(&pool)
            .await
            .unwrap();
            pool.close().await;
        }
        Backend::Postgres => {
            let pool = sqlx::PgPool::connect(&t.database_url).await.unwrap();
            sqlx::query(
                "INSERT INTO jobs (id, org_id, title, description, description_text, company_name, slug, status, created_at, updated_at)
                 SELECT gen_random_uuid(), $2, 'Bulk ' || i, 'x', 'x', 'Acme', 'bulk-' || i, 'active',
                        $3 + make_interval(secs => i / 1000.0), $3 + make_interval(secs => i / 1000.0)
                 FROM generate_series(1, $1::bigint) AS i",
            )
            .bind(n)
            .bind(org)
            .bind(now)
            .execute(&pool)
            .await
            .unwrap();
            pool.close().await;
        }
    }
}

async fn past_fifty_thousand_jobs_the_sitemap_is_an_index(b: Backend) {
    let t = TestApp::spawn(b).await;
    bulk_jobs(&t, t.org_id, 50_001).await;
    job(&t, json!({"title": "Pending", "status": "pending"})).await;
    let r = fetch(&t, "/sitemap.xml").await;
    r.expect(200);
    let doc = roxmltree::Document::parse(&r.text).unwrap();
    assert_eq!(doc.root_element().tag_name().name(), "sitemapindex");
    let parts: Vec<String> = doc
        .descendants()
        .filter(|n| n.has_tag_name("loc"))
        .map(|n| n.text().unwrap().to_string())
        .collect();
    assert_eq!(
        parts,
        [
            format!("{}/sitemaps/jobs-1.xml", t.base),
            format!("{}/sitemaps/jobs-2.xml", t.base)
        ]
    );
    let first = locs(&fetch(&t, "/sitemaps/jobs-1.xml").await.text);
    let second = locs(&fetch(&t, "/sitemaps/jobs-2.xml").await.text);
    assert_eq!((first.len(), second.len()), (50_000, 1));
    let all: BTreeSet<&String> = first.iter().chain(&second).collect();
    assert_eq!(all.len(), 50_001, "no job twice, none left out");
    assert!(all.iter().all(|u| u.contains("/jobs/bulk-")));
    fetch(&t, "/sitemaps/jobs-3.xml").await.expect(404);
}

async fn robots_names_the_sitemap(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.public_url = "https://board.example".into()).await;
    let r = fetch(&t, "/robots.txt").await;
    r.expect(200);
    assert_eq!(r.header("content-type"), Some("text/plain; charset=utf-8"));
    assert!(
        r.text
            .lines()
            .any(|l| l == "Sitemap: https://board.example/sitemap.xml"),
        "{}",
        r.text
    );
    assert!(r.text.lines().any(|l| l == "Disallow: /post-a-job"));
    // With public_url, every absolute link uses it.
    let slug = job(&t, json!({"title": "Anywhere"})).await;
    let sitemap = fetch(&t, "/sitemap.xml").await;
    assert_eq!(
        locs(&sitemap.text),
        [format!("https://board.example/jobs/{slug}")]
    );
}
