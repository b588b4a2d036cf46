//! Paying for a post (docs/payments.md): opening the processor's checkout session for an
//! order and sending the poster to it, the page the processor sends them back to
//! (`/post-a-job/thanks`), and the signed link that resumes an unpaid order
//! (`/post-a-job/resume/<token>`).

use askama::Template;
use axum::{
    extract::{Path, RawQuery, State},
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Response},
};

use super::{
    Frame,
    gate::{self, Screened},
};
use crate::{
    dashboard::session::see_other,
    error::PageError,
    forms::FormData,
    page::{Chrome, Html},
    site::Site,
};
use jobboard_app::app::AppState;
use jobboard_delivery::processor::{Checkout, Line};
use jobboard_domain::{
    jobs::{self, Job, JobStatus},
    payments::{self, Account, Order, OrderStatus, Price, Settled},
    plans::Plan,
};

#[derive(Template)]
#[template(path = "board/checkout.html")]
struct CheckoutPage {
    chrome: Chrome,
    frame: Frame,
    title: String,
    lines: Vec<String>,
    /// A form that opens a new checkout session: (action, token, button).
    pay: Option<(String, String, String)>,
}

fn binding(site: &Site) -> String {
    format!("board:{}:checkout", site.org.id)
}

fn page(
    site: &Site,
    status: StatusCode,
    title: &str,
    lines: Vec<String>,
    pay: Option<(String, String, String)>,
    origin: &str,
) -> Result<Response, PageError> {
    let tpl = CheckoutPage {
        chrome: Chrome::new(format!("{title} – {}", site.org.name)).with_theme(&site.theme.css),
        frame: Frame::of(site, "/post-a-job"),
        title: title.to_string(),
        lines,
        pay,
    };
    Ok(Html::render(&tpl, Some(&site.theme.csp_hash))?
        .allow_form_action(origin)
        .cache_control("private, no-store")
        .robots("noindex")
        .referrer("no-referrer")
        .status(status)
        .into_response())
}

/// The choices of a post form's price field: (id, label, chosen), the first chosen when
/// none is.
pub(crate) fn price_choices(prices: &[Price], chosen: Option<&str>) -> Vec<(String, String, bool)> {
    let chosen = chosen.filter(|c| !c.is_empty());
    prices
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let id = p.id.to_string();
            let on = chosen == Some(id.as_str()) || (chosen.is_none() && i == 0);
            (id, p.label(), on)
        })
        .collect()
}

/// The organization's account, where it has one (else the page does not exist).
pub(crate) async fn account_of(app: &AppState, site: &Site) -> Result<Account, PageError> {
    payments::account(&app.db, site.org.id)
        .await?
        .ok_or_else(PageError::not_found)
}

/// What an order buys, as its pages name it.
enum Bought {
    /// A post or a featured upgrade of a job, at a price.
    Job(Box<Job>, Price),
    /// A pack of posts.
    Pack(Plan),
}

impl Bought {
    async fn of(app: &AppState, site: &Site, order: &Order) -> Result<Bought, PageError> {
        Ok(match order.job_id {
            Some(id) => Bought::Job(
                Box::new(jobs::get(&app.db, site.org.id, id).await?),
                payments::price_of(&app.db, order).await?,
            ),
            None => Bought::Pack(payments::plan_of(&app.db, order).await?),
        })
    }

    /// The session's line item.
    fn line(&self) -> Line<'_> {
        match self {
            Bought::Job(job, price) => Line::Priced {
                price,
                title: &job.title,
            },
            Bought::Pack(plan) => Line::Processor {
                price_id: plan.processor_price_id.as_deref().unwrap_or(""),
            },
        }
    }
}

/// Opens a checkout session for `order` (its one line item `line`) through `account`
/// and sends the payer to it (`303`); when the processor cannot be reached, says so
/// with the link that resumes the order (a post's job is kept as a draft).
pub(crate) async fn open(
    app: &AppState,
    site: &Site,
    account: &Account,
    order: &Order,
    line: Line<'_>,
) -> Result<Response, PageError> {
    let resume = site.url(&payments::resume_path(&app.db, order).await?);
    let checkout = Checkout {
        order,
        line,
        success_url: site.url("/post-a-job/thanks?session_id={CHECKOUT_SESSION_ID}"),
        cancel_url: resume.clone(),
        customer_email: order.email.as_deref(),
    };
    match app.processor.create_session(account, &checkout).await {
        Ok(session) => {
            payments::session_opened(&app.db, order, &session).await?;
            match session.url.as_deref() {
                Some(url) if url.starts_with("https://") || url.starts_with("http://") => {
                    Ok(see_other(url))
                }
                _ => Err(PageError::internal(&"the checkout session has no page")),
            }
        }
        Err(e) => {
            tracing::warn!(org_id = site.org.id.0, order_id = %order.id, error = %e, "checkout session not opened");
            page(
                site,
                StatusCode::BAD_GATEWAY,
                "The payment could not be started",
                vec![
                    if order.kind == payments::KIND_PACK {
                        "The payment provider could not be reached just now. Nothing was charged."
                            .into()
                    } else {
                        "The payment provider could not be reached just now. Your job is saved, and nothing was charged.".into()
                    },
                    format!("To pay, try again in a moment: {resume}"),
                ],
                None,
                "",
            )
        }
    }
}

/// `GET /post-a-job/thanks?session_id=`: where the processor sends a payer. When the
/// processor's event has not arrived yet, the session is read back and settled here (the
/// same single fulfilment).
pub async fn thanks(
    State(app): State<AppState>,
    site: Site,
    RawQuery(raw): RawQuery,
) -> Result<Response, PageError> {
    let params: Vec<(String, String)> =
        serde_urlencoded::from_str(raw.as_deref().unwrap_or("")).unwrap_or_default();
    let session_id = params
        .iter()
        .find(|(k, _)| k == "session_id")
        .map(|(_, v)| v.as_str())
        .unwrap_or("");
    let Some(mut order) = payments::order_of_session(&app.db, site.org.id, session_id).await?
    else {
        return Err(PageError::not_found());
    };
    if matches!(
        order.status,
        OrderStatus::AwaitingPayment | OrderStatus::Paid
    ) && let Some(account) = payments::account(&app.db, site.org.id).await?
    {
        match app.processor.session(&account, session_id).await {
            Ok(s) => {
                if let Settled::Fulfilled(o) = payments::fulfil(&app.db, &site.org, &s).await? {
                    order = *o;
                }
            }
            Err(e) => tracing::warn!(order_id = %order.id, error = %e, "session not read back"),
        }
        order = payments::order(&app.db, site.org.id, order.id).await?;
    }
    let job = match Bought::of(&app, &site, &order).await? {
        Bought::Job(job, _) => job,
        Bought::Pack(plan) => return pack_thanks(&site, &order, &plan),
    };
    let (title, lines) = match order.status {
        OrderStatus::Fulfilled => (
            "Thank you: your payment was received",
            vec![if job.status == JobStatus::Active {
                format!("“{}” is live on the board now.", job.title)
            } else {
                format!("“{}” will be listed as soon as it has been approved.", job.title)
            }],
        ),
        OrderStatus::Refunded => (
            "This payment was refunded",
            vec![format!("“{}” was paid and then refunded.", job.title)],
        ),
        _ => (
            "Your payment has not arrived yet",
            vec![
                "The payment provider has not confirmed your payment yet. Reload this page in a moment.".into(),
                format!("Your job “{}” is saved and will be listed once it has.", job.title),
            ],
        ),
    };
    page(&site, StatusCode::OK, title, lines, None, "")
}

/// The page a pack's payer comes back to.
fn pack_thanks(site: &Site, order: &Order, plan: &Plan) -> Result<Response, PageError> {
    let (title, lines) = match order.status {
        OrderStatus::Fulfilled => (
            "Thank you: your payment was received",
            vec![
                format!(
                    "{} job posts of “{}” were added to your account.",
                    plan.jobs_included, plan.name
                ),
                "Post a job from your account: each post takes one of them, without a payment.".into(),
            ],
        ),
        OrderStatus::Refunded => (
            "This payment was refunded",
            vec![format!(
                "“{}” was paid and then refunded; its unused posts were taken back.",
                plan.name
            )],
        ),
        _ => (
            "Your payment has not arrived yet",
            vec![
                "The payment provider has not confirmed your payment yet. Reload this page in a moment.".into(),
                format!("The posts of “{}” are added to your account once it has.", plan.name),
            ],
        ),
    };
    page(site, StatusCode::OK, title, lines, None, "")
}

/// `GET /post-a-job/resume/{token}`: an unpaid order, with the button that opens a new
/// checkout for it.
pub async fn resume(
    State(app): State<AppState>,
    site: Site,
    Path(token): Path<String>,
) -> Result<Response, PageError> {
    let Some(order) = payments::order_of_resume(&app.db, site.org.id, &token).await? else {
        return Err(PageError::not_found());
    };
    let origin = account_of(&app, &site).await?.checkout_origin();
    let (title, lines) = match Bought::of(&app, &site, &order).await? {
        Bought::Pack(plan) => (
            "Pay for your pack of job posts",
            vec![
                format!("{}: {} job posts.", plan.name, plan.jobs_included),
                "They are added to your account as soon as the payment arrives.".into(),
            ],
        ),
        Bought::Job(job, price) => resume_lines(&order, &job, &price),
    };
    page(
        &site,
        StatusCode::OK,
        title,
        lines,
        Some((
            format!("/post-a-job/resume/{token}"),
            gate::token(&app, &binding(&site)).await?,
            format!("Pay {}", order.display()),
        )),
        &origin,
    )
}

/// What the resume page of a post or an upgrade says.
fn resume_lines(order: &Order, job: &Job, price: &Price) -> (&'static str, Vec<String>) {
    if order.kind == payments::KIND_FEATURE {
        (
            "Pay to feature your job",
            vec![
                format!(
                    "The featured upgrade of “{}” waits for its payment.",
                    job.title
                ),
                format!(
                    "{}: {}, featured for {} days.",
                    price.name,
                    price.display(),
                    price.featured_days.unwrap_or_default()
                ),
            ],
        )
    } else {
        (
            "Pay to publish your job",
            vec![
                format!("“{}” is saved and waits for its payment.", job.title),
                format!("{}.", price.label()),
            ],
        )
    }
}

/// `POST /post-a-job/resume/{token}`: a new checkout session for the order.
pub async fn pay(
    State(app): State<AppState>,
    site: Site,
    Path(token): Path<String>,
    headers: HeaderMap,
    form: FormData,
) -> Result<Response, PageError> {
    match gate::screen(
        &app,
        &site,
        &headers,
        &form,
        &binding(&site),
        "nothing was charged",
    )
    .await?
    {
        Screened::Passed => {}
        Screened::BadToken => {
            return Ok(see_other(&format!("/post-a-job/resume/{token}")));
        }
        Screened::Refused(res) => return Ok(res),
    }
    let Some(order) = payments::order_of_resume(&app.db, site.org.id, &token).await? else {
        return Err(PageError::not_found());
    };
    let bought = Bought::of(&app, &site, &order).await?;
    let account = account_of(&app, &site).await?;
    open(&app, &site, &account, &order, bought.line()).await
}
