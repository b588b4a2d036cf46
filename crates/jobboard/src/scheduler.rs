//! The scheduler: time-driven transitions (job expiry, CMS publishing windows, access
//! records whose `cancelAt` has come, employers' expiry reminders, job alerts), and the
//! occasional pruning of the search indexes' change log (every minute), the audit log,
//! the webhook delivery log, search engine notices and unconfirmed job alerts (hourly),
//! and the reconciliation of paid posts whose checkout is still open after an hour
//! (every five minutes), each paced by the node's
//! [`App::cadence`].
//!
//! [`App::cadence`]: crate::app::App::cadence
//!
//! Every step is an ordinary storage call that moves records whose moment has passed,
//! each in its own transaction together with its events, guarded by the record's current
//! state (`... WHERE status = 'active' AND expires_at <= now`). When several nodes run the
//! scheduler on one PostgreSQL database, a record therefore moves, and its events fire,
//! exactly once: the node that loses the race updates no row and emits nothing.

use std::time::Duration;

use tokio::sync::watch;

use crate::app::AppState;

/// How often the scheduler looks for due transitions.
pub const PERIOD: Duration = Duration::from_secs(1);
/// How often the change log of the search indexes is pruned.
const MINUTE: Duration = Duration::from_secs(60);
/// How often the audit log and the delivery log are pruned (each node; the first pass
/// after a start prunes at once).
const HOUR: Duration = Duration::from_secs(3600);
/// How often the processor is asked about checkout sessions open for over an hour.
const RECONCILE_EVERY: Duration = Duration::from_secs(300);

/// Counts (in `/metrics`) and logs the rows one retention step deleted, of `records`
/// (one of `jobboard_app::metrics::RETAINED`).
pub(crate) fn retained(app: &AppState, records: &'static str, done: jobboard_domain::Result<u64>) {
    match done {
        Ok(0) => {}
        Ok(n) => {
            app.metrics.retention.add(records, n);
            tracing::info!(deleted = n, records, "records past their retention deleted");
        }
        Err(e) => tracing::warn!(error = ?e, records, "retention step failed"),
    }
}

/// Every node's own purge (every 15 seconds, with or without the scheduler): the
/// sign-in records past their time and the applications past their organization's
/// retention, counted and logged.
pub async fn purge(app: &AppState, now: jobboard_domain::Ts) {
    let done = jobboard_domain::retention::purge_sign_in(&app.db, now, &app.config.dashboard);
    retained(app, "sign_in", done.await);
    let done = jobboard_domain::retention::purge_applications(&app.db, now);
    retained(app, "applications", done.await);
}

/// Runs one pass of every scheduled step; returns how many records moved.
pub async fn tick(app: &AppState) -> u64 {
    let now = app.clock.now();
    let mut moved = 0;
    match jobboard_domain::jobs::expire_due(&app.db, now).await {
        Ok(n) => moved += n,
        Err(e) => tracing::warn!(error = ?e, "job expiry step failed"),
    }
    match jobboard_domain::jobs::unfeature_due(&app.db, now).await {
        Ok(n) => moved += n,
        Err(e) => tracing::warn!(error = ?e, "featured job end step failed"),
    }
    match jobboard_domain::cms::expire_due(&app.db, now).await {
        Ok(n) => moved += n,
        Err(e) => tracing::warn!(error = ?e, "CMS expiry step failed"),
    }
    match jobboard_domain::members::cancel_due(&app.db, now).await {
        Ok(n) => moved += n,
        Err(e) => tracing::warn!(error = ?e, "subscription cancellation step failed"),
    }
    match jobboard_domain::jobs::remind_expiring(&app.db, now).await {
        Ok(n) => moved += n,
        Err(e) => tracing::warn!(error = ?e, "expiry reminder step failed"),
    }
    if app.cadence.due("job changes", now, MINUTE)
        && let Err(e) = jobboard_domain::jobs::indexes::prune_changes(&app.db, now).await
    {
        tracing::warn!(error = ?e, "job change pruning step failed");
    }
    if app.cadence.due("audit log", now, HOUR) {
        let done = jobboard_domain::audit::prune_due(&app.db, now, app.config.audit_keep_days);
        retained(app, "audit_log", done.await);
    }
    if app.cadence.due("delivery log", now, HOUR) {
        let days = app.config.webhooks.delivery_log_days;
        let done = jobboard_domain::retention::purge_delivery_log(&app.db, now, days);
        retained(app, "delivery_log", done.await);
    }
    if app.cadence.due("index notices", now, HOUR) {
        let done = jobboard_domain::retention::purge_index_notices(&app.db, now);
        retained(app, "search_notices", done.await);
    }
    if app.cadence.due("unconfirmed alerts", now, HOUR) {
        let done = jobboard_domain::retention::purge_unconfirmed_alerts(&app.db, now);
        retained(app, "unconfirmed_alerts", done.await);
    }
    if app.cadence.due("imports", now, MINUTE) {
        start_imports(app);
    }
    if app.cadence.due("payments", now, RECONCILE_EVERY) {
        moved += reconcile(app, now).await;
    }
    match jobboard_domain::alerts::run(&app.db, now, app.config.alert_hour).await {
        Ok(n) => moved += n,
        Err(e) => tracing::warn!(error = ?e, "job alert step failed"),
    }
    moved
}

/// Runs the import sources that are due in a task of their own (a large source takes
/// a while; the other steps do not wait for it), one such task at a time per node. Each
/// source is claimed first, so nodes share them.
fn start_imports(app: &AppState) {
    use std::sync::atomic::{AtomicBool, Ordering};
    static RUNNING: AtomicBool = AtomicBool::new(false);
    if RUNNING.swap(true, Ordering::AcqRel) {
        return;
    }
    let app = app.clone();
    tokio::spawn(async move {
        if let Err(e) = jobboard_delivery::imports::run_due(&app.db, &app.imports).await {
            tracing::warn!(error = ?e, "import step failed");
        }
        RUNNING.store(false, Ordering::Release);
    });
}

/// Asks the card processor about the checkout sessions still open an hour after they
/// were opened, and settles them as their events would have (paid: fulfilled once;
/// expired: the draft kept and its resume link mailed), so a lost event loses no sale.
/// Returns how many orders moved.
async fn reconcile(app: &AppState, now: jobboard_store::Ts) -> u64 {
    use jobboard_domain::payments::{self, Settled};
    let before = now.earlier_by(Duration::from_secs(3600));
    let open = match payments::open_before(&app.db, before, 100).await {
        Ok(o) => o,
        Err(e) => {
            tracing::warn!(error = ?e, "payment reconciliation step failed");
            return 0;
        }
    };
    let mut moved = 0;
    for order in open {
        let (Ok(org), Ok(Some(account))) = (
            jobboard_domain::orgs::get(&app.db, order.org_id).await,
            payments::account(&app.db, order.org_id).await,
        ) else {
            continue;
        };
        let Some(id) = order.session_id.as_deref() else {
            continue;
        };
        let session = match app.processor.session(&account, id).await {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(order_id = %order.id, error = %e, "open session not read back");
                continue;
            }
        };
        let outcome = if session.is_paid() {
            payments::fulfil(&app.db, &org, &session)
                .await
                .map(|s| matches!(s, Settled::Fulfilled(_)))
        } else if session.status == "expired" {
            payments::expired(&app.db, &org, &session).await
        } else {
            Ok(false)
        };
        match outcome {
            Ok(true) => moved += 1,
            Ok(false) => {}
            Err(e) => tracing::warn!(order_id = %order.id, error = ?e, "open session not settled"),
        }
    }
    moved
}

/// Runs [`tick`] every [`PERIOD`] until `stop`.
pub async fn run(app: AppState, stop: watch::Receiver<bool>) {
    crate::periodic::every(PERIOD, stop, || {
        let app = app.clone();
        async move {
            tick(&app).await;
            app.scheduler_passes.send_modify(|n| *n += 1);
        }
    })
    .await;
}
