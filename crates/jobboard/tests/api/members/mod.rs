//! `POST /members/sync`: members, access records, payments, their events, atomicity,
//! concurrency and tenancy.

mod access;
mod identities;
mod payments;
mod records;

use serde_json::{Value, json};

use crate::{common::*, plans::create_plan};

async fn events(t: &TestApp) -> Vec<(String, Value)> {
    jobboard_store::events::list_for_org(t.db(), t.org_id)
        .await
        .unwrap()
        .into_iter()
        .map(|e| (e.event_type, e.data.0))
        .collect()
}

async fn sync(t: &TestApp, body: Value) -> Resp {
    t.post("/members/sync", body).await
}

async fn pro_plan(t: &TestApp) -> Value {
    create_plan(
        t,
        json!({"name": "Pro", "processorPriceId": "price_pro", "altProcessorPlanId": "P-PRO",
               "price": 49.99, "currency": "USD", "interval": "month", "jobsIncluded": 5}),
    )
    .await
}

/// Runs the requests concurrently and returns their responses in order.
pub async fn futures_join_all<F: std::future::Future<Output = Resp>>(
    futs: impl Iterator<Item = F>,
) -> Vec<Resp> {
    let mut pinned: Vec<std::pin::Pin<Box<F>>> = futs.map(Box::pin).collect();
    let mut results: Vec<Option<Resp>> = pinned.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        for (f, slot) in pinned.iter_mut().zip(results.iter_mut()) {
            if slot.is_none()
                && let std::task::Poll::Ready(r) = f.as_mut().poll(cx)
            {
                *slot = Some(r);
            }
        }
        if results.iter().all(Option::is_some) {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await;
    results.into_iter().map(Option::unwrap).collect()
}
