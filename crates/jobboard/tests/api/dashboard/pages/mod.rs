//! The dashboard's applications, members, webhooks, CMS and analytics pages: what each
//! shows, and that each action goes through the API's operation (same events, same
//! validation, seen by the API at once).

mod applications;
mod cms;
mod employer_mail;
mod isolation;
mod members;
mod webhooks;

use super::*;

fn texts(r: &Resp, css: &str) -> Vec<String> {
    r.html()
        .select(&sel(css))
        .map(|e| e.text().collect::<String>().trim().to_string())
        .collect()
}
