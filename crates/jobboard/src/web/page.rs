//! Rendering pages: an askama template becomes an HTML response with the headers every
//! page carries (a strict `Content-Security-Policy` that allows the board's one theme
//! style by its hash, caching, robots), and failures become HTML error pages.

use askama::Template;
use axum::{
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};

use crate::{db::StoreError, domain, error::current_request_id};

/// The policy of every page: nothing from another host but images (logos are given as
/// URLs), no inline script, no inline style but the theme's (by hash), forms posted only
/// here, never framed.
pub fn csp(theme_hash: Option<&str>) -> String {
    format!(
        "default-src 'none'; script-src 'self'; style-src 'self'{}; img-src 'self' https: data:; \
         connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        theme_hash.map(|h| format!(" {h}")).unwrap_or_default()
    )
}

/// What the shared layout (`templates/web/base.html`) shows: the title, the meta
/// description, the canonical link, the style sheet and the board's theme.
#[derive(Debug, Clone)]
pub struct Chrome {
    pub title: String,
    pub description: Option<String>,
    pub canonical: Option<String>,
    pub css_url: String,
    pub icon_url: String,
    /// The board's theme style sheet (allowed by its hash in the page's policy).
    pub theme_css: Option<String>,
}

impl Chrome {
    /// A page titled `title`, in the neutral look.
    pub fn new(title: impl Into<String>) -> Chrome {
        Chrome {
            title: title.into(),
            description: None,
            canonical: None,
            css_url: super::assets::url("app.css"),
            icon_url: super::assets::url("favicon.svg"),
            theme_css: None,
        }
    }

    /// The same page in the look of `site`'s board.
    pub fn themed(mut self, site: &super::site::Site) -> Chrome {
        self.theme_css = Some(site.theme.css.clone());
        self
    }
}

/// An HTML response being built.
pub struct Html {
    status: StatusCode,
    body: String,
    csp: String,
    cache_control: &'static str,
    robots: Option<&'static str>,
    referrer: &'static str,
}

impl Html {
    /// Renders `template`; a template failure is an internal error page.
    pub fn render(template: &impl Template, theme_hash: Option<&str>) -> Result<Html, PageError> {
        let body = template.render().map_err(|e| PageError::internal(&e))?;
        Ok(Html {
            status: StatusCode::OK,
            body,
            csp: csp(theme_hash),
            cache_control: "private, no-cache",
            robots: None,
            referrer: "strict-origin-when-cross-origin",
        })
    }

    pub fn status(mut self, status: StatusCode) -> Html {
        self.status = status;
        self
    }

    /// `Cache-Control` of the response (default `private, no-cache`).
    pub fn cache_control(mut self, value: &'static str) -> Html {
        self.cache_control = value;
        self
    }

    /// `X-Robots-Tag` of the response (e.g. `noindex`).
    pub fn robots(mut self, value: &'static str) -> Html {
        self.robots = Some(value);
        self
    }

    /// `Referrer-Policy` of the response (default `strict-origin-when-cross-origin`).
    pub fn referrer(mut self, value: &'static str) -> Html {
        self.referrer = value;
        self
    }

    /// The rendered body.
    pub fn body(&self) -> &str {
        &self.body
    }
}

impl IntoResponse for Html {
    fn into_response(self) -> Response {
        let mut res = (self.status, self.body).into_response();
        let h = res.headers_mut();
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        );
        if let Ok(v) = HeaderValue::from_str(&self.csp) {
            h.insert(header::CONTENT_SECURITY_POLICY, v);
        }
        h.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static(self.cache_control),
        );
        h.insert(
            header::REFERRER_POLICY,
            HeaderValue::from_static(self.referrer),
        );
        if let Some(r) = self.robots {
            h.insert("x-robots-tag", HeaderValue::from_static(r));
        }
        res
    }
}

/// A page that could not be shown: rendered as a short HTML page with its status.
#[derive(Debug)]
pub struct PageError {
    pub status: StatusCode,
    pub title: &'static str,
    pub message: String,
}

#[derive(Template)]
#[template(path = "web/error.html")]
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

impl From<domain::Error> for PageError {
    fn from(e: domain::Error) -> Self {
        use domain::Error as E;
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
