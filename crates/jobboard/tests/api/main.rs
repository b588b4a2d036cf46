//! Integration tests: the real server over HTTP, on SQLite and on PostgreSQL.

mod common;

mod analytics;
mod applications;
mod cms;
mod foundation;
mod members;
mod plans;
mod site_analytics;
mod webhook_receiver;
mod webhooks;
