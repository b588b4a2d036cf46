//! What deliveries carry: the body every `webhook` target receives (field order is the
//! delivered JSON's order), and the payload of the `ping` a test sends.

use serde::Serialize;

use crate::{OrgId, Ts, WebhookId, events::Event};

/// The body of a delivery: `{event, organization_id, timestamp, data}`. It is written once
/// (at fan-out, or when a test is queued) and sent as those bytes on every attempt.
#[derive(Debug, Serialize)]
pub struct Body<'a, D: Serialize> {
    pub event: &'a str,
    pub organization_id: OrgId,
    /// When the event was written.
    pub timestamp: Ts,
    pub data: &'a D,
}

impl<D: Serialize> Body<'_, D> {
    /// The JSON text of the body.
    pub fn to_json(&self) -> String {
        // A body is strings, numbers and JSON values: it always serialises.
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// `ping`: a test delivery of one subscription.
#[derive(Debug, Serialize)]
pub struct Ping {
    pub subscription_id: WebhookId,
}

impl Event for Ping {
    fn event_type(&self) -> &'static str {
        "ping"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bodies_keep_their_field_order_and_bytes() {
        let at = Ts::parse("2026-01-02T03:04:05.123456Z").unwrap();
        // As read back from the outbox: numbers keep their digits, keys their order.
        let data: serde_json::Value =
            serde_json::from_str(r#"{"job_id":"j","title":"T","amount":19.990,"location":null}"#)
                .unwrap();
        let body = Body {
            event: "job.created",
            organization_id: OrgId(7),
            timestamp: at,
            data: &data,
        };
        assert_eq!(
            body.to_json(),
            r#"{"event":"job.created","organization_id":7,"timestamp":"2026-01-02T03:04:05.123456Z","data":{"job_id":"j","title":"T","amount":19.990,"location":null}}"#
        );
        let id = WebhookId(uuid::Uuid::nil());
        let ping = Ping {
            subscription_id: id,
        };
        let body = Body {
            event: ping.event_type(),
            organization_id: OrgId(1),
            timestamp: at,
            data: &ping,
        };
        assert_eq!(
            body.to_json(),
            json!({"event": "ping", "organization_id": 1, "timestamp": at, "data": {"subscription_id": id}})
                .to_string()
        );
    }
}
