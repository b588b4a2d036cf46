//! Running a step periodically until told to stop (the background roles' loop).

use std::{future::Future, time::Duration};

use tokio::sync::watch;

/// Runs `step` every `period` until `stop` turns true.
pub async fn every<F, Fut>(period: Duration, mut stop: watch::Receiver<bool>, mut step: F)
where
    F: FnMut() -> Fut + Send,
    Fut: Future<Output = ()> + Send,
{
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        if *stop.borrow() {
            return;
        }
        tokio::select! {
            _ = tick.tick() => step().await,
            changed = stop.changed() => if changed.is_err() { return },
        }
    }
}
