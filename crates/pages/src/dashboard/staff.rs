//! Settings > Staff users (list, add, remove) and Your password (change one's own, which
//! signs one out everywhere else; wrong current passwords are throttled as sign-ins are). A removed user's sessions end with them. Nobody
//! removes themselves here, so an organization keeps at least one user.

use std::collections::HashMap;

use askama::Template;
use axum::{
    extract::{Path, State},
    http::StatusCode,
    response::Response,
};

use super::{
    Nav, Notice, Posted, Staff, chrome,
    login::{wait_for, with_retry_after},
    path_id, render, render_status,
    session::{ClientAddr, see_other},
    when,
};
use crate::fields::{FieldView, Problem, fill, messages_of, values_of};
use crate::{
    error::PageError,
    forms::{FieldMessages, FormValue},
    page::Chrome,
};
use jobboard_app::app::AppState;
use jobboard_domain::{
    FieldError, sessions,
    users::{self, password},
};

/// A user as listed.
struct UserRow {
    id: String,
    email: String,
    created: String,
    last_login: String,
    is_me: bool,
}

#[derive(Template)]
#[template(path = "dashboard/staff.html")]
struct StaffPage {
    chrome: Chrome,
    nav: Nav,
    users: Vec<UserRow>,
    fields: Vec<FieldView>,
    problems: Vec<Problem>,
}

fn add_fields() -> Vec<FieldView> {
    vec![
        FieldView::new("email", "Email address", "email")
            .required()
            .autocomplete("off"),
        FieldView::new("password", "First password", "password")
            .required()
            .autocomplete("new-password")
            .hint(format!(
                "{} Give it to them in person or through a channel you trust; they can change it under Your password.",
                password::hint()
            )),
    ]
}

async fn page(
    app: &AppState,
    staff: &Staff,
    values: &HashMap<String, String>,
    messages: &FieldMessages,
    notice: Option<&str>,
) -> Result<StaffPage, PageError> {
    let users = users::list(&app.db, staff.org_id()).await?;
    let mut fields = add_fields();
    let problems = fill(&mut fields, values, messages);
    Ok(StaffPage {
        chrome: chrome("Staff users"),
        nav: Nav::new(staff, "staff").notice(notice),
        users: users
            .iter()
            .map(|u| UserRow {
                id: u.id.to_string(),
                email: u.email.clone(),
                created: when(&u.created_at),
                last_login: u
                    .last_login_at
                    .as_ref()
                    .map_or_else(|| "never".into(), when),
                is_me: u.id == staff.session.user_id,
            })
            .collect(),
        fields,
        problems,
    })
}

/// `GET /dashboard/settings/staff`
pub async fn page_get(
    staff: Staff,
    State(app): State<AppState>,
    Notice(notice): Notice,
) -> Result<Response, PageError> {
    render(
        &page(
            &app,
            &staff,
            &HashMap::new(),
            &FieldMessages::default(),
            notice.as_deref(),
        )
        .await?,
    )
}

/// `POST /dashboard/settings/staff`: adds a user to the organization.
pub async fn add(State(app): State<AppState>, posted: Posted) -> Result<Response, PageError> {
    let staff = &posted.staff;
    let input = posted.form.to_input(&[
        ("email", FormValue::Required),
        ("password", FormValue::Required),
    ]);
    match users::create(&app.db, staff.org_id(), input, app.clock.now()).await {
        Ok(_) => Ok(see_other("/dashboard/settings/staff?notice=user_added")),
        Err(e) => {
            let messages = messages_of(e)?;
            let mut values = values_of(&posted.form);
            values.retain(|k, _| k == "email");
            let p = page(&app, staff, &values, &messages, None).await?;
            render_status(&p, StatusCode::UNPROCESSABLE_ENTITY)
        }
    }
}

/// `POST /dashboard/settings/staff/{id}/remove`
pub async fn remove(
    State(app): State<AppState>,
    Path(raw): Path<String>,
    posted: Posted,
) -> Result<Response, PageError> {
    let id = path_id(&raw)?;
    let staff = &posted.staff;
    // Checked after the organization: another organization's id is simply not found.
    users::get(&app.db, staff.org_id(), id).await?;
    if id == staff.session.user_id {
        return Err(PageError::new(
            StatusCode::CONFLICT,
            "You cannot remove yourself",
            "Ask another staff user of your organization to remove your account.",
        ));
    }
    users::remove(&app.db, staff.org_id(), id).await?;
    Ok(see_other("/dashboard/settings/staff?notice=user_removed"))
}

#[derive(Template)]
#[template(path = "dashboard/password.html")]
struct PasswordPage {
    chrome: Chrome,
    nav: Nav,
    fields: Vec<FieldView>,
    problems: Vec<Problem>,
}

fn password_fields() -> Vec<FieldView> {
    vec![
        FieldView::new("current_password", "Current password", "password")
            .required()
            .autocomplete("current-password"),
        FieldView::new("new_password", "New password", "password")
            .required()
            .autocomplete("new-password")
            .hint(password::hint()),
        FieldView::new("new_password_confirm", "The new password again", "password")
            .required()
            .autocomplete("new-password"),
    ]
}

fn password_page(staff: &Staff, messages: &FieldMessages, notice: Option<&str>) -> PasswordPage {
    let mut fields = password_fields();
    let problems = fill(&mut fields, &HashMap::new(), messages);
    PasswordPage {
        chrome: chrome("Your password"),
        nav: Nav::new(staff, "password").notice(notice),
        fields,
        problems,
    }
}

/// `GET /dashboard/settings/password`
pub async fn password_get(staff: Staff, Notice(notice): Notice) -> Result<Response, PageError> {
    render(&password_page(
        &staff,
        &FieldMessages::default(),
        notice.as_deref(),
    ))
}

/// `POST /dashboard/settings/password`: changes the signed-in user's password; their
/// other sessions end, this one goes on. Wrong current passwords are throttled as
/// sign-ins are (`429` with `Retry-After`, the message beside the field).
pub async fn change_password(
    State(app): State<AppState>,
    ClientAddr(address): ClientAddr,
    posted: Posted,
) -> Result<Response, PageError> {
    let staff = &posted.staff;
    let form = &posted.form;
    let refused = |messages: FieldMessages, status: StatusCode| {
        render_status(&password_page(staff, &messages, None), status)
    };
    if form.get("new_password") != form.get("new_password_confirm") {
        return refused(
            FieldMessages::of(&[FieldError::new(
                "new_password_confirm",
                "mismatch",
                "The two new passwords differ.",
            )]),
            StatusCode::UNPROCESSABLE_ENTITY,
        );
    }
    let input = form.to_input(&[
        ("current_password", FormValue::Required),
        ("new_password", FormValue::Required),
    ]);
    let now = app.clock.now();
    let policy = &app.config.dashboard;
    match sessions::change_password(&app.db, &staff.session, address, input, now, policy).await {
        Ok(sessions::Change::Done) => Ok(see_other(
            "/dashboard/settings/password?notice=password_changed",
        )),
        Ok(sessions::Change::Locked { retry_after }) => {
            let (secs, wait) = wait_for(retry_after);
            let message =
                format!("Too many attempts with a wrong password. Please try again in {wait}.");
            let res = refused(
                FieldMessages::of(&[FieldError::new("current_password", "throttled", message)]),
                StatusCode::TOO_MANY_REQUESTS,
            )?;
            Ok(with_retry_after(res, secs))
        }
        Err(e) => refused(messages_of(e)?, StatusCode::UNPROCESSABLE_ENTITY),
    }
}
