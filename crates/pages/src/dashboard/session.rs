//! Who is asking: the signed-in staff member of a request ([`Staff`], from the session
//! cookie), a state-changing form of theirs that passed the anti-forgery checks
//! ([`Posted`]), and a visitor to the sign-in and setup pages ([`Visitor`], whose forms are
//! bound to a cookie of their own so that nobody can sign a browser in to another account).
//!
//! Cookies are `HttpOnly` and `SameSite=Lax`; with an https `public_url` they are also
//! `Secure` and carry the `__Host-` prefix (which pins them to this host and path `/`).

use axum::{
    extract::{FromRequest, FromRequestParts, Request},
    http::{HeaderMap, HeaderValue, StatusCode, header, request::Parts},
    response::{IntoResponse, Response},
};
use base64::Engine as _;
use rand::RngCore;

use jobboard_domain::{
    OrgId,
    sessions::{self, SignedIn},
};

use super::cookies::{LOGIN, cookie_name, read_cookie, set_cookie};
pub use super::cookies::{
    pending_cookie, session_cookie, with_pending_cookie, with_session_cookie,
};
use crate::{
    error::PageError,
    forms::{self, FormData},
    site,
};
use jobboard_app::app::{App, AppState};

/// A `303 See Other` to `location`.
pub fn see_other(location: &str) -> Response {
    let mut res = StatusCode::SEE_OTHER.into_response();
    let h = res.headers_mut();
    if let Ok(v) = HeaderValue::from_str(location) {
        h.insert(header::LOCATION, v);
    }
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

/// The time form tokens are issued and checked at, in Unix seconds.
fn now_secs(app: &App) -> i64 {
    app.clock.now().unix_seconds()
}

/// Answer to a form that failed the anti-forgery checks: nothing was changed (the
/// dashboard's forms and the members' alike).
pub(crate) fn refused() -> Response {
    PageError::new(
        StatusCode::FORBIDDEN,
        "This form cannot be accepted",
        "The form was sent from another site, or it is too old. Nothing was changed. Go back, reload the page and try again.",
    )
    .into_response()
}

/// The signed-in staff member of a request. Without a live session the request is
/// answered `303` to the sign-in page (and a stale cookie removed).
#[derive(Debug, Clone)]
pub struct Staff {
    pub session: SignedIn,
    /// The anti-forgery token every form of this page carries.
    pub csrf: String,
}

impl Staff {
    pub fn org_id(&self) -> OrgId {
        self.session.org_id
    }
}

/// What anti-forgery tokens of a session are bound to.
fn binding(s: &SignedIn) -> String {
    format!("dashboard:{}", hex::encode(&s.id_hash))
}

impl FromRequestParts<AppState> for Staff {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, app: &AppState) -> Result<Self, Response> {
        let Some(id) = session_cookie(app, &parts.headers) else {
            return Err(see_other("/dashboard/login"));
        };
        let now = app.clock.now();
        let session = match sessions::resume(&app.db, &id, now, &app.config.dashboard).await {
            Ok(Some(s)) => s,
            Ok(None) => {
                return Err(with_session_cookie(
                    app,
                    see_other("/dashboard/login?notice=session_ended"),
                    None,
                ));
            }
            Err(e) => return Err(PageError::from(e).into_response()),
        };
        let csrf = crate::board::gate::token(app, &binding(&session))
            .await
            .map_err(IntoResponse::into_response)?;
        Ok(Staff { session, csrf })
    }
}

/// A state-changing form of a signed-in staff member that passed the checks: the post
/// names no other site as its origin, and its `csrf` token was issued for this session.
pub struct Posted {
    pub staff: Staff,
    pub form: FormData,
}

impl FromRequest<AppState> for Posted {
    type Rejection = Response;

    async fn from_request(req: Request, app: &AppState) -> Result<Self, Response> {
        let (mut parts, body) = req.into_parts();
        let staff = Staff::from_request_parts(&mut parts, app).await?;
        let audit = parts.extensions.get::<super::audit::Slot>().cloned();
        let origins = site::form_origins_of(app, Some(&parts.extensions), &parts.headers)
            .await
            .map_err(IntoResponse::into_response)?;
        let who = staff.session.user_id.to_string();
        let form = checked_form(
            app,
            Request::from_parts(parts, body),
            &origins,
            &binding(&staff.session),
            ("dashboard", &who),
        )
        .await?;
        if let Some(slot) = audit {
            slot.note(&staff, &form);
        }
        Ok(Posted { staff, form })
    }
}

/// Reads the form of `req`, a state-changing form of a signed-in user (staff, or a
/// member): refused, with nothing read further, unless it names one of `origins` as its
/// origin and carries a `csrf` token issued for `binding`. `who` (the door and the
/// user's id) is for the log.
pub(crate) async fn checked_form(
    app: &AppState,
    req: Request,
    origins: &[String],
    binding: &str,
    who: (&str, &str),
) -> Result<FormData, Response> {
    let (door, id) = who;
    if !forms::same_origin(req.headers(), origins) {
        tracing::warn!(door, id, "form from another origin refused");
        return Err(refused());
    }
    let form = FormData::from_request(req, app)
        .await
        .map_err(IntoResponse::into_response)?;
    let key = app
        .form_key()
        .await
        .map_err(|e| PageError::from(e).into_response())?;
    let token = form.get("csrf").unwrap_or("");
    if !forms::verify(key, binding, token, now_secs(app)) {
        tracing::warn!(door, id, "form with a bad token refused");
        return Err(refused());
    }
    Ok(form)
}

/// The client's address (behind trusted proxies, the forwarded one), which the password
/// throttle counts attempts of.
pub struct ClientAddr(pub Option<std::net::IpAddr>);

impl FromRequestParts<AppState> for ClientAddr {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        app: &AppState,
    ) -> Result<Self, std::convert::Infallible> {
        Ok(ClientAddr(jobboard_app::net::client_ip(
            &parts.extensions,
            &parts.headers,
            &app.config.trusted_proxies,
        )))
    }
}

/// A form of the sign-in, setup or password-reset pages that passed
/// [`Visitor::check`] (same origin, a token bound to the visitor's cookie); otherwise the
/// answer to send.
pub struct VisitorForm(pub FormData);

impl FromRequest<AppState> for VisitorForm {
    type Rejection = Response;

    async fn from_request(req: Request, app: &AppState) -> Result<Self, Response> {
        let headers = req.headers().clone();
        let form = FormData::from_request(req, app)
            .await
            .map_err(IntoResponse::into_response)?;
        Visitor::check(app, &headers, &form).await?;
        Ok(VisitorForm(form))
    }
}

/// A visitor of the sign-in or setup page: the cookie their forms are bound to, and the
/// token of those forms.
pub struct Visitor {
    pub csrf: String,
    /// A new cookie to set with the page (the visitor had none).
    new_cookie: Option<String>,
}

fn visitor_binding(cookie: &str) -> String {
    format!("dashboard-login:{cookie}")
}

impl Visitor {
    /// The visitor of a page showing a sign-in or setup form.
    pub async fn of(app: &App, headers: &HeaderMap) -> Result<Visitor, PageError> {
        let existing = read_cookie(headers, &cookie_name(app, LOGIN));
        let (cookie, new_cookie) = match existing {
            Some(c) => (c, None),
            None => {
                let mut raw = [0u8; 24];
                rand::rng().fill_bytes(&mut raw);
                let c = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw);
                (c.clone(), Some(c))
            }
        };
        let key = app.form_key().await?;
        Ok(Visitor {
            csrf: forms::token(key, &visitor_binding(&cookie), now_secs(app)),
            new_cookie,
        })
    }

    /// The SHA-256 of the request's sign-in pages' cookie (what a pending sign-in is bound
    /// to), if it has one.
    pub fn cookie_hash(app: &App, headers: &HeaderMap) -> Option<Vec<u8>> {
        use sha2::Digest as _;
        read_cookie(headers, &cookie_name(app, LOGIN))
            .map(|c| sha2::Sha256::digest(c.as_bytes()).to_vec())
    }

    /// Adds the visitor's cookie to a page that shows a form.
    pub fn set_cookie(&self, app: &App, mut res: Response) -> Response {
        if let Some(c) = &self.new_cookie {
            res.headers_mut()
                .append(header::SET_COOKIE, set_cookie(app, LOGIN, Some(c)));
        }
        res
    }

    /// Checks a posted sign-in or setup form: same origin, and a token bound to the
    /// visitor's cookie. `Err` is the answer to send.
    pub async fn check(app: &App, headers: &HeaderMap, form: &FormData) -> Result<(), Response> {
        let origins = site::form_origins_of(app, None, headers)
            .await
            .map_err(IntoResponse::into_response)?;
        if !forms::same_origin(headers, &origins) {
            return Err(refused());
        }
        let Some(cookie) = read_cookie(headers, &cookie_name(app, LOGIN)) else {
            return Err(PageError::new(
                StatusCode::FORBIDDEN,
                "Cookies are needed to sign in",
                "Your browser did not send the cookie of the sign-in page. Allow cookies for this site, reload the page and try again.",
            )
            .into_response());
        };
        let key = app
            .form_key()
            .await
            .map_err(|e| PageError::from(e).into_response())?;
        let token = form.get("csrf").unwrap_or("");
        if forms::verify(key, &visitor_binding(&cookie), token, now_secs(app)) {
            Ok(())
        } else {
            Err(refused())
        }
    }
}
