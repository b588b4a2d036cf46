//! Jobs in (docs/distribution.md): an organization's import sources (an applicant
//! tracking system's public job board, or a partner's feed) mirrored into its jobs.
//!
//! A run reads the source ([`parse`], one parser per kind), checks every job through the
//! same operation as `POST /jobs`, and writes a page of jobs per transaction: a job is
//! keyed by (source, the source's own id) in `import_items` with the digest of what was
//! last imported, so an unchanged job is left alone (no event), a changed one updated in
//! place (`job.updated` with the fields that changed) and a new one created
//! (`job.created`). A run interrupted anywhere leaves whole pages, and a rerun finds each
//! job it stored by its key: no duplicates. Only a whole read (not failed, malformed,
//! truncated or empty) expires the jobs it no longer lists (`job.expired`), and a run
//! that would expire more than half of a source's live jobs is held and reported instead.

pub mod parse;
mod store;

use std::collections::HashSet;

use serde::Serialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use uuid::Uuid;

pub use parse::{Item, Read, Unreadable};

use crate::{
    CategoryId, Error, Input, JobId, JsonDoc, OrgId, Result, Ts, categories,
    db::Db,
    jobs::{self, JobStatus},
    kind::{Enum, Int, Link, Trimmed},
    request,
};

mod kinds {
    use crate::text_enum;

    text_enum!(
        /// The format a source publishes: Greenhouse's job board API, Lever's postings
        /// API, Ashby's posting API, the Indeed XML format, or JSON Feed 1.1.
        Kind { Greenhouse = "greenhouse", Lever = "lever", Ashby = "ashby", Xml = "xml", JsonFeed = "jsonfeed" }
    );
}

pub use kinds::Kind;

/// Jobs written per transaction.
pub const PAGE: usize = 100;

/// An import source.
#[derive(Debug, Clone, PartialEq, Serialize, sqlx::FromRow)]
pub struct Source {
    pub id: Uuid,
    pub org_id: OrgId,
    pub kind: Kind,
    pub url: String,
    /// Minutes between scheduled runs.
    pub every_minutes: i64,
    /// What a new job from this source becomes: `pending` or `active`.
    pub job_status: JobStatus,
    pub category_id: Option<CategoryId>,
    /// The validators of the last read (conditional requests).
    pub etag: Option<String>,
    pub last_modified: Option<String>,
    pub next_run_at: Ts,
    pub last_run_at: Option<Ts>,
    /// The last run's [`Counts`].
    pub last_result: Option<JsonDoc>,
    pub created_at: Ts,
}

impl Source {
    /// The employer named when the format names none: the board's name in the URL
    /// (`.../postings/acme-bakery` is "Acme Bakery").
    pub fn board_name(&self) -> String {
        let last = self
            .url
            .split(['?', '#'])
            .next()
            .unwrap_or("")
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .unwrap_or("");
        let words: Vec<String> = last
            .split(['-', '_', '.'])
            .filter(|w| !w.is_empty())
            .map(|w| {
                let mut c = w.chars();
                c.next()
                    .map(|f| f.to_uppercase().chain(c).collect())
                    .unwrap_or_default()
            })
            .collect();
        if words.is_empty() {
            "Unknown employer".into()
        } else {
            words.join(" ")
        }
    }
}

request! {
    /// A new import source (the command line and the dashboard).
    pub struct SourceIn {
        pub kind: required Enum<Kind>,
        /// The source's public address (http or https).
        pub url: required Link,
        /// Minutes between runs, 5 to 10080 (a week); default 60.
        pub every: optional Int<5, 10080>,
        /// What a new job becomes: `pending` (default) or `active`.
        pub status: optional Enum<JobStatus>,
        /// The slug of a category of the organization for every job of the source.
        pub category: optional Trimmed<1, 80>,
    }
}

/// What a run did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct Counts {
    pub created: u64,
    pub updated: u64,
    pub unchanged: u64,
    pub expired: u64,
    pub refused: u64,
    /// The first refusals: (the source's id of the job, why).
    pub refusals: Vec<(String, String)>,
    /// Jobs the run would have expired but held (more than half of the source's).
    pub held: u64,
    /// The source answered that nothing changed since the last read.
    pub not_modified: bool,
    /// Why the source could not be read (nothing changed).
    pub error: Option<String>,
}

impl Counts {
    /// One line for the log, the command line and the dashboard.
    pub fn summary(&self) -> String {
        if let Some(e) = &self.error {
            return format!("failed: {e}");
        }
        if self.not_modified {
            return "not modified since the last run".into();
        }
        let mut s = format!(
            "created {}, updated {}, unchanged {}, expired {}, refused {}",
            self.created, self.updated, self.unchanged, self.expired, self.refused
        );
        if self.held > 0 {
            s.push_str(&format!(
                "; held: {} jobs would have expired (more than half of the source), none did",
                self.held
            ));
        }
        s
    }
}

/// Creates an import source of `org_id`.
pub async fn create(db: &Db, org_id: OrgId, body: Input) -> Result<Source> {
    let s = SourceIn::parse(body)?;
    let job_status = s.status.unwrap_or(JobStatus::Pending);
    if !matches!(job_status, JobStatus::Pending | JobStatus::Active) {
        return Err(Error::field(
            "status",
            "invalid_value",
            "Must be pending or active.",
        ));
    }
    let category_id = match &s.category {
        Some(slug) => Some(
            categories::list(db, org_id)
                .await?
                .into_iter()
                .find(|c| &c.slug == slug)
                .map(|c| c.id)
                .ok_or_else(|| {
                    Error::field(
                        "category",
                        "not_found",
                        "No category with this slug exists in the organization.",
                    )
                })?,
        ),
        None => None,
    };
    let now = db.now();
    let source = Source {
        id: Uuid::now_v7(),
        org_id,
        kind: s.kind,
        url: s.url,
        every_minutes: s.every.unwrap_or(60),
        job_status,
        category_id,
        etag: None,
        last_modified: None,
        next_run_at: now,
        last_run_at: None,
        last_result: None,
        created_at: now,
    };
    store::insert(db, &source).await?;
    tracing::info!(org_id = org_id.0, source_id = %source.id, kind = source.kind.as_str(), "import source created");
    Ok(source)
}

/// The organization's sources, oldest first.
pub async fn list(db: &Db, org_id: OrgId) -> Result<Vec<Source>> {
    Ok(store::list(db, org_id).await?)
}

/// Source `id` (of `org_id` when given).
pub async fn get(db: &Db, org_id: Option<OrgId>, id: Uuid) -> Result<Source> {
    store::get(db, org_id, id)
        .await?
        .ok_or(Error::NotFound("import source"))
}

/// Deletes source `id`: its jobs stay as they are, no longer mirrored.
pub async fn delete(db: &Db, org_id: Option<OrgId>, id: Uuid) -> Result<Source> {
    store::delete(db, org_id, id)
        .await?
        .ok_or(Error::NotFound("import source"))
}

/// Claims the next source due to run (its next run moved on by its interval, so another
/// node does not take it too), if any.
pub async fn claim_due(db: &Db, now: Ts) -> Result<Option<Source>> {
    Ok(store::claim_due(db, now).await?)
}

/// Records how a run of `source` ended, and the validators of what it read.
pub async fn finish(
    db: &Db,
    source: &Source,
    counts: &Counts,
    validators: Option<(Option<String>, Option<String>)>,
) -> Result<()> {
    let result = JsonDoc(serde_json::to_value(counts).unwrap_or(Value::Null));
    store::finish(db, source.id, db.now(), &result, validators).await?;
    tracing::info!(org_id = source.org_id.0, source_id = %source.id, result = %counts.summary(), "import run");
    Ok(())
}

/// The body `POST /jobs` would take for `item` of `source`.
fn body_of(source: &Source, item: &Item) -> serde_json::Map<String, Value> {
    // One-line fields are cut to the length the board takes.
    let cut = |s: &str, max: usize| json!(s.chars().take(max).collect::<String>());
    let line = |s: &str| cut(s, 255);
    let mut b = serde_json::Map::new();
    b.insert("title".into(), line(&item.title));
    let description = if item.description.trim().is_empty() {
        item.title.clone()
    } else {
        item.description.clone()
    };
    b.insert("description".into(), json!(description));
    if let Some(c) = &item.company_name {
        b.insert("company_name".into(), line(c));
    }
    if let Some(l) = &item.location {
        b.insert("location".into(), line(l));
    }
    if let Some(c) = item.country {
        b.insert("country".into(), json!(c));
        // A remote job of a country is done from that country.
        if item.is_remote {
            b.insert("remote_countries".into(), json!([c]));
        }
    }
    for (k, v) in [("region", &item.region), ("city", &item.city)] {
        if let Some(v) = v {
            b.insert(k.into(), line(v));
        }
    }
    if let Some(p) = &item.postal_code {
        b.insert("postal_code".into(), cut(p, 32));
    }
    if let Some(t) = item.job_type {
        b.insert("job_type".into(), json!(t));
    }
    b.insert("is_remote".into(), json!(item.is_remote));
    if let Some(u) = &item.apply_url {
        b.insert("how_to_apply_method".into(), json!("website"));
        b.insert("how_to_apply".into(), json!(u));
    }
    for (k, v) in [
        ("salary_min", item.salary_min),
        ("salary_max", item.salary_max),
    ] {
        if let Some(v) = v {
            b.insert(k.into(), json!(v));
        }
    }
    if let Some(c) = &item.salary_currency {
        b.insert("salary_currency".into(), json!(c.to_ascii_uppercase()));
    }
    if let Some(p) = item.salary_period {
        b.insert("salary_period".into(), json!(p));
    }
    if let Some(c) = source.category_id {
        b.insert("category_id".into(), json!(c));
    }
    b
}

/// The digest of what an item imports (a change of any field changes it).
fn digest(body: &serde_json::Map<String, Value>) -> String {
    hex::encode(Sha256::digest(serde_json::to_vec(body).unwrap_or_default()))
}

/// The digest recorded for a job the source stopped listing (so that its return is a
/// change, which lists it again).
const GONE: &str = "";

/// Mirrors `read` of `source` into the organization's jobs (see the module's rules).
pub async fn apply(db: &Db, source: &Source, read: &Read) -> Result<Counts> {
    let mut counts = Counts::default();
    let org_id = source.org_id;
    for page in read.items.chunks(PAGE) {
        let ids: Vec<&str> = page.iter().map(|i| i.external_id.as_str()).collect();
        let known = store::items(db, source.id, &ids).await?;
        // Checked before the transaction, as the API checks a body.
        enum Step {
            Create(Box<jobs::Job>),
            Update(JobId, Box<jobs::Checked>),
        }
        let mut steps = Vec::new();
        for item in page {
            let body = body_of(source, item);
            let d = digest(&body);
            let prior = known.get(&item.external_id);
            let step = match prior {
                Some((_, old)) if *old == d => {
                    counts.unchanged += 1;
                    continue;
                }
                Some((job, old)) => {
                    let mut body = body;
                    if old == GONE {
                        body.insert("status".into(), json!(source.job_status));
                    }
                    jobs::changes(db, org_id, Input::new(body))
                        .await
                        .map(|c| Step::Update(*job, Box::new(c)))
                }
                None => {
                    let mut body = body;
                    body.insert("status".into(), json!(source.job_status));
                    jobs::build(db, org_id, Input::new(body))
                        .await
                        .map(|j| Step::Create(Box::new(j)))
                }
            };
            match step {
                Ok(s) => steps.push((item, d, s)),
                Err(Error::Invalid(errors)) => {
                    counts.refused += 1;
                    if counts.refusals.len() < 20 {
                        let why = errors
                            .iter()
                            .map(|e| format!("{}: {}", e.field, e.message))
                            .collect::<Vec<_>>()
                            .join("; ");
                        counts.refusals.push((item.external_id.clone(), why));
                    }
                }
                Err(e) => return Err(e),
            }
        }
        let mut tx = db.begin().await?;
        let mut updated = 0;
        let mut claimed = Vec::new();
        for (item, d, step) in steps {
            match step {
                // The key first: when another run of the source (the command line beside
                // the scheduler) took it meanwhile, that run makes the job, not this one.
                // The page's claimed jobs are stored together below.
                Step::Create(job) => {
                    if store::claim_item(&mut tx, source.id, &item.external_id, job.id, &d).await? {
                        claimed.push(*job);
                    }
                }
                Step::Update(id, checked) => {
                    match jobs::apply_in(&mut tx, db.outgoing(), org_id, id, *checked).await? {
                        Some(_) => {
                            store::set_digest(&mut tx, source.id, &item.external_id, &d).await?;
                            updated += 1;
                        }
                        // Deleted on the board since: its key is forgotten, and the
                        // next run makes the job again, as the source still lists it.
                        None => store::forget(&mut tx, source.id, &item.external_id).await?,
                    }
                }
            }
        }
        let created = jobs::create_all_in(&mut tx, db.outgoing(), org_id, claimed)
            .await?
            .len() as u64;
        tx.commit().await?;
        counts.created += created;
        counts.updated += updated;
    }
    if read.complete && !read.items.is_empty() {
        expire_absent(db, source, read, &mut counts).await?;
    }
    Ok(counts)
}

/// Expires the source's live jobs that a whole read no longer lists, unless that is more
/// than half of them (then none, and the run says so).
async fn expire_absent(db: &Db, source: &Source, read: &Read, counts: &mut Counts) -> Result<()> {
    let listed: HashSet<&str> = read.items.iter().map(|i| i.external_id.as_str()).collect();
    let live = store::live_items(db, source.id).await?;
    let gone: Vec<&(String, JobId)> = live
        .iter()
        .filter(|(ext, _)| !listed.contains(ext.as_str()))
        .collect();
    if gone.is_empty() {
        return Ok(());
    }
    if gone.len() * 2 > live.len() {
        counts.held = gone.len() as u64;
        tracing::warn!(source_id = %source.id, gone = gone.len(), live = live.len(), "import held: it would expire more than half of the source's jobs");
        return Ok(());
    }
    for page in gone.chunks(PAGE) {
        let mut tx = db.begin().await?;
        for (ext, job) in page {
            let moved = jobs::set_status_in(
                &mut tx,
                db.outgoing(),
                source.org_id,
                *job,
                JobStatus::Expired,
            )
            .await?;
            if moved.is_some_and(|(before, _)| before != JobStatus::Expired) {
                counts.expired += 1;
            }
            store::set_digest(&mut tx, source.id, ext, GONE).await?;
        }
        tx.commit().await?;
    }
    Ok(())
}
