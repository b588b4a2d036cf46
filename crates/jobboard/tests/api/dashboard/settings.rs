//! Settings: API keys (a key created here works on /api at once, a revoked one is refused
//! at once), the board's look, staff users and one's own password.

use super::*;
use crate::backends;

backends!(
    api_keys_created_here_work_at_once_and_revoked_ones_fail_at_once,
    api_key_forms_show_their_problems,
    the_board_look_is_saved_through_the_organization_update,
    staff_users_are_added_and_removed,
    changing_ones_password_ends_the_other_sessions
);

async fn api_keys_created_here_work_at_once_and_revoked_ones_fail_at_once(b: Backend) {
    let t = TestApp::spawn(b).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    let ada = Browser::signed_in(&t, "ada@example.com").await;
    let page = ada.get("/dashboard/settings/api-keys").await;
    page.expect(200);
    let existing = jobboard_domain::keys::list(t.db(), t.org_id).await.unwrap();
    assert!(page.text.contains(&existing[0].prefix));
    let r = ada
        .submit(
            "/dashboard/settings/api-keys",
            "/dashboard/settings/api-keys",
            &[
                ("name", "careers site"),
                ("scopes", "jobs:read"),
                ("scopes", "analytics:read"),
                ("read_limit", "7"),
                ("write_limit", "3"),
            ],
        )
        .await;
    r.expect(201);
    assert_eq!(r.header("cache-control"), Some("no-store"));
    let key = r
        .html()
        .select(&sel("input#new-key"))
        .next()
        .expect("the new key, shown once")
        .value()
        .attr("value")
        .unwrap()
        .to_string();
    assert!(key.starts_with("jb_") && key.len() == 43, "{key}");
    // It works at once, with its scopes and limits.
    let listed = t.req(Method::GET, "/jobs").key(&key).send().await;
    listed.expect(200);
    assert_eq!(listed.header("x-ratelimit-limit"), Some("7"));
    t.req(Method::POST, "/jobs")
        .key(&key)
        .json(json!({"title": "x", "description": "x", "company_name": "x"}))
        .send()
        .await
        .expect_error(403, "insufficient_scope");
    // The list shows it, never its full text again.
    let page = ada.get("/dashboard/settings/api-keys").await;
    assert!(!page.text.contains(&key));
    let row = page
        .html()
        .select(&sel("table.keys tbody tr"))
        .map(|tr| tr.text().collect::<String>())
        .find(|t| t.contains("careers site"))
        .expect("the new key's row");
    assert!(row.contains(&key[..11]), "{row}");
    assert!(row.contains("jobs:read, analytics:read"), "{row}");
    assert!(row.contains("7 reads, 3 writes"), "{row}");
    // Revoke it: refused on its next request.
    let id = jobboard_domain::keys::list(t.db(), t.org_id)
        .await
        .unwrap()
        .into_iter()
        .find(|k| k.name == "careers site")
        .unwrap()
        .id;
    let r = ada
        .submit(
            "/dashboard/settings/api-keys",
            &format!("/dashboard/settings/api-keys/{id}/revoke"),
            &[],
        )
        .await;
    assert_eq!(redirect(&r), "/dashboard/settings/api-keys?notice=revoked");
    t.req(Method::GET, "/jobs")
        .key(&key)
        .send()
        .await
        .expect_error(401, "invalid_api_key");
    let page = ada.get("/dashboard/settings/api-keys?notice=revoked").await;
    let row = page
        .html()
        .select(&sel("table.keys tbody tr.revoked"))
        .map(|tr| tr.text().collect::<String>())
        .next()
        .expect("the revoked key's row");
    assert!(row.contains("Revoked"), "{row}");
    // The other key goes on working.
    t.get("/jobs").await.expect(200);
}

async fn api_key_forms_show_their_problems(b: Backend) {
    let t = TestApp::spawn(b).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    let ada = Browser::signed_in(&t, "ada@example.com").await;
    let r = ada
        .submit(
            "/dashboard/settings/api-keys",
            "/dashboard/settings/api-keys",
            &[
                ("name", "none"),
                ("read_limit", "0"),
                ("write_limit", "lots"),
            ],
        )
        .await;
    r.expect(422);
    assert_eq!(
        text_of(&r, "#f-scopes-error").as_deref(),
        Some("At least one scope is required.")
    );
    assert_eq!(
        text_of(&r, "#f-read_limit-error").as_deref(),
        Some("Must be between 1 and 100000.")
    );
    assert!(text_of(&r, "#f-write_limit-error").is_some());
    assert!(r.html().select(&sel("input#new-key")).next().is_none());
    assert_eq!(
        jobboard_domain::keys::list(t.db(), t.org_id)
            .await
            .unwrap()
            .len(),
        1
    );
    // "All scopes" makes a key of every scope, with the default limits.
    let r = ada
        .submit(
            "/dashboard/settings/api-keys",
            "/dashboard/settings/api-keys",
            &[("scopes", "*"), ("scopes", "jobs:read")],
        )
        .await;
    r.expect(201);
    let keys = jobboard_domain::keys::list(t.db(), t.org_id).await.unwrap();
    let k = keys.last().unwrap();
    assert_eq!(
        (k.scopes.as_str(), k.read_limit, k.write_limit),
        ("*", 100, 30)
    );
}

async fn the_board_look_is_saved_through_the_organization_update(b: Backend) {
    let t = TestApp::spawn(b).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    jobboard_domain::orgs::create_with(t.db(), "Other", Some("jobs.other.test"))
        .await
        .unwrap();
    let ada = Browser::signed_in(&t, "ada@example.com").await;
    let page = ada.get("/dashboard/settings/board").await;
    page.expect(200);
    assert!(
        page.html()
            .select(&sel("#f-public_posting[checked]"))
            .next()
            .is_some()
    );
    let bad = ada
        .submit(
            "/dashboard/settings/board",
            "/dashboard/settings/board",
            &[
                ("name", "  "),
                ("accent_color", "blue"),
                ("logo_url", "javascript:alert(1)"),
                ("domain", "jobs.other.test"),
            ],
        )
        .await;
    bad.expect(422);
    for field in ["name", "accent_color", "logo_url"] {
        assert!(
            text_of(&bad, &format!("#f-{field}-error")).is_some(),
            "{field}"
        );
    }
    assert_eq!(
        text_of(&bad, "#f-accent_color-error").as_deref(),
        Some("Must be a colour written #rrggbb, e.g. #1d4ed8.")
    );
    // A domain another board answers is refused beside the field.
    let taken = ada
        .submit(
            "/dashboard/settings/board",
            "/dashboard/settings/board",
            &[("name", "Acme jobs"), ("domain", "jobs.other.test")],
        )
        .await;
    taken.expect(422);
    assert_eq!(
        text_of(&taken, "#f-domain-error").as_deref(),
        Some("Another organization's board already answers this domain.")
    );
    let unchanged = jobboard_domain::orgs::get(t.db(), t.org_id).await.unwrap();
    assert_eq!(unchanged.name, "Test org");
    let ok = ada
        .submit(
            "/dashboard/settings/board",
            "/dashboard/settings/board",
            &[
                ("name", "Acme jobs"),
                ("tagline", "Work that matters"),
                ("logo_url", "https://example.com/logo.png"),
                ("accent_color", "#1D4ED8"),
                ("domain", "Jobs.Acme.Test"),
            ],
        )
        .await;
    assert_eq!(
        redirect(&ok),
        "/dashboard/settings/board?notice=domain_claimed"
    );
    let org = jobboard_domain::orgs::get(t.db(), t.org_id).await.unwrap();
    assert_eq!(org.name, "Acme jobs");
    assert_eq!(org.tagline.as_deref(), Some("Work that matters"));
    assert_eq!(org.accent_color.as_deref(), Some("#1d4ed8"));
    assert!(!org.public_posting, "the unticked box turns posting off");
    // The new domain is claimed, in use only once verified (board_domains.rs).
    assert_eq!(org.domain, None);
    let page = ada.get("/dashboard/settings/board").await;
    assert_eq!(
        text_of(&page, ".claimed-domain").as_deref(),
        Some("jobs.acme.test")
    );
    // The header shows the new name; clearing optional fields removes them.
    let page = ada
        .get("/dashboard/settings/board?notice=board_saved")
        .await;
    assert_eq!(text_of(&page, ".brand").as_deref(), Some("Acme jobs"));
    redirect(
        &ada.submit(
            "/dashboard/settings/board",
            "/dashboard/settings/board",
            &[
                ("name", "Acme jobs"),
                ("tagline", ""),
                ("domain", ""),
                ("public_posting", "on"),
            ],
        )
        .await,
    );
    let org = jobboard_domain::orgs::get(t.db(), t.org_id).await.unwrap();
    assert_eq!(
        (org.tagline, org.domain, org.public_posting),
        (None, None, true)
    );
}

async fn staff_users_are_added_and_removed(b: Backend) {
    let t = TestApp::spawn(b).await;
    let me = add_user(&t, t.org_id, "ada@example.com").await;
    let (other_org, _) = t.new_org("Other", "*", 100, 100).await;
    add_user(&t, other_org, "taken@example.com").await;
    let ada = Browser::signed_in(&t, "ada@example.com").await;
    let page = "/dashboard/settings/staff";
    let short = ada
        .submit(
            page,
            page,
            &[("email", "grace@example.com"), ("password", "short")],
        )
        .await;
    short.expect(422);
    assert_eq!(
        text_of(&short, "#f-password-error").as_deref(),
        Some("Must be at least 12 characters.")
    );
    // The typed address is kept, the password never echoed.
    let doc = short.html();
    let email = doc.select(&sel("#f-email")).next().unwrap();
    assert_eq!(email.value().attr("value"), Some("grace@example.com"));
    let pw = doc.select(&sel("#f-password")).next().unwrap();
    assert_eq!(pw.value().attr("value"), Some(""));
    let dup = ada
        .submit(
            page,
            page,
            &[("email", "Taken@Example.com"), ("password", PASSWORD)],
        )
        .await;
    assert_eq!(
        text_of(&dup, "#f-email-error").as_deref(),
        Some(
            "This address cannot be used for a new staff user. If they have an account already, they sign in with it; otherwise choose another address."
        )
    );
    let added = ada
        .submit(
            page,
            page,
            &[("email", "grace@example.com"), ("password", PASSWORD)],
        )
        .await;
    assert_eq!(
        redirect(&added),
        "/dashboard/settings/staff?notice=user_added"
    );
    let grace = Browser::signed_in(&t, "grace@example.com").await;
    let listed = ada.get(page).await;
    assert!(listed.text.contains("grace@example.com"));
    // Nobody removes themselves.
    ada.submit(page, &format!("{page}/{me}/remove"), &[])
        .await
        .expect(409);
    // Removing Grace ends her session at once.
    let grace_id = jobboard_domain::users::list(t.db(), t.org_id)
        .await
        .unwrap()
        .into_iter()
        .find(|u| u.email == "grace@example.com")
        .unwrap()
        .id;
    grace.get("/dashboard").await.expect(200);
    let removed = ada
        .submit(page, &format!("{page}/{grace_id}/remove"), &[])
        .await;
    assert_eq!(
        redirect(&removed),
        "/dashboard/settings/staff?notice=user_removed"
    );
    assert!(redirect(&grace.get("/dashboard").await).starts_with("/dashboard/login"));
    Browser::new(&t)
        .sign_in("grace@example.com", PASSWORD)
        .await
        .expect(422);
    ada.get(page).await.expect(200);
}

async fn changing_ones_password_ends_the_other_sessions(b: Backend) {
    let t = TestApp::spawn(b).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    let here = Browser::signed_in(&t, "ada@example.com").await;
    let elsewhere = Browser::signed_in(&t, "ada@example.com").await;
    let page = "/dashboard/settings/password";
    let new = "a much longer new secret";
    let wrong = here
        .submit(
            page,
            page,
            &[
                ("current_password", "not it at all"),
                ("new_password", new),
                ("new_password_confirm", new),
            ],
        )
        .await;
    wrong.expect(422);
    assert_eq!(
        text_of(&wrong, "#f-current_password-error").as_deref(),
        Some("This is not your current password.")
    );
    let differ = here
        .submit(
            page,
            page,
            &[
                ("current_password", PASSWORD),
                ("new_password", new),
                ("new_password_confirm", "other"),
            ],
        )
        .await;
    assert!(text_of(&differ, "#f-new_password_confirm-error").is_some());
    let ok = here
        .submit(
            page,
            page,
            &[
                ("current_password", PASSWORD),
                ("new_password", new),
                ("new_password_confirm", new),
            ],
        )
        .await;
    assert_eq!(
        redirect(&ok),
        "/dashboard/settings/password?notice=password_changed"
    );
    here.get("/dashboard").await.expect(200);
    assert!(redirect(&elsewhere.get("/dashboard").await).starts_with("/dashboard/login"));
    Browser::new(&t)
        .sign_in("ada@example.com", PASSWORD)
        .await
        .expect(422);
    let b = Browser::new(&t);
    assert_eq!(
        redirect(&b.sign_in("ada@example.com", new).await),
        "/dashboard"
    );
}
