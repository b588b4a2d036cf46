//! Running the service: the API and the background roles (webhook and mail workers, the
//! scheduler, housekeeping), started together by `serve` and stopped gracefully.

use std::{future::Future, net::SocketAddr, time::Duration};

use tokio::{net::TcpListener, sync::watch, task::JoinHandle};

pub use crate::{
    app::{App, AppState, bootstrap},
    periodic::every,
};

/// A running server: its address and the handle to stop it.
pub struct Running {
    pub addr: SocketAddr,
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

/// Starts the API (when enabled) on `listener` and the background roles; returns at once.
pub fn spawn(app: AppState, listener: TcpListener) -> anyhow::Result<Running> {
    let addr = listener.local_addr()?;
    let (stop, stop_rx) = watch::channel(false);
    let done = tokio::spawn(run(app, listener, wait_for(stop_rx)));
    Ok(Running { addr, stop, done })
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
    let (stop_tx, stop_rx) = watch::channel(false);
    let tasks = spawn_background(&app, stop_rx.clone());
    let result = if app.config.api {
        let router = crate::http::router(app.clone());
        axum::serve(
            listener,
            router.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .with_graceful_shutdown(shutdown)
        .await
        .map_err(anyhow::Error::from)
    } else {
        drop(listener);
        shutdown.await;
        Ok(())
    };
    let _ = stop_tx.send(true);
    for t in tasks {
        let _ = t.await;
    }
    app.flush_key_usage().await;
    result
}

fn spawn_background(app: &AppState, stop: watch::Receiver<bool>) -> Vec<JoinHandle<()>> {
    let mut tasks = Vec::new();
    // Housekeeping: key usage and rate-limit state.
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
                }
            }
        },
    )));
    if app.config.scheduler {
        // The data work of an upgrade, while the API already serves (reads are correct
        // meanwhile); stopped by shutdown and resumed at the next start.
        tasks.push(tokio::spawn({
            let app = app.clone();
            let mut stop = stop.clone();
            async move {
                let work = async {
                    match app.db.finish_upgrades().await {
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
    // Webhook delivery worker, and the mail worker (when an SMTP server is configured).
    if app.config.worker {
        tasks.push(tokio::spawn(crate::webhooks::run(
            app.clone(),
            stop.clone(),
        )));
        if app.config.mail.enabled() {
            tasks.push(tokio::spawn(crate::mail::run(app.clone(), stop.clone())));
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
