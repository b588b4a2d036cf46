//! `GET /feed.xml` (RSS 2.0) and `GET /feed.json` (JSON Feed 1.1): the jobs of the board's
//! list for the same query as `/` (filters, page, `per_page`), so any search can be
//! followed as a feed. Absolute links come from `public_url` or the request's host.

use axum::{
    extract::{RawQuery, State},
    http::HeaderMap,
    response::Response,
};
use serde_json::{Map, Value, json};

use super::{Kind, cached, format, format::xml, list_deadline, query::BoardQuery, respond};
use crate::{error::PageError, site::Site};
use jobboard_app::app::AppState;
use jobboard_core::cache::Rendered;
use jobboard_domain::{
    Ts,
    jobs::{self, Job},
};

/// The jobs of a feed and what describes it.
struct Feed {
    jobs: Vec<Job>,
    title: String,
    description: String,
    /// The list page the feed follows.
    home: String,
    /// The next page of the feed, when there is one.
    next: Option<String>,
}

async fn read(app: &AppState, site: &Site, q: &BoardQuery, now: Ts) -> Result<Feed, PageError> {
    let page = jobs::list(&app.db, site.org.id, &q.list, now).await?;
    let ids: Vec<_> = page.rows.iter().map(|r| r.id).collect();
    let jobs = jobs::get_many(&app.db, site.org.id, &ids).await?;
    let name = &site.org.name;
    let title = match q.list.search.as_deref() {
        Some(s) => format!("{name}: jobs matching “{s}”"),
        None if q.is_filtered() => format!("{name}: jobs matching the filters"),
        None => format!("{name}: jobs"),
    };
    let description = site
        .org
        .tagline
        .clone()
        .unwrap_or_else(|| format!("The newest jobs on {name}."));
    let more = q.list.page < page.total_pages(q.list.per_page);
    Ok(Feed {
        jobs,
        title,
        description,
        home: site.url(&format!("/{}", q.canonical())),
        next: more.then(|| q.with_page(q.list.page + 1)),
    })
}

/// The RSS 2.0 feed.
pub async fn rss(
    State(app): State<AppState>,
    site: Site,
    headers: HeaderMap,
    RawQuery(raw): RawQuery,
) -> Result<Response, PageError> {
    serve(&app, &site, &headers, raw.as_deref(), Kind::Rss).await
}

/// The JSON Feed 1.1.
pub async fn json(
    State(app): State<AppState>,
    site: Site,
    headers: HeaderMap,
    RawQuery(raw): RawQuery,
) -> Result<Response, PageError> {
    serve(&app, &site, &headers, raw.as_deref(), Kind::JsonFeed).await
}

/// A feed of `kind` for the query `raw`, from the page cache.
async fn serve(
    app: &AppState,
    site: &Site,
    headers: &HeaderMap,
    raw: Option<&str>,
    kind: Kind,
) -> Result<Response, PageError> {
    let q = BoardQuery::read(raw)?;
    let file = if kind == Kind::Rss {
        "feed.xml"
    } else {
        "feed.json"
    };
    let path = format!("/{file}{}", q.canonical());
    let rendered = cached(app, site, &path, headers, || async {
        let now = app.clock.now();
        let feed = read(app, site, &q, now).await?;
        let self_url = site.url(&path);
        let body = if kind == Kind::Rss {
            rss_body(site, &feed, &self_url).into_bytes()
        } else {
            serde_json::to_vec(&json_body(site, &feed, &self_url))
                .map_err(|e| PageError::internal(&e))?
        };
        Ok((
            Rendered::new(body),
            list_deadline(app, site.org.id, now).await?,
        ))
    })
    .await?;
    Ok(respond(rendered, headers, site, kind))
}

fn rss_body(site: &Site, feed: &Feed, self_url: &str) -> String {
    let mut s = String::with_capacity(1024 + feed.jobs.len() * 2048);
    s.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    s.push_str("<rss version=\"2.0\" xmlns:atom=\"http://www.w3.org/2005/Atom\">\n<channel>\n");
    s.push_str(&format!("<title>{}</title>\n", xml(&feed.title)));
    s.push_str(&format!("<link>{}</link>\n", xml(&feed.home)));
    s.push_str(&format!(
        "<description>{}</description>\n",
        xml(&feed.description)
    ));
    s.push_str("<language>en</language>\n");
    s.push_str(&format!(
        "<atom:link href=\"{}\" rel=\"self\" type=\"application/rss+xml\"/>\n",
        xml(self_url)
    ));
    // The newest change among the items, so an unchanged list renders the same bytes.
    if let Some(t) = feed.jobs.iter().map(|j| j.updated_at).max() {
        s.push_str(&format!(
            "<lastBuildDate>{}</lastBuildDate>\n",
            format::rfc2822(t)
        ));
    }
    for j in &feed.jobs {
        let url = site.url(&jobs::url_of(&j.slug));
        s.push_str("<item>\n");
        s.push_str(&format!(
            "<title>{}</title>\n",
            xml(&format!("{} at {}", j.title, j.company_name))
        ));
        s.push_str(&format!("<link>{}</link>\n", xml(&url)));
        s.push_str(&format!(
            "<guid isPermaLink=\"true\">{}</guid>\n",
            xml(&url)
        ));
        s.push_str(&format!(
            "<pubDate>{}</pubDate>\n",
            format::rfc2822(j.created_at)
        ));
        if let Some(t) = j.job_type {
            s.push_str(&format!("<category>{}</category>\n", format::job_type(t)));
        }
        s.push_str(&format!(
            "<description>{}</description>\n",
            xml(&j.description)
        ));
        s.push_str("</item>\n");
    }
    s.push_str("</channel>\n</rss>\n");
    s
}

fn json_body(site: &Site, feed: &Feed, self_url: &str) -> Value {
    let items: Vec<Value> = feed
        .jobs
        .iter()
        .map(|j| {
            let url = site.url(&jobs::url_of(&j.slug));
            let mut item = Map::new();
            item.insert("id".into(), json!(j.id.to_string()));
            item.insert("url".into(), json!(url));
            item.insert(
                "title".into(),
                json!(format!("{} at {}", j.title, j.company_name)),
            );
            item.insert("content_html".into(), json!(j.description));
            item.insert(
                "summary".into(),
                json!(format::excerpt(&j.description_text, 300)),
            );
            item.insert("date_published".into(), json!(j.created_at.to_rfc3339()));
            item.insert("date_modified".into(), json!(j.updated_at.to_rfc3339()));
            item.insert("authors".into(), json!([{ "name": j.company_name }]));
            if let Some(l) = j
                .company_logo_url
                .as_deref()
                .filter(|u| u.starts_with("https://"))
            {
                item.insert("image".into(), json!(l));
            }
            let mut tags = Vec::new();
            if let Some(t) = j.job_type {
                tags.push(json!(format::job_type(t)));
            }
            if j.is_remote {
                tags.push(json!("Remote"));
            }
            if !tags.is_empty() {
                item.insert("tags".into(), Value::Array(tags));
            }
            Value::Object(item)
        })
        .collect();
    let mut doc = Map::new();
    doc.insert("version".into(), json!("https://jsonfeed.org/version/1.1"));
    doc.insert("title".into(), json!(feed.title));
    doc.insert("home_page_url".into(), json!(feed.home));
    doc.insert("feed_url".into(), json!(self_url));
    doc.insert("description".into(), json!(feed.description));
    if let Some(next) = &feed.next {
        doc.insert(
            "next_url".into(),
            json!(site.url(&format!("/feed.json{next}"))),
        );
    }
    doc.insert("language".into(), json!("en"));
    doc.insert("items".into(), Value::Array(items));
    Value::Object(doc)
}
