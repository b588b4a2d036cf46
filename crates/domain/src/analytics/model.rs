//! Analytics: the closed sets (event types, periods), the events body, the queries of the
//! reports, the window a report covers, and the figures reported.

use chrono::{Months, NaiveDate};
use serde::{Serialize, Serializer};
use serde_json::Value;
use utoipa::{
    PartialSchema, ToSchema,
    openapi::{
        ArrayBuilder, KnownFormat, ObjectBuilder, Ref, RefOr, SchemaFormat,
        schema::{Schema, Type},
    },
};

use crate::{
    JobId, Ts,
    kind::{Check, Enum, Id, Instant, Kind, Refs, Text},
    query,
    query::{QDate, QEnum, QId},
    request, text_enum,
};

/// Events accepted in one request.
pub const MAX_EVENTS: usize = 1000;
/// Days of history a period or range may reach back.
pub const MAX_RANGE_DAYS: i64 = 400;
/// Job ids one per-job report may ask for.
pub const MAX_JOBS: usize = 100;

text_enum!(
    /// What an event records: a job's page viewed, a click on a job's apply link, or any
    /// other page viewed.
    EventType { JobView = "job_view", ApplyClick = "apply_click", PageView = "page_view" }
);

text_enum!(
    /// A reporting period ending today (UTC): the last 7 or 30 days, or 6 or 12 months.
    Period { Days7 = "7d", Days30 = "30d", Months6 = "6mo", Months12 = "12mo" }
);

text_enum!(
    /// What a report covers: the period asked for, or `custom` for `from` and `to`.
    ReportPeriod {
        Days7 = "7d",
        Days30 = "30d",
        Months6 = "6mo",
        Months12 = "12mo",
        Custom = "custom",
    }
);

impl Period {
    /// The first day of the period that ends `today`, inclusive: `30d` is today and the 29
    /// days before it; `6mo` starts the day after the same date six months back.
    pub fn first_day(self, today: NaiveDate) -> NaiveDate {
        let months_back = |n| {
            today
                .checked_sub_months(Months::new(n))
                .map(|d| d.succ_opt().unwrap_or(d))
                .unwrap_or(today)
        };
        match self {
            Period::Days7 => today - chrono::Duration::days(6),
            Period::Days30 => today - chrono::Duration::days(29),
            Period::Months6 => months_back(6),
            Period::Months12 => months_back(12),
        }
    }

    /// The window of this period ending `today`.
    pub fn window(self, today: NaiveDate) -> Window {
        let period = match self {
            Period::Days7 => ReportPeriod::Days7,
            Period::Days30 => ReportPeriod::Days30,
            Period::Months6 => ReportPeriod::Months6,
            Period::Months12 => ReportPeriod::Months12,
        };
        Window {
            period,
            from: self.first_day(today),
            to: today,
        }
    }
}

/// The days a report covers: `from` to `to`, inclusive, in UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub period: ReportPeriod,
    pub from: NaiveDate,
    pub to: NaiveDate,
}

impl Window {
    /// The instants that bound the window: the start of `from`, the start of the day
    /// after `to`.
    pub fn bounds(&self) -> (Ts, Ts) {
        let start = |d: NaiveDate| Ts::from_datetime(d.and_time(chrono::NaiveTime::MIN).and_utc());
        (
            start(self.from),
            start(self.to).plus(chrono::Duration::days(1)),
        )
    }

    /// Every day of the window, oldest first.
    pub fn days(&self) -> impl Iterator<Item = NaiveDate> + use<> {
        let to = self.to;
        self.from.iter_days().take_while(move |d| *d <= to)
    }
}

/// The events of `POST /analytics/events`: 1 to [`MAX_EVENTS`] objects, each read as an
/// [`EventIn`] (the operation reads them one by one, naming each bad field by its
/// position).
pub struct EventList;

impl Kind for EventList {
    type Value = Vec<Value>;
    fn parse(v: &Value) -> Check<Vec<Value>> {
        match v.as_array() {
            Some(a) if a.is_empty() => {
                Err(("too_short", "At least one event is required.".to_string()))
            }
            Some(a) if a.len() > MAX_EVENTS => Err((
                "too_long",
                format!("At most {MAX_EVENTS} events per request."),
            )),
            Some(a) => Ok(a.clone()),
            None => Err(("invalid_type", "Must be an array of events.".to_string())),
        }
    }
    fn schema() -> RefOr<Schema> {
        ArrayBuilder::new()
            .items(Ref::from_schema_name("EventIn"))
            .min_items(Some(1))
            .max_items(Some(MAX_EVENTS))
            .into()
    }
    fn refs(out: &mut Refs) {
        out.push(("EventIn".into(), <EventIn as PartialSchema>::schema()));
        <EventIn as ToSchema>::schemas(out);
    }
}

/// When an event happened: an RFC 3339 date-time (see [`Instant`]) at most 5 minutes
/// ahead of now and [`MAX_RANGE_DAYS`] days back. The reader checks the form; the range
/// is checked against the time of the database the event is recorded in
/// ([`check_recent`]).
pub struct RecentInstant;

impl Kind for RecentInstant {
    type Value = Ts;
    fn parse(v: &Value) -> Check<Ts> {
        Instant::parse(v)
    }
    fn schema() -> RefOr<Schema> {
        Instant::schema()
    }
}

/// `t` when it is at most 5 minutes ahead of `now` and [`MAX_RANGE_DAYS`] days back: the
/// range of [`RecentInstant`].
pub fn check_recent(t: Ts, now: Ts) -> Check<Ts> {
    if t > now.plus(chrono::Duration::minutes(5)) {
        Err(("out_of_range", "Must not be in the future.".to_string()))
    } else if t < now.plus(chrono::Duration::days(-MAX_RANGE_DAYS)) {
        Err((
            "out_of_range",
            format!("Must be within the last {MAX_RANGE_DAYS} days."),
        ))
    } else {
        Ok(t)
    }
}

request! {
    /// Body of `POST /analytics/events`.
    pub struct EventsIn {
        /// 1 to 1,000 events.
        pub events: required EventList,
    }
}

request! {
    /// One analytics event.
    pub struct EventIn {
        #[json = "type"]
        pub kind: required Enum<EventType>,
        /// Required for `job_view` and `apply_click`: a job of the organization.
        pub job_id: optional Id<JobId>,
        /// The page viewed. Accepted; this version keeps daily counts only.
        pub path: optional Text<0, 2048>,
        /// Accepted; this version keeps daily counts only.
        pub referrer: optional Text<0, 2048>,
        /// A stable id of the visitor chosen by the caller. Without it the visitor is a
        /// daily-salted hash of the client address and user agent; addresses are never
        /// stored.
        pub visitor_id: optional Text<1, 200>,
        /// When it happened (default: now); at most 5 minutes ahead and 400 days back.
        pub occurred_at: optional RecentInstant,
    }
}

/// Who sent events without a `visitor_id`: what their visitor hash is made of.
#[derive(Debug, Clone, Default)]
pub struct Client {
    /// The client's address, when known.
    pub address: Option<std::net::IpAddr>,
    /// The `User-Agent` sent, or empty.
    pub user_agent: String,
}

/// One event, validated and reduced to what is kept.
#[derive(Debug, Clone)]
pub struct Hit {
    pub kind: EventType,
    pub job_id: Option<JobId>,
    /// The UTC day it happened.
    pub day: NaiveDate,
    /// The visitor's hash.
    pub visitor: [u8; 16],
}

query! {
    /// Query of `GET /analytics`: a period, or a range of days.
    pub struct SiteQuery {
        /// Default `30d`, ending today (UTC).
        pub period: QEnum<Period> = optional,
        /// First day (with `to`, instead of `period`), from the year 2000.
        pub from: QDate = optional,
        /// Last day, inclusive (with `from`); at most 400 days after `from`, up to the year
        /// 9000.
        pub to: QDate = optional,
    }
}

query! {
    /// Query of `GET /analytics/jobs`.
    pub struct JobsQuery {
        /// Job ids of the organization (a repeated id counts once).
        #[param = "jobIds"]
        pub job_ids: QId<JobId> = required_list(MAX_JOBS),
        /// Default `30d`, ending today (UTC).
        pub period: QEnum<Period> = optional,
    }
}

/// Distinct visitors over a window: counted, or estimated from the daily sketches.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Visitors {
    pub count: i64,
    /// False when `count` is an estimate.
    pub exact: bool,
}

/// Site figures of one day.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub struct SiteDay {
    pub date: NaiveDate,
    /// Distinct visitors of the day (always exact).
    pub visitors: i64,
    pub pageviews: i64,
    pub job_views: i64,
    pub apply_clicks: i64,
    pub applications: i64,
}

/// The site report of a window.
#[derive(Debug, Clone)]
pub struct SiteReport {
    pub window: Window,
    /// Distinct visitors over the whole window.
    pub visitors: Visitors,
    pub pageviews: i64,
    pub job_views: i64,
    pub apply_clicks: i64,
    pub applications: i64,
    /// Jobs created in the window.
    pub jobs_posted: i64,
    /// Members created in the window.
    pub members_joined: i64,
    /// One entry per day of the window, oldest first.
    pub timeseries: Vec<SiteDay>,
}

/// One figure per job, in the order the jobs were asked for; written as an object keyed
/// by job id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PerJob(pub Vec<(JobId, i64)>);

impl Serialize for PerJob {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(id, n)| (id, n)))
    }
}

impl PartialSchema for PerJob {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::Object)
            .description(Some("One entry per job id asked for, keyed by the id."))
            .property_names(Some(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .format(Some(SchemaFormat::KnownFormat(KnownFormat::Uuid))),
            ))
            .additional_properties(Some(
                ObjectBuilder::new()
                    .schema_type(Type::Integer)
                    .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
                    .minimum(Some(0)),
            ))
            .into()
    }
}

impl ToSchema for PerJob {}

/// The per-job report of a period.
#[derive(Debug, Clone)]
pub struct JobReport {
    pub period: Period,
    /// The distinct job ids asked for.
    pub total_jobs: usize,
    pub visitors: PerJob,
    pub views: PerJob,
    pub apply_clicks: PerJob,
    pub applications: PerJob,
    /// False when the `visitors` figures are estimates.
    pub visitors_exact: bool,
}
