//! Default exposure (issue 25): `/metrics` is not served to anyone by default.

use reqwest::Method;

use crate::{backends, common::*};

backends!(metrics_are_not_served_without_a_token_or_a_listener);

async fn metrics_are_not_served_without_a_token_or_a_listener(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.metrics_token = None).await;
    t.req(Method::GET, "/metrics")
        .no_key()
        .send()
        .await
        .expect_error(404, "route_not_found");
    // Probes stay open.
    t.req(Method::GET, "/healthz")
        .no_key()
        .send()
        .await
        .expect(200);
}
