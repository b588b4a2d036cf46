//! Settings > Board look: the board's name, tagline, logo, accent colour, domain and
//! whether visitors may post jobs, changed through the organization's update operation
//! (the one `jobboard orgs update` calls). The board shows a change on its next request.
//!
//! A domain typed here is only claimed: it routes nothing until proven (the Verify
//! button has this installation fetch the claim's token from the domain, see
//! `jobboard_app::domain_check`); the domain in use, if any, stays meanwhile.

use std::collections::HashMap;

use askama::Template;
use axum::{extract::State, http::StatusCode, response::Response};

use super::{Nav, Notice, Posted, Staff, chrome, render, render_status, session::see_other};
use crate::fields::{FieldView, Problem, fill, messages_of, values_of};
use crate::{
    error::PageError,
    forms::{FieldMessages, FormValue},
    page::Chrome,
    site::DEFAULT_ACCENT,
};
use jobboard_app::app::AppState;
use jobboard_domain::orgs::{
    self, Claim, Org, OrgChanges,
    domains::{self, DomainChange, Reserved, WELL_KNOWN},
};

const SPEC: &[(&str, FormValue)] = &[
    ("name", FormValue::Required),
    ("tagline", FormValue::Clearable),
    ("logo_url", FormValue::Clearable),
    ("accent_color", FormValue::Clearable),
    ("public_posting", FormValue::Checkbox),
    ("mail_job_live", FormValue::Checkbox),
    ("mail_expiry_days", FormValue::Number),
    ("mail_applications", FormValue::Checkbox),
    ("keep_applications_days", FormValue::Number),
    ("keep_applications_after_job_days", FormValue::Number),
];

fn fields() -> Vec<FieldView> {
    vec![
        FieldView::new("name", "Board name", "text").required(),
        FieldView::new("tagline", "Tagline", "text").hint("A line under the board's name."),
        FieldView::new("logo_url", "Logo URL", "url")
            .hint("An absolute http(s) address of an image."),
        FieldView::new("accent_color", "Accent colour", "text").hint(format!(
            "Written #rrggbb, e.g. #1d4ed8. Empty: the neutral {DEFAULT_ACCENT}."
        )),
        FieldView::new("domain", "Domain", "text").hint(
            "The host name the board answers on, e.g. jobs.example.com (point its DNS here). \
             A new domain is in use once verified, below.",
        ),
        FieldView::new(
            "public_posting",
            "Visitors may submit jobs on the board",
            "checkbox",
        ),
        FieldView::new(
            "mail_job_live",
            "Mail a job's contact address when the job goes live",
            "checkbox",
        ),
        FieldView::new("mail_expiry_days", "Expiry reminder, days before", "number").hint(
            "Mail a job's contact address this many days before the job expires (0 to 60; 0: never).",
        ),
        FieldView::new(
            "mail_applications",
            "Mail a job's contact address on each application",
            "checkbox",
        ),
        FieldView::new("keep_applications_days", "Keep applications, days", "number").hint(
            "Applications are deleted this many days after they were made (0 to 3650; 0: kept).",
        ),
        FieldView::new(
            "keep_applications_after_job_days",
            "Keep applications after their job ends, days",
            "number",
        )
        .hint(
            "The applications of a job that has expired or was deleted are deleted this many \
             days after it ended (0 to 3650; 0: kept).",
        ),
    ]
}

/// The form's values: the organization's settings, with the domain it claims (if any)
/// in the domain field.
fn values_of_org(o: &Org, claim: Option<&Claim>) -> HashMap<String, String> {
    let opt = |v: &Option<String>| v.clone().unwrap_or_default();
    let domain = claim.map_or_else(|| opt(&o.domain), |c| c.domain.clone());
    HashMap::from([
        ("name".into(), o.name.clone()),
        ("tagline".into(), opt(&o.tagline)),
        ("logo_url".into(), opt(&o.logo_url)),
        ("accent_color".into(), opt(&o.accent_color)),
        ("domain".into(), domain),
        (
            "public_posting".into(),
            if o.public_posting { "on" } else { "" }.into(),
        ),
        (
            "mail_job_live".into(),
            if o.mail_job_live { "on" } else { "" }.into(),
        ),
        ("mail_expiry_days".into(), o.mail_expiry_days.to_string()),
        (
            "mail_applications".into(),
            if o.mail_applications { "on" } else { "" }.into(),
        ),
        (
            "keep_applications_days".into(),
            o.keep_applications_days.to_string(),
        ),
        (
            "keep_applications_after_job_days".into(),
            o.keep_applications_after_job_days.to_string(),
        ),
    ])
}

#[derive(Template)]
#[template(path = "dashboard/board.html")]
struct BoardPage {
    chrome: Chrome,
    nav: Nav,
    fields: Vec<FieldView>,
    problems: Vec<Problem>,
    /// The domain the board answers on now.
    active: Option<String>,
    /// The claimed domain waiting for proof, and the address that must answer its token.
    claim: Option<(String, String)>,
}

fn page(
    staff: &Staff,
    values: &HashMap<String, String>,
    messages: &FieldMessages,
    notice: Option<&str>,
    org: &Org,
    claim: Option<&Claim>,
) -> BoardPage {
    let mut fields = fields();
    let problems = fill(&mut fields, values, messages);
    BoardPage {
        chrome: chrome("Board look"),
        nav: Nav::new(staff, "board").notice(notice),
        fields,
        problems,
        active: org.domain.clone(),
        claim: claim.map(|c| {
            (
                c.domain.clone(),
                format!("http://{}{WELL_KNOWN}{}", c.domain, c.token),
            )
        }),
    }
}

/// `GET /dashboard/settings/board`
pub async fn page_get(
    staff: Staff,
    State(app): State<AppState>,
    Notice(notice): Notice,
) -> Result<Response, PageError> {
    let org = orgs::get(&app.db, staff.org_id()).await?;
    let claim = domains::pending(&app.db, org.id).await?;
    render(&page(
        &staff,
        &values_of_org(&org, claim.as_ref()),
        &FieldMessages::default(),
        notice.as_deref(),
        &org,
        claim.as_ref(),
    ))
}

/// `POST /dashboard/settings/board`: every field checked first (nothing is stored when
/// one is refused), then the settings saved and the domain kept, removed or claimed.
pub async fn save(State(app): State<AppState>, posted: Posted) -> Result<Response, PageError> {
    let staff = &posted.staff;
    let org = orgs::get(&app.db, staff.org_id()).await?;
    let changes = OrgChanges::parse(posted.form.to_input(SPEC));
    let reserved = Reserved::of(app.config.listen.ip(), &app.config.public_url);
    let change = domains::plan(&app.db, &org, posted.form.get("domain"), &reserved).await;
    let (changes, change) = match (changes, change) {
        (Ok(c), Ok(d)) => (c, d),
        (changes, change) => {
            let mut messages = FieldMessages::default();
            for e in [changes.err(), change.err()].into_iter().flatten() {
                messages.0.extend(messages_of(e)?.0);
            }
            let claim = domains::pending(&app.db, org.id).await?;
            return render_status(
                &page(
                    staff,
                    &values_of(&posted.form),
                    &messages,
                    None,
                    &org,
                    claim.as_ref(),
                ),
                StatusCode::UNPROCESSABLE_ENTITY,
            );
        }
    };
    orgs::update_with(&app.db, org.id, changes).await?;
    let claim = domains::apply(&app.db, org.id, &change).await?;
    tracing::info!(org_id = org.id.0, user_id = %staff.session.user_id, "board settings changed in the dashboard");
    Ok(match (&change, claim) {
        (DomainChange::Claim(_), Some(c)) => {
            tracing::info!(org_id = org.id.0, domain = %c.domain, "board domain claimed, waiting for proof");
            see_other("/dashboard/settings/board?notice=domain_claimed")
        }
        _ => see_other("/dashboard/settings/board?notice=board_saved"),
    })
}

/// `POST /dashboard/settings/board/verify`: asks the claimed domain for the claim's
/// token; the domain is the board's from then on when it answers with it.
pub async fn verify(State(app): State<AppState>, posted: Posted) -> Result<Response, PageError> {
    let staff = &posted.staff;
    let Some(claim) = domains::pending(&app.db, staff.org_id()).await? else {
        return Ok(see_other("/dashboard/settings/board"));
    };
    let refused = match jobboard_app::domain_check::prove(&app.config, &claim).await {
        Ok(()) => match domains::activate(
            &app.db,
            &claim,
            &Reserved::of(app.config.listen.ip(), &app.config.public_url),
        )
        .await
        {
            Ok(org) => {
                tracing::info!(org_id = org.id.0, user_id = %staff.session.user_id, domain = %claim.domain, "board domain verified");
                return Ok(see_other(
                    "/dashboard/settings/board?notice=domain_verified",
                ));
            }
            Err(e) => messages_of(e)?,
        },
        Err(why) => {
            tracing::info!(org_id = claim.org_id.0, domain = %claim.domain, reason = %why, "board domain not verified");
            FieldMessages(HashMap::from([(
                "domain".to_string(),
                format!(
                    "{} is not verified yet ({why}). Point its DNS at this service and try again.",
                    claim.domain
                ),
            )]))
        }
    };
    let org = orgs::get(&app.db, staff.org_id()).await?;
    let claim = domains::pending(&app.db, org.id).await?;
    render_status(
        &page(
            staff,
            &values_of_org(&org, claim.as_ref()),
            &refused,
            None,
            &org,
            claim.as_ref(),
        ),
        StatusCode::UNPROCESSABLE_ENTITY,
    )
}
