//! Staff passwords: argon2id with the crate's default cost (19 MiB, two passes, one lane:
//! the OWASP minimum), stored as PHC strings so that a later change of cost still verifies
//! older hashes. Hashing runs on the blocking pool, a few at a time, so a burst of sign-ins
//! can neither stall the request threads nor exhaust memory.

use std::sync::LazyLock;

use argon2::{
    Argon2,
    password_hash::{PasswordHasher, PasswordVerifier, phc::PasswordHash},
};
use tokio::sync::Semaphore;

use crate::domain::{Error, Result};

/// Fewest characters of a password.
pub const MIN_LEN: usize = 12;
/// Most characters of a password (the hash reads all of it).
pub const MAX_LEN: usize = 1024;

/// Hashes or verifications running at once (each holds 19 MiB while it runs).
static PERMITS: LazyLock<Semaphore> = LazyLock::new(|| {
    let cores = std::thread::available_parallelism().map_or(2, std::num::NonZero::get);
    Semaphore::new(cores.max(2))
});

/// A hash of a password nobody knows, verified against when a sign-in names no user, so
/// that an unknown email costs the same work as a wrong password.
static DUMMY: LazyLock<String> = LazyLock::new(|| {
    let mut secret = [0u8; 32];
    rand::RngCore::fill_bytes(&mut rand::rng(), &mut secret);
    hash_now(&hex::encode(secret)).unwrap_or_default()
});

/// The problem with a new password, if any.
pub fn check(password: &str) -> Option<String> {
    let n = password.chars().count();
    if n < MIN_LEN {
        Some(format!("Must be at least {MIN_LEN} characters."))
    } else if n > MAX_LEN {
        Some(format!("Must be at most {MAX_LEN} characters."))
    } else {
        None
    }
}

fn hash_now(password: &str) -> Option<String> {
    Argon2::default()
        .hash_password(password.as_bytes())
        .ok()
        .map(|h| h.to_string())
}

fn verify_now(password: &str, phc: &str) -> bool {
    match PasswordHash::new(phc) {
        Ok(parsed) => Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok(),
        Err(_) => false,
    }
}

/// Runs `work` on the blocking pool under a permit.
async fn run<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Result<T> {
    let _permit = PERMITS
        .acquire()
        .await
        .map_err(|_| Error::Internal("the password permits were closed"))?;
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|_| Error::Internal("password hashing failed"))
}

/// The PHC string of `password` with a fresh salt.
pub async fn hash(password: &str) -> Result<String> {
    let password = password.to_string();
    run(move || hash_now(&password))
        .await?
        .ok_or(Error::Internal("password hashing failed"))
}

/// True when `password` matches `phc`; with `None` (no such user), verifies against a
/// dummy hash and answers false, taking the same time.
pub async fn verify(password: &str, phc: Option<String>) -> Result<bool> {
    let password = password.to_string();
    run(move || match phc {
        Some(phc) => verify_now(&password, &phc),
        None => {
            verify_now(&password, &DUMMY);
            false
        }
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn hashes_verify_and_are_salted() {
        let a = hash("correct horse battery").await.unwrap();
        let b = hash("correct horse battery").await.unwrap();
        assert!(a.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{a}");
        assert_ne!(a, b, "each hash has its own salt");
        assert!(
            verify("correct horse battery", Some(a.clone()))
                .await
                .unwrap()
        );
        assert!(!verify("correct horse battery!", Some(a)).await.unwrap());
        assert!(!verify("anything", None).await.unwrap());
        assert!(!verify("anything", Some("not a hash".into())).await.unwrap());
    }

    #[test]
    fn length_rules() {
        assert!(check("short").is_some());
        assert!(check("twelve chars").is_none());
        assert!(check(&"x".repeat(MAX_LEN + 1)).is_some());
    }
}
