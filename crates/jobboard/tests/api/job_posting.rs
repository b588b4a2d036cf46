//! The `JobPosting` of every kind of job, checked against the properties Google's job
//! posting documentation lists as required and recommended: every job type and salary
//! period, on site, fully remote (with the countries it may be done from) and hybrid; a
//! remote job without countries is not announced as remote; a job that says nothing of
//! its place has no posting at all.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::{
    backends,
    board::{job, sel},
    common::*,
};

backends!(every_kind_of_job_has_a_valid_posting);

/// Google: required.
const REQUIRED: &[&str] = &["title", "description", "datePosted", "hiringOrganization"];
/// Google: recommended, when the job says it.
const RECOMMENDED: &[&str] = &[
    "validThrough",
    "employmentType",
    "baseSalary",
    "directApply",
    "identifier",
    "jobLocationType",
    "applicantLocationRequirements",
];
/// schema.org's and Google's values of `employmentType`.
const EMPLOYMENT_TYPES: &[&str] = &[
    "FULL_TIME",
    "PART_TIME",
    "CONTRACTOR",
    "TEMPORARY",
    "INTERN",
    "VOLUNTEER",
    "PER_DIEM",
    "OTHER",
];
const UNITS: &[&str] = &["HOUR", "DAY", "WEEK", "MONTH", "YEAR"];

/// Where a job is done.
#[derive(Debug, Clone, Copy)]
enum Place {
    OnSite,
    Remote,
    Hybrid,
    /// Remote, but the countries are not named.
    RemoteAnywhere,
    /// Only the location's words.
    Words,
}

fn body(job_type: &str, period: &str, place: Place, i: usize) -> Value {
    let mut b = json!({
        "title": format!("Job {i}"),
        "description": "<p>Do <strong>the work</strong>.</p>",
        "company_name": "Acme",
        "company_website": "https://acme.example",
        "company_logo_url": "https://acme.example/logo.png",
        "job_type": job_type,
        "salary_min": 20,
        "salary_max": 30,
        "salary_currency": "EUR",
        "salary_period": period,
    });
    let on_site = json!({"city": "Lyon", "region": "Auvergne-Rhône-Alpes", "postal_code": "69001", "country": "FR"});
    let merge = |b: &mut Value, more: &Value| {
        for (k, v) in more.as_object().unwrap() {
            b[k] = v.clone();
        }
    };
    match place {
        Place::OnSite => merge(&mut b, &on_site),
        Place::Remote => merge(
            &mut b,
            &json!({"is_remote": true, "remote_countries": ["FR", "BE"]}),
        ),
        Place::Hybrid => {
            merge(&mut b, &on_site);
            merge(
                &mut b,
                &json!({"is_remote": true, "remote_countries": ["FR"]}),
            );
        }
        Place::RemoteAnywhere => merge(&mut b, &json!({"is_remote": true, "location": "Paris"})),
        Place::Words => merge(&mut b, &json!({"location": "Berlin"})),
    }
    b
}

fn date_time(v: &Value) -> chrono::DateTime<chrono::FixedOffset> {
    chrono::DateTime::parse_from_rfc3339(v.as_str().expect("a date-time string")).expect("ISO 8601")
}

/// Checks `ld` as Google reads it; `place` is what the job says of where it is.
fn check(ld: &Value, place: Place, t: &TestApp) {
    let o = ld.as_object().unwrap();
    assert_eq!(ld["@context"], "https://schema.org/");
    assert_eq!(ld["@type"], "JobPosting");
    for p in REQUIRED {
        assert!(o.contains_key(*p), "required {p} missing: {ld}");
    }
    for p in RECOMMENDED {
        let expected = match *p {
            "jobLocationType" | "applicantLocationRequirements" => {
                matches!(place, Place::Remote | Place::Hybrid)
            }
            _ => true,
        };
        assert_eq!(o.contains_key(*p), expected, "recommended {p}: {ld}");
    }
    // Dates: ISO 8601, valid through after posted, and ahead.
    let posted = date_time(&ld["datePosted"]);
    let through = date_time(&ld["validThrough"]);
    assert!(through > posted && through > chrono::Utc::now(), "{ld}");
    // The organization.
    assert_eq!(ld["hiringOrganization"]["@type"], "Organization");
    assert_eq!(ld["hiringOrganization"]["name"], "Acme");
    assert_eq!(ld["hiringOrganization"]["sameAs"], "https://acme.example");
    assert_eq!(
        ld["hiringOrganization"]["logo"],
        "https://acme.example/logo.png"
    );
    // Closed sets.
    assert!(
        EMPLOYMENT_TYPES.contains(&ld["employmentType"].as_str().unwrap()),
        "{ld}"
    );
    let salary = &ld["baseSalary"];
    assert_eq!(salary["@type"], "MonetaryAmount");
    assert_eq!(salary["currency"], "EUR");
    assert_eq!(salary["value"]["@type"], "QuantitativeValue");
    assert!(UNITS.contains(&salary["value"]["unitText"].as_str().unwrap()));
    assert!(
        salary["value"]["minValue"].as_f64().unwrap()
            <= salary["value"]["maxValue"].as_f64().unwrap()
    );
    assert!(ld["directApply"].is_boolean());
    assert_eq!(ld["identifier"]["@type"], "PropertyValue");
    assert!(ld["identifier"]["name"].is_string() && ld["identifier"]["value"].is_string());
    assert!(ld["url"].as_str().unwrap().starts_with(&t.base));
    // The place: an address for a job done somewhere (required unless fully remote).
    let address = &ld["jobLocation"]["address"];
    match place {
        Place::OnSite | Place::Hybrid => {
            assert_eq!(ld["jobLocation"]["@type"], "Place");
            assert_eq!(address["@type"], "PostalAddress");
            assert_eq!(address["addressLocality"], "Lyon");
            assert_eq!(address["addressRegion"], "Auvergne-Rhône-Alpes");
            assert_eq!(address["postalCode"], "69001");
            assert_eq!(address["addressCountry"], "FR");
        }
        Place::Words | Place::RemoteAnywhere => {
            assert!(address["addressLocality"].is_string(), "{ld}");
        }
        Place::Remote => assert!(ld.get("jobLocation").is_none(), "{ld}"),
    }
    // Remote work: `TELECOMMUTE` and where applicants may be, as countries.
    if matches!(place, Place::Remote | Place::Hybrid) {
        assert_eq!(ld["jobLocationType"], "TELECOMMUTE");
        let req = ld["applicantLocationRequirements"].as_array().unwrap();
        assert!(!req.is_empty());
        for r in req {
            assert_eq!(r["@type"], "Country");
            let code = r["name"].as_str().unwrap();
            assert!(
                jobboard_domain::countries::code(code) == Some(code),
                "{code}"
            );
        }
    }
    // Only properties Google or schema.org know.
    let known: BTreeSet<&str> = ["@context", "@type", "url", "jobLocation"]
        .into_iter()
        .chain(REQUIRED.iter().copied())
        .chain(RECOMMENDED.iter().copied())
        .collect();
    for k in o.keys() {
        assert!(known.contains(k.as_str()), "unknown property {k}");
    }
}

async fn every_kind_of_job_has_a_valid_posting(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.scheduler = false).await;
    let types = [
        "full-time",
        "part-time",
        "contract",
        "internship",
        "temporary",
        "casual",
    ];
    let periods = ["hourly", "daily", "weekly", "monthly", "yearly"];
    let places = [
        Place::OnSite,
        Place::Remote,
        Place::Hybrid,
        Place::RemoteAnywhere,
        Place::Words,
    ];
    let mut n = 0;
    for (i, job_type) in types.iter().enumerate() {
        for (k, place) in places.iter().enumerate() {
            let period = periods[(i + k) % periods.len()];
            let slug = job(&t, body(job_type, period, *place, n)).await;
            n += 1;
            let doc = t.page(&format!("/jobs/{slug}")).await.html();
            let script = doc
                .select(&sel("script[type=\"application/ld+json\"]"))
                .next()
                .unwrap_or_else(|| panic!("{job_type} {place:?}: no structured data"));
            let ld: Value = serde_json::from_str(&script.inner_html()).unwrap();
            check(&ld, *place, &t);
            assert_eq!(
                ld["baseSalary"]["value"]["unitText"],
                json!(match period {
                    "hourly" => "HOUR",
                    "daily" => "DAY",
                    "weekly" => "WEEK",
                    "monthly" => "MONTH",
                    _ => "YEAR",
                })
            );
        }
    }
    // A job that says nothing of where it is done has no posting (search engines
    // would refuse it); its page is there all the same.
    let slug = job(
        &t,
        json!({"title": "Somewhere", "description": "Work.", "is_remote": false}),
    )
    .await;
    let page = t.page(&format!("/jobs/{slug}")).await;
    page.expect(200);
    assert!(
        page.html()
            .select(&sel("script[type=\"application/ld+json\"]"))
            .next()
            .is_none()
    );
}
