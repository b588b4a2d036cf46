//! `GET /post-a-job` and `POST /post-a-job`: the employer's form. A submission becomes
//! the body `POST /api/jobs` takes and is created by the same operation (so the same
//! validation, each problem shown beside its field, and `job.created`), always as
//! `pending`: it is listed once staff approve it.
//!
//! Before anything is stored a submission passes the board's form checks ([`gate`]); a
//! refused one stores nothing and says why.

use askama::Template;
use axum::{
    extract::{RawQuery, State},
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Redirect, Response},
};

use super::{
    Frame, format,
    gate::{self, Screened},
};
use crate::{
    app::AppState,
    web::{
        error::PageError,
        forms::{FieldMessages, FormData, FormValue},
        page::{Chrome, Html},
        site::Site,
    },
};
use jobboard_domain::{
    Error, categories,
    categories::Category,
    jobs::{self, JobType, SalaryPeriod},
};

/// The fields of the form, named as `POST /api/jobs` names them.
const FIELDS: &[(&str, FormValue)] = &[
    ("title", FormValue::Text),
    ("company_name", FormValue::Text),
    ("description", FormValue::Text),
    ("company_website", FormValue::Text),
    ("company_logo_url", FormValue::Text),
    ("category_id", FormValue::Text),
    ("job_type", FormValue::Text),
    ("location", FormValue::Text),
    ("location_restricted", FormValue::Checkbox),
    ("is_remote", FormValue::Checkbox),
    ("salary_min", FormValue::Number),
    ("salary_max", FormValue::Number),
    ("salary_currency", FormValue::Text),
    ("salary_period", FormValue::Text),
    ("how_to_apply_method", FormValue::Text),
    ("how_to_apply", FormValue::Text),
    ("contact_email", FormValue::Text),
];

#[derive(Template)]
#[template(path = "board/post.html")]
struct PostPage {
    chrome: Chrome,
    frame: Frame,
    groups: Vec<Group>,
    /// Every problem, in field order, for the summary above the form: (field, message).
    problems: Vec<(String, String)>,
    notice: Option<String>,
    sent: bool,
    token: String,
}

/// A fieldset of the form.
struct Group {
    legend: &'static str,
    fields: Vec<Field>,
}

/// One field as shown: its control, the value typed, its hint and its problem.
struct Field {
    name: &'static str,
    label: &'static str,
    /// `text`, `url`, `email`, `number`, `textarea`, `select` or `checkbox`.
    control: &'static str,
    value: String,
    hint: &'static str,
    error: Option<String>,
    required: bool,
    autocomplete: &'static str,
    /// For selects: (value, label, selected), after an empty choice.
    options: Vec<(String, String, bool)>,
}

impl Field {
    fn new(name: &'static str, label: &'static str, control: &'static str) -> Field {
        Field {
            name,
            label,
            control,
            value: String::new(),
            hint: "",
            error: None,
            required: false,
            autocomplete: "off",
            options: Vec::new(),
        }
    }
    fn hint(mut self, hint: &'static str) -> Field {
        self.hint = hint;
        self
    }
    fn required(mut self) -> Field {
        self.required = true;
        self
    }
    fn autocomplete(mut self, a: &'static str) -> Field {
        self.autocomplete = a;
        self
    }
    fn options(mut self, options: Vec<(String, String)>) -> Field {
        self.options = options.into_iter().map(|(v, l)| (v, l, false)).collect();
        self
    }
    /// Fills in what `form` holds for this field and the problem `errors` names.
    fn fill(mut self, form: &FormData, errors: &FieldMessages) -> Field {
        self.value = form.get(self.name).unwrap_or("").to_string();
        self.error = errors.get(self.name).map(str::to_string);
        for o in &mut self.options {
            o.2 = o.0 == self.value;
        }
        self
    }
    fn checked(&self) -> bool {
        !self.value.is_empty()
    }
}

/// The form's fields, grouped, with `form`'s values and `errors`.
fn groups(form: &FormData, errors: &FieldMessages, categories: Vec<Category>) -> Vec<Group> {
    let types = JobType::ALL
        .iter()
        .filter_map(|v| JobType::parse(v).map(|t| (v.to_string(), format::job_type(t).to_string())))
        .collect();
    let periods = SalaryPeriod::ALL
        .iter()
        .map(|p| (p.to_string(), format!("Per {}", period_noun(p))))
        .collect();
    let methods = vec![
        ("email".to_string(), "By email".to_string()),
        ("website".to_string(), "On our website".to_string()),
        ("phone".to_string(), "By phone".to_string()),
        (
            "form-external".to_string(),
            "With our own application form".to_string(),
        ),
    ];
    let mut job = vec![
        Field::new("title", "Job title", "text").required(),
        Field::new("description", "Description", "textarea")
            .required()
            .hint("Plain text: leave a blank line between paragraphs. Simple HTML (paragraphs, lists, bold, links) works too."),
        Field::new("job_type", "Job type", "select").options(types),
        Field::new("location", "Location", "text").hint("City, region or country."),
        Field::new("location_restricted", "Only candidates from this location may apply", "checkbox"),
        Field::new("is_remote", "Remote work is possible", "checkbox"),
    ];
    if !categories.is_empty() {
        let cats = categories
            .into_iter()
            .map(|c| (c.id.to_string(), c.name))
            .collect();
        job.insert(
            3,
            Field::new("category_id", "Category", "select").options(cats),
        );
    }
    let all = vec![
        Group {
            legend: "The job",
            fields: job,
        },
        Group {
            legend: "The company",
            fields: vec![
                Field::new("company_name", "Company name", "text")
                    .required()
                    .autocomplete("organization"),
                Field::new("company_website", "Company website", "url")
                    .hint("An address starting with https://")
                    .autocomplete("url"),
                Field::new("company_logo_url", "Logo address", "url")
                    .hint("The https:// address of a logo image."),
            ],
        },
        Group {
            legend: "Salary",
            fields: vec![
                Field::new("salary_min", "From", "number"),
                Field::new("salary_max", "To", "number"),
                Field::new("salary_currency", "Currency", "text")
                    .hint("Three letters, e.g. EUR or USD."),
                Field::new("salary_period", "Paid", "select").options(periods),
            ],
        },
        Group {
            legend: "Applications",
            fields: vec![
                Field::new("how_to_apply_method", "Candidates apply", "select").options(methods),
                Field::new("how_to_apply", "Where or how to apply", "textarea")
                    .hint("The email address or web address candidates apply at, or instructions."),
                Field::new("contact_email", "Contact email", "email")
                    .hint("For candidates’ questions; shown on the job page.")
                    .autocomplete("email"),
            ],
        },
    ];
    all.into_iter()
        .map(|g| Group {
            legend: g.legend,
            fields: g.fields.into_iter().map(|f| f.fill(form, errors)).collect(),
        })
        .collect()
}

fn period_noun(p: &str) -> &'static str {
    match p {
        "hourly" => "hour",
        "daily" => "day",
        "weekly" => "week",
        "monthly" => "month",
        _ => "year",
    }
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
    let tpl = PostPage {
        chrome,
        frame: Frame::of(site, "/post-a-job"),
        groups: groups(&form, &FieldMessages::of(&errors), categories),
        problems: errors
            .iter()
            .map(|e| (e.field.clone(), e.message.clone()))
            .collect(),
        notice,
        sent,
        token,
    };
    Ok(Html::render(&tpl, Some(&site.theme.csp_hash))?.cache_control("private, no-store"))
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
    match jobs::create(&app.db, site.org.id, body_of(&form)).await {
        Ok(_) => Ok(Redirect::to("/post-a-job?sent=1").into_response()),
        Err(Error::Invalid(errors)) => {
            let n = errors.len();
            let notice = if n == 1 {
                "One field needs a correction before the job can be saved.".to_string()
            } else {
                format!("{n} fields need a correction before the job can be saved.")
            };
            let html = page(&app, &site, form, errors, Some(notice), false).await?;
            Ok(html
                .status(StatusCode::UNPROCESSABLE_ENTITY)
                .into_response())
        }
        Err(e) => Err(e.into()),
    }
}

/// The body `POST /api/jobs` takes, from the form: plain-text descriptions become
/// paragraphs, currency codes upper case. Never a `status`: a new job waits for approval.
fn body_of(form: &FormData) -> jobboard_domain::Input {
    let mut fields = form.clone();
    for (k, v) in &mut fields.0 {
        match k.as_str() {
            "description" => *v = description_html(v),
            "salary_currency" => *v = v.trim().to_ascii_uppercase(),
            _ => {}
        }
    }
    fields.to_input(FIELDS)
}

/// The tags of the simple formatting the form accepts as HTML.
const FORMATTING: &[&str] = &[
    "p",
    "br",
    "ul",
    "ol",
    "li",
    "strong",
    "b",
    "em",
    "i",
    "a",
    "h2",
    "h3",
    "h4",
    "blockquote",
];

/// True when `text` holds a tag of [`FORMATTING`] (`<p>`, `</li>`, `<a href=...>`).
fn has_formatting(text: &str) -> bool {
    text.match_indices('<').any(|(i, _)| {
        let rest = text[i + 1..].trim_start_matches('/');
        let name: String = rest
            .chars()
            .take_while(char::is_ascii_alphanumeric)
            .collect::<String>()
            .to_ascii_lowercase();
        let after = rest[name.len()..].chars().next();
        FORMATTING.contains(&name.as_str())
            && matches!(after, Some('>' | '/' | ' ' | '\t' | '\n' | '\r'))
    })
}

/// A description as typed: HTML when it uses the simple formatting tags (sanitised by
/// the operation), else plain text whose blank lines separate paragraphs and whose line
/// breaks are kept (`a < b` and `<soon>` stay text).
fn description_html(text: &str) -> String {
    if has_formatting(text) {
        return text.to_string();
    }
    let text = text
        .replace("\r\n", "\n")
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    let mut out = String::new();
    for para in text.split("\n\n") {
        let lines: Vec<&str> = para
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        if !lines.is_empty() {
            out.push_str("<p>");
            out.push_str(&lines.join("<br>"));
            out.push_str("</p>");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_becomes_paragraphs() {
        assert_eq!(
            description_html("We build R&D tools.\nRemote.\r\n\r\nApply now"),
            "<p>We build R&amp;D tools.<br>Remote.</p><p>Apply now</p>"
        );
        assert_eq!(description_html("<p>Hi</p>"), "<p>Hi</p>");
        assert_eq!(description_html("Hi<BR/>there"), "Hi<BR/>there");
        assert_eq!(
            description_html("a < b, <soon>"),
            "<p>a &lt; b, &lt;soon&gt;</p>"
        );
        assert_eq!(description_html("  \n "), "");
    }
}
