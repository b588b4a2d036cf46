//! Structured places and pay: a job's country, region, city, postal code and the
//! countries a remote job may be done from, checked and stored; the `salary_min` and
//! `country` filters of `GET /jobs` and the board's `/`; a board that requires a salary
//! range or the countries of remote jobs, from the API, the board's form and an import.

use serde_json::json;

use super::*;
use crate::{
    backends,
    board::{post_form, sel},
    payments::set_org,
};

backends!(
    places_are_checked_and_stored,
    salary_and_country_filter_lists,
    a_board_can_require_salaries_and_remote_countries,
);

async fn places_are_checked_and_stored(b: Backend) {
    let t = TestApp::spawn(b).await;
    let mut body = job("Baker");
    body["country"] = json!(" de ");
    body["region"] = json!("Berlin");
    body["city"] = json!("Berlin");
    body["postal_code"] = json!("10115");
    body["is_remote"] = json!(true);
    body["remote_countries"] = json!(["fr", "DE", "FR"]);
    let created = create(&t, body).await;
    let id = created["id"].as_str().unwrap();
    let stored = t.get(&format!("/jobs/{id}")).await.body["data"].clone();
    assert_eq!(stored["country"], "DE");
    assert_eq!(stored["remote_countries"], json!(["FR", "DE"]));
    assert_eq!(
        (&stored["region"], &stored["city"], &stored["postal_code"]),
        (&json!("Berlin"), &json!("Berlin"), &json!("10115"))
    );

    // Every bad value at once, each beside its field.
    let mut bad = job("Baker");
    bad["country"] = json!("XX");
    bad["remote_countries"] = json!(["DE", "Germany"]);
    bad["postal_code"] = json!("1".repeat(33));
    let r = t.post("/jobs", bad).await;
    r.expect_error(422, "validation_failed");
    assert_eq!(
        r.error_fields(),
        ["country", "postal_code", "remote_countries"]
    );
    let mut bad = job("Baker");
    bad["remote_countries"] = json!("DE");
    let r = t.post("/jobs", bad).await;
    assert_eq!(r.error_fields(), ["remote_countries"]);

    // An empty list is none; null clears.
    let stored = |_: &TestApp| async { t.get(&format!("/jobs/{id}")).await.body["data"].clone() };
    t.patch(&format!("/jobs/{id}"), json!({"remote_countries": []}))
        .await
        .expect(200);
    assert_eq!(stored(&t).await["remote_countries"], json!(null));
    t.patch(
        &format!("/jobs/{id}"),
        json!({"country": null, "remote_countries": ["us"]}),
    )
    .await
    .expect(200);
    let now = stored(&t).await;
    assert_eq!(
        (&now["country"], &now["remote_countries"]),
        (&json!(null), &json!(["US"]))
    );
}

async fn salary_and_country_filter_lists(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.scheduler = false).await;
    let yearly = json!({"salary_period": "yearly", "salary_currency": "EUR"});
    let with = |extra: Value, more: Value| {
        let mut v = extra;
        for (k, x) in more.as_object().unwrap() {
            v[k] = x.clone();
        }
        v
    };
    create_active(
        &t,
        "Berlin baker",
        with(
            yearly.clone(),
            json!({"salary_min": 40000, "salary_max": 60000, "country": "DE"}),
        ),
    )
    .await;
    create_active(
        &t,
        "Paris baker",
        with(
            yearly.clone(),
            json!({"salary_min": 30000, "salary_max": 45000, "country": "FR"}),
        ),
    )
    .await;
    create_active(
        &t,
        "Hourly baker",
        json!({"salary_min": 50, "salary_period": "hourly", "country": "US"}),
    )
    .await;
    create_active(&t, "Unpaid baker", json!({"country": "DE"})).await;
    create_active(
        &t,
        "Remote writer",
        json!({"country": "US", "is_remote": true, "remote_countries": ["DE", "AT"]}),
    )
    .await;
    // A job that names DE among remote countries but is not remote is not "from DE".
    create_active(
        &t,
        "Office writer",
        json!({"country": "US", "remote_countries": ["DE"]}),
    )
    .await;
    let list = |q: &'static str| {
        let t = &t;
        async move {
            let (mut titles, total) = fresh(t, q).await;
            titles.sort();
            assert_eq!(titles.len() as i64, total, "{q}");
            titles
        }
    };
    assert_eq!(list("salary_min=50000").await, ["Berlin baker"]);
    assert_eq!(
        list("salary_min=45000").await,
        ["Berlin baker", "Paris baker"]
    );
    assert_eq!(
        list("salary_min=50").await,
        ["Berlin baker", "Hourly baker", "Paris baker"]
    );
    assert_eq!(
        list("salary_min=50.5").await,
        ["Berlin baker", "Paris baker"]
    );
    assert_eq!(
        list("country=de").await,
        ["Berlin baker", "Remote writer", "Unpaid baker"]
    );
    assert_eq!(list("country=AT").await, ["Remote writer"]);
    assert_eq!(list("country=DE&salary_min=1").await, ["Berlin baker"]);
    assert_eq!(
        list("country=DE&search=baker").await,
        ["Berlin baker", "Unpaid baker"]
    );
    assert_eq!(
        list("country=US&is_remote=false").await,
        ["Hourly baker", "Office writer"]
    );
    // A change of country or salary reaches the lists (the search index included).
    let paris = t.get("/jobs?search=paris").await.body["data"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    t.patch(
        &format!("/jobs/{paris}"),
        json!({"country": "de", "salary_max": 90000}),
    )
    .await
    .expect(200);
    assert_eq!(list("country=DE&salary_min=70000").await, ["Paris baker"]);
    t.patch(
        &format!("/jobs/{paris}"),
        json!({"country": "FR", "salary_max": 45000}),
    )
    .await
    .expect(200);
    assert_eq!(list("country=de&salary_min=45000").await, ["Berlin baker"]);
    let r = t.get("/jobs?country=de&salary_min=1").await;
    assert_eq!(r.body["meta"]["filters"]["country"], "DE");
    assert_eq!(r.body["meta"]["filters"]["salary_min"], json!(1.0));
    for (q, field) in [
        ("salary_min=-1", "salary_min"),
        ("salary_min=abc", "salary_min"),
        ("salary_min=inf", "salary_min"),
        ("salary_min=10000000000000", "salary_min"),
        ("country=XX", "country"),
        ("country=DEU", "country"),
    ] {
        let r = t.get(&format!("/jobs?{q}")).await;
        r.expect_error(422, "validation_failed");
        assert_eq!(r.error_fields(), [field], "{q}");
    }

    // The board's list takes the same filters, and its form shows them chosen.
    let page = t.page("/?country=de&salary_min=40000").await;
    page.expect(200);
    let doc = page.html();
    let titles: Vec<String> = doc
        .select(&sel("ol.jobs h2 a"))
        .map(|a| a.text().collect())
        .collect();
    assert_eq!(titles, ["Berlin baker"]);
    let chosen: Vec<&str> = doc
        .select(&sel("#q-country option[selected]"))
        .map(|o| o.value().attr("value").unwrap())
        .collect();
    assert_eq!(chosen, ["DE"]);
    let salary = doc.select(&sel("#q-salary")).next().unwrap();
    assert_eq!(salary.value().attr("value"), Some("40000"));
    t.page("/?country=nowhere").await.expect(400);
}

async fn a_board_can_require_salaries_and_remote_countries(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.scheduler = false).await;
    // A job stored before the rule.
    let old = create(&t, job("Old baker")).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    set_org(
        &t,
        json!({"require_salary": true, "require_remote_countries": true}),
    )
    .await;

    let r = t.post("/jobs", job("Baker")).await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["salary_min", "salary_max"]);
    let mut paid = job("Baker");
    paid["salary_min"] = json!(30000);
    paid["salary_max"] = json!(40000);
    let mut remote = paid.clone();
    remote["is_remote"] = json!(true);
    let r = t.post("/jobs", remote.clone()).await;
    assert_eq!(r.error_fields(), ["remote_countries"]);
    remote["remote_countries"] = json!(["PT"]);
    t.post("/jobs", remote).await.expect(201);
    t.post("/jobs", paid).await.expect(201);

    // The job stored before may still be edited, but not published or stripped without
    // its range.
    t.patch(&format!("/jobs/{old}"), json!({"title": "Old bread baker"}))
        .await
        .expect(200);
    let r = t
        .patch(&format!("/jobs/{old}"), json!({"status": "active"}))
        .await;
    assert_eq!(r.error_fields(), ["salary_min", "salary_max"]);
    let r = t
        .patch(
            &format!("/jobs/{old}"),
            json!({"salary_min": 10, "status": "active"}),
        )
        .await;
    assert_eq!(r.error_fields(), ["salary_max"]);
    t.patch(
        &format!("/jobs/{old}"),
        json!({"salary_min": 10, "salary_max": 20, "status": "active"}),
    )
    .await
    .expect(200);
    let r = t
        .patch(&format!("/jobs/{old}"), json!({"salary_max": null}))
        .await;
    assert_eq!(r.error_fields(), ["salary_max"]);

    // The board's form says it beside the fields.
    set_org(&t, json!({"public_posting": true})).await;
    let form = t.page("/post-a-job").await;
    form.expect(200);
    let tok = form
        .html()
        .select(&sel("input[name=_token]"))
        .next()
        .unwrap()
        .value()
        .attr("value")
        .unwrap()
        .to_string();
    let r = post_form(
        &t,
        "/post-a-job",
        &[
            ("_token", &tok),
            ("title", "Night baker"),
            ("company_name", "Bread & Co"),
            ("description", "We bake."),
            ("is_remote", "on"),
            ("remote_countries", ""),
        ],
        &[],
    )
    .await;
    r.expect(422);
    let doc = r.html();
    for field in ["salary_min", "salary_max", "remote_countries"] {
        let msg: String = doc
            .select(&sel(&format!("#e-{field}")))
            .next()
            .unwrap_or_else(|| panic!("no message for {field}"))
            .text()
            .collect();
        assert!(!msg.trim().is_empty(), "{field}");
    }
    let r = post_form(
        &t,
        "/post-a-job",
        &[
            ("_token", &tok),
            ("title", "Night baker"),
            ("company_name", "Bread & Co"),
            ("description", "We bake."),
            ("is_remote", "on"),
            ("remote_countries", "pt, es"),
            ("salary_min", "20,000"),
            ("salary_max", "30000"),
        ],
        &[],
    )
    .await;
    r.expect(303);
    let all = t.get("/jobs?status=all&search=night").await;
    let id = all.body["data"][0]["id"].as_str().unwrap();
    let stored = t.get(&format!("/jobs/{id}")).await;
    assert_eq!(stored.body["data"]["remote_countries"], json!(["PT", "ES"]));
}
