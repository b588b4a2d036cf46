//! Three `jobboard serve` processes on one PostgreSQL database behind a real HAProxy (round
//! robin), everything on 127.0.0.1: what a user sees through the balancer is what one node
//! would show. Rate limits are exact across nodes, each event reaches each subscription
//! once, each scheduled expiry fires once, a write through one node is seen through every
//! node (API, CMS, board and dashboard, whose sessions every node accepts), a node killed
//! under a write load loses no acknowledged write nor its events, and nodes starting
//! together on an empty database make one first organization.

#[path = "../api/common.rs"]
mod common;
#[path = "../api/webhook_receiver.rs"]
mod webhook_receiver;

mod browser;
mod harness;
mod observe;

mod consistency;
mod delivery;
mod first_start;
mod node_loss;
mod rate_limits;
