//! Plans: `GET /plans`, `POST /plans` and `jobboard plans`.

use reqwest::Method;
use serde_json::{Value, json};

use crate::{backends, common::*, members::futures_join_all};

backends!(
    plans_are_created_and_listed,
    plan_conflicts_and_validation,
    plan_scopes_and_tenancy,
    cli_manages_plans,
    documented_in_openapi,
    concurrent_creates_of_one_name,
    null_identifiers_and_integral_numbers,
);

/// Creates a plan through the API and returns it.
pub async fn create_plan(t: &TestApp, body: Value) -> Value {
    let r = t.post("/plans", body).await;
    r.expect(201);
    r.body["data"].clone()
}

async fn plans_are_created_and_listed(b: Backend) {
    let t = TestApp::spawn(b).await;
    let r = t
        .post(
            "/plans",
            json!({"name": "Pro", "processorPriceId": "price_pro", "altProcessorPlanId": "P-PRO",
                   "price": 49.99, "currency": "usd", "interval": "month", "jobsIncluded": 5}),
        )
        .await;
    r.expect(201);
    let p = &r.body["data"];
    assert_eq!(p["name"], "Pro");
    assert_eq!(p["organizationId"], t.org_id.0);
    assert_eq!(p["processorPriceId"], "price_pro");
    assert_eq!(p["altProcessorPlanId"], "P-PRO");
    assert_eq!(p["currency"], "USD", "currency is stored upper-case");
    assert_eq!(p["interval"], "month");
    assert_eq!(p["jobsIncluded"], 5);
    assert!(
        r.text.contains("\"price\":49.99,"),
        "price is exact: {}",
        r.text
    );
    assert!(p["id"].as_str().is_some() && p["createdAt"].as_str().unwrap().ends_with('Z'));
    let basic = create_plan(
        &t,
        json!({"name": "Basic", "price": 0, "currency": "EUR", "interval": "one_time", "jobsIncluded": 1}),
    )
    .await;
    assert_eq!(basic["processorPriceId"], Value::Null);
    assert_eq!(basic["altProcessorPlanId"], Value::Null);
    let r = t.get("/plans").await;
    r.expect(200);
    let names: Vec<&str> = r.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Basic", "Pro"]);
    assert_eq!(r.body["meta"]["total"], 2);
    assert!(r.text.contains("\"price\":49.99,"), "{}", r.text);
    t.get("/plans?page=2")
        .await
        .expect_error(422, "validation_failed");
}

async fn plan_conflicts_and_validation(b: Backend) {
    let t = TestApp::spawn(b).await;
    let pro = json!({"name": "Pro", "processorPriceId": "price_pro", "altProcessorPlanId": "P-PRO",
                     "price": "10", "currency": "USD", "interval": "month", "jobsIncluded": 5});
    // A string price is refused: amounts are JSON numbers.
    let r = t.post("/plans", pro.clone()).await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["price"]);
    let mut pro = pro;
    pro["price"] = json!(10);
    t.post("/plans", pro.clone()).await.expect(201);
    for (field, body) in [
        ("name", json!({"name": "Pro"})),
        ("processorPriceId", json!({"processorPriceId": "price_pro"})),
        ("altProcessorPlanId", json!({"altProcessorPlanId": "P-PRO"})),
    ] {
        let mut b = json!({"name": "Other", "price": 1, "currency": "USD", "interval": "year", "jobsIncluded": 1});
        for (k, v) in body.as_object().unwrap() {
            b[k] = v.clone();
        }
        let r = t.post("/plans", b).await;
        r.expect_error(409, "conflict");
        assert_eq!(r.body["error"]["details"]["field"], field);
    }
    // Every bad field at once.
    let r = t
        .post(
            "/plans",
            json!({"name": " ", "processorPriceId": "", "price": -1, "currency": "dollars",
                   "interval": "weekly", "jobsIncluded": -2, "colour": "red"}),
        )
        .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(
        r.error_fields(),
        [
            "name",
            "processorPriceId",
            "price",
            "currency",
            "interval",
            "jobsIncluded",
            "colour"
        ]
    );
    let r = t.post("/plans", json!({})).await;
    assert_eq!(
        r.error_fields(),
        ["name", "price", "currency", "interval", "jobsIncluded"]
    );
    let r = t
        .post(
            "/plans",
            json!({"name": "X", "price": 1.23456, "currency": "USD", "interval": "year", "jobsIncluded": 0}),
        )
        .await;
    assert_eq!(r.error_fields(), ["price"]);
    assert_eq!(
        r.body["error"]["details"]["fields"][0]["code"],
        "invalid_format"
    );
    // Only the first plan exists.
    assert_eq!(t.get("/plans").await.body["meta"]["total"], 1);
}

async fn plan_scopes_and_tenancy(b: Backend) {
    let t = TestApp::spawn(b).await;
    create_plan(
        &t,
        json!({"name": "Pro", "price": 5, "currency": "USD", "interval": "month", "jobsIncluded": 1}),
    )
    .await;
    let read = t.new_key(t.org_id, "members:read", 100, 30).await;
    let r = t.req(Method::GET, "/plans").key(&read).send().await;
    r.expect(200);
    assert_eq!(r.body["meta"]["total"], 1);
    let r = t
        .req(Method::POST, "/plans")
        .key(&read)
        .json(json!({"name": "Max", "price": 5, "currency": "USD", "interval": "month", "jobsIncluded": 1}))
        .send()
        .await;
    r.expect_error(403, "insufficient_scope");
    assert_eq!(r.body["error"]["details"]["required"], "members:write");
    let jobs = t.new_key(t.org_id, "jobs:read", 100, 30).await;
    let r = t.req(Method::GET, "/plans").key(&jobs).send().await;
    r.expect_error(403, "insufficient_scope");
    assert_eq!(r.body["error"]["details"]["required"], "members:read");
    // Another organization sees none of these plans and may reuse the name.
    let (_, other) = t.new_org("Other", "*", 100, 30).await;
    let r = t.req(Method::GET, "/plans").key(&other).send().await;
    assert_eq!(r.body["data"], json!([]));
    t.req(Method::POST, "/plans")
        .key(&other)
        .json(json!({"name": "Pro", "price": 7, "currency": "USD", "interval": "month", "jobsIncluded": 1}))
        .send()
        .await
        .expect(201);
    assert_eq!(t.get("/plans").await.body["data"][0]["price"], json!(5));
}

async fn cli_manages_plans(b: Backend) {
    let t = TestApp::spawn(b).await;
    let db = t.database_url.clone();
    let org = t.org_id.to_string();
    let (ok, out, err) = run_cli(
        &[
            "plans",
            "create",
            "--org",
            &org,
            "--name",
            "Featured",
            "--price",
            "19.99",
            "--currency",
            "eur",
            "--interval",
            "one_time",
            "--jobs-included",
            "3",
            "--processor-price-id",
            "price_f",
        ],
        &db,
    );
    assert!(ok, "{err}");
    let id = out.trim_end().lines().last().unwrap().to_string();
    assert!(uuid::Uuid::parse_str(&id).is_ok(), "{out}");
    // The plan is served by the API exactly as created.
    let r = t.get("/plans").await;
    let p = &r.body["data"][0];
    assert_eq!(p["id"], id.as_str());
    assert_eq!(p["currency"], "EUR");
    assert_eq!(p["interval"], "one_time");
    assert_eq!(p["jobsIncluded"], 3);
    assert_eq!(p["processorPriceId"], "price_f");
    assert!(r.text.contains("\"price\":19.99,"), "{}", r.text);
    let (ok, out, _) = run_cli(&["plans", "list", "--org", &org], &db);
    assert!(
        ok && out.contains("Featured") && out.contains("19.99 EUR"),
        "{out}"
    );
    // Without --jobs-included the plan includes no job posts.
    let (ok, _, err) = run_cli(
        &[
            "plans",
            "create",
            "--org",
            &org,
            "--name",
            "Monthly",
            "--price",
            "5",
            "--currency",
            "USD",
            "--interval",
            "month",
        ],
        &db,
    );
    assert!(ok, "{err}");
    let r = t.get("/plans").await;
    assert_eq!(r.body["data"][1]["name"], "Monthly");
    assert_eq!(r.body["data"][1]["jobsIncluded"], 0);
    // Bad input fails with a message.
    for (args, msg) in [
        (
            vec!["--name", "Featured", "--price", "1", "--interval", "month"],
            "already exists",
        ),
        (
            vec!["--name", "X", "--price", "-1", "--interval", "month"],
            "--price",
        ),
        (
            vec!["--name", "X", "--price", "1", "--interval", "weekly"],
            "--interval",
        ),
    ] {
        let mut full = vec!["plans", "create", "--org", &org, "--currency", "USD"];
        full.extend(args);
        let (ok, _, err) = run_cli(&full, &db);
        assert!(!ok && err.contains(msg), "{full:?}: {err}");
    }
    let (ok, _, err) = run_cli(
        &[
            "plans",
            "create",
            "--org",
            "999999",
            "--name",
            "X",
            "--price",
            "1",
            "--currency",
            "USD",
            "--interval",
            "month",
        ],
        &db,
    );
    assert!(!ok && err.contains("does not exist"), "{err}");
}

async fn documented_in_openapi(b: Backend) {
    let t = TestApp::spawn(b).await;
    let r = t
        .req(Method::GET, "/api/openapi.json")
        .no_key()
        .send()
        .await;
    r.expect(200);
    let paths = &r.body["paths"];
    assert!(paths["/plans"]["get"]["responses"]["200"].is_object());
    assert!(paths["/plans"]["post"]["responses"]["201"].is_object());
    let sync = &paths["/members/sync"]["post"];
    assert!(sync["responses"]["200"].is_object() && sync["responses"]["201"].is_object());
    assert!(sync["requestBody"].is_object());
    // Fixed values are documented exactly as they are sent and returned.
    let schemas = &r.body["components"]["schemas"];
    for (name, values) in [
        (
            "Role",
            json!(["employee", "business", "both", "jobseeker", "employer"]),
        ),
        ("ApprovalStatus", json!(["approved", "pending", "rejected"])),
        (
            "AccessStatus",
            json!(["active", "trialing", "past_due", "canceled", "expired"]),
        ),
        (
            "PaymentStatus",
            json!(["pending", "succeeded", "failed", "refunded"]),
        ),
        (
            "PaymentProvider",
            json!(["processor", "alt_processor", "manual"]),
        ),
        ("PlanInterval", json!(["month", "year", "one_time"])),
    ] {
        assert_eq!(schemas[name]["enum"], values, "{name}");
    }
    // Member, access and payment fields are camelCase, with organizationId.
    for (schema, field) in [
        ("Member", "approvalStatus"),
        ("Member", "organizationId"),
        ("Access", "processorSubscriptionId"),
        ("Access", "jobsRemaining"),
        ("Payment", "paymentProvider"),
        ("Payment", "processorPaymentIntentId"),
        ("Plan", "jobsIncluded"),
    ] {
        assert!(
            schemas[schema]["properties"][field].is_object(),
            "{schema}.{field}"
        );
    }
    assert_eq!(
        schemas["Payment"]["properties"]["amount"]["$ref"],
        "#/components/schemas/Money"
    );
    assert_eq!(schemas["Money"]["type"], "number");
    // Every key of a sync response is always present (access and payment may be null).
    assert_eq!(
        schemas["MemberSyncData"]["required"],
        json!(["member", "created", "access", "payment"])
    );
}

async fn concurrent_creates_of_one_name(b: Backend) {
    let t = TestApp::spawn(b).await;
    let body = json!({"name": "Rush", "processorPriceId": "price_rush", "price": 1,
                      "currency": "USD", "interval": "month", "jobsIncluded": 1});
    let results = futures_join_all((0..6).map(|_| t.post("/plans", body.clone()))).await;
    let statuses: Vec<u16> = results.iter().map(|r| r.status.as_u16()).collect();
    assert_eq!(
        statuses.iter().filter(|s| **s == 201).count(),
        1,
        "{statuses:?}"
    );
    assert_eq!(
        statuses.iter().filter(|s| **s == 409).count(),
        5,
        "{statuses:?}"
    );
    for r in results.iter().filter(|r| r.status.as_u16() == 409) {
        r.expect_error(409, "conflict");
    }
    assert_eq!(t.get("/plans").await.body["meta"]["total"], 1);
}

async fn null_identifiers_and_integral_numbers(b: Backend) {
    let t = TestApp::spawn(b).await;
    // The identifiers may be sent as null (as absent), and the document says so.
    let r = t
        .req(Method::POST, "/plans")
        .raw(
            r#"{"name": "Null ids", "processorPriceId": null, "altProcessorPlanId": null,
                "price": 10, "currency": "EUR", "interval": "year", "jobsIncluded": 2095.0}"#,
            Some("application/json"),
        )
        .send()
        .await;
    r.expect(201);
    assert_eq!(r.body["data"]["processorPriceId"], Value::Null);
    assert_eq!(r.body["data"]["altProcessorPlanId"], Value::Null);
    assert_eq!(
        r.body["data"]["jobsIncluded"], 2095,
        "an integer written with a zero fraction is an integer"
    );
    let r = t
        .req(Method::POST, "/plans")
        .raw(
            r#"{"name": "Half", "price": 1, "currency": "EUR", "interval": "year", "jobsIncluded": 2.5}"#,
            Some("application/json"),
        )
        .send()
        .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["jobsIncluded"]);
    let doc = serde_json::to_value(jobboard::api::openapi()).unwrap();
    let plan_in = &doc["components"]["schemas"]["PlanIn"]["properties"];
    for field in ["processorPriceId", "altProcessorPlanId"] {
        assert_eq!(plan_in[field]["type"], json!(["string", "null"]), "{field}");
    }
    assert_eq!(plan_in["name"]["type"], "string", "a name is never null");
}
