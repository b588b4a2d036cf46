//! Imports (`/dashboard/imports`): the organization's import sources with their last run
//! (when, what it did, why it failed, which jobs it refused), a form for a new source,
//! running one now and deleting one. The same operations as `jobboard imports`
//! (docs/distribution.md).

use std::collections::HashMap;

use askama::Template;
use axum::{
    extract::{Path, RawQuery, State},
    http::StatusCode,
    response::Response,
};

use super::{
    Nav, Posted, Staff, chrome, params, path_id, render, render_status, session::see_other,
};
use crate::{
    error::PageError,
    fields::{Choice, FieldView, Problem, fill, messages_of, values_of},
    forms::{FieldMessages, FormValue},
    page::Chrome,
};
use jobboard_app::app::AppState;
use jobboard_domain::{
    categories,
    imports::{self, Counts, Kind, Source},
};

const SPEC: &[(&str, FormValue)] = &[
    ("kind", FormValue::Text),
    ("url", FormValue::Text),
    ("every", FormValue::Number),
    ("status", FormValue::Text),
    ("category", FormValue::Text),
];

/// The kinds as the form names them.
fn kind_label(k: Kind) -> &'static str {
    match k {
        Kind::Greenhouse => "Greenhouse job board",
        Kind::Lever => "Lever postings",
        Kind::Ashby => "Ashby job board",
        Kind::Xml => "Indeed XML feed",
        Kind::JsonFeed => "JSON Feed",
    }
}

fn fields(categories: &[categories::Category]) -> Vec<FieldView> {
    let kinds = Kind::ALL
        .iter()
        .filter_map(|k| Kind::parse(k))
        .map(|k| Choice::new(k.as_str(), kind_label(k)))
        .collect();
    let mut category = vec![Choice::new("", "No category")];
    category.extend(
        categories
            .iter()
            .map(|c| Choice::new(c.slug.clone(), c.name.clone())),
    );
    vec![
        FieldView::new("kind", "Kind", "select")
            .choices(kinds)
            .required(),
        FieldView::new("url", "Address", "url")
            .hint("The public address of the job board or feed, e.g. https://boards-api.greenhouse.io/v1/boards/acme/jobs?content=true")
            .required(),
        FieldView::new("every", "Every, minutes", "number")
            .hint("Between runs: 5 to 10080 (a week). 60 when left empty."),
        FieldView::new("status", "New jobs become", "select").choices(vec![
            Choice::new("pending", "Pending (waiting for approval)"),
            Choice::new("active", "Active (listed at once)"),
        ]),
        FieldView::new("category", "Category", "select").choices(category),
    ]
}

struct Row {
    id: String,
    kind: &'static str,
    url: String,
    every: i64,
    status: &'static str,
    category: Option<String>,
    last_run: Option<String>,
    summary: Option<String>,
    failed: bool,
    refusals: Vec<(String, String)>,
}

#[derive(Template)]
#[template(path = "dashboard/imports.html")]
struct ImportsPage {
    chrome: Chrome,
    nav: Nav,
    rows: Vec<Row>,
    fields: Vec<FieldView>,
    problems: Vec<Problem>,
}

fn row(s: Source, names: &HashMap<jobboard_domain::CategoryId, String>) -> Row {
    let counts: Option<Counts> = s
        .last_result
        .as_ref()
        .and_then(|r| serde_json::from_value(r.0.clone()).ok());
    Row {
        id: s.id.to_string(),
        kind: kind_label(s.kind),
        url: s.url,
        every: s.every_minutes,
        status: s.job_status.as_str(),
        category: s.category_id.and_then(|c| names.get(&c).cloned()),
        last_run: s
            .last_run_at
            .map(|t| t.0.format("%Y-%m-%d %H:%M UTC").to_string()),
        summary: counts.as_ref().map(Counts::summary),
        failed: counts.as_ref().is_some_and(|c| c.error.is_some()),
        refusals: counts.map(|c| c.refusals).unwrap_or_default(),
    }
}

async fn page(
    app: &AppState,
    staff: &Staff,
    values: &HashMap<String, String>,
    messages: &FieldMessages,
    notice: Option<&str>,
) -> Result<ImportsPage, PageError> {
    let org = staff.org_id();
    let cats = categories::list(&app.db, org).await?;
    let names = cats.iter().map(|c| (c.id, c.name.clone())).collect();
    let rows = imports::list(&app.db, org)
        .await?
        .into_iter()
        .map(|s| row(s, &names))
        .collect();
    let mut fields = fields(&cats);
    let mut values = values.clone();
    values.entry("status".into()).or_insert("pending".into());
    let problems = fill(&mut fields, &values, messages);
    Ok(ImportsPage {
        chrome: chrome("Imports"),
        nav: Nav::new(staff, "imports").notice(notice),
        rows,
        fields,
        problems,
    })
}

/// `GET /dashboard/imports`
pub async fn show(
    staff: Staff,
    State(app): State<AppState>,
    RawQuery(raw): RawQuery,
) -> Result<Response, PageError> {
    let p = params(raw.as_deref());
    let notice = p.get("notice").map(String::as_str);
    render(
        &page(
            &app,
            &staff,
            &HashMap::new(),
            &FieldMessages::default(),
            notice,
        )
        .await?,
    )
}

/// `POST /dashboard/imports`: a new source (its first run is due at once).
pub async fn create(State(app): State<AppState>, posted: Posted) -> Result<Response, PageError> {
    let staff = &posted.staff;
    match imports::create(&app.db, staff.org_id(), posted.form.to_input(SPEC)).await {
        Ok(s) => {
            tracing::info!(source_id = %s.id, user_id = %staff.session.user_id, "import source created in the dashboard");
            Ok(see_other("/dashboard/imports?notice=source_added"))
        }
        Err(e) => {
            let messages = messages_of(e)?;
            render_status(
                &page(&app, staff, &values_of(&posted.form), &messages, None).await?,
                StatusCode::UNPROCESSABLE_ENTITY,
            )
        }
    }
}

/// The organization's source `raw`, or not found.
async fn source_of(app: &AppState, staff: &Staff, raw: &str) -> Result<Source, PageError> {
    let id: uuid::Uuid = path_id(raw)?;
    Ok(imports::get(&app.db, Some(staff.org_id()), id).await?)
}

/// `POST /dashboard/imports/{id}/run`: runs the source now, in the background (a large
/// source takes longer than a page should); the page shows the result once it is done.
pub async fn run(
    State(app): State<AppState>,
    Path(raw): Path<String>,
    posted: Posted,
) -> Result<Response, PageError> {
    let source = source_of(&app, &posted.staff, &raw).await?;
    let (db, fetcher) = (app.db.clone(), app.imports.clone());
    tokio::spawn(async move {
        if let Err(e) = jobboard_delivery::imports::run(&db, &fetcher, &source).await {
            tracing::warn!(error = ?e, source_id = %source.id, "import run failed");
        }
    });
    Ok(see_other("/dashboard/imports?notice=run_started"))
}

/// `POST /dashboard/imports/{id}/delete`: the source goes; its jobs stay as they are.
pub async fn delete(
    State(app): State<AppState>,
    Path(raw): Path<String>,
    posted: Posted,
) -> Result<Response, PageError> {
    let source = source_of(&app, &posted.staff, &raw).await?;
    imports::delete(&app.db, Some(posted.staff.org_id()), source.id).await?;
    tracing::info!(source_id = %source.id, user_id = %posted.staff.session.user_id, "import source deleted in the dashboard");
    Ok(see_other("/dashboard/imports?notice=source_deleted"))
}
