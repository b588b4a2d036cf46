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
use jobboard_delivery::processor::Checkout;
use jobboard_domain::{
    jobs::{self, JobStatus},
    payments::{self, Account, Order, OrderStatus, Price, Settled},
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

/// Opens a checkout session for `order` (of the job titled `title`) through `account`
/// and sends the poster to it (`303`); when the processor cannot be reached, says so
/// with the link that resumes the order (the job is kept as a draft).
pub(crate) async fn open(
    app: &AppState,
    site: &Site,
    account: &Account,
    order: &Order,
    price: &Price,
    title: &str,
) -> Result<Response, PageError> {
    let resume = site.url(&payments::resume_path(&app.db, order).await?);
    let checkout = Checkout {
        order,
        price,
        title,
        success_url: site.url("/post-a-job/thanks?session_id={CHECKOUT_SESSION_ID}"),
        cancel_url: resume.clone(),
        customer_email: order.email.as_deref(),
    };
    match app.processor.create_session(account, &checkout).await {
        Ok(session) => {
            payments::session_opened(&app.db, site.org.id, order.id, &session).await?;
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
                    "The payment provider could not be reached just now. Your job is saved, and nothing was charged.".into(),
                    format!("To pay and publish it, try again in a moment: {resume}"),
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
    let job = jobs::get(&app.db, site.org.id, order.job_id).await?;
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
    let (job, price) = (
        jobs::get(&app.db, site.org.id, order.job_id).await?,
        payments::price_of(&app.db, &order).await?,
    );
    let origin = account_of(&app, &site).await?.checkout_origin();
    let (title, lines) = if order.kind == payments::KIND_FEATURE {
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
    };
    page(
        &site,
        StatusCode::OK,
        title,
        lines,
        Some((
            format!("/post-a-job/resume/{token}"),
            gate::token(&app, &binding(&site)).await?,
            format!("Pay {}", price.display()),
        )),
        &origin,
    )
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
    let job = jobs::get(&app.db, site.org.id, order.job_id).await?;
    let price = payments::price_of(&app.db, &order).await?;
    let account = account_of(&app, &site).await?;
    open(&app, &site, &account, &order, &price, &job.title).await
}
