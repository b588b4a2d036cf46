//! Bodies for chat-service targets: `chat_a` (Discord-style embeds) and `chat_b`
//! (Slack-style blocks), built from the webhook payload `{event, organization_id,
//! timestamp, data}` of any event, within those services' limits.

use serde_json::{Map, Value, json};

const A_TITLE: usize = 256;
const A_DESCRIPTION: usize = 4096;
const A_FIELDS: usize = 25;
const A_FIELD_NAME: usize = 256;
const A_FIELD_VALUE: usize = 1024;
const B_HEADER: usize = 150;
const B_SECTION: usize = 3000;
const B_TEXT: usize = 3000;

/// Cuts `s` to at most `max` characters, marking the cut with an ellipsis.
pub fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

fn text(data: &Map<String, Value>, key: &str) -> String {
    match data.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(v) => v.to_string(),
    }
}

/// A one-line summary of the event, e.g. "New job: Rust engineer at Acme".
pub fn title(event: &str, data: &Map<String, Value>) -> String {
    let t = |k| text(data, k);
    match event {
        "job.created" => format!("New job: {} at {}", t("title"), t("company_name")),
        "job.updated" => format!("Job updated: {}", t("title")),
        "job.approved" => format!("Job approved: {}", t("title")),
        "job.expired" => format!("Job expired: {}", t("title")),
        "job.deleted" => format!("Job deleted: {}", t("title")),
        "job.status_changed" => format!(
            "Job status changed: {} ({} → {})",
            t("title"),
            t("previous_status"),
            t("status")
        ),
        "application.received" => {
            format!("New application for {} from {}", t("job_title"), t("name"))
        }
        "application.status_changed" => format!(
            "Application status changed: {} → {}",
            t("previous_status"),
            t("status")
        ),
        "user.created" => format!("New user: {} ({})", t("name"), t("role")),
        "subscription.created" => format!("Subscription started ({})", t("status")),
        "subscription.canceled" => "Subscription canceled".to_string(),
        "subscription.updated" => format!(
            "Subscription updated ({} → {})",
            t("previous_status"),
            t("status")
        ),
        "user.deleted" => format!("User deleted: {}", t("email")),
        "payment.received" => format!("Payment received: {} {}", t("amount"), t("currency")),
        "ping" => "Test delivery from the job board".to_string(),
        other => format!("Event: {other}"),
    }
}

/// `company_name` → "Company name".
fn label(key: &str) -> String {
    let s = key.replace('_', " ");
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => s,
    }
}

fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(value_text).collect::<Vec<_>>().join(", "),
        Value::Null => "—".to_string(),
        other => other.to_string(),
    }
}

/// A link for the event when its data carries one (`url`, made absolute with the public URL).
fn link(data: &Map<String, Value>, public_url: &str) -> Option<String> {
    let url = data.get("url")?.as_str()?;
    let abs = if url.starts_with('/') && !public_url.is_empty() {
        format!("{public_url}{url}")
    } else {
        url.to_string()
    };
    jobboard_domain::links::is_http_url(&abs).then_some(abs)
}

struct Parts<'a> {
    event: &'a str,
    org_id: Value,
    timestamp: String,
    data: Map<String, Value>,
}

fn parts(payload: &Value) -> Parts<'_> {
    Parts {
        event: payload["event"].as_str().unwrap_or(""),
        org_id: payload["organization_id"].clone(),
        timestamp: payload["timestamp"].as_str().unwrap_or("").to_string(),
        data: payload["data"].as_object().cloned().unwrap_or_default(),
    }
}

/// The `chat_a` body: `{content, embeds: [{title, description, url?, fields, timestamp}]}`.
pub fn chat_a(payload: &Value, public_url: &str) -> Value {
    let p = parts(payload);
    let title = title(p.event, &p.data);
    let fields: Vec<Value> = p
        .data
        .iter()
        .filter(|(k, _)| k.as_str() != "url")
        .take(A_FIELDS)
        .map(|(k, v)| {
            let value = value_text(v);
            json!({
                "name": truncate(&label(k), A_FIELD_NAME),
                "value": truncate(if value.is_empty() { "—" } else { &value }, A_FIELD_VALUE),
                "inline": value.chars().count() <= 40,
            })
        })
        .collect();
    let description = format!(
        "Event `{}` in organization {}.",
        p.event,
        value_text(&p.org_id)
    );
    let mut embed = json!({
        "title": truncate(&title, A_TITLE),
        "description": truncate(&description, A_DESCRIPTION),
        "fields": fields,
        "timestamp": p.timestamp,
    });
    if let Some(url) = link(&p.data, public_url) {
        embed["url"] = Value::String(url);
    }
    json!({
        "content": truncate(&title, 2000),
        "embeds": [embed],
    })
}

/// Escapes the characters with a meaning in Slack-style text.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// `s` escaped, cut so that the escaped text has at most `max` characters (never inside an
/// entity).
fn escaped_within(s: &str, max: usize) -> String {
    let mut keep = s.chars().count().min(max);
    loop {
        let out = escape(&truncate(s, keep));
        if out.chars().count() <= max || keep == 0 {
            return out;
        }
        keep -= (out.chars().count() - max).max(1).min(keep);
    }
}

/// The `chat_b` body: `{text, blocks: [header, section (mrkdwn), context]}`.
pub fn chat_b(payload: &Value, public_url: &str) -> Value {
    let p = parts(payload);
    let title = title(p.event, &p.data);
    let mut lines: Vec<String> = p
        .data
        .iter()
        .filter(|(k, _)| k.as_str() != "url")
        .map(|(k, v)| {
            format!(
                "*{}:* {}",
                escape(&label(k)),
                escaped_within(&value_text(v), 1000)
            )
        })
        .collect();
    if let Some(url) = link(&p.data, public_url) {
        lines.push(format!("<{}|Open>", escape(&url)));
    }
    let mut section = if lines.is_empty() {
        escaped_within(&title, B_SECTION)
    } else {
        String::new()
    };
    for line in lines {
        // Whole lines only, so no entity or link is cut.
        if section.chars().count() + line.chars().count() + 1 > B_SECTION {
            break;
        }
        if !section.is_empty() {
            section.push('\n');
        }
        section.push_str(&line);
    }
    json!({
        "text": escaped_within(&title, B_TEXT),
        "blocks": [
            {"type": "header", "text": {"type": "plain_text", "text": escaped_within(&title, B_HEADER), "emoji": false}},
            {"type": "section", "text": {"type": "mrkdwn", "text": section}},
            {"type": "context", "elements": [
                {"type": "mrkdwn", "text": escaped_within(&format!("{} · organization {} · {}", p.event, value_text(&p.org_id), p.timestamp), 3000)}
            ]},
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_and_escaping() {
        let long = "x".repeat(5000);
        let payload = json!({"event": "job.created", "organization_id": 1, "timestamp": "2026-01-01T00:00:00Z",
            "data": {"job_id": "j", "title": long, "company_name": "A & <B>", "status": "active", "location": null}});
        let a = chat_a(&payload, "");
        let e = &a["embeds"][0];
        assert_eq!(e["title"].as_str().unwrap().chars().count(), 256);
        assert!(
            e["fields"].as_array().unwrap().iter().all(|f| f["value"]
                .as_str()
                .unwrap()
                .chars()
                .count()
                <= 1024)
        );
        let b = chat_b(&payload, "");
        let section = b["blocks"][1]["text"]["text"].as_str().unwrap();
        assert!(section.chars().count() <= 3000);
        assert!(section.contains("A &amp; &lt;B&gt;"));
        assert!(!b["text"].as_str().unwrap().contains('<'));
    }
}
