//! Webhooks: the organization's subscriptions (create, enable, disable, delete, send a
//! test ping) and each one's delivery log, every attempt with its status, error and
//! response excerpt, with a retry button per delivery. Each action calls the operation
//! the matching `/api/webhooks` endpoint calls (same address checks, same events).

use askama::Template;
use axum::{
    extract::{Path, State},
    http::StatusCode,
    response::Response,
};

use super::{
    Nav, Notice, Posted, Staff, chrome, path_id, render, render_status, session::see_other, when,
};
use crate::fields::{Choice, FieldView, Problem, fill, messages_of, values_of};
use crate::{
    error::PageError,
    forms::{FieldMessages, FormData, FormValue},
    page::Chrome,
};
use jobboard_app::app::AppState;
use jobboard_delivery::webhooks::ssrf::Policy;
use jobboard_domain::webhooks::{self, Attempt, Delivery, EventName, Subscription};

/// Deliveries shown on a subscription's page.
const LOG_SIZE: i64 = 50;

struct SubRow {
    id: String,
    event: &'static str,
    target_type: &'static str,
    target_url: String,
    enabled: bool,
    signed: bool,
    created: String,
}

impl SubRow {
    fn of(s: &Subscription) -> SubRow {
        SubRow {
            id: s.id.to_string(),
            event: s.event.as_str(),
            target_type: s.target_type.as_str(),
            target_url: s.target_url.clone(),
            enabled: s.is_enabled,
            signed: s.secret.is_some(),
            created: when(&s.created_at),
        }
    }
}

#[derive(Template)]
#[template(path = "dashboard/webhooks.html")]
struct WebhooksPage {
    chrome: Chrome,
    nav: Nav,
    subs: Vec<SubRow>,
    fields: Vec<FieldView>,
    problems: Vec<Problem>,
}

fn event_choices() -> Vec<Choice> {
    EventName::ALL
        .iter()
        .map(|e| {
            Choice::new(
                *e,
                if *e == "*" {
                    "Every event".to_string()
                } else {
                    (*e).to_string()
                },
            )
        })
        .collect()
}

async fn list_page(
    app: &AppState,
    staff: &Staff,
    form: Option<&FormData>,
    messages: &FieldMessages,
    notice: Option<&str>,
) -> Result<WebhooksPage, PageError> {
    let subs = webhooks::list(&app.db, staff.org_id()).await?;
    let mut fields = vec![
        FieldView::new("event", "Event", "select")
            .choices(event_choices())
            .required(),
        FieldView::new("target_type", "Target", "select")
            .choices(vec![
                Choice::new("webhook", "Signed JSON (webhook)"),
                Choice::new("chat_a", "Chat, Discord style"),
                Choice::new("chat_b", "Chat, Slack style"),
            ])
            .required(),
        FieldView::new("target_url", "Target address", "url")
            .hint("The https:// address that receives a POST for each event.")
            .required(),
        FieldView::new("secret", "Signing secret", "password")
            .hint("Optional, at least 16 characters: signs each delivery (X-Service-Signature). Never shown again.")
            .autocomplete("off"),
    ];
    let mut values = form.map(values_of).unwrap_or_default();
    values.remove("secret");
    let problems = fill(&mut fields, &values, messages);
    Ok(WebhooksPage {
        chrome: chrome("Webhooks"),
        nav: Nav::new(staff, "webhooks").notice(notice),
        subs: subs.iter().map(SubRow::of).collect(),
        fields,
        problems,
    })
}

/// `GET /dashboard/webhooks`
pub async fn list(
    staff: Staff,
    State(app): State<AppState>,
    Notice(notice): Notice,
) -> Result<Response, PageError> {
    render(
        &list_page(
            &app,
            &staff,
            None,
            &FieldMessages::default(),
            notice.as_deref(),
        )
        .await?,
    )
}

/// `POST /dashboard/webhooks`: subscribes a target, as `POST /api/webhooks` does.
pub async fn create(State(app): State<AppState>, posted: Posted) -> Result<Response, PageError> {
    let input = posted.form.to_input(&[
        ("event", FormValue::Text),
        ("target_type", FormValue::Text),
        ("target_url", FormValue::Text),
        ("secret", FormValue::Text),
    ]);
    let policy = Policy::new(&app.config.webhooks);
    match webhooks::create(&app.db, posted.staff.org_id(), &policy, input).await {
        Ok((sub, _)) => Ok(see_other(&format!(
            "/dashboard/webhooks/{}?notice=webhook_saved",
            sub.id
        ))),
        Err(e) => {
            let messages = messages_of(e)?;
            let page = list_page(&app, &posted.staff, Some(&posted.form), &messages, None).await?;
            render_status(&page, StatusCode::UNPROCESSABLE_ENTITY)
        }
    }
}

struct AttemptRow {
    attempt: i64,
    when: String,
    status_code: String,
    error: String,
    duration_ms: i64,
    excerpt: String,
}

impl AttemptRow {
    fn of(a: &Attempt) -> AttemptRow {
        AttemptRow {
            attempt: a.attempt,
            when: when(&a.attempted_at),
            status_code: a.status_code.map(|c| c.to_string()).unwrap_or_default(),
            error: a.error.clone().unwrap_or_default(),
            duration_ms: a.duration_ms,
            excerpt: a.response_excerpt.clone().unwrap_or_default(),
        }
    }
}

struct DeliveryRow {
    id: String,
    event: String,
    status: &'static str,
    attempts: i64,
    created: String,
    next: String,
    log: Vec<AttemptRow>,
}

impl DeliveryRow {
    fn of(d: &Delivery, log: &[Attempt]) -> DeliveryRow {
        DeliveryRow {
            id: d.id.to_string(),
            event: d.event.clone(),
            status: d.status.as_str(),
            attempts: d.attempts,
            created: when(&d.created_at),
            next: d.next_attempt_at.as_ref().map(when).unwrap_or_default(),
            log: log.iter().rev().map(AttemptRow::of).collect(),
        }
    }
}

#[derive(Template)]
#[template(path = "dashboard/webhook.html")]
struct WebhookPage {
    chrome: Chrome,
    nav: Nav,
    sub: SubRow,
    rotation_ends: Option<String>,
    deliveries: Vec<DeliveryRow>,
}

/// `GET /dashboard/webhooks/{id}`: the subscription and its delivery log.
pub async fn show(
    staff: Staff,
    State(app): State<AppState>,
    Path(raw): Path<String>,
    Notice(notice): Notice,
) -> Result<Response, PageError> {
    let id = path_id(&raw)?;
    let org = staff.org_id();
    let sub = webhooks::get(&app.db, org, id).await?;
    let log = webhooks::list_deliveries(&app.db, org, id, LOG_SIZE).await?;
    render(&WebhookPage {
        chrome: chrome(&format!("Webhook {}", sub.target_url)),
        nav: Nav::new(&staff, "webhooks").notice(notice.as_deref()),
        rotation_ends: sub.rotation_ends_at(app.clock.now()).as_ref().map(when),
        sub: SubRow::of(&sub),
        deliveries: log
            .iter()
            .map(|(d, attempts)| DeliveryRow::of(d, attempts))
            .collect(),
    })
}

/// `POST /dashboard/webhooks/{id}/enabled` (`enabled`: `true` or `false`), as
/// `PATCH /api/webhooks/{id} {is_enabled}` does.
pub async fn set_enabled(
    State(app): State<AppState>,
    Path(raw): Path<String>,
    posted: Posted,
) -> Result<Response, PageError> {
    let id = path_id(&raw)?;
    let enabled = match posted.form.get("enabled") {
        Some("true") => true,
        Some("false") => false,
        _ => return Err(PageError::bad_request("Choose to enable or disable it.")),
    };
    let mut map = serde_json::Map::new();
    map.insert("is_enabled".into(), serde_json::Value::Bool(enabled));
    let policy = Policy::new(&app.config.webhooks);
    webhooks::update(
        &app.db,
        posted.staff.org_id(),
        id,
        &policy,
        jobboard_domain::Input::new(map),
    )
    .await?;
    let notice = if enabled {
        "webhook_enabled"
    } else {
        "webhook_disabled"
    };
    Ok(see_other(&format!(
        "/dashboard/webhooks/{id}?notice={notice}"
    )))
}

/// `POST /dashboard/webhooks/{id}/test`: queues a `ping`, as `POST /api/webhooks/{id}/test`.
pub async fn test(
    State(app): State<AppState>,
    Path(raw): Path<String>,
    posted: Posted,
) -> Result<Response, PageError> {
    let id = path_id(&raw)?;
    let sub = webhooks::get(&app.db, posted.staff.org_id(), id).await?;
    match webhooks::test(&app.db, &sub).await {
        Ok(_) => Ok(see_other(&format!(
            "/dashboard/webhooks/{id}?notice=ping_queued"
        ))),
        Err(jobboard_domain::Error::Conflict { .. }) => Ok(see_other(&format!(
            "/dashboard/webhooks/{id}?notice=webhook_disabled_first"
        ))),
        Err(e) => Err(e.into()),
    }
}

/// `POST /dashboard/webhooks/{id}/deliveries/{delivery}/retry`
pub async fn retry(
    State(app): State<AppState>,
    Path((raw, raw_delivery)): Path<(String, String)>,
    posted: Posted,
) -> Result<Response, PageError> {
    let id = path_id(&raw)?;
    let delivery = path_id(&raw_delivery)?;
    let sub = webhooks::get(&app.db, posted.staff.org_id(), id).await?;
    match webhooks::retry_delivery(&app.db, &sub, delivery).await {
        Ok(_) => Ok(see_other(&format!(
            "/dashboard/webhooks/{id}?notice=retry_queued"
        ))),
        Err(jobboard_domain::Error::Conflict { .. }) => Ok(see_other(&format!(
            "/dashboard/webhooks/{id}?notice=webhook_disabled_first"
        ))),
        Err(e) => Err(e.into()),
    }
}

/// `POST /dashboard/webhooks/{id}/delete`: deletes it with its deliveries.
pub async fn delete(
    State(app): State<AppState>,
    Path(raw): Path<String>,
    posted: Posted,
) -> Result<Response, PageError> {
    let id = path_id(&raw)?;
    webhooks::delete(&app.db, posted.staff.org_id(), id).await?;
    Ok(see_other("/dashboard/webhooks?notice=webhook_deleted"))
}
