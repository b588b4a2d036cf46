//! Organizations: the tenants. Every other row belongs to exactly one. An organization
//! also has a public board: the host name it answers on, its look (name, tagline, logo,
//! accent colour) and whether visitors may post jobs.

pub mod domains;
mod store;

use serde::Serialize;
use serde_json::Value;
use utoipa::openapi::{
    ObjectBuilder, RefOr,
    schema::{Schema, Type},
};

use jobboard_store::reuse::Reused;

use crate::{
    Error, Input, OrgId, Result, Ts,
    db::Db,
    kind::{
        self, Check, Enum, Flag, Int, Kind, Link, Matching, Text, TextRule, Trimmed, type_error,
    },
    request,
};

/// The member switches' closed sets (in a module of their own: their codecs name the
/// standard `Result`).
mod switches {
    use crate::text_enum;

    text_enum!(
        /// Who may become a member by signing in on the board: any address (`open`), or only
        /// addresses that already are members (`closed`, the default).
        MemberSignup { Open = "open", Closed = "closed" }
    );

    text_enum!(
        /// Whether a member who signs up is approved at once (`auto`, the default) or waits
        /// for staff as `pending` (`manual`).
        MemberApproval { Auto = "auto", Manual = "manual" }
    );

    text_enum!(
        /// What a member's new or edited job becomes: `pending` until staff approve it (the
        /// default), or `active` at once (the organization trusts its members).
        MemberPosts { Pending = "pending", Active = "active" }
    );

    text_enum!(
        /// What a paid post becomes once paid: `pending` until staff approve it (the
        /// default), or `active` at once.
        PaidPosts { Pending = "pending", Active = "active" }
    );
}

pub use switches::{MemberApproval, MemberPosts, MemberSignup, PaidPosts};

/// A pending claim of a domain.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct Claim {
    pub org_id: OrgId,
    pub domain: String,
    /// Served publicly at [`domains::WELL_KNOWN`]: not a secret, only unguessable.
    pub token: String,
    pub created_at: Ts,
}

/// An organization.
#[derive(Debug, Clone, PartialEq, Serialize, sqlx::FromRow)]
pub struct Org {
    pub id: OrgId,
    pub name: String,
    /// The host name its board answers on (`jobs.example.com`), if any.
    pub domain: Option<String>,
    pub tagline: Option<String>,
    pub logo_url: Option<String>,
    /// `#rrggbb`.
    pub accent_color: Option<String>,
    /// Visitors may submit jobs on the board (`/post-a-job`).
    pub public_posting: bool,
    /// Mail a job's `contact_email` when the job goes live.
    pub mail_job_live: bool,
    /// Mail a job's `contact_email` this many days before it expires; 0: never.
    pub mail_expiry_days: i64,
    /// Mail a job's `contact_email` on each application.
    pub mail_applications: bool,
    /// Applications are deleted this many days after they were made; 0: kept.
    pub keep_applications_days: i64,
    /// Applications of a job that has ended are deleted this many days after it ended;
    /// 0: kept (as long as `keep_applications_days` allows).
    pub keep_applications_after_job_days: i64,
    /// Who may sign up on the board.
    pub member_signup: MemberSignup,
    /// Whether new members wait for staff.
    pub member_approval: MemberApproval,
    /// What members' new and edited jobs become.
    pub member_posts: MemberPosts,
    /// What a paid post becomes once paid.
    pub paid_posts: PaidPosts,
    /// A refund takes the job it paid for off the board.
    pub refund_unpublishes: bool,
    /// Jobs must carry a salary range (`salary_min` and `salary_max`).
    pub require_salary: bool,
    /// Remote jobs must name the countries they may be done from.
    pub require_remote_countries: bool,
    /// How long a job without `expires_at` is announced as valid (its structured data's
    /// `validThrough`), in days.
    pub listing_days: i64,
    pub created_at: Ts,
}

/// The organization whose board answers a host, with the version of everything its
/// pages are rendered from (bumped by every write to its jobs, categories or settings).
#[derive(Debug, Clone, PartialEq)]
pub struct Board {
    pub org: Org,
    pub version: i64,
}

/// A host name: lower-case letters, digits, dots and dashes; labels of 1 to 63
/// characters not starting or ending with a dash; at most 253 characters.
pub struct HostName;

/// True when `s` is a host name as [`HostName`] accepts it.
pub fn is_host_name(s: &str) -> bool {
    s.len() <= 253
        && s.split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        })
}

impl Kind for HostName {
    type Value = String;
    fn parse(v: &Value) -> Check<String> {
        let s = v.as_str().ok_or_else(|| type_error("a host name string"))?;
        let s = s.trim().to_ascii_lowercase();
        if is_host_name(&s) {
            Ok(s)
        } else {
            Err((
                "invalid_format",
                "Must be a host name such as jobs.example.com (letters, digits, dots and dashes)."
                    .into(),
            ))
        }
    }
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .max_length(Some(253))
            .pattern(Some(r"^[A-Za-z0-9.-]+$"))
            .into()
    }
    fn is_blank(v: &String) -> bool {
        v.is_empty()
    }
}

/// A colour written `#rrggbb` (kept lower-case).
pub type HexColor = Matching<HexColorRule>;

pub struct HexColorRule;

impl TextRule for HexColorRule {
    const PATTERN: &'static str = "^#[0-9A-Fa-f]{6}$";
    const MESSAGE: &'static str = "Must be a colour written #rrggbb, e.g. #1d4ed8.";
    const MIN_LENGTH: usize = 7;
    const MAX_LENGTH: usize = 7;
    fn accepts(s: &str) -> bool {
        s.len() == 7 && s.starts_with('#') && s[1..].bytes().all(|b| b.is_ascii_hexdigit())
    }
    fn normalize(s: &str) -> String {
        s.trim().to_ascii_lowercase()
    }
}

request! {
    /// Changes to an organization's settings (the command line and the dashboard).
    pub struct OrgChanges {
        pub name: not_null Trimmed<1, 200>,
        /// The host name its board answers on; `null` removes it.
        pub domain: nullable HostName,
        /// A line under the board's name; `null` removes it.
        pub tagline: nullable Text<0, 200>,
        /// An absolute http(s) URL of the board's logo; `null` removes it.
        pub logo_url: nullable Link,
        /// `#rrggbb`; `null` returns to the neutral default.
        pub accent_color: nullable HexColor,
        /// Whether visitors may submit jobs on the board.
        pub public_posting: not_null Flag,
        /// Mail a job's contact address when the job goes live.
        pub mail_job_live: not_null Flag,
        /// Mail a job's contact address this many days before it expires (0 to 60; 0:
        /// never).
        pub mail_expiry_days: not_null Int<0, 60>,
        /// Mail a job's contact address on each application.
        pub mail_applications: not_null Flag,
        /// Delete applications this many days after they were made (0 to 3650; 0: keep
        /// them for as long as the organization exists).
        pub keep_applications_days: not_null Int<0, 3650>,
        /// Delete the applications of a job that has ended (expired, or deleted) this
        /// many days after it ended (0 to 3650; 0: keep them).
        pub keep_applications_after_job_days: not_null Int<0, 3650>,
        /// Who may sign up on the board: `open` or `closed`.
        pub member_signup: not_null Enum<MemberSignup>,
        /// Whether new members wait for staff: `auto` or `manual`.
        pub member_approval: not_null Enum<MemberApproval>,
        /// What members' new and edited jobs become: `pending` or `active`.
        pub member_posts: not_null Enum<MemberPosts>,
        /// What a paid post becomes once paid: `pending` or `active`.
        pub paid_posts: not_null Enum<PaidPosts>,
        /// Whether a refund takes the job it paid for off the board.
        pub refund_unpublishes: not_null Flag,
        /// Whether jobs must carry a salary range (`salary_min` and `salary_max`).
        pub require_salary: not_null Flag,
        /// Whether remote jobs must name the countries they may be done from.
        pub require_remote_countries: not_null Flag,
        /// How long a job without an expiry is announced as valid to search engines, in
        /// days (1 to 365).
        pub listing_days: not_null Int<1, 365>,
    }
}

/// Creates an organization named `name` (its board answers `domain` when given).
pub async fn create(db: &Db, name: &str) -> Result<Org> {
    create_with(db, name, None).await
}

/// Creates an organization whose board answers `domain` (set directly: the operator's
/// way; loopback names and addresses are refused).
pub async fn create_with(db: &Db, name: &str, domain: Option<&str>) -> Result<Org> {
    create_reserving(db, name, domain, &domains::Reserved::builtin()).await
}

/// [`create_with`], also refusing the service's own host names of `reserved`.
pub async fn create_reserving(
    db: &Db,
    name: &str,
    domain: Option<&str>,
    reserved: &domains::Reserved,
) -> Result<Org> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 200 {
        return Err(Error::field(
            "name",
            "invalid_value",
            "Must be 1 to 200 characters.",
        ));
    }
    if let Err((code, message)) = kind::check_one_line(name) {
        return Err(Error::field("name", code, message));
    }
    let domain = domain.map(|d| d.trim().to_ascii_lowercase());
    if let Some(d) = &domain
        && !is_host_name(d)
    {
        return Err(Error::field(
            "domain",
            "invalid_format",
            "Must be a host name such as jobs.example.com.",
        ));
    }
    // A new organization is never organization 1 unless the database is empty.
    if let Some(d) = &domain
        && count(db).await? > 0
    {
        reserved.check(OrgId(i64::MAX), d)?;
    }
    let org = match store::create(db, name, domain.as_deref()).await {
        Err(e) if e.is_unique() => return Err(domain_taken()),
        other => other?,
    };
    if let Some(d) = &org.domain {
        store::clear_claims(db, org.id, d).await?;
    }
    Ok(org)
}

fn domain_taken() -> Error {
    Error::conflict(
        "Another organization's board already answers this domain.",
        serde_json::json!({ "field": "domain" }),
    )
}

/// Applies the changes of `body` to organization `id`.
pub async fn update(db: &Db, id: OrgId, body: Input) -> Result<Org> {
    let changes = OrgChanges::parse(body)?;
    update_with(db, id, changes).await
}

/// Applies the changes of `body` to organization `id`, also refusing a domain among the
/// service's own host names of `reserved` (the command line's way: a domain given here
/// is in use at once, without proof).
pub async fn update_reserving(
    db: &Db,
    id: OrgId,
    body: Input,
    reserved: &domains::Reserved,
) -> Result<Org> {
    let changes = OrgChanges::parse(body)?;
    update_checked(db, id, changes, reserved).await
}

/// Applies checked changes to organization `id` (a domain among them is in use at once;
/// loopback names and addresses are refused).
pub async fn update_with(db: &Db, id: OrgId, c: OrgChanges) -> Result<Org> {
    update_checked(db, id, c, &domains::Reserved::builtin()).await
}

async fn update_checked(
    db: &Db,
    id: OrgId,
    c: OrgChanges,
    reserved: &domains::Reserved,
) -> Result<Org> {
    let mut org = get(db, id).await?;
    if let Some(v) = c.name {
        org.name = v;
    }
    let domain_set = c.domain.patch();
    if let Some(Some(d)) = &domain_set {
        reserved.check(id, d)?;
    }
    if let Some(v) = domain_set.clone() {
        org.domain = v;
    }
    if let Some(v) = c.tagline.patch() {
        org.tagline = v.filter(|t| !t.trim().is_empty());
    }
    if let Some(v) = c.logo_url.patch() {
        org.logo_url = v;
    }
    if let Some(v) = c.accent_color.patch() {
        org.accent_color = v;
    }
    if let Some(v) = c.public_posting {
        org.public_posting = v;
    }
    if let Some(v) = c.mail_job_live {
        org.mail_job_live = v;
    }
    if let Some(v) = c.mail_expiry_days {
        org.mail_expiry_days = v;
    }
    if let Some(v) = c.keep_applications_days {
        org.keep_applications_days = v;
    }
    if let Some(v) = c.keep_applications_after_job_days {
        org.keep_applications_after_job_days = v;
    }
    if let Some(v) = c.mail_applications {
        org.mail_applications = v;
    }
    if let Some(v) = c.member_signup {
        org.member_signup = v;
    }
    if let Some(v) = c.member_approval {
        org.member_approval = v;
    }
    if let Some(v) = c.member_posts {
        org.member_posts = v;
    }
    if let Some(v) = c.paid_posts {
        org.paid_posts = v;
    }
    if let Some(v) = c.refund_unpublishes {
        org.refund_unpublishes = v;
    }
    if let Some(v) = c.require_salary {
        org.require_salary = v;
    }
    if let Some(v) = c.require_remote_countries {
        org.require_remote_countries = v;
    }
    if let Some(v) = c.listing_days {
        org.listing_days = v;
    }
    let org = match store::update(db, &org).await {
        Err(e) if e.is_unique() => return Err(domain_taken()),
        other => other?,
    };
    if let Some(Some(d)) = &domain_set {
        // Set by an operator: claims of it (this organization's, and others') are moot.
        store::clear_claims(db, id, d).await?;
    }
    Ok(org)
}

/// Makes two-factor sign-in required (or not) of every staff user of organization `id`
/// (the command line). Users without it are sent to set it up at their next sign-in.
pub async fn set_require_2fa(db: &Db, id: OrgId, on: bool) -> Result<()> {
    if !store::set_require_2fa(db, id, on).await? {
        return Err(Error::NotFound("organization"));
    }
    tracing::info!(org_id = id.0, on, "two-factor sign-in requirement changed");
    Ok(())
}

/// Whether organization `id` requires two-factor sign-in of its staff.
pub async fn require_2fa(db: &Db, id: OrgId) -> Result<bool> {
    store::require_2fa(db, id)
        .await?
        .ok_or(Error::NotFound("organization"))
}

/// One organization.
pub async fn get(db: &Db, id: OrgId) -> Result<Org> {
    store::get(db, id)
        .await?
        .ok_or(Error::NotFound("organization"))
}

/// Every organization, by id.
pub async fn list(db: &Db) -> Result<Vec<Org>> {
    Ok(store::list(db).await?)
}

/// The number of organizations.
pub async fn count(db: &Db) -> Result<i64> {
    Ok(store::count(db).await?)
}

/// The board a request's host name reaches: the organization whose domain it is, else
/// organization 1. `None` only while no organization exists.
///
/// A board page needs it before anything else, and reading it for every request was most
/// of what a cached page cost: a board read is reused until this process writes, and on
/// SQLite for at most a second, on PostgreSQL until any node's commit is announced here
/// (see [`jobboard_store::reuse`]).
pub async fn board_for_host(db: &Db, host: &str) -> Result<Option<Board>> {
    /// By lower-case host, at most 10,000 (a request may name any host).
    static BOARDS: std::sync::LazyLock<Reused<String, Board>> =
        std::sync::LazyLock::new(|| Reused::new(10_000));
    Ok(BOARDS
        .get(db, host.to_ascii_lowercase(), |host| async move {
            store::board_for_host(db, &host).await
        })
        .await?)
}
