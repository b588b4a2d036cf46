//! Finding the member of a sync: user ids and their conflicts, emails matched ignoring ASCII
//! case only, stored identities recomputed on upgrade, and concurrent first syncs.

use serde_json::json;

use super::*;
use crate::backends;

backends!(
    user_id_matching_and_conflicts,
    concurrent_first_syncs_create_one_member,
    emails_match_ignoring_ascii_case_only,
    upgrading_recomputes_stored_email_identities,
);

async fn user_id_matching_and_conflicts(b: Backend) {
    let t = TestApp::spawn(b).await;
    let uid = uuid::Uuid::now_v7().to_string();
    // Created with the given userId as its id.
    let r = sync(&t, json!({"email": "a@example.com", "userId": uid})).await;
    r.expect(201);
    assert_eq!(r.body["data"]["member"]["id"], uid.as_str());
    // Found by userId: its email may change.
    let r = sync(&t, json!({"email": "a.new@example.com", "userId": uid})).await;
    r.expect(200);
    assert_eq!(r.body["data"]["member"]["id"], uid.as_str());
    assert_eq!(r.body["data"]["member"]["email"], "a.new@example.com");
    assert_eq!(r.body["data"]["member"]["name"], "a", "the name is kept");
    // The old address is free again: a sync of it creates another member.
    let r = sync(&t, json!({"email": "a@example.com"})).await;
    r.expect(201);
    let other = r.body["data"]["member"]["id"].as_str().unwrap().to_string();
    // Moving the first member to the other's address is a conflict.
    let r = sync(&t, json!({"email": "A@example.com", "userId": uid})).await;
    r.expect_error(409, "conflict");
    assert_eq!(r.body["error"]["details"]["field"], "email");
    // The address found with a different userId is a conflict too.
    let stranger = uuid::Uuid::now_v7().to_string();
    let r = sync(&t, json!({"email": "a@example.com", "userId": stranger})).await;
    r.expect_error(409, "conflict");
    assert_eq!(r.body["error"]["details"]["field"], "userId");
    // Found by email with its own userId: fine.
    let r = sync(
        &t,
        json!({"email": "a@example.com", "userId": other, "name": "Al"}),
    )
    .await;
    r.expect(200);
    assert_eq!(r.body["data"]["member"]["name"], "Al");
    // Nothing changed by the conflicts.
    let members = jobboard_domain::members::list(t.db(), t.org_id)
        .await
        .unwrap();
    assert_eq!(members.len(), 2);
    assert_eq!(members[0].email, "a.new@example.com");
    assert_eq!(members[1].email, "a@example.com");
    assert_eq!(event_names(&t).await, ["user.created", "user.created"]);
}

async fn concurrent_first_syncs_create_one_member(b: Backend) {
    let t = TestApp::spawn(b).await;
    pro_plan(&t).await;
    let job = t.insert_job(t.org_id, "Dev").await.to_string();
    for round in 0..3 {
        let email = format!("race{round}@example.com");
        let body = json!({"email": email, "access": {"planName": "Pro", "processorSubscriptionId": format!("sub_{round}")},
            "payment": {"jobId": job, "amount": 9.5, "currency": "USD",
                        "processorPaymentIntentId": format!("pi_{round}")}});
        let requests = (0..8).map(|i| {
            let mut b = body.clone();
            if i % 2 == 1 {
                b["email"] = json!(email.to_uppercase());
            }
            t.post("/members/sync", b)
        });
        let results = futures_join_all(requests).await;
        let mut created = 0;
        let mut ids = std::collections::HashSet::new();
        for r in &results {
            assert!(
                r.status.as_u16() == 200 || r.status.as_u16() == 201,
                "status {}: {}",
                r.status,
                r.text
            );
            if r.status.as_u16() == 201 {
                created += 1;
            }
            ids.insert(r.body["data"]["member"]["id"].as_str().unwrap().to_string());
        }
        assert_eq!(created, 1, "exactly one request created the member");
        assert_eq!(ids.len(), 1, "every request saw the same member");
    }
    assert_eq!(
        jobboard_domain::members::list(t.db(), t.org_id)
            .await
            .unwrap()
            .len(),
        3
    );
    assert_eq!(
        jobboard_domain::members::payments(t.db(), t.org_id)
            .await
            .unwrap()
            .len(),
        3
    );
    let names = event_names(&t).await;
    for (name, n) in [
        ("user.created", 3),
        ("subscription.created", 3),
        ("payment.received", 3),
    ] {
        assert_eq!(names.iter().filter(|e| *e == name).count(), n, "{name}");
    }
    // The same with a userId: one member with that id.
    let uid = uuid::Uuid::now_v7().to_string();
    let results = futures_join_all((0..6).map(|_| {
        t.post(
            "/members/sync",
            json!({"email": "uid@example.com", "userId": uid}),
        )
    }))
    .await;
    assert_eq!(
        results.iter().filter(|r| r.status.as_u16() == 201).count(),
        1
    );
    assert!(
        results
            .iter()
            .all(|r| r.body["data"]["member"]["id"] == uid.as_str())
    );
}

async fn emails_match_ignoring_ascii_case_only(b: Backend) {
    let t = TestApp::spawn(b).await;
    let kate = sync(&t, json!({"email": "kate@example.com", "name": "Kate"})).await;
    kate.expect(201);
    let kate_id = kate.body["data"]["member"]["id"].clone();
    // The Kelvin sign (U+212A) lower-cases to `k` under Unicode rules, but it is another
    // address: another member, and Kate is left alone.
    let kelvin = sync(&t, json!({"email": "\u{212A}ate@example.com"})).await;
    kelvin.expect(201);
    assert_ne!(kelvin.body["data"]["member"]["id"], kate_id);
    assert_eq!(
        kelvin.body["data"]["member"]["email"],
        "\u{212A}ate@example.com"
    );
    // The same for a dotted capital I (U+0130) and `i` followed by U+0307.
    let ivan = sync(&t, json!({"email": "i\u{307}van@example.com"})).await;
    ivan.expect(201);
    let dotted = sync(&t, json!({"email": "\u{130}van@example.com"})).await;
    dotted.expect(201);
    assert_ne!(
        dotted.body["data"]["member"]["id"],
        ivan.body["data"]["member"]["id"]
    );
    let stored = jobboard_domain::members::list(t.db(), t.org_id)
        .await
        .unwrap();
    let emails: Vec<&str> = stored.iter().map(|m| m.email.as_str()).collect();
    assert_eq!(
        emails,
        [
            "kate@example.com",
            "\u{212A}ate@example.com",
            "i\u{307}van@example.com",
            "\u{130}van@example.com"
        ],
        "four members, each with its address as sent"
    );
    // ASCII letters still match in any case: the same member, its address as last sent.
    let again = sync(&t, json!({"email": "Kate@Example.com"})).await;
    again.expect(200);
    assert_eq!(again.body["data"]["member"]["id"], kate_id);
    assert_eq!(again.body["data"]["member"]["name"], "Kate");
    assert_eq!(again.body["data"]["member"]["email"], "Kate@Example.com");
    // Each sync of a new address created one member; the others created none.
    assert_eq!(
        event_names(&t).await,
        [
            "user.created",
            "user.created",
            "user.created",
            "user.created"
        ]
    );
    // A member found by userId may not take an address that matches another's.
    let r = sync(
        &t,
        json!({"email": "KATE@example.com", "userId": kelvin.body["data"]["member"]["id"]}),
    )
    .await;
    r.expect_error(409, "conflict");
    assert_eq!(r.body["error"]["details"]["field"], "email");
}

/// The stored `email_lower` of every member of the organization, by address.
async fn stored_identities(t: &TestApp) -> Vec<(String, String)> {
    jobboard_store::dispatch!(t.db().reader(), p => {
        sqlx::query_as("SELECT email, email_lower FROM members WHERE org_id = $1 ORDER BY created_at, id")
            .bind(t.org_id)
            .fetch_all(p)
            .await
            .unwrap()
    })
}

async fn upgrading_recomputes_stored_email_identities(b: Backend) {
    let t = TestApp::spawn(b).await;
    let addresses = [
        "\u{212A}ate@Example.com",
        "\u{C9}Lodie@Example.COM",
        "\u{130}van@example.com",
        "Plain@Example.com",
    ];
    for email in addresses {
        sync(&t, json!({ "email": email })).await.expect(201);
    }
    // The database as versions before 11 left it: addresses folded with Unicode rules.
    jobboard_store::dispatch!(t.db().writer(), p => {
        for email in addresses {
            sqlx::query("UPDATE members SET email_lower = $1 WHERE org_id = $2 AND email = $3")
                .bind(email.to_lowercase())
                .bind(t.org_id)
                .bind(email)
                .execute(p)
                .await
                .unwrap();
        }
        sqlx::query("DELETE FROM schema_migrations WHERE version = 11")
            .execute(p)
            .await
            .unwrap();
    });
    assert_eq!(stored_identities(&t).await[0].1, "kate@example.com");
    let applied = t.db().migrate().await.unwrap();
    assert_eq!(applied, ["0011_member_email_identity"]);
    assert_eq!(
        stored_identities(&t).await,
        [
            ("\u{212A}ate@Example.com", "\u{212A}ate@example.com"),
            ("\u{C9}Lodie@Example.COM", "\u{C9}lodie@example.com"),
            ("\u{130}van@example.com", "\u{130}van@example.com"),
            ("Plain@Example.com", "plain@example.com"),
        ]
        .map(|(a, b)| (a.to_string(), b.to_string()))
    );
    // Upgraded members are found by their own address in any ASCII case, and no longer
    // by the addresses Unicode folding confused them with.
    let r = sync(&t, json!({"email": "\u{212A}ATE@example.com"})).await;
    r.expect(200);
    assert_eq!(r.body["data"]["member"]["email"], "\u{212A}ATE@example.com");
    sync(&t, json!({"email": "plain@example.com"}))
        .await
        .expect(200);
    sync(&t, json!({"email": "kate@example.com"}))
        .await
        .expect(201);
    sync(&t, json!({"email": "\u{E9}lodie@example.com"}))
        .await
        .expect(201);
    assert_eq!(
        jobboard_domain::members::list(t.db(), t.org_id)
            .await
            .unwrap()
            .len(),
        6
    );
}
