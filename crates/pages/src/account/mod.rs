//! The members' door on the board (`/account`, docs/members.md): signing in with a link
//! sent by mail ([`sign_in`]), the member's home ([`home`]), an employer's jobs
//! ([`jobs`]), a job seeker's saved jobs and every member's data ([`data`]).
//!
//! A member's session is its own cookie (`jobboard_member`: `HttpOnly`, `SameSite=Lax`,
//! `Secure` with the `__Host-` prefix when `public_url` is https), stored like the
//! dashboard's and bound to the board it was started on. Every form carries an
//! anti-forgery token bound to the session and passes the origin check; pages are
//! `private, no-store` and not indexed. Nothing needs JavaScript.

mod data;
mod home;
mod jobs;
mod sign_in;

use axum::{
    Router,
    extract::{FromRequest, FromRequestParts, Request},
    http::{HeaderMap, request::Parts},
    response::{IntoResponse, Response},
    routing::{get, post},
};

use jobboard_app::app::{App, AppState};
use jobboard_domain::accounts::{self, Session};

use crate::{
    dashboard::cookies::{self, cookie_name, read_cookie},
    dashboard::session::{checked_form, see_other},
    error::PageError,
    forms::FormData,
    site::Site,
};

/// The member session cookie's name without its prefix.
const COOKIE: &str = "jobboard_member";

/// Every route of the members' door.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/account", get(home::show))
        .route(
            "/account/sign-in",
            get(sign_in::show).post(sign_in::request),
        )
        .route("/account/sign-in/{token}", get(sign_in::open))
        .route("/account/sign-out", post(sign_in::sign_out))
        .route("/account/packs/{id}", post(home::buy_pack))
        .route("/account/jobs", get(jobs::list))
        .route("/account/jobs/new", get(jobs::new_form).post(jobs::create))
        .route(
            "/account/jobs/{id}/edit",
            get(jobs::edit_form).post(jobs::update),
        )
        .route("/account/jobs/{id}/close", post(jobs::close))
        .route("/account/jobs/{id}/renew", post(jobs::renew))
        .route("/account/jobs/{id}/feature", post(jobs::feature))
        .route("/account/jobs/{id}/applications", get(jobs::applications))
        .route(
            "/account/jobs/{id}/applications.csv",
            get(jobs::applications_csv),
        )
        .route("/jobs/{slug}/save", get(data::save_form).post(data::save))
        .route("/account/saved", get(data::saved))
        .route("/account/saved/{id}/remove", post(data::remove))
        .route("/account/export", get(data::export))
        .route(
            "/account/delete",
            get(data::confirm_delete).post(data::delete),
        )
}

/// A `Set-Cookie` for the member's session (a new one, or its removal) added to `res`.
fn with_cookie(app: &App, res: Response, id: Option<&str>) -> Response {
    cookies::with_cookie(app, res, COOKIE, id)
}

fn session_cookie(app: &App, headers: &HeaderMap) -> Option<String> {
    read_cookie(headers, &cookie_name(app, COOKIE))
}

/// What a member's form tokens are bound to.
fn binding(s: &Session) -> String {
    format!("account:{}", hex::encode(&s.id_hash))
}

/// The signed-in member of a request on this board. Without a live session the request
/// is answered `303` to the sign-in page (and a stale cookie removed).
pub struct Member {
    pub site: Site,
    pub session: Session,
    /// The anti-forgery token every form of the page carries.
    pub csrf: String,
}

impl FromRequestParts<AppState> for Member {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, app: &AppState) -> Result<Self, Response> {
        let site = Site::from_request_parts(parts, app)
            .await
            .map_err(IntoResponse::into_response)?;
        let Some(id) = session_cookie(app, &parts.headers) else {
            return Err(see_other("/account/sign-in"));
        };
        let session = match accounts::resume(&app.db, site.org.id, &id, &app.config.dashboard).await
        {
            Ok(Some(s)) => s,
            Ok(None) => {
                return Err(with_cookie(
                    app,
                    see_other("/account/sign-in?ended=1"),
                    None,
                ));
            }
            Err(e) => return Err(PageError::from(e).into_response()),
        };
        let csrf = crate::board::gate::token(app, &binding(&session))
            .await
            .map_err(IntoResponse::into_response)?;
        Ok(Member {
            site,
            session,
            csrf,
        })
    }
}

/// A state-changing form of a signed-in member that passed the checks: it comes from
/// this board, and its `csrf` token was issued for this session.
pub struct Posted {
    pub member: Member,
    pub form: FormData,
}

impl FromRequest<AppState> for Posted {
    type Rejection = Response;

    async fn from_request(req: Request, app: &AppState) -> Result<Self, Response> {
        let (mut parts, body) = req.into_parts();
        let member = Member::from_request_parts(&mut parts, app).await?;
        let who = member.session.member.id.to_string();
        let form = checked_form(
            app,
            Request::from_parts(parts, body),
            &member.site.form_origins,
            &binding(&member.session),
            ("account", &who),
        )
        .await?;
        Ok(Posted { member, form })
    }
}
