//! What a form submission to the board must pass before anything is stored: it comes from
//! this board (`Origin`, else `Referer`), carries a valid token of this form, leaves the
//! hidden trap field empty, and stays within the per-address limit (`form_limit` a
//! minute, the address honouring `trusted_proxies`). Shared by the employer's form and
//! the application form.

use axum::{
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};

use jobboard_app::app::AppState;

use crate::{
    error::PageError,
    forms::{self, FormData},
    site::Site,
};

/// The hidden field people never see (bots fill every field).
pub(super) const TRAP: &str = "reference_code";

/// The outcome of [`screen`].
pub(crate) enum Screened {
    /// Store it.
    Passed,
    /// The token is missing, wrong or too old: show the form again with what was typed.
    BadToken,
    /// Refused with this page; nothing stored.
    Refused(Response),
}

/// Screens a submission of the form bound to `binding`; `unsaved` ends the refusal
/// messages ("the job was not saved").
pub(crate) async fn screen(
    app: &AppState,
    site: &Site,
    headers: &HeaderMap,
    form: &FormData,
    binding: &str,
    unsaved: &str,
) -> Result<Screened, PageError> {
    if !forms::same_origin(headers, &site.form_origins) {
        return Ok(Screened::Refused(
            PageError::new(
                StatusCode::FORBIDDEN,
                "Sent from another site",
                format!(
                    "This form was sent from another website, so {unsaved}. Open the form on this board and send it from there."
                ),
            )
            .into_response(),
        ));
    }
    let key = app.form_key().await?;
    let token_ok = form
        .get("_token")
        .is_some_and(|t| forms::verify(key, binding, t, app.clock.now().unix_seconds()));
    if !token_ok {
        return Ok(Screened::BadToken);
    }
    if form.trapped(TRAP) {
        return Ok(Screened::Refused(
            PageError::bad_request(format!(
                "A field that people cannot see was filled in, as automated programs do, so {unsaved}. If you filled in the form yourself, please open it again and send it without browser extensions that fill forms."
            ))
            .into_response(),
        ));
    }
    let client = site
        .client
        .map_or_else(|| "unknown".to_string(), |ip| ip.to_string());
    let decision = app
        .limiter
        .check(&format!("form:{client}"), app.config.form_limit)
        .await
        .map_err(|e| PageError::internal(&e))?;
    if !decision.allowed {
        let mut res = PageError::too_many(decision.retry_after_secs).into_response();
        if let Ok(v) = HeaderValue::from_str(&decision.retry_after_secs.to_string()) {
            res.headers_mut().insert(header::RETRY_AFTER, v);
        }
        return Ok(Screened::Refused(res));
    }
    Ok(Screened::Passed)
}

/// A fresh token of the form bound to `binding`.
pub(crate) async fn token(app: &AppState, binding: &str) -> Result<String, PageError> {
    let key = app.form_key().await?;
    Ok(forms::token(key, binding, app.clock.now().unix_seconds()))
}
