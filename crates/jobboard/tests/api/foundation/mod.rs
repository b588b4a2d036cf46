//! Authentication, tenancy, errors, rate limits, operations, API description, CLI.

mod cli;
mod limits;
mod operations;
mod pool;
mod requests;
