//! Password reset by mail (`jobboard_domain::users::reset`): the page that asks for the address and
//! mails the link, and the page of the link that sets a new password. Both are sign-in
//! pages: their forms are bound to the visitor's cookie and checked for their origin. The
//! answer to a request is the same whether or not anyone has the address.

use std::collections::HashMap;

use askama::Template;
use axum::{
    extract::{Path, State},
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Response},
};

use super::{
    chrome,
    login::{wait_for, with_retry_after},
    render_status,
    session::{ClientAddr, Visitor, VisitorForm, see_other},
};
use crate::fields::{FieldView, Problem, fill, messages_of, values_of};
use crate::{
    error::PageError,
    forms::{FieldMessages, FormValue},
    page::Chrome,
};
use jobboard_app::app::AppState;
use jobboard_domain::{
    FieldError,
    users::{password, reset},
};

#[derive(Template)]
#[template(path = "dashboard/reset_request.html")]
struct RequestPage {
    chrome: Chrome,
    css: String,
    csrf: String,
    sent: Option<String>,
    unavailable: Option<String>,
    fields: Vec<FieldView>,
    problems: Vec<Problem>,
}

fn request_page(
    app: &AppState,
    visitor: &Visitor,
    values: &HashMap<String, String>,
    messages: &FieldMessages,
) -> RequestPage {
    let mut fields = vec![
        FieldView::new("email", "Email address", "email")
            .required()
            .autocomplete("username"),
    ];
    let problems = fill(&mut fields, values, messages);
    RequestPage {
        chrome: chrome("Reset your password"),
        css: crate::assets::url("dashboard.css"),
        csrf: visitor.csrf.clone(),
        sent: None,
        unavailable: (!jobboard_delivery::mail::enabled(app)).then(|| {
            "This service sends no mail, so a password cannot be reset by mail. Ask another staff user of your organization, or an operator (`jobboard users`).".to_string()
        }),
        fields,
        problems,
    }
}

/// `GET /dashboard/password-reset`: the form that asks for the address.
pub async fn request_form(
    State(app): State<AppState>,
    headers: HeaderMap,
) -> Result<Response, PageError> {
    let visitor = Visitor::of(&app, &headers).await?;
    let page = request_page(&app, &visitor, &HashMap::new(), &FieldMessages::default());
    Ok(visitor.set_cookie(&app, render_status(&page, StatusCode::OK)?))
}

/// `POST /dashboard/password-reset`: mails a link if anyone has the address; the same
/// page either way (`429` with `Retry-After` past the limits).
pub async fn request_submit(
    State(app): State<AppState>,
    ClientAddr(address): ClientAddr,
    headers: HeaderMap,
    VisitorForm(form): VisitorForm,
) -> Result<Response, Response> {
    let visitor = Visitor::of(&app, &headers)
        .await
        .map_err(IntoResponse::into_response)?;
    let values = values_of(&form);
    let input = form.to_input(&[("email", FormValue::Required)]);
    let policy = &app.config.dashboard;
    let outcome = reset::request(&app.db, input, address, app.clock.now(), policy).await;
    let page = |messages: &FieldMessages| request_page(&app, &visitor, &values, messages);
    let res = match outcome {
        Ok(reset::Requested::Accepted) => {
            let mut p = page(&FieldMessages::default());
            p.sent = Some(format!(
                "If a staff user has this address, a link to choose a new password is on its way to it. The link works for {} minutes.",
                reset::LIFETIME.as_secs() / 60
            ));
            render_status(&p, StatusCode::OK)
        }
        Ok(reset::Requested::Limited { retry_after }) => {
            let (secs, wait) = wait_for(retry_after);
            let m = FieldMessages::of(&[FieldError::new(
                "email",
                "throttled",
                format!(
                    "Too many reset requests for this address or from your network. Please try again in {wait}."
                ),
            )]);
            render_status(&page(&m), StatusCode::TOO_MANY_REQUESTS)
                .map(|r| with_retry_after(r, secs))
        }
        Err(jobboard_domain::Error::Unavailable { .. }) => {
            render_status(&page(&FieldMessages::default()), StatusCode::CONFLICT)
        }
        Err(e) => match messages_of(e) {
            Ok(m) => render_status(&page(&m), StatusCode::UNPROCESSABLE_ENTITY),
            Err(e) => Err(e),
        },
    };
    res.map_err(IntoResponse::into_response)
}

#[derive(Template)]
#[template(path = "dashboard/reset.html")]
struct ResetPage {
    chrome: Chrome,
    css: String,
    csrf: String,
    action: String,
    email: String,
    fields: Vec<FieldView>,
    problems: Vec<Problem>,
}

fn link_gone() -> PageError {
    PageError::new(
        StatusCode::NOT_FOUND,
        "This reset link does not work",
        "The link was used already, or it has expired (a link works for 30 minutes). Ask for a new one at /dashboard/password-reset.",
    )
}

async fn reset_page(
    app: &AppState,
    token: &str,
    headers: &HeaderMap,
    messages: &FieldMessages,
) -> Result<(ResetPage, Visitor), PageError> {
    let Some(user) = reset::link_user(&app.db, token, app.clock.now()).await? else {
        return Err(link_gone());
    };
    let visitor = Visitor::of(app, headers).await?;
    let mut fields = vec![
        FieldView::new("password", "New password", "password")
            .required()
            .autocomplete("new-password")
            .hint(password::hint()),
        FieldView::new("password_confirm", "The new password again", "password")
            .required()
            .autocomplete("new-password"),
    ];
    let problems = fill(&mut fields, &HashMap::new(), messages);
    let page = ResetPage {
        chrome: chrome("Choose a new password"),
        css: crate::assets::url("dashboard.css"),
        csrf: visitor.csrf.clone(),
        action: format!("/dashboard/password-reset/{token}"),
        email: user.email,
        fields,
        problems,
    };
    Ok((page, visitor))
}

/// `GET /dashboard/password-reset/{token}`: the new password's form, while the link works.
pub async fn reset_form(
    State(app): State<AppState>,
    Path(token): Path<String>,
    headers: HeaderMap,
) -> Result<Response, PageError> {
    let (page, visitor) = reset_page(&app, &token, &headers, &FieldMessages::default()).await?;
    Ok(visitor.set_cookie(&app, render_status(&page, StatusCode::OK)?))
}

/// `POST /dashboard/password-reset/{token}`: sets the new password, ends every session of
/// the user and leads to the sign-in page.
pub async fn reset_submit(
    State(app): State<AppState>,
    Path(token): Path<String>,
    headers: HeaderMap,
    VisitorForm(form): VisitorForm,
) -> Result<Response, Response> {
    let (app, token, headers) = (&app, &token, &headers);
    let refuse = |messages: FieldMessages| async move {
        let (page, _) = reset_page(app, token, headers, &messages).await?;
        render_status(&page, StatusCode::UNPROCESSABLE_ENTITY)
    };
    if form.get("password") != form.get("password_confirm") {
        let m = FieldMessages::of(&[FieldError::new(
            "password_confirm",
            "mismatch",
            "The two passwords differ.",
        )]);
        return refuse(m).await.map_err(IntoResponse::into_response);
    }
    let input = form.to_input(&[("password", FormValue::Required)]);
    match reset::use_link(&app.db, token, input, app.clock.now()).await {
        Ok(_) => Ok(see_other("/dashboard/login?notice=password_reset")),
        Err(jobboard_domain::Error::NotFound(_)) => Err(link_gone().into_response()),
        Err(e) => {
            let m = messages_of(e).map_err(IntoResponse::into_response)?;
            refuse(m).await.map_err(IntoResponse::into_response)
        }
    }
}
