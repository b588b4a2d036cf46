//! `GET /c/<collection>` and `GET /c/<collection>/<id>`: the published items of a public
//! CMS collection whose window is open (`starts_at` passed, `expires_at` not yet), as the
//! API's public list has them, rendered from the collection's schema: text as text, long
//! text with its line breaks, numbers, yes or no, dates, `url` fields as links (http(s)
//! only), `image` fields as images (https only, which the page's policy allows), select
//! values as text. Gated and private collections, and items outside their window, are 404.
//! Pages are kept in the page cache against the collection's own version.

use askama::Template;
use axum::{
    extract::{Path, RawQuery, State},
    http::HeaderMap,
    response::Response,
};
use serde_json::Value;
use uuid::Uuid;

use super::{Frame, Kind, bypass, respond};
use crate::{error::PageError, page::Chrome, site::Site};
use jobboard_app::app::AppState;
use jobboard_core::cache::{MAX_AGE_MICROS, Rendered};
use jobboard_domain::{
    Ts,
    cms::{self, Collection, FieldType, Item, ItemStatus, ListFilter, Visibility},
    links,
};

/// Items on one page of a list.
const PER_PAGE: i64 = 20;
/// Pages past this are not served (the list's offset stays bounded).
const MAX_PAGE: i64 = 10_000;

/// One field of an item, ready to show.
struct Shown {
    label: String,
    value: Cell,
}

/// How a value is shown.
enum Cell {
    Text(String),
    Long(String),
    Link(String, String),
    Image(String, String),
}

/// An item in a list or on its page: its title (its first text value, else its position)
/// and its other fields.
struct ItemView {
    href: String,
    title: String,
    fields: Vec<Shown>,
}

#[derive(Template)]
#[template(path = "board/cms_list.html")]
struct ListPage {
    chrome: Chrome,
    frame: Frame,
    name: String,
    /// The submission form, when the collection takes submissions.
    submit_href: Option<String>,
    items: Vec<ItemView>,
    page: i64,
    prev: Option<String>,
    next: Option<String>,
}

#[derive(Template)]
#[template(path = "board/cms_item.html")]
struct ItemPage {
    chrome: Chrome,
    frame: Frame,
    name: String,
    list_href: String,
    item: ItemView,
}

/// The public collection of `slug`, or a 404.
async fn public_collection(
    app: &AppState,
    site: &Site,
    slug: &str,
) -> Result<Collection, PageError> {
    match cms::collection(&app.db, site.org.id, slug).await {
        Ok(c) if c.visibility == Visibility::Public => Ok(c),
        Ok(_) | Err(jobboard_domain::Error::NotFound(_)) => Err(PageError::not_found()),
        Err(e) => Err(e.into()),
    }
}

/// `page` of `?page=N` (1 when absent); a 400 page for anything else.
fn page_of(raw: Option<&str>) -> Result<i64, PageError> {
    let mut page = 1;
    for pair in raw.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        if k != "page" {
            continue;
        }
        page = v
            .parse::<i64>()
            .ok()
            .filter(|p| (1..=MAX_PAGE).contains(p))
            .ok_or_else(|| {
                PageError::bad_request(format!("The page number must be between 1 and {MAX_PAGE}."))
            })?;
    }
    Ok(page)
}

/// The rendering of `key`, kept against the collection's version and until its next
/// window boundary (an item entering or leaving the list by time).
async fn cached<F, Fut>(
    app: &AppState,
    site: &Site,
    collection: &Collection,
    key: &str,
    headers: &HeaderMap,
    render: F,
) -> Result<Rendered, PageError>
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = Result<Rendered, PageError>>,
{
    let now = app.clock.now();
    let boundary = cms::next_boundary(&app.db, collection.id, now)
        .await?
        .map_or(i64::MAX, |t| t.micros());
    let deadline = boundary.min(now.micros() + MAX_AGE_MICROS);
    app.pages_cache
        .read_through(
            (
                site.org.id,
                format!("{}|cms|{}|{key}", site.origin, collection.id),
            ),
            collection.version,
            || app.clock.now().micros(),
            bypass(headers),
            || async move { Ok((render().await?, deadline)) },
        )
        .await
}

/// `GET /c/<collection>`.
pub async fn list(
    State(app): State<AppState>,
    site: Site,
    headers: HeaderMap,
    Path(slug): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Response, PageError> {
    let collection = public_collection(&app, &site, &slug).await?;
    let page = page_of(raw.as_deref())?;
    let key = format!("list|{page}");
    let rendered = cached(&app, &site, &collection, &key, &headers, || async {
        let (items, total) = cms::list_items(
            &app.db,
            site.org.id,
            collection.id,
            ListFilter::Public(app.clock.now()),
            collection.rules.order(),
            PER_PAGE,
            (page - 1) * PER_PAGE,
        )
        .await?;
        let path = format!("/c/{}", collection.slug);
        let mut chrome = Chrome::new(format!("{} – {}", collection.name, site.org.name))
            .with_theme(&site.theme.css);
        chrome.canonical = Some(site.url(&path));
        let tpl = ListPage {
            chrome,
            frame: Frame::of(&site, &path),
            name: collection.name.clone(),
            submit_href: collection
                .rules
                .allow_public_submit
                .then(|| format!("{path}/submit")),
            items: items.iter().map(|i| view(&collection, i)).collect(),
            page,
            prev: (page > 1).then(|| format!("{path}?page={}", page - 1)),
            next: (page * PER_PAGE < total).then(|| format!("{path}?page={}", page + 1)),
        };
        let body = tpl.render().map_err(|e| PageError::internal(&e))?;
        Ok(Rendered::new(body.into_bytes()))
    })
    .await?;
    Ok(respond(rendered, &headers, &site, Kind::Html))
}

/// `GET /c/<collection>/<id>`.
pub async fn item(
    State(app): State<AppState>,
    site: Site,
    headers: HeaderMap,
    Path((slug, raw_id)): Path<(String, String)>,
) -> Result<Response, PageError> {
    let collection = public_collection(&app, &site, &slug).await?;
    let id: Uuid = raw_id.parse().map_err(|_| PageError::not_found())?;
    let key = format!("item|{id}");
    let rendered = cached(&app, &site, &collection, &key, &headers, || async {
        let item = match cms::get_item(&app.db, site.org.id, collection.id, id).await {
            Ok(i) if in_window(&i, app.clock.now()) => i,
            Ok(_) | Err(jobboard_domain::Error::NotFound(_)) => return Err(PageError::not_found()),
            Err(e) => return Err(e.into()),
        };
        let shown = view(&collection, &item);
        let path = shown.href.clone();
        let mut chrome = Chrome::new(format!(
            "{} – {} – {}",
            shown.title, collection.name, site.org.name
        ))
        .with_theme(&site.theme.css);
        chrome.canonical = Some(site.url(&path));
        let tpl = ItemPage {
            chrome,
            frame: Frame::of(&site, &path),
            name: collection.name.clone(),
            list_href: format!("/c/{}", collection.slug),
            item: shown,
        };
        let body = tpl.render().map_err(|e| PageError::internal(&e))?;
        Ok(Rendered::new(body.into_bytes()))
    })
    .await?;
    Ok(respond(rendered, &headers, &site, Kind::Html))
}

/// Whether an item is in the public list at `now`.
fn in_window(item: &Item, now: Ts) -> bool {
    item.status == ItemStatus::Published
        && item.starts_at.is_none_or(|s| s <= now)
        && item.expires_at.is_none_or(|e| e > now)
}

/// An item as shown, its fields in the schema's order.
fn view(collection: &Collection, item: &Item) -> ItemView {
    let mut title = None;
    let mut fields = Vec::new();
    for def in &collection.schema.0 {
        let Some(v) = item.data.0.get(&def.name).filter(|v| !v.is_null()) else {
            continue;
        };
        let label = def.name.replace('_', " ");
        let shown = match (def.kind, v) {
            (FieldType::Text | FieldType::Select, Value::String(s)) => {
                if title.is_none() && def.kind == FieldType::Text && !s.trim().is_empty() {
                    title = Some(s.clone());
                    continue;
                }
                Cell::Text(s.clone())
            }
            (FieldType::Longtext, Value::String(s)) => Cell::Long(s.clone()),
            (FieldType::Number, Value::Number(n)) => Cell::Text(number(n)),
            (FieldType::Boolean, Value::Bool(b)) => {
                Cell::Text(if *b { "Yes" } else { "No" }.into())
            }
            (FieldType::Date, Value::String(s)) => Cell::Text(s.clone()),
            (FieldType::Url, Value::String(s)) => match links::renderable_href(s) {
                Some(href) if href.starts_with("http") => Cell::Link(href, s.clone()),
                _ => Cell::Text(s.clone()),
            },
            (FieldType::Image, Value::String(s)) if s.starts_with("https://") => {
                Cell::Image(s.clone(), label.clone())
            }
            (_, Value::String(s)) => Cell::Text(s.clone()),
            (_, other) => Cell::Text(other.to_string()),
        };
        fields.push(Shown {
            label,
            value: shown,
        });
    }
    ItemView {
        href: format!("/c/{}/{}", collection.slug, item.id),
        title: title.unwrap_or_else(|| format!("Item {}", item.position)),
        fields,
    }
}

/// A number as people write it (no `.0` on whole numbers).
fn number(n: &serde_json::Number) -> String {
    match n.as_f64() {
        Some(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
        _ => n.to_string(),
    }
}
