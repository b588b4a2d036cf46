//! Settings > Prices: what the board sells a post (and a featured upgrade) for, the
//! payment account they go through (its secrets masked), a form for a new price, and
//! archiving one. The same operations as `jobboard prices` (docs/payments.md).

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
    fields::{FieldView, Problem, fill, messages_of, values_of},
    forms::{FieldMessages, FormValue},
    page::Chrome,
};
use jobboard_app::app::AppState;
use jobboard_domain::payments::{self, Price};

const SPEC: &[(&str, FormValue)] = &[
    ("name", FormValue::Text),
    ("amount", FormValue::Number),
    ("currency", FormValue::Text),
    ("days", FormValue::Number),
    ("featured_days", FormValue::Number),
];

fn fields() -> Vec<FieldView> {
    vec![
        FieldView::new("name", "Name", "text").required(),
        FieldView::new("amount", "Amount, in minor units", "number")
            .hint("Cents for EUR or USD: 4900 is 49.00.")
            .required(),
        FieldView::new("currency", "Currency", "text")
            .hint("Three letters, e.g. EUR.")
            .required(),
        FieldView::new("days", "Listed for, days", "number").required(),
        FieldView::new("featured_days", "Featured for, days", "number")
            .hint("Optional: the job is listed first for this long, and the price is offered as the featured upgrade of a live job."),
    ]
}

struct Row {
    id: String,
    name: String,
    amount: String,
    days: i64,
    featured_days: Option<i64>,
    archived: bool,
}

#[derive(Template)]
#[template(path = "dashboard/prices.html")]
struct PricesPage {
    chrome: Chrome,
    nav: Nav,
    /// The account's API and masked key, when there is one.
    account: Option<(String, String)>,
    rows: Vec<Row>,
    fields: Vec<FieldView>,
    problems: Vec<Problem>,
}

/// The end of a secret, for recognising it: `…d4f2`.
fn masked(secret: &str) -> String {
    let tail: String = secret
        .chars()
        .rev()
        .take(4)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    format!("…{tail}")
}

async fn page(
    app: &AppState,
    staff: &Staff,
    values: &HashMap<String, String>,
    messages: &FieldMessages,
    notice: Option<&str>,
) -> Result<PricesPage, PageError> {
    let org = staff.org_id();
    let account = payments::account(&app.db, org)
        .await?
        .map(|a| (a.api_url.clone(), masked(&a.secret_key)));
    let rows = payments::all_prices(&app.db, org)
        .await?
        .into_iter()
        .map(|p: Price| Row {
            id: p.id.to_string(),
            amount: p.display(),
            name: p.name,
            days: p.days,
            featured_days: p.featured_days,
            archived: p.archived_at.is_some(),
        })
        .collect();
    let mut fields = fields();
    let problems = fill(&mut fields, values, messages);
    Ok(PricesPage {
        chrome: chrome("Prices"),
        nav: Nav::new(staff, "prices").notice(notice),
        account,
        rows,
        fields,
        problems,
    })
}

/// `GET /dashboard/settings/prices`
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

/// `POST /dashboard/settings/prices`: a new price.
pub async fn create(State(app): State<AppState>, posted: Posted) -> Result<Response, PageError> {
    let staff = &posted.staff;
    match payments::create_price(&app.db, staff.org_id(), posted.form.to_input(SPEC)).await {
        Ok(p) => {
            tracing::info!(price_id = %p.id, user_id = %staff.session.user_id, "price created in the dashboard");
            Ok(see_other("/dashboard/settings/prices?notice=saved"))
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

/// `POST /dashboard/settings/prices/{id}/archive`
pub async fn archive(
    State(app): State<AppState>,
    Path(raw): Path<String>,
    posted: Posted,
) -> Result<Response, PageError> {
    let id: uuid::Uuid = path_id(&raw)?;
    let org = posted.staff.org_id();
    if !payments::all_prices(&app.db, org)
        .await?
        .iter()
        .any(|p| p.id == id)
    {
        return Err(PageError::not_found());
    }
    payments::archive_price(&app.db, id).await?;
    Ok(see_other("/dashboard/settings/prices?notice=saved"))
}
