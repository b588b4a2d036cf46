//! The audit log's dashboard side: [`record`], the layer that writes an entry for every
//! state-changing dashboard form that succeeded and for every sign-in, and Settings >
//! Audit log (`/dashboard/settings/audit`), which lists them.
//!
//! The layer needs no help from the pages: a form that passed the anti-forgery checks
//! notes who sent it ([`Slot::note`], called by [`super::Posted`]); the action is named
//! by the route the form was posted to, the record by the route's parameters. A response
//! that starts a session (the sign-in form, a setup link) is a sign-in. Entries are
//! written right after the action's own transaction committed, not inside it.

use std::sync::{Arc, Mutex};

use askama::Template;
use axum::{
    extract::{MatchedPath, RawQuery, Request, State},
    http::{Method, header},
    middleware::Next,
    response::Response,
};

use super::{Nav, Staff, chrome, params, render, when};
use crate::{error::PageError, forms::FormData, page::Chrome};
use jobboard_app::app::AppState;
use jobboard_domain::{
    OrgId, QueryInput, UserId,
    audit::{self, AuditQuery, NewEntry},
    sessions,
};

/// Form fields worth keeping as an entry's detail (never a password, token or secret).
const DETAIL_FIELDS: &[&str] = &["status", "enabled", "email", "name", "role"];

/// Who sent a form that passed the anti-forgery checks, as the layer records it.
#[derive(Debug, Clone)]
struct Actor {
    org_id: OrgId,
    user_id: UserId,
    email: String,
    detail: Option<String>,
}

/// Where a request's form notes its sender for [`record`].
#[derive(Debug, Clone, Default)]
pub struct Slot(Arc<Mutex<Option<Actor>>>);

impl Slot {
    /// Notes the staff member who sent `form` (checked), and what of it is worth keeping.
    pub fn note(&self, staff: &Staff, form: &FormData) {
        let detail: Vec<String> = DETAIL_FIELDS
            .iter()
            .filter_map(|k| form.get(k).map(|v| format!("{k}={}", clip(v, 100))))
            .collect();
        let actor = Actor {
            org_id: staff.org_id(),
            user_id: staff.session.user_id,
            email: staff.session.email.clone(),
            detail: (!detail.is_empty()).then(|| detail.join(", ")),
        };
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(actor);
    }

    fn take(&self) -> Option<Actor> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

fn clip(s: &str, max: usize) -> String {
    s.chars().take(max).collect()
}

/// The action of a form posted to route `template`.
fn action_of(template: &str) -> &'static str {
    match template.trim_start_matches("/dashboard") {
        "/logout" => "signed_out",
        "/jobs/new" => "job.created",
        "/jobs/{id}" => "job.updated",
        "/jobs/{id}/status" => "job.status_changed",
        "/jobs/{id}/delete" => "job.deleted",
        "/applications/{id}/status" => "application.status_changed",
        "/cms/new" => "collection.created",
        "/cms/{slug}/edit" => "collection.updated",
        "/cms/{slug}/items/new" => "entry.created",
        "/cms/{slug}/items/{id}" => "entry.updated",
        "/cms/{slug}/items/{id}/status" => "entry.status_changed",
        "/cms/{slug}/items/{id}/delete" => "entry.deleted",
        "/webhooks" => "webhook.created",
        "/webhooks/{id}/enabled" => "webhook.enabled_changed",
        "/webhooks/{id}/test" => "webhook.tested",
        "/webhooks/{id}/delete" => "webhook.deleted",
        "/webhooks/{id}/deliveries/{delivery}/retry" => "delivery.retried",
        "/imports" => "import_source.created",
        "/imports/{id}/run" => "import_source.run",
        "/imports/{id}/delete" => "import_source.deleted",
        "/settings/prices" => "price.created",
        "/settings/prices/{id}/archive" => "price.archived",
        "/settings/api-keys" => "key.created",
        "/settings/api-keys/{id}/revoke" => "key.revoked",
        "/settings/board" => "settings.board_changed",
        "/settings/staff" => "staff.added",
        "/settings/staff/{id}/remove" => "staff.removed",
        "/settings/password" => "password.changed",
        "/settings/two-factor/setup" => "two_factor.setup_started",
        "/settings/two-factor/setup/confirm" => "two_factor.enabled",
        "/settings/two-factor/off" => "two_factor.disabled",
        _ => "dashboard.action",
    }
}

/// The values of the route's parameters in `path`, joined by `/` (a job's id, a
/// collection's slug and an entry's id, ...).
fn target_of(template: &str, path: &str) -> Option<String> {
    let values: Vec<&str> = template
        .split('/')
        .zip(path.split('/'))
        .filter(|(t, _)| t.starts_with('{'))
        .map(|(_, v)| v)
        .collect();
    (!values.is_empty()).then(|| clip(&values.join("/"), 300))
}

/// The session id a response gives the browser, when it starts one.
fn started_session(app: &AppState, res: &Response) -> Option<String> {
    res.headers()
        .get_all(header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter_map(|v| v.split(';').next())
        .filter_map(|pair| pair.split_once('='))
        .find(|(name, value)| {
            *name == super::cookies::session_cookie_name(app) && !value.is_empty()
        })
        .map(|(_, value)| value.to_string())
}

/// The layer: runs the request, then records what a successful staff form did.
pub async fn record(State(app): State<AppState>, mut req: Request, next: Next) -> Response {
    if req.method() != Method::POST {
        return next.run(req).await;
    }
    let slot = Slot::default();
    req.extensions_mut().insert(slot.clone());
    let path = req.uri().path().to_string();
    let template = req
        .extensions()
        .get::<MatchedPath>()
        .map(|m| m.as_str().to_string())
        .unwrap_or_else(|| path.clone());
    let ip =
        jobboard_app::net::client_ip(req.extensions(), req.headers(), &app.config.trusted_proxies)
            .map(|ip| ip.to_string());
    let res = next.run(req).await;
    if !(res.status().is_success() || res.status().is_redirection()) {
        return res;
    }
    let now = app.clock.now();
    let entry = if let Some(actor) = slot.take() {
        let action = action_of(&template);
        let target = if action == "dashboard.action" {
            Some(clip(&path, 300))
        } else {
            target_of(&template, &path)
        };
        Some(NewEntry {
            org_id: actor.org_id,
            actor_user_id: Some(actor.user_id),
            actor_email: actor.email,
            action: action.to_string(),
            target,
            detail: actor.detail,
            ip,
        })
    } else if let Some(id) = started_session(&app, &res) {
        match sessions::resume(&app.db, &id, now, &app.config.dashboard).await {
            Ok(Some(s)) => Some(NewEntry {
                org_id: s.org_id,
                actor_user_id: Some(s.user_id),
                actor_email: s.email,
                action: "signed_in".into(),
                target: None,
                detail: None,
                ip,
            }),
            Ok(None) => None,
            Err(e) => {
                tracing::error!(error = ?e, "audit log: the new session could not be read");
                None
            }
        }
    } else {
        None
    };
    if let Some(e) = entry
        && let Err(err) = audit::record(&app.db, &e, now).await
    {
        tracing::error!(error = ?err, action = %e.action, org_id = e.org_id.0, "audit log entry not recorded");
    }
    res
}

/// An entry as listed.
struct Row {
    at: String,
    actor: String,
    action: String,
    target: String,
    detail: String,
    ip: String,
}

#[derive(Template)]
#[template(path = "dashboard/audit.html")]
struct AuditPage {
    chrome: Chrome,
    nav: Nav,
    rows: Vec<Row>,
    total: i64,
    page: i64,
    pages: i64,
    action: String,
    base: String,
}

/// Settings > Audit log: the organization's entries, newest first, 50 a page.
pub async fn page(
    staff: Staff,
    State(app): State<AppState>,
    RawQuery(q): RawQuery,
) -> Result<Response, PageError> {
    let p = params(q.as_deref());
    let action = p.get("action").cloned().unwrap_or_default();
    let page: i64 = p
        .get("page")
        .and_then(|v| v.parse().ok())
        .filter(|n| (1..=1_000_000).contains(n))
        .unwrap_or(1);
    let mut pairs = vec![("page".to_string(), page.to_string())];
    if !action.is_empty() {
        pairs.push(("action".into(), action.clone()));
    }
    let mut input = QueryInput::parse(Some(
        &serde_urlencoded::to_string(&pairs).unwrap_or_default(),
    ));
    let aq = AuditQuery::read(&mut input);
    input.finish()?;
    let found = audit::list(&app.db, staff.org_id(), &aq).await?;
    let rows = found
        .rows
        .iter()
        .map(|e| Row {
            at: when(&e.at),
            actor: e.actor_email.clone(),
            action: e.action.clone(),
            target: e.target.clone().unwrap_or_default(),
            detail: e.detail.clone().unwrap_or_default(),
            ip: e.ip.clone().unwrap_or_default(),
        })
        .collect();
    let base = format!(
        "/dashboard/settings/audit?{}",
        serde_urlencoded::to_string([("action", action.as_str())]).unwrap_or_default()
    );
    render(&AuditPage {
        chrome: chrome("Audit log"),
        nav: Nav::new(&staff, "audit"),
        rows,
        total: found.total,
        page,
        pages: (found.total + aq.per_page - 1) / aq.per_page,
        action,
        base,
    })
}
