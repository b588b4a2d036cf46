//! A write through one node is seen at once through the others: the API's lists and
//! reads, the CMS reads, the board's pages and the dashboard's, read again and again
//! through the balancer so that every node answers; a dashboard session made through one
//! node is valid on all of them, and a dashboard action through one node shows in the
//! API and on the board through the others.

use scraper::Selector;
use serde_json::json;

use crate::{
    browser::Browser,
    common::Resp,
    harness::{Cluster, NODES},
    observe::{Counters, every_node_answered, served},
};

/// Reads after a write: twice round the nodes.
const READS: usize = 2 * NODES;

const PASSWORD: &str = "correct horse battery staple";

fn texts(r: &Resp, css: &str) -> Vec<String> {
    r.html()
        .select(&Selector::parse(css).unwrap())
        .map(|e| e.text().collect::<String>().trim().to_string())
        .collect()
}

/// Asserts that every node answered `method route` between the readings `before` and
/// `after`.
#[track_caller]
fn spread(before: &[Option<Counters>], after: &[Option<Counters>], method: &str, route: &str) {
    every_node_answered(
        &served(before, after, route, method, None),
        &format!("{method} {route}"),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_through_one_node_is_seen_through_every_node() {
    let Some(c) =
        Cluster::start("consistency::a_write_through_one_node_is_seen_through_every_node").await
    else {
        return;
    };
    let org = c.org_id.to_string();
    c.cli(
        &[
            "users",
            "create",
            "--org",
            &org,
            "--email",
            "ada@example.com",
        ],
        Some(&format!("{PASSWORD}\n")),
    );
    let before = c.counters().await;

    // A job: created through one node, listed and read through every node at once.
    let r = c
        .post(
            "/jobs",
            json!({"title": "Lighthouse keeper", "company_name": "Acme", "description": "<p>Keeps the light.</p>", "status": "active"}),
        )
        .await;
    r.expect(201);
    let id = r.body["data"]["id"].as_str().unwrap().to_string();
    let slug = r.body["data"]["slug"].as_str().unwrap().to_string();
    // Each kind of read in a row of its own, so that round robin sends it to every node.
    for _ in 0..READS {
        let r = c.get("/jobs?search=lighthouse").await;
        r.expect(200);
        assert_eq!(r.body["data"][0]["id"], id.as_str(), "{}", r.text);
    }
    for _ in 0..READS {
        c.get(&format!("/jobs/{id}")).await.expect(200);
    }
    for _ in 0..READS {
        let page = c.page("/").await;
        page.expect(200);
        assert!(
            texts(&page, "ol.jobs li h2 a").contains(&"Lighthouse keeper".to_string()),
            "the board's home lists the new job: {}",
            page.text
        );
    }
    for _ in 0..READS {
        let page = c.page(&format!("/jobs/{slug}")).await;
        page.expect(200);
        assert_eq!(texts(&page, "main h1"), ["Lighthouse keeper"]);
    }

    // Changed through one node: the change is seen through every node at once.
    c.patch(&format!("/jobs/{id}"), json!({"title": "Harbour master"}))
        .await
        .expect(200);
    for _ in 0..READS {
        let r = c.get("/jobs?search=harbour").await;
        r.expect(200);
        assert_eq!(r.body["data"][0]["id"], id.as_str(), "{}", r.text);
        assert_eq!(r.body["data"][0]["title"], "Harbour master");
    }
    for _ in 0..READS {
        let r = c.get("/jobs?search=lighthouse").await;
        assert_eq!(
            r.body["data"],
            json!([]),
            "the old title is gone from the lists"
        );
    }
    for _ in 0..READS {
        let r = c.get(&format!("/jobs/{id}")).await;
        assert_eq!(r.body["data"]["title"], "Harbour master");
    }
    for _ in 0..READS {
        let listed = texts(&c.page("/").await, "ol.jobs li h2 a");
        assert!(listed.contains(&"Harbour master".to_string()), "{listed:?}");
        assert!(
            !listed.contains(&"Lighthouse keeper".to_string()),
            "{listed:?}"
        );
    }
    for _ in 0..READS {
        let page = c.page(&format!("/jobs/{slug}")).await;
        page.expect(200);
        assert_eq!(texts(&page, "main h1"), ["Harbour master"]);
    }

    // A CMS item: created, then changed, through one node; read through every node.
    c.post(
        "/cms",
        json!({"slug": "partners", "name": "Partners", "visibility": "public",
               "schema": [{"name": "title", "type": "text", "required": true}]}),
    )
    .await
    .expect(201);
    let r = c
        .post("/cms/partners", json!({"data": {"title": "Acme Shipping"}}))
        .await;
    r.expect(201);
    let item = r.body["item"]["id"].as_str().unwrap().to_string();
    for title in ["Acme Shipping", "Globex Freight"] {
        if title != "Acme Shipping" {
            c.patch(
                &format!("/cms/partners/{item}"),
                json!({"data": {"title": title}}),
            )
            .await
            .expect(200);
        }
        for _ in 0..READS {
            let r = c.get("/cms/partners").await;
            r.expect(200);
            assert_eq!(r.body["items"][0]["data"]["title"], title, "{}", r.text);
            assert_eq!(r.body["total"], 1);
        }
        for _ in 0..READS {
            let r = c.get(&format!("/cms/partners/{item}")).await;
            r.expect(200);
            assert_eq!(r.body["item"]["data"]["title"], title, "{}", r.text);
        }
        for _ in 0..READS {
            let page = c.page("/c/partners").await;
            page.expect(200);
            assert_eq!(texts(&page, "ol.cms-items h2 a"), [title]);
        }
    }

    // The dashboard: signed in through one node (the form from another), the session is
    // valid on every node, and every node shows the changed job.
    let ada = Browser::new(&c);
    let r = ada
        .submit(
            "/dashboard/login",
            "/dashboard/login",
            &[("email", "ada@example.com"), ("password", PASSWORD)],
        )
        .await;
    r.expect(303);
    assert_eq!(r.header("location"), Some("/dashboard"));
    for _ in 0..READS {
        ada.get("/dashboard").await.expect(200);
    }
    for _ in 0..READS {
        let page = ada.get("/dashboard/jobs?status=active").await;
        page.expect(200);
        assert_eq!(
            texts(&page, "table.jobs tbody tr td:first-child a"),
            ["Harbour master"]
        );
    }

    // A dashboard action through one node shows through every node: the job expired by
    // hand is expired in the API, gone from the lists and from the board.
    let r = ada
        .submit(
            "/dashboard/jobs?status=active",
            &format!("/dashboard/jobs/{id}/status"),
            &[("status", "expired"), ("back", "active")],
        )
        .await;
    r.expect(303);
    for _ in 0..READS {
        let r = c.get(&format!("/jobs/{id}")).await;
        assert_eq!(r.body["data"]["status"], "expired");
    }
    for _ in 0..READS {
        let r = c.get("/jobs?search=harbour").await;
        assert_eq!(r.body["data"], json!([]));
    }
    for _ in 0..READS {
        c.page(&format!("/jobs/{slug}")).await.expect(410);
    }
    for _ in 0..READS {
        let page = ada.get("/dashboard/jobs?status=expired").await;
        assert_eq!(
            texts(&page, "table.jobs tbody tr td:first-child a"),
            ["Harbour master"]
        );
    }

    // Every node answered each kind of read.
    let after = c.counters().await;
    for route in [
        "/api/jobs",
        "/api/jobs/{id}",
        "/",
        "/jobs/{slug}",
        "/api/cms/{slug}",
        "/api/cms/{slug}/{id}",
        "/c/{collection}",
        "/dashboard",
        "/dashboard/jobs",
    ] {
        spread(&before, &after, "GET", route);
    }
    // Nothing was refused or failed on the way.
    let failed: Vec<_> = after
        .iter()
        .flatten()
        .flat_map(|c| c.iter())
        .filter(|((_, _, status), _)| *status >= 500)
        .collect();
    assert!(failed.is_empty(), "{failed:?}");
}
