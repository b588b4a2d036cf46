//! `GET /c/<collection>/submit` and `POST /c/<collection>/submit`: the submission form of
//! a public collection whose rules allow public submissions, made from its schema (a text
//! box per text field, a number box, a check box, a date, a web address, a choice). A
//! submission passes the board's form checks ([`gate`]), then is stored by the operation
//! `POST /api/cms/{slug}/submit` calls (same schema checks, each problem beside its field;
//! `pending_review` under manual moderation, `published` under auto).

use askama::Template;
use axum::{
    extract::{Path, RawQuery, State},
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Redirect, Response},
};
use jobboard_domain::cms::Purge as _;
use serde_json::{Map, Value};

use super::{
    Frame,
    gate::{self, Screened},
};
use crate::{
    error::PageError,
    forms::{FieldMessages, FormData},
    page::{Chrome, Html},
    schema_form::{self, Dates, SchemaField},
    site::Site,
};
use jobboard_app::app::AppState;
use jobboard_domain::{
    Error, FieldError, Input,
    cms::{self, Collection, Moderation, Visibility},
};

#[derive(Template)]
#[template(path = "board/cms_submit.html")]
struct SubmitPage {
    chrome: Chrome,
    frame: Frame,
    name: String,
    list_href: String,
    action: String,
    schema_fields: Vec<SchemaField>,
    problems: Vec<(String, String)>,
    notice: Option<String>,
    sent: bool,
    moderated: bool,
    token: String,
}

/// The body `POST /api/cms/{slug}/submit` takes, from the form.
fn body_of(collection: &Collection, form: &FormData) -> Input {
    let mut map = Map::new();
    map.insert(
        "data".into(),
        Value::Object(schema_form::data_of(&collection.schema.0, form)),
    );
    Input::new(map)
}

/// The public collection of `slug` that takes submissions, or a 404.
async fn open_collection(app: &AppState, site: &Site, slug: &str) -> Result<Collection, PageError> {
    match cms::submission_target(&app.db, site.org.id, slug).await {
        Ok(c) if c.visibility == Visibility::Public => Ok(c),
        Ok(_) | Err(Error::NotFound(_)) => Err(PageError::not_found()),
        Err(e) => Err(e.into()),
    }
}

fn binding(site: &Site, collection: &Collection) -> String {
    format!("board:{}:cms-submit:{}", site.org.id, collection.id)
}

async fn page(
    app: &AppState,
    site: &Site,
    collection: &Collection,
    form: FormData,
    errors: Vec<FieldError>,
    notice: Option<String>,
    sent: bool,
) -> Result<Html, PageError> {
    let token = gate::token(app, &binding(site, collection)).await?;
    let list_href = format!("/c/{}", collection.slug);
    let action = format!("{list_href}/submit");
    let mut chrome = Chrome::new(format!("Submit to {} – {}", collection.name, site.org.name))
        .with_theme(&site.theme.css);
    chrome.canonical = Some(site.url(&action));
    let tpl = SubmitPage {
        chrome,
        frame: Frame::of(site, &action),
        name: collection.name.clone(),
        schema_fields: schema_form::fields(
            &collection.schema.0,
            &form,
            &FieldMessages::of(&errors),
            Dates::Picker,
        ),
        problems: errors
            .iter()
            .map(|e| (e.field.clone(), e.message.clone()))
            .collect(),
        notice,
        sent,
        moderated: collection.rules.moderation == Moderation::Manual,
        token,
        list_href,
        action,
    };
    Ok(Html::render(&tpl, Some(&site.theme.csp_hash))?
        .cache_control("private, no-store")
        .robots("noindex"))
}

/// `GET /c/<collection>/submit`: the empty form (or, after a submission, its
/// confirmation).
pub async fn show(
    State(app): State<AppState>,
    site: Site,
    Path(slug): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Html, PageError> {
    let collection = open_collection(&app, &site, &slug).await?;
    let sent = raw.as_deref() == Some("sent=1");
    page(
        &app,
        &site,
        &collection,
        FormData::default(),
        Vec::new(),
        None,
        sent,
    )
    .await
}

/// `POST /c/<collection>/submit`: a submission.
pub async fn submit(
    State(app): State<AppState>,
    site: Site,
    headers: HeaderMap,
    Path(slug): Path<String>,
    form: FormData,
) -> Result<Response, PageError> {
    let collection = open_collection(&app, &site, &slug).await?;
    match gate::screen(
        &app,
        &site,
        &headers,
        &form,
        &binding(&site, &collection),
        "the entry was not saved",
    )
    .await?
    {
        Screened::Passed => {}
        Screened::BadToken => {
            let notice = "The form had expired or did not come from this page, so nothing was saved. What you typed is kept below: please check it and send it again.".to_string();
            let html = page(
                &app,
                &site,
                &collection,
                form,
                Vec::new(),
                Some(notice),
                false,
            )
            .await?;
            return Ok(html.status(StatusCode::FORBIDDEN).into_response());
        }
        Screened::Refused(res) => return Ok(res),
    }
    match cms::submit(
        &app.db,
        site.org.id,
        &collection,
        body_of(&collection, &form),
    )
    .await
    {
        Ok(_) => {
            app.cms_cache.purge(site.org.id, collection.id);
            Ok(Redirect::to(&format!("/c/{}/submit?sent=1", collection.slug)).into_response())
        }
        Err(Error::Schema(errors) | Error::Invalid(errors)) => {
            let errors = schema_form::on_controls(errors);
            let n = errors.len();
            let notice = if n == 1 {
                "One field needs a correction before the entry can be saved.".to_string()
            } else {
                format!("{n} fields need a correction before the entry can be saved.")
            };
            let html = page(&app, &site, &collection, form, errors, Some(notice), false).await?;
            Ok(html
                .status(StatusCode::UNPROCESSABLE_ENTITY)
                .into_response())
        }
        Err(e) => Err(e.into()),
    }
}
