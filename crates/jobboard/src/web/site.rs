//! Which board a request is for: the organization whose domain is the request's `Host`
//! (port ignored), else organization 1; the absolute origin links are made from; the
//! client's address.

use std::net::IpAddr;

use axum::{
    extract::FromRequestParts,
    http::{HeaderMap, header, request::Parts},
};
use sha2::{Digest, Sha256};

use super::error::PageError;
use crate::{
    app::AppState,
    domain::orgs::{self, Board, Org},
};

/// The board of a request.
#[derive(Debug, Clone)]
pub struct Site {
    pub org: Org,
    /// The version of everything the board's pages are rendered from: a page rendered at
    /// this version is current.
    pub version: i64,
    /// The origin of absolute links (`https://jobs.example.com`, no trailing slash).
    pub origin: String,
    /// The request's host name (lower-case, no port).
    pub host: String,
    /// The client's address (behind a trusted proxy, the forwarded one).
    pub client: Option<IpAddr>,
    pub theme: Theme,
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

/// The host name of a request: `Host` without its port, lower-case.
pub fn host_of(headers: &HeaderMap) -> String {
    let raw = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let host = if let Some(rest) = raw.strip_prefix('[') {
        // [::1]:8080
        rest.split(']').next().unwrap_or("")
    } else {
        raw.rsplit_once(':')
            .filter(|(_, port)| port.bytes().all(|b| b.is_ascii_digit()))
            .map_or(raw, |(h, _)| h)
    };
    host.trim_end_matches('.').to_ascii_lowercase()
}

impl FromRequestParts<AppState> for Site {
    type Rejection = PageError;

    async fn from_request_parts(parts: &mut Parts, app: &AppState) -> Result<Self, PageError> {
        let host = host_of(&parts.headers);
        let Some(Board { org, version }) = orgs::board_for_host(&app.db, &host).await? else {
            return Err(PageError::not_found());
        };
        let client = crate::net::client_ip(
            &parts.extensions,
            &parts.headers,
            &app.config.trusted_proxies,
        );
        let origin = origin_for(app, &org, &host, &parts.headers);
        let theme = Theme::of(&org);
        Ok(Site {
            org,
            version,
            origin,
            host,
            client,
            theme,
        })
    }
}

/// The origin of absolute links: an organization's own domain keeps its host (with the
/// scheme of `public_url`, else `https`); otherwise `public_url` when set, else the
/// request's own host with `http`.
fn origin_for(app: &AppState, org: &Org, host: &str, headers: &HeaderMap) -> String {
    let public = app.config.public_url.trim_end_matches('/');
    let public_scheme = public.split_once("://").map(|(s, _)| s);
    if org.domain.as_deref() == Some(host) {
        return format!("{}://{host}", public_scheme.unwrap_or("https"));
    }
    if !public.is_empty() {
        return public.to_string();
    }
    let raw_host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .filter(|h| {
            h.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b".-:[]".contains(&b))
        })
        .unwrap_or("localhost");
    format!("http://{raw_host}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_lose_their_port_and_case() {
        let h = |v: &str| {
            let mut m = HeaderMap::new();
            m.insert(header::HOST, v.parse().unwrap());
            host_of(&m)
        };
        assert_eq!(h("Jobs.Example.com:8080"), "jobs.example.com");
        assert_eq!(h("jobs.example.com."), "jobs.example.com");
        assert_eq!(h("[::1]:8080"), "::1");
        assert_eq!(h("127.0.0.1"), "127.0.0.1");
    }

    #[test]
    fn text_colour_reads_on_the_accent() {
        assert_eq!(readable_on("#ffffff"), "#000000");
        assert_eq!(readable_on("#000000"), "#ffffff");
        assert_eq!(readable_on(DEFAULT_ACCENT), "#ffffff");
        assert_eq!(readable_on("#ffd400"), "#000000");
    }
}
