//! Staff passwords: argon2id with the crate's default cost (19 MiB, two passes, one lane:
//! the OWASP minimum), stored as PHC strings so that a later change of cost still verifies
//! older hashes. Hashing runs on the blocking pool, a few at a time, so a burst of sign-ins
//! can neither stall the request threads nor exhaust memory. A new password must also be
//! hard to guess ([`weakness`]: zxcvbn's estimate, which knows common passwords, words,
//! names, keyboard rows, repeats, sequences, dates and the user's own email address).

use std::sync::LazyLock;

use argon2::{
    Argon2,
    password_hash::{PasswordHasher, PasswordVerifier, phc::PasswordHash},
};
use tokio::sync::Semaphore;

use crate::{Error, Result};

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

/// The least zxcvbn score of a new password: about 10^10 guesses, safe against an
/// online attack and a slow offline one.
pub const MIN_SCORE: zxcvbn::Score = zxcvbn::Score::Three;

/// Characters of a password the estimate reads (its cost grows with the length; a
/// password this long whose start is hard to guess is hard to guess).
const ESTIMATED_CHARS: usize = 100;

/// What the forms say of a new password.
pub fn hint() -> String {
    format!("At least {MIN_LEN} characters and hard to guess: a few unrelated words work well.")
}

/// Why a new password is too easy to guess, if it is: a message that says what to do.
/// `known` are words an attacker would try first for this user (their email address).
pub fn weakness(password: &str, known: &[&str]) -> Option<String> {
    let head: String = password.chars().take(ESTIMATED_CHARS).collect();
    let mut inputs: Vec<&str> = Vec::new();
    for k in known {
        inputs.push(k);
        // The parts of an email address, which people reuse in passwords.
        inputs.extend(k.split(['@', '.', '-', '_', '+']).filter(|p| p.len() >= 3));
    }
    let estimate = zxcvbn::zxcvbn(&head, &inputs);
    if estimate.score() >= MIN_SCORE {
        return None;
    }
    let mut message = String::from("This password is too easy to guess.");
    if let Some(feedback) = estimate.feedback() {
        if let Some(w) = feedback.warning() {
            message.push(' ');
            message.push_str(&w.to_string());
        }
        for s in feedback.suggestions() {
            message.push(' ');
            message.push_str(&s.to_string());
        }
    }
    message.push_str(" A few unrelated words, or a password manager's choice, work well.");
    Some(message)
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

    #[test]
    fn guessable_passwords_are_weak() {
        for p in [
            "aaaaaaaaaaaa",
            "            ",
            "password1234",
            "qwertyuiop12",
            "111111111111",
        ] {
            let why = weakness(p, &[]).unwrap_or_else(|| panic!("{p:?} passed"));
            assert!(
                why.starts_with("This password is too easy to guess."),
                "{why}"
            );
        }
        let email = "grace.hopper@example.com";
        assert!(weakness(email, &[email]).is_some());
        assert!(weakness("correct horse battery staple", &[email]).is_none());
        assert!(weakness(&"x".repeat(MAX_LEN), &[]).is_some());
    }
}
