//! The bundled assets (style sheets, icons, small scripts), compiled into the binary and
//! served from `/assets/`. Pages link them by a name that carries a hash of the content
//! (`app.3f2a9c1b.css`), served as immutable, so a new build never meets a stale copy.

use std::sync::LazyLock;

use axum::{
    Router,
    extract::Path,
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
    routing::get,
};
use sha2::{Digest, Sha256};

use jobboard_app::app::AppState;

/// One bundled file.
struct Asset {
    name: &'static str,
    content_type: &'static str,
    bytes: &'static [u8],
}

macro_rules! asset {
    ($name:literal, $ct:literal) => {
        Asset {
            name: $name,
            content_type: $ct,
            bytes: include_bytes!(concat!("../assets/", $name)),
        }
    };
}

/// Every bundled file.
const ASSETS: &[Asset] = &[
    asset!("app.css", "text/css; charset=utf-8"),
    asset!("board.css", "text/css; charset=utf-8"),
    asset!("dashboard.css", "text/css; charset=utf-8"),
    asset!("favicon.svg", "image/svg+xml"),
];

/// The hashed name of each asset (`app.3f2a9c1b.css`).
static HASHED: LazyLock<Vec<(String, &'static Asset)>> = LazyLock::new(|| {
    ASSETS
        .iter()
        .map(|a| {
            let digest = hex::encode(&Sha256::digest(a.bytes)[..4]);
            let hashed = match a.name.rsplit_once('.') {
                Some((stem, ext)) => format!("{stem}.{digest}.{ext}"),
                None => format!("{}.{digest}", a.name),
            };
            (hashed, a)
        })
        .collect()
});

/// The URL of asset `name` (`/assets/app.3f2a9c1b.css`); `/assets/<name>` when unknown.
pub fn url(name: &str) -> String {
    HASHED.iter().find(|(_, a)| a.name == name).map_or_else(
        || format!("/assets/{name}"),
        |(h, _)| format!("/assets/{h}"),
    )
}

pub fn routes() -> Router<AppState> {
    Router::new().route("/assets/{file}", get(serve))
}

/// Serves an asset by its hashed name (immutable for a year) or its plain name (revalidated).
async fn serve(Path(file): Path<String>) -> Response {
    let (asset, immutable) = match HASHED.iter().find(|(h, _)| *h == file) {
        Some((_, a)) => (*a, true),
        None => match ASSETS.iter().find(|a| a.name == file) {
            Some(a) => (a, false),
            None => return StatusCode::NOT_FOUND.into_response(),
        },
    };
    let mut res = (StatusCode::OK, asset.bytes).into_response();
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(asset.content_type),
    );
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(if immutable {
            "public, max-age=31536000, immutable"
        } else {
            "public, max-age=300"
        }),
    );
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashed_names() {
        let u = url("app.css");
        assert!(
            u.starts_with("/assets/app.") && u.ends_with(".css") && u.len() == 24,
            "{u}"
        );
        assert_eq!(url("nope.css"), "/assets/nope.css");
    }
}
