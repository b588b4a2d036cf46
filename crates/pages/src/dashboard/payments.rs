//! Payments: the organization's payments, newest first (as `GET /api/payments` reads
//! them), the succeeded ones summed per month and currency over the last twelve months,
//! and the whole list as CSV.

use askama::Template;
use axum::{
    extract::{RawQuery, State},
    response::Response,
};

use super::{Nav, Staff, chrome, params, render, when};
use crate::{
    error::PageError,
    page::{Chrome, csv_download},
};
use jobboard_app::app::AppState;
use jobboard_core::text::push_csv_row;
use jobboard_domain::{
    QueryInput,
    members::Payment,
    payments::{self, MonthTotal, PaymentListQuery},
};

/// Payments per page.
const PER_PAGE: i64 = 50;

struct Row {
    when: String,
    amount: String,
    status: &'static str,
    provider: &'static str,
    job_id: Option<String>,
    member: String,
}

#[derive(Template)]
#[template(path = "dashboard/payments.html")]
struct PaymentsPage {
    chrome: Chrome,
    nav: Nav,
    totals: Vec<MonthTotal>,
    rows: Vec<Row>,
    total: i64,
    page: i64,
    pages: i64,
}

fn query(page: i64, per_page: i64) -> Result<PaymentListQuery, PageError> {
    let mut qi = QueryInput::parse(Some(&format!("page={page}&per_page={per_page}")));
    let q = PaymentListQuery::read(&mut qi);
    qi.finish()?;
    Ok(q)
}

/// `GET /dashboard/payments?page=`
pub async fn list(
    staff: Staff,
    State(app): State<AppState>,
    RawQuery(raw): RawQuery,
) -> Result<Response, PageError> {
    let page = params(raw.as_deref())
        .get("page")
        .and_then(|v| v.parse::<i64>().ok())
        .unwrap_or(1)
        .clamp(1, 1_000_000);
    let org = staff.org_id();
    let (rows, total) = payments::list(&app.db, org, &query(page, PER_PAGE)?).await?;
    let totals = payments::month_totals(&app.db, org, 12).await?;
    render(&PaymentsPage {
        chrome: chrome("Payments"),
        nav: Nav::new(&staff, "payments"),
        totals,
        rows: rows
            .into_iter()
            .map(|p: Payment| Row {
                when: when(&p.created_at),
                amount: format!("{} {}", p.amount, p.currency),
                status: p.status.as_str(),
                provider: p.payment_provider.as_str(),
                job_id: p.job_id.map(|j| j.to_string()),
                member: p.user_id.map(|m| m.to_string()).unwrap_or_default(),
            })
            .collect(),
        total,
        page,
        pages: (total + PER_PAGE - 1) / PER_PAGE,
    })
}

/// `GET /dashboard/payments.csv`: every payment, newest first.
pub async fn csv(staff: Staff, State(app): State<AppState>) -> Result<Response, PageError> {
    let mut out = String::from(
        "id,created_at,amount,currency,status,payment_provider,job_id,plan_id,member_id,processor_session_id,processor_payment_intent_id\r\n",
    );
    let mut page = 1;
    loop {
        let (rows, total) = payments::list(&app.db, staff.org_id(), &query(page, 100)?).await?;
        for p in &rows {
            let cells = [
                p.id.to_string(),
                p.created_at.to_string(),
                p.amount.to_string(),
                p.currency.clone(),
                p.status.as_str().to_string(),
                p.payment_provider.as_str().to_string(),
                p.job_id.map(|j| j.to_string()).unwrap_or_default(),
                p.plan_id.map(|j| j.to_string()).unwrap_or_default(),
                p.user_id.map(|m| m.to_string()).unwrap_or_default(),
                p.processor_session_id.clone().unwrap_or_default(),
                p.processor_payment_intent_id.clone().unwrap_or_default(),
            ];
            push_csv_row(&mut out, &cells);
        }
        if page * 100 >= total || rows.is_empty() {
            break;
        }
        page += 1;
    }
    Ok(csv_download(out, "payments.csv", "no-store"))
}
