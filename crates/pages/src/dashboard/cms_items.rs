//! A collection's items: in tabs by status with the `pending_review` queue first (publish
//! or archive each), and a form to create or edit an item made from the collection's
//! schema, with its status, position and publishing window. Each action calls the
//! operation the matching `/api/cms/{slug}` endpoint calls.

use askama::Template;
use axum::{
    extract::{Path, RawQuery, State},
    http::StatusCode,
    response::Response,
};
use jobboard_domain::cms::Purge as _;
use serde_json::{Map, Value};

use super::{
    Nav, Posted, Staff, chrome, params, path_id, render, render_status, session::see_other, when,
};
use crate::fields::{Choice, FieldView, Problem, fill, values_of};
use crate::{
    error::PageError,
    forms::{FieldMessages, FormData},
    page::Chrome,
    schema_form::{self, Dates, SchemaField},
};
use jobboard_app::app::AppState;
use jobboard_domain::{
    Error, FieldError, Input,
    cms::{self, Collection, FieldType, Item, ItemStatus, ListFilter},
};

/// Items per page.
const PER_PAGE: i64 = 25;

/// The tabs: the review queue first.
const TABS: &[(&str, &str)] = &[
    ("pending_review", "Waiting for review"),
    ("published", "Published"),
    ("draft", "Drafts"),
    ("expired", "Expired"),
    ("archived", "Archived"),
];

struct Tab {
    key: &'static str,
    label: &'static str,
    current: bool,
}

struct Row {
    id: String,
    title: String,
    updated: String,
    window: String,
    /// (status, button label) of the quick moves offered.
    moves: Vec<(&'static str, &'static str)>,
}

/// An item's title: its first non-blank text value, else its id.
fn title_of(c: &Collection, item: &Item) -> String {
    c.schema
        .0
        .iter()
        .filter(|d| d.kind == FieldType::Text)
        .find_map(|d| {
            item.data
                .0
                .get(&d.name)
                .and_then(Value::as_str)
                .filter(|s| !s.trim().is_empty())
                .map(str::to_string)
        })
        .unwrap_or_else(|| format!("Entry {}", item.id))
}

fn moves(status: ItemStatus) -> Vec<(&'static str, &'static str)> {
    [
        (ItemStatus::Published, "Publish"),
        (ItemStatus::Archived, "Archive"),
    ]
    .into_iter()
    .filter(|(s, _)| *s != status)
    .map(|(s, l)| (s.as_str(), l))
    .collect()
}

#[derive(Template)]
#[template(path = "dashboard/cms_items.html")]
struct ItemsPage {
    chrome: Chrome,
    nav: Nav,
    slug: String,
    name: String,
    tabs: Vec<Tab>,
    tab: &'static str,
    rows: Vec<Row>,
    total: i64,
    page: i64,
    pages: i64,
}

/// `GET /dashboard/cms/{slug}/items?status=&page=`
pub async fn list(
    staff: Staff,
    State(app): State<AppState>,
    Path(slug): Path<String>,
    RawQuery(q): RawQuery,
) -> Result<Response, PageError> {
    let p = params(q.as_deref());
    let org = staff.org_id();
    let c = cms::collection(&app.db, org, &slug).await?;
    let (tab, _) = TABS
        .iter()
        .copied()
        .find(|(k, _)| Some(*k) == p.get("status").map(String::as_str))
        .unwrap_or(TABS[0]);
    let status = ItemStatus::parse(tab).unwrap_or(ItemStatus::PendingReview);
    let page = p
        .get("page")
        .and_then(|v| v.parse::<i64>().ok())
        .unwrap_or(1)
        .clamp(1, 100_000);
    let (items, total) = cms::list_items(
        &app.db,
        org,
        c.id,
        ListFilter::Status(status),
        c.rules.order(),
        PER_PAGE,
        (page - 1) * PER_PAGE,
    )
    .await?;
    let rows = items
        .iter()
        .map(|i| Row {
            id: i.id.to_string(),
            title: title_of(&c, i),
            updated: when(&i.updated_at),
            window: match (i.starts_at, i.expires_at) {
                (None, None) => String::new(),
                (s, e) => format!(
                    "{} – {}",
                    s.as_ref().map(when).unwrap_or_default(),
                    e.as_ref().map(when).unwrap_or_default()
                ),
            },
            moves: moves(i.status),
        })
        .collect();
    render(&ItemsPage {
        chrome: chrome(&c.name),
        nav: Nav::new(&staff, "cms").notice(p.get("notice").map(String::as_str)),
        tabs: TABS
            .iter()
            .map(|(key, label)| Tab {
                key,
                label,
                current: *key == tab,
            })
            .collect(),
        tab,
        rows,
        total,
        page,
        pages: (total + PER_PAGE - 1) / PER_PAGE,
        slug: c.slug,
        name: c.name,
    })
}

#[derive(Template)]
#[template(path = "dashboard/cms_item.html")]
struct ItemPage {
    chrome: Chrome,
    nav: Nav,
    slug: String,
    name: String,
    /// The item being edited; `None` for a new one.
    id: Option<String>,
    schema_fields: Vec<SchemaField>,
    fields: Vec<FieldView>,
    problems: Vec<Problem>,
}

fn item_fields() -> Vec<FieldView> {
    vec![
        FieldView::new("status", "Status", "select").choices(
            ItemStatus::ALL
                .iter()
                .map(|s| Choice::new(*s, s.replace('_', " ")))
                .collect(),
        ),
        FieldView::new("position", "Position", "number")
            .hint("Lists without another order show lower positions first."),
        FieldView::new("starts_at", "Listed from", "text")
            .hint("Optional: a date and time with its offset, e.g. 2026-12-01T09:00:00Z."),
        FieldView::new("expires_at", "Listed until", "text")
            .hint("Optional, after “Listed from”; the entry expires then."),
    ]
}

fn page(
    staff: &Staff,
    c: &Collection,
    id: Option<String>,
    form: &FormData,
    errors: &[FieldError],
) -> ItemPage {
    let errors = schema_form::on_controls(errors.to_vec());
    let messages = FieldMessages::of(&errors);
    let mut fields = item_fields();
    let mut problems = fill(&mut fields, &values_of(form), &messages);
    // The schema's controls are drawn by their own template: link their problems.
    for p in problems.iter_mut().filter(|p| p.target.is_empty()) {
        if let Some(def) = c
            .schema
            .0
            .iter()
            .find(|d| schema_form::control_name(d) == p.label)
        {
            p.target = format!("f-{}", p.label);
            p.label = schema_form::label_of(&def.name);
        }
    }
    ItemPage {
        chrome: chrome(if id.is_some() {
            "Edit an entry"
        } else {
            "New entry"
        }),
        nav: Nav::new(staff, "cms"),
        slug: c.slug.clone(),
        name: c.name.clone(),
        id,
        schema_fields: schema_form::fields(&c.schema.0, form, &messages, Dates::Text),
        fields,
        problems,
    }
}

/// The form values of a stored item.
fn form_of(c: &Collection, item: &Item) -> FormData {
    let mut f = schema_form::form_of(&c.schema.0, &item.data.0);
    f.0.push(("status".into(), item.status.as_str().into()));
    f.0.push(("position".into(), item.position.to_string()));
    if let Some(t) = item.starts_at {
        f.0.push(("starts_at".into(), t.to_string()));
    }
    if let Some(t) = item.expires_at {
        f.0.push(("expires_at".into(), t.to_string()));
    }
    FormData(f.0)
}

/// The body `POST /api/cms/{slug}` (or `PATCH`) takes, from the form: empty window boxes
/// clear the window.
fn body_of(c: &Collection, form: &FormData) -> Input {
    let text = |k: &str| form.get(k).unwrap_or("").trim().to_string();
    let mut map = Map::new();
    map.insert(
        "data".into(),
        Value::Object(schema_form::data_of(&c.schema.0, form)),
    );
    map.insert("status".into(), Value::String(text("status")));
    let position = text("position");
    if !position.is_empty() {
        map.insert(
            "position".into(),
            position
                .parse::<i64>()
                .map(Value::from)
                .unwrap_or(Value::String(position)),
        );
    }
    for k in ["starts_at", "expires_at"] {
        let v = text(k);
        map.insert(
            k.into(),
            if v.is_empty() {
                Value::Null
            } else {
                Value::String(v)
            },
        );
    }
    Input::new(map)
}

/// `GET /dashboard/cms/{slug}/items/new`
pub async fn new_form(
    staff: Staff,
    State(app): State<AppState>,
    Path(slug): Path<String>,
) -> Result<Response, PageError> {
    let c = cms::collection(&app.db, staff.org_id(), &slug).await?;
    let defaults = FormData(vec![
        ("status".into(), ItemStatus::Published.as_str().into()),
        ("position".into(), "0".into()),
    ]);
    render(&page(&staff, &c, None, &defaults, &[]))
}

/// `GET /dashboard/cms/{slug}/items/{id}`
pub async fn edit_form(
    staff: Staff,
    State(app): State<AppState>,
    Path((slug, raw)): Path<(String, String)>,
) -> Result<Response, PageError> {
    let id = path_id(&raw)?;
    let org = staff.org_id();
    let c = cms::collection(&app.db, org, &slug).await?;
    let item = cms::get_item(&app.db, org, c.id, id).await?;
    render(&page(&staff, &c, Some(raw), &form_of(&c, &item), &[]))
}

fn after(c: &Collection, status: ItemStatus, notice: &str) -> Response {
    see_other(&format!(
        "/dashboard/cms/{}/items?status={}&notice={notice}",
        c.slug,
        status.as_str()
    ))
}

fn refused(
    staff: &Staff,
    c: &Collection,
    id: Option<String>,
    form: &FormData,
    e: Error,
) -> Result<Response, PageError> {
    match e {
        Error::Invalid(errors) | Error::Schema(errors) => render_status(
            &page(staff, c, id, form, &errors),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        other => Err(other.into()),
    }
}

/// `POST /dashboard/cms/{slug}/items/new`
pub async fn create(
    State(app): State<AppState>,
    Path(slug): Path<String>,
    posted: Posted,
) -> Result<Response, PageError> {
    let org = posted.staff.org_id();
    let c = cms::collection(&app.db, org, &slug).await?;
    match cms::save_item(&app.db, org, &c, body_of(&c, &posted.form)).await {
        Ok(saved) => {
            app.cms_cache.purge(org, c.id);
            Ok(after(&c, saved.item.status, "entry_saved"))
        }
        Err(e) => refused(&posted.staff, &c, None, &posted.form, e),
    }
}

/// `POST /dashboard/cms/{slug}/items/{id}`
pub async fn update(
    State(app): State<AppState>,
    Path((slug, raw)): Path<(String, String)>,
    posted: Posted,
) -> Result<Response, PageError> {
    let id = path_id(&raw)?;
    let org = posted.staff.org_id();
    let c = cms::collection(&app.db, org, &slug).await?;
    match cms::update_item(&app.db, org, &c, id, body_of(&c, &posted.form)).await {
        Ok(item) => {
            app.cms_cache.purge(org, c.id);
            Ok(after(&c, item.status, "entry_saved"))
        }
        Err(e) => refused(&posted.staff, &c, Some(raw), &posted.form, e),
    }
}

/// `POST /dashboard/cms/{slug}/items/{id}/status` (`status`; `back`, the tab to return
/// to): as `PATCH /api/cms/{slug}/{id} {status}`.
pub async fn set_status(
    State(app): State<AppState>,
    Path((slug, raw)): Path<(String, String)>,
    posted: Posted,
) -> Result<Response, PageError> {
    let id = path_id(&raw)?;
    let org = posted.staff.org_id();
    let c = cms::collection(&app.db, org, &slug).await?;
    let status = posted
        .form
        .get("status")
        .and_then(ItemStatus::parse)
        .ok_or_else(|| PageError::bad_request("Choose the entry's new status."))?;
    let mut map = Map::new();
    map.insert("status".into(), Value::String(status.as_str().into()));
    cms::update_item(&app.db, org, &c, id, Input::new(map)).await?;
    app.cms_cache.purge(org, c.id);
    let back = posted
        .form
        .get("back")
        .and_then(ItemStatus::parse)
        .unwrap_or(status);
    Ok(after(&c, back, "entry_moved"))
}

/// `POST /dashboard/cms/{slug}/items/{id}/delete`
pub async fn delete(
    State(app): State<AppState>,
    Path((slug, raw)): Path<(String, String)>,
    posted: Posted,
) -> Result<Response, PageError> {
    let id = path_id(&raw)?;
    let org = posted.staff.org_id();
    let c = cms::collection(&app.db, org, &slug).await?;
    let item = cms::get_item(&app.db, org, c.id, id).await?;
    cms::delete_item(&app.db, org, c.id, id).await?;
    app.cms_cache.purge(org, c.id);
    Ok(after(&c, item.status, "entry_deleted"))
}
