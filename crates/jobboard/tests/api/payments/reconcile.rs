//! The reconciler: sessions still open an hour after they were opened are asked about,
//! and settled as their lost events would have settled them, once.

use std::time::Duration;

use jobboard::delivery::mail::drain;
use jobboard_domain::members;

use super::*;
use crate::backends;

backends!(the_reconciler_settles_sessions_whose_events_were_lost);

/// How many mails with a resume link arrived.
fn resume_mails(sink: &SmtpSink) -> usize {
    sink.received()
        .iter()
        .filter(|m| {
            m.parsed()
                .body_text(0)
                .is_some_and(|t| t.contains("/post-a-job/resume/"))
        })
        .count()
}

async fn the_reconciler_settles_sessions_whose_events_were_lost(b: Backend) {
    let sink = SmtpSink::start().await;
    let test = "the_reconciler_settles_sessions_whose_events_were_lost";
    let Some((t, p, price)) = paid_board(b, test, &sink).await else {
        return;
    };
    p.events(false).await;
    let r = post_paid(&t, "Paid, event lost", &price).await;
    let paid = session_of(r.header("location").unwrap());
    let r = post_paid(&t, "Expired, event lost", &price).await;
    let gone = session_of(r.header("location").unwrap());
    p.control("pay", &paid).await;
    p.control("expire", &gone).await;
    // Within the hour nobody asks: both stay drafts.
    jobboard::scheduler::tick(&t.app).await;
    let all = all_jobs(&t).await;
    assert!(all.iter().all(|(_, s)| s == "draft"), "{all:?}");
    // An hour on, the processor is asked and each is settled.
    t.app.clock.advance(Duration::from_secs(3601));
    jobboard::scheduler::tick(&t.app).await;
    let all = all_jobs(&t).await;
    assert_eq!(
        all,
        [
            ("Expired, event lost".to_string(), "draft".to_string()),
            ("Paid, event lost".to_string(), "active".to_string()),
        ]
    );
    drain(&t.app).await;
    assert_eq!(resume_mails(&sink), 1, "the resume link of the expired one");
    // The events, when they come after all, change nothing.
    p.events(true).await;
    p.control("resend", &format!("{paid}?times=3")).await;
    p.control("resend", &format!("{gone}?times=2")).await;
    assert_eq!(members::payments(t.db(), t.org_id).await.unwrap().len(), 1);
    assert_eq!(events_named(&t, "payment.received").await, 1);
    drain(&t.app).await;
    assert_eq!(resume_mails(&sink), 1, "no second resume mail");
}
