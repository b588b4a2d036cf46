//! The paid post from the board's form to the published job: once, whatever the events
//! do; refused signatures; expiry and resumption; refunds; another board's session.

use jobboard::delivery::mail::drain;
use jobboard_domain::{members, payments::signature};

use super::*;
use crate::backends;

backends!(
    a_paid_post_is_published_once,
    bad_or_stale_signatures_change_nothing,
    a_lost_event_is_settled_by_the_thanks_page,
    an_expired_checkout_keeps_the_draft_and_resumes,
    refunds_unpublish_as_the_board_says,
    another_boards_session_is_ignored,
);

async fn a_paid_post_is_published_once(b: Backend) {
    let sink = SmtpSink::start().await;
    let test = "a_paid_post_is_published_once";
    let Some((t, p, price)) = paid_board(b, test, &sink).await else {
        return;
    };
    // The form offers the price, and its answer sends the poster to the checkout.
    let page = t.page("/post-a-job").await;
    assert!(
        page.text
            .contains("Standard: 49.00 EUR, listed for 30 days")
    );
    let csp = page.header("content-security-policy").unwrap();
    assert!(
        csp.contains(&format!("form-action 'self' {}", p.base)),
        "{csp}"
    );
    let r = post_paid(&t, "Night baker", &price).await;
    r.expect(303);
    let location = r.header("location").unwrap().to_string();
    assert!(
        location.starts_with(&format!("{}/pay/", p.base)),
        "{location}"
    );
    let session = session_of(&location);
    assert_eq!(
        all_jobs(&t).await,
        [("Night baker".to_string(), "draft".to_string())]
    );
    // What the processor was asked for.
    let sessions = p.sessions().await;
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0]["amount_total"], 4900);
    assert_eq!(sessions[0]["currency"], "eur");
    assert_eq!(sessions[0]["customer_email"], "poster@example.com");
    assert_eq!(
        sessions[0]["metadata"]["organization_id"],
        t.org_id.0.to_string()
    );
    assert!(
        sessions[0]["success_url"]
            .as_str()
            .unwrap()
            .ends_with("/post-a-job/thanks?session_id={CHECKOUT_SESSION_ID}")
    );

    // Paid: the event (signed by the processor's library) publishes the job.
    assert_eq!(p.control("pay", &session).await["delivered"], 200);
    assert_eq!(
        all_jobs(&t).await,
        [("Night baker".to_string(), "active".to_string())]
    );
    // The same event five more times, and the thanks page reading it back: nothing more.
    let again = p.control("resend", &format!("{session}?times=5")).await;
    assert_eq!(again["delivered"], json!([200, 200, 200, 200, 200]));
    let thanks = t
        .page(&format!("/post-a-job/thanks?session_id={session}"))
        .await;
    thanks.expect(200);
    assert!(thanks.text.contains("your payment was received"));
    assert!(thanks.text.contains("is live on the board now"));
    // An event out of order (the session's expiry, after its payment) changes nothing.
    assert_eq!(p.control("expire", &session).await["delivered"], 200);
    assert_eq!(
        all_jobs(&t).await,
        [("Night baker".to_string(), "active".to_string())]
    );
    assert_eq!(
        drain(&t.app).await,
        1,
        "only the job-is-live mail, no resume link"
    );
    let paid = members::payments(t.db(), t.org_id).await.unwrap();
    assert_eq!(paid.len(), 1, "one payment");
    assert_eq!(
        paid[0].processor_session_id.as_deref(),
        Some(session.as_str())
    );
    assert_eq!(paid[0].amount.to_string(), "49");
    assert_eq!(paid[0].currency, "EUR");
    assert_eq!(events_named(&t, "payment.received").await, 1);
    assert_eq!(events_named(&t, "job.approved").await, 1);
    let listed = t.get("/jobs?status=active").await;
    let id = listed.body["data"][0]["id"].as_str().unwrap();
    let job = t.get(&format!("/jobs/{id}")).await;
    let expires =
        jobboard_store::Ts::parse(job.body["data"]["expires_at"].as_str().unwrap()).unwrap();
    let days = (expires.micros() - t.app.clock.now().micros()) / 86_400_000_000;
    assert_eq!(days, 29, "listed for the price's 30 days");
    // The API lists it, with the filters.
    let listed = t.get("/payments").await;
    listed.expect(200);
    assert_eq!(listed.body["meta"]["pagination"]["total_items"], 1);
    let row = &listed.body["data"][0];
    assert_eq!(row["processorSessionId"], session.as_str());
    assert_eq!(row["paymentProvider"], "processor");
    assert_eq!(row["jobId"], id);
    for (query, n) in [
        ("status=succeeded", 1),
        ("status=refunded", 0),
        (&format!("job_id={id}") as &str, 1),
        ("since=2000-01-01", 1),
        ("since=2999-01-01", 0),
    ] {
        let r = t.get(&format!("/payments?{query}")).await;
        r.expect(200);
        assert_eq!(r.body["data"].as_array().unwrap().len(), n, "{query}");
    }
    t.get("/payments?since=yesterday")
        .await
        .expect_error(422, "validation_failed");
    // Staff read it in the dashboard: the list, the month's total, the CSV.
    crate::dashboard::add_user(&t, t.org_id, "staff@example.com").await;
    let staff = crate::dashboard::Browser::signed_in(&t, "staff@example.com").await;
    let page = staff.get("/dashboard/payments").await;
    page.expect(200);
    let doc = page.html();
    assert_eq!(doc.select(&sel("tr.payment")).count(), 1);
    let total: String = doc
        .select(&sel("table.month-totals td.amount"))
        .next()
        .unwrap()
        .text()
        .collect();
    assert_eq!(total, "49 EUR");
    let csv = staff.get("/dashboard/payments.csv").await;
    csv.expect(200);
    assert_eq!(csv.text.lines().count(), 2);
    assert!(csv.text.contains(&session));
}

async fn bad_or_stale_signatures_change_nothing(b: Backend) {
    let sink = SmtpSink::start().await;
    let test = "bad_or_stale_signatures_change_nothing";
    let Some((t, p, price)) = paid_board(b, test, &sink).await else {
        return;
    };
    let r = post_paid(&t, "Baker", &price).await;
    let session = session_of(r.header("location").unwrap());
    p.events(false).await;
    p.control("pay", &session).await;
    let sessions = p.sessions().await;
    let body = json!({"id": "evt_forged", "type": "checkout.session.completed",
                      "data": {"object": sessions[0]}})
    .to_string();
    let now = t.app.clock.now().unix_seconds();
    let send = |header: String| {
        let body = body.clone();
        let url = format!("{}/payments/webhook", t.base);
        async move {
            reqwest::Client::new()
                .post(url)
                .header("stripe-signature", header)
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        }
    };
    let wrong_secret = signature::sign("whsec_other", now, body.as_bytes());
    assert_eq!(send(format!("t={now},v1={wrong_secret}")).await, 400);
    let stale = now - 301;
    let old = signature::sign(WEBHOOK_SECRET, stale, body.as_bytes());
    assert_eq!(send(format!("t={stale},v1={old}")).await, 400);
    assert_eq!(send(String::new()).await, 400);
    assert_eq!(all_jobs(&t).await[0].1, "draft", "nothing changed");
    assert!(
        members::payments(t.db(), t.org_id)
            .await
            .unwrap()
            .is_empty()
    );
    // The same body signed with the right secret, now, is taken.
    let good = signature::sign(WEBHOOK_SECRET, now, body.as_bytes());
    assert_eq!(send(format!("t={now},v1={good}")).await, 200);
    assert_eq!(all_jobs(&t).await[0].1, "active");
}

async fn a_lost_event_is_settled_by_the_thanks_page(b: Backend) {
    let sink = SmtpSink::start().await;
    let test = "a_lost_event_is_settled_by_the_thanks_page";
    let Some((t, p, price)) = paid_board(b, test, &sink).await else {
        return;
    };
    set_org(&t, json!({"paid_posts": "pending"})).await;
    let r = post_paid(&t, "Baker", &price).await;
    let session = session_of(r.header("location").unwrap());
    p.events(false).await;
    // The payer pays on the hosted page and comes back; the event never arrives.
    let back = p.pay_page(&session).await;
    assert!(back.ends_with(&format!("/post-a-job/thanks?session_id={session}")));
    let path = &back[back.find("/post-a-job").unwrap()..];
    let thanks = t.page(path).await;
    thanks.expect(200);
    assert!(
        thanks
            .text
            .contains("will be listed as soon as it has been approved")
    );
    assert_eq!(
        all_jobs(&t).await[0].1,
        "pending",
        "paid posts wait for approval here"
    );
    // The event, when it comes after all, changes nothing.
    p.events(true).await;
    p.control("resend", &format!("{session}?times=2")).await;
    assert_eq!(members::payments(t.db(), t.org_id).await.unwrap().len(), 1);
    assert_eq!(events_named(&t, "payment.received").await, 1);
}

async fn an_expired_checkout_keeps_the_draft_and_resumes(b: Backend) {
    let sink = SmtpSink::start().await;
    let test = "an_expired_checkout_keeps_the_draft_and_resumes";
    let Some((t, p, price)) = paid_board(b, test, &sink).await else {
        return;
    };
    let r = post_paid(&t, "Baker", &price).await;
    let first = session_of(r.header("location").unwrap());
    assert_eq!(p.control("expire", &first).await["delivered"], 200);
    assert_eq!(all_jobs(&t).await[0].1, "draft", "the draft stays");
    // The poster is mailed the link that resumes the order.
    assert_eq!(drain(&t.app).await, 1);
    let mail = sink.received().pop().unwrap();
    assert_eq!(mail.to, ["poster@example.com"]);
    let text = mail.parsed().body_text(0).unwrap().to_string();
    let at = text.find("/post-a-job/resume/").expect("a resume link");
    let link: String = text[at..]
        .chars()
        .take_while(|c| !c.is_whitespace())
        .collect();
    let page = t.page(&link).await;
    page.expect(200);
    assert!(page.text.contains("Pay 49.00 EUR"));
    let token = page
        .html()
        .select(&sel("input[name=_token]"))
        .next()
        .unwrap()
        .value()
        .attr("value")
        .unwrap()
        .to_string();
    let r = crate::board::post_form(
        &t,
        &link,
        &[("_token", token.as_str()), ("reference_code", "")],
        &[],
    )
    .await;
    r.expect(303);
    let second = session_of(r.header("location").unwrap());
    assert_ne!(second, first, "a new session for the same order");
    assert_eq!(p.control("pay", &second).await["delivered"], 200);
    assert_eq!(
        all_jobs(&t).await,
        [("Baker".to_string(), "active".to_string())]
    );
    // A link that was tampered with opens nothing.
    let forged = format!("{}x", &link[..link.len() - 1]);
    t.page(&forged).await.expect(404);
    // Once paid, the link no longer offers a checkout.
    t.page(&link).await.expect(404);
}

async fn refunds_unpublish_as_the_board_says(b: Backend) {
    let sink = SmtpSink::start().await;
    let test = "refunds_unpublish_as_the_board_says";
    let Some((t, p, price)) = paid_board(b, test, &sink).await else {
        return;
    };
    let r = post_paid(&t, "Refunded and gone", &price).await;
    let gone = session_of(r.header("location").unwrap());
    p.control("pay", &gone).await;
    set_org(&t, json!({"refund_unpublishes": false})).await;
    let r = post_paid(&t, "Refunded and kept", &price).await;
    let kept = session_of(r.header("location").unwrap());
    p.control("pay", &kept).await;
    p.control("refund", &kept).await;
    set_org(&t, json!({"refund_unpublishes": true})).await;
    p.control("refund", &gone).await;
    p.control("resend", &format!("{gone}?times=2")).await;
    let all = all_jobs(&t).await;
    assert_eq!(
        all,
        [
            ("Refunded and gone".to_string(), "expired".to_string()),
            ("Refunded and kept".to_string(), "active".to_string()),
        ]
    );
    let paid = members::payments(t.db(), t.org_id).await.unwrap();
    assert!(
        paid.iter()
            .all(|p| p.status == members::PaymentStatus::Refunded)
    );
    assert_eq!(events_named(&t, "job.expired").await, 1);
}

async fn another_boards_session_is_ignored(b: Backend) {
    let sink = SmtpSink::start().await;
    let test = "another_boards_session_is_ignored";
    let Some((t, p, price)) = paid_board(b, test, &sink).await else {
        return;
    };
    let r = post_paid(&t, "Ours", &price).await;
    let session = session_of(r.header("location").unwrap());
    p.events(false).await;
    p.control("pay", &session).await;
    // Another organization with its own board and account, sent our paid session.
    let (other, _) = t.new_org("Other", "*", 100, 100).await;
    let Value::Object(map) = json!({"domain": "other.example.test"}) else {
        unreachable!()
    };
    jobboard_domain::orgs::update(t.db(), other, Input::new(map))
        .await
        .unwrap();
    payments::set_account(
        t.db(),
        other,
        &payments::Account {
            api_url: p.base.clone(),
            secret_key: SECRET_KEY.into(),
            webhook_secret: "whsec_other_board".into(),
        },
    )
    .await
    .unwrap();
    let sessions = p.sessions().await;
    let body = json!({"id": "evt_x", "type": "checkout.session.completed",
                      "data": {"object": sessions[0]}})
    .to_string();
    let now = t.app.clock.now().unix_seconds();
    let sig = signature::sign("whsec_other_board", now, body.as_bytes());
    let status = reqwest::Client::new()
        .post(format!("{}/payments/webhook", t.base))
        .header("host", "other.example.test")
        .header("stripe-signature", format!("t={now},v1={sig}"))
        .body(body)
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status, 200, "handled: nothing to do");
    assert_eq!(all_jobs(&t).await[0].1, "draft");
    assert!(
        members::payments(t.db(), t.org_id)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(members::payments(t.db(), other).await.unwrap().is_empty());
}
