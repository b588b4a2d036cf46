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
use serde_json::{Map, Value, json};

use super::{
    Frame,
    gate::{self, Screened},
};
use crate::{
    app::AppState,
    domain::{
        Error, FieldError, Input,
        cms::{self, Collection, FieldDef, FieldType, Moderation, Visibility},
    },
    web::{
        error::PageError,
        forms::{FieldMessages, FormData, FormValue},
        page::{Chrome, Html},
        site::Site,
    },
};

#[derive(Template)]
#[template(path = "board/cms_submit.html")]
struct SubmitPage {
    chrome: Chrome,
    frame: Frame,
    name: String,
    list_href: String,
    action: String,
    fields: Vec<Field>,
    problems: Vec<(String, String)>,
    notice: Option<String>,
    sent: bool,
    moderated: bool,
    token: String,
}

/// One field of the form, from a schema field.
struct Field {
    /// The form field's name: `data_` and the schema field's (so that no schema field
    /// meets the form's own fields).
    name: String,
    label: String,
    /// `text`, `textarea`, `number`, `checkbox`, `date`, `url` or `select`.
    control: &'static str,
    hint: String,
    required: bool,
    value: String,
    /// For selects: (value, selected).
    options: Vec<(String, bool)>,
    /// Bounds of a number field, as attributes.
    min: Option<String>,
    max: Option<String>,
    maxlength: Option<i64>,
    error: Option<String>,
}

impl Field {
    fn checked(&self) -> bool {
        !self.value.is_empty()
    }
}

fn form_name(def: &FieldDef) -> String {
    format!("data_{}", def.name)
}

/// `release_date` → "Release date".
fn label_of(name: &str) -> String {
    let s = name.replace('_', " ");
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => s,
    }
}

/// How a schema field's value is typed into the form.
fn form_value(kind: FieldType) -> FormValue {
    match kind {
        FieldType::Number => FormValue::Number,
        FieldType::Boolean => FormValue::Checkbox,
        _ => FormValue::Text,
    }
}

fn fields(collection: &Collection, form: &FormData, errors: &FieldMessages) -> Vec<Field> {
    collection
        .schema
        .0
        .iter()
        .map(|def| {
            let name = form_name(def);
            let (control, hint) = match def.kind {
                FieldType::Text => ("text", String::new()),
                FieldType::Longtext => ("textarea", String::new()),
                FieldType::Number => ("number", String::new()),
                FieldType::Boolean => ("checkbox", String::new()),
                FieldType::Date => ("date", String::new()),
                FieldType::Url => ("url", "An address starting with https://".to_string()),
                FieldType::Image => ("url", "The https:// address of an image.".to_string()),
                FieldType::Select => ("select", String::new()),
            };
            let value = form.get(&name).unwrap_or("").to_string();
            let options = def
                .options
                .iter()
                .flatten()
                .map(|o| (o.clone(), *o == value))
                .collect();
            Field {
                label: label_of(&def.name),
                control,
                hint,
                required: def.required && def.kind != FieldType::Boolean,
                options,
                min: def.min.map(|v| v.to_string()),
                max: def.max.map(|v| v.to_string()),
                maxlength: def.max_length,
                error: errors.get(&name).map(str::to_string),
                value,
                name,
            }
        })
        .collect()
}

/// The body `POST /api/cms/{slug}/submit` takes, from the form: each schema field's
/// value typed as its field says (an empty box is not sent).
fn body_of(collection: &Collection, form: &FormData) -> Input {
    let mut data = Map::new();
    for def in &collection.schema.0 {
        if let Some(v) = form_value(def.kind).convert(form.get(&form_name(def))) {
            data.insert(def.name.clone(), v);
        }
    }
    match json!({ "data": Value::Object(data) }) {
        Value::Object(map) => Input::new(map),
        _ => Input::new(Map::new()),
    }
}

/// The operation's problems named by the form's fields (`data.title` → `data_title`).
fn on_fields(errors: Vec<FieldError>) -> Vec<FieldError> {
    errors
        .into_iter()
        .map(|mut e| {
            if let Some(rest) = e.field.strip_prefix("data.") {
                e.field = format!("data_{}", rest.split('.').next().unwrap_or(rest));
            }
            e
        })
        .collect()
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
        fields: fields(collection, &form, &FieldMessages::of(&errors)),
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
            let errors = on_fields(errors);
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
