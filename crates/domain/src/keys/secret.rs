//! API keys and scopes: generation, hashing, scope names. No I/O here.

use rand::Rng;
use sha2::{Digest, Sha256};

/// Every scope a key can hold. A key created without `--scopes` holds `*`, which means all.
pub const SCOPES: &[&str] = &[
    "jobs:read",
    "jobs:write",
    "members:read",
    "members:write",
    "cms:read",
    "cms:write",
    "webhooks:read",
    "webhooks:write",
    "analytics:read",
    "analytics:write",
    "admin",
];

const KEY_PREFIX: &str = "jb_";
const KEY_RANDOM_LEN: usize = 40;
/// Characters of the key kept in clear as its display prefix (`jb_` + 8).
const DISPLAY_LEN: usize = 11;

/// A newly generated key: the full secret (shown once) and what is stored.
pub struct GeneratedKey {
    pub full: String,
    pub prefix: String,
    pub hash: Vec<u8>,
}

/// Generates `jb_` + 40 random base62 characters (about 238 bits).
pub fn generate_key() -> GeneratedKey {
    const ALPHABET: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut rng = rand::rng();
    let random: String = (0..KEY_RANDOM_LEN)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect();
    let full = format!("{KEY_PREFIX}{random}");
    GeneratedKey {
        prefix: full[..DISPLAY_LEN].to_string(),
        hash: hash_key(&full),
        full,
    }
}

/// SHA-256 of the key. Keys carry enough entropy that a fast hash is safe here, and
/// lookups by hash keep authentication to one indexed read.
pub fn hash_key(key: &str) -> Vec<u8> {
    Sha256::digest(key.as_bytes()).to_vec()
}

/// True when `key` has the shape of one of our keys (cheap pre-check before any lookup).
pub fn looks_like_key(key: &str) -> bool {
    key.len() >= KEY_PREFIX.len() + 32
        && key.len() <= 128
        && key.starts_with(KEY_PREFIX)
        && key[KEY_PREFIX.len()..]
            .bytes()
            .all(|b| b.is_ascii_alphanumeric())
}

/// Parses a comma- or space-separated scope list; `*` alone means every scope.
pub fn parse_scopes(input: &str) -> Result<String, String> {
    let parts: Vec<&str> = input
        .split([',', ' '])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if parts.is_empty() {
        return Err("at least one scope is required".into());
    }
    if parts == ["*"] {
        return Ok("*".into());
    }
    for p in &parts {
        if !SCOPES.contains(p) {
            return Err(format!(
                "unknown scope {p:?}; known scopes: * {}",
                SCOPES.join(" ")
            ));
        }
    }
    Ok(parts.join(" "))
}

/// True when the stored scope string grants `scope`.
pub fn grants(scopes: &str, scope: &str) -> bool {
    scopes.split(' ').any(|s| s == "*" || s == scope)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_are_well_formed_and_distinct() {
        let a = generate_key();
        let b = generate_key();
        assert!(looks_like_key(&a.full));
        assert_eq!(a.full.len(), 43);
        assert!(a.full.starts_with(&a.prefix));
        assert_ne!(a.full, b.full);
        assert_eq!(a.hash, hash_key(&a.full));
        assert_eq!(a.hash.len(), 32);
    }

    #[test]
    fn scopes_parse_and_grant() {
        assert_eq!(parse_scopes("*").unwrap(), "*");
        assert_eq!(
            parse_scopes("jobs:read, cms:read").unwrap(),
            "jobs:read cms:read"
        );
        assert!(parse_scopes("jobs:admin").is_err());
        assert!(parse_scopes("").is_err());
        assert!(grants("*", "jobs:write"));
        assert!(grants("jobs:read cms:read", "cms:read"));
        assert!(!grants("jobs:read", "jobs:write"));
    }

    #[test]
    fn rejects_malformed_keys() {
        assert!(!looks_like_key("jb_short"));
        assert!(!looks_like_key(
            "xx_0123456789012345678901234567890123456789"
        ));
        assert!(!looks_like_key(
            "jb_0123456789012345678901234567890123456789!"
        ));
    }
}
