//! The error envelope for the requests the HTTP parser refuses before any of our code
//! runs: a request target of 64 KiB or more (`414`), a header section past the parser's
//! buffer or field count (`431`), a head with bytes HTTP forbids, such as a control
//! character in a header value (`400`). hyper answers those itself, with an empty body,
//! and offers no hook to change the answer; so each connection's writes pass through
//! [`Enveloped`], which replaces such an answer (recognised by its status and its
//! `content-length: 0`: every answer of ours to those statuses has a body) with the same
//! status and the JSON envelope our own limits answer with (see `edge`). The connection
//! is closed after it, as hyper closes it.

use std::{
    io,
    pin::Pin,
    task::{Context, Poll},
};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::edge::{MAX_HEADER_BYTES, MAX_HEADER_COUNT, MAX_URI_BYTES};
use jobboard_app::error::ApiError;

/// A connection whose parser refusals carry the envelope.
pub struct Enveloped<T> {
    inner: T,
    /// The rest of a replacement answer still to be written.
    pending: Vec<u8>,
}

impl<T> Enveloped<T> {
    pub fn new(inner: T) -> Self {
        Enveloped {
            inner,
            pending: Vec::new(),
        }
    }
}

/// The envelope of a parser's answer that starts `bytes`, when it is one.
fn replacement(bytes: &[u8]) -> Option<Vec<u8>> {
    let head_end = bytes.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    // An answer of the parser has no body: the whole answer is the head.
    if head_end != bytes.len() {
        return None;
    }
    let head = std::str::from_utf8(bytes).ok()?;
    let status = head
        .strip_prefix("HTTP/1.1 ")
        .or_else(|| head.strip_prefix("HTTP/1.0 "))?
        .get(..3)?;
    if !matches!(status, "400" | "414" | "431")
        || !head
            .to_ascii_lowercase()
            .contains("\r\ncontent-length: 0\r\n")
    {
        return None;
    }
    let error = match status {
        "414" => ApiError::uri_too_long(MAX_URI_BYTES),
        "431" => ApiError::headers_too_large(MAX_HEADER_BYTES, MAX_HEADER_COUNT),
        "400" => ApiError::bad_request(
            "The request head is malformed: a header name or value holds bytes HTTP does not allow.",
        ),
        _ => return None,
    };
    let body = serde_json::to_vec(&error.body()).ok()?;
    let reason = match status {
        "414" => "URI Too Long",
        "431" => "Request Header Fields Too Large",
        _ => "Bad Request",
    };
    let mut out = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         cache-control: no-store\r\nx-content-type-options: nosniff\r\n\
         content-security-policy: {}\r\nreferrer-policy: no-referrer\r\nconnection: close\r\n\r\n",
        body.len(),
        super::edge::DEFAULT_CSP
    )
    .into_bytes();
    out.extend_from_slice(&body);
    Some(out)
}

impl<T: AsyncWrite + Unpin> Enveloped<T> {
    /// Writes what is left of a replacement; ready when nothing is.
    fn drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while !self.pending.is_empty() {
            match Pin::new(&mut self.inner).poll_write(cx, &self.pending) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => {
                    self.pending.drain(..n);
                }
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Enveloped<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Enveloped<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if self.drain(cx)?.is_pending() {
            return Poll::Pending;
        }
        if buf.starts_with(b"HTTP/1.")
            && buf.len() <= 1024
            && let Some(answer) = replacement(buf)
        {
            self.pending = answer;
            // The parser's bytes are taken; the replacement goes out on flush.
            let _ = self.drain(cx)?;
            return Poll::Ready(Ok(buf.len()));
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if self.drain(cx)?.is_pending() {
            return Poll::Pending;
        }
        // A parser's answer is its head alone: one slice.
        let written: Vec<&io::IoSlice<'_>> = bufs.iter().filter(|b| !b.is_empty()).collect();
        if let [only] = written.as_slice() {
            return self.poll_write(cx, only);
        }
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.drain(cx)?.is_pending() {
            return Poll::Pending;
        }
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.drain(cx)?.is_pending() {
            return Poll::Pending;
        }
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body_of(answer: &[u8]) -> serde_json::Value {
        let text = std::str::from_utf8(answer).unwrap();
        let (_, body) = text.split_once("\r\n\r\n").unwrap();
        serde_json::from_str(body).unwrap()
    }

    #[test]
    fn only_the_parsers_empty_refusals_are_replaced() {
        let date = "date: Thu, 26 Nov 2026 18:00:00 GMT\r\n";
        for (status, code) in [
            ("414 URI Too Long", "uri_too_long"),
            ("431 Request Header Fields Too Large", "headers_too_large"),
            ("400 Bad Request", "bad_request"),
        ] {
            let parser = format!("HTTP/1.1 {status}\r\ncontent-length: 0\r\n{date}\r\n");
            let answer = replacement(parser.as_bytes()).expect(status);
            assert!(answer.starts_with(format!("HTTP/1.1 {}", &status[..3]).as_bytes()));
            assert_eq!(body_of(&answer)["error"]["code"], code);
        }
        // Our own answers (with a body), other statuses and a head with a body follow.
        assert!(replacement(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 80\r\n\r\n").is_none());
        assert!(replacement(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n").is_none());
        assert!(replacement(b"HTTP/1.1 414 URI Too Long\r\ncontent-length: 0\r\n\r\n{}").is_none());
        assert!(replacement(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n").is_none());
    }
}
