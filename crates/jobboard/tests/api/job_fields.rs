//! One field list for every door. The job model's client-writable fields, each with its
//! form line, are exactly: the properties of the API's create and patch bodies, the
//! controls of the dashboard's job form, the controls of the board's post form (less the
//! staff-only fields), and the JSON-LD properties of a job page (each field names the
//! property it feeds or says it feeds none). A field added to the model and left out of
//! any of these fails here, naming it.

use std::collections::BTreeSet;

use reqwest::Method;
use scraper::Html;
use serde_json::{Value, json};

use crate::{backends, common::*, dashboard::sel};
use jobboard_domain::{
    form::{Field, Group, Ld},
    jobs::Job,
};

backends!(
    every_door_shows_the_models_fields,
    a_members_forms_show_the_models_fields,
    the_structured_data_follows_the_model
);

/// The form fields in the order the forms draw them: by fieldset, then model order.
fn drawn(fields: &[Field], staff: bool) -> Vec<&'static str> {
    Group::ALL
        .iter()
        .flat_map(|g| {
            fields
                .iter()
                .filter(move |f| f.group == *g && (staff || !f.staff_only))
                .map(|f| f.name)
        })
        .collect()
}

/// The names of the controls of the form matched by `form`, in document order, less
/// the form's own (anti-forgery token, trap).
fn controls(doc: &Html, form: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in doc.select(&sel(&format!(
        "{form} input[name], {form} select[name], {form} textarea[name]"
    ))) {
        let name = c.value().attr("name").unwrap().to_string();
        if !matches!(name.as_str(), "csrf" | "_token" | "reference_code") {
            out.push(name);
        }
    }
    out
}

fn properties(doc: &Value, schema: &str) -> BTreeSet<String> {
    doc["components"]["schemas"][schema]["properties"]
        .as_object()
        .unwrap_or_else(|| panic!("{schema} has properties"))
        .keys()
        .cloned()
        .collect()
}

async fn every_door_shows_the_models_fields(b: Backend) {
    let t = TestApp::spawn(b).await;
    let fields = Job::form_fields();
    let written: Vec<&str> = Job::WRITTEN.to_vec();
    // Every field says how forms show it (a field without a form line is on no form).
    let described: Vec<&str> = fields.iter().map(|f| f.name).collect();
    assert_eq!(
        described, written,
        "every client-writable job field needs a form line in the job model"
    );

    // The API's bodies.
    let doc = t
        .req(Method::GET, "/api/openapi.json")
        .no_key()
        .send()
        .await;
    doc.expect(200);
    let written_set: BTreeSet<String> = written.iter().map(|s| s.to_string()).collect();
    assert_eq!(properties(&doc.body, "JobIn"), written_set);
    assert_eq!(properties(&doc.body, "JobPatch"), written_set);

    // The dashboard's job form: every field, by fieldset.
    t.post("/categories", json!({"name": "Engineering"}))
        .await
        .expect(201);
    crate::dashboard::add_user(&t, t.org_id, "ada@example.com").await;
    let ada = crate::dashboard::Browser::signed_in(&t, "ada@example.com").await;
    let page = ada.get("/dashboard/jobs/new").await;
    page.expect(200);
    assert_eq!(
        controls(&page.html(), "form.job-form"),
        drawn(&fields, true),
        "the dashboard's job form"
    );

    // The board's post form: every field but the staff-only ones.
    let page = t.page("/post-a-job").await;
    page.expect(200);
    assert_eq!(
        controls(&page.html(), "form.post-form"),
        drawn(&fields, false),
        "the board's post form"
    );
    let staff_only: Vec<&str> = fields
        .iter()
        .filter(|f| f.staff_only)
        .map(|f| f.name)
        .collect();
    assert_eq!(
        staff_only,
        [
            "is_highlighted",
            "is_sticky",
            "owner_user_id",
            "featured_until",
            "expires_at",
            "status"
        ]
    );
}

/// A member's post and edit forms show the board's fields (every field but the
/// staff-only ones), in the model's fieldsets.
async fn a_members_forms_show_the_models_fields(b: Backend) {
    let sink = crate::smtp_sink::SmtpSink::start().await;
    let t = crate::accounts::spawn(b, &sink, "closed", "auto", "active").await;
    let fields = Job::form_fields();
    t.post("/categories", json!({"name": "Engineering"}))
        .await
        .expect(201);
    crate::accounts::member(&t, "boss@example.com", "employer", "approved").await;
    let m = crate::accounts::signed_in(&t, &sink, "boss@example.com", None).await;
    let page = m.get("/account/jobs/new").await;
    page.expect(200);
    assert_eq!(
        controls(&page.html(), "form.post-form"),
        drawn(&fields, false),
        "a member's post form"
    );
}

/// A value for every client-writable field of a job that is listed.
fn full_body(category: &str, owner: &str) -> Value {
    json!({
        "title": "Senior engineer",
        "description": "<p>Build <strong>things</strong>.</p>",
        "company_name": "Acme",
        "job_type": "contract",
        "location": "Berlin",
        "location_restricted": true,
        "is_remote": true,
        "country": "de",
        "region": "Berlin",
        "city": "Berlin",
        "postal_code": "10115",
        "remote_countries": ["DE", "at"],
        "is_highlighted": true,
        "is_sticky": true,
        "how_to_apply_method": "website",
        "how_to_apply": "https://acme.example/apply",
        "category_id": category,
        "company_website": "https://acme.example",
        "company_logo_url": "https://acme.example/logo.png",
        "salary_min": 50000,
        "salary_max": 70000,
        "salary_currency": "EUR",
        "salary_period": "yearly",
        "contact_email": "jobs@acme.example",
        "owner_user_id": owner,
        "featured_until": "2099-01-01T00:00:00Z",
        "expires_at": "2099-01-01T00:00:00Z",
        "status": "active",
    })
}

/// The dotted paths of the leaves of `v` (`@type` left out).
fn leaves(v: &Value, at: &str, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(o) => {
            for (k, v) in o {
                if k != "@type" {
                    let path = if at.is_empty() {
                        k.clone()
                    } else {
                        format!("{at}.{k}")
                    };
                    leaves(v, &path, out);
                }
            }
        }
        _ => {
            out.insert(at.to_string());
        }
    }
}

async fn the_structured_data_follows_the_model(b: Backend) {
    let t = TestApp::spawn(b).await;
    let fields = Job::form_fields();
    let category = t.post("/categories", json!({"name": "Engineering"})).await;
    category.expect(201);
    let owner = t
        .post("/members/sync", json!({"email": "owner@example.com"}))
        .await;
    owner.expect(201);
    let body = full_body(
        category.body["data"]["id"].as_str().unwrap(),
        owner.body["data"]["member"]["id"].as_str().unwrap(),
    );
    let sent: Vec<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    let mut written = Job::WRITTEN.to_vec();
    written.sort();
    let mut sent_sorted = sent.clone();
    sent_sorted.sort();
    assert_eq!(sent_sorted, written, "the full job sends every field");
    let r = t.post("/jobs", body).await;
    r.expect(201);
    let slug = r.body["data"]["slug"].as_str().unwrap().to_string();
    let page = t.page(&format!("/jobs/{slug}")).await;
    page.expect(200);
    let doc = page.html();
    let script = doc
        .select(&sel("script[type=\"application/ld+json\"]"))
        .next()
        .expect("structured data");
    let ld: Value = serde_json::from_str(&script.text().collect::<String>()).unwrap();
    let mut found = BTreeSet::new();
    leaves(&ld, "", &mut found);

    let mut fed = BTreeSet::new();
    for f in &fields {
        match f.ld {
            Ld::Unsaid => panic!(
                "job field {} says neither which JSON-LD property it feeds nor that it feeds none",
                f.name
            ),
            Ld::Path(p) => {
                assert!(
                    found.contains(p),
                    "job field {} feeds {p}, which the page does not have: {found:?}",
                    f.name
                );
                fed.insert(p.to_string());
            }
            Ld::Nothing => {}
        }
    }
    // What the page says besides the fields: the posting's context, date, identity and
    // address.
    let own: BTreeSet<String> = [
        "@context",
        "datePosted",
        "identifier.name",
        "identifier.value",
        "url",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let unexplained: Vec<&String> = found
        .iter()
        .filter(|p| !fed.contains(*p) && !own.contains(*p))
        .collect();
    assert!(
        unexplained.is_empty(),
        "JSON-LD properties no job field feeds: {unexplained:?}"
    );
}
