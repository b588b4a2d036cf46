//! Settings > Two-factor sign-in: its status and the organization's rule (set by an
//! operator, shown here), setting it up (a new secret kept in the database until a code
//! of it confirms it; then ten recovery codes, shown once) and turning it off (the current
//! password and a code, throttled as sign-ins are; not while the organization requires
//! it).

use std::collections::HashMap;

use askama::Template;
use axum::{extract::State, http::StatusCode, response::Response};

use super::{
    Nav, Notice, Posted, Staff, chrome,
    login::{wait_for, with_retry_after},
    render, render_status,
    session::{ClientAddr, see_other},
};
use crate::fields::{FieldView, Problem, fill};
use crate::{error::PageError, forms::FieldMessages, page::Chrome};
use jobboard_app::app::AppState;
use jobboard_domain::{
    FieldError, orgs,
    two_factor::{self, SetupView, TurnOff},
};

/// The field of a code of the authenticator app (or a recovery code, when `recovery`).
pub(super) fn code_field(recovery: bool) -> FieldView {
    let f = FieldView::new(
        "code",
        if recovery {
            "Code of your authenticator app, or a recovery code"
        } else {
            "Code of your authenticator app"
        },
        "text",
    )
    .required()
    .autocomplete("one-time-code");
    if recovery { f } else { f.inputmode("numeric") }
}

#[derive(Template)]
#[template(path = "dashboard/two_factor.html")]
struct StatusPage {
    chrome: Chrome,
    nav: Nav,
    on: bool,
    required: bool,
    codes_left: i64,
    fields: Vec<FieldView>,
    problems: Vec<Problem>,
}

fn off_fields() -> Vec<FieldView> {
    vec![
        FieldView::new("current_password", "Current password", "password")
            .required()
            .autocomplete("current-password"),
        code_field(true),
    ]
}

async fn status_page(
    app: &AppState,
    staff: &Staff,
    messages: &FieldMessages,
    notice: Option<&str>,
) -> Result<StatusPage, PageError> {
    let user = staff.session.user_id;
    let mut fields = off_fields();
    let problems = fill(&mut fields, &HashMap::new(), messages);
    Ok(StatusPage {
        chrome: chrome("Two-factor sign-in"),
        nav: Nav::new(staff, "two-factor").notice(notice),
        on: two_factor::is_on(&app.db, user).await?,
        required: orgs::require_2fa(&app.db, staff.org_id()).await?,
        codes_left: two_factor::recovery_codes_left(&app.db, user).await?,
        fields,
        problems,
    })
}

/// `GET /dashboard/settings/two-factor`
pub async fn page_get(
    staff: Staff,
    State(app): State<AppState>,
    Notice(notice): Notice,
) -> Result<Response, PageError> {
    render(&status_page(&app, &staff, &FieldMessages::default(), notice.as_deref()).await?)
}

#[derive(Template)]
#[template(path = "dashboard/two_factor_setup.html")]
struct SetupPage {
    chrome: Chrome,
    nav: Nav,
    setup: SetupView,
    fields: Vec<FieldView>,
    problems: Vec<Problem>,
}

fn setup_page(
    staff: &Staff,
    secret: &str,
    messages: &FieldMessages,
) -> Result<SetupPage, PageError> {
    let s = &staff.session;
    let mut fields = vec![code_field(false)];
    let problems = fill(&mut fields, &HashMap::new(), messages);
    Ok(SetupPage {
        chrome: chrome("Set up two-factor sign-in"),
        nav: Nav::new(staff, "two-factor"),
        setup: two_factor::setup_view(secret, &s.org_name, &s.email)?,
        fields,
        problems,
    })
}

/// `POST /dashboard/settings/two-factor/setup`: a new secret to set up (replacing one
/// being set up).
pub async fn begin(State(app): State<AppState>, posted: Posted) -> Result<Response, PageError> {
    let user = posted.staff.session.user_id;
    if two_factor::is_on(&app.db, user).await? {
        return Ok(see_other("/dashboard/settings/two-factor"));
    }
    two_factor::begin_setup(&app.db, user).await?;
    Ok(see_other("/dashboard/settings/two-factor/setup"))
}

/// `GET /dashboard/settings/two-factor/setup`: the secret being set up and the field of
/// its first code.
pub async fn setup_get(staff: Staff, State(app): State<AppState>) -> Result<Response, PageError> {
    let user = staff.session.user_id;
    let secret = match two_factor::pending_secret(&app.db, user).await? {
        Some(s) if !two_factor::is_on(&app.db, user).await? => s,
        _ => return Ok(see_other("/dashboard/settings/two-factor")),
    };
    render(&setup_page(&staff, &secret, &FieldMessages::default())?)
}

#[derive(Template)]
#[template(path = "dashboard/two_factor_codes.html")]
struct CodesPage {
    chrome: Chrome,
    nav: Nav,
    codes: Vec<String>,
}

fn wrong_code() -> FieldMessages {
    FieldMessages::of(&[FieldError::new(
        "code",
        "mismatch",
        "This code is not right. Type the 6-digit code your app shows now.",
    )])
}

/// `POST /dashboard/settings/two-factor/setup/confirm`: a right code switches two-factor
/// sign-in on and shows the recovery codes once; a wrong one changes nothing.
pub async fn confirm(State(app): State<AppState>, posted: Posted) -> Result<Response, PageError> {
    let staff = &posted.staff;
    let user = staff.session.user_id;
    let Some(secret) = two_factor::pending_secret(&app.db, user).await? else {
        return Ok(see_other("/dashboard/settings/two-factor"));
    };
    let code = posted.form.get("code").unwrap_or("");
    match two_factor::confirm_setup(&app.db, user, code, app.clock.now()).await? {
        Some(codes) => render(&CodesPage {
            chrome: chrome("Recovery codes"),
            nav: Nav::new(staff, "two-factor"),
            codes,
        }),
        None => render_status(
            &setup_page(staff, &secret, &wrong_code())?,
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
    }
}

/// `POST /dashboard/settings/two-factor/off`: the current password and a code (or a
/// recovery code) switch two-factor sign-in off, unless the organization requires it.
pub async fn turn_off(
    State(app): State<AppState>,
    ClientAddr(address): ClientAddr,
    posted: Posted,
) -> Result<Response, PageError> {
    let staff = &posted.staff;
    if orgs::require_2fa(&app.db, staff.org_id()).await? {
        return Err(PageError::new(
            StatusCode::CONFLICT,
            "Two-factor sign-in is required",
            "Your organization requires two-factor sign-in of every staff user, so it cannot be turned off.",
        ));
    }
    let form = &posted.form;
    let password = form.get("current_password").unwrap_or("");
    let code = form.get("code").unwrap_or("");
    let app_ref = &app;
    let refused = |messages: FieldMessages, status: StatusCode| async move {
        render_status(&status_page(app_ref, staff, &messages, None).await?, status)
    };
    let mut problems = Vec::new();
    if password.is_empty() {
        problems.push(FieldError::new(
            "current_password",
            "required",
            "Type your current password.",
        ));
    }
    if code.trim().is_empty() {
        problems.push(FieldError::new(
            "code",
            "required",
            "Type a code of your authenticator app or a recovery code.",
        ));
    }
    if !problems.is_empty() {
        return refused(
            FieldMessages::of(&problems),
            StatusCode::UNPROCESSABLE_ENTITY,
        )
        .await;
    }
    let now = app.clock.now();
    let policy = &app.config.dashboard;
    let outcome = two_factor::check_to_turn_off(
        &app.db,
        &staff.session,
        password,
        code,
        address,
        now,
        policy,
    )
    .await?;
    match outcome {
        TurnOff::Done => Ok(see_other(
            "/dashboard/settings/two-factor?notice=two_factor_off",
        )),
        TurnOff::WrongPassword => {
            let m = FieldMessages::of(&[FieldError::new(
                "current_password",
                "mismatch",
                "This is not your current password.",
            )]);
            refused(m, StatusCode::UNPROCESSABLE_ENTITY).await
        }
        TurnOff::WrongCode => refused(wrong_code(), StatusCode::UNPROCESSABLE_ENTITY).await,
        TurnOff::Locked { retry_after } => {
            let (secs, wait) = wait_for(retry_after);
            let message = format!(
                "Too many attempts with a wrong password or code. Please try again in {wait}."
            );
            let res = refused(
                FieldMessages::of(&[FieldError::new("current_password", "throttled", message)]),
                StatusCode::TOO_MANY_REQUESTS,
            )
            .await?;
            Ok(with_retry_after(res, secs))
        }
    }
}
