//! The mails of job alerts: the confirmation link, and the list of new jobs with the
//! manage and one-click unsubscribe links (RFC 8058 headers).

use super::model::{Alert, Frequency};
use crate::{
    db::Outgoing,
    html::escape as h,
    jobs::{Job, url_of},
    mail::message::Message,
};

/// The board's address of `path` for the organization.
pub(super) struct Links<'a> {
    pub out: &'a Outgoing,
    pub domain: Option<&'a str>,
}

impl Links<'_> {
    pub fn url(&self, path: &str) -> String {
        self.out.board_url(self.domain, path)
    }
}

/// The filters of an alert in words.
pub(super) fn describe(query: &str) -> String {
    let pairs: Vec<(String, String)> = serde_urlencoded::from_str(query).unwrap_or_default();
    if pairs.is_empty() {
        return "every new job".into();
    }
    pairs
        .iter()
        .map(|(k, v)| {
            let label = match k.as_str() {
                "search" => "search",
                "job_types" => "job types",
                "locations" => "locations",
                "categories" => "categories",
                "is_remote" => "remote",
                other => other,
            };
            format!("{label}: {v}")
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn how_often(f: Frequency) -> &'static str {
    match f {
        Frequency::Instant => "as soon as they are listed",
        Frequency::Daily => "once a day",
        Frequency::Weekly => "once a week",
    }
}

/// The confirmation mail of a new alert.
pub(super) fn confirmation(alert: &Alert, token: &str, board: &str, links: &Links) -> Message {
    let confirm = links.url(&format!("/alerts/confirm/{token}"));
    let what = describe(&alert.query);
    let subject = format!("Confirm your job alert on {board}");
    let text = format!(
        "Someone, hopefully you, asked to receive new jobs on {board} {} ({what}).\n\n\
         Confirm it here:\n{confirm}\n\n\
         If it was not you, ignore this mail: nothing will be sent, and the request is \
         forgotten after 7 days.\n",
        how_often(alert.frequency)
    );
    let html = format!(
        "<p>Someone, hopefully you, asked to receive new jobs on {} {} ({}).</p>\
         <p><a href=\"{}\">Confirm the job alert</a></p>\
         <p>If it was not you, ignore this mail: nothing will be sent, and the request is forgotten after 7 days.</p>",
        h(board),
        how_often(alert.frequency),
        h(&what),
        h(&confirm)
    );
    Message::new("alert_confirm", alert.email.clone(), subject, text).html(html)
}

/// Most jobs listed in one alert mail (the rest are on the board's search).
pub(super) const MAX_LISTED: usize = 20;

/// The mail of `jobs` (the newest first) matched by an alert; `more` were not listed.
pub(super) fn new_jobs(
    alert: &Alert,
    token: &str,
    board: &str,
    jobs: &[Job],
    more: usize,
    links: &Links,
) -> Message {
    let manage = links.url(&format!("/alerts/unsubscribe/{token}"));
    let search = links.url(&format!("/?{}", alert.query));
    let subject = match jobs {
        [one] if more == 0 => format!("New job on {board}: {}", one.title),
        _ => format!("{} new jobs on {board}", jobs.len() + more),
    };
    let mut text = format!(
        "New jobs matching your alert ({}):\n\n",
        describe(&alert.query)
    );
    let mut html = format!(
        "<p>New jobs matching your alert ({}):</p><ul>",
        h(&describe(&alert.query))
    );
    for j in jobs {
        let url = links.url(&url_of(&j.slug));
        let place = j.location.clone().unwrap_or_default();
        let at = if place.is_empty() {
            j.company_name.clone()
        } else {
            format!("{}, {place}", j.company_name)
        };
        text.push_str(&format!("- {} ({at})\n  {url}\n", j.title));
        html.push_str(&format!(
            "<li><a href=\"{}\">{}</a> ({})</li>",
            h(&url),
            h(&j.title),
            h(&at)
        ));
    }
    html.push_str("</ul>");
    if more > 0 {
        text.push_str(&format!("\nAnd {more} more: {search}\n"));
        html.push_str(&format!(
            "<p><a href=\"{}\">And {more} more</a></p>",
            h(&search)
        ));
    }
    text.push_str(&format!(
        "\nYou receive these {} because you confirmed a job alert on {board}.\nManage or stop it: {manage}\n",
        how_often(alert.frequency)
    ));
    html.push_str(&format!(
        "<p>You receive these {} because you confirmed a job alert on {}. <a href=\"{}\">Manage or stop it</a>.</p>",
        how_often(alert.frequency),
        h(board),
        h(&manage)
    ));
    Message::new("job_alert", alert.email.clone(), subject, text)
        .html(html)
        .header("List-Unsubscribe", format!("<{manage}>"))
        .header("List-Unsubscribe-Post", "List-Unsubscribe=One-Click")
}
