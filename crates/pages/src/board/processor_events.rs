//! `POST /payments/webhook`: the card processor's events for the board the request's host
//! names, verified by their `Stripe-Signature` with the organization's webhook secret
//! (anything unsigned, badly signed or stale is `400` and changes nothing). A paid session
//! is read back from the processor's API before it is fulfilled, once per session; the
//! other events move the order as docs/payments.md says. A `2xx` tells the processor the
//! event is handled (also one for another board's session, which changes nothing); a
//! failure here is a `503`, and the processor sends the event again.

use axum::{
    body::Bytes,
    extract::State,
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Response},
};

use crate::site::Site;
use jobboard_app::app::AppState;
use jobboard_domain::payments::{self, Session, signature};

fn answer(status: StatusCode, text: &'static str) -> Response {
    (
        status,
        [("content-type", "text/plain; charset=utf-8")],
        text,
    )
        .into_response()
}

/// `POST /payments/webhook`
pub async fn event(
    State(app): State<AppState>,
    site: Site,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let account = match payments::account(&app.db, site.org.id).await {
        Ok(Some(a)) => a,
        Ok(None) => return answer(StatusCode::NOT_FOUND, "This board takes no payments."),
        Err(e) => {
            tracing::warn!(error = ?e, "payment account not read");
            return answer(StatusCode::SERVICE_UNAVAILABLE, "Try again later.");
        }
    };
    let header = headers
        .get("stripe-signature")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let now = app.clock.now().unix_seconds();
    if let Err(why) = signature::verify(&account.webhook_secret, header, &body, now) {
        tracing::warn!(
            org_id = site.org.id.0,
            ?why,
            "processor event with a bad signature refused"
        );
        return answer(StatusCode::BAD_REQUEST, "Bad signature.");
    }
    let Ok(event) = serde_json::from_slice::<serde_json::Value>(&body) else {
        return answer(StatusCode::BAD_REQUEST, "Not a JSON event.");
    };
    let kind = event["type"].as_str().unwrap_or("");
    let object = &event["data"]["object"];
    let outcome = match kind {
        "checkout.session.completed" | "checkout.session.async_payment_succeeded" => {
            let Some(sent) = Session::from_json(object) else {
                return answer(StatusCode::BAD_REQUEST, "No session in the event.");
            };
            // The event says paid; the processor's API is asked before anything moves.
            match app.processor.session(&account, &sent.id).await {
                Ok(s) => payments::fulfil(&app.db, &site.org, &s).await.map(|r| {
                    tracing::info!(org_id = site.org.id.0, outcome = ?r, "processor event: session completed");
                }),
                Err(e) => {
                    tracing::warn!(error = %e, "the session of an event was not read back");
                    return answer(StatusCode::SERVICE_UNAVAILABLE, "Try again later.");
                }
            }
        }
        "checkout.session.expired" => match Session::from_json(object) {
            Some(s) => payments::expired(&app.db, &site.org, &s).await.map(|_| ()),
            None => return answer(StatusCode::BAD_REQUEST, "No session in the event."),
        },
        "charge.refunded" => match object["payment_intent"].as_str() {
            Some(intent) => payments::refunded(&app.db, &site.org, intent)
                .await
                .map(|_| ()),
            None => Ok(()),
        },
        _ => Ok(()),
    };
    match outcome {
        Ok(()) => answer(StatusCode::OK, "Handled."),
        Err(e) => {
            tracing::warn!(error = ?e, kind, "processor event not handled");
            answer(StatusCode::SERVICE_UNAVAILABLE, "Try again later.")
        }
    }
}
