//! Bodies of every live job, streamed (the sitemaps, the feeds for aggregators): a task
//! reads the jobs in short batches and hands the text over in chunks, so a body's size
//! never sits in memory and no read transaction stays open while a slow client reads. A
//! full channel (a slow reader) pauses the task, a closed one (the reader left) stops it.
//!
//! Such a body is a function of the board's version (every write), its next expiry (the
//! only change without a write), the origin and what is asked, so its `ETag` is known
//! before any row is read and an unchanged body costs a `304`.

use axum::{
    body::{Body, Bytes},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use http_body_util::channel::{Channel, Sender};
use sha2::{Digest, Sha256};

use super::PUBLIC_CACHE;
use crate::site::Site;
use jobboard_core::cache::none_match;
use jobboard_domain::Ts;

/// Bytes gathered before they are handed to the connection.
const CHUNK: usize = 32 * 1024;

/// The `ETag` of the body `what` of `site`'s board with this next expiry.
pub(super) fn etag(site: &Site, next_expiry: Option<Ts>, what: &str) -> String {
    let mut h = Sha256::new();
    h.update(
        format!(
            "{}|{}|{}|{:?}|{what}",
            site.origin,
            site.org.id,
            site.version,
            next_expiry.map(|t| t.micros())
        )
        .as_bytes(),
    );
    format!("W/\"{}\"", hex::encode(&h.finalize()[..16]))
}

/// A `304` when the client holds `etag`, else the body `make` starts; with the `ETag`
/// and the public pages' `Cache-Control` either way.
pub(super) fn response(
    headers: &HeaderMap,
    etag: &str,
    content_type: &'static str,
    make: impl FnOnce() -> Body,
) -> Response {
    let matched = headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| none_match(v, etag));
    let mut res = if matched {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let mut r = Response::new(make());
        r.headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
        r
    };
    let h = res.headers_mut();
    if let Ok(v) = HeaderValue::from_str(etag) {
        h.insert(header::ETAG, v);
    }
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(PUBLIC_CACHE),
    );
    res
}

/// The writing end of a streamed body.
pub(super) struct Out {
    tx: Sender<Bytes, std::io::Error>,
    buf: String,
}

impl Out {
    /// A writer and the body it feeds.
    pub fn channel() -> (Out, Body) {
        let (tx, body) = Channel::<Bytes, std::io::Error>::new(4);
        (
            Out {
                tx,
                buf: String::with_capacity(CHUNK + 4096),
            },
            Body::new(body),
        )
    }

    /// The text being gathered.
    pub fn buf(&mut self) -> &mut String {
        &mut self.buf
    }

    /// Hands the gathered text over once there is a chunk of it; false when the reader
    /// has gone (stop writing).
    pub async fn flush(&mut self) -> bool {
        if self.buf.len() < CHUNK {
            return true;
        }
        let chunk = Bytes::from(std::mem::replace(
            &mut self.buf,
            String::with_capacity(CHUNK + 4096),
        ));
        self.tx.send_data(chunk).await.is_ok()
    }

    /// Hands the rest over: the body is complete.
    pub async fn finish(mut self) {
        let rest = std::mem::take(&mut self.buf);
        let _ = self.tx.send_data(Bytes::from(rest)).await;
    }

    /// Ends the body with an error (the client sees a broken transfer, never a complete
    /// body that lacks jobs).
    pub fn abort(self, why: &'static str) {
        self.tx.abort(std::io::Error::other(why));
    }
}
