//! Two-factor sign-in of staff users: a TOTP authenticator (RFC 6238: SHA-1, 6 digits,
//! 30-second steps, the defaults of authenticator apps) and ten one-time recovery codes.
//!
//! A user sets it up by scanning a new secret and confirming one of its codes; the secret
//! being set up is kept in the database until then. Once on, signing in takes the
//! password and then a code ([`second_step`]): the password step leaves a short-lived
//! pending sign-in ([`PENDING_LIFETIME`], known by the SHA-256 of its id, bound to the
//! sign-in pages' cookie) and no session. An organization may require two-factor sign-in
//! of every staff user ([`crate::orgs::set_require_2fa`]): a user without it then
//! sets it up in the second step before getting a session.
//!
//! A code is accepted for the current step and one step either side; a step's code works
//! once (the last accepted step is stored). Recovery codes are stored as SHA-256 hashes
//! (each carries about 50 random bits) and each works once. Wrong codes are failures of the
//! password throttle ([`crate::sessions::throttle`]) for the user's address and
//! the client. Secrets are stored as they are (base32), never logged.

mod store;

use std::{net::IpAddr, time::Duration};

use base64::Engine as _;
use rand::RngCore;
use sha2::{Digest, Sha256};
use totp_rs::{Builder, Secret, Totp};

use crate::{
    Error, OrgId, Result, Ts, UserId,
    db::Db,
    sessions::{self, Policy, throttle},
    users,
};

/// How long the second step of a sign-in may take.
pub const PENDING_LIFETIME: Duration = Duration::from_secs(5 * 60);
/// Recovery codes made when two-factor sign-in is switched on.
pub const RECOVERY_CODES: usize = 10;
/// The issuer shown by authenticator apps when the organization's name cannot be one.
const DEFAULT_ISSUER: &str = "jobboard";

fn digest(s: &str) -> Vec<u8> {
    Sha256::digest(s.as_bytes()).to_vec()
}

/// The issuer of an organization's secrets: its name (without colons, which otpauth
/// links cannot carry), or "jobboard".
fn issuer_of(org_name: &str) -> String {
    let name = org_name.replace(':', " ").trim().to_string();
    if name.is_empty() {
        DEFAULT_ISSUER.into()
    } else {
        name
    }
}

fn totp(secret: &str, issuer: &str, account: &str) -> Result<Totp> {
    let secret = Secret::try_from_base32(secret).map_err(|_| Error::Internal("bad totp secret"))?;
    Builder::new()
        .with_secret(secret)
        .with_skew(1)
        .with_issuer(Some(issuer_of(issuer)))
        .with_account_name(account.replace(':', " "))
        .build()
        .map_err(|_| Error::Internal("bad totp settings"))
}

/// The step of `code` under `secret` at `now` (the current step or one either side).
fn step_of(secret: &str, code: &str, now: Ts) -> Result<Option<i64>> {
    let code: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    if code.len() != 6 || !code.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(None);
    }
    let t = totp(secret, DEFAULT_ISSUER, "user")?;
    let secs = u64::try_from(now.unix_seconds()).unwrap_or(0);
    Ok(t.check(&code, secs).and_then(|s| i64::try_from(s).ok()))
}

/// A recovery code as typed, normalised: lower case, without spaces and dashes.
fn normal_recovery(code: &str) -> String {
    code.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Ten new recovery codes (`xxxxx-xxxxx`, about 50 random bits each) and their hashes.
fn new_recovery_codes() -> (Vec<String>, Vec<Vec<u8>>) {
    const ALPHABET: &[u8] = b"abcdefghjkmnpqrstuvwxyz23456789";
    let mut rng = rand::rng();
    let mut codes = Vec::with_capacity(RECOVERY_CODES);
    for _ in 0..RECOVERY_CODES {
        let mut s = String::with_capacity(11);
        for i in 0..10 {
            if i == 5 {
                s.push('-');
            }
            // 31 letters: draws past them are drawn again, so each is as likely.
            let c = loop {
                let b = (rng.next_u32() & 31) as usize;
                if b < ALPHABET.len() {
                    break ALPHABET[b];
                }
            };
            s.push(c as char);
        }
        codes.push(s);
    }
    let hashes = codes.iter().map(|c| digest(&normal_recovery(c))).collect();
    (codes, hashes)
}

/// A secret being set up, as the page shows it.
#[derive(Clone)]
pub struct SetupView {
    /// The `otpauth://` link (also what the QR code holds).
    pub uri: String,
    /// The secret in base32, in groups of four.
    pub grouped: String,
    /// The QR code of `uri` as an SVG element (attributes only, no styles).
    pub svg: String,
}

impl std::fmt::Debug for SetupView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The secret is never written to a log.
        f.write_str("SetupView { .. }")
    }
}

/// How a secret being set up for `account` of the organization named `org_name` is shown.
pub fn setup_view(secret: &str, org_name: &str, account: &str) -> Result<SetupView> {
    let uri = totp(secret, org_name, account)?
        .to_url()
        .map_err(|_| Error::Internal("totp url"))?;
    let code = qrcode::QrCode::new(uri.as_bytes()).map_err(|_| Error::Internal("qr code"))?;
    let svg = code
        .render::<qrcode::render::svg::Color<'_>>()
        .min_dimensions(200, 200)
        .dark_color(qrcode::render::svg::Color("#000000"))
        .light_color(qrcode::render::svg::Color("#ffffff"))
        .build();
    // Inline in the page: no XML declaration; a name for assistive technology.
    let svg = svg
        .split_once("<svg")
        .map_or(svg.clone(), |(_, rest)| format!("<svg{rest}"))
        .replacen(
            "<svg ",
            "<svg role=\"img\" aria-label=\"QR code of the secret for your authenticator app\" ",
            1,
        );
    let grouped = secret
        .as_bytes()
        .chunks(4)
        .map(|c| String::from_utf8_lossy(c).into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    Ok(SetupView { uri, grouped, svg })
}

/// A new random secret (160 bits, base32).
fn new_secret() -> String {
    Secret::generate().to_base32()
}

/// Whether user `id` has two-factor sign-in on.
pub async fn is_on(db: &Db, id: UserId) -> Result<bool> {
    Ok(store::secret(db, id).await?.is_some())
}

/// The number of unused recovery codes of user `id`.
pub async fn recovery_codes_left(db: &Db, id: UserId) -> Result<i64> {
    Ok(store::recovery_codes_left(db, id).await?)
}

/// Starts setting up two-factor sign-in for user `id` with a new secret (replacing one
/// being set up); the secret.
pub async fn begin_setup(db: &Db, id: UserId) -> Result<String> {
    let secret = new_secret();
    store::set_pending_secret(db, id, &secret).await?;
    Ok(secret)
}

/// The secret user `id` is setting up, if any.
pub async fn pending_secret(db: &Db, id: UserId) -> Result<Option<String>> {
    Ok(store::pending_secret(db, id).await?)
}

/// Switches two-factor sign-in on for user `id` with `secret` when `code` is one of its
/// codes at `now`: the recovery codes to show once, or `None` for a wrong code.
async fn enable_with(
    db: &Db,
    id: UserId,
    secret: &str,
    code: &str,
    now: Ts,
) -> Result<Option<Vec<String>>> {
    let Some(step) = step_of(secret, code, now)? else {
        return Ok(None);
    };
    let (codes, hashes) = new_recovery_codes();
    store::enable(db, id, secret, step, &hashes, now).await?;
    tracing::info!(user_id = %id, "two-factor sign-in switched on");
    Ok(Some(codes))
}

/// Confirms the secret user `id` is setting up with `code`: the recovery codes to show
/// once, or `None` for a wrong code (nothing changes). `NotFound` when no setup is under
/// way.
pub async fn confirm_setup(
    db: &Db,
    id: UserId,
    code: &str,
    now: Ts,
) -> Result<Option<Vec<String>>> {
    let secret = store::pending_secret(db, id)
        .await?
        .ok_or(Error::NotFound("two-factor setup"))?;
    enable_with(db, id, &secret, code, now).await
}

/// Checks `code` of user `id` at `now`: a code of the authenticator whose step was not
/// used yet, or an unused recovery code (used up by this check).
pub async fn verify(db: &Db, id: UserId, code: &str, now: Ts) -> Result<bool> {
    let Some((secret, _)) = store::secret(db, id).await? else {
        return Ok(false);
    };
    if let Some(step) = step_of(&secret, code, now)? {
        return Ok(store::take_step(db, id, step).await?);
    }
    let normal = normal_recovery(code);
    if normal.len() != 10 {
        return Ok(false);
    }
    let used = store::take_recovery_code(db, id, &digest(&normal)).await?;
    if used {
        tracing::info!(user_id = %id, "recovery code used");
    }
    Ok(used)
}

/// Switches two-factor sign-in off for user `id`.
pub async fn turn_off(db: &Db, id: UserId) -> Result<()> {
    store::disable(db, id).await?;
    tracing::info!(user_id = %id, "two-factor sign-in switched off");
    Ok(())
}

/// A sign-in whose password was right, waiting for its second step.
#[derive(Clone, sqlx::FromRow)]
pub struct Pending {
    pub user_id: UserId,
    pub org_id: OrgId,
    pub email: String,
    pub org_name: String,
    /// When the user sets two-factor sign-in up in this step (their organization requires
    /// it), the secret they are shown.
    pub setup_secret: Option<String>,
}

impl std::fmt::Debug for Pending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The secret being set up is never written to a log.
        f.debug_struct("Pending")
            .field("user_id", &self.user_id)
            .field("org_id", &self.org_id)
            .field("setup", &self.setup_secret.is_some())
            .finish_non_exhaustive()
    }
}

/// What the password step leaves for `user`: a pending sign-in (its id, for a cookie)
/// when a second step is needed, else `None`. `visitor_hash` is the SHA-256 of the
/// sign-in pages' cookie the pending sign-in is bound to.
pub async fn after_password(
    db: &Db,
    user: &users::User,
    visitor_hash: &[u8],
    now: Ts,
) -> Result<Option<String>> {
    let setup_secret = if is_on(db, user.id).await? {
        None
    } else if crate::orgs::require_2fa(db, user.org_id).await? {
        Some(new_secret())
    } else {
        return Ok(None);
    };
    let mut raw = [0u8; 32];
    rand::rng().fill_bytes(&mut raw);
    let id = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw);
    store::insert_pending(
        db,
        &digest(&id),
        user.id,
        visitor_hash,
        setup_secret.as_deref(),
        now,
        now.later_by(PENDING_LIFETIME),
    )
    .await?;
    Ok(Some(id))
}

/// The live pending sign-in `id` of the browser whose sign-in cookie hashes to
/// `visitor_hash`.
pub async fn pending(db: &Db, id: &str, visitor_hash: &[u8], now: Ts) -> Result<Option<Pending>> {
    if id.is_empty() || id.len() > 128 {
        return Ok(None);
    }
    Ok(store::find_pending(db, &digest(id), visitor_hash, now).await?)
}

/// Deletes ended pending sign-ins.
pub async fn purge(db: &Db, now: Ts) -> Result<u64> {
    Ok(store::purge_pending(db, now).await?)
}

/// What came of a second step.
#[derive(Debug)]
pub enum Step {
    /// A new session (`id` for the cookie); `recovery_codes` to show once when two-factor
    /// sign-in was set up in this step.
    SignedIn {
        id: String,
        recovery_codes: Option<Vec<String>>,
    },
    /// The code is wrong (or used already).
    Refused,
    /// Too many failed attempts; try again after this long.
    Locked { retry_after: Duration },
    /// No such pending sign-in (expired, finished, or of another browser).
    Gone,
}

/// The second step of sign-in `pending_id` with `code`, under the password throttle of
/// the user's address and `address`.
pub async fn second_step(
    db: &Db,
    pending_id: &str,
    visitor_hash: &[u8],
    code: &str,
    address: Option<IpAddr>,
    now: Ts,
    policy: &Policy,
) -> Result<Step> {
    let Some(p) = pending(db, pending_id, visitor_hash, now).await? else {
        return Ok(Step::Gone);
    };
    let gate = match throttle::enter(db, &p.email, address, now, policy).await? {
        throttle::Verdict::Open(gate) => gate,
        throttle::Verdict::Locked { retry_after } => return Ok(Step::Locked { retry_after }),
    };
    let recovery_codes = match &p.setup_secret {
        Some(secret) => match enable_with(db, p.user_id, secret, code, now).await? {
            Some(codes) => Some(codes),
            None => return Ok(refused(&p)),
        },
        None if verify(db, p.user_id, code, now).await? => None,
        None => return Ok(refused(&p)),
    };
    gate.passed_second_step(db).await?;
    store::delete_pending(db, &digest(pending_id)).await?;
    let user = users::get(db, p.org_id, p.user_id).await?;
    let id = sessions::start(db, &user, now, policy).await?;
    tracing::info!(user_id = %user.id, org_id = user.org_id.0, "dashboard sign-in (two-factor)");
    Ok(Step::SignedIn { id, recovery_codes })
}

fn refused(p: &Pending) -> Step {
    tracing::info!(user_id = %p.user_id, "dashboard sign-in refused: wrong two-factor code");
    Step::Refused
}

/// Checks a staff user's current password and a code before two-factor sign-in is
/// switched off, under the password throttle: which of the two was wrong, if any.
pub async fn check_to_turn_off(
    db: &Db,
    s: &sessions::SignedIn,
    password: &str,
    code: &str,
    address: Option<IpAddr>,
    now: Ts,
    policy: &Policy,
) -> Result<TurnOff> {
    let gate = match throttle::enter(db, &s.email, address, now, policy).await? {
        throttle::Verdict::Open(gate) => gate,
        throttle::Verdict::Locked { retry_after } => return Ok(TurnOff::Locked { retry_after }),
    };
    let password_ok = users::check_password(db, s.org_id, s.user_id, password).await?;
    if !password_ok {
        return Ok(TurnOff::WrongPassword);
    }
    if !verify(db, s.user_id, code, now).await? {
        return Ok(TurnOff::WrongCode);
    }
    gate.passed(db).await?;
    turn_off(db, s.user_id).await?;
    Ok(TurnOff::Done)
}

/// What came of a request to switch two-factor sign-in off.
#[derive(Debug)]
pub enum TurnOff {
    Done,
    WrongPassword,
    WrongCode,
    Locked { retry_after: Duration },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_of_the_step_and_its_neighbours_are_accepted() {
        let secret = new_secret();
        let t = totp(&secret, "Acme", "a@example.com").unwrap();
        let now = Ts::from_micros(1_800_000_015_000_000);
        let secs = 1_800_000_015u64;
        let step = i64::try_from(secs / 30).unwrap();
        for (at, want) in [(secs, step), (secs - 30, step - 1), (secs + 30, step + 1)] {
            let code = t.generate(at).to_string();
            assert_eq!(step_of(&secret, &code, now).unwrap(), Some(want));
        }
        let old = t.generate(secs - 90).to_string();
        assert_eq!(step_of(&secret, &old, now).unwrap(), None);
        assert_eq!(step_of(&secret, "12a456", now).unwrap(), None);
    }

    #[test]
    fn recovery_codes_are_distinct_and_normalised() {
        let (codes, hashes) = new_recovery_codes();
        assert_eq!(codes.len(), RECOVERY_CODES);
        let set: std::collections::HashSet<_> = hashes.iter().collect();
        assert_eq!(set.len(), RECOVERY_CODES);
        assert_eq!(
            digest(&normal_recovery(&codes[0].to_uppercase())),
            hashes[0]
        );
    }

    #[test]
    fn the_qr_code_needs_no_styles() {
        let v = setup_view(&new_secret(), "Acme: jobs", "a@example.com").unwrap();
        assert!(v.uri.starts_with("otpauth://totp/"), "{}", v.uri);
        assert!(v.svg.starts_with("<svg role=\"img\""));
        assert!(!v.svg.contains("style"));
        assert!(!v.svg.contains("<?xml"));
    }
}
