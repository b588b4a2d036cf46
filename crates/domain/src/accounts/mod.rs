//! Members' own door on the board: signing in with a one-time link sent by mail (no
//! password), the member's sessions, and what a member does once signed in (employers'
//! jobs in [`posts`], job seekers' saved jobs in [`saved`], their data in [`data`]).
//!
//! A link is asked for with an address (`/account/sign-in`). The answer is the same
//! whether or not a member has it; requests are limited per client address and per
//! recipient across nodes (the sign-in throttle's counters), and the mails anyone can ask
//! for are capped per recipient and day. The link (`/account/sign-in/<token>`, 32 random
//! bytes, only their SHA-256 stored) works once, for [`LINK_LIFETIME`], on the board of
//! the organization it was asked on. Opening it starts a session (stored like the
//! dashboard's, known by the hash of an id only the cookie holds) and, for an address
//! that is no member where the organization lets anyone sign up, first creates the member
//! with the role chosen on the form (`user.created`, as `members/sync` emits it), approved
//! at once or `pending` as the organization decides.

pub mod data;
pub mod posts;
mod records;
pub mod saved;
mod store;

use std::{net::IpAddr, time::Duration};

use base64::Engine as _;
use rand::RngCore;
use sha2::{Digest, Sha256};

use crate::{
    Error, Input, OrgId, Result, Ts,
    db::Db,
    kind::{Email, Enum},
    links,
    mail::{
        message::Message,
        store::{enqueue, on_request_allowed},
    },
    members::{ApprovalStatus, Member, Role},
    orgs::{MemberApproval, MemberSignup, Org},
    request,
    sessions::{Policy, throttle},
};

/// How long a sign-in link works.
pub const LINK_LIFETIME: Duration = Duration::from_secs(15 * 60);
/// Links mailed per recipient (address and organization) in a window of the sign-in
/// throttle (`login_attempts_window`).
pub const PER_RECIPIENT: u32 = 5;
/// Link requests per client address in a window of the sign-in throttle.
pub const PER_ADDRESS: u32 = 20;

mod role {
    use crate::text_enum;

    text_enum!(
        /// The role someone signing up chooses.
        SignupRole { Jobseeker = "jobseeker", Employer = "employer" }
    );
}

pub use role::SignupRole;

impl From<SignupRole> for Role {
    fn from(r: SignupRole) -> Role {
        match r {
            SignupRole::Jobseeker => Role::Jobseeker,
            SignupRole::Employer => Role::Employer,
        }
    }
}

request! {
    /// A request for a sign-in link (the board's form).
    pub struct LinkRequest {
        pub email: required Email,
        /// For an address that is no member yet, where anyone may sign up: `jobseeker`
        /// (the default) or `employer`.
        pub role: optional Enum<SignupRole>,
    }
}

/// What came of a request for a link.
#[derive(Debug, PartialEq, Eq)]
pub enum Requested {
    /// A link was mailed if the address may sign in (which is not said).
    Accepted,
    /// Too many requests for this address or from this client; try again after this long.
    Limited { retry_after: Duration },
}

fn digest(secret: &str) -> Vec<u8> {
    Sha256::digest(secret.as_bytes()).to_vec()
}

fn random_token() -> String {
    let mut raw = [0u8; 32];
    rand::rng().fill_bytes(&mut raw);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw)
}

fn unavailable() -> Error {
    Error::Unavailable {
        code: "mail_not_configured",
        message: "This board sends no mail, so members cannot sign in here yet.".into(),
    }
}

/// Who may sign in with an address on `org`'s board: an existing member, or anyone where
/// sign-up is open (`Some(role)`: the member the link will create).
enum Admission {
    Member,
    Signup(SignupRole),
    No,
}

/// Mails a sign-in link for the address of `body` on `org`'s board, if it may sign in
/// there; `client` is the requester's address (for the limits).
pub async fn request_link(
    db: &Db,
    org: &Org,
    body: Input,
    client: Option<IpAddr>,
    policy: &Policy,
) -> Result<Requested> {
    let Some(outgoing) = db.outgoing().cloned() else {
        return Err(unavailable());
    };
    let r = LinkRequest::parse(body)?;
    let now = db.now();
    let identity = links::email_identity(r.email.trim());
    let client = client.map_or_else(|| "unknown".to_string(), |a| a.to_string());
    let recipient = format!("{}:{identity}", org.id.0);
    for (kind, value, limit) in [
        ("member-link-address", client.as_str(), PER_ADDRESS),
        ("member-link-recipient", recipient.as_str(), PER_RECIPIENT),
    ] {
        if let Some(retry_after) = throttle::count(db, kind, value, limit, now, policy).await? {
            tracing::warn!(kind, "member sign-in link refused: too many requests");
            return Ok(Requested::Limited { retry_after });
        }
    }
    let member = crate::members::member_of_address(db, org.id, &identity).await?;
    let admission = match (&member, org.member_signup) {
        (Some(_), _) => Admission::Member,
        (None, MemberSignup::Open) => Admission::Signup(r.role.unwrap_or(SignupRole::Jobseeker)),
        (None, MemberSignup::Closed) => Admission::No,
    };
    let role = match admission {
        Admission::No => {
            tracing::info!(
                org_id = org.id.0,
                "member sign-in link asked for an address that is no member"
            );
            return Ok(Requested::Accepted);
        }
        Admission::Member => None,
        Admission::Signup(role) => Some(role),
    };
    let email = member.as_ref().map_or(r.email.clone(), |m| m.email.clone());
    let token = random_token();
    let link = outgoing.board_url(org.domain.as_deref(), &format!("/account/sign-in/{token}"));
    let minutes = LINK_LIFETIME.as_secs() / 60;
    let (subject, text) = if role.is_some() {
        (
            format!("Finish signing up at {}", org.name),
            format!(
                "Someone asked to sign up at {} with this address ({email}).\n\n\
                 To create your account and sign in, open this link within {minutes} minutes:\n\n\
                 {link}\n\nThe link works once. If you did not ask for it, ignore this mail: \
                 no account is created.\n",
                org.name
            ),
        )
    } else {
        (
            format!("Sign in to {}", org.name),
            format!(
                "Someone asked to sign in to {} with this address ({email}).\n\n\
                 To sign in, open this link within {minutes} minutes:\n\n{link}\n\n\
                 The link works once. If you did not ask for it, ignore this mail.\n",
                org.name
            ),
        )
    };
    let mut tx = db.begin().await?;
    // Mail anyone can ask for: capped per recipient and day, across forms and nodes.
    if !on_request_allowed(&mut tx, &identity, now).await? {
        tx.commit().await?;
        tracing::info!(
            org_id = org.id.0,
            "member sign-in link not mailed: the recipient's daily cap is reached"
        );
        return Ok(Requested::Accepted);
    }
    store::insert_link(
        &mut tx,
        &store::NewLink {
            token_hash: digest(&token),
            org_id: org.id,
            email: email.clone(),
            email_lower: identity,
            role,
            created_at: now,
            expires_at: now.later_by(LINK_LIFETIME),
        },
    )
    .await?;
    let msg = Message::new("member_sign_in", email, &subject, text);
    enqueue(&mut tx, org.id, &msg)
        .await
        .map_err(|_| Error::Internal("the sign-in mail could not be queued"))?;
    tx.commit().await?;
    tracing::info!(
        org_id = org.id.0,
        signup = role.is_some(),
        "member sign-in link mailed"
    );
    Ok(Requested::Accepted)
}

/// A session just started by a link.
#[derive(Debug)]
pub struct Started {
    /// The session's id, for the cookie (never stored).
    pub session_id: String,
    pub member: Member,
    /// The link created the member.
    pub created: bool,
}

/// Uses the sign-in link `token` on `org`'s board: starts a session of its member,
/// creating the member first when the link was mailed for signing up and the
/// organization still lets anyone sign up. `None` when the link is unknown, used,
/// expired, of another board, or can no longer create its member.
pub async fn sign_in(db: &Db, org: &Org, token: &str, policy: &Policy) -> Result<Option<Started>> {
    if token.is_empty() || token.len() > 128 {
        return Ok(None);
    }
    let now = db.now();
    let mut tx = db.begin().await?;
    let Some(link) = store::use_link(&mut tx, org.id, &digest(token), now).await? else {
        tx.commit().await?;
        return Ok(None);
    };
    let (member, created) = match crate::members::member_in(&mut tx, org.id, &link.email).await? {
        Some(m) => (m, false),
        None => match (link.role, org.member_signup) {
            (Some(role), MemberSignup::Open) => {
                let approval = match org.member_approval {
                    MemberApproval::Auto => ApprovalStatus::Approved,
                    MemberApproval::Manual => ApprovalStatus::Pending,
                };
                let m =
                    crate::members::create_in(&mut tx, org.id, &link.email, role.into(), approval)
                        .await?;
                (m, true)
            }
            _ => {
                tx.commit().await?;
                return Ok(None);
            }
        },
    };
    let session_id = random_token();
    store::insert_session(
        &mut tx,
        &digest(&session_id),
        &member,
        now,
        now.later_by(policy.lifetime),
    )
    .await?;
    tx.commit().await?;
    tracing::info!(org_id = org.id.0, member_id = %member.id, created, "member signed in");
    Ok(Some(Started {
        session_id,
        member,
        created,
    }))
}

/// A signed-in member.
#[derive(Debug, Clone)]
pub struct Session {
    /// The SHA-256 of the session id (what anti-forgery tokens are bound to).
    pub id_hash: Vec<u8>,
    pub member: Member,
}

/// The live session of `org_id`'s board whose id is `id`, noting the request (idle
/// expiry counts from the last one; noted at most once a minute).
pub async fn resume(db: &Db, org_id: OrgId, id: &str, policy: &Policy) -> Result<Option<Session>> {
    if id.is_empty() || id.len() > 128 {
        return Ok(None);
    }
    let now = db.now();
    let hash = digest(id);
    let Some((member, last_seen)) =
        store::find_session(db, org_id, &hash, now, now.earlier_by(policy.idle)).await?
    else {
        return Ok(None);
    };
    if last_seen.micros() < now.earlier_by(Duration::from_secs(60)).micros() {
        store::touch_session(db, &hash, now).await?;
    }
    Ok(Some(Session {
        id_hash: hash,
        member,
    }))
}

/// Ends session `s` (signing out).
pub async fn end(db: &Db, s: &Session) -> Result<()> {
    Ok(store::delete_session(db, &s.id_hash).await?)
}

/// Deletes ended sessions and spent or expired links; how many rows went.
pub async fn purge(db: &Db, now: Ts, policy: &Policy) -> Result<u64> {
    Ok(store::purge(db, now, now.earlier_by(policy.idle)).await?)
}

/// A member who may post jobs: an employer (`employer`, `business` or `both`) whom
/// staff have not left pending or rejected.
pub fn may_post(m: &Member) -> std::result::Result<(), &'static str> {
    if !m.role.posts_jobs() {
        return Err("Only employers post jobs. Your account is a job seeker's.");
    }
    match m.approval_status {
        ApprovalStatus::Approved => Ok(()),
        ApprovalStatus::Pending => Err(
            "Your account waits for the board's approval. You can post jobs once it is approved.",
        ),
        ApprovalStatus::Rejected => {
            Err("The board did not approve your account, so you cannot post jobs here.")
        }
    }
}
