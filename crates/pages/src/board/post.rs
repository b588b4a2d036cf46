//! `GET /post-a-job` and `POST /post-a-job`: the employer's form, derived from the job
//! model's fields ([`model_form`], without the staff-only ones). A submission becomes
//! the body `POST /api/jobs` takes and is created by the same operation (so the same
//! validation, each problem shown beside its field, and `job.created`), always as
//! `pending`: it is listed once staff approve it.
//!
//! Before anything is stored a submission passes the board's form checks ([`gate`]); a
//! refused one stores nothing and says why.
//!
//! Where the organization sells posts (a processor account and a price), the form also
//! asks for the price; the job is then stored as a draft with its order, and the poster
//! is sent to the processor's checkout ([`super::checkout`]).

use askama::Template;
use axum::{
    extract::{RawQuery, State},
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Redirect, Response},
};

use super::{
    Frame,
    gate::{self, Screened},
};
use crate::{
    error::PageError,
    fields::values_of,
    forms::{FieldMessages, FormData},
    model_form::{self, Door, Fieldset},
    page::{Chrome, Html},
    site::Site,
};
use jobboard_app::app::AppState;
use jobboard_domain::{
    Error, categories,
    jobs::{self, Job},
    payments,
};

#[derive(Template)]
#[template(path = "board/post.html")]
struct PostPage {
    chrome: Chrome,
    frame: Frame,
    groups: Vec<Fieldset>,
    /// Every problem, in field order, for the summary above the form: (field, message).
    problems: Vec<(String, String)>,
    notice: Option<String>,
    sent: bool,
    token: String,
    /// The prices to choose from (none: posting is free): (id, label, chosen).
    prices: Vec<(String, String, bool)>,
    price_error: Option<String>,
}

fn binding(site: &Site) -> String {
    format!("board:{}:post-a-job", site.org.id)
}

/// The form page with `form`'s values, `errors` beside their fields and `notice` above.
async fn page(
    app: &AppState,
    site: &Site,
    form: FormData,
    errors: Vec<jobboard_domain::FieldError>,
    notice: Option<String>,
    sent: bool,
) -> Result<Html, PageError> {
    let token = gate::token(app, &binding(site)).await?;
    let mut chrome =
        Chrome::new(format!("Post a job – {}", site.org.name)).with_theme(&site.theme.css);
    chrome.description = Some(format!(
        "Submit a job to {}. It is listed once it has been approved.",
        site.org.name
    ));
    chrome.canonical = Some(site.url("/post-a-job"));
    let categories = categories::list(&app.db, site.org.id).await?;
    let offer = payments::offer(&app.db, site.org.id).await?;
    let price_error = errors
        .iter()
        .find(|e| e.field == "price_id")
        .map(|e| e.message.clone());
    let (prices, origin) = match &offer {
        Some(o) => (
            super::checkout::price_choices(&o.prices, form.get("price_id")),
            o.account.checkout_origin(),
        ),
        None => (Vec::new(), String::new()),
    };
    let tpl = PostPage {
        chrome,
        frame: Frame::of(site, "/post-a-job"),
        groups: model_form::fieldsets(
            &Job::form_fields(),
            Door::Public,
            &categories,
            &values_of(&form),
            &FieldMessages::of(&errors),
        )
        .0,
        problems: errors
            .iter()
            .map(|e| (e.field.clone(), e.message.clone()))
            .collect(),
        notice,
        sent,
        token,
        prices,
        price_error,
    };
    Ok(Html::render(&tpl, Some(&site.theme.csp_hash))?
        .allow_form_action(&origin)
        .cache_control("private, no-store"))
}

/// The empty form (or, after a submission, its confirmation).
pub async fn show(
    State(app): State<AppState>,
    site: Site,
    RawQuery(raw): RawQuery,
) -> Result<Html, PageError> {
    if !site.org.public_posting {
        return Err(PageError::not_found());
    }
    let sent = raw.as_deref() == Some("sent=1");
    page(&app, &site, FormData::default(), Vec::new(), None, sent).await
}

/// A submission.
pub async fn submit(
    State(app): State<AppState>,
    site: Site,
    headers: HeaderMap,
    form: FormData,
) -> Result<Response, PageError> {
    if !site.org.public_posting {
        return Err(PageError::not_found());
    }
    match gate::screen(
        &app,
        &site,
        &headers,
        &form,
        &binding(&site),
        "the job was not saved",
    )
    .await?
    {
        Screened::Passed => {}
        Screened::BadToken => {
            let notice = "The form had expired or did not come from this page, so nothing was saved. Your text is kept below: please check it and send it again.".to_string();
            let html = page(&app, &site, form, Vec::new(), Some(notice), false).await?;
            return Ok(html.status(StatusCode::FORBIDDEN).into_response());
        }
        Screened::Refused(res) => return Ok(res),
    }
    let price_id = form
        .get("price_id")
        .and_then(|v| v.parse::<uuid::Uuid>().ok());
    match payments::offer(&app.db, site.org.id).await? {
        None => match jobs::create(&app.db, site.org.id, body_of(&form)).await {
            Ok(_) => Ok(Redirect::to("/post-a-job?sent=1").into_response()),
            Err(e) => refused(&app, &site, form, e).await,
        },
        Some(offer) => {
            match payments::start_post(&app.db, &site.org, price_id, body_of(&form), None).await {
                Ok((job, order, price)) => {
                    super::checkout::open(
                        &app,
                        &site,
                        &offer.account,
                        &order,
                        jobboard_delivery::processor::Line::Priced {
                            price: &price,
                            title: &job.title,
                        },
                    )
                    .await
                }
                Err(e) => refused(&app, &site, form, e).await,
            }
        }
    }
}

/// The answer to a submission the operation refused: the form again with the problems
/// beside their fields, or the error.
async fn refused(
    app: &AppState,
    site: &Site,
    form: FormData,
    e: Error,
) -> Result<Response, PageError> {
    match e {
        Error::Invalid(errors) => {
            let n = errors.len();
            let notice = if n == 1 {
                "One field needs a correction before the job can be saved.".to_string()
            } else {
                format!("{n} fields need a correction before the job can be saved.")
            };
            let html = page(app, site, form, errors, Some(notice), false).await?;
            Ok(html
                .status(StatusCode::UNPROCESSABLE_ENTITY)
                .into_response())
        }
        e => Err(e.into()),
    }
}

/// The body `POST /api/jobs` takes, from the form's fields (never a `status`: a new job
/// waits for approval).
fn body_of(form: &FormData) -> jobboard_domain::Input {
    model_form::body_of(&Job::form_fields(), Door::Public, form)
}
