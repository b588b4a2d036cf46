//! Events: what happened to a record, written to the outbox in the transaction of the
//! change (see [`jobboard_store::events`]) and delivered to webhook subscriptions. Each
//! resource defines its payloads as typed structs; their field order is the order of the
//! delivered JSON.

pub use jobboard_store::events::Payload as Event;
