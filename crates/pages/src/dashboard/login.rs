//! Signing in and out, and the setup link that creates a staff user. A wrong password
//! and an unknown email get the same page after the same work; too many attempts get the
//! same page whether or not the email belongs to anyone. Signing in always starts a new
//! session (any session the browser had ends), so a session id planted before sign-in is
//! worth nothing. With two-factor sign-in the password step leads to the second step
//! ([`super::login_two_factor`]) instead of a session.

use askama::Template;
use axum::{
    extract::{Path, RawQuery, Request, State},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};

use super::{
    chrome, notice, params, render_status,
    session::{
        ClientAddr, Posted, Staff, Visitor, VisitorForm, see_other, session_cookie,
        with_pending_cookie, with_session_cookie,
    },
};
use crate::fields::{FieldView, Problem, fill, messages_of, values_of};
use crate::{
    error::PageError,
    forms::{FieldMessages, FormData, FormValue},
    page::Chrome,
};
use jobboard_app::app::AppState;
use jobboard_domain::{
    FieldError, OrgId, sessions,
    users::{self, password},
};

#[derive(Template)]
#[template(path = "dashboard/login.html")]
struct LoginPage {
    chrome: Chrome,
    css: String,
    csrf: String,
    email: String,
    notice: Option<&'static str>,
    error: Option<String>,
}

fn login_page(visitor: &Visitor, email: String, error: Option<String>) -> LoginPage {
    LoginPage {
        chrome: chrome("Sign in"),
        css: crate::assets::url("dashboard.css"),
        csrf: visitor.csrf.clone(),
        email,
        notice: None,
        error,
    }
}

/// `GET /dashboard/login`: the sign-in form (the dashboard itself when signed in).
pub async fn form(
    State(app): State<AppState>,
    RawQuery(q): RawQuery,
    req: Request,
) -> Result<Response, PageError> {
    let (mut parts, _) = req.into_parts();
    if <Staff as axum::extract::FromRequestParts<AppState>>::from_request_parts(&mut parts, &app)
        .await
        .is_ok()
    {
        return Ok(see_other("/dashboard"));
    }
    let visitor = Visitor::of(&app, &parts.headers).await?;
    let mut page = login_page(&visitor, String::new(), None);
    page.notice = params(q.as_deref()).get("notice").and_then(|c| notice(c));
    Ok(visitor.set_cookie(&app, render_status(&page, StatusCode::OK)?))
}

/// `POST /dashboard/login`: signs in and answers `303` to `/dashboard` with a new session
/// cookie, or shows the form again.
pub async fn submit(
    State(app): State<AppState>,
    ClientAddr(client): ClientAddr,
    headers: HeaderMap,
    VisitorForm(form): VisitorForm,
) -> Result<Response, Response> {
    let email = form.get("email").unwrap_or("").trim().to_string();
    let password = form.get("password").unwrap_or("");
    let now = app.clock.now();
    // Visitor::check made sure there is a sign-in cookie.
    let visitor_hash = Visitor::cookie_hash(&app, &headers).unwrap_or_default();
    let attempt = sessions::Attempt {
        email: &email,
        password,
        address: client,
        visitor: &visitor_hash,
    };
    let outcome = sessions::login(&app.db, attempt, now, &app.config.dashboard)
        .await
        .map_err(|e| PageError::from(e).into_response())?;
    let visitor = Visitor::of(&app, &headers)
        .await
        .map_err(IntoResponse::into_response)?;
    match outcome {
        sessions::Outcome::SignedIn { id, .. } => {
            if let Some(old) = session_cookie(&app, &headers) {
                // Whatever session the browser had ends: the new one replaces it.
                let _ = sessions::end(&app.db, &old).await;
            }
            Ok(with_session_cookie(
                &app,
                see_other("/dashboard"),
                Some(&id),
            ))
        }
        sessions::Outcome::SecondStep { pending } => Ok(with_pending_cookie(
            &app,
            see_other("/dashboard/login/two-factor"),
            Some(&pending),
        )),
        sessions::Outcome::Refused => {
            let page = login_page(
                &visitor,
                email,
                Some("The email address or the password is not correct.".into()),
            );
            render_status(&page, StatusCode::UNPROCESSABLE_ENTITY)
                .map_err(IntoResponse::into_response)
        }
        sessions::Outcome::Locked { retry_after } => {
            let (secs, wait) = wait_for(retry_after);
            let page = login_page(
                &visitor,
                email,
                Some(format!(
                    "Too many sign-in attempts for this account or from your network. Please try again in {wait}."
                )),
            );
            let res = render_status(&page, StatusCode::TOO_MANY_REQUESTS)
                .map_err(IntoResponse::into_response)?;
            Ok(with_retry_after(res, secs))
        }
    }
}

/// The whole seconds of `retry_after` (at least one) and the wait in words ("3 minutes").
pub(super) fn wait_for(retry_after: std::time::Duration) -> (u64, String) {
    let secs = (retry_after.as_secs() + u64::from(retry_after.subsec_nanos() > 0)).max(1);
    let minutes = secs.div_ceil(60);
    let words = format!("{minutes} minute{}", if minutes == 1 { "" } else { "s" });
    (secs, words)
}

/// Adds `Retry-After: secs` to a refusal.
pub(super) fn with_retry_after(mut res: Response, secs: u64) -> Response {
    res.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    res
}

/// `GET /dashboard/logout`: signing out takes a form (a link could be followed by
/// another site); back to the dashboard, whose header has the button.
pub async fn logout_page() -> Response {
    see_other("/dashboard")
}

/// `POST /dashboard/logout`: ends the session.
pub async fn logout(State(app): State<AppState>, posted: Posted) -> Result<Response, PageError> {
    sessions::end_hash(&app.db, &posted.staff.session.id_hash).await?;
    tracing::info!(user_id = %posted.staff.session.user_id, "dashboard sign-out");
    Ok(with_session_cookie(
        &app,
        see_other("/dashboard/login?notice=signed_out"),
        None,
    ))
}

#[derive(Template)]
#[template(path = "dashboard/setup.html")]
struct SetupPage {
    chrome: Chrome,
    css: String,
    csrf: String,
    action: String,
    org_name: String,
    fields: Vec<FieldView>,
    problems: Vec<Problem>,
}

fn setup_fields() -> Vec<FieldView> {
    vec![
        FieldView::new("email", "Email address", "email")
            .required()
            .autocomplete("email"),
        FieldView::new("password", "Password", "password")
            .required()
            .autocomplete("new-password")
            .hint(password::hint()),
        FieldView::new("password_confirm", "The same password again", "password")
            .required()
            .autocomplete("new-password"),
    ]
}

fn link_gone() -> PageError {
    PageError::new(
        StatusCode::NOT_FOUND,
        "This setup link does not work",
        "The link was used already, or it has expired. A staff user of the organization can add you under Settings, Staff users; an operator can run `jobboard users create`.",
    )
}

async fn setup_page(
    app: &AppState,
    token: &str,
    org_id: OrgId,
    visitor: &Visitor,
    fields: Vec<FieldView>,
    problems: Vec<Problem>,
) -> Result<SetupPage, PageError> {
    let org = jobboard_domain::orgs::get(&app.db, org_id).await?;
    Ok(SetupPage {
        chrome: chrome("Create your account"),
        css: crate::assets::url("dashboard.css"),
        csrf: visitor.csrf.clone(),
        action: format!("/dashboard/setup/{token}"),
        org_name: org.name,
        fields,
        problems,
    })
}

/// `GET /dashboard/setup/{token}`: the form that creates a staff user, while the link
/// works.
pub async fn setup_form(
    State(app): State<AppState>,
    Path(token): Path<String>,
    headers: HeaderMap,
) -> Result<Response, PageError> {
    let Some(org_id) = users::setup::link_org(&app.db, &token, app.clock.now()).await? else {
        return Err(link_gone());
    };
    let visitor = Visitor::of(&app, &headers).await?;
    let page = setup_page(&app, &token, org_id, &visitor, setup_fields(), Vec::new()).await?;
    Ok(visitor.set_cookie(&app, render_status(&page, StatusCode::OK)?))
}

/// The setup form again, with the problems of the one sent (the address kept, the
/// passwords not).
async fn refuse_setup(
    app: &AppState,
    token: &str,
    headers: &HeaderMap,
    form: &FormData,
    messages: &FieldMessages,
) -> Result<Response, PageError> {
    let Some(org_id) = users::setup::link_org(&app.db, token, app.clock.now()).await? else {
        return Err(link_gone());
    };
    let visitor = Visitor::of(app, headers).await?;
    let mut fields = setup_fields();
    let mut values = values_of(form);
    values.retain(|k, _| k == "email");
    let problems = fill(&mut fields, &values, messages);
    let page = setup_page(app, token, org_id, &visitor, fields, problems).await?;
    render_status(&page, StatusCode::UNPROCESSABLE_ENTITY)
}

/// `POST /dashboard/setup/{token}`: creates the user, uses up the link and signs the
/// new user in.
pub async fn setup_submit(
    State(app): State<AppState>,
    Path(token): Path<String>,
    headers: HeaderMap,
    VisitorForm(form): VisitorForm,
) -> Result<Response, Response> {
    let now = app.clock.now();
    if form.get("password") != form.get("password_confirm") {
        let m = FieldMessages::of(&[FieldError::new(
            "password_confirm",
            "mismatch",
            "The two passwords differ.",
        )]);
        return refuse_setup(&app, &token, &headers, &form, &m)
            .await
            .map_err(IntoResponse::into_response);
    }
    let input = form.to_input(&[
        ("email", FormValue::Required),
        ("password", FormValue::Required),
    ]);
    let user = match users::setup::use_link(&app.db, &token, input, now).await {
        Ok(u) => u,
        Err(jobboard_domain::Error::NotFound(_)) => return Err(link_gone().into_response()),
        Err(e) => {
            let m = messages_of(e).map_err(IntoResponse::into_response)?;
            return refuse_setup(&app, &token, &headers, &form, &m)
                .await
                .map_err(IntoResponse::into_response);
        }
    };
    let id = sessions::start(&app.db, &user, now, &app.config.dashboard)
        .await
        .map_err(|e| PageError::from(e).into_response())?;
    Ok(with_session_cookie(
        &app,
        see_other("/dashboard"),
        Some(&id),
    ))
}
