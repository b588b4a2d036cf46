//! Integration tests: the real server over HTTP, on SQLite and on PostgreSQL.

mod common;

mod foundation;
mod jobs;
