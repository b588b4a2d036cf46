//! The employer mail and application retention settings, saved on the board page.

use super::*;
use crate::backends;

backends!(
    employer_mail_settings_are_saved_on_the_board_page,
    application_retention_is_set_on_the_board_page
);

async fn employer_mail_settings_are_saved_on_the_board_page(b: Backend) {
    let t = TestApp::spawn(b).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    let ada = Browser::signed_in(&t, "ada@example.com").await;
    let page = ada.get("/dashboard/settings/board").await;
    let doc = page.html();
    assert!(
        doc.select(&sel("#f-mail_job_live[checked]"))
            .next()
            .is_some()
    );
    assert_eq!(
        doc.select(&sel("#f-mail_expiry_days"))
            .next()
            .unwrap()
            .value()
            .attr("value"),
        Some("3")
    );
    let token = csrf_of(&page);
    let r = ada
        .post(
            "/dashboard/settings/board",
            &[
                ("name", "Test org"),
                ("mail_expiry_days", "7"),
                ("mail_applications", "on"),
                ("csrf", &token),
            ],
        )
        .await;
    redirect(&r);
    let org = jobboard_domain::orgs::get(t.db(), t.org_id).await.unwrap();
    assert!(!org.mail_job_live, "an unticked box turns it off");
    assert_eq!(org.mail_expiry_days, 7);
    assert!(org.mail_applications);
    let r = ada
        .post(
            "/dashboard/settings/board",
            &[
                ("name", "Test org"),
                ("mail_expiry_days", "90"),
                ("csrf", &token),
            ],
        )
        .await;
    r.expect(422);
    assert!(
        r.html()
            .select(&sel("#f-mail_expiry_days-error"))
            .next()
            .is_some()
    );
    assert_eq!(
        jobboard_domain::orgs::get(t.db(), t.org_id)
            .await
            .unwrap()
            .mail_expiry_days,
        7
    );
}

async fn application_retention_is_set_on_the_board_page(b: Backend) {
    let t = TestApp::spawn(b).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    let ada = Browser::signed_in(&t, "ada@example.com").await;
    let page = ada.get("/dashboard/settings/board").await;
    assert_eq!(
        page.html()
            .select(&sel("#f-keep_applications_days"))
            .next()
            .unwrap()
            .value()
            .attr("value"),
        Some("0"),
        "applications are kept by default"
    );
    let token = csrf_of(&page);
    let save = |days: &'static str| {
        let ada = &ada;
        let token = token.clone();
        async move {
            ada.post(
                "/dashboard/settings/board",
                &[
                    ("name", "Test org"),
                    ("keep_applications_days", days),
                    ("csrf", &token),
                ],
            )
            .await
        }
    };
    redirect(&save("180").await);
    let kept = |t: &TestApp| {
        let db = t.db().clone();
        let org = t.org_id;
        async move {
            jobboard_domain::orgs::get(&db, org)
                .await
                .unwrap()
                .keep_applications_days
        }
    };
    assert_eq!(kept(&t).await, 180);
    let r = save("5000").await;
    r.expect(422);
    assert!(
        r.html()
            .select(&sel("#f-keep_applications_days-error"))
            .next()
            .is_some()
    );
    assert_eq!(kept(&t).await, 180);
    // The applications of ended jobs: kept by default, set beside the other.
    let page = ada.get("/dashboard/settings/board").await;
    let field = page.html();
    let field = field
        .select(&sel("#f-keep_applications_after_job_days"))
        .next()
        .unwrap();
    assert_eq!(field.value().attr("value"), Some("0"));
    let r = ada
        .post(
            "/dashboard/settings/board",
            &[
                ("name", "Test org"),
                ("keep_applications_days", "180"),
                ("keep_applications_after_job_days", "30"),
                ("csrf", &csrf_of(&page)),
            ],
        )
        .await;
    redirect(&r);
    let org = jobboard_domain::orgs::get(t.db(), t.org_id).await.unwrap();
    assert_eq!(
        (
            org.keep_applications_days,
            org.keep_applications_after_job_days
        ),
        (180, 30)
    );
}
