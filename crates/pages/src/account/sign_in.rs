//! Signing in: the form that mails a link (`/account/sign-in`), the link itself, and
//! signing out. The form passes the board's checks (origin, token, trap field, the
//! per-address form limit) and the answer never says whether the address is a member's.

use askama::Template;
use axum::{
    extract::{Path, RawQuery, State},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};

use super::{Posted, with_cookie};
use crate::{
    board::{
        Frame,
        gate::{self, Screened},
    },
    dashboard::session::see_other,
    error::PageError,
    forms::{FieldMessages, FormData},
    page::{Chrome, Html},
    site::Site,
};
use jobboard_app::app::AppState;
use jobboard_domain::{
    Error, FieldError, Input,
    accounts::{self, Requested},
    orgs::MemberSignup,
};

#[derive(Template)]
#[template(path = "account/sign_in.html")]
struct SignInPage {
    chrome: Chrome,
    frame: Frame,
    token: String,
    email: String,
    role: String,
    signup: bool,
    problems: Vec<(String, String)>,
    notice: Option<String>,
    errors: FieldMessages,
}

#[derive(Template)]
#[template(path = "account/message.html")]
pub(super) struct MessagePage {
    pub chrome: Chrome,
    pub frame: Frame,
    pub title: String,
    pub lines: Vec<String>,
    pub link: (String, String),
}

fn binding(site: &Site) -> String {
    format!("board:{}:account-sign-in", site.org.id)
}

/// The time an accepted request for a link is answered in, whatever it found: a link
/// mailed to a member costs a transaction that an unknown address does not, so the
/// answer waits until this long after the request came, and neither the page nor its
/// timing tells whether the address is a member's.
const ANSWER_AFTER: std::time::Duration = std::time::Duration::from_millis(250);

/// A page of a few lines and one link, in the board's frame.
pub(super) fn message(
    site: &Site,
    status: StatusCode,
    title: &str,
    lines: Vec<String>,
    link: (&str, &str),
) -> Result<Response, PageError> {
    let tpl = MessagePage {
        chrome: Chrome::new(format!("{title} – {}", site.org.name)).with_theme(&site.theme.css),
        frame: Frame::of(site, "/account"),
        title: title.to_string(),
        lines,
        link: (link.0.to_string(), link.1.to_string()),
    };
    Ok(Html::render(&tpl, Some(&site.theme.csp_hash))?
        .cache_control("private, no-store")
        .robots("noindex")
        .status(status)
        .into_response())
}

async fn form_page(
    app: &AppState,
    site: &Site,
    form: &FormData,
    errors: Vec<FieldError>,
    notice: Option<String>,
) -> Result<Html, PageError> {
    let tpl = SignInPage {
        chrome: Chrome::new(format!("Sign in – {}", site.org.name)).with_theme(&site.theme.css),
        frame: Frame::of(site, "/account/sign-in"),
        token: gate::token(app, &binding(site)).await?,
        email: form.get("email").unwrap_or("").to_string(),
        role: form.get("role").unwrap_or("jobseeker").to_string(),
        signup: site.org.member_signup == MemberSignup::Open,
        problems: errors
            .iter()
            .map(|e| (e.field.clone(), e.message.clone()))
            .collect(),
        errors: FieldMessages::of(&errors),
        notice,
    };
    Ok(Html::render(&tpl, Some(&site.theme.csp_hash))?
        .cache_control("private, no-store")
        .robots("noindex"))
}

/// `GET /account/sign-in`
pub async fn show(
    State(app): State<AppState>,
    site: Site,
    RawQuery(raw): RawQuery,
) -> Result<Html, PageError> {
    if !site.accounts {
        return Err(PageError::new(
            StatusCode::NOT_FOUND,
            "Members cannot sign in here",
            "This board sends no mail, and members sign in with a link sent by mail.",
        ));
    }
    let notice = (raw.as_deref() == Some("ended=1"))
        .then(|| "Your session has ended. Sign in again to go on.".to_string());
    form_page(&app, &site, &FormData::default(), Vec::new(), notice).await
}

/// `POST /account/sign-in`: mails a link when the address may sign in here.
pub async fn request(
    State(app): State<AppState>,
    site: Site,
    headers: HeaderMap,
    form: FormData,
) -> Result<Response, PageError> {
    match gate::screen(
        &app,
        &site,
        &headers,
        &form,
        &binding(&site),
        "no link was sent",
    )
    .await?
    {
        Screened::Passed => {}
        Screened::BadToken => {
            let notice = "The form had expired or did not come from this page, so no link was sent. Please send it again.".to_string();
            let html = form_page(&app, &site, &form, Vec::new(), Some(notice)).await?;
            return Ok(html.status(StatusCode::FORBIDDEN).into_response());
        }
        Screened::Refused(res) => return Ok(res),
    }
    let started = tokio::time::Instant::now();
    let mut body = serde_json::Map::new();
    body.insert("email".into(), form.get("email").unwrap_or("").into());
    if site.org.member_signup == MemberSignup::Open
        && let Some(role) = form.get("role")
    {
        body.insert("role".into(), role.into());
    }
    match accounts::request_link(
        &app.db,
        &site.org,
        Input::new(body),
        site.client,
        &app.config.dashboard,
    )
    .await
    {
        Ok(Requested::Accepted) => {
            tokio::time::sleep_until(started + ANSWER_AFTER).await;
            message(
            &site,
            StatusCode::OK,
            "Check your mail",
            vec![
                format!(
                    "If {} can sign in here, a link is on its way to it. Open it within 15 minutes to sign in.",
                    form.get("email").unwrap_or("the address").trim()
                ),
                "Nothing arrived? Look in your spam folder, or ask for a new link in a few minutes.".into(),
            ],
            ("/account/sign-in", "Ask for another link"),
        )
        }
        Ok(Requested::Limited { retry_after }) => {
            let minutes = retry_after.as_secs().div_ceil(60).max(1);
            let mut res = message(
                &site,
                StatusCode::TOO_MANY_REQUESTS,
                "Too many sign-in links",
                vec![format!(
                    "Too many links were asked for this address or from your network. Try again in {minutes} minutes."
                )],
                ("/", "Back to the jobs"),
            )?;
            if let Ok(v) = HeaderValue::from_str(&retry_after.as_secs().max(1).to_string()) {
                res.headers_mut().insert(header::RETRY_AFTER, v);
            }
            Ok(res)
        }
        Err(Error::Invalid(errors)) => {
            let notice = "Check the address: it cannot receive mail as written.".to_string();
            let html = form_page(&app, &site, &form, errors, Some(notice)).await?;
            Ok(html
                .status(StatusCode::UNPROCESSABLE_ENTITY)
                .into_response())
        }
        Err(e) => Err(e.into()),
    }
}

/// `GET /account/sign-in/{token}`: the link from the mail signs in (a new session, a new
/// cookie) and goes to the account.
pub async fn open(
    State(app): State<AppState>,
    site: Site,
    Path(token): Path<String>,
) -> Result<Response, PageError> {
    match accounts::sign_in(&app.db, &site.org, &token, &app.config.dashboard).await? {
        Some(started) => {
            let to = if started.created {
                "/account?welcome=1"
            } else {
                "/account"
            };
            let mut res = with_cookie(&app, see_other(to), Some(&started.session_id));
            res.headers_mut()
                .insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
            Ok(res)
        }
        None => message(
            &site,
            StatusCode::NOT_FOUND,
            "This link does not work",
            vec![
                "A sign-in link works once, for 15 minutes, on the board it was sent from. This one was used, has expired, or was not sent by this board.".into(),
            ],
            ("/account/sign-in", "Ask for a new link"),
        ),
    }
}

/// `POST /account/sign-out`: ends the session everywhere it could be used.
pub async fn sign_out(State(app): State<AppState>, posted: Posted) -> Result<Response, PageError> {
    accounts::end(&app.db, &posted.member.session).await?;
    Ok(with_cookie(&app, see_other("/"), None))
}
