//! The jobs' side of the in-memory search index ([`jobboard_search::index`], which knows
//! no resource): the row an index reads a job from, the names of the statuses and job
//! types it keeps, and a [`ListFilter`] asked as its [`Query`].

use jobboard_search::index::{Doc, Names, OrgIndex, Query};
use uuid::Uuid;

use super::model::{JobStatus, JobType, ListFilter, Total};
use crate::{Countries, JobId, Ts};

/// A job as the index reads it from the database.
#[derive(Debug, sqlx::FromRow)]
pub(super) struct DocRow {
    pub id: Uuid,
    pub created_at: Ts,
    pub status: String,
    pub is_sticky: bool,
    pub is_remote: bool,
    pub job_type: Option<String>,
    pub category_id: Option<Uuid>,
    pub location: Option<String>,
    pub country: Option<String>,
    pub remote_countries: Option<Countries>,
    pub salary_min: Option<f64>,
    pub salary_max: Option<f64>,
    pub expires_at: Option<Ts>,
    pub title: String,
    pub company_name: String,
    pub description_text: String,
}

impl DocRow {
    /// The columns of [`DocRow`], for a `SELECT` from `jobs` (aliased `j`).
    pub const COLUMNS: &'static str = "j.id, j.created_at, j.status, j.is_sticky, j.is_remote, \
        j.job_type, j.category_id, j.location, j.country, j.remote_countries, j.salary_min, \
        j.salary_max, j.expires_at, j.title, j.company_name, j.description_text";
}

/// The country codes the `country` filter finds a job under: its country, and for a remote
/// job the countries it may be done from (as the SQL filter says, `search.rs`).
pub(super) fn countries_of(
    country: Option<&str>,
    is_remote: bool,
    remote: Option<&Countries>,
) -> Vec<String> {
    let mut out: Vec<String> = country.map(str::to_string).into_iter().collect();
    if is_remote && let Some(r) = remote {
        out.extend(r.0.iter().cloned());
    }
    out
}

/// The amount the `salary_min` filter compares with: the top of the range, else its
/// bottom.
pub(super) fn salary_of(min: Option<f64>, max: Option<f64>) -> Option<f64> {
    max.or(min)
}

impl From<DocRow> for Doc {
    fn from(r: DocRow) -> Doc {
        Doc {
            id: r.id,
            created_at: r.created_at,
            status: r.status,
            is_sticky: r.is_sticky,
            is_remote: r.is_remote,
            job_type: r.job_type,
            category_id: r.category_id,
            location: r.location,
            countries: countries_of(
                r.country.as_deref(),
                r.is_remote,
                r.remote_countries.as_ref(),
            ),
            salary: salary_of(r.salary_min, r.salary_max),
            expires_at: r.expires_at,
            title: r.title,
            company_name: r.company_name,
            description_text: r.description_text,
        }
    }
}

// An index names at most 7 statuses and 7 job types (three bits each per job).
const _: () = assert!(JobStatus::ALL.len() <= 7 && JobType::ALL.len() <= 7);

/// What the index names: every [`JobStatus`] and [`JobType`]; active jobs leave lists at
/// their expiry.
fn names() -> Names {
    Names {
        statuses: JobStatus::ALL,
        job_types: JobType::ALL,
        expiring: JobStatus::Active.as_str(),
    }
}

/// An empty index of an organization's jobs.
pub(super) fn new_index() -> OrgIndex {
    OrgIndex::new(names())
}

/// What a list found: the ids of the page's jobs in list order, and the exact total.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Found {
    pub ids: Vec<JobId>,
    pub total: Total,
}

/// The page `[offset, offset + limit)` of the list `f` at `now` from `index`, and its
/// total.
pub(super) fn find(index: &OrgIndex, f: &ListFilter, limit: i64, offset: i64, now: Ts) -> Found {
    let statuses: Option<Vec<&str>> = f
        .statuses
        .as_ref()
        .map(|l| l.iter().map(|s| s.as_str()).collect());
    let job_types: Vec<&str> = f.job_types.iter().map(|t| t.as_str()).collect();
    let categories: Vec<Uuid> = f.categories.iter().map(|c| c.0).collect();
    let q = Query {
        statuses: statuses.as_deref(),
        job_types: &job_types,
        locations: &f.locations,
        categories: &categories,
        remote: f.is_remote,
        country: f.country.as_deref(),
        salary_min: f.salary_min,
        words: &f.search_words,
        limit,
        offset,
    };
    let found = index.find(&q, now);
    Found {
        ids: found.ids.into_iter().map(JobId).collect(),
        total: Total { items: found.total },
    }
}

#[cfg(test)]
mod tests {
    use jobboard_search::index::Doc;
    use uuid::Uuid;

    use super::{DocRow, find, new_index};
    use crate::{
        Countries, Ts,
        jobs::model::{JobStatus, JobType, ListFilter},
    };

    fn row(status: JobStatus, job_type: JobType, created: i64, title: &str) -> DocRow {
        DocRow {
            id: Uuid::new_v4(),
            created_at: Ts::from_micros(created),
            status: status.as_str().into(),
            is_sticky: false,
            is_remote: created % 2 == 0,
            job_type: Some(job_type.as_str().into()),
            category_id: None,
            location: Some("Berlin".into()),
            country: Some("DE".into()),
            remote_countries: Some(Countries(vec!["AT".into()])),
            salary_min: Some(created as f64 * 10.0),
            salary_max: None,
            expires_at: Some(Ts::from_micros(100)),
            title: title.into(),
            company_name: "Acme".into(),
            description_text: String::new(),
        }
    }

    /// Every status and job type the service has is named, and a filter reaches the
    /// index as it was asked.
    #[test]
    fn filters_reach_the_index() {
        let mut index = new_index();
        let rows = [
            row(JobStatus::Active, JobType::Contract, 1, "Night nurse"),
            row(JobStatus::Draft, JobType::Casual, 2, "Nurse"),
            row(JobStatus::Pending, JobType::FullTime, 3, "Chef"),
            row(JobStatus::Expired, JobType::Temporary, 4, "Café chef"),
        ];
        let ids: Vec<crate::JobId> = rows.iter().map(|r| crate::JobId(r.id)).collect();
        for r in rows {
            index.put(&Doc::from(r), true).unwrap();
        }
        let list = |f: &ListFilter, now: i64| {
            let found = find(&index, f, 10, 0, Ts::from_micros(now));
            assert_eq!(found.total.items, found.ids.len() as i64);
            found.ids
        };
        let all = ListFilter::default();
        assert_eq!(list(&all, 0), [ids[3], ids[2], ids[1], ids[0]]);
        // Active jobs leave lists at their expiry; others stay.
        assert_eq!(list(&all, 100), [ids[3], ids[2], ids[1]]);
        let f = ListFilter {
            statuses: Some(vec![JobStatus::Active, JobStatus::Draft]),
            search_words: vec!["NURSE".into()],
            ..ListFilter::default()
        };
        assert_eq!(list(&f, 0), [ids[1], ids[0]]);
        let f = ListFilter {
            job_types: vec![JobType::Temporary, JobType::FullTime],
            search_words: vec!["cafe".into()],
            ..ListFilter::default()
        };
        assert_eq!(list(&f, 0), [ids[3]]);
        let f = ListFilter {
            locations: vec!["berl".into()],
            is_remote: Some(true),
            ..ListFilter::default()
        };
        assert_eq!(list(&f, 0), [ids[3], ids[1]]);
        let f = ListFilter {
            locations: vec!["paris".into()],
            ..ListFilter::default()
        };
        assert!(list(&f, 0).is_empty());
        // Country: the job's own, and a remote job's remote countries; salary: reaches.
        let f = ListFilter {
            country: Some("AT".into()),
            ..ListFilter::default()
        };
        assert_eq!(list(&f, 0), [ids[3], ids[1]]);
        let f = ListFilter {
            country: Some("DE".into()),
            salary_min: Some(25.0),
            ..ListFilter::default()
        };
        assert_eq!(list(&f, 0), [ids[3], ids[2]]);
        let f = ListFilter {
            country: Some("FR".into()),
            ..ListFilter::default()
        };
        assert!(list(&f, 0).is_empty());
    }
}
