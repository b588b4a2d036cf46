//! Job alerts on the board: "Email me these jobs" (the form on `/` and at `/alerts`),
//! the confirmation link, and the manage and unsubscribe page of an alert. A
//! subscription passes the board's form checks ([`gate`]) and a limit per address
//! mailed, and every answer is the same whether the address was subscribed or not. The
//! unsubscribe link also takes the one-click `POST` of RFC 8058 (mail clients send no
//! form token: the link's own signature is the credential). Without an SMTP server these
//! pages do not exist (404).

use askama::Template;
use axum::{
    extract::{Path, RawQuery, State},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Redirect, Response},
};
use serde_json::{Map, Value};

use super::{
    Frame,
    gate::{self, Screened},
    query::BoardQuery,
};
use crate::{
    error::PageError,
    forms::{FieldMessages, FormData},
    page::{Chrome, Html},
    site::Site,
};
use jobboard_app::app::AppState;
use jobboard_domain::{
    Error, FieldError, Input,
    alerts::{self, Alert, AlertStatus, Frequency},
    links,
};

/// Subscriptions one address may be sent per minute (each sends a confirmation mail).
const PER_ADDRESS: u32 = 3;

/// What the form on `/` and at `/alerts` needs.
pub struct AlertForm {
    pub token: String,
    /// The list's filters (`search=rust&is_remote=true`).
    pub query: String,
}

fn binding(site: &Site) -> String {
    format!("board:{}:alerts", site.org.id)
}

/// The form of the list `q`, when the service sends mail.
pub async fn form_of(
    app: &AppState,
    site: &Site,
    q: &BoardQuery,
) -> Result<Option<AlertForm>, PageError> {
    if app.db.outgoing().is_none() {
        return Ok(None);
    }
    Ok(Some(AlertForm {
        token: gate::token(app, &binding(site)).await?,
        query: q.alert_filters(),
    }))
}

#[derive(Template)]
#[template(path = "board/alert_form.html")]
struct FormPage {
    chrome: Chrome,
    frame: Frame,
    form: AlertForm,
    email: String,
    frequency: String,
    described: String,
    problems: Vec<(String, String)>,
    notice: Option<String>,
    errors: FieldMessages,
}

#[derive(Template)]
#[template(path = "board/alert_message.html")]
struct MessagePage {
    chrome: Chrome,
    frame: Frame,
    title: String,
    lines: Vec<String>,
    /// The alert's filters in words, and its unsubscribe form, when it is shown.
    manage: Option<Manage>,
    back: String,
}

struct Manage {
    described: String,
    frequency: &'static str,
    status: &'static str,
    action: String,
}

fn mail_on(app: &AppState) -> Result<(), PageError> {
    if app.db.outgoing().is_some() {
        Ok(())
    } else {
        Err(PageError::not_found())
    }
}

fn described(query: &str) -> String {
    let pairs: Vec<(String, String)> = serde_urlencoded::from_str(query).unwrap_or_default();
    if pairs.is_empty() {
        return "every new job".into();
    }
    pairs
        .iter()
        .map(|(k, v)| format!("{}: {v}", k.replace('_', " ")))
        .collect::<Vec<_>>()
        .join("; ")
}

async fn form_page(
    app: &AppState,
    site: &Site,
    query: String,
    form: &FormData,
    errors: Vec<FieldError>,
    notice: Option<String>,
) -> Result<Html, PageError> {
    let token = gate::token(app, &binding(site)).await?;
    let chrome =
        Chrome::new(format!("Email me new jobs – {}", site.org.name)).with_theme(&site.theme.css);
    let tpl = FormPage {
        chrome,
        frame: Frame::of(site, "/alerts"),
        described: described(&query),
        form: AlertForm { token, query },
        email: form.get("email").unwrap_or("").to_string(),
        frequency: form.get("frequency").unwrap_or("daily").to_string(),
        problems: errors
            .iter()
            .map(|e| (e.field.clone(), e.message.clone()))
            .collect(),
        errors: FieldMessages::of(&errors),
        notice,
    };
    Ok(Html::render(&tpl, Some(&site.theme.csp_hash))?
        .cache_control("private, no-store")
        .robots("noindex"))
}

fn message(
    site: &Site,
    title: &str,
    lines: Vec<String>,
    manage: Option<Manage>,
) -> Result<Html, PageError> {
    let tpl = MessagePage {
        chrome: Chrome::new(format!("{title} – {}", site.org.name)).with_theme(&site.theme.css),
        frame: Frame::of(site, "/alerts"),
        title: title.to_string(),
        lines,
        manage,
        back: "/".into(),
    };
    Ok(Html::render(&tpl, Some(&site.theme.csp_hash))?
        .cache_control("private, no-store")
        .robots("noindex"))
}

/// `GET /alerts?<filters>`: the form alone (also where a refused one is shown again).
pub async fn show(
    State(app): State<AppState>,
    site: Site,
    RawQuery(raw): RawQuery,
) -> Result<Html, PageError> {
    mail_on(&app)?;
    let q = BoardQuery::read(raw.as_deref())?;
    form_page(
        &app,
        &site,
        q.alert_filters(),
        &FormData::default(),
        Vec::new(),
        None,
    )
    .await
}

/// `POST /alerts`: a subscription.
pub async fn subscribe(
    State(app): State<AppState>,
    site: Site,
    headers: HeaderMap,
    form: FormData,
) -> Result<Response, PageError> {
    mail_on(&app)?;
    let query = form.get("query").unwrap_or("").to_string();
    match gate::screen(
        &app,
        &site,
        &headers,
        &form,
        &binding(&site),
        "no alert was made",
    )
    .await?
    {
        Screened::Passed => {}
        Screened::BadToken => {
            let notice = "The form had expired or did not come from this page, so no alert was made. Please send it again.".to_string();
            let html = form_page(&app, &site, query, &form, Vec::new(), Some(notice)).await?;
            return Ok(html.status(StatusCode::FORBIDDEN).into_response());
        }
        Screened::Refused(res) => return Ok(res),
    }
    let email = form.get("email").unwrap_or("").trim().to_string();
    // Counted per mailbox: an address that is no mailbox is refused below, without mail.
    let per_address = if links::is_email(&email) {
        Some(
            app.limiter
                .check(
                    &format!(
                        "alert-email:{}:{}",
                        site.org.id,
                        links::email_identity(&email)
                    ),
                    PER_ADDRESS,
                )
                .await
                .map_err(|e| PageError::internal(&e))?,
        )
    } else {
        None
    };
    if let Some(per_address) = per_address.filter(|d| !d.allowed) {
        let mut res = PageError::too_many(per_address.retry_after_secs).into_response();
        if let Ok(v) = HeaderValue::from_str(&per_address.retry_after_secs.to_string()) {
            res.headers_mut().insert(header::RETRY_AFTER, v);
        }
        return Ok(res);
    }
    let mut body = Map::new();
    body.insert("email".into(), Value::String(email));
    if let Some(f) = form.get("frequency").filter(|f| !f.is_empty()) {
        body.insert("frequency".into(), Value::String(f.to_string()));
    }
    body.insert("query".into(), Value::String(query.clone()));
    match alerts::subscribe(&app.db, site.org.id, Input::new(body), app.clock.now()).await {
        Ok(()) => Ok(Redirect::to("/alerts/sent").into_response()),
        Err(Error::Invalid(errors)) => {
            let html = form_page(
                &app,
                &site,
                query,
                &form,
                errors,
                Some("Please correct the form.".into()),
            )
            .await?;
            Ok(html
                .status(StatusCode::UNPROCESSABLE_ENTITY)
                .into_response())
        }
        Err(e) => Err(e.into()),
    }
}

/// `GET /alerts/sent`: the same answer for every subscription.
pub async fn sent(State(app): State<AppState>, site: Site) -> Result<Html, PageError> {
    mail_on(&app)?;
    message(
        &site,
        "Check your inbox",
        vec![
            "If this address can receive job alerts, a mail with a confirmation link is on its way. Nothing is sent before you open it.".into(),
            "The link works for 7 days.".into(),
        ],
        None,
    )
}

fn manage_of(alert: &Alert, token: &str) -> Manage {
    Manage {
        described: described(&alert.query),
        frequency: match alert.frequency {
            Frequency::Instant => "as soon as they are listed",
            Frequency::Daily => "once a day",
            Frequency::Weekly => "once a week",
        },
        status: match alert.status {
            AlertStatus::Pending => "waiting for confirmation",
            AlertStatus::Active => "on",
            AlertStatus::Unsubscribed => "stopped",
        },
        action: format!("/alerts/unsubscribe/{token}"),
    }
}

fn not_found(e: Error) -> PageError {
    match e {
        Error::NotFound(_) => PageError::not_found(),
        other => other.into(),
    }
}

/// `GET /alerts/confirm/<token>`
pub async fn confirm(
    State(app): State<AppState>,
    site: Site,
    Path(token): Path<String>,
) -> Result<Html, PageError> {
    mail_on(&app)?;
    let alert = alerts::confirm(&app.db, site.org.id, &token, app.clock.now())
        .await
        .map_err(not_found)?;
    let lines = if alert.status == AlertStatus::Active {
        vec!["Your job alert is on: new jobs that match it are mailed to you.".to_string()]
    } else {
        vec!["This job alert was stopped; subscribe again on the board to restart it.".to_string()]
    };
    message(
        &site,
        "Job alert confirmed",
        lines,
        Some(manage_of(&alert, &token)),
    )
}

/// `GET /alerts/unsubscribe/<token>`: the alert, with a button that stops it.
pub async fn manage(
    State(app): State<AppState>,
    site: Site,
    Path(token): Path<String>,
) -> Result<Html, PageError> {
    mail_on(&app)?;
    let alert = alerts::by_token(&app.db, site.org.id, &token)
        .await
        .map_err(not_found)?;
    message(
        &site,
        "Your job alert",
        Vec::new(),
        Some(manage_of(&alert, &token)),
    )
}

/// `POST /alerts/unsubscribe/<token>`: stops the alert (the page's button, or a mail
/// client's one-click unsubscribe).
pub async fn unsubscribe(
    State(app): State<AppState>,
    site: Site,
    Path(token): Path<String>,
) -> Result<Html, PageError> {
    mail_on(&app)?;
    alerts::unsubscribe(&app.db, site.org.id, &token)
        .await
        .map_err(not_found)?;
    message(
        &site,
        "Job alert stopped",
        vec!["You will receive no more mail for this alert.".into()],
        None,
    )
}
