//! Settings > API keys: the organization's keys (name, prefix, scopes, limits, created,
//! last used, revoked), a form that creates one and shows the full key once, and a revoke
//! button per key. A key created here works on `/api` at once; a revoked one is refused
//! from the next request on, on every node.

use std::collections::HashMap;

use askama::Template;
use axum::{
    extract::{Path, State},
    http::StatusCode,
    response::Response,
};

use super::{
    Nav, Notice, Posted, Staff, chrome, path_id, render, render_status, session::see_other, when,
};
use crate::fields::{FieldView, Problem, fill, messages_of, values_of};
use crate::{
    error::PageError,
    forms::{FieldMessages, FormData, FormValue},
    page::Chrome,
};
use jobboard_app::app::AppState;
use jobboard_domain::keys::secret::SCOPES;
use jobboard_domain::keys::{self, ApiKey, Defaults};

/// A key as listed.
struct KeyRow {
    id: String,
    name: String,
    prefix: String,
    scopes: String,
    read_limit: i64,
    write_limit: i64,
    created: String,
    last_used: String,
    revoked: Option<String>,
}

impl KeyRow {
    fn of(k: &ApiKey) -> KeyRow {
        KeyRow {
            id: k.id.to_string(),
            name: k.name.clone(),
            prefix: k.prefix.clone(),
            scopes: if k.scopes == "*" {
                "all".into()
            } else {
                k.scopes.replace(' ', ", ")
            },
            read_limit: k.read_limit,
            write_limit: k.write_limit,
            created: when(&k.created_at),
            last_used: k.last_used_at.as_ref().map_or_else(|| "never".into(), when),
            revoked: k.revoked_at.as_ref().map(when),
        }
    }
}

/// A scope checkbox of the create form.
struct ScopeBox {
    value: &'static str,
    checked: bool,
}

/// A key just created: the only time its full text is shown.
struct Created {
    full: String,
    prefix: String,
    name: String,
}

#[derive(Template)]
#[template(path = "dashboard/keys.html")]
struct KeysPage {
    chrome: Chrome,
    nav: Nav,
    keys: Vec<KeyRow>,
    created: Option<Created>,
    fields: Vec<FieldView>,
    all_scopes: bool,
    scopes: Vec<ScopeBox>,
    scopes_error: Option<String>,
    problems: Vec<Problem>,
}

fn defaults(app: &AppState) -> Defaults {
    Defaults {
        read_limit: app.config.default_read_limit,
        write_limit: app.config.default_write_limit,
    }
}

/// The page with the create form holding `form` (or the defaults) and `messages`.
async fn page(
    app: &AppState,
    staff: &Staff,
    form: Option<&FormData>,
    messages: &FieldMessages,
    created: Option<Created>,
    notice: Option<&str>,
) -> Result<KeysPage, PageError> {
    let listed = keys::list(&app.db, staff.org_id()).await?;
    let d = defaults(app);
    let mut fields = vec![
        FieldView::new("name", "Name", "text").hint("What the key is for, e.g. “careers site”."),
        FieldView::new("read_limit", "Reads per minute", "number").hint("GET requests per minute."),
        FieldView::new("write_limit", "Writes per minute", "number")
            .hint("POST, PATCH, PUT and DELETE requests per minute."),
    ];
    let values = match form {
        Some(f) => values_of(f),
        None => HashMap::from([
            ("read_limit".to_string(), d.read_limit.to_string()),
            ("write_limit".to_string(), d.write_limit.to_string()),
        ]),
    };
    let mut problems = fill(&mut fields, &values, messages);
    let checked: Vec<&str> = form.map(|f| f.all("scopes")).unwrap_or_default();
    let scopes_error = messages.get("scopes").map(str::to_string);
    if let Some(m) = &scopes_error {
        problems.insert(
            0,
            Problem {
                target: "f-scopes".into(),
                label: "Scopes".into(),
                message: m.clone(),
            },
        );
        problems.retain(|p| !(p.target.is_empty() && p.label == "scopes"));
    }
    Ok(KeysPage {
        chrome: chrome("API keys"),
        nav: Nav::new(staff, "api-keys").notice(notice),
        keys: listed.iter().rev().map(KeyRow::of).collect(),
        created,
        fields,
        all_scopes: form.is_none() || checked.contains(&"*"),
        scopes: SCOPES
            .iter()
            .map(|s| ScopeBox {
                value: s,
                checked: checked.contains(s),
            })
            .collect(),
        scopes_error,
        problems,
    })
}

/// `GET /dashboard/settings/api-keys`
pub async fn page_get(
    staff: Staff,
    State(app): State<AppState>,
    Notice(notice): Notice,
) -> Result<Response, PageError> {
    render(
        &page(
            &app,
            &staff,
            None,
            &FieldMessages::default(),
            None,
            notice.as_deref(),
        )
        .await?,
    )
}

/// `POST /dashboard/settings/api-keys`: creates a key and shows it once.
pub async fn create(State(app): State<AppState>, posted: Posted) -> Result<Response, PageError> {
    let staff = &posted.staff;
    let checked = posted.form.all("scopes");
    // "All scopes" wins over single ones; none checked is refused by the operation.
    let scopes = if checked.contains(&"*") {
        "*".to_string()
    } else {
        checked.join(" ")
    };
    let mut body = FormData(
        posted
            .form
            .0
            .iter()
            .filter(|(k, _)| k != "scopes")
            .cloned()
            .collect(),
    );
    body.0.push(("scopes".into(), scopes));
    let input = body.to_input(&[
        ("name", FormValue::Text),
        ("scopes", FormValue::Required),
        ("read_limit", FormValue::Number),
        ("write_limit", FormValue::Number),
    ]);
    match keys::create(&app.db, staff.org_id(), input, defaults(&app)).await {
        Ok((key, full)) => {
            let created = Created {
                full,
                prefix: key.prefix.clone(),
                name: key.name.clone(),
            };
            let p = page(
                &app,
                staff,
                None,
                &FieldMessages::default(),
                Some(created),
                None,
            )
            .await?;
            render_status(&p, StatusCode::CREATED)
        }
        Err(e) => {
            let messages = messages_of(e)?;
            let p = page(&app, staff, Some(&posted.form), &messages, None, None).await?;
            render_status(&p, StatusCode::UNPROCESSABLE_ENTITY)
        }
    }
}

/// `POST /dashboard/settings/api-keys/{id}/revoke`
pub async fn revoke(
    State(app): State<AppState>,
    Path(raw): Path<String>,
    posted: Posted,
) -> Result<Response, PageError> {
    let id = path_id(&raw)?;
    keys::revoke(&app.db, posted.staff.org_id(), id).await?;
    Ok(see_other("/dashboard/settings/api-keys?notice=revoked"))
}
