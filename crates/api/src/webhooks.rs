//! Webhook subscriptions: `POST /webhooks`, `GET /webhooks`, `GET|PATCH|DELETE
//! /webhooks/{id}`, `GET /webhooks/{id}/deliveries`,
//! `POST /webhooks/{id}/deliveries/{delivery_id}/retry`, `POST /webhooks/{id}/test`.

use axum::{
    Json,
    extract::{Path, State},
    http::StatusCode,
};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{Auth, JsonBody, Query, extract::path_id};
use jobboard_app::app::AppState;
use jobboard_app::error::ApiResult;
use jobboard_delivery::webhooks::ssrf::Policy;
use jobboard_domain::{
    Ts, WebhookId,
    webhooks::{
        self, Attempt, Delivery, DeliveryListQuery, EventName, RecoverIn, Subscription, TargetType,
        WebhookIn, WebhookPatch,
    },
};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_webhooks, create_webhook))
        .routes(routes!(get_webhook, update_webhook, delete_webhook))
        .routes(routes!(list_deliveries))
        .routes(routes!(retry_delivery))
        .routes(routes!(test_webhook))
        .routes(routes!(recover_webhook))
}

/// A webhook subscription (the secret is never returned).
#[derive(Serialize, ToSchema)]
pub struct Webhook {
    #[schema(value_type = Uuid)]
    pub id: WebhookId,
    pub target_url: String,
    /// False once disabled, by a `PATCH` or by the service (`410 Gone`, or failing for the
    /// configured streak, 5 days by default, without one success).
    pub is_enabled: bool,
    pub created_at: Ts,
    pub updated_at: Ts,
    pub event: EventName,
    pub target_type: TargetType,
    /// While a secret rotation lasts: when the replaced secret stops signing deliveries.
    /// Null otherwise.
    #[schema(required = true)]
    pub previous_secret_expires_at: Option<Ts>,
}

impl Webhook {
    /// The subscription as the API shows it at `now`.
    fn of(s: Subscription, now: Ts) -> Self {
        Webhook {
            previous_secret_expires_at: s.rotation_ends_at(now),
            id: s.id,
            target_url: s.target_url,
            is_enabled: s.is_enabled,
            created_at: s.created_at,
            updated_at: s.updated_at,
            event: s.event,
            target_type: s.target_type,
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct WebhookOut {
    pub data: Webhook,
}

impl WebhookOut {
    fn of(sub: Subscription, now: Ts) -> Json<WebhookOut> {
        Json(WebhookOut {
            data: Webhook::of(sub, now),
        })
    }
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

impl ListMeta {
    fn of<T>(data: &[T]) -> ListMeta {
        ListMeta {
            total: i64::try_from(data.len()).unwrap_or(i64::MAX),
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct Deleted {
    #[schema(value_type = Uuid)]
    pub id: WebhookId,
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

impl DeliveryOneOut {
    /// A delivery just made due, answered without its attempt log.
    fn of(delivery: Delivery) -> Json<DeliveryOneOut> {
        Json(DeliveryOneOut {
            data: DeliveryOut {
                delivery,
                attempt_log: Vec::new(),
            },
        })
    }
}

#[derive(Serialize, ToSchema)]
pub struct DeliveryListOut {
    pub data: Vec<DeliveryOut>,
    pub meta: ListMeta,
}

/// Register a webhook subscription.
///
/// The same organization, `event`, `target_type` and `target_url` as an existing
/// subscription returns that one with `200` (its secret replaced when one is sent);
/// otherwise the subscription is created (`201`). Needs the `webhooks:write` scope.
#[utoipa::path(post, path = "/webhooks", tag = "webhooks", request_body = WebhookIn,
    responses(
        (status = 201, description = "Created.", body = WebhookOut),
        (status = 200, description = "The existing subscription with these settings.", body = WebhookOut),
    ))]
async fn create_webhook(
    State(app): State<AppState>,
    auth: Auth,
    JsonBody(input): JsonBody,
) -> ApiResult<(StatusCode, Json<WebhookOut>)> {
    auth.require("webhooks:write")?;
    let policy = Policy::new(&app.config.webhooks);
    let (sub, created) = webhooks::create(&app.db, auth.org_id, &policy, input).await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, WebhookOut::of(sub, app.clock.now())))
}

/// List the organization's webhook subscriptions, newest first.
///
/// Needs the `webhooks:read` scope.
#[utoipa::path(get, path = "/webhooks", tag = "webhooks",
    responses((status = 200, description = "Every subscription.", body = WebhookListOut)))]
async fn list_webhooks(
    State(app): State<AppState>,
    auth: Auth,
    Query(q): Query,
) -> ApiResult<Json<WebhookListOut>> {
    auth.require("webhooks:read")?;
    q.finish()?;
    let list = webhooks::list(&app.db, auth.org_id).await?;
    Ok(Json(WebhookListOut {
        meta: ListMeta::of(&list),
        data: list
            .into_iter()
            .map(|s| Webhook::of(s, app.clock.now()))
            .collect(),
    }))
}

/// Read one webhook subscription.
///
/// Needs the `webhooks:read` scope.
#[utoipa::path(get, path = "/webhooks/{id}", tag = "webhooks",
    params(("id" = Uuid, Path, description = "The subscription id.")),
    responses((status = 200, description = "The subscription.", body = WebhookOut)))]
async fn get_webhook(
    State(app): State<AppState>,
    auth: Auth,
    Path(raw): Path<String>,
    Query(q): Query,
) -> ApiResult<Json<WebhookOut>> {
    auth.require("webhooks:read")?;
    q.finish()?;
    let id = path_id(&raw, "webhook")?;
    Ok(WebhookOut::of(
        webhooks::get(&app.db, auth.org_id, id).await?,
        app.clock.now(),
    ))
}

/// Change a subscription's `event`, `target_url`, `secret` or `is_enabled`.
///
/// A new `secret` starts a rotation: the replaced secret keeps signing deliveries, beside
/// the new one, for `secret_grace_seconds` (default 24 hours; `previous_secret_expires_at`
/// says until when). A change that makes it equal to another subscription (same event,
/// target type and URL) is `409 conflict`. Needs the `webhooks:write` scope.
#[utoipa::path(patch, path = "/webhooks/{id}", tag = "webhooks", request_body = WebhookPatch,
    params(("id" = Uuid, Path, description = "The subscription id.")),
    responses((status = 200, description = "The updated subscription.", body = WebhookOut)))]
async fn update_webhook(
    State(app): State<AppState>,
    auth: Auth,
    Path(raw): Path<String>,
    JsonBody(input): JsonBody,
) -> ApiResult<Json<WebhookOut>> {
    auth.require("webhooks:write")?;
    let id = path_id(&raw, "webhook")?;
    let policy = Policy::new(&app.config.webhooks);
    let sub = webhooks::update(&app.db, auth.org_id, id, &policy, input).await?;
    Ok(WebhookOut::of(sub, app.clock.now()))
}

/// Delete a webhook subscription permanently; its pending deliveries are discarded.
///
/// Needs the `webhooks:write` scope.
#[utoipa::path(delete, path = "/webhooks/{id}", tag = "webhooks",
    params(("id" = Uuid, Path, description = "The subscription id.")),
    responses((status = 200, description = "Deleted.", body = DeletedOut)))]
async fn delete_webhook(
    State(app): State<AppState>,
    auth: Auth,
    Path(raw): Path<String>,
    Query(q): Query,
) -> ApiResult<Json<DeletedOut>> {
    auth.require("webhooks:write")?;
    q.finish()?;
    let id = path_id(&raw, "webhook")?;
    webhooks::delete(&app.db, auth.org_id, id).await?;
    Ok(Json(DeletedOut {
        data: Deleted { id, deleted: true },
    }))
}

/// The subscription's newest deliveries with their attempt log (status code, error,
/// duration, response excerpt of at most 2 KiB).
///
/// Needs the `webhooks:read` scope.
#[utoipa::path(get, path = "/webhooks/{id}/deliveries", tag = "webhooks",
    params(("id" = Uuid, Path, description = "The subscription id."), DeliveryListQuery),
    responses((status = 200, description = "Deliveries, newest first.", body = DeliveryListOut)))]
async fn list_deliveries(
    State(app): State<AppState>,
    auth: Auth,
    Path(raw): Path<String>,
    Query(mut q): Query,
) -> ApiResult<Json<DeliveryListOut>> {
    auth.require("webhooks:read")?;
    let query = DeliveryListQuery::read(&mut q);
    q.finish()?;
    let id = path_id(&raw, "webhook")?;
    let list = webhooks::list_deliveries(&app.db, auth.org_id, id, query.limit).await?;
    Ok(Json(DeliveryListOut {
        meta: ListMeta::of(&list),
        data: list
            .into_iter()
            .map(|(delivery, attempt_log)| DeliveryOut {
                delivery,
                attempt_log,
            })
            .collect(),
    }))
}

/// Make a delivery due again now, with a fresh retry schedule (also after it succeeded or
/// failed).
///
/// A disabled subscription must be enabled first (`409`). Needs the `webhooks:write` scope.
#[utoipa::path(post, path = "/webhooks/{id}/deliveries/{delivery_id}/retry", tag = "webhooks",
    params(
        ("id" = Uuid, Path, description = "The subscription id."),
        ("delivery_id" = Uuid, Path, description = "The delivery id."),
    ),
    responses(
        (status = 200, description = "The delivery, pending.", body = DeliveryOneOut),
        (status = 409, description = "The subscription is disabled.", body = crate::docs::Error),
    ))]
async fn retry_delivery(
    State(app): State<AppState>,
    auth: Auth,
    Path((raw, raw_delivery)): Path<(String, String)>,
    Query(q): Query,
) -> ApiResult<Json<DeliveryOneOut>> {
    auth.require("webhooks:write")?;
    q.finish()?;
    let sub = webhooks::get(&app.db, auth.org_id, path_id(&raw, "webhook")?).await?;
    let delivery_id = path_id(&raw_delivery, "delivery")?;
    let delivery = webhooks::retry_delivery(&app.db, &sub, delivery_id).await?;
    Ok(DeliveryOneOut::of(delivery))
}

/// Send a `ping` event (data `{subscription_id}`) to the subscription's target.
///
/// Needs the `webhooks:write` scope.
#[utoipa::path(post, path = "/webhooks/{id}/test", tag = "webhooks",
    params(("id" = Uuid, Path, description = "The subscription id.")),
    responses(
        (status = 201, description = "The ping delivery, queued.", body = DeliveryOneOut),
        (status = 409, description = "The subscription is disabled.", body = crate::docs::Error),
    ))]
async fn test_webhook(
    State(app): State<AppState>,
    auth: Auth,
    Path(raw): Path<String>,
    Query(q): Query,
) -> ApiResult<(StatusCode, Json<DeliveryOneOut>)> {
    auth.require("webhooks:write")?;
    q.finish()?;
    let sub = webhooks::get(&app.db, auth.org_id, path_id(&raw, "webhook")?).await?;
    let delivery = webhooks::test(&app.db, &sub).await?;
    Ok((StatusCode::CREATED, DeliveryOneOut::of(delivery)))
}

#[derive(Serialize, ToSchema)]
pub struct Recovered {
    /// How many failed deliveries were queued again.
    pub recovered: u64,
}

#[derive(Serialize, ToSchema)]
pub struct RecoveredOut {
    pub data: Recovered,
}

/// Queue again every failed delivery of the subscription created since a time.
///
/// Each failed delivery created at or after `since` becomes due now with a fresh retry
/// schedule (pending and succeeded ones are left as they are); the answer says how many.
/// A disabled subscription must be enabled first (`409`). Needs the `webhooks:write`
/// scope.
#[utoipa::path(post, path = "/webhooks/{id}/recover", tag = "webhooks", request_body = RecoverIn,
    params(("id" = Uuid, Path, description = "The subscription id.")),
    responses(
        (status = 200, description = "How many deliveries were queued again.", body = RecoveredOut),
        (status = 409, description = "The subscription is disabled.", body = crate::docs::Error),
    ))]
async fn recover_webhook(
    State(app): State<AppState>,
    auth: Auth,
    Path(raw): Path<String>,
    JsonBody(input): JsonBody,
) -> ApiResult<Json<RecoveredOut>> {
    auth.require("webhooks:write")?;
    let sub = webhooks::get(&app.db, auth.org_id, path_id(&raw, "webhook")?).await?;
    let recovered = webhooks::recover(&app.db, &sub, input).await?;
    Ok(Json(RecoveredOut {
        data: Recovered { recovered },
    }))
}
