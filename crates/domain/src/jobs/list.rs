//! Listing jobs: the query (`GET /jobs` and the board's `/` take the same parameters),
//! validated into a [`ListFilter`], and the page it selects.

use utoipa::openapi::{
    ObjectBuilder, RefOr,
    schema::{Schema, Type},
};
use uuid::Uuid;

use super::{
    model::{JobListItem, JobStatus, JobType, ListFilter, Total, search_words},
    search,
};
use crate::{
    CategoryId, Error, OrgId, QueryInput, Result, Ts,
    db::{Db, Owned, owned_ids},
    kind::Check,
    query,
    query::{QAmount, QBool, QCountry, QEnum, QId, QInt, QText, QueryKind},
};

/// A status to list, or `all`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusChoice {
    One(JobStatus),
    All,
}

impl QueryKind for StatusChoice {
    type Value = StatusChoice;
    fn parse(s: &str) -> Check<StatusChoice> {
        if s == "all" {
            return Ok(StatusChoice::All);
        }
        JobStatus::parse(s).map(StatusChoice::One).ok_or_else(|| {
            (
                "invalid_value",
                format!(
                    "Unknown status {s:?}; send `all` or comma-separated statuses among: {}.",
                    JobStatus::ALL.join(", ")
                ),
            )
        })
    }
    fn schema() -> RefOr<Schema> {
        let mut values: Vec<&str> = JobStatus::ALL.to_vec();
        values.push("all");
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(values))
            .into()
    }
}

query! {
    /// Query of `GET /jobs` (and of the board's `/`).
    pub struct JobListQuery {
        /// Words matched, case-insensitively, accent-insensitively for Latin letters and
        /// each as a word prefix, against the title, the description's text and the
        /// company name; every word must match.
        pub search: QText<200> = optional,
        /// Job types (any of).
        pub job_types: QEnum<JobType> = list(6),
        /// Locations; a job matches when its location contains any of them
        /// (case-insensitive).
        pub locations: QText<255> = list(50),
        /// Category ids of the organization (any of).
        pub categories: QId<CategoryId> = list(100),
        /// `true`: only remote jobs; `false`: only jobs that are not remote.
        pub is_remote: QBool = optional,
        /// Only jobs whose salary range reaches this amount (its `salary_max`, or its
        /// `salary_min` when it has no maximum, is at least this), compared in the job's
        /// own currency and period; jobs without a salary are left out.
        pub salary_min: QAmount = optional,
        /// Only jobs in this country (ISO 3166-1 alpha-2, any case) and remote jobs that
        /// may be done from it (`remote_countries`).
        pub country: QCountry = optional,
        /// Statuses, or `all`. Default `active`. Active jobs past `expires_at` are never
        /// listed.
        pub status: StatusChoice = list(4),
        /// Page number, from 1.
        pub page: QInt<1, 10_000_000> = default(1),
        /// Jobs per page, 1 to 100.
        pub per_page: QInt<1, 100> = default(20),
    }
}

/// The list query, validated: the filter, the page, and what `meta.filters` echoes.
#[derive(Debug, Clone, PartialEq)]
pub struct ListQuery {
    pub filter: ListFilter,
    /// The search as sent (trimmed), when any.
    pub search: Option<String>,
    /// The locations as sent.
    pub locations: Vec<String>,
    pub page: i64,
    pub per_page: i64,
}

impl ListQuery {
    /// Reads the list parameters from `q`, recording every problem.
    pub fn read(q: &mut QueryInput) -> ListQuery {
        let raw = JobListQuery::read(q);
        let search = raw
            .search
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty());
        let mut filter = ListFilter {
            search_words: search.as_deref().map(search_words).unwrap_or_default(),
            job_types: raw.job_types,
            locations: raw.locations.iter().map(|l| l.to_lowercase()).collect(),
            categories: raw.categories,
            is_remote: raw.is_remote,
            salary_min: raw.salary_min,
            country: raw.country,
            statuses: None,
        };
        filter.statuses = match raw.status.as_slice() {
            [] => Some(vec![JobStatus::Active]),
            [StatusChoice::All] => None,
            many => {
                let mut unique: Vec<JobStatus> = Vec::with_capacity(many.len());
                for s in many {
                    match s {
                        StatusChoice::One(s) if !unique.contains(s) => unique.push(*s),
                        StatusChoice::One(_) => {}
                        StatusChoice::All => {
                            q.error(
                                "status",
                                "invalid_value",
                                "Send `all` alone, or comma-separated statuses.",
                            );
                        }
                    }
                }
                Some(unique)
            }
        };
        ListQuery {
            filter,
            search,
            locations: raw.locations,
            page: raw.page,
            per_page: raw.per_page,
        }
    }

    /// The statuses listed (all of them for `status=all`).
    pub fn statuses(&self) -> Vec<JobStatus> {
        match &self.filter.statuses {
            Some(s) => s.clone(),
            None => JobStatus::ALL
                .iter()
                .filter_map(|s| JobStatus::parse(s))
                .collect(),
        }
    }
}

/// A page of jobs and how many the list matches.
#[derive(Debug, Clone)]
pub struct ListPage {
    pub rows: Vec<JobListItem>,
    pub total: Total,
}

impl ListPage {
    /// The number of pages (0 when there are no items).
    pub fn total_pages(&self, per_page: i64) -> i64 {
        (self.total.items + per_page - 1) / per_page
    }
}

/// The page `q` selects of the organization's jobs at `now`. A category that is not one
/// of the organization's is a `categories` error.
pub async fn list(db: &Db, org_id: OrgId, q: &ListQuery, now: Ts) -> Result<ListPage> {
    list_seen(db, org_id, q, now, None).await
}

/// [`list`] for a caller that has read the organization's job list version (`seen`, as
/// the API's key check does): a search needs no read of changes when the node's index has
/// applied that version.
pub async fn list_seen(
    db: &Db,
    org_id: OrgId,
    q: &ListQuery,
    now: Ts,
    seen: Option<i64>,
) -> Result<ListPage> {
    if !q.filter.categories.is_empty() {
        let asked: Vec<Uuid> = q.filter.categories.iter().map(|c| c.0).collect();
        let found: Vec<Uuid> = owned_ids(db, Owned::Categories, org_id, &asked).await?;
        if let Some(bad) = asked.iter().find(|c| !found.contains(c)) {
            return Err(Error::field(
                "categories",
                "not_found",
                format!("{bad} is not a category of this organization."),
            ));
        }
    }
    let offset = (q.page - 1) * q.per_page;
    let (rows, total) =
        search::list(db, org_id, &q.filter, (q.per_page, offset), now, seen).await?;
    Ok(ListPage { rows, total })
}

/// The earliest `expires_at` after `now` among the organization's active jobs: the next
/// moment its lists change without a write.
pub async fn next_expiry(db: &Db, org_id: OrgId, now: Ts) -> Result<Option<Ts>> {
    Ok(search::next_expiry(db, org_id, now).await?)
}
