//! A page that could not be shown, answered as a short HTML page with its status (and
//! `noindex` for client errors).

use askama::Template;
use axum::{
    http::StatusCode,
    response::{IntoResponse, Response},
};

use super::page::{Chrome, Html};
use jobboard_app::error::current_request_id;
use jobboard_store::StoreError;

/// A page that could not be shown: rendered as a short HTML page with its status.
#[derive(Debug)]
pub struct PageError {
    pub status: StatusCode,
    pub title: &'static str,
    pub message: String,
}

#[derive(Template)]
#[template(path = "shared/error.html")]
struct ErrorPage<'a> {
    chrome: Chrome,
    title: &'a str,
    message: &'a str,
    status: u16,
}

impl PageError {
    pub fn new(status: StatusCode, title: &'static str, message: impl Into<String>) -> Self {
        PageError {
            status,
            title,
            message: message.into(),
        }
    }

    pub fn not_found() -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "Page not found",
            "There is no page at this address. It may have been removed, or the link may be mistyped.",
        )
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(
            StatusCode::BAD_REQUEST,
            "This request cannot be used",
            message,
        )
    }

    pub fn too_many(retry_after: u64) -> Self {
        Self::new(
            StatusCode::TOO_MANY_REQUESTS,
            "Too many submissions",
            format!(
                "Too many forms were sent from your address in a short time. Please wait {retry_after} seconds and try again."
            ),
        )
    }

    /// An unexpected failure: logged with the request id, never shown.
    pub fn internal(cause: &dyn std::fmt::Debug) -> Self {
        let request_id = current_request_id();
        tracing::error!(request_id = %request_id, error = ?cause, "page failed");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Something went wrong",
            format!(
                "The page could not be shown. Please try again in a moment (reference {request_id})."
            ),
        )
    }
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        let page = ErrorPage {
            chrome: Chrome::new(self.title),
            title: self.title,
            message: &self.message,
            status: self.status.as_u16(),
        };
        match Html::render(&page, None) {
            Ok(html) => {
                let html = html.status(self.status);
                if self.status.is_client_error() {
                    html.robots("noindex").into_response()
                } else {
                    html.into_response()
                }
            }
            Err(_) => (self.status, self.message).into_response(),
        }
    }
}

impl From<StoreError> for PageError {
    fn from(e: StoreError) -> Self {
        PageError::internal(&e)
    }
}

impl From<jobboard_domain::Error> for PageError {
    fn from(e: jobboard_domain::Error) -> Self {
        use jobboard_domain::Error as E;
        match e {
            E::NotFound(_) => PageError::not_found(),
            E::Invalid(fields) | E::Schema(fields) => PageError::bad_request(
                fields
                    .iter()
                    .map(|f| format!("{}: {}", f.field, f.message))
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            E::Conflict { message, .. } => {
                PageError::new(StatusCode::CONFLICT, "This cannot be done now", message)
            }
            E::Unavailable { message, .. } => {
                PageError::new(StatusCode::CONFLICT, "Not available", message)
            }
            E::Store(e) => PageError::internal(&e),
            E::Internal(what) => PageError::internal(&what),
        }
    }
}

impl From<askama::Error> for PageError {
    fn from(e: askama::Error) -> Self {
        PageError::internal(&e)
    }
}
