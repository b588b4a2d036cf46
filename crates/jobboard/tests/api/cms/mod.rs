//! CMS collections and items: schemas, every field type, item endpoints, publishing
//! windows, the scheduler's expiry, ETags, and a cache that is never stale.

mod cache;
mod collections;
mod items;
mod windows;

use jobboard_store::Ts;
use serde_json::{Value, json};

use crate::common::*;

fn at(offset_ms: i64) -> Ts {
    Ts::now().plus(chrono::Duration::milliseconds(offset_ms))
}

async fn blog(t: &TestApp, visibility: &str) {
    t.post(
        "/cms",
        json!({"slug": "blog", "name": "Blog", "visibility": visibility, "schema": [
            {"name": "title", "type": "text", "required": true},
            {"name": "body", "type": "longtext"},
        ]}),
    )
    .await
    .expect(201);
}

async fn item(t: &TestApp, body: Value) -> Value {
    let r = t.post("/cms/blog", body).await;
    r.expect(201);
    r.body["item"].clone()
}

fn titles(r: &Resp) -> Vec<String> {
    r.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["data"]["title"].as_str().unwrap().to_string())
        .collect()
}
