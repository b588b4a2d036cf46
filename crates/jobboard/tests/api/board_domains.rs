//! Board domains (issue 25): staff of one organization cannot take a host another board
//! answers. A domain typed in the dashboard is only claimed until this installation finds
//! the claim's token at the domain; loopback names, addresses and the service's own host
//! are refused; an operator sets a domain directly from the command line.

use std::{
    collections::HashMap,
    net::SocketAddr,
    sync::{Arc, Mutex},
};

use axum::{
    Router,
    extract::{Request, State},
    http::{StatusCode, header},
    response::IntoResponse,
};
use reqwest::Method;
use serde_json::json;

use jobboard_domain::OrgId;

use crate::{
    backends,
    common::*,
    dashboard::{Browser, add_user, redirect, text_of},
};

backends!(
    staff_cannot_take_over_the_default_board,
    a_claim_is_in_use_once_proven,
    the_check_follows_the_address_rules,
    operators_set_domains_from_the_command_line,
);

const BOARD: &str = "/dashboard/settings/board";
const VERIFY: &str = "/dashboard/settings/board/verify";

/// A stand-in for the host a claimed domain names: per `Host`, it passes the request on
/// to a server (as DNS pointing the name at that server would) or answers a fixed body.
struct StandIn {
    addr: SocketAddr,
    answers: Arc<Mutex<HashMap<String, Answer>>>,
}

#[derive(Clone)]
enum Answer {
    Forward(String),
    Body(String),
}

impl StandIn {
    async fn start() -> StandIn {
        let answers: Arc<Mutex<HashMap<String, Answer>>> = Arc::default();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let router = Router::new().fallback(answer).with_state(answers.clone());
        tokio::spawn(jobboard::api::serve::serve(
            listener,
            router,
            std::future::pending(),
        ));
        StandIn { addr, answers }
    }

    fn set(&self, host: &str, a: Answer) {
        self.answers.lock().unwrap().insert(host.to_string(), a);
    }
}

async fn answer(
    State(answers): State<Arc<Mutex<HashMap<String, Answer>>>>,
    req: Request,
) -> axum::response::Response {
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let found = answers.lock().unwrap().get(&host).cloned();
    match found {
        Some(Answer::Body(b)) => b.into_response(),
        Some(Answer::Forward(base)) => {
            let r = reqwest::Client::builder()
                .no_proxy()
                .build()
                .unwrap()
                .get(format!("{base}{}", req.uri()))
                .header("host", host)
                .send()
                .await
                .unwrap();
            let status = StatusCode::from_u16(r.status().as_u16()).unwrap();
            (status, r.text().await.unwrap()).into_response()
        }
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

/// A page of the board reached on `host`.
async fn on(t: &TestApp, host: &str, path: &str) -> Resp {
    Resp::read(
        t.page_req(Method::GET, path)
            .header("host", host)
            .send()
            .await
            .unwrap(),
    )
    .await
}

/// An active job of the organization of `key`; its slug.
async fn job(t: &TestApp, key: &str, title: &str) -> String {
    let r = t
        .req(Method::POST, "/jobs")
        .key(key)
        .json(json!({"title": title, "description": "<p>Work.</p>", "company_name": "Acme", "status": "active"}))
        .send()
        .await;
    r.expect(201);
    r.body["data"]["slug"].as_str().unwrap().to_string()
}

async fn save_domain(br: &Browser<'_>, domain: &str) -> Resp {
    br.submit(BOARD, BOARD, &[("name", "Board"), ("domain", domain)])
        .await
}

async fn domain_of(t: &TestApp, org: OrgId) -> Option<String> {
    jobboard_domain::orgs::get(t.db(), org)
        .await
        .unwrap()
        .domain
}

/// A second organization with an active job and a signed-in staff user.
async fn other_board<'a>(t: &'a TestApp, name: &str) -> (OrgId, String, Browser<'a>) {
    let (org, key) = t.new_org(name, "*", 1000, 1000).await;
    let slug = job(t, &key, &format!("{name} job")).await;
    let email = format!("staff@{}.test", name.to_ascii_lowercase());
    add_user(t, org, &email).await;
    (org, slug, Browser::signed_in(t, &email).await)
}

async fn staff_cannot_take_over_the_default_board(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.public_url = "http://board.example.test".into()).await;
    assert_eq!(
        t.org_id,
        OrgId(1),
        "the test's own organization is the default board"
    );
    let ours = job(&t, &t.key, "Ours").await;
    t.post(
        "/cms",
        json!({"slug": "ideas", "name": "Ideas", "schema": [{"name": "title", "type": "text"}],
               "rules": {"allow_public_submit": true}}),
    )
    .await
    .expect(201);
    let (b_org, theirs, br) = other_board(&t, "Second").await;
    let listen = t.base.strip_prefix("http://").unwrap().to_string();
    let listen_ip = listen.split(':').next().unwrap().to_string();
    for domain in [
        "127.0.0.1",
        "localhost",
        "LocalHost.",
        "app.localhost",
        "2130706433",
        "0x7f.1",
        "10.0.0.7",
        "board.example.test",
        listen_ip.as_str(),
        listen.as_str(),
    ] {
        let r = save_domain(&br, domain).await;
        r.expect(422);
        assert!(
            text_of(&r, "#f-domain-error").is_some(),
            "{domain}: {}",
            r.text
        );
        assert_eq!(domain_of(&t, b_org).await, None, "{domain}");
        assert_eq!(text_of(&r, ".claimed-domain"), None, "{domain}");
    }
    // A name no organization has set is claimed, and routes nothing until proven.
    let r = save_domain(&br, "unset.example.test").await;
    assert_eq!(redirect(&r), format!("{BOARD}?notice=domain_claimed"));
    assert_eq!(domain_of(&t, b_org).await, None);
    let page = br.get(BOARD).await;
    assert_eq!(
        text_of(&page, ".claimed-domain").as_deref(),
        Some("unset.example.test")
    );
    for host in [
        listen.as_str(),
        "localhost",
        "board.example.test",
        "unset.example.test",
    ] {
        on(&t, host, &format!("/jobs/{ours}")).await.expect(200);
        on(&t, host, &format!("/jobs/{theirs}")).await.expect(404);
        // Public submissions on the host land in organization 1.
        let r = Resp::read(
            t.client
                .post(format!("{}/api/cms/ideas/submit", t.base))
                .header("host", host)
                .json(&json!({"data": {"title": host}}))
                .send()
                .await
                .unwrap(),
        )
        .await;
        r.expect(201);
    }
    let pending = t.get("/cms/ideas?status=pending_review").await;
    assert_eq!(pending.body["items"].as_array().unwrap().len(), 4);
}

async fn a_claim_is_in_use_once_proven(b: Backend) {
    let standin = StandIn::start().await;
    let t = TestApp::spawn_with(b, |c| {
        c.domain_check_resolve = vec![
            ("jobs.b.test".into(), standin.addr),
            ("wrong.b.test".into(), standin.addr),
        ];
    })
    .await;
    standin.set("jobs.b.test", Answer::Forward(t.base.clone()));
    standin.set("wrong.b.test", Answer::Body("not-the-token".into()));
    let ours = job(&t, &t.key, "Ours").await;
    let (b_org, theirs, br) = other_board(&t, "Second").await;
    let (c_org, _, cr) = other_board(&t, "Third").await;

    // A host that does not answer the claim's token is not verified.
    redirect(&save_domain(&br, "wrong.b.test").await);
    let page = br.get(BOARD).await;
    let proof = text_of(&page, "#domain-status code").unwrap();
    let path = proof.strip_prefix("http://wrong.b.test").unwrap();
    assert!(path.starts_with("/.well-known/jobboard-domain/"), "{proof}");
    let r = br.submit(BOARD, VERIFY, &[]).await;
    r.expect(422);
    let error = text_of(&r, "#f-domain-error").unwrap();
    assert!(error.contains("not verified"), "{error}");
    assert!(error.contains("not the token"), "{error}");
    assert_eq!(domain_of(&t, b_org).await, None);
    on(&t, "wrong.b.test", &format!("/jobs/{theirs}"))
        .await
        .expect(404);
    // The board serves a pending claim's token on any host; nothing for other tokens.
    let r = t.page(path).await;
    r.expect(200);
    assert_eq!(r.text, path.rsplit('/').next().unwrap());
    t.page("/.well-known/jobboard-domain/unknown-token")
        .await
        .expect(404);

    // Two organizations claim one domain: the first to prove it wins.
    redirect(&save_domain(&cr, "jobs.b.test").await);
    redirect(&save_domain(&br, "jobs.b.test").await);
    let r = br.submit(BOARD, VERIFY, &[]).await;
    assert_eq!(redirect(&r), format!("{BOARD}?notice=domain_verified"));
    assert_eq!(domain_of(&t, b_org).await.as_deref(), Some("jobs.b.test"));
    let page = br.get(BOARD).await;
    assert_eq!(
        text_of(&page, ".active-domain").as_deref(),
        Some("jobs.b.test")
    );
    assert_eq!(text_of(&page, ".claimed-domain"), None);
    on(&t, "jobs.b.test", &format!("/jobs/{theirs}"))
        .await
        .expect(200);
    on(&t, "jobs.b.test", &format!("/jobs/{ours}"))
        .await
        .expect(404);
    t.page(&format!("/jobs/{ours}")).await.expect(200);
    // The other claim of it was withdrawn; claiming it again is refused.
    assert_eq!(text_of(&cr.get(BOARD).await, ".claimed-domain"), None);
    let r = save_domain(&cr, "jobs.b.test").await;
    r.expect(422);
    assert_eq!(
        text_of(&r, "#f-domain-error").as_deref(),
        Some("Another organization's board already answers this domain.")
    );
    assert_eq!(domain_of(&t, c_org).await, None);
}

async fn the_check_follows_the_address_rules(b: Backend) {
    let standin = StandIn::start().await;
    let t = TestApp::spawn_with(b, |c| {
        c.webhooks.allow_private_targets = false;
        c.domain_check_resolve = vec![("jobs.b.test".into(), standin.addr)];
    })
    .await;
    standin.set("jobs.b.test", Answer::Forward(t.base.clone()));
    let (b_org, _, br) = other_board(&t, "Second").await;
    redirect(&save_domain(&br, "jobs.b.test").await);
    // The stand-in would answer the token, but it is on a loopback address.
    let r = br.submit(BOARD, VERIFY, &[]).await;
    r.expect(422);
    let error = text_of(&r, "#f-domain-error").unwrap();
    assert!(error.contains("non-public address"), "{error}");
    assert_eq!(domain_of(&t, b_org).await, None);
}

async fn operators_set_domains_from_the_command_line(b: Backend) {
    let t = TestApp::spawn(b).await;
    let db = t.database_url.clone();
    let (b_org, theirs, _) = other_board(&t, "Second").await;
    let (_, _, cr) = other_board(&t, "Third").await;
    let id = b_org.to_string();
    for bad in ["127.0.0.1", "localhost", "10.0.0.7"] {
        let (ok, _, err) = run_cli(&["orgs", "update", &id, "--domain", bad], &db);
        assert!(!ok, "{bad}");
        assert!(err.contains("--domain"), "{bad}: {err}");
        assert_eq!(domain_of(&t, b_org).await, None);
    }
    // Set by an operator, a domain is in use at once; another's claim of it is withdrawn.
    redirect(&save_domain(&cr, "jobs.cli.test").await);
    let (ok, out, err) = run_cli(&["orgs", "update", &id, "--domain", "jobs.cli.test"], &db);
    assert!(ok, "{err}");
    assert!(out.contains("domain jobs.cli.test"), "{out}");
    on(&t, "jobs.cli.test", &format!("/jobs/{theirs}"))
        .await
        .expect(200);
    assert_eq!(text_of(&cr.get(BOARD).await, ".claimed-domain"), None);
}
