//! Rendering pages: an askama template becomes an HTML response with the headers every
//! page carries (a strict `Content-Security-Policy` that allows the board's one theme
//! style by its hash, caching, robots). Failures are [`super::error::PageError`]s.

use askama::Template;
use axum::{
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};

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

    /// The same page with a board's theme style sheet (see `Site::chrome`).
    pub fn with_theme(mut self, css: &str) -> Chrome {
        self.theme_css = Some(css.to_string());
        self
    }
}

/// A CSV file to download: `body` as `filename`, with `cache_control`.
pub fn csv_download(body: String, filename: &str, cache_control: &'static str) -> Response {
    let mut res = body.into_response();
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/csv; charset=utf-8"),
    );
    if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{filename}\"")) {
        h.insert(header::CONTENT_DISPOSITION, v);
    }
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(cache_control),
    );
    res
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
    /// Renders `template` (a failure becomes an internal error page through
    /// `From<askama::Error>` for [`super::error::PageError`]).
    pub fn render(
        template: &impl Template,
        theme_hash: Option<&str>,
    ) -> Result<Html, askama::Error> {
        let body = template.render()?;
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

    /// Lets the page's forms also lead to `origin` (a form whose answer sends the browser
    /// on to the card processor's checkout page); `origin` is `scheme://host[:port]`.
    pub fn allow_form_action(mut self, origin: &str) -> Html {
        let safe = origin
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b':' | b'/' | b'.' | b'-'));
        if safe && !origin.is_empty() {
            self.csp = self.csp.replace(
                "form-action 'self'",
                &format!("form-action 'self' {origin}"),
            );
        }
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
