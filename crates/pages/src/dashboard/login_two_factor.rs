//! The second step of signing in (`/dashboard/login/two-factor`): after a right password,
//! a user with two-factor sign-in types a code of their app or a recovery code; a user
//! whose organization requires it and who has none sets it up here. Only then does a
//! session start (a new one: any session the browser had ends). The pending sign-in is
//! known by a cookie of its own, bound to the sign-in pages' cookie, and short-lived; it
//! opens no dashboard page.

use std::collections::HashMap;

use askama::Template;
use axum::{
    extract::State,
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Response},
};

use super::{
    chrome,
    login::{wait_for, with_retry_after},
    render_status,
    session::{
        ClientAddr, Visitor, VisitorForm, pending_cookie, see_other, session_cookie,
        with_pending_cookie, with_session_cookie,
    },
    two_factor::code_field,
};
use crate::fields::{FieldView, Problem, fill};
use crate::{error::PageError, forms::FieldMessages, page::Chrome};
use jobboard_app::app::AppState;
use jobboard_domain::{
    FieldError, sessions,
    two_factor::{self, Pending, SetupView, Step},
};

#[derive(Template)]
#[template(path = "dashboard/login_two_factor.html")]
struct CodePage {
    chrome: Chrome,
    css: String,
    csrf: String,
    email: String,
    setup: Option<SetupView>,
    fields: Vec<FieldView>,
    problems: Vec<Problem>,
}

fn code_page(
    visitor: &Visitor,
    pending: &Pending,
    messages: &FieldMessages,
) -> Result<CodePage, PageError> {
    let setup = match &pending.setup_secret {
        Some(secret) => Some(two_factor::setup_view(
            secret,
            &pending.org_name,
            &pending.email,
        )?),
        None => None,
    };
    // Without a setup the field also takes recovery codes (letters): no numeric keyboard.
    let mut fields = vec![code_field(setup.is_none())];
    let problems = fill(&mut fields, &HashMap::new(), messages);
    Ok(CodePage {
        chrome: chrome(if setup.is_some() {
            "Set up two-factor sign-in"
        } else {
            "Two-factor sign-in"
        }),
        css: crate::assets::url("dashboard.css"),
        csrf: visitor.csrf.clone(),
        email: pending.email.clone(),
        setup,
        fields,
        problems,
    })
}

#[derive(Template)]
#[template(path = "dashboard/login_recovery.html")]
struct RecoveryPage {
    chrome: Chrome,
    css: String,
    codes: Vec<String>,
}

/// Back to the password step: the pending sign-in is over (or never was).
fn start_again(app: &AppState) -> Response {
    with_pending_cookie(
        app,
        see_other("/dashboard/login?notice=two_factor_expired"),
        None,
    )
}

/// The pending sign-in of the request, if it is live.
async fn pending_of(app: &AppState, headers: &HeaderMap) -> Result<Option<Pending>, PageError> {
    let (Some(id), Some(visitor)) = (
        pending_cookie(app, headers),
        Visitor::cookie_hash(app, headers),
    ) else {
        return Ok(None);
    };
    Ok(two_factor::pending(&app.db, &id, &visitor, app.clock.now()).await?)
}

/// `GET /dashboard/login/two-factor`: the field of the code (and, when the organization
/// requires two-factor sign-in of a user without it, the secret to set up).
pub async fn form(State(app): State<AppState>, headers: HeaderMap) -> Result<Response, PageError> {
    let Some(pending) = pending_of(&app, &headers).await? else {
        return Ok(start_again(&app));
    };
    let visitor = Visitor::of(&app, &headers).await?;
    let page = code_page(&visitor, &pending, &FieldMessages::default())?;
    render_status(&page, StatusCode::OK)
}

/// `POST /dashboard/login/two-factor`: a right code starts the session (`303` to
/// `/dashboard`, or the recovery codes when two-factor sign-in was set up here); a wrong
/// one shows the form again, throttled as wrong passwords are.
pub async fn submit(
    State(app): State<AppState>,
    ClientAddr(client): ClientAddr,
    headers: HeaderMap,
    VisitorForm(form): VisitorForm,
) -> Result<Response, Response> {
    let page_error = |e: PageError| e.into_response();
    let Some(pending) = pending_of(&app, &headers).await.map_err(page_error)? else {
        return Ok(start_again(&app));
    };
    let (Some(id), Some(visitor_hash)) = (
        pending_cookie(&app, &headers),
        Visitor::cookie_hash(&app, &headers),
    ) else {
        return Ok(start_again(&app));
    };
    let code = form.get("code").unwrap_or("").trim();
    let now = app.clock.now();
    let policy = &app.config.dashboard;
    let step = two_factor::second_step(&app.db, &id, &visitor_hash, code, client, now, policy)
        .await
        .map_err(|e| PageError::from(e).into_response())?;
    let visitor = Visitor::of(&app, &headers).await.map_err(page_error)?;
    let refused = |message: String, status: StatusCode| -> Response {
        let m = FieldMessages::of(&[FieldError::new("code", "mismatch", message)]);
        code_page(&visitor, &pending, &m)
            .and_then(|page| render_status(&page, status))
            .unwrap_or_else(IntoResponse::into_response)
    };
    match step {
        Step::SignedIn { id, recovery_codes } => {
            if let Some(old) = session_cookie(&app, &headers) {
                // Whatever session the browser had ends: the new one replaces it.
                let _ = sessions::end(&app.db, &old).await;
            }
            let res = match recovery_codes {
                Some(codes) => render_status(
                    &RecoveryPage {
                        chrome: chrome("Recovery codes"),
                        css: crate::assets::url("dashboard.css"),
                        codes,
                    },
                    StatusCode::OK,
                )
                .map_err(page_error)?,
                None => see_other("/dashboard"),
            };
            Ok(with_pending_cookie(
                &app,
                with_session_cookie(&app, res, Some(&id)),
                None,
            ))
        }
        Step::Refused => Ok(refused(
            if pending.setup_secret.is_some() {
                "This code is not right. Type the 6-digit code your app shows now.".into()
            } else {
                "This code is not right, or it was used already. Type the code your app shows now, or a recovery code.".into()
            },
            StatusCode::UNPROCESSABLE_ENTITY,
        )),
        Step::Locked { retry_after } => {
            let (secs, wait) = wait_for(retry_after);
            let res = refused(
                format!(
                    "Too many sign-in attempts for this account or from your network. Please try again in {wait}."
                ),
                StatusCode::TOO_MANY_REQUESTS,
            );
            Ok(with_retry_after(res, secs))
        }
        Step::Gone => Ok(start_again(&app)),
    }
}
