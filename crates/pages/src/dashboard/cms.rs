//! CMS: the organization's collections, and a form to create one or change its name,
//! visibility, rules and schema (as `POST /api/cms` does). The schema is edited as rows,
//! one per field, with three empty rows to add fields; clearing a row's name removes
//! that field. Items are in [`super::cms_items`].

use askama::Template;
use axum::{
    extract::{Path, State},
    http::StatusCode,
    response::Response,
};
use jobboard_domain::cms::Purge as _;
use serde_json::{Map, Value, json};

use super::{Nav, Notice, Posted, Staff, chrome, render, render_status, session::see_other};
use crate::fields::{Choice, FieldView, Problem, fill, values_of};
use crate::{
    error::PageError,
    forms::{FieldMessages, FormData},
    page::Chrome,
};
use jobboard_app::app::AppState;
use jobboard_domain::{
    Error, FieldError, Input,
    cms::{self, Collection, FieldType, Moderation, SortDir, Visibility},
};

/// Empty rows offered below a schema's fields, to add fields.
const SPARE_ROWS: usize = 3;

struct CollectionRow {
    slug: String,
    name: String,
    visibility: &'static str,
    fields: usize,
    submissions: String,
}

#[derive(Template)]
#[template(path = "dashboard/cms.html")]
struct CollectionsPage {
    chrome: Chrome,
    nav: Nav,
    rows: Vec<CollectionRow>,
}

/// `GET /dashboard/cms`
pub async fn list(
    staff: Staff,
    State(app): State<AppState>,
    Notice(notice): Notice,
) -> Result<Response, PageError> {
    let rows = cms::list_collections(&app.db, staff.org_id())
        .await?
        .into_iter()
        .map(|c| CollectionRow {
            submissions: if !c.rules.allow_public_submit {
                "Closed".into()
            } else if c.rules.moderation == Moderation::Manual {
                "Open, reviewed".into()
            } else {
                "Open, published at once".into()
            },
            fields: c.schema.0.len(),
            visibility: c.visibility.as_str(),
            slug: c.slug,
            name: c.name,
        })
        .collect();
    render(&CollectionsPage {
        chrome: chrome("CMS"),
        nav: Nav::new(&staff, "cms").notice(notice.as_deref()),
        rows,
    })
}

/// One row of the schema editor.
struct SchemaRow {
    index: usize,
    name: String,
    kind: String,
    required: bool,
    options: String,
    min: String,
    max: String,
    max_length: String,
    /// Problems of the row's field, with the control they belong to.
    errors: Vec<(String, String)>,
}

#[derive(Template)]
#[template(path = "dashboard/cms_collection.html")]
struct CollectionPage {
    chrome: Chrome,
    nav: Nav,
    /// The slug of the collection being edited; `None` for a new one.
    editing: Option<String>,
    fields: Vec<FieldView>,
    rows: Vec<SchemaRow>,
    types: Vec<&'static str>,
    problems: Vec<Problem>,
}

fn form_fields(editing: bool) -> Vec<FieldView> {
    let mut f = vec![FieldView::new("name", "Name", "text").required()];
    if !editing {
        f.push(
            FieldView::new("slug", "Slug", "text")
                .hint("Its address: a lower-case letter, then letters, digits, - or _ (e.g. events). It cannot change later.")
                .required(),
        );
    }
    f.extend([
        FieldView::new("visibility", "Visibility", "select").choices(vec![
            Choice::new("public", "Public: shown on the board"),
            Choice::new("gated", "Gated"),
            Choice::new("private", "Private"),
        ]),
        FieldView::new(
            "allow_public_submit",
            "Anyone may submit entries (on the board and through the API)",
            "checkbox",
        ),
        FieldView::new("moderation", "Submissions", "select").choices(vec![
            Choice::new("manual", "Wait for review"),
            Choice::new("auto", "Are published at once"),
        ]),
        FieldView::new("sort_by", "Order of the lists", "select").choices(vec![
            Choice::new("", "By position, then newest first"),
            Choice::new("created_at", "By creation"),
            Choice::new("updated_at", "By last change"),
            Choice::new("position", "By position"),
            Choice::new("starts_at", "By start"),
            Choice::new("expires_at", "By end"),
        ]),
        FieldView::new("sort_dir", "Direction", "select").choices(vec![
            Choice::new("asc", "Ascending"),
            Choice::new("desc", "Descending"),
        ]),
    ]);
    f
}

/// The form values of a stored collection.
fn form_of(c: &Collection) -> FormData {
    let mut v: Vec<(String, String)> = vec![
        ("name".into(), c.name.clone()),
        ("visibility".into(), c.visibility.as_str().into()),
        ("moderation".into(), c.rules.moderation.as_str().into()),
        (
            "sort_by".into(),
            c.rules
                .sort_by
                .map(|s| s.as_str().to_string())
                .unwrap_or_default(),
        ),
        ("sort_dir".into(), c.rules.sort_dir.as_str().into()),
    ];
    if c.rules.allow_public_submit {
        v.push(("allow_public_submit".into(), "on".into()));
    }
    for (i, def) in c.schema.0.iter().enumerate() {
        v.push((format!("s{i}_name"), def.name.clone()));
        v.push((format!("s{i}_type"), def.kind.as_str().into()));
        if def.required {
            v.push((format!("s{i}_required"), "on".into()));
        }
        if let Some(o) = &def.options {
            v.push((format!("s{i}_options"), o.join(", ")));
        }
        if let Some(m) = def.min {
            v.push((format!("s{i}_min"), m.to_string()));
        }
        if let Some(m) = def.max {
            v.push((format!("s{i}_max"), m.to_string()));
        }
        if let Some(m) = def.max_length {
            v.push((format!("s{i}_max_length"), m.to_string()));
        }
    }
    FormData(v)
}

/// The number of schema rows a form holds (the highest `s<i>_name` + 1).
fn rows_in(form: &FormData) -> usize {
    form.0
        .iter()
        .filter_map(|(k, _)| {
            k.strip_prefix('s')?
                .strip_suffix("_name")?
                .parse::<usize>()
                .ok()
        })
        .map(|i| i + 1)
        .max()
        .unwrap_or(0)
        .min(cms::schema::MAX_FIELDS + SPARE_ROWS)
}

fn schema_rows(form: &FormData, messages: &FieldMessages) -> Vec<SchemaRow> {
    let n = rows_in(form) + SPARE_ROWS;
    (0..n.min(cms::schema::MAX_FIELDS + SPARE_ROWS))
        .map(|i| {
            let get = |k: &str| form.get(&format!("s{i}_{k}")).unwrap_or("").to_string();
            let errors = [
                "name",
                "type",
                "required",
                "options",
                "min",
                "max",
                "max_length",
            ]
            .iter()
            .filter_map(|k| {
                let control = format!("s{i}_{k}");
                messages.get(&control).map(|m| (control, m.to_string()))
            })
            .collect();
            SchemaRow {
                index: i,
                name: get("name"),
                kind: get("type"),
                required: !get("required").is_empty(),
                options: get("options"),
                min: get("min"),
                max: get("max"),
                max_length: get("max_length"),
                errors,
            }
        })
        .collect()
}

/// The `POST /api/cms` body of a posted form, and which row each schema entry came from.
fn body_of(form: &FormData, slug: &str) -> (Input, Vec<usize>) {
    let text = |k: &str| form.get(k).unwrap_or("").trim().to_string();
    let number = |s: String| -> Value {
        s.parse::<serde_json::Number>()
            .map(Value::Number)
            .unwrap_or(Value::String(s))
    };
    let mut schema = Vec::new();
    let mut from_row = Vec::new();
    for i in 0..rows_in(form) {
        let name = text(&format!("s{i}_name"));
        if name.is_empty() {
            continue;
        }
        let mut def = Map::new();
        def.insert("name".into(), json!(name));
        def.insert("type".into(), json!(text(&format!("s{i}_type"))));
        def.insert(
            "required".into(),
            json!(!text(&format!("s{i}_required")).is_empty()),
        );
        let options = text(&format!("s{i}_options"));
        if !options.is_empty() {
            let list: Vec<&str> = options
                .split(',')
                .map(str::trim)
                .filter(|o| !o.is_empty())
                .collect();
            def.insert("options".into(), json!(list));
        }
        for k in ["min", "max", "max_length"] {
            let v = text(&format!("s{i}_{k}"));
            if !v.is_empty() {
                def.insert(k.into(), number(v));
            }
        }
        schema.push(Value::Object(def));
        from_row.push(i);
    }
    let sort_by = text("sort_by");
    let mut rules = Map::new();
    rules.insert(
        "allow_public_submit".into(),
        json!(!text("allow_public_submit").is_empty()),
    );
    rules.insert(
        "sort_by".into(),
        if sort_by.is_empty() {
            Value::Null
        } else {
            json!(sort_by)
        },
    );
    let mut map = Map::new();
    map.insert("slug".into(), json!(slug));
    map.insert("name".into(), json!(text("name")));
    map.insert("schema".into(), Value::Array(schema));
    // A choice left empty takes its default.
    for (key, into_rules) in [
        ("visibility", false),
        ("moderation", true),
        ("sort_dir", true),
    ] {
        let v = text(key);
        if !v.is_empty() {
            if into_rules {
                rules.insert(key.into(), json!(v));
            } else {
                map.insert(key.into(), json!(v));
            }
        }
    }
    map.insert("rules".into(), Value::Object(rules));
    (Input::new(map), from_row)
}

/// The operation's problems named by the form's controls: `schema[j].min` becomes the
/// `min` of the row entry `j` came from; `rules.moderation` becomes `moderation`.
fn on_controls(errors: Vec<FieldError>, from_row: &[usize]) -> Vec<FieldError> {
    errors
        .into_iter()
        .map(|mut e| {
            if let Some(rest) = e.field.strip_prefix("rules.") {
                e.field = rest.to_string();
            } else if let Some((j, tail)) = e
                .field
                .strip_prefix("schema[")
                .and_then(|rest| rest.split_once(']'))
                && let Some(row) = j.parse::<usize>().ok().and_then(|j| from_row.get(j))
            {
                let key = tail.trim_start_matches('.');
                let key = if key.is_empty() { "name" } else { key };
                e.field = format!("s{row}_{key}");
            }
            e
        })
        .collect()
}

fn page(
    staff: &Staff,
    editing: Option<String>,
    form: &FormData,
    messages: &FieldMessages,
) -> CollectionPage {
    let mut fields = form_fields(editing.is_some());
    let mut problems = fill(&mut fields, &values_of(form), messages);
    // Problems of schema rows are listed with a link to their control.
    for p in problems.iter_mut().filter(|p| p.target.is_empty()) {
        if p.label.starts_with('s') && p.label.contains('_') {
            p.target = format!("f-{}", p.label);
            p.label = "Field definition".into();
        }
    }
    CollectionPage {
        chrome: chrome(match &editing {
            Some(_) => "Edit a collection",
            None => "New collection",
        }),
        nav: Nav::new(staff, "cms"),
        rows: schema_rows(form, messages),
        types: FieldType::ALL.to_vec(),
        editing,
        fields,
        problems,
    }
}

/// `GET /dashboard/cms/new`
pub async fn new_form(staff: Staff) -> Result<Response, PageError> {
    let defaults = FormData(vec![
        ("visibility".into(), Visibility::Public.as_str().into()),
        ("moderation".into(), Moderation::Manual.as_str().into()),
        ("sort_dir".into(), SortDir::Asc.as_str().into()),
        ("s0_name".into(), "title".into()),
        ("s0_type".into(), FieldType::Text.as_str().into()),
        ("s0_required".into(), "on".into()),
    ]);
    render(&page(&staff, None, &defaults, &FieldMessages::default()))
}

/// `GET /dashboard/cms/{slug}/edit`
pub async fn edit_form(
    staff: Staff,
    State(app): State<AppState>,
    Path(slug): Path<String>,
) -> Result<Response, PageError> {
    let c = cms::collection(&app.db, staff.org_id(), &slug).await?;
    render(&page(
        &staff,
        Some(c.slug.clone()),
        &form_of(&c),
        &FieldMessages::default(),
    ))
}

async fn save(
    app: &AppState,
    posted: &Posted,
    slug: &str,
    editing: Option<String>,
) -> Result<Response, PageError> {
    let (body, from_row) = body_of(&posted.form, slug);
    let refused = |errors: Vec<FieldError>| {
        let messages = FieldMessages::of(&on_controls(errors, &from_row));
        render_status(
            &page(&posted.staff, editing.clone(), &posted.form, &messages),
            StatusCode::UNPROCESSABLE_ENTITY,
        )
    };
    match cms::upsert_collection(&app.db, posted.staff.org_id(), body).await {
        Ok(written) => {
            app.cms_cache
                .purge(posted.staff.org_id(), written.collection.id);
            Ok(see_other(&format!(
                "/dashboard/cms/{}/items?notice=collection_saved",
                written.collection.slug
            )))
        }
        Err(Error::Invalid(errors) | Error::Schema(errors)) => refused(errors),
        Err(e) => Err(e.into()),
    }
}

/// `POST /dashboard/cms/new`: creates a collection (a slug already used is refused, not
/// replaced).
pub async fn create(State(app): State<AppState>, posted: Posted) -> Result<Response, PageError> {
    let slug = posted.form.get("slug").unwrap_or("").trim().to_string();
    if cms::head(&app.db, posted.staff.org_id(), &slug)
        .await?
        .is_some()
    {
        let messages = FieldMessages::of(&[FieldError::new(
            "slug",
            "conflict",
            "A collection with this slug exists: choose another one, or edit that collection.",
        )]);
        return render_status(
            &page(&posted.staff, None, &posted.form, &messages),
            StatusCode::UNPROCESSABLE_ENTITY,
        );
    }
    save(&app, &posted, &slug, None).await
}

/// `POST /dashboard/cms/{slug}/edit`
pub async fn update(
    State(app): State<AppState>,
    Path(slug): Path<String>,
    posted: Posted,
) -> Result<Response, PageError> {
    let c = cms::collection(&app.db, posted.staff.org_id(), &slug).await?;
    save(&app, &posted, &c.slug, Some(c.slug.clone())).await
}
