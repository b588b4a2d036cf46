//! OpenAPI links: which operation's answer names the record another operation takes, so
//! clients and stateful testers can follow a created job, item, application or
//! subscription to the operations that read, change and delete it.

use utoipa::openapi::{OpenApi, RefOr, link::Link, path::Operation};

/// A link from the answer of `from` (operation id) to `to`, with the path parameters
/// given as runtime expressions.
struct Follow {
    from: &'static str,
    to: &'static str,
    params: &'static [(&'static str, &'static str)],
}

const fn follow(
    from: &'static str,
    to: &'static str,
    params: &'static [(&'static str, &'static str)],
) -> Follow {
    Follow { from, to, params }
}

const JOB: &[(&str, &str)] = &[("id", "$response.body#/data/id")];
const COLLECTION: &[(&str, &str)] = &[("slug", "$response.body#/collection/slug")];
const ITEM: &[(&str, &str)] = &[
    ("slug", "$request.path.slug"),
    ("id", "$response.body#/item/id"),
];
const DATA_ID: &[(&str, &str)] = &[("id", "$response.body#/data/id")];
const DELIVERY: &[(&str, &str)] = &[
    ("id", "$request.path.id"),
    ("delivery_id", "$response.body#/data/id"),
];

const FOLLOWS: &[Follow] = &[
    follow("create_job", "get_job", JOB),
    follow("create_job", "update_job", JOB),
    follow("create_job", "delete_job", JOB),
    follow("create_job", "create_application", JOB),
    follow("upsert_collection", "list_items", COLLECTION),
    follow("upsert_collection", "post_item", COLLECTION),
    follow("upsert_collection", "get_collection_schema", COLLECTION),
    follow("post_item", "get_item", ITEM),
    follow("post_item", "patch_item", ITEM),
    follow("post_item", "delete_item", ITEM),
    follow("create_application", "get_application", DATA_ID),
    follow("create_application", "update_application", DATA_ID),
    follow("create_webhook", "get_webhook", DATA_ID),
    follow("create_webhook", "update_webhook", DATA_ID),
    follow("create_webhook", "delete_webhook", DATA_ID),
    follow("create_webhook", "list_deliveries", DATA_ID),
    follow("create_webhook", "test_webhook", DATA_ID),
    follow("create_webhook", "recover_webhook", DATA_ID),
    follow("test_webhook", "retry_delivery", DELIVERY),
];

/// Adds the links of [`FOLLOWS`] to every success answer of their source operations.
pub fn add(doc: &mut OpenApi) {
    each_operation(doc, |op| {
        let Some(id) = op.operation_id.clone() else {
            return;
        };
        for (status, response) in op.responses.responses.iter_mut() {
            let RefOr::T(response) = response else {
                continue;
            };
            if !status.starts_with('2') {
                continue;
            }
            for f in FOLLOWS.iter().filter(|f| f.from == id) {
                let mut link = Link::builder()
                    .operation_id(f.to)
                    .description(format!("The `{}` operation on what this created.", f.to));
                for (name, expression) in f.params {
                    link = link.parameter(*name, *expression);
                }
                response
                    .links
                    .insert(f.to.to_string(), RefOr::T(link.build()));
            }
        }
    });
}

/// Calls `f` on every operation of the document.
pub(super) fn each_operation(doc: &mut OpenApi, mut f: impl FnMut(&mut Operation)) {
    for item in doc.paths.paths.values_mut() {
        for op in [
            &mut item.get,
            &mut item.post,
            &mut item.put,
            &mut item.patch,
            &mut item.delete,
        ]
        .into_iter()
        .flatten()
        {
            f(op);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every link names operations that exist, and every parameter it fills is a path
    /// parameter of its target: a renamed operation or parameter fails here.
    #[test]
    fn links_name_real_operations_and_parameters() {
        let doc = serde_json::to_value(crate::openapi()).unwrap();
        let mut ops = std::collections::HashMap::new();
        for item in doc["paths"].as_object().unwrap().values() {
            for op in item.as_object().unwrap().values() {
                let Some(id) = op["operationId"].as_str() else {
                    continue;
                };
                let mut params: Vec<String> = op["parameters"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|p| p["in"] == "path")
                    .map(|p| p["name"].as_str().unwrap().to_string())
                    .collect();
                params.sort();
                ops.insert(id.to_string(), params);
            }
        }
        for f in FOLLOWS {
            assert!(ops.contains_key(f.from), "{}", f.from);
            let mut given: Vec<String> = f.params.iter().map(|(n, _)| n.to_string()).collect();
            given.sort();
            assert_eq!(ops[f.to], given, "{} -> {}", f.from, f.to);
        }
    }
}
