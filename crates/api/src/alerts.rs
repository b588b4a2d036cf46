//! Job alerts: `GET /alerts`, `GET /alerts.csv`, `DELETE /alerts/{id}`. Alerts are made
//! on the board (they need the subscriber's confirmation); the API reads and removes them.

use axum::{
    Json,
    extract::{Path, State},
    http::{HeaderValue, header},
    response::{IntoResponse, Response},
};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use super::{Auth, Query, docs::Pagination, extract::path_id};
use jobboard_app::app::AppState;
use jobboard_app::error::ApiResult;
use jobboard_core::text::push_csv_row;
use jobboard_domain::{
    Error, Ts,
    alerts::{self, Alert, AlertListQuery},
};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_alerts))
        .routes(routes!(export_alerts))
        .routes(routes!(delete_alert))
}

/// Alerts exist only while the service sends mail.
fn mail_on(app: &AppState) -> ApiResult<()> {
    if app.db.outgoing().is_some() {
        Ok(())
    } else {
        Err(Error::conflict(
            "This service sends no mail (no SMTP server is configured), so it keeps no job alerts.",
            serde_json::json!({ "reason": "mail_not_configured" }),
        )
        .into())
    }
}

#[derive(Serialize, ToSchema)]
pub struct AlertListOut {
    pub data: Vec<Alert>,
    pub meta: AlertListMeta,
}

#[derive(Serialize, ToSchema)]
pub struct AlertListMeta {
    pub pagination: Pagination,
}

#[derive(Serialize, ToSchema)]
pub struct AlertDeleted {
    pub id: Uuid,
    /// Always true.
    pub deleted: bool,
}

#[derive(Serialize, ToSchema)]
pub struct AlertDeletedOut {
    pub data: AlertDeleted,
}

/// List the organization's job alerts, newest first.
///
/// Filter by `email` (ignoring the case of ASCII letters) and `status`; pages as
/// `GET /jobs` pages. `409 conflict` while the service sends no mail. Needs the
/// `members:read` scope.
#[utoipa::path(get, path = "/alerts", tag = "alerts", params(AlertListQuery),
    responses(
        (status = 200, description = "One page.", body = AlertListOut),
        (status = 409, description = "No mail is sent, so there are no alerts.", body = crate::docs::Error),
    ))]
async fn list_alerts(
    State(app): State<AppState>,
    auth: Auth,
    Query(mut q): Query,
) -> ApiResult<Json<AlertListOut>> {
    auth.require("members:read")?;
    let lq = AlertListQuery::read(&mut q);
    q.finish()?;
    mail_on(&app)?;
    let page = alerts::list(&app.db, auth.org_id, &lq).await?;
    Ok(Json(AlertListOut {
        meta: AlertListMeta {
            pagination: Pagination::of(lq.page, lq.per_page, page.total),
        },
        data: page.rows,
    }))
}

fn when(t: Option<Ts>) -> String {
    t.map(|t| t.to_string()).unwrap_or_default()
}

/// Export the organization's job alerts as CSV, newest first.
///
/// The same filters as `GET /alerts` (`email`, `status`), every matching alert (no
/// paging): columns `id, email, frequency, query, status, created_at, confirmed_at,
/// last_sent_at`. `409 conflict` while the service sends no mail. Needs the
/// `members:read` scope.
#[utoipa::path(get, path = "/alerts.csv", tag = "alerts", params(AlertListQuery),
    responses(
        (status = 200, description = "The alerts as CSV.", content_type = "text/csv", body = String),
        (status = 409, description = "No mail is sent, so there are no alerts.", body = crate::docs::Error),
    ))]
async fn export_alerts(
    State(app): State<AppState>,
    auth: Auth,
    Query(mut q): Query,
) -> ApiResult<Response> {
    auth.require("members:read")?;
    let lq = AlertListQuery::read(&mut q);
    q.finish()?;
    mail_on(&app)?;
    let rows = alerts::export(&app.db, auth.org_id, &lq).await?;
    let mut out =
        String::from("id,email,frequency,query,status,created_at,confirmed_at,last_sent_at\r\n");
    for a in rows {
        let fields = [
            a.id.to_string(),
            a.email,
            a.frequency.as_str().into(),
            a.query,
            a.status.as_str().into(),
            a.created_at.to_string(),
            when(a.confirmed_at),
            when(a.last_sent_at),
        ];
        push_csv_row(&mut out, &fields);
    }
    let mut res = out.into_response();
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/csv; charset=utf-8"),
    );
    h.insert(
        header::CONTENT_DISPOSITION,
        HeaderValue::from_static("attachment; filename=\"alerts.csv\""),
    );
    Ok(res)
}

/// Delete a job alert.
///
/// Its subscriber gets no more mail. `409 conflict` while the service sends no mail.
/// Needs the `members:write` scope.
#[utoipa::path(delete, path = "/alerts/{id}", tag = "alerts",
    params(("id" = Uuid, Path, description = "The alert id.")),
    responses(
        (status = 200, description = "Deleted.", body = AlertDeletedOut),
        (status = 409, description = "No mail is sent, so there are no alerts.", body = crate::docs::Error),
    ))]
async fn delete_alert(
    State(app): State<AppState>,
    auth: Auth,
    Path(raw): Path<String>,
    Query(q): Query,
) -> ApiResult<Json<AlertDeletedOut>> {
    auth.require("members:write")?;
    q.finish()?;
    mail_on(&app)?;
    let id = path_id(&raw, "alert")?;
    alerts::delete(&app.db, auth.org_id, id).await?;
    Ok(Json(AlertDeletedOut {
        data: AlertDeleted { id, deleted: true },
    }))
}
