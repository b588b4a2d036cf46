//! The structured data of a job page: a schema.org `JobPosting` with every property
//! search engines read that a job can fill, and nothing for what it leaves empty. A job
//! that says nothing of where it is done (no location, city, region, postal code or
//! country, and not remote work with its countries) has none: search engines refuse a
//! posting without a place, and report it as an error of the site.

use serde_json::{Map, Value, json};

use jobboard_domain::{
    Ts,
    jobs::{Job, JobType, SalaryPeriod},
};

/// schema.org's `employmentType` of a job type. Casual work (no guaranteed hours, paid
/// for the shifts worked) is closest to `PER_DIEM`.
pub fn employment_type(t: JobType) -> &'static str {
    match t {
        JobType::FullTime => "FULL_TIME",
        JobType::PartTime => "PART_TIME",
        JobType::Contract => "CONTRACTOR",
        JobType::Internship => "INTERN",
        JobType::Temporary => "TEMPORARY",
        JobType::Casual => "PER_DIEM",
    }
}

/// schema.org's `unitText` of a salary period.
pub fn unit_text(p: SalaryPeriod) -> &'static str {
    match p {
        SalaryPeriod::Hourly => "HOUR",
        SalaryPeriod::Daily => "DAY",
        SalaryPeriod::Weekly => "WEEK",
        SalaryPeriod::Monthly => "MONTH",
        SalaryPeriod::Yearly => "YEAR",
    }
}

/// What the page knows besides the job.
pub struct Context<'a> {
    /// Absolute URL of the job page.
    pub url: &'a str,
    /// The board's organization (names the job's `identifier`).
    pub board_name: &'a str,
    /// True when candidates apply on the page itself (the hosted form).
    pub direct_apply: bool,
    /// Until when the job is announced as valid ([`Job::valid_through`]).
    pub valid_through: Ts,
}

/// True when `job` says where it is done: a place, or remote work with the countries it
/// may be done from (what search engines require of a posting).
pub fn placed(job: &Job) -> bool {
    let remote = job.is_remote && job.remote_countries.as_ref().is_some_and(|c| !c.is_empty());
    remote
        || [
            &job.location,
            &job.city,
            &job.region,
            &job.postal_code,
            &job.country,
        ]
        .iter()
        .any(|v| v.is_some())
}

/// The `JobPosting` of `job`, when it is [`placed`].
pub fn job_posting(job: &Job, cx: &Context<'_>) -> Option<Value> {
    if !placed(job) {
        return None;
    }
    let mut o = Map::new();
    let mut put = |k: &str, v: Value| {
        o.insert(k.to_string(), v);
    };
    put("@context", json!("https://schema.org/"));
    put("@type", json!("JobPosting"));
    put("title", json!(job.title));
    put("description", json!(job.description));
    put("datePosted", json!(job.created_at.to_rfc3339()));
    put("validThrough", json!(cx.valid_through.to_rfc3339()));
    if let Some(t) = job.job_type {
        put("employmentType", json!(employment_type(t)));
    }
    let mut org = Map::new();
    org.insert("@type".into(), json!("Organization"));
    org.insert("name".into(), json!(job.company_name));
    if let Some(w) = &job.company_website {
        org.insert("sameAs".into(), json!(w));
    }
    if let Some(l) = &job.company_logo_url {
        org.insert("logo".into(), json!(l));
    }
    put("hiringOrganization", Value::Object(org));
    let mut address = Map::new();
    address.insert("@type".into(), json!("PostalAddress"));
    for (key, value) in [
        (
            "addressLocality",
            job.city.as_ref().or(job.location.as_ref()),
        ),
        ("addressRegion", job.region.as_ref()),
        ("postalCode", job.postal_code.as_ref()),
        ("addressCountry", job.country.as_ref()),
    ] {
        if let Some(v) = value {
            address.insert(key.into(), json!(v));
        }
    }
    if address.len() > 1 {
        put(
            "jobLocation",
            json!({"@type": "Place", "address": Value::Object(address)}),
        );
    }
    // Who may apply from where: the countries a remote job may be done from, and the
    // job's location when only its candidates may apply. A remote job says it is one
    // only with its countries, as search engines require of `TELECOMMUTE`.
    let mut requirements: Vec<Value> = job
        .remote_countries
        .iter()
        .flat_map(|c| c.0.iter())
        .map(|c| json!({"@type": "Country", "name": c}))
        .collect();
    if job.is_remote && !requirements.is_empty() {
        put("jobLocationType", json!("TELECOMMUTE"));
    }
    if job.location_restricted
        && let Some(l) = &job.location
    {
        requirements.push(json!({"@type": "AdministrativeArea", "name": l}));
    }
    if !requirements.is_empty() {
        put("applicantLocationRequirements", Value::Array(requirements));
    }
    if job.salary_min.is_some() || job.salary_max.is_some() {
        let mut value = Map::new();
        value.insert("@type".into(), json!("QuantitativeValue"));
        if let Some(a) = job.salary_min {
            value.insert("minValue".into(), json!(a));
        }
        if let Some(b) = job.salary_max {
            value.insert("maxValue".into(), json!(b));
        }
        if let Some(p) = job.salary_period {
            value.insert("unitText".into(), json!(unit_text(p)));
        }
        let mut amount = Map::new();
        amount.insert("@type".into(), json!("MonetaryAmount"));
        if let Some(c) = &job.salary_currency {
            amount.insert("currency".into(), json!(c));
        }
        amount.insert("value".into(), Value::Object(value));
        put("baseSalary", Value::Object(amount));
    }
    put("directApply", json!(cx.direct_apply));
    put(
        "identifier",
        json!({"@type": "PropertyValue", "name": cx.board_name, "value": job.id.to_string()}),
    );
    put("url", json!(cx.url));
    Some(Value::Object(o))
}
