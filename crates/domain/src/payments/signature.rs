//! The card processor's event signatures: the `Stripe-Signature` header,
//! `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">` (several `v1` values while
//! a secret is rolled), keyed with the organization's webhook secret, checked in constant
//! time and refused when older or newer than [`TOLERANCE`].

use hmac::{Hmac, KeyInit, Mac};

/// How far a signature's time may be from now, either way.
pub const TOLERANCE: i64 = 300;

/// Why a signature was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// No `t=` and `v1=` in the header.
    Malformed,
    /// Signed longer than [`TOLERANCE`] from now.
    Stale,
    /// No `v1` value matches the body.
    Mismatch,
}

/// The `v1` signature of `body` signed at `timestamp` with `secret`, in hex.
pub fn sign(secret: &str, timestamp: i64, body: &[u8]) -> String {
    let mut mac =
        Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes any key");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}

/// Checks `header` (the `Stripe-Signature` value) for `body` at `now` (Unix seconds).
pub fn verify(secret: &str, header: &str, body: &[u8], now: i64) -> Result<(), Refused> {
    let mut timestamp = None;
    let mut signatures = Vec::new();
    for part in header.split(',') {
        match part.trim().split_once('=') {
            Some(("t", v)) => timestamp = v.parse::<i64>().ok(),
            Some(("v1", v)) => {
                if let Ok(bytes) = hex::decode(v) {
                    signatures.push(bytes);
                }
            }
            _ => {}
        }
    }
    let Some(t) = timestamp else {
        return Err(Refused::Malformed);
    };
    if signatures.is_empty() {
        return Err(Refused::Malformed);
    }
    if (now - t).abs() > TOLERANCE {
        return Err(Refused::Stale);
    }
    let matches = signatures.iter().any(|sig| {
        let mut mac =
            Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes any key");
        mac.update(t.to_string().as_bytes());
        mac.update(b".");
        mac.update(body);
        // Compared in constant time.
        mac.verify_slice(sig).is_ok()
    });
    if matches {
        Ok(())
    } else {
        Err(Refused::Mismatch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_are_checked() {
        let body = br#"{"id":"evt_1"}"#;
        let t = 1_800_000_000;
        let good = sign("whsec_test", t, body);
        let header = format!("t={t},v1={good}");
        assert_eq!(verify("whsec_test", &header, body, t + 10), Ok(()));
        // Any of several v1 values, in any order, with other schemes beside them.
        let rolled = format!("t={t},v0=abc,v1={},v1={good}", "00".repeat(32));
        assert_eq!(verify("whsec_test", &rolled, body, t), Ok(()));
        assert_eq!(verify("other", &header, body, t), Err(Refused::Mismatch));
        assert_eq!(
            verify("whsec_test", &header, b"{\"id\":\"evt_2\"}", t),
            Err(Refused::Mismatch)
        );
        assert_eq!(
            verify("whsec_test", &header, body, t + TOLERANCE + 1),
            Err(Refused::Stale)
        );
        assert_eq!(
            verify("whsec_test", &header, body, t - TOLERANCE - 1),
            Err(Refused::Stale)
        );
        assert_eq!(
            verify("whsec_test", "v1=abc", body, t),
            Err(Refused::Malformed)
        );
        assert_eq!(
            verify("whsec_test", &format!("t={t}"), body, t),
            Err(Refused::Malformed)
        );
    }
}
