//! Validation of job bodies (create and update) and of the job list query, and the
//! description's sanitising.

use uuid::Uuid;

use super::input::{Field, Input, QueryInput, parse_uuid};
use crate::{
    db::{
        Ts,
        jobs::{APPLY_METHODS, JOB_TYPES, JobFields, ListFilter, SALARY_PERIODS, STATUSES},
    },
    error::FieldError,
};

/// Sanitises description HTML with an allow-list (no scripts, event handlers or
/// `javascript:` URLs) and returns it with its text (tags stripped, entities decoded).
pub fn sanitize_description(html: &str) -> (String, String) {
    let clean = ammonia::clean(html);
    let text = html_text(&clean);
    (clean, text)
}

/// The text of serialised (sanitised) HTML: tags become spaces, entities are decoded,
/// whitespace is collapsed.
fn html_text(html: &str) -> String {
    let mut raw = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                raw.push(' ');
            }
            _ if !in_tag => raw.push(c),
            _ => {}
        }
    }
    let decoded = decode_entities(&raw);
    decoded.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn decode_entities(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let end = rest.find(';').filter(|&e| e <= 10);
        let decoded = end.and_then(|e| {
            let name = &rest[1..e];
            let c = match name {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                "nbsp" => Some(' '),
                _ => name
                    .strip_prefix("#x")
                    .or_else(|| name.strip_prefix("#X"))
                    .and_then(|h| u32::from_str_radix(h, 16).ok())
                    .or_else(|| name.strip_prefix('#').and_then(|d| d.parse().ok()))
                    .and_then(char::from_u32),
            };
            c.map(|c| (c, e))
        });
        match decoded {
            Some((c, e)) => {
                out.push(c);
                rest = &rest[e + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The job fields of a body, as sent.
pub struct JobInput {
    title: Field<String>,
    description: Field<(String, String)>,
    company_name: Field<String>,
    job_type: Field<String>,
    location: Field<String>,
    location_restricted: Field<bool>,
    is_remote: Field<bool>,
    is_highlighted: Field<bool>,
    is_sticky: Field<bool>,
    how_to_apply: Field<String>,
    how_to_apply_method: Field<String>,
    pub category_id: Field<Uuid>,
    company_website: Field<String>,
    company_logo_url: Field<String>,
    salary_min: Field<f64>,
    salary_max: Field<f64>,
    salary_currency: Field<String>,
    salary_period: Field<String>,
    contact_email: Field<String>,
    expires_at: Field<Ts>,
    status: Field<String>,
}

fn trimmed(input: &mut Input, name: &str, required: bool, max: usize) -> Field<String> {
    match input.string(name, required, 1, max) {
        Field::Value(s) if s.trim().is_empty() => {
            input.error(name, "too_short", "Must not be blank.");
            Field::Absent
        }
        Field::Value(s) => Field::Value(s.trim().to_string()),
        other => other,
    }
}

/// On update, `null` is refused for a field that cannot be cleared; on create it counts
/// as absent.
fn not_null<T>(input: &mut Input, name: &str, f: Field<T>, create: bool) -> Field<T> {
    if matches!(f, Field::Null) && !create {
        input.error(name, "invalid_type", "Must not be null.");
        return Field::Absent;
    }
    f
}

/// Reads every job field of `input` (`create`: title, description and company_name are
/// required). On update, `null` clears an optional field and is refused for the others.
pub fn read_job(input: &mut Input, create: bool) -> JobInput {
    let title = trimmed(input, "title", create, 255);
    let title = not_null(input, "title", title, create);
    let description = match input.string("description", create, 1, 100_000) {
        Field::Value(html) => {
            let (clean, text) = sanitize_description(&html);
            if clean.trim().is_empty() {
                input.error(
                    "description",
                    "too_short",
                    "Nothing is left of the description once unsafe HTML is removed.",
                );
                Field::Absent
            } else {
                Field::Value((clean, text))
            }
        }
        Field::Null => Field::Null,
        Field::Absent => Field::Absent,
    };
    let description = not_null(input, "description", description, create);
    let company_name = trimmed(input, "company_name", create, 255);
    let company_name = not_null(input, "company_name", company_name, create);
    let job_type = input.one_of("job_type", false, JOB_TYPES);
    let location = match input.string("location", false, 0, 255) {
        Field::Value(s) if s.trim().is_empty() => Field::Null,
        Field::Value(s) => Field::Value(s.trim().to_string()),
        other => other,
    };
    let flag = |input: &mut Input, name: &str| {
        let f = input.boolean(name, false);
        not_null(input, name, f, create)
    };
    let location_restricted = flag(input, "location_restricted");
    let is_remote = flag(input, "is_remote");
    let is_highlighted = flag(input, "is_highlighted");
    let is_sticky = flag(input, "is_sticky");
    let how_to_apply = input.string("how_to_apply", false, 1, 10_000);
    let how_to_apply_method = input.one_of("how_to_apply_method", false, APPLY_METHODS);
    let category_id = input.uuid("category_id", false);
    let company_website = input.url("company_website", false);
    let company_logo_url = input.url("company_logo_url", false);
    let salary_min = input.number("salary_min", false, 0.0, 1e12);
    let salary_max = input.number("salary_max", false, 0.0, 1e12);
    let salary_currency = input.field("salary_currency", false, |v| match v.as_str() {
        Some(s) if s.len() == 3 && s.bytes().all(|b| b.is_ascii_uppercase()) => Ok(s.to_string()),
        Some(_) => Err((
            "invalid_format",
            "Must be a three-letter upper-case currency code, e.g. EUR.".to_string(),
        )),
        None => Err(("invalid_type", "Must be a string.".to_string())),
    });
    let salary_period = input.one_of("salary_period", false, SALARY_PERIODS);
    let contact_email = input.email("contact_email", false);
    let expires_at = input.timestamp("expires_at", false);
    let status = input.one_of("status", false, STATUSES);
    let status = not_null(input, "status", status, create);
    JobInput {
        title,
        description,
        company_name,
        job_type,
        location,
        location_restricted,
        is_remote,
        is_highlighted,
        is_sticky,
        how_to_apply,
        how_to_apply_method,
        category_id,
        company_website,
        company_logo_url,
        salary_min,
        salary_max,
        salary_currency,
        salary_period,
        contact_email,
        expires_at,
        status,
    }
}

impl JobInput {
    /// The fields of `base` with the sent ones applied; checks that need both
    /// (`salary_min <= salary_max`) run on the result.
    pub fn apply(self, mut f: JobFields) -> Result<JobFields, Vec<FieldError>> {
        fn set<T>(target: &mut T, v: Field<T>) {
            if let Field::Value(v) = v {
                *target = v;
            }
        }
        fn set_opt<T>(target: &mut Option<T>, v: Field<T>) {
            if let Some(v) = v.patch() {
                *target = v;
            }
        }
        let min_sent = self.salary_min.is_present();
        set(&mut f.title, self.title);
        if let Field::Value((html, text)) = self.description {
            f.description = html;
            f.description_text = text;
        }
        set(&mut f.company_name, self.company_name);
        set_opt(&mut f.job_type, self.job_type);
        set_opt(&mut f.location, self.location);
        set(&mut f.location_restricted, self.location_restricted);
        set(&mut f.is_remote, self.is_remote);
        set(&mut f.is_highlighted, self.is_highlighted);
        set(&mut f.is_sticky, self.is_sticky);
        set_opt(&mut f.how_to_apply, self.how_to_apply);
        set_opt(&mut f.how_to_apply_method, self.how_to_apply_method);
        set_opt(&mut f.category_id, self.category_id);
        set_opt(&mut f.company_website, self.company_website);
        set_opt(&mut f.company_logo_url, self.company_logo_url);
        set_opt(&mut f.salary_min, self.salary_min);
        set_opt(&mut f.salary_max, self.salary_max);
        set_opt(&mut f.salary_currency, self.salary_currency);
        set_opt(&mut f.salary_period, self.salary_period);
        set_opt(&mut f.contact_email, self.contact_email);
        set_opt(&mut f.expires_at, self.expires_at);
        set(&mut f.status, self.status);
        if let (Some(min), Some(max)) = (f.salary_min, f.salary_max)
            && min > max
        {
            let field = if min_sent { "salary_min" } else { "salary_max" };
            return Err(vec![FieldError::new(
                field,
                "out_of_range",
                "salary_min must not be greater than salary_max.",
            )]);
        }
        Ok(f)
    }
}

/// The defaults of a new job (before the sent fields are applied).
pub fn new_job_defaults() -> JobFields {
    JobFields {
        status: "pending".to_string(),
        ..JobFields::default()
    }
}

/// The list query, validated: the filter, page and page size.
#[derive(Debug)]
pub struct ListQuery {
    pub filter: ListFilter,
    pub search: Option<String>,
    pub locations: Vec<String>,
    pub page: i64,
    pub per_page: i64,
}

/// Largest page number accepted (keeps offsets far from overflow).
pub const MAX_PAGE: i64 = 10_000_000;

fn no_nul(q: &mut QueryInput, name: &str, v: &str) -> bool {
    if v.contains('\0') {
        q.error(name, "invalid_format", "Must not contain NUL characters.");
        false
    } else {
        true
    }
}

pub fn read_list_query(q: &mut QueryInput) -> ListQuery {
    let mut filter = ListFilter::default();
    let search = q
        .string("search", 200)
        .filter(|s| no_nul(q, "search", s))
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty());
    if let Some(s) = &search {
        filter.search_words = crate::db::jobs::search_words(s);
    }
    let job_types = q.list("job_types");
    if let Some(bad) = job_types.iter().find(|t| !JOB_TYPES.contains(&t.as_str())) {
        q.error(
            "job_types",
            "invalid_value",
            format!(
                "Unknown job type {bad:?}; each must be one of: {}.",
                JOB_TYPES.join(", ")
            ),
        );
    }
    filter.job_types = job_types;
    let locations = q.list("locations");
    if locations
        .iter()
        .any(|l| l.chars().count() > 255 || l.contains('\0'))
        || locations.len() > 50
    {
        q.error(
            "locations",
            "invalid_value",
            "At most 50 locations of at most 255 characters each.",
        );
    }
    filter.locations = locations.iter().map(|l| l.to_lowercase()).collect();
    let categories = q.list("categories");
    let mut ids = Vec::new();
    for c in &categories {
        match parse_uuid(c) {
            Some(id) => ids.push(id),
            None => {
                q.error(
                    "categories",
                    "invalid_format",
                    format!("{c:?} is not a UUID; send comma-separated category ids."),
                );
                break;
            }
        }
    }
    if ids.len() > 100 {
        q.error("categories", "invalid_value", "At most 100 categories.");
    }
    filter.categories = ids;
    filter.is_remote = q.boolean("is_remote");
    let statuses = q.list("status");
    filter.statuses = if statuses.is_empty() {
        Some(vec!["active".to_string()])
    } else if statuses == ["all"] {
        None
    } else {
        if let Some(bad) = statuses.iter().find(|s| !STATUSES.contains(&s.as_str())) {
            q.error(
                "status",
                "invalid_value",
                format!(
                    "Unknown status {bad:?}; send `all` or comma-separated statuses among: {}.",
                    STATUSES.join(", ")
                ),
            );
        }
        let mut unique: Vec<String> = Vec::with_capacity(statuses.len());
        for s in statuses {
            if !unique.contains(&s) {
                unique.push(s);
            }
        }
        Some(unique)
    };
    let page = q.integer("page", 1, 1, MAX_PAGE);
    let per_page = q.integer("per_page", 20, 1, 100);
    ListQuery {
        filter,
        search,
        locations,
        page,
        per_page,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_are_sanitised_and_stripped() {
        let (html, text) = sanitize_description(
            "<p onclick=\"x()\">Hello <b>Rust</b> &amp; <a href=\"javascript:alert(1)\">friends</a></p><script>alert(1)</script>",
        );
        assert!(!html.contains("script"), "{html}");
        assert!(!html.contains("onclick"), "{html}");
        assert!(!html.contains("javascript"), "{html}");
        assert!(html.contains("<b>Rust</b>"), "{html}");
        assert_eq!(text, "Hello Rust & friends");
        assert_eq!(
            html_text("a&lt;b&#62;c &#x41; &bogus; &"),
            "a<b>c A &bogus; &"
        );
    }
}
