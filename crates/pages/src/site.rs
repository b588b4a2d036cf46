//! Which board a request is for: the organization whose domain is the request's `Host`
//! (port ignored), else organization 1; the origin absolute links are made from and the
//! origins its forms may be posted from (never an unknown `Host`); the client's address.

use std::net::IpAddr;

use axum::{
    extract::FromRequestParts,
    http::{HeaderMap, request::Parts},
};
use sha2::{Digest, Sha256};

use super::error::PageError;
use jobboard_app::app::{App, AppState};
use jobboard_domain::orgs::{self, Board, Org};

/// The board of a request.
#[derive(Debug, Clone)]
pub struct Site {
    pub org: Org,
    /// The version of everything the board's pages are rendered from: a page rendered at
    /// this version is current.
    pub version: i64,
    /// The origin of absolute links (`https://jobs.example.com`, no trailing slash).
    pub origin: String,
    /// The origins this board's forms may be posted from (see [`forms::same_origin`]).
    pub form_origins: Vec<String>,
    /// The request's host name (lower-case, no port).
    pub host: String,
    /// The client's address (behind a trusted proxy, the forwarded one).
    pub client: Option<IpAddr>,
    pub theme: Theme,
    /// Members can sign in (the service sends mail, which their sign-in needs).
    pub accounts: bool,
}

impl Site {
    /// The layout of a page titled `title` in this board's look.
    pub fn chrome(&self, title: impl Into<String>) -> super::page::Chrome {
        super::page::Chrome::new(title).with_theme(&self.theme.css)
    }

    /// An absolute URL of `path` (which starts with `/`).
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.origin)
    }
}

/// The board's colours, as one small style sheet placed in the page and allowed by its
/// hash in the page's `Content-Security-Policy` (no inline style is allowed otherwise).
#[derive(Debug, Clone)]
pub struct Theme {
    /// `:root{--accent:...;--on-accent:...}`
    pub css: String,
    /// `'sha256-...'` of [`Theme::css`].
    pub csp_hash: String,
}

/// The neutral accent of a board that chose none.
pub const DEFAULT_ACCENT: &str = "#1f4f8f";

impl Theme {
    pub fn of(org: &Org) -> Theme {
        let accent = org.accent_color.as_deref().unwrap_or(DEFAULT_ACCENT);
        let css = format!(
            ":root{{--accent:{accent};--on-accent:{}}}",
            readable_on(accent)
        );
        let digest = Sha256::digest(css.as_bytes());
        use base64::Engine as _;
        let csp_hash = format!(
            "'sha256-{}'",
            base64::engine::general_purpose::STANDARD.encode(digest)
        );
        Theme { css, csp_hash }
    }
}

/// Black or white, whichever reads better on `#rrggbb` (WCAG relative luminance).
pub fn readable_on(hex: &str) -> &'static str {
    let channel = |i: usize| {
        let v = u8::from_str_radix(hex.get(i..i + 2).unwrap_or("00"), 16).unwrap_or(0);
        let c = f64::from(v) / 255.0;
        if c <= 0.039_28 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    let l = 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
    // Contrast with white: 1.05 / (l + 0.05); with black: (l + 0.05) / 0.05.
    if 1.05 / (l + 0.05) >= (l + 0.05) / 0.05 {
        "#ffffff"
    } else {
        "#000000"
    }
}

pub use jobboard_app::net::host_of;

impl FromRequestParts<AppState> for Site {
    type Rejection = PageError;

    async fn from_request_parts(parts: &mut Parts, app: &AppState) -> Result<Self, PageError> {
        let host = host_of(&parts.headers);
        let Some(Board { org, version }) = orgs::board_for_host(&app.db, &host).await? else {
            return Err(PageError::not_found());
        };
        let client = jobboard_app::net::client_ip(
            &parts.extensions,
            &parts.headers,
            &app.config.trusted_proxies,
        );
        let scheme = request_scheme(app, Some(&parts.extensions), &parts.headers);
        let own = own_domain(&org, &host, scheme);
        let origin = origin_for(app, own.as_deref());
        let form_origins = form_origins(app, own);
        let theme = Theme::of(&org);
        Ok(Site {
            org,
            version,
            origin,
            form_origins,
            host,
            client,
            theme,
            accounts: app.db.outgoing().is_some(),
        })
    }
}

/// The scheme a request came on: `X-Forwarded-Proto` when a proxy of
/// `trusted_proxies` sent it (`extensions` carry the peer), else the scheme of
/// `public_url` when set, else `http` (the server itself speaks plain HTTP).
fn request_scheme(
    app: &App,
    extensions: Option<&axum::http::Extensions>,
    headers: &HeaderMap,
) -> &'static str {
    let peer = extensions
        .and_then(|e| e.get::<axum::extract::ConnectInfo<std::net::SocketAddr>>())
        .map(|c| c.0.ip());
    let trusted = peer.is_some_and(|ip| app.config.trusted_proxies.iter().any(|c| c.contains(ip)));
    let forwarded = headers
        .get("x-forwarded-proto")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(',').next())
        .map(|v| v.trim().to_ascii_lowercase());
    match forwarded.as_deref() {
        Some("https") if trusted => "https",
        Some("http") if trusted => "http",
        _ if app.config.public_url.starts_with("https://") => "https",
        _ => "http",
    }
}

/// `scheme://host` when `host` is the organization's own (verified) domain.
fn own_domain(org: &Org, host: &str, scheme: &str) -> Option<String> {
    (!host.is_empty() && org.domain.as_deref() == Some(host)).then(|| format!("{scheme}://{host}"))
}

/// The origin of absolute links, the one place they come from: the organization's own
/// domain when the request came on it, else `public_url`, else the listen address. Never
/// the request's `Host` otherwise, so a forged `Host` cannot put another site into
/// canonical links, feeds or sitemaps.
fn origin_for(app: &App, own: Option<&str>) -> String {
    if let Some(own) = own {
        return own.to_string();
    }
    let public = app.config.public_url.trim_end_matches('/');
    if public.is_empty() {
        app.listen_origin()
    } else {
        public.to_string()
    }
}

/// The origins forms may be posted from: the organization's own domain when the request
/// came on it, else the origin of `public_url` (when set); and always the listen address
/// (which no other site can be).
fn form_origins(app: &App, own: Option<String>) -> Vec<String> {
    let mut origins = Vec::with_capacity(2);
    match own {
        Some(own) => origins.push(own),
        None if !app.config.public_url.is_empty() => {
            origins.push(app.config.public_url.clone());
        }
        None => {}
    }
    origins.push(app.listen_origin());
    origins
}

/// The origins a form posted with `headers` may come from, for pages that do not load a
/// [`Site`] (the dashboard): as for the board of the request's host.
pub async fn form_origins_of(
    app: &App,
    extensions: Option<&axum::http::Extensions>,
    headers: &HeaderMap,
) -> Result<Vec<String>, PageError> {
    let host = host_of(headers);
    let board = orgs::board_for_host(&app.db, &host).await?;
    let scheme = request_scheme(app, extensions, headers);
    let own = board.and_then(|b| own_domain(&b.org, &host, scheme));
    Ok(form_origins(app, own))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_colour_reads_on_the_accent() {
        assert_eq!(readable_on("#ffffff"), "#000000");
        assert_eq!(readable_on("#000000"), "#ffffff");
        assert_eq!(readable_on(DEFAULT_ACCENT), "#ffffff");
        assert_eq!(readable_on("#ffd400"), "#000000");
    }
}
