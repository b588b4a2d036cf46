//! Webhook subscriptions: `POST /webhooks`, `GET /webhooks`, `GET|PATCH|DELETE
//! /webhooks/{id}`, `GET /webhooks/{id}/deliveries`,
//! `POST /webhooks/{id}/deliveries/{delivery_id}/retry`, `POST /webhooks/{id}/test`.

use crate::http::input::Getters;
use axum::{
    Json,
    extract::{Path, State},
    http::StatusCode,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use super::{Auth, JsonBody, Query, extract::path_id, input::Input};
use crate::{
    app::AppState,
    db::{
        self, Ts,
        webhooks::{self as store, Attempt, Delivery, Subscription, SubscriptionPatch},
    },
    error::{ApiError, ApiResult},
    webhooks::{self, ssrf::Policy},
};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_webhooks, create_webhook))
        .routes(routes!(get_webhook, update_webhook, delete_webhook))
        .routes(routes!(list_deliveries))
        .routes(routes!(retry_delivery))
        .routes(routes!(test_webhook))
}

/// Event names a subscription can name (`*`: all of them).
pub const EVENTS: &[&str] = &[
    "job.created",
    "job.updated",
    "job.approved",
    "job.expired",
    "job.deleted",
    "job.status_changed",
    "application.received",
    "application.status_changed",
    "user.created",
    "subscription.created",
    "subscription.canceled",
    "payment.received",
    "*",
];

pub const TARGET_TYPES: &[&str] = &["webhook", "chat_a", "chat_b"];

/// One event name of the Events table, or `*` for all.
#[derive(Deserialize, Serialize, ToSchema)]
pub enum EventName {
    #[serde(rename = "job.created")]
    JobCreated,
    #[serde(rename = "job.updated")]
    JobUpdated,
    #[serde(rename = "job.approved")]
    JobApproved,
    #[serde(rename = "job.expired")]
    JobExpired,
    #[serde(rename = "job.deleted")]
    JobDeleted,
    #[serde(rename = "job.status_changed")]
    JobStatusChanged,
    #[serde(rename = "application.received")]
    ApplicationReceived,
    #[serde(rename = "application.status_changed")]
    ApplicationStatusChanged,
    #[serde(rename = "user.created")]
    UserCreated,
    #[serde(rename = "subscription.created")]
    SubscriptionCreated,
    #[serde(rename = "subscription.canceled")]
    SubscriptionCanceled,
    #[serde(rename = "payment.received")]
    PaymentReceived,
    #[serde(rename = "*")]
    All,
}

/// `webhook` (signed JSON), `chat_a` (Discord-style embeds), `chat_b` (Slack-style blocks).
#[derive(Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TargetType {
    Webhook,
    ChatA,
    ChatB,
}

/// Body of `POST /webhooks`.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WebhookIn {
    pub event: EventName,
    pub target_type: TargetType,
    /// Absolute http(s) URL receiving the POST deliveries. Hosts resolving to loopback,
    /// private, link-local, multicast or other non-public addresses are refused unless the
    /// server allows them.
    #[schema(max_length = 2048, format = "uri")]
    pub target_url: String,
    /// At least 16 characters; signs deliveries (`X-Service-Signature`). Ignored for chat
    /// targets. Never returned.
    #[schema(min_length = 16, max_length = 1024)]
    pub secret: Option<String>,
}

/// Body of `PATCH /webhooks/{id}`: at least one field.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WebhookPatch {
    pub event: Option<EventName>,
    #[schema(max_length = 2048, format = "uri")]
    pub target_url: Option<String>,
    /// Re-enabling ends the failure streak.
    pub is_enabled: Option<bool>,
    /// A new secret; null removes it. Ignored for chat targets.
    #[schema(min_length = 16, max_length = 1024)]
    pub secret: Option<String>,
}

/// A webhook subscription (the secret is never returned).
#[derive(Serialize, ToSchema)]
pub struct Webhook {
    pub id: Uuid,
    pub target_url: String,
    /// False once disabled, by a `PATCH` or by the service (`410 Gone`, or failing for the
    /// configured streak, 5 days by default, without one success).
    pub is_enabled: bool,
    pub created_at: Ts,
    pub updated_at: Ts,
    pub event: EventName,
    pub target_type: TargetType,
}

fn out(s: &Subscription) -> Value {
    json!({
        "id": s.id,
        "target_url": s.target_url,
        "is_enabled": s.is_enabled,
        "created_at": s.created_at,
        "updated_at": s.updated_at,
        "event": s.event,
        "target_type": s.target_type,
    })
}

#[derive(Serialize, ToSchema)]
pub struct WebhookOut {
    pub data: Webhook,
}

#[derive(Serialize, ToSchema)]
pub struct WebhookListOut {
    pub data: Vec<Webhook>,
    pub meta: ListMeta,
}

#[derive(Serialize, ToSchema)]
pub struct ListMeta {
    pub total: i64,
}

#[derive(Serialize, ToSchema)]
pub struct Deleted {
    pub id: Uuid,
    /// Always true.
    pub deleted: bool,
}

#[derive(Serialize, ToSchema)]
pub struct DeletedOut {
    pub data: Deleted,
}

/// A delivery with its attempt log.
#[derive(Serialize, ToSchema)]
pub struct DeliveryOut {
    #[serde(flatten)]
    pub delivery: Delivery,
    /// Every attempt, oldest first.
    pub attempt_log: Vec<Attempt>,
}

#[derive(Serialize, ToSchema)]
pub struct DeliveryOneOut {
    pub data: DeliveryOut,
}

#[derive(Serialize, ToSchema)]
pub struct DeliveryListOut {
    pub data: Vec<DeliveryOut>,
    pub meta: ListMeta,
}

fn read_event(input: &mut Input, required: bool) -> Option<String> {
    input.one_of("event", required, EVENTS).opt()
}

/// Reads `target_url` and checks it against the SSRF policy.
async fn read_target_url(app: &AppState, input: &mut Input, required: bool) -> Option<String> {
    let url = input.url("target_url", required).opt()?;
    let policy = Policy::new(&app.config.webhooks);
    match policy.check_url(&url).await {
        Ok(()) => Some(url),
        Err(msg) => {
            input.error("target_url", "forbidden_target", msg);
            None
        }
    }
}

fn read_secret(input: &mut Input) -> db_field::Secret {
    match input.field_with("secret", false, |v| super::input::check_string(v, 16, 1024)) {
        super::input::Field::Absent => db_field::Secret::Keep,
        super::input::Field::Null => db_field::Secret::Clear,
        super::input::Field::Value(s) => db_field::Secret::Set(s),
    }
}

mod db_field {
    pub enum Secret {
        Keep,
        Clear,
        Set(String),
    }
}

async fn find(app: &AppState, auth: &Auth, raw: &str) -> ApiResult<Subscription> {
    let id = path_id(raw, "webhook")?;
    store::get(&app.db, auth.org_id, id)
        .await?
        .ok_or_else(|| ApiError::not_found("webhook"))
}

/// Register a webhook subscription.
///
/// The same organization, `event`, `target_type` and `target_url` as an existing
/// subscription returns that one with `200` (its secret replaced when one is sent);
/// otherwise the subscription is created (`201`).
#[utoipa::path(post, path = "/webhooks", tag = "webhooks", request_body = WebhookIn,
    responses(
        (status = 201, description = "Created.", body = WebhookOut),
        (status = 200, description = "The existing subscription with these settings.", body = WebhookOut),
    ))]
async fn create_webhook(
    State(app): State<AppState>,
    auth: Auth,
    JsonBody(mut input): JsonBody,
) -> ApiResult<(StatusCode, Json<Value>)> {
    auth.require("webhooks:write")?;
    let event = read_event(&mut input, true);
    let target_type = input.one_of("target_type", true, TARGET_TYPES).opt();
    let target_url = read_target_url(&app, &mut input, true).await;
    let secret = read_secret(&mut input);
    input.finish()?;
    let (Some(event), Some(target_type), Some(target_url)) = (event, target_type, target_url)
    else {
        return Err(ApiError::internal(&"validated fields missing"));
    };
    let secret = match secret {
        db_field::Secret::Set(s) if target_type == "webhook" => Some(s),
        _ => None,
    };
    let (sub, created) = store::upsert(
        &app.db,
        auth.org_id,
        &event,
        &target_type,
        &target_url,
        secret.as_deref(),
    )
    .await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(json!({ "data": out(&sub) }))))
}

/// List the organization's webhook subscriptions, newest first.
#[utoipa::path(get, path = "/webhooks", tag = "webhooks",
    responses((status = 200, description = "Every subscription.", body = WebhookListOut)))]
async fn list_webhooks(
    State(app): State<AppState>,
    auth: Auth,
    Query(q): Query,
) -> ApiResult<Json<Value>> {
    auth.require("webhooks:read")?;
    q.finish()?;
    let list = store::list(&app.db, auth.org_id).await?;
    let data: Vec<Value> = list.iter().map(out).collect();
    Ok(Json(
        json!({ "data": data, "meta": { "total": list.len() } }),
    ))
}

/// Read one webhook subscription.
#[utoipa::path(get, path = "/webhooks/{id}", tag = "webhooks",
    params(("id" = String, Path, description = "The subscription id (UUID).")),
    responses((status = 200, description = "The subscription.", body = WebhookOut)))]
async fn get_webhook(
    State(app): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    Query(q): Query,
) -> ApiResult<Json<Value>> {
    auth.require("webhooks:read")?;
    q.finish()?;
    let sub = find(&app, &auth, &id).await?;
    Ok(Json(json!({ "data": out(&sub) })))
}

/// Change a subscription's `event`, `target_url`, `secret` or `is_enabled`.
///
/// A change that makes it equal to another subscription (same event, target type and URL)
/// is `409 conflict`.
#[utoipa::path(patch, path = "/webhooks/{id}", tag = "webhooks", request_body = WebhookPatch,
    params(("id" = String, Path, description = "The subscription id (UUID).")),
    responses((status = 200, description = "The updated subscription.", body = WebhookOut)))]
async fn update_webhook(
    State(app): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    JsonBody(mut input): JsonBody,
) -> ApiResult<Json<Value>> {
    auth.require("webhooks:write")?;
    let id = path_id(&id, "webhook")?;
    if input.is_empty() {
        input.error(
            "body",
            "required",
            "Send at least one of event, target_url, secret, is_enabled.",
        );
    }
    let event = read_event(&mut input, false);
    let target_url = read_target_url(&app, &mut input, false).await;
    let is_enabled = input.boolean("is_enabled", false).opt();
    let secret = read_secret(&mut input);
    input.finish()?;
    let patch = SubscriptionPatch {
        event,
        target_url,
        is_enabled,
        secret: match secret {
            db_field::Secret::Keep => None,
            db_field::Secret::Clear => Some(None),
            db_field::Secret::Set(s) => Some(Some(s)),
        },
    };
    match store::update(&app.db, auth.org_id, id, &patch).await {
        Ok(Some(sub)) => {
            if sub.is_enabled {
                webhooks::wake();
            }
            Ok(Json(json!({ "data": out(&sub) })))
        }
        Ok(None) => Err(ApiError::not_found("webhook")),
        Err(e) if db::is_unique_violation(&e) => Err(ApiError::conflict(
            "Another subscription has the same event, target type and target URL.",
            json!({ "fields": ["event", "target_url"] }),
        )),
        Err(e) => Err(e.into()),
    }
}

/// Delete a webhook subscription permanently; its pending deliveries are discarded.
#[utoipa::path(delete, path = "/webhooks/{id}", tag = "webhooks",
    params(("id" = String, Path, description = "The subscription id (UUID).")),
    responses((status = 200, description = "Deleted.", body = DeletedOut)))]
async fn delete_webhook(
    State(app): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    Query(q): Query,
) -> ApiResult<Json<Value>> {
    auth.require("webhooks:write")?;
    q.finish()?;
    let id = path_id(&id, "webhook")?;
    if store::delete(&app.db, auth.org_id, id).await? {
        Ok(Json(json!({ "data": { "id": id, "deleted": true } })))
    } else {
        Err(ApiError::not_found("webhook"))
    }
}

fn delivery_out(d: Delivery, attempts: Vec<Attempt>) -> Value {
    let mut v = serde_json::to_value(&d).unwrap_or_default();
    v["attempt_log"] = serde_json::to_value(&attempts).unwrap_or_default();
    v
}

/// The subscription's newest deliveries with their attempt log (status code, error,
/// duration, response excerpt of at most 2 KiB).
#[utoipa::path(get, path = "/webhooks/{id}/deliveries", tag = "webhooks",
    params(
        ("id" = String, Path, description = "The subscription id (UUID)."),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 100, description = "How many deliveries, newest first (default 20)."),
    ),
    responses((status = 200, description = "Deliveries, newest first.", body = DeliveryListOut)))]
async fn list_deliveries(
    State(app): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    Query(mut q): Query,
) -> ApiResult<Json<Value>> {
    auth.require("webhooks:read")?;
    let limit = q.integer("limit", 20, 1, 100);
    q.finish()?;
    let sub = find(&app, &auth, &id).await?;
    let list = store::list_deliveries(&app.db, auth.org_id, sub.id, limit).await?;
    let n = list.len();
    let data: Vec<Value> = list.into_iter().map(|(d, a)| delivery_out(d, a)).collect();
    Ok(Json(json!({ "data": data, "meta": { "total": n } })))
}

/// Make a delivery due again now, with a fresh retry schedule (also after it succeeded
/// or failed). A disabled subscription must be enabled first (`409`).
#[utoipa::path(post, path = "/webhooks/{id}/deliveries/{delivery_id}/retry", tag = "webhooks",
    params(
        ("id" = String, Path, description = "The subscription id (UUID)."),
        ("delivery_id" = String, Path, description = "The delivery id (UUID)."),
    ),
    responses(
        (status = 200, description = "The delivery, pending.", body = DeliveryOneOut),
        (status = 409, description = "The subscription is disabled.", body = crate::http::docs::Error),
    ))]
async fn retry_delivery(
    State(app): State<AppState>,
    auth: Auth,
    Path((id, delivery_id)): Path<(String, String)>,
    Query(q): Query,
) -> ApiResult<Json<Value>> {
    auth.require("webhooks:write")?;
    q.finish()?;
    let sub = find(&app, &auth, &id).await?;
    let delivery_id = path_id(&delivery_id, "delivery")?;
    if !sub.is_enabled {
        return Err(disabled());
    }
    let d = store::retry_delivery(&app.db, auth.org_id, sub.id, delivery_id)
        .await?
        .ok_or_else(|| ApiError::not_found("delivery"))?;
    webhooks::wake();
    Ok(Json(json!({ "data": delivery_out(d, Vec::new()) })))
}

fn disabled() -> ApiError {
    ApiError::conflict(
        "The subscription is disabled; enable it with PATCH first.",
        json!({ "is_enabled": false }),
    )
}

/// Send a `ping` event (data `{subscription_id}`) to the subscription's target.
#[utoipa::path(post, path = "/webhooks/{id}/test", tag = "webhooks",
    params(("id" = String, Path, description = "The subscription id (UUID).")),
    responses(
        (status = 201, description = "The ping delivery, queued.", body = DeliveryOneOut),
        (status = 409, description = "The subscription is disabled.", body = crate::http::docs::Error),
    ))]
async fn test_webhook(
    State(app): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    Query(q): Query,
) -> ApiResult<(StatusCode, Json<Value>)> {
    auth.require("webhooks:write")?;
    q.finish()?;
    let sub = find(&app, &auth, &id).await?;
    if !sub.is_enabled {
        return Err(disabled());
    }
    let d = store::create_ping(&app.db, &sub).await?;
    webhooks::wake();
    Ok((
        StatusCode::CREATED,
        Json(json!({ "data": delivery_out(d, Vec::new()) })),
    ))
}
