//! Job alerts: their closed sets, the stored row, the list query, and the board filters
//! an alert keeps.

use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::{
    Error, FieldError, OrgId, QueryInput, Ts,
    jobs::{ListFilter, ListQuery},
    query,
    query::{QEnum, QInt, QText},
    text_enum,
};

text_enum!(
    /// How often an alert mails: `instant` (within a minute of a job going live), `daily`
    /// or `weekly` (Mondays), at the configured hour (UTC).
    Frequency { Instant = "instant", Daily = "daily", Weekly = "weekly" }
);

text_enum!(
    /// Where an alert is: `pending` until its confirmation link is opened (deleted after
    /// 7 days), `active`, or `unsubscribed`.
    AlertStatus { Pending = "pending", Active = "active", Unsubscribed = "unsubscribed" }
);

/// An alert as the API returns it.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct Alert {
    pub id: Uuid,
    pub email: String,
    pub frequency: Frequency,
    /// The board's filters, as the query string of `/` and `GET /api/jobs` (`search`,
    /// `job_types`, `locations`, `categories`, `is_remote`; empty: every live job).
    pub query: String,
    pub status: AlertStatus,
    pub created_at: Ts,
    pub confirmed_at: Option<Ts>,
    pub last_sent_at: Option<Ts>,
    /// Why the latest mail of this alert could not be queued (its pass went on with the
    /// other alerts); `null` once a later mail is queued.
    pub last_error: Option<String>,
    /// When that happened.
    pub last_error_at: Option<Ts>,
    #[serde(skip)]
    #[schema(ignore)]
    pub org_id: OrgId,
    /// The last entry of the live-jobs log this alert was matched against.
    #[serde(skip)]
    #[schema(ignore)]
    pub cursor: i64,
    #[serde(skip)]
    #[schema(ignore)]
    pub last_run_at: Option<Ts>,
}

query! {
    /// Query of `GET /alerts` and `GET /alerts.csv`.
    pub struct AlertListQuery {
        /// Only the alerts of this address (compared ignoring the case of ASCII letters).
        pub email: QText<254> = optional,
        /// Only alerts with this status.
        pub status: QEnum<AlertStatus> = optional,
        /// Page number, from 1.
        pub page: QInt<1, 1_000_000> = default(1),
        /// Alerts per page, 1 to 100 (the CSV export ignores paging).
        pub per_page: QInt<1, 100> = default(20),
    }
}

/// A page of alerts, newest first, and how many the list matches.
#[derive(Debug, Clone)]
pub struct AlertPage {
    pub rows: Vec<Alert>,
    pub total: i64,
}

/// The filter parameters an alert keeps, in the order they are written.
const FILTERS: [&str; 5] = [
    "search",
    "job_types",
    "locations",
    "categories",
    "is_remote",
];

/// An alert's filters: checked as `GET /api/jobs` checks them (only the filters, never
/// the status or the paging), and written back in one canonical form, so that the same
/// filters are one alert.
pub fn canonical_query(raw: &str) -> Result<(String, ListFilter), Error> {
    let mut q = QueryInput::parse(Some(raw));
    let mut kept: Vec<(String, String)> = Vec::new();
    for name in FILTERS {
        let joined = if name == "search" {
            q.take(name)
                .map(|v| v.trim().to_string())
                .unwrap_or_default()
        } else {
            q.list(name).join(",")
        };
        if !joined.is_empty() {
            kept.push((name.to_string(), joined));
        }
    }
    q.finish().map_err(|e| match e {
        Error::Invalid(fields) => Error::Invalid(
            fields
                .into_iter()
                .map(|f| FieldError::new("query", f.code, format!("{}: {}", f.field, f.message)))
                .collect(),
        ),
        other => other,
    })?;
    let canonical = serde_urlencoded::to_string(&kept).unwrap_or_default();
    let mut check = QueryInput::parse(Some(&canonical));
    let lq = ListQuery::read(&mut check);
    check.finish().map_err(|e| match e {
        Error::Invalid(fields) => Error::Invalid(
            fields
                .into_iter()
                .map(|f| FieldError::new("query", f.code, format!("{}: {}", f.field, f.message)))
                .collect(),
        ),
        other => other,
    })?;
    Ok((canonical, lq.filter))
}

/// The first moment at or before `now` at which alerts of `f` are due: now for instant;
/// today at `hour` (or yesterday's when it has not come yet) for daily; the latest Monday
/// at `hour` for weekly.
pub fn boundary(f: Frequency, now: Ts, hour: u32) -> Ts {
    use chrono::{Datelike, Duration, NaiveTime};
    if f == Frequency::Instant {
        return now;
    }
    let at = |d: chrono::NaiveDate| {
        Ts::from_datetime(
            d.and_time(NaiveTime::from_hms_opt(hour, 0, 0).unwrap_or(NaiveTime::MIN))
                .and_utc(),
        )
    };
    let today = now.0.date_naive();
    let mut day = today;
    if f == Frequency::Weekly {
        day = today - Duration::days(i64::from(today.weekday().num_days_from_monday()));
    }
    let mut b = at(day);
    if b > now {
        b = at(day - Duration::days(if f == Frequency::Weekly { 7 } else { 1 }));
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Ts {
        Ts::parse(s).unwrap()
    }

    #[test]
    fn boundaries() {
        // 2026-11-24 is a Tuesday.
        let now = ts("2026-11-24T09:30:00Z");
        assert_eq!(
            boundary(Frequency::Daily, now, 7),
            ts("2026-11-24T07:00:00Z")
        );
        assert_eq!(
            boundary(Frequency::Daily, now, 10),
            ts("2026-11-23T10:00:00Z")
        );
        assert_eq!(
            boundary(Frequency::Weekly, now, 7),
            ts("2026-11-23T07:00:00Z")
        );
        assert_eq!(
            boundary(Frequency::Weekly, ts("2026-11-23T06:00:00Z"), 7),
            ts("2026-11-16T07:00:00Z")
        );
        assert_eq!(boundary(Frequency::Instant, now, 7), now);
    }

    #[test]
    fn queries_are_canonical() {
        let (a, f) =
            canonical_query("locations=Berlin,%20Paris&search=%20rust%20&is_remote=true").unwrap();
        assert_eq!(a, "search=rust&locations=Berlin%2CParis&is_remote=true");
        assert_eq!(f.search_words, ["rust"]);
        let (b, _) = canonical_query("is_remote=true&search=rust&locations=Berlin,Paris").unwrap();
        assert_eq!(a, b);
        assert_eq!(canonical_query("").unwrap().0, "");
        for bad in [
            "status=all",
            "page=2",
            "job_types=astronaut",
            "is_remote=maybe",
        ] {
            assert!(canonical_query(bad).is_err(), "{bad}");
        }
    }
}
