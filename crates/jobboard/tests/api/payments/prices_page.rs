//! Settings > Prices in the dashboard: the account shown with its key masked, a price
//! added (a bad field shown beside it), and archived (no longer offered on the board).

use super::*;
use crate::{
    backends,
    dashboard::{Browser, add_user},
};

backends!(staff_manage_prices_in_the_dashboard);

async fn staff_manage_prices_in_the_dashboard(b: Backend) {
    let sink = SmtpSink::start().await;
    let test = "staff_manage_prices_in_the_dashboard";
    let Some((t, _p, first)) = paid_board(b, test, &sink).await else {
        return;
    };
    add_user(&t, t.org_id, "staff@example.com").await;
    let staff = Browser::signed_in(&t, "staff@example.com").await;
    let page = staff.get("/dashboard/settings/prices").await;
    page.expect(200);
    assert!(
        !page.text.contains(SECRET_KEY),
        "the secret key is never shown"
    );
    assert!(page.text.contains("…ndin"), "its end is, masked");
    assert_eq!(page.html().select(&sel("tr.price")).count(), 1);
    // A bad currency is refused beside its field; nothing is added.
    let r = staff
        .submit(
            "/dashboard/settings/prices",
            "/dashboard/settings/prices",
            &[
                ("name", "Premium"),
                ("amount", "9900"),
                ("currency", "euro"),
                ("days", "60"),
            ],
        )
        .await;
    r.expect(422);
    assert!(r.html().select(&sel("#f-currency-error")).next().is_some());
    let r = staff
        .submit(
            "/dashboard/settings/prices",
            "/dashboard/settings/prices",
            &[
                ("name", "Premium"),
                ("amount", "9900"),
                ("currency", "eur"),
                ("days", "60"),
                ("featured_days", "14"),
            ],
        )
        .await;
    r.expect(303);
    let page = staff.get("/dashboard/settings/prices").await;
    assert!(page.text.contains("99.00 EUR"));
    assert!(
        t.page("/post-a-job")
            .await
            .text
            .contains("Premium: 99.00 EUR")
    );
    // Archived: no longer offered.
    let token = crate::dashboard::csrf_of(&page);
    staff
        .post(
            &format!("/dashboard/settings/prices/{first}/archive"),
            &[("csrf", token.as_str())],
        )
        .await
        .expect(303);
    let board = t.page("/post-a-job").await;
    assert!(!board.text.contains("Standard: 49.00 EUR"));
    assert!(board.text.contains("Premium: 99.00 EUR"));
    assert!(
        staff
            .get("/dashboard/settings/prices")
            .await
            .text
            .contains("archived")
    );
}
