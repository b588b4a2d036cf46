//! Jobs as stored: create, read, update, delete, list with filters and full-text search,
//! and expiry. Every change writes its events in the same transaction.

use serde::Serialize;
use serde_json::{Value, json};
use utoipa::ToSchema;
use uuid::Uuid;

use tokio::sync::{mpsc, oneshot};

use super::{Backend, Db, DbResult, Pool, Ts, Tx, events};
use crate::{dispatch, dispatch_tx};

/// Every job status.
pub const STATUSES: &[&str] = &["pending", "active", "expired", "draft"];
pub const JOB_TYPES: &[&str] = &[
    "full-time",
    "part-time",
    "contract",
    "internship",
    "temporary",
    "casual",
];
pub const APPLY_METHODS: &[&str] = &["form", "email", "website", "form-external"];
pub const SALARY_PERIODS: &[&str] = &["hourly", "daily", "weekly", "monthly", "yearly"];

/// The stored columns of a job, in the order of [`Job`].
const COLUMNS: &str = "id, title, description, description_text, company_name, slug, job_type, location, \
    location_restricted, is_remote, is_highlighted, is_sticky, how_to_apply, how_to_apply_method, \
    category_id, company_website, company_logo_url, salary_min, salary_max, salary_currency, \
    salary_period, contact_email, expires_at, status, created_at, updated_at";

/// A job with every stored field.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct Job {
    pub id: Uuid,
    pub title: String,
    /// Sanitised HTML.
    pub description: String,
    /// The description with its tags stripped (what search matches).
    pub description_text: String,
    pub company_name: String,
    pub slug: String,
    #[schema(value_type = Option<crate::db::jobs::JobType>)]
    pub job_type: Option<String>,
    pub location: Option<String>,
    pub location_restricted: bool,
    pub is_remote: bool,
    pub is_highlighted: bool,
    pub is_sticky: bool,
    pub how_to_apply: Option<String>,
    #[schema(value_type = Option<crate::db::jobs::ApplyMethod>)]
    pub how_to_apply_method: Option<String>,
    pub category_id: Option<Uuid>,
    pub company_website: Option<String>,
    pub company_logo_url: Option<String>,
    pub salary_min: Option<f64>,
    pub salary_max: Option<f64>,
    pub salary_currency: Option<String>,
    #[schema(value_type = Option<crate::db::jobs::SalaryPeriod>)]
    pub salary_period: Option<String>,
    pub contact_email: Option<String>,
    pub expires_at: Option<Ts>,
    #[schema(value_type = crate::db::jobs::JobStatus)]
    pub status: String,
    pub created_at: Ts,
    pub updated_at: Ts,
}

/// A job as listed.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct JobListItem {
    pub id: Uuid,
    pub title: String,
    pub description: String,
    pub company_name: String,
    pub slug: String,
    pub location: Option<String>,
    #[schema(value_type = Option<crate::db::jobs::JobType>)]
    pub job_type: Option<String>,
    #[schema(value_type = crate::db::jobs::JobStatus)]
    pub status: String,
    pub is_remote: bool,
    pub contact_email: Option<String>,
}

const LIST_COLUMNS: &str = "id, title, description, company_name, slug, location, job_type, status, is_remote, contact_email";

/// Job status (documentation type).
#[derive(ToSchema)]
#[schema(rename_all = "lowercase")]
#[allow(dead_code)]
pub enum JobStatus {
    Pending,
    Active,
    Expired,
    Draft,
}

/// Job type (documentation type).
#[derive(ToSchema)]
#[schema(rename_all = "kebab-case")]
#[allow(dead_code)]
pub enum JobType {
    FullTime,
    PartTime,
    Contract,
    Internship,
    Temporary,
    Casual,
}

/// How to apply (documentation type).
#[derive(ToSchema)]
#[schema(rename_all = "kebab-case")]
#[allow(dead_code)]
pub enum ApplyMethod {
    Form,
    Email,
    Website,
    FormExternal,
}

/// Salary period (documentation type).
#[derive(ToSchema)]
#[schema(rename_all = "lowercase")]
#[allow(dead_code)]
pub enum SalaryPeriod {
    Hourly,
    Daily,
    Weekly,
    Monthly,
    Yearly,
}

/// The writable fields of a job, validated. Used for creation and as the merged state of
/// an update.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobFields {
    pub title: String,
    pub description: String,
    pub description_text: String,
    pub company_name: String,
    pub job_type: Option<String>,
    pub location: Option<String>,
    pub location_restricted: bool,
    pub is_remote: bool,
    pub is_highlighted: bool,
    pub is_sticky: bool,
    pub how_to_apply: Option<String>,
    pub how_to_apply_method: Option<String>,
    pub category_id: Option<Uuid>,
    pub company_website: Option<String>,
    pub company_logo_url: Option<String>,
    pub salary_min: Option<f64>,
    pub salary_max: Option<f64>,
    pub salary_currency: Option<String>,
    pub salary_period: Option<String>,
    pub contact_email: Option<String>,
    pub expires_at: Option<Ts>,
    pub status: String,
}

impl JobFields {
    pub fn of(job: &Job) -> JobFields {
        JobFields {
            title: job.title.clone(),
            description: job.description.clone(),
            description_text: job.description_text.clone(),
            company_name: job.company_name.clone(),
            job_type: job.job_type.clone(),
            location: job.location.clone(),
            location_restricted: job.location_restricted,
            is_remote: job.is_remote,
            is_highlighted: job.is_highlighted,
            is_sticky: job.is_sticky,
            how_to_apply: job.how_to_apply.clone(),
            how_to_apply_method: job.how_to_apply_method.clone(),
            category_id: job.category_id,
            company_website: job.company_website.clone(),
            company_logo_url: job.company_logo_url.clone(),
            salary_min: job.salary_min,
            salary_max: job.salary_max,
            salary_currency: job.salary_currency.clone(),
            salary_period: job.salary_period.clone(),
            contact_email: job.contact_email.clone(),
            expires_at: job.expires_at,
            status: job.status.clone(),
        }
    }

    /// Names of the API fields whose values differ between `self` and `other`.
    pub fn changed(&self, other: &JobFields) -> Vec<&'static str> {
        let mut out = Vec::new();
        macro_rules! cmp {
            ($($f:ident),*) => {
                $( if self.$f != other.$f { out.push(stringify!($f)); } )*
            };
        }
        cmp!(
            title,
            description,
            company_name,
            job_type,
            location,
            location_restricted,
            is_remote,
            is_highlighted,
            is_sticky,
            how_to_apply,
            how_to_apply_method,
            category_id,
            company_website,
            company_logo_url,
            salary_min,
            salary_max,
            salary_currency,
            salary_period,
            contact_email,
            expires_at,
            status
        );
        out
    }
}

/// The public path of a job.
pub fn url_of(slug: &str) -> String {
    format!("/jobs/{slug}")
}

fn base_data(job: &Job) -> Value {
    json!({
        "job_id": job.id,
        "title": job.title,
        "company_name": job.company_name,
        "status": job.status,
    })
}

fn full_data(job: &Job) -> Value {
    json!({
        "job_id": job.id,
        "title": job.title,
        "company_name": job.company_name,
        "status": job.status,
        "location": job.location,
        "slug": job.slug,
        "url": url_of(&job.slug),
    })
}

/// Emits the events of a status move (`job.status_changed`, and `job.approved` or
/// `job.expired` when the job became active or expired).
async fn emit_status_events(tx: &mut Tx, org_id: i64, job: &Job, previous: &str) -> DbResult<()> {
    if previous == job.status {
        return Ok(());
    }
    events::emit(
        tx,
        org_id,
        "job.status_changed",
        json!({
            "job_id": job.id,
            "title": job.title,
            "company_name": job.company_name,
            "previous_status": previous,
            "status": job.status,
        }),
    )
    .await?;
    match job.status.as_str() {
        "active" => events::emit(tx, org_id, "job.approved", base_data(job)).await?,
        "expired" => events::emit(tx, org_id, "job.expired", base_data(job)).await?,
        _ => return Ok(()),
    };
    Ok(())
}

/// True when `id` is a job of this organization.
pub async fn exists(db: &Db, org_id: i64, id: Uuid) -> DbResult<bool> {
    let hit: Option<Uuid> = dispatch!(db.reader(), p => {
        sqlx::query_scalar("SELECT id FROM jobs WHERE org_id = $1 AND id = $2")
            .bind(org_id)
            .bind(id)
            .fetch_optional(p)
            .await?
    });
    Ok(hit.is_some())
}

/// One job of this organization.
pub async fn get(db: &Db, org_id: i64, id: Uuid) -> DbResult<Option<Job>> {
    let sql = format!("SELECT {COLUMNS} FROM jobs WHERE org_id = $1 AND id = $2");
    dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).bind(id).fetch_optional(p).await.map_err(crate::db::StoreError::from)
    })
}

async fn get_in(tx: &mut Tx, org_id: i64, id: Uuid, lock: bool) -> DbResult<Option<Job>> {
    let lock = if lock && matches!(tx, Tx::Postgres(_)) {
        " FOR UPDATE"
    } else {
        ""
    };
    let sql = format!("SELECT {COLUMNS} FROM jobs WHERE org_id = $1 AND id = $2{lock}");
    dispatch_tx!(tx, t => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).bind(id).fetch_optional(&mut **t).await.map_err(crate::db::StoreError::from)
    })
}

/// The slug of a new job: title and company, ASCII lower-case; from the second attempt
/// on, with a short random suffix (so that a collision never scans the jobs that share a
/// title).
fn slug_for(f: &JobFields, attempt: u32) -> String {
    let mut base = crate::text::slugify(&format!("{} {}", f.title, f.company_name), 80);
    if base.is_empty() {
        base = "job".to_string();
    }
    if attempt <= 1 {
        return base;
    }
    let suffix: String = Uuid::new_v4().simple().to_string()[..6].to_string();
    format!("{base}-{suffix}")
}

/// Creates a job (emitting `job.created`). The insert itself detects a taken slug (the
/// unique index): the insert is then retried with a suffixed slug.
///
/// On SQLite, concurrent creations are committed together: one task takes every creation
/// waiting for the single writer and commits them in one transaction (each job with its
/// event), so the commit and the full-text index's segment writes are shared. Each
/// caller is answered after the commit that stored its job. A batch in which anything
/// other than a job's own insert fails is rolled back and its creations are run one by
/// one, so one creation's failure never undoes another's.
pub async fn create(db: &Db, org_id: i64, f: &JobFields) -> DbResult<Job> {
    if let Pool::Sqlite(pool) = db.writer() {
        let queue = db.job_creates.get_or_init(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            tokio::spawn(drain_creates(db.without_queues(), pool.clone(), rx));
            tx
        });
        let (reply, answer) = oneshot::channel();
        let pending = PendingCreate {
            org_id,
            fields: f.clone(),
            reply,
        };
        if queue.send(pending).is_ok()
            && let Ok(result) = answer.await
        {
            return result;
        }
    }
    create_alone(db, org_id, f).await
}

/// A creation waiting for the SQLite writer.
#[derive(Debug)]
pub struct PendingCreate {
    org_id: i64,
    fields: JobFields,
    reply: oneshot::Sender<DbResult<Job>>,
}

pub(super) type CreateQueue = mpsc::UnboundedSender<PendingCreate>;

/// Most creations committed in one transaction.
const MAX_BATCH: usize = 64;

/// Commits the queued creations in batches of what is waiting (no added delay: a batch
/// is what queued while the previous one was being written).
async fn drain_creates(
    db: Db,
    pool: sqlx::SqlitePool,
    mut rx: mpsc::UnboundedReceiver<PendingCreate>,
) {
    while let Some(first) = rx.recv().await {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(p) => batch.push(p),
                Err(_) => break,
            }
        }
        match create_batch(&pool, &batch).await {
            Ok(results) => {
                for (p, r) in batch.into_iter().zip(results) {
                    let _ = p.reply.send(r);
                }
            }
            Err(_) => {
                // Rolled back as a whole: each creation on its own.
                for p in batch {
                    let r = create_alone(&db, p.org_id, &p.fields).await;
                    let _ = p.reply.send(r);
                }
            }
        }
    }
}

/// Inserts every creation of `batch` and commits once. A creation whose own insert fails
/// (which leaves nothing behind) gets its error; any other failure fails the batch.
async fn create_batch(
    pool: &sqlx::SqlitePool,
    batch: &[PendingCreate],
) -> DbResult<Vec<DbResult<Job>>> {
    let mut tx = Tx::Sqlite(pool.begin_with("BEGIN IMMEDIATE").await?);
    let mut results = Vec::with_capacity(batch.len());
    for p in batch {
        let mut attempt = 0;
        let inserted = loop {
            attempt += 1;
            match insert(&mut tx, p.org_id, &p.fields, &slug_for(&p.fields, attempt)).await {
                Err(e) if attempt < 6 && super::is_unique_violation(&e) => continue,
                other => break other,
            }
        };
        if let Ok(job) = &inserted {
            events::emit(&mut tx, p.org_id, "job.created", full_data(job)).await?;
        }
        results.push(inserted);
    }
    tx.commit().await?;
    Ok(results)
}

/// Creates a job in a transaction of its own.
async fn create_alone(db: &Db, org_id: i64, f: &JobFields) -> DbResult<Job> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        let mut tx = db.begin().await?;
        match insert(&mut tx, org_id, f, &slug_for(f, attempt)).await {
            Err(e) if attempt < 6 && super::is_unique_violation(&e) => continue,
            Err(e) => return Err(e),
            Ok(job) => {
                events::emit(&mut tx, org_id, "job.created", full_data(&job)).await?;
                tx.commit().await?;
                return Ok(job);
            }
        }
    }
}

/// Binds the writable fields of `f` in column order (title to status), after whatever
/// `q` already binds; shared by the insert and the update so their orders cannot drift.
macro_rules! bind_fields {
    ($q:expr, $f:expr) => {{
        let f: &JobFields = $f;
        $q.bind(&f.title)
            .bind(&f.description)
            .bind(&f.description_text)
            .bind(&f.company_name)
            .bind(&f.job_type)
            .bind(&f.location)
            .bind(f.location_restricted)
            .bind(f.is_remote)
            .bind(f.is_highlighted)
            .bind(f.is_sticky)
            .bind(&f.how_to_apply)
            .bind(&f.how_to_apply_method)
            .bind(f.category_id)
            .bind(&f.company_website)
            .bind(&f.company_logo_url)
            .bind(f.salary_min)
            .bind(f.salary_max)
            .bind(&f.salary_currency)
            .bind(&f.salary_period)
            .bind(&f.contact_email)
            .bind(f.expires_at)
            .bind(&f.status)
    }};
}

/// Inserts the job row (one statement: on failure nothing of it remains).
async fn insert(tx: &mut Tx, org_id: i64, f: &JobFields, slug: &str) -> DbResult<Job> {
    let now = Ts::now();
    let sql = format!(
        "INSERT INTO jobs (id, org_id, title, description, description_text, company_name, job_type, \
         location, location_restricted, is_remote, is_highlighted, is_sticky, how_to_apply, how_to_apply_method, \
         category_id, company_website, company_logo_url, salary_min, salary_max, salary_currency, salary_period, \
         contact_email, expires_at, status, slug, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, \
         $21, $22, $23, $24, $25, $26, $26) RETURNING {COLUMNS}"
    );
    dispatch_tx!(tx, t => {
        bind_fields!(
            sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(Uuid::now_v7()).bind(org_id),
            f
        )
        .bind(slug)
        .bind(now)
            .fetch_one(&mut **t)
            .await.map_err(crate::db::StoreError::from)
    })
}

/// The result of an update.
pub enum Updated<E> {
    NotFound,
    /// The merged fields failed the caller's check.
    Invalid(E),
    /// The job after the update, and the names of the fields that changed.
    Done(Box<Job>, Vec<&'static str>),
}

/// Updates a job: `apply` turns its current fields into the new ones (or fails, for checks
/// that need the stored values). Emits `job.updated` with the changed field names, and
/// the status events on a status move. A patch that changes nothing writes nothing.
pub async fn update<E>(
    db: &Db,
    org_id: i64,
    id: Uuid,
    apply: impl FnOnce(JobFields) -> Result<JobFields, E>,
) -> DbResult<Updated<E>> {
    let mut tx = db.begin().await?;
    let Some(current) = get_in(&mut tx, org_id, id, true).await? else {
        return Ok(Updated::NotFound);
    };
    let before = JobFields::of(&current);
    let after = match apply(before.clone()) {
        Ok(f) => f,
        Err(e) => return Ok(Updated::Invalid(e)),
    };
    let changed = before.changed(&after);
    if changed.is_empty() {
        return Ok(Updated::Done(Box::new(current), changed));
    }
    let f = &after;
    let sql = format!(
        "UPDATE jobs SET title = $3, description = $4, description_text = $5, company_name = $6, job_type = $7, \
         location = $8, location_restricted = $9, is_remote = $10, is_highlighted = $11, is_sticky = $12, \
         how_to_apply = $13, how_to_apply_method = $14, category_id = $15, company_website = $16, \
         company_logo_url = $17, salary_min = $18, salary_max = $19, salary_currency = $20, salary_period = $21, \
         contact_email = $22, expires_at = $23, status = $24, updated_at = $25 \
         WHERE org_id = $1 AND id = $2 RETURNING {COLUMNS}"
    );
    let job: Job = dispatch_tx!(&mut tx, t => {
        bind_fields!(
            sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).bind(id),
            f
        )
        .bind(Ts::now().max(current.updated_at))
            .fetch_one(&mut **t)
            .await?
    });
    let mut data = full_data(&job);
    data["changed"] = json!(changed);
    events::emit(&mut tx, org_id, "job.updated", data).await?;
    emit_status_events(&mut tx, org_id, &job, &current.status).await?;
    tx.commit().await?;
    Ok(Updated::Done(Box::new(job), changed))
}

/// Deletes a job (emitting `job.deleted`); `None` when there is none.
pub async fn delete(db: &Db, org_id: i64, id: Uuid) -> DbResult<Option<Job>> {
    let mut tx = db.begin().await?;
    let sql = format!("DELETE FROM jobs WHERE org_id = $1 AND id = $2 RETURNING {COLUMNS}");
    let job: Option<Job> = dispatch_tx!(&mut tx, t => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).bind(id).fetch_optional(&mut **t).await?
    });
    let Some(job) = job else {
        return Ok(None);
    };
    events::emit(&mut tx, org_id, "job.deleted", base_data(&job)).await?;
    tx.commit().await?;
    Ok(Some(job))
}

/// Moves every active job whose `expires_at` has passed to `expired`, each in its own
/// transaction with its events (`job.status_changed`, `job.expired`). The move is guarded
/// by the current status, so when several nodes run this at once a job moves, and its
/// events fire, once. Returns how many jobs moved.
pub async fn expire_due(db: &Db, now: Ts) -> DbResult<u64> {
    let mut moved = 0;
    loop {
        let due: Vec<(i64, Uuid)> = dispatch!(db.reader(), p => {
            sqlx::query_as(
                "SELECT org_id, id FROM jobs WHERE status = 'active' AND expires_at IS NOT NULL AND expires_at <= $1
                 ORDER BY expires_at LIMIT 200",
            )
            .bind(now)
            .fetch_all(p)
            .await?
        });
        let batch = due.len();
        for (org_id, id) in due {
            let mut tx = db.begin().await?;
            let sql = format!(
                "UPDATE jobs SET status = 'expired', updated_at = $3 WHERE org_id = $1 AND id = $2 \
                 AND status = 'active' AND expires_at <= $3 RETURNING {COLUMNS}"
            );
            let job: Option<Job> = dispatch_tx!(&mut tx, t => {
                sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).bind(id).bind(now).fetch_optional(&mut **t).await?
            });
            if let Some(job) = job {
                emit_status_events(&mut tx, org_id, &job, "active").await?;
                tx.commit().await?;
                moved += 1;
            }
        }
        if batch < 200 {
            return Ok(moved);
        }
    }
}

/// The filters of a job list, validated.
#[derive(Debug, Clone, Default)]
pub struct ListFilter {
    /// Words of the search, each matched as a word prefix.
    pub search_words: Vec<String>,
    pub job_types: Vec<String>,
    /// Lower-case substrings; any may match.
    pub locations: Vec<String>,
    pub categories: Vec<Uuid>,
    pub is_remote: Option<bool>,
    /// The statuses listed; `None` is every status.
    pub statuses: Option<Vec<String>>,
}

impl ListFilter {
    /// True when only statuses filter the list, so its total can be read from counters.
    fn counted(&self) -> bool {
        self.search_words.is_empty()
            && self.job_types.is_empty()
            && self.locations.is_empty()
            && self.categories.is_empty()
            && self.is_remote.is_none()
    }
}

/// Splits a search string into the words it matches: runs of letters and digits,
/// lower-cased, at most 16.
pub fn search_words(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .take(16)
        .collect()
}

enum Arg {
    Text(String),
    I64(i64),
    Bool(bool),
    Uuid(Uuid),
    Ts(Ts),
}

struct Sql {
    text: String,
    args: Vec<Arg>,
}

impl Sql {
    fn arg(&mut self, a: Arg) -> String {
        self.args.push(a);
        format!("${}", self.args.len())
    }
    fn list(&mut self, items: impl IntoIterator<Item = Arg>) -> String {
        let marks: Vec<String> = items.into_iter().map(|a| self.arg(a)).collect();
        marks.join(", ")
    }
}

macro_rules! bind_all {
    ($q:expr, $args:expr) => {{
        let mut q = $q;
        for a in $args {
            q = match a {
                Arg::Text(v) => q.bind(v),
                Arg::I64(v) => q.bind(*v),
                Arg::Bool(v) => q.bind(*v),
                Arg::Uuid(v) => q.bind(*v),
                Arg::Ts(v) => q.bind(*v),
            };
        }
        q
    }};
}

fn escape_like(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('%');
    for c in s.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('%');
    out
}

/// At most this many candidate jobs are examined to count the matches of a filtered list
/// or a search (the jobs of the listed statuses, or the search's word matches, newest
/// first). When there are more, the count is the number of matches among them: a lower
/// bound, reported with `total_items_exact: false`.
pub const COUNT_LIMIT: i64 = 10_000;

/// The number of jobs a list matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Total {
    pub items: i64,
    /// False when `items` is only a lower bound (see [`COUNT_LIMIT`]).
    pub exact: bool,
}

/// The WHERE clause of a list (parameters start at `$1`), without the search condition.
fn where_clause(org_id: i64, f: &ListFilter, now: Ts) -> Sql {
    let mut s = Sql {
        text: String::new(),
        args: Vec::new(),
    };
    let org = s.arg(Arg::I64(org_id));
    let mut conds = vec![format!("org_id = {org}")];
    if let Some(statuses) = &f.statuses {
        let marks = s.list(statuses.iter().map(|v| Arg::Text(v.clone())));
        conds.push(format!("status IN ({marks})"));
    }
    // An active job past its expiry is no longer live, even before the scheduler moves it.
    let now_mark = s.arg(Arg::Ts(now));
    conds.push(format!(
        "(status <> 'active' OR expires_at IS NULL OR expires_at > {now_mark})"
    ));
    s.text = conds.join(" AND ");
    s
}

/// The conditions of the filters other than organization, status and search, joined
/// with AND (`None` when there are none).
fn filter_conds(s: &mut Sql, f: &ListFilter) -> Option<String> {
    let mut conds = Vec::new();
    if !f.job_types.is_empty() {
        let marks = s.list(f.job_types.iter().map(|v| Arg::Text(v.clone())));
        conds.push(format!("job_type IN ({marks})"));
    }
    if !f.categories.is_empty() {
        let marks = s.list(f.categories.iter().map(|v| Arg::Uuid(*v)));
        conds.push(format!("category_id IN ({marks})"));
    }
    if let Some(r) = f.is_remote {
        let m = s.arg(Arg::Bool(r));
        conds.push(format!("is_remote = {m}"));
    }
    if !f.locations.is_empty() {
        let alts: Vec<String> = f
            .locations
            .iter()
            .map(|l| {
                let m = s.arg(Arg::Text(escape_like(l)));
                format!("lower(location) LIKE {m} ESCAPE '\\'")
            })
            .collect();
        conds.push(format!("({})", alts.join(" OR ")));
    }
    (!conds.is_empty()).then(|| conds.join(" AND "))
}

/// The search as a query of the backend's full-text index. Words are letters and digits
/// only, and on SQLite each is a quoted prefix phrase, so no input can form query syntax.
fn search_query(backend: Backend, words: &[String]) -> String {
    match backend {
        Backend::Sqlite => words
            .iter()
            .map(|w| format!("\"{}\"*", w.replace('"', "\"\"")))
            .collect::<Vec<_>>()
            .join(" "),
        Backend::Postgres => words
            .iter()
            .map(|w| format!("{w}:*"))
            .collect::<Vec<_>>()
            .join(" & "),
    }
}

/// A page of jobs and the number matching. Unfiltered lists are counted from the
/// counters; filtered lists and searches examine at most [`COUNT_LIMIT`] candidates.
pub async fn list(
    db: &Db,
    org_id: i64,
    f: &ListFilter,
    limit: i64,
    offset: i64,
    now: Ts,
) -> DbResult<(Vec<JobListItem>, Total)> {
    if f.counted() {
        let total = counted_total(db, org_id, f.statuses.as_deref(), now).await?;
        if offset >= total {
            return Ok((
                Vec::new(),
                Total {
                    items: total,
                    exact: true,
                },
            ));
        }
        let (rows, _) = page(db, org_id, f, now, limit, offset).await?;
        return Ok((
            rows,
            Total {
                items: total,
                exact: true,
            },
        ));
    }
    let (rows, more) = page(db, org_id, f, now, limit, offset).await?;
    let mut total = bounded_count(db, org_id, f, now).await?;
    // A lower bound is never below what the page itself shows.
    if !rows.is_empty() {
        total.items = total
            .items
            .max(offset + rows.len() as i64 + i64::from(more));
    }
    Ok((rows, total))
}

/// One page (and whether a job follows it): the page is chosen from an index, then only
/// its rows are read.
async fn page(
    db: &Db,
    org_id: i64,
    f: &ListFilter,
    now: Ts,
    limit: i64,
    offset: i64,
) -> DbResult<(Vec<JobListItem>, bool)> {
    let backend = db.backend();
    if backend == Backend::Sqlite && !f.search_words.is_empty() {
        return search_page_sqlite(db, org_id, f, now, limit, offset).await;
    }
    let mut w = where_clause(org_id, f, now);
    if let Some(c) = filter_conds(&mut w, f) {
        w.text = format!("{} AND {c}", w.text);
    }
    if !f.search_words.is_empty() {
        let m = w.arg(Arg::Text(search_query(backend, &f.search_words)));
        w.text = format!("{} AND search @@ to_tsquery('simple', {m})", w.text);
    }
    let key = match backend {
        Backend::Sqlite => "seq",
        Backend::Postgres => "id",
    };
    let order = "ORDER BY is_sticky DESC, created_at DESC, id DESC";
    let lim = w.arg(Arg::I64(limit + 1));
    let off = w.arg(Arg::I64(offset));
    let sql = format!(
        "SELECT {LIST_COLUMNS} FROM jobs WHERE {key} IN \
         (SELECT {key} FROM jobs WHERE {} {order} LIMIT {lim} OFFSET {off}) {order}",
        w.text
    );
    let mut rows: Vec<JobListItem> = dispatch!(db.reader(), p => {
        bind_all!(sqlx::query_as(sqlx::AssertSqlSafe(sql)), &w.args).fetch_all(p).await?
    });
    let more = rows.len() as i64 > limit;
    rows.truncate(limit as usize);
    Ok((rows, more))
}

/// A page of a search on SQLite: the sticky matches (few) by their own query, then the
/// others in the full-text index's own order (newest first), which stops after the page.
async fn search_page_sqlite(
    db: &Db,
    org_id: i64,
    f: &ListFilter,
    now: Ts,
    limit: i64,
    offset: i64,
) -> DbResult<(Vec<JobListItem>, bool)> {
    let mut w = where_clause(org_id, f, now);
    let conds = filter_conds(&mut w, f);
    let hint = if conds.is_none() {
        " INDEXED BY jobs_search_keys"
    } else {
        ""
    };
    if let Some(c) = conds {
        w.text = format!("{} AND {c}", w.text);
    }
    let m = w.arg(Arg::Text(search_query(Backend::Sqlite, &f.search_words)));
    // Sticky matches: from the index of the sticky jobs (few), newest first.
    let sql = format!(
        "SELECT j.seq FROM jobs_fts_sticky CROSS JOIN jobs j ON j.seq = jobs_fts_sticky.rowid \
         WHERE jobs_fts_sticky MATCH {m} AND {} AND j.is_sticky = 1 ORDER BY jobs_fts_sticky.rowid DESC",
        w.text
    );
    let sticky: Vec<i64> = dispatch!(db.reader(), p => {
        bind_all!(sqlx::query_scalar(sqlx::AssertSqlSafe(sql)), &w.args).fetch_all(p).await?
    });
    let mut seqs: Vec<i64> = sticky
        .iter()
        .skip(offset as usize)
        .take(limit as usize + 1)
        .copied()
        .collect();
    let want = limit + 1 - seqs.len() as i64;
    if want > 0 {
        let skip = (offset - sticky.len() as i64).max(0);
        let lim = w.arg(Arg::I64(want));
        let off = w.arg(Arg::I64(skip));
        // Walks the matches newest first and stops after the page.
        let sql = format!(
            "SELECT j.seq FROM jobs_fts CROSS JOIN jobs j{hint} ON j.seq = jobs_fts.rowid \
             WHERE jobs_fts MATCH {m} AND {} AND j.is_sticky = 0 \
             ORDER BY jobs_fts.rowid DESC LIMIT {lim} OFFSET {off}",
            w.text
        );
        let rest: Vec<i64> = dispatch!(db.reader(), p => {
            bind_all!(sqlx::query_scalar(sqlx::AssertSqlSafe(sql)), &w.args).fetch_all(p).await?
        });
        seqs.extend(rest);
    }
    let more = seqs.len() as i64 > limit;
    seqs.truncate(limit as usize);
    if seqs.is_empty() {
        return Ok((Vec::new(), more));
    }
    let marks: Vec<String> = (1..=seqs.len()).map(|i| format!("${i}")).collect();
    let sql = format!(
        "SELECT {LIST_COLUMNS} FROM jobs WHERE seq IN ({}) ORDER BY is_sticky DESC, seq DESC",
        marks.join(", ")
    );
    let rows: Vec<JobListItem> = dispatch!(db.reader(), p => {
        let mut q = sqlx::query_as(sqlx::AssertSqlSafe(sql));
        for s in &seqs {
            q = q.bind(*s);
        }
        q.fetch_all(p).await?
    });
    Ok((rows, more))
}

/// The earliest `expires_at` after `now` among the organization's active jobs: the next
/// moment its lists change without a write.
pub async fn next_expiry(db: &Db, org_id: i64, now: Ts) -> DbResult<Option<Ts>> {
    let hint = match db.backend() {
        Backend::Sqlite => " INDEXED BY jobs_overdue",
        Backend::Postgres => "",
    };
    let sql = format!(
        "SELECT MIN(expires_at) FROM jobs{hint} WHERE org_id = $1 AND status = 'active' \
         AND expires_at IS NOT NULL AND expires_at > $2"
    );
    dispatch!(db.reader(), p => {
        sqlx::query_scalar(sqlx::AssertSqlSafe(sql)).bind(org_id).bind(now).fetch_one(p).await.map_err(crate::db::StoreError::from)
    })
}

/// Counts the matches of a filtered list or a search among at most [`COUNT_LIMIT`]
/// candidates; exact when there are no more candidates than that.
async fn bounded_count(db: &Db, org_id: i64, f: &ListFilter, now: Ts) -> DbResult<Total> {
    let backend = db.backend();
    let mut w = where_clause(org_id, f, now);
    let conds = filter_conds(&mut w, f);
    let sql = if f.search_words.is_empty() {
        // Candidates: the live jobs of the statuses, from the list index alone.
        let lim = w.arg(Arg::I64(COUNT_LIMIT));
        let test = conds.unwrap_or_else(|| "TRUE".into());
        format!(
            "SELECT COUNT(*), COALESCE(SUM(CASE WHEN {test} THEN 1 ELSE 0 END), 0) FROM \
             (SELECT job_type, category_id, is_remote, location FROM jobs WHERE {} LIMIT {lim}) c",
            w.text
        )
    } else {
        let mut test = w.text.clone();
        if let Some(c) = &conds {
            test = format!("{test} AND {c}");
        }
        let m = w.arg(Arg::Text(search_query(backend, &f.search_words)));
        let lim = w.arg(Arg::I64(COUNT_LIMIT));
        match backend {
            // Candidates: the newest word matches of the full-text index.
            Backend::Sqlite => {
                let (hint, cols) = if conds.is_none() {
                    (
                        " INDEXED BY jobs_search_keys",
                        "j.org_id, j.status, j.expires_at",
                    )
                } else {
                    (
                        "",
                        "j.org_id, j.status, j.expires_at, j.job_type, j.category_id, j.is_remote, j.location",
                    )
                };
                format!(
                    "SELECT COUNT(*), COALESCE(SUM(CASE WHEN {test} THEN 1 ELSE 0 END), 0) FROM \
                     (SELECT {cols} FROM jobs_fts CROSS JOIN jobs j{hint} ON j.seq = jobs_fts.rowid \
                      WHERE jobs_fts MATCH {m} ORDER BY jobs_fts.rowid DESC LIMIT {lim}) c"
                )
            }
            // Candidates: the organization's word matches, from the GIN index.
            Backend::Postgres => format!(
                "SELECT COUNT(*), COALESCE(SUM(CASE WHEN {test} THEN 1 ELSE 0 END), 0) FROM \
                 (SELECT org_id, status, expires_at, job_type, category_id, is_remote, location FROM jobs \
                  WHERE org_id = $1 AND search @@ to_tsquery('simple', {m}) LIMIT {lim}) c"
            ),
        }
    };
    let (candidates, matches): (i64, i64) = dispatch!(db.reader(), p => {
        bind_all!(sqlx::query_as(sqlx::AssertSqlSafe(sql)), &w.args).fetch_one(p).await?
    });
    Ok(Total {
        items: matches,
        exact: candidates < COUNT_LIMIT,
    })
}

/// The number of jobs with these statuses, from the per-organization counters, less the
/// active jobs already past `expires_at` that the scheduler has not moved yet (one
/// statement).
async fn counted_total(
    db: &Db,
    org_id: i64,
    statuses: Option<&[String]>,
    now: Ts,
) -> DbResult<i64> {
    let mut s = Sql {
        text: String::new(),
        args: Vec::new(),
    };
    let org = s.arg(Arg::I64(org_id));
    let wanted = |st: &str| statuses.is_none_or(|l| l.iter().any(|x| x == st));
    let listed: Vec<&str> = STATUSES.iter().copied().filter(|st| wanted(st)).collect();
    if listed.is_empty() {
        return Ok(0);
    }
    let marks = s.list(listed.iter().map(|v| Arg::Text(v.to_string())));
    let mut sql = format!(
        "SELECT CAST(COALESCE((SELECT SUM(n) FROM job_counts WHERE org_id = {org} AND status IN ({marks})), 0) AS BIGINT)"
    );
    if wanted("active") {
        // Without statistics SQLite would rather walk every active job of the list index.
        let hint = match db.backend() {
            Backend::Sqlite => " INDEXED BY jobs_overdue",
            Backend::Postgres => "",
        };
        let now = s.arg(Arg::Ts(now));
        sql.push_str(&format!(
            " - (SELECT COUNT(*) FROM jobs{hint} WHERE status = 'active' AND expires_at IS NOT NULL \
             AND expires_at <= {now} AND org_id = {org})"
        ));
    }
    let total: i64 = dispatch!(db.reader(), p => {
        bind_all!(sqlx::query_scalar(sqlx::AssertSqlSafe(sql)), &s.args).fetch_one(p).await?
    });
    Ok(total.max(0))
}
