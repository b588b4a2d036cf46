//! The card processor's API as the board speaks it: Checkout Sessions, created with a
//! form-encoded body (bracketed keys), the account's secret key as a bearer token and an
//! `Idempotency-Key`, and read back by id. The processor's base URL is the account's
//! (tests point it at a stand-in on 127.0.0.1).

use std::time::Duration;

use jobboard_domain::payments::{Account, Order, Price, Session};

/// How long one call to the processor may take.
pub const TIMEOUT: Duration = Duration::from_secs(15);

/// What went wrong talking to the processor (said to the poster in words).
#[derive(Debug)]
pub enum ProcessorError {
    /// Not reached, or no answer in time.
    Unreachable(String),
    /// It answered with an error.
    Refused { status: u16, message: String },
    /// It answered something that is not a session.
    Unreadable,
}

impl std::fmt::Display for ProcessorError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProcessorError::Unreachable(e) => {
                write!(f, "the payment provider was not reached: {e}")
            }
            ProcessorError::Refused { status, message } => {
                write!(f, "the payment provider refused ({status}): {message}")
            }
            ProcessorError::Unreadable => {
                write!(f, "the payment provider's answer was not understood")
            }
        }
    }
}

/// The one line item of a checkout session.
pub enum Line<'a> {
    /// A post or an upgrade at one of the board's prices: its amount and currency go in
    /// the session (`price_data`), named after the price and the job's title.
    Priced { price: &'a Price, title: &'a str },
    /// A pack of posts: a price defined at the processor (the plan's
    /// `processorPriceId`), which says what it costs.
    Processor { price_id: &'a str },
}

/// What a checkout session is opened for.
pub struct Checkout<'a> {
    pub order: &'a Order,
    pub line: Line<'a>,
    /// Where the processor sends the payer after paying (`{CHECKOUT_SESSION_ID}` is
    /// replaced by the processor).
    pub success_url: String,
    /// Where it sends a payer who gives up.
    pub cancel_url: String,
    pub customer_email: Option<&'a str>,
}

/// A client of the processor's API.
#[derive(Clone)]
pub struct Processor {
    client: reqwest::Client,
}

impl Processor {
    pub fn new() -> anyhow::Result<Processor> {
        Ok(Processor {
            client: crate::api_client(TIMEOUT)?,
        })
    }

    /// The form of a new session for `c` (bracketed keys, as the processor documents).
    pub fn form(c: &Checkout<'_>) -> Vec<(String, String)> {
        let o = c.order;
        let mut f: Vec<(String, String)> = vec![
            ("mode".into(), "payment".into()),
            ("client_reference_id".into(), o.id.to_string()),
            ("success_url".into(), c.success_url.clone()),
            ("cancel_url".into(), c.cancel_url.clone()),
            ("line_items[0][quantity]".into(), "1".into()),
        ];
        match c.line {
            Line::Priced { price, title } => f.extend([
                (
                    "line_items[0][price_data][currency]".into(),
                    price.currency.to_ascii_lowercase(),
                ),
                (
                    "line_items[0][price_data][unit_amount]".into(),
                    price.amount.to_string(),
                ),
                (
                    "line_items[0][price_data][product_data][name]".into(),
                    format!("{}: {title}", price.name),
                ),
            ]),
            Line::Processor { price_id } => {
                f.push(("line_items[0][price]".into(), price_id.to_string()));
            }
        }
        if let Some(job) = o.job_id {
            f.push(("metadata[job_id]".into(), job.to_string()));
        }
        if let Some(plan) = o.plan_id {
            f.push(("metadata[plan_id]".into(), plan.to_string()));
        }
        f.extend([
            ("metadata[organization_id]".into(), o.org_id.0.to_string()),
            ("metadata[order_id]".into(), o.id.to_string()),
        ]);
        if let Some(e) = c.customer_email {
            f.push(("customer_email".into(), e.to_string()));
        }
        f
    }

    /// Opens a checkout session for `c`. Retrying the same order attempt is safe: the
    /// idempotency key is the order and the moment it last changed.
    pub async fn create_session(
        &self,
        account: &Account,
        c: &Checkout<'_>,
    ) -> Result<Session, ProcessorError> {
        let url = format!("{}/v1/checkout/sessions", account.api_url);
        let body =
            serde_urlencoded::to_string(Self::form(c)).map_err(|_| ProcessorError::Unreadable)?;
        let res = self
            .client
            .post(url)
            .bearer_auth(&account.secret_key)
            .header(
                "Idempotency-Key",
                format!("{}-{}", c.order.id, c.order.updated_at.micros()),
            )
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await
            .map_err(|e| ProcessorError::Unreachable(e.without_url().to_string()))?;
        read(res).await
    }

    /// The session `id` as the processor has it now.
    pub async fn session(&self, account: &Account, id: &str) -> Result<Session, ProcessorError> {
        let id: String = id
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let url = format!("{}/v1/checkout/sessions/{id}", account.api_url);
        let res = self
            .client
            .get(url)
            .bearer_auth(&account.secret_key)
            .send()
            .await
            .map_err(|e| ProcessorError::Unreachable(e.without_url().to_string()))?;
        read(res).await
    }
}

async fn read(res: reqwest::Response) -> Result<Session, ProcessorError> {
    let status = res.status().as_u16();
    let bytes = res
        .bytes()
        .await
        .map_err(|e| ProcessorError::Unreachable(e.without_url().to_string()))?;
    let v: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|_| ProcessorError::Unreadable)?;
    if !(200..300).contains(&status) {
        let message = v["error"]["message"]
            .as_str()
            .unwrap_or("no message")
            .chars()
            .take(300)
            .collect();
        return Err(ProcessorError::Refused { status, message });
    }
    Session::from_json(&v).ok_or(ProcessorError::Unreadable)
}

#[cfg(test)]
mod tests {
    use super::*;
    use jobboard_domain::{JobId, OrgId, Ts, payments::OrderStatus};
    use uuid::Uuid;

    #[test]
    fn the_form_has_the_documented_keys() {
        let order = Order {
            id: Uuid::nil(),
            org_id: OrgId(7),
            job_id: Some(JobId(Uuid::nil())),
            price_id: Some(Uuid::nil()),
            plan_id: None,
            access_id: None,
            kind: "post".into(),
            member_id: None,
            email: None,
            status: OrderStatus::Draft,
            amount: 4900,
            currency: "EUR".into(),
            session_id: None,
            session_url: None,
            created_at: Ts::from_micros(0),
            updated_at: Ts::from_micros(0),
            fulfilled_at: None,
        };
        let price = Price {
            id: Uuid::nil(),
            org_id: OrgId(7),
            name: "Standard".into(),
            amount: 4900,
            currency: "EUR".into(),
            days: 30,
            featured_days: None,
            archived_at: None,
            created_at: Ts::from_micros(0),
        };
        let c = Checkout {
            order: &order,
            line: Line::Priced {
                price: &price,
                title: "Baker",
            },
            success_url: "https://jobs.example/post-a-job/thanks?session_id={CHECKOUT_SESSION_ID}"
                .into(),
            cancel_url: "https://jobs.example/post-a-job/resume/x".into(),
            customer_email: Some("a@example.com"),
        };
        let form = Processor::form(&c);
        let get = |k: &str| form.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("mode"), Some("payment"));
        assert_eq!(get("line_items[0][price_data][currency]"), Some("eur"));
        assert_eq!(get("line_items[0][price_data][unit_amount]"), Some("4900"));
        assert_eq!(get("metadata[organization_id]"), Some("7"));
        assert_eq!(
            get("client_reference_id"),
            Some(Uuid::nil().to_string().as_str())
        );
        assert_eq!(
            get("line_items[0][price_data][product_data][name]"),
            Some("Standard: Baker")
        );
        assert_eq!(
            get("metadata[job_id]"),
            Some(Uuid::nil().to_string().as_str())
        );
        assert_eq!(get("metadata[plan_id]"), None);
        let pack = Order {
            job_id: None,
            price_id: None,
            plan_id: Some(Uuid::nil()),
            kind: "pack".into(),
            ..order.clone()
        };
        let form = Processor::form(&Checkout {
            order: &pack,
            line: Line::Processor {
                price_id: "price_123",
            },
            ..c
        });
        let get = |k: &str| form.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("line_items[0][price]"), Some("price_123"));
        assert_eq!(get("line_items[0][price_data][unit_amount]"), None);
        assert_eq!(get("metadata[job_id]"), None);
        assert_eq!(
            get("metadata[plan_id]"),
            Some(Uuid::nil().to_string().as_str())
        );
        let encoded = serde_urlencoded::to_string(&form).unwrap();
        assert!(
            encoded.contains("line_items%5B0%5D%5Bquantity%5D=1"),
            "{encoded}"
        );
    }
}
