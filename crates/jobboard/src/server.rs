//! Running the service: the API and the background roles (webhook and mail workers, the
//! scheduler, housekeeping), started together by `serve` and stopped gracefully.

use std::{future::Future, net::SocketAddr, time::Duration};

use tokio::{net::TcpListener, sync::watch, task::JoinHandle};

pub use crate::{
    app::{App, AppState, Bootstrapped, bootstrap},
    periodic::every,
};

/// The whole application router: the API with the board's and the dashboard's pages.
pub fn router(app: AppState) -> axum::Router {
    let pages = jobboard_api::Pages {
        routes: jobboard_pages::routes(&app),
        not_found: || {
            use axum::response::IntoResponse;
            jobboard_pages::error::PageError::not_found().into_response()
        },
    };
    jobboard_api::router(app, pages)
}

/// A running server: its address and the handle to stop it.
pub struct Running {
    pub addr: SocketAddr,
    /// The operations listener's address, when `metrics_listen` is set.
    pub metrics_addr: Option<SocketAddr>,
    stop: watch::Sender<bool>,
    done: JoinHandle<anyhow::Result<()>>,
}

impl Running {
    /// Stops gracefully: in-flight requests complete, background tasks finish their step.
    pub async fn shutdown(self) -> anyhow::Result<()> {
        let _ = self.stop.send(true);
        self.done.await?
    }
}

/// Starts the API (when enabled) on `listener`, the operations listener (when
/// `metrics_listen` is set) and the background roles; returns at once.
pub fn spawn(app: AppState, listener: TcpListener) -> anyhow::Result<Running> {
    let addr = listener.local_addr()?;
    let ops = bind_ops(&app)?;
    let metrics_addr = ops.as_ref().map(TcpListener::local_addr).transpose()?;
    let (stop, stop_rx) = watch::channel(false);
    let done = tokio::spawn(run_with(app, listener, ops, wait_for(stop_rx)));
    Ok(Running {
        addr,
        metrics_addr,
        stop,
        done,
    })
}

/// The operations listener, bound now when `metrics_listen` is set.
fn bind_ops(app: &App) -> anyhow::Result<Option<TcpListener>> {
    app.config
        .metrics_listen
        .map(|addr| {
            crate::api::serve::bind(addr).map_err(|e| anyhow::anyhow!("metrics_listen {addr}: {e}"))
        })
        .transpose()
}

async fn wait_for(mut rx: watch::Receiver<bool>) {
    while !*rx.borrow() {
        if rx.changed().await.is_err() {
            return;
        }
    }
}

/// Serves until `shutdown` completes, then drains requests and stops background tasks.
pub async fn run(
    app: AppState,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let ops = bind_ops(&app)?;
    run_with(app, listener, ops, shutdown).await
}

async fn run_with(
    app: AppState,
    listener: TcpListener,
    ops: Option<TcpListener>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    if let Ok(addr) = listener.local_addr() {
        app.set_local_addr(addr);
    }
    let (stop_tx, stop_rx) = watch::channel(false);
    let tasks = spawn_background(&app, stop_rx.clone());
    // Both listeners stop on the one signal.
    let (serving_tx, serving_rx) = watch::channel(false);
    let signal = tokio::spawn(async move {
        shutdown.await;
        let _ = serving_tx.send(true);
    });
    let ops = ops.map(|ops| {
        if let Ok(addr) = ops.local_addr() {
            tracing::info!(address = %addr, "operations endpoints listening");
        }
        tokio::spawn(crate::api::serve::serve(
            ops,
            crate::api::ops_router(app.clone()),
            wait_for(serving_rx.clone()),
        ))
    });
    if app.config.api {
        crate::api::serve::serve(listener, router(app.clone()), wait_for(serving_rx)).await;
    } else {
        drop(listener);
        wait_for(serving_rx).await;
    }
    if let Some(ops) = ops {
        let _ = ops.await;
    }
    signal.abort();
    let _ = stop_tx.send(true);
    for t in tasks {
        let _ = t.await;
    }
    app.flush_key_usage().await;
    app.flush_views().await;
    Ok(())
}

fn spawn_background(app: &AppState, stop: watch::Receiver<bool>) -> Vec<JoinHandle<()>> {
    let mut tasks = Vec::new();
    // Housekeeping: key usage, rate-limit state, ended dashboard sessions, applications
    // past their organization's retention.
    tasks.push(tokio::spawn(every(
        Duration::from_secs(15),
        stop.clone(),
        {
            let app = app.clone();
            move || {
                let app = app.clone();
                async move {
                    app.flush_key_usage().await;
                    if let Err(e) = app.limiter.prune().await {
                        tracing::warn!(error = ?e, "rate-limit prune failed");
                    }
                    if let Err(e) = jobboard_domain::jobs::indexes::keep_up(&app.db).await {
                        tracing::warn!(error = ?e, "search index catch-up failed");
                    }
                    let now = app.clock.now();
                    crate::scheduler::purge(&app, now).await;
                }
            }
        },
    )));
    // The board's visits, recorded in batches by the node that served them.
    tasks.push(tokio::spawn(every(Duration::from_secs(1), stop.clone(), {
        let app = app.clone();
        move || {
            let app = app.clone();
            async move { app.flush_views().await }
        }
    })));
    if app.config.api {
        // The search indexes follow the writes of the last seconds.
        tasks.push(tokio::spawn(every(Duration::from_secs(1), stop.clone(), {
            let app = app.clone();
            move || {
                let app = app.clone();
                async move {
                    if let Err(e) = jobboard_domain::jobs::indexes::follow(&app.db).await {
                        tracing::warn!(error = ?e, "search index follow failed");
                    }
                }
            }
        })));
        // The search indexes of the largest organizations, built while the API serves.
        tasks.push(tokio::spawn({
            let app = app.clone();
            let mut stop = stop.clone();
            async move {
                tokio::select! {
                    r = jobboard_domain::jobs::indexes::warm(&app.db) => {
                        if let Err(e) = r {
                            tracing::warn!(error = ?e, "search index warm-up failed");
                        }
                    }
                    _ = stop.wait_for(|s| *s) => {}
                }
            }
        }));
    }
    if app.config.scheduler {
        // The data work of an upgrade, while the API already serves (reads are correct
        // meanwhile); stopped by shutdown and resumed at the next start.
        tasks.push(tokio::spawn({
            let app = app.clone();
            let mut stop = stop.clone();
            async move {
                let work = async {
                    match jobboard_domain::analytics::finish_upgrade(&app.db).await {
                        Ok(()) => app.upgrades_done.send_replace(true),
                        Err(e) => {
                            tracing::warn!(error = ?e, "upgrade work failed; resumed at the next start");
                            false
                        }
                    };
                };
                tokio::select! {
                    () = work => {}
                    _ = stop.wait_for(|s| *s) => {}
                }
            }
        }));
        tasks.push(tokio::spawn(crate::scheduler::run(
            app.clone(),
            stop.clone(),
        )));
    }
    // Webhook delivery worker, the indexing worker, and the mail worker (when an SMTP
    // server is configured).
    if app.config.worker {
        tasks.push(tokio::spawn(crate::delivery::webhooks::run(
            app.clone(),
            stop.clone(),
        )));
        tasks.push(tokio::spawn(crate::delivery::indexing::run(
            app.clone(),
            stop.clone(),
        )));
        if app.config.mail.enabled() {
            tasks.push(tokio::spawn(crate::delivery::mail::run(
                app.clone(),
                stop.clone(),
            )));
        }
    }
    tasks
}

/// Resolves on SIGTERM or SIGINT.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
    tracing::info!("shutting down: finishing in-flight requests");
}
