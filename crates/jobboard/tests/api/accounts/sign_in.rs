//! Signing in with a mailed link: the journey through the SMTP server, one use, expiry,
//! the same answer for every address, sign-up under each switch, the limits, and sessions
//! that end at sign-out.

use std::time::Duration;

use super::*;
use crate::backends;

backends!(
    a_member_signs_in_with_the_link_from_the_mail,
    links_work_once_and_expire,
    unknown_addresses_get_the_same_answer_and_no_mail,
    open_boards_sign_up_with_the_chosen_role,
    manual_approval_keeps_new_members_pending_until_staff_approve,
    link_requests_are_limited_per_recipient,
    sessions_are_bound_to_their_board,
);

async fn a_member_signs_in_with_the_link_from_the_mail(b: Backend) {
    let sink = SmtpSink::start().await;
    let t = spawn(b, &sink, "closed", "auto", "pending").await;
    member(&t, "Ada@Example.com", "jobseeker", "approved").await;
    let browser = Browser::new(&t);
    // Not signed in: the account sends to the sign-in page.
    let r = browser.get("/account").await;
    r.expect(303);
    assert_eq!(r.header("location"), Some("/account/sign-in"));
    let r = ask_link(&browser, "ada@example.com", None).await;
    r.expect(200);
    assert!(r.text.contains("Check your mail"));
    let link = mailed_link(&t, &sink, "Ada@Example.com").await;
    let mail = mails_to(&sink, "Ada@Example.com").pop().unwrap();
    let subject = mail.parsed().subject().unwrap_or_default().to_string();
    assert_eq!(subject, "Sign in to Test org");
    // The link is built from the service's own address, not the request's host.
    let text = mail.parsed().body_text(0).unwrap().to_string();
    let own = &t.db().outgoing().unwrap().base_url;
    assert!(text.contains(&format!("{own}{link}")), "{text}");
    let r = browser.get(&link).await;
    r.expect(303);
    assert_eq!(r.header("location"), Some("/account"));
    let cookie = r.header("set-cookie").unwrap().to_string();
    assert!(cookie.starts_with("jobboard_member="), "{cookie}");
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax"));
    let home = browser.get("/account").await;
    home.expect(200);
    let doc = home.html();
    let email = doc
        .select(&sel(".member-email"))
        .next()
        .unwrap()
        .text()
        .collect::<String>();
    assert_eq!(email, "Ada@Example.com");
    assert_eq!(home.header("cache-control"), Some("private, no-store"));
    // Signing out ends the session: the cookie no longer opens the account, even when
    // sent again.
    let session = cookie.split(';').next().unwrap().to_string();
    let token = input(&home, "csrf");
    browser
        .post("/account/sign-out", &[("csrf", token.as_str())])
        .await
        .expect(303);
    browser.get("/account").await.expect(303);
    let replay = Browser::new(&t)
        .client
        .get(format!("{}/account", t.base))
        .header("cookie", session)
        .header("accept", "text/html")
        .send()
        .await
        .unwrap();
    assert_eq!(replay.status(), 303);
    assert_eq!(
        replay.headers()["location"].to_str().unwrap(),
        "/account/sign-in?ended=1"
    );
}

async fn links_work_once_and_expire(b: Backend) {
    let sink = SmtpSink::start().await;
    let t = spawn(b, &sink, "closed", "auto", "pending").await;
    member(&t, "bo@example.com", "jobseeker", "approved").await;
    let first = Browser::new(&t);
    ask_link(&first, "bo@example.com", None).await.expect(200);
    let link = mailed_link(&t, &sink, "bo@example.com").await;
    first.get(&link).await.expect(303);
    // Used: refused, and no session for whoever opens it again.
    let other = Browser::new(&t);
    let r = other.get(&link).await;
    r.expect(404);
    assert!(r.text.contains("This link does not work"));
    other.get("/account").await.expect(303);
    // A link older than 15 minutes is refused.
    ask_link(&first, "bo@example.com", None).await.expect(200);
    let late = mailed_link(&t, &sink, "bo@example.com").await;
    assert_ne!(late, link);
    t.app.clock.advance(Duration::from_secs(15 * 60 + 1));
    Browser::new(&t).get(&late).await.expect(404);
    // A made-up token is the same refusal.
    Browser::new(&t)
        .get("/account/sign-in/not-a-token")
        .await
        .expect(404);
}

async fn unknown_addresses_get_the_same_answer_and_no_mail(b: Backend) {
    let sink = SmtpSink::start().await;
    let t = spawn(b, &sink, "closed", "auto", "pending").await;
    member(&t, "known@example.com", "jobseeker", "approved").await;
    let browser = Browser::new(&t);
    let known = ask_link(&browser, "known@example.com", None).await;
    let unknown = ask_link(&browser, "nobody@example.com", None).await;
    known.expect(200);
    unknown.expect(200);
    assert_eq!(
        known.text.replace("known@example.com", "X"),
        unknown.text.replace("nobody@example.com", "X"),
        "the answers differ only by the address typed"
    );
    drain(&t.app).await;
    assert_eq!(mails_to(&sink, "known@example.com").len(), 1);
    assert!(mails_to(&sink, "nobody@example.com").is_empty());
    // Closed: no member was made, and nothing was emitted.
    assert_eq!(events_named(&t, "user.created").await, 1);
    // A bad address is shown beside its field.
    let r = ask_link(&browser, "not an address", None).await;
    r.expect(422);
    assert!(r.html().select(&sel("#e-email")).next().is_some());
}

async fn open_boards_sign_up_with_the_chosen_role(b: Backend) {
    let sink = SmtpSink::start().await;
    let t = spawn(b, &sink, "open", "auto", "pending").await;
    let rx = receiver_of(&t, "user.created").await;
    let browser = Browser::new(&t);
    let page = browser.get("/account/sign-in").await;
    assert!(page.html().select(&sel("input[name=role]")).count() == 2);
    ask_link(&browser, "new.employer@example.com", Some("employer"))
        .await
        .expect(200);
    // Asking is not signing up: nobody exists before the link is opened.
    assert_eq!(events_named(&t, "user.created").await, 0);
    let link = mailed_link(&t, &sink, "new.employer@example.com").await;
    let mail = mails_to(&sink, "new.employer@example.com").pop().unwrap();
    assert_eq!(
        mail.parsed().subject().unwrap(),
        "Finish signing up at Test org"
    );
    let r = browser.get(&link).await;
    r.expect(303);
    assert_eq!(r.header("location"), Some("/account?welcome=1"));
    let r = t.get("/members/new.employer@example.com").await;
    r.expect(200);
    assert_eq!(r.body["data"]["member"]["role"], "employer");
    assert_eq!(r.body["data"]["member"]["approvalStatus"], "approved");
    assert_eq!(events_named(&t, "user.created").await, 1);
    assert_eq!(delivered(&t, &rx).await, ["user.created"], "delivered once");
    // The next sign-in finds the member: no second one, no second event.
    let again = signed_in(&t, &sink, "new.employer@example.com", Some("jobseeker")).await;
    again.get("/account").await.expect(200);
    assert_eq!(events_named(&t, "user.created").await, 1);
    assert_eq!(delivered(&t, &rx).await, ["user.created"]);
    let r = t.get("/members/new.employer@example.com").await;
    assert_eq!(r.body["data"]["member"]["role"], "employer");
    // A link mailed while the board was open creates nobody once it is closed.
    ask_link(&browser, "late@example.com", None)
        .await
        .expect(200);
    let late = mailed_link(&t, &sink, "late@example.com").await;
    switches(&t, "closed", "auto", "pending").await;
    Browser::new(&t).get(&late).await.expect(404);
    t.get("/members/late@example.com").await.expect(404);
}

async fn manual_approval_keeps_new_members_pending_until_staff_approve(b: Backend) {
    let sink = SmtpSink::start().await;
    let t = spawn(b, &sink, "open", "manual", "pending").await;
    let member = signed_in(&t, &sink, "wait@example.com", Some("employer")).await;
    let r = t.get("/members/wait@example.com").await;
    assert_eq!(r.body["data"]["member"]["approvalStatus"], "pending");
    let id = r.body["data"]["member"]["id"].as_str().unwrap().to_string();
    // Pending: the form says why, and nothing is stored.
    let page = member.get("/account/jobs/new").await;
    page.expect(200);
    assert!(page.text.contains("waits for the board"), "{}", page.text);
    let token = input(&member.get("/account").await, "csrf");
    let r = member
        .post(
            "/account/jobs/new",
            &[
                ("csrf", token.as_str()),
                ("title", "Baker"),
                ("description", "Bread."),
                ("company_name", "Crumbs"),
            ],
        )
        .await;
    r.expect(409);
    let all = t.get("/jobs?status=pending,active,expired,draft").await;
    assert_eq!(
        all.body["data"].as_array().unwrap().len(),
        0,
        "nothing stored"
    );
    // Staff approve the member in the dashboard.
    crate::dashboard::add_user(&t, t.org_id, "staff@example.com").await;
    let staff = Browser::signed_in(&t, "staff@example.com").await;
    let r = staff
        .submit(
            &format!("/dashboard/members/{id}"),
            &format!("/dashboard/members/{id}/approval"),
            &[("approval_status", "approved")],
        )
        .await;
    r.expect(303);
    let r = t.get("/members/wait@example.com").await;
    assert_eq!(r.body["data"]["member"]["approvalStatus"], "approved");
    // Approving emits nothing a sync updating the member would not.
    assert_eq!(event_names(&t).await, ["user.created"]);
    let r = member
        .post(
            "/account/jobs/new",
            &[
                ("csrf", token.as_str()),
                ("title", "Baker"),
                ("description", "Bread."),
                ("company_name", "Crumbs"),
            ],
        )
        .await;
    r.expect(303);
}

async fn link_requests_are_limited_per_recipient(b: Backend) {
    let sink = SmtpSink::start().await;
    let t = spawn(b, &sink, "closed", "auto", "pending").await;
    member(&t, "many@example.com", "jobseeker", "approved").await;
    let browser = Browser::new(&t);
    for _ in 0..jobboard_domain::accounts::PER_RECIPIENT {
        ask_link(&browser, "many@example.com", None)
            .await
            .expect(200);
    }
    let r = ask_link(&browser, "MANY@example.com", None).await;
    r.expect(429);
    assert!(r.header("retry-after").is_some());
    // An unknown address is limited alike (nothing tells them apart).
    for _ in 0..jobboard_domain::accounts::PER_RECIPIENT {
        ask_link(&browser, "ghost@example.com", None)
            .await
            .expect(200);
    }
    ask_link(&browser, "ghost@example.com", None)
        .await
        .expect(429);
    drain(&t.app).await;
    assert_eq!(
        mails_to(&sink, "many@example.com").len(),
        jobboard_domain::accounts::PER_RECIPIENT as usize
    );
}

async fn sessions_are_bound_to_their_board(b: Backend) {
    let sink = SmtpSink::start().await;
    let t = spawn(b, &sink, "closed", "auto", "pending").await;
    member(&t, "one@example.com", "jobseeker", "approved").await;
    let browser = signed_in(&t, &sink, "one@example.com", None).await;
    browser.get("/account").await.expect(200);
    // Another organization's board (its own domain) does not know the session.
    let (other, _) = t.new_org("Other board", "*", 100, 100).await;
    let body = json!({"domain": "other.example.test"});
    let Value::Object(map) = body else {
        unreachable!()
    };
    orgs::update(t.db(), other, Input::new(map)).await.unwrap();
    let r = browser
        .client
        .get(format!("{}/account", t.base))
        .header("host", "other.example.test")
        .header("accept", "text/html")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
}
