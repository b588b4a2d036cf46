//! The dashboard: sign-in, sessions, anti-forgery, tenant isolation and each page's
//! actions, through a browser-like client that keeps cookies and never follows redirects.

mod accounts;
mod audit;
mod auth;
mod forgery;
mod isolation;
mod jobs;
mod pages;
mod reset;
mod settings;
mod two_factor;
mod users_cli;

use jobboard_domain::{Input, OrgId, UserId, users};
use reqwest::{Method, redirect::Policy};
use scraper::Selector;
use serde_json::json;

use crate::common::*;

/// A password good enough for the rules.
pub const PASSWORD: &str = "correct horse battery staple";

/// A browser: keeps its cookies, sends `Origin` like a browser posting a form of this
/// site, and shows redirects instead of following them.
pub struct Browser<'a> {
    pub t: &'a TestApp,
    pub client: reqwest::Client,
}

impl<'a> Browser<'a> {
    pub fn new(t: &'a TestApp) -> Browser<'a> {
        Browser::with_headers(t, reqwest::header::HeaderMap::new())
    }

    /// A browser whose requests reach the server through a trusted proxy that names
    /// `address` as the client (`X-Forwarded-For`; the test's config must trust
    /// 127.0.0.1).
    pub fn from_address(t: &'a TestApp, address: &str) -> Browser<'a> {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert("x-forwarded-for", address.parse().unwrap());
        Browser::with_headers(t, headers)
    }

    fn with_headers(t: &'a TestApp, headers: reqwest::header::HeaderMap) -> Browser<'a> {
        jobboard::init_tls();
        Browser {
            t,
            client: reqwest::Client::builder()
                .no_proxy()
                .cookie_store(true)
                .redirect(Policy::none())
                .default_headers(headers)
                .build()
                .unwrap(),
        }
    }

    pub async fn get(&self, path: &str) -> Resp {
        Resp::read(
            self.client
                .get(format!("{}{path}", self.t.base))
                .header("accept", "text/html")
                .send()
                .await
                .unwrap(),
        )
        .await
    }

    /// Posts `fields` as a form sent from `origin` (`None`: no `Origin` header).
    pub async fn post_from(
        &self,
        path: &str,
        fields: &[(&str, &str)],
        origin: Option<&str>,
    ) -> Resp {
        let mut rb = self
            .client
            .request(Method::POST, format!("{}{path}", self.t.base))
            .header("accept", "text/html")
            .header("content-type", "application/x-www-form-urlencoded")
            .body(serde_urlencoded::to_string(fields).unwrap());
        if let Some(o) = origin {
            rb = rb.header("origin", o);
        }
        Resp::read(rb.send().await.unwrap()).await
    }

    /// Posts `fields` as a form of this site.
    pub async fn post(&self, path: &str, fields: &[(&str, &str)]) -> Resp {
        self.post_from(path, fields, Some(&self.t.base)).await
    }

    /// The anti-forgery token of the forms on page `path`.
    pub async fn csrf(&self, path: &str) -> String {
        let page = self.get(path).await;
        page.expect(200);
        csrf_of(&page)
    }

    /// Submits a form of page `page` to `action` with `fields` and the page's token.
    pub async fn submit(&self, page: &str, action: &str, fields: &[(&str, &str)]) -> Resp {
        let token = self.csrf(page).await;
        let mut all: Vec<(&str, &str)> = fields.to_vec();
        all.push(("csrf", &token));
        self.post(action, &all).await
    }

    /// Signs in with the sign-in form.
    pub async fn sign_in(&self, email: &str, password: &str) -> Resp {
        self.submit(
            "/dashboard/login",
            "/dashboard/login",
            &[("email", email), ("password", password)],
        )
        .await
    }

    /// Signs in and checks that it worked.
    pub async fn signed_in(t: &'a TestApp, email: &str) -> Browser<'a> {
        let b = Browser::new(t);
        let r = b.sign_in(email, PASSWORD).await;
        r.expect(303);
        assert_eq!(r.header("location"), Some("/dashboard"));
        b
    }
}

/// The `csrf` value of the first form of a page.
pub fn csrf_of(page: &Resp) -> String {
    page.html()
        .select(&sel("input[name=csrf]"))
        .next()
        .and_then(|e| e.value().attr("value").map(str::to_string))
        .unwrap_or_else(|| panic!("no csrf field on the page: {}", page.text))
}

pub fn sel(s: &str) -> Selector {
    Selector::parse(s).unwrap()
}

/// The text of the first element matching `selector`, trimmed.
pub fn text_of(page: &Resp, selector: &str) -> Option<String> {
    page.html()
        .select(&sel(selector))
        .next()
        .map(|e| e.text().collect::<String>().trim().to_string())
}

/// Creates a staff user of `org` with [`PASSWORD`]; its id.
pub async fn add_user(t: &TestApp, org: OrgId, email: &str) -> UserId {
    let body = json!({"email": email, "password": PASSWORD});
    let serde_json::Value::Object(map) = body else {
        unreachable!()
    };
    users::create(t.db(), org, Input::new(map), jobboard_store::Ts::now())
        .await
        .unwrap()
        .id
}

/// Creates a pending job through the API; its id.
pub async fn api_job(t: &TestApp, key: &str, title: &str) -> String {
    let r = t
        .req(Method::POST, "/jobs")
        .key(key)
        .json(
            json!({"title": title, "description": "<p>Build things.</p>", "company_name": "Acme"}),
        )
        .send()
        .await;
    r.expect(201);
    r.body["data"]["id"].as_str().unwrap().to_string()
}

/// The event types of an organization, oldest first.
pub async fn event_types(t: &TestApp, org: OrgId) -> Vec<String> {
    jobboard_store::events::list_for_org(t.db(), org)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.event_type)
        .collect()
}

/// The `location` of a redirect, asserting the status is `303`.
#[track_caller]
pub fn redirect(r: &Resp) -> String {
    r.expect(303);
    r.header("location").unwrap_or("").to_string()
}
