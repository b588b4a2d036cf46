//! The HTML front doors: the public board (what job seekers and crawlers see) and the
//! dashboard (where an organization's staff work). Both are server-rendered with askama
//! (auto-escaping on), need no JavaScript for any core path, load nothing from another
//! host, and call the same domain operations as the JSON API.
//!
//! The board's pages are in [`board`], the dashboard's in [`dashboard`]. This crate holds
//! what both share: which organization a request is for ([`site`]),
//! rendering and error pages ([`page`]), the bundled assets ([`assets`]), forms with
//! anti-forgery tokens ([`forms`]), the fields they draw ([`fields`]), and the forms
//! derived from a model ([`model_form`]) or a CMS schema ([`schema_form`]).

#![forbid(unsafe_code)]

pub mod account;
pub mod assets;
pub mod board;
pub mod dashboard;
pub mod error;
pub mod fields;
pub mod forms;
pub mod model_form;
pub mod page;
pub mod schema_form;
pub mod site;

use axum::Router;

use jobboard_app::app::AppState;

/// Every page route (the API lives under `/api`).
pub fn routes(state: &AppState) -> Router<AppState> {
    Router::new()
        .merge(assets::routes())
        .merge(board::routes())
        .merge(account::routes())
        .merge(dashboard::routes(state))
}
