//! The employer mail settings, saved on the board page.

use super::*;
use crate::backends;

backends!(employer_mail_settings_are_saved_on_the_board_page);

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
