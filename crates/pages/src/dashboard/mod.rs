//! The dashboard (`/dashboard`): where an organization's staff sign in and run their
//! board. Every page needs a session ([`session::Staff`]) and sees only the session's
//! organization; every state-changing form carries a token bound to the session and is
//! refused from another origin ([`session::Posted`]). Every action calls the domain
//! operation the API calls, so it emits the same events and the API and the board see it
//! at once.
//!
//! Pages: sign-in, sign-out and the setup link ([`login`]), the second step of sign-in
//! ([`login_two_factor`]); the overview ([`home`]);
//! jobs ([`jobs`], [`job_form`]); applications ([`applications`]); members ([`members`]);
//! import sources ([`imports`]);
//! CMS collections ([`cms`]) and their items ([`cms_items`]); webhooks and their delivery
//! log ([`webhooks`]); analytics ([`analytics`]);
//! Settings: API keys ([`keys`]), the board's look
//! ([`board`]), staff users and one's own password ([`staff`]), two-factor sign-in
//! ([`two_factor`]), the audit log
//! ([`audit`], which also records every staff action).

mod analytics;
mod applications;
mod audit;
mod board;
mod cms;
mod cms_items;
pub(crate) mod cookies;
mod imports;
mod job_form;
mod jobs;
mod keys;
mod login;
mod login_two_factor;
mod members;
mod payments;
mod prices;
mod reset;
pub(crate) mod session;
mod staff;
mod two_factor;
mod webhooks;

use askama::Template;
use axum::{
    Router,
    response::{IntoResponse, Response},
    routing::{any, get, post},
};

use jobboard_domain::{
    OrgId, Ts,
    jobs::{JobStatus, ListQuery},
};

use jobboard_app::app::AppState;

use jobboard_app::config::Config;

use crate::{
    error::PageError,
    page::{Chrome, Html},
};
pub use session::{Posted, Staff};

/// Every dashboard route. A method a page does not take is answered with an HTML page
/// (`405` with `Allow`), not the API's envelope.
pub fn routes(state: &AppState) -> Router<AppState> {
    const READ: &str = "GET, HEAD";
    const FORM: &str = "GET, HEAD, POST";
    const POST: &str = "POST";
    Router::new()
        .route("/dashboard", get(home).fallback(only(READ)))
        .route(
            "/dashboard/login",
            get(login::form).post(login::submit).fallback(only(FORM)),
        )
        .route(
            "/dashboard/login/two-factor",
            get(login_two_factor::form)
                .post(login_two_factor::submit)
                .fallback(only(FORM)),
        )
        .route(
            "/dashboard/logout",
            get(login::logout_page)
                .post(login::logout)
                .fallback(only(FORM)),
        )
        .route(
            "/dashboard/password-reset",
            get(reset::request_form)
                .post(reset::request_submit)
                .fallback(only(FORM)),
        )
        .route(
            "/dashboard/password-reset/{token}",
            get(reset::reset_form)
                .post(reset::reset_submit)
                .fallback(only(FORM)),
        )
        .route(
            "/dashboard/setup/{token}",
            get(login::setup_form)
                .post(login::setup_submit)
                .fallback(only(FORM)),
        )
        .route("/dashboard/jobs", get(jobs::list).fallback(only(READ)))
        .route(
            "/dashboard/jobs/new",
            get(job_form::new_form)
                .post(job_form::create)
                .fallback(only(FORM)),
        )
        .route(
            "/dashboard/jobs/{id}",
            get(job_form::edit_form)
                .post(job_form::update)
                .fallback(only(FORM)),
        )
        .route(
            "/dashboard/jobs/{id}/status",
            post(jobs::set_status).fallback(only(POST)),
        )
        .route(
            "/dashboard/jobs/{id}/delete",
            get(jobs::confirm_delete)
                .post(jobs::delete)
                .fallback(only(FORM)),
        )
        .route(
            "/dashboard/applications",
            get(applications::list).fallback(only(READ)),
        )
        .route(
            "/dashboard/imports",
            get(imports::show)
                .post(imports::create)
                .fallback(only(FORM)),
        )
        .route(
            "/dashboard/imports/{id}/run",
            post(imports::run).fallback(only(POST)),
        )
        .route(
            "/dashboard/imports/{id}/delete",
            post(imports::delete).fallback(only(POST)),
        )
        .route(
            "/dashboard/applications/{id}/status",
            post(applications::set_status).fallback(only(POST)),
        )
        .route(
            "/dashboard/analytics",
            get(analytics::page).fallback(only(READ)),
        )
        .route(
            "/dashboard/members",
            get(members::list).fallback(only(READ)),
        )
        .route(
            "/dashboard/members/{id}",
            get(members::show).fallback(only(READ)),
        )
        .route(
            "/dashboard/payments",
            get(payments::list).fallback(only(READ)),
        )
        .route(
            "/dashboard/payments.csv",
            get(payments::csv).fallback(only(READ)),
        )
        .route(
            "/dashboard/members/{id}/approval",
            post(members::set_approval).fallback(only(POST)),
        )
        .route("/dashboard/cms", get(cms::list).fallback(only(READ)))
        .route(
            "/dashboard/cms/new",
            get(cms::new_form).post(cms::create).fallback(only(FORM)),
        )
        .route(
            "/dashboard/cms/{slug}/items",
            get(cms_items::list).fallback(only(READ)),
        )
        .route(
            "/dashboard/cms/{slug}/edit",
            get(cms::edit_form).post(cms::update).fallback(only(FORM)),
        )
        .route(
            "/dashboard/cms/{slug}/items/new",
            get(cms_items::new_form)
                .post(cms_items::create)
                .fallback(only(FORM)),
        )
        .route(
            "/dashboard/cms/{slug}/items/{id}",
            get(cms_items::edit_form)
                .post(cms_items::update)
                .fallback(only(FORM)),
        )
        .route(
            "/dashboard/cms/{slug}/items/{id}/status",
            post(cms_items::set_status).fallback(only(POST)),
        )
        .route(
            "/dashboard/cms/{slug}/items/{id}/delete",
            post(cms_items::delete).fallback(only(POST)),
        )
        .route(
            "/dashboard/webhooks",
            get(webhooks::list)
                .post(webhooks::create)
                .fallback(only(FORM)),
        )
        .route(
            "/dashboard/webhooks/{id}",
            get(webhooks::show).fallback(only(READ)),
        )
        .route(
            "/dashboard/webhooks/{id}/enabled",
            post(webhooks::set_enabled).fallback(only(POST)),
        )
        .route(
            "/dashboard/webhooks/{id}/test",
            post(webhooks::test).fallback(only(POST)),
        )
        .route(
            "/dashboard/webhooks/{id}/delete",
            post(webhooks::delete).fallback(only(POST)),
        )
        .route(
            "/dashboard/webhooks/{id}/deliveries/{delivery}/retry",
            post(webhooks::retry).fallback(only(POST)),
        )
        .route("/dashboard/settings", get(settings).fallback(only(READ)))
        .route(
            "/dashboard/settings/api-keys",
            get(keys::page_get).post(keys::create).fallback(only(FORM)),
        )
        .route(
            "/dashboard/settings/api-keys/{id}/revoke",
            post(keys::revoke).fallback(only(POST)),
        )
        .route(
            "/dashboard/settings/prices",
            get(prices::show).post(prices::create).fallback(only(FORM)),
        )
        .route(
            "/dashboard/settings/prices/{id}/archive",
            post(prices::archive).fallback(only(POST)),
        )
        .route(
            "/dashboard/settings/board",
            get(board::page_get).post(board::save).fallback(only(FORM)),
        )
        .route(
            "/dashboard/settings/board/verify",
            post(board::verify).fallback(only(POST)),
        )
        .route(
            "/dashboard/settings/staff",
            get(staff::page_get).post(staff::add).fallback(only(FORM)),
        )
        .route(
            "/dashboard/settings/staff/{id}/remove",
            post(staff::remove).fallback(only(POST)),
        )
        .route(
            "/dashboard/settings/password",
            get(staff::password_get)
                .post(staff::change_password)
                .fallback(only(FORM)),
        )
        .route(
            "/dashboard/settings/two-factor",
            get(two_factor::page_get).fallback(only(READ)),
        )
        .route(
            "/dashboard/settings/two-factor/setup",
            get(two_factor::setup_get)
                .post(two_factor::begin)
                .fallback(only(FORM)),
        )
        .route(
            "/dashboard/settings/two-factor/setup/confirm",
            post(two_factor::confirm).fallback(only(POST)),
        )
        .route(
            "/dashboard/settings/two-factor/off",
            post(two_factor::turn_off).fallback(only(POST)),
        )
        .route(
            "/dashboard/settings/audit",
            get(audit::page).fallback(only(READ)),
        )
        .route("/dashboard/{*rest}", any(unknown))
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            audit::record,
        ))
}

/// The answer to a method a dashboard address does not take.
fn only(
    allow: &'static str,
) -> impl Fn() -> std::future::Ready<Response> + Clone + Send + Sync + 'static {
    move || {
        let mut res = PageError::new(
            axum::http::StatusCode::METHOD_NOT_ALLOWED,
            "This address does not take this request",
            "Please use the links and buttons of the dashboard's pages.",
        )
        .into_response();
        res.headers_mut().insert(
            axum::http::header::ALLOW,
            axum::http::HeaderValue::from_static(allow),
        );
        std::future::ready(res)
    }
}

/// The address of the setup link of `token`: under `public_url`, else the listen address
/// (loopback when it listens on every interface).
pub fn setup_url(config: &Config, token: &str) -> String {
    format!("{}/dashboard/setup/{token}", config.base_url())
}

/// What the dashboard's layout shows around every page: the organization, the signed-in
/// user, the section, the sign-out form's token, and a notice after an action.
#[derive(Debug, Clone)]
pub struct Nav {
    pub org_name: String,
    pub email: String,
    /// `home`, `jobs`, `applications`, `members`, `payments`, `imports`, `cms`, `webhooks`,
    /// `analytics`,
    /// `api-keys`, `board`, `staff`, `password`, `two-factor`, `audit`.
    pub section: &'static str,
    pub csrf: String,
    pub css: String,
    pub notice: Option<&'static str>,
}

impl Nav {
    pub fn new(staff: &Staff, section: &'static str) -> Nav {
        Nav {
            org_name: staff.session.org_name.clone(),
            email: staff.session.email.clone(),
            section,
            csrf: staff.csrf.clone(),
            css: super::assets::url("dashboard.css"),
            notice: None,
        }
    }

    /// Shows the notice named by a page's `notice` query parameter.
    pub fn notice(mut self, code: Option<&str>) -> Nav {
        self.notice = code.and_then(notice);
        self
    }
}

/// The page's chrome: `title` within the dashboard.
pub fn chrome(title: &str) -> Chrome {
    Chrome::new(format!("{title} · Dashboard"))
}

/// The message of a notice code (set by the redirect after an action). Only these fixed
/// texts can be shown, so a link cannot put words on the page.
fn notice(code: &str) -> Option<&'static str> {
    Some(match code {
        "approved" => "The job was approved. It is listed on the board.",
        "drafted" => "The job was returned to draft. It is no longer listed.",
        "expired" => "The job was expired. It is no longer listed.",
        "pending" => "The job is waiting for approval again.",
        "created" => "The job was created.",
        "saved" => "Your changes were saved.",
        "deleted" => "The job was deleted.",
        "revoked" => "The key was revoked. Requests with it are refused from now on.",
        "board_saved" => "The board's settings were saved.",
        "domain_claimed" => {
            "The board's settings were saved. The new domain is in use once verified (below)."
        }
        "domain_verified" => "The domain was verified. The board answers on it now.",
        "user_added" => "The staff user was added. They can sign in now.",
        "user_removed" => "The staff user was removed and signed out everywhere.",
        "password_changed" => "Your password was changed. Your other sessions have ended.",
        "signed_out" => "You have signed out.",
        "two_factor_expired" => {
            "The sign-in was not finished in time, or it was started in another browser. Please sign in again."
        }
        "two_factor_off" => {
            "Two-factor sign-in was turned off. Signing in asks for your password only."
        }
        "password_reset" => {
            "Your password was reset and every session of your account has ended. Sign in with the new password."
        }
        "application_moved" => "The application was moved.",
        "source_added" => "The source was added. Its first run starts within a minute.",
        "run_started" => "The run has started. Its result shows here once it is done.",
        "source_deleted" => "The source was deleted. Its jobs stay as they are.",
        "webhook_saved" => "The subscription was saved. Events are delivered to it from now on.",
        "webhook_enabled" => "The subscription was enabled.",
        "webhook_disabled" => {
            "The subscription was disabled. Its pending deliveries wait until it is enabled."
        }
        "webhook_deleted" => "The subscription was deleted.",
        "webhook_disabled_first" => "The subscription is disabled: enable it first.",
        "ping_queued" => "A test ping was queued. It appears below once sent.",
        "retry_queued" => "The delivery was queued again.",
        "collection_saved" => "The collection was saved.",
        "entry_saved" => "The entry was saved.",
        "entry_moved" => "The entry was moved.",
        "entry_deleted" => "The entry was deleted.",
        "session_ended" => "Your session has ended. Please sign in again.",
        _ => return None,
    })
}

/// A dashboard page: never cached or indexed, no referrer beyond this site.
pub fn render(template: &impl Template) -> Result<Response, PageError> {
    Ok(Html::render(template, None)?
        .cache_control("no-store")
        .robots("noindex")
        .referrer("same-origin")
        .into_response())
}

/// A dashboard page answered with `status` (a refused form: 422).
pub fn render_status(
    template: &impl Template,
    status: axum::http::StatusCode,
) -> Result<Response, PageError> {
    Ok(Html::render(template, None)?
        .status(status)
        .cache_control("no-store")
        .robots("noindex")
        .referrer("same-origin")
        .into_response())
}

/// An instant as the dashboard shows it (`2026-01-31 12:00 UTC`).
pub fn when(t: &Ts) -> String {
    t.0.format("%Y-%m-%d %H:%M UTC").to_string()
}

/// The query parameters of a page, by name (the first of each).
pub fn params(raw: Option<&str>) -> std::collections::HashMap<String, String> {
    let pairs: Vec<(String, String)> = raw
        .and_then(|q| serde_urlencoded::from_str(q).ok())
        .unwrap_or_default();
    let mut m = std::collections::HashMap::new();
    for (k, v) in pairs {
        m.entry(k).or_insert(v);
    }
    m
}

/// The `notice` parameter of a page's address: what a form that succeeded names when it
/// sends the staff member back to the page.
pub struct Notice(pub Option<String>);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Notice {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &S,
    ) -> Result<Self, Self::Rejection> {
        Ok(Notice(params(parts.uri.query()).remove("notice")))
    }
}

/// A page id from the path: a UUID (read as the id type `T`), or the page is not found.
pub fn path_id<T: From<uuid::Uuid>>(raw: &str) -> Result<T, PageError> {
    uuid::Uuid::parse_str(raw)
        .map(T::from)
        .map_err(|_| PageError::not_found())
}

/// The number of the organization's jobs with `status` (from the list counters).
pub async fn count_jobs(
    app: &AppState,
    org_id: OrgId,
    status: JobStatus,
) -> Result<i64, PageError> {
    let mut q =
        jobboard_domain::QueryInput::parse(Some(&format!("status={}&per_page=1", status.as_str())));
    let lq = ListQuery::read(&mut q);
    q.finish()?;
    let page = jobboard_domain::jobs::list(&app.db, org_id, &lq, app.clock.now()).await?;
    Ok(page.total.items)
}

#[derive(Template)]
#[template(path = "dashboard/home.html")]
struct HomePage {
    chrome: Chrome,
    nav: Nav,
    pending: i64,
    active: i64,
}

/// The overview: what waits for the staff.
async fn home(
    staff: Staff,
    axum::extract::State(app): axum::extract::State<AppState>,
    axum::extract::RawQuery(q): axum::extract::RawQuery,
) -> Result<Response, PageError> {
    let p = params(q.as_deref());
    let org = staff.org_id();
    let (pending, active) = tokio::try_join!(
        count_jobs(&app, org, JobStatus::Pending),
        count_jobs(&app, org, JobStatus::Active)
    )?;
    render(&HomePage {
        chrome: chrome("Overview"),
        nav: Nav::new(&staff, "home").notice(p.get("notice").map(String::as_str)),
        pending,
        active,
    })
}

/// Settings open on the API keys.
async fn settings(_staff: Staff) -> Response {
    session::see_other("/dashboard/settings/api-keys")
}

/// Any other dashboard address: the sign-in page without a session, else not found.
async fn unknown(_staff: Staff) -> PageError {
    PageError::not_found()
}
