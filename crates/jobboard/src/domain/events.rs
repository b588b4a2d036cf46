//! Events: what happened to a record, written to the outbox in the transaction of the
//! change (see `crate::db::events`) and delivered to webhook subscriptions. Each
//! resource defines its payloads as typed structs; their field order is the order of the
//! delivered JSON.

use serde::Serialize;

/// An event payload and its type (`job.created`, ...).
pub trait Event: Serialize {
    fn event_type(&self) -> &'static str;
}
