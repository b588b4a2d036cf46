//! The delivery log's retention: finished deliveries older than `delivery_log_days` go
//! with their attempts, younger ones stay, and the scheduler's step does it.

use std::time::Duration;

use super::*;
use crate::{backends, webhook_receiver::Receiver};
use jobboard::delivery::webhooks::drain;

backends!(finished_deliveries_leave_the_log_after_its_days);

async fn finished_deliveries_leave_the_log_after_its_days(b: Backend) {
    let t = spawn_no_worker(b).await;
    assert_eq!(t.app.config.webhooks.delivery_log_days, 90, "the default");
    let rx = Receiver::start().await;
    let sub = subscribe(&t, "job.created", "webhook", &rx.url("/in"), None).await;
    emit(&t, "job.created", samples()[0].1.clone()).await;
    assert_eq!(drain(&t.app).await, 1);
    t.app.clock.advance(Duration::from_secs(60 * 86_400));
    emit(&t, "job.created", samples()[0].1.clone()).await;
    assert_eq!(drain(&t.app).await, 1);
    assert_eq!(deliveries(&t, &sub).await.len(), 2);

    // 89 days after the first: nothing is old enough.
    t.app.clock.advance(Duration::from_secs(29 * 86_400));
    jobboard::scheduler::tick(&t.app).await;
    assert_eq!(deliveries(&t, &sub).await.len(), 2);

    // 91 days after the first, 31 after the second: the first goes, with its attempts.
    t.app.clock.advance(Duration::from_secs(2 * 86_400));
    jobboard::scheduler::tick(&t.app).await;
    let left = deliveries(&t, &sub).await;
    assert_eq!(left.len(), 1);
    let attempts: i64 = jobboard_store::dispatch!(t.db().reader(), p => {
        sqlx::query_scalar("SELECT COUNT(*) FROM webhook_attempts")
            .fetch_one(p)
            .await
            .unwrap()
    });
    assert_eq!(attempts, 1, "the deleted delivery's attempts went with it");
}
