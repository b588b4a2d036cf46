//! The query of the board's lists (`/`, the feeds): the parameters of `GET /api/jobs`,
//! read by the same reader, after the normalisation a form without JavaScript needs.
//!
//! A search form sends empty fields and one `job_types=` per ticked box; the API takes one
//! comma-separated value per parameter. So, before reading: empty values are dropped,
//! repeated list parameters are joined with commas, and parameters the board does not
//! take are ignored (links shared with tracking parameters keep working). `status` is
//! never taken: the board lists live jobs only.

use jobboard_domain::{CategoryId, QueryInput, jobs::ListQuery};

/// The parameters the board takes, in the order of its canonical query.
const NAMES: &[&str] = &[
    "search",
    "job_types",
    "locations",
    "categories",
    "is_remote",
    "salary_min",
    "country",
    "page",
    "per_page",
];

/// The parameters that take comma-separated lists.
const LISTS: &[&str] = &["job_types", "locations", "categories"];

/// A board list query, read.
#[derive(Debug, Clone)]
pub struct BoardQuery {
    /// The validated query, as `GET /api/jobs` reads it.
    pub list: ListQuery,
    /// The normalised parameters, in canonical order (page included).
    pairs: Vec<(&'static str, String)>,
}

impl BoardQuery {
    /// Reads a raw query string; a value the API would refuse is a field error.
    pub fn read(raw: Option<&str>) -> jobboard_domain::Result<BoardQuery> {
        let sent: Vec<(String, String)> = raw
            .map(|q| serde_urlencoded::from_str(q).unwrap_or_default())
            .unwrap_or_default();
        let mut pairs: Vec<(&'static str, String)> = Vec::new();
        for name in NAMES {
            let values: Vec<&str> = sent
                .iter()
                .filter(|(k, _)| k == name)
                .map(|(_, v)| v.trim())
                .filter(|v| !v.is_empty())
                .collect();
            let value = if LISTS.contains(name) {
                values.join(",")
            } else {
                // A single-valued parameter sent twice: the last one wins, as in a form
                // whose field appears once.
                values.last().map(|v| v.to_string()).unwrap_or_default()
            };
            if !value.is_empty() {
                pairs.push((name, value));
            }
        }
        let encoded = serde_urlencoded::to_string(&pairs).unwrap_or_default();
        let mut q = QueryInput::parse(Some(&encoded));
        let list = ListQuery::read(&mut q);
        q.finish()?;
        Ok(BoardQuery { list, pairs })
    }

    /// The canonical query string (`?` included, empty when there are no parameters)
    /// with the page set to `page` (page 1 is left out).
    pub fn with_page(&self, page: i64) -> String {
        let mut pairs: Vec<(&str, String)> = self
            .pairs
            .iter()
            .filter(|(k, _)| *k != "page")
            .map(|(k, v)| (*k, v.clone()))
            .collect();
        if page > 1 {
            let at = pairs
                .iter()
                .position(|(k, _)| *k == "per_page")
                .unwrap_or(pairs.len());
            pairs.insert(at, ("page", page.to_string()));
        }
        if pairs.is_empty() {
            String::new()
        } else {
            format!(
                "?{}",
                serde_urlencoded::to_string(&pairs).unwrap_or_default()
            )
        }
    }

    /// The canonical query string of this page.
    pub fn canonical(&self) -> String {
        self.with_page(self.list.page)
    }

    /// The filters alone (no page, no page size) as a query string without `?`: what a
    /// job alert of this list keeps.
    pub fn alert_filters(&self) -> String {
        let pairs: Vec<(&str, &str)> = self
            .pairs
            .iter()
            .filter(|(k, _)| !matches!(*k, "page" | "per_page"))
            .map(|(k, v)| (*k, v.as_str()))
            .collect();
        serde_urlencoded::to_string(pairs).unwrap_or_default()
    }

    /// The canonical query string without the page (the feed of this list).
    pub fn filters(&self) -> String {
        self.with_page(1)
    }

    /// True when anything but the page narrows the list.
    pub fn is_filtered(&self) -> bool {
        self.pairs
            .iter()
            .any(|(k, _)| !matches!(*k, "page" | "per_page"))
    }

    /// The search text as sent (trimmed).
    pub fn search(&self) -> &str {
        self.list.search.as_deref().unwrap_or("")
    }

    /// The locations as sent, comma-separated.
    pub fn locations(&self) -> String {
        self.list.locations.join(", ")
    }

    pub fn has_job_type(&self, value: &str) -> bool {
        self.list
            .filter
            .job_types
            .iter()
            .any(|t| t.as_str() == value)
    }

    pub fn has_category(&self, id: CategoryId) -> bool {
        self.list.filter.categories.contains(&id)
    }

    /// The country asked for (upper-case code), or empty.
    pub fn country(&self) -> &str {
        self.list.filter.country.as_deref().unwrap_or("")
    }

    /// The lowest pay asked for, as sent, or empty.
    pub fn salary_min(&self) -> &str {
        self.pairs
            .iter()
            .find(|(k, _)| *k == "salary_min")
            .map_or("", |(_, v)| v.as_str())
    }

    /// `true`, `false` or empty, for the remote select.
    pub fn remote(&self) -> &'static str {
        match self.list.filter.is_remote {
            Some(true) => "true",
            Some(false) => "false",
            None => "",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_become_api_queries() {
        let q = BoardQuery::read(Some(
            "search=rust&job_types=full-time&job_types=contract&locations=&is_remote=&utm_source=x&status=all&page=1",
        ))
        .unwrap();
        assert_eq!(q.canonical(), "?search=rust&job_types=full-time%2Ccontract");
        assert_eq!(
            q.list.filter.statuses.as_deref(),
            Some(&[jobboard_domain::jobs::JobStatus::Active][..]),
            "status is never taken from a board query"
        );
        assert_eq!(
            q.with_page(3),
            "?search=rust&job_types=full-time%2Ccontract&page=3"
        );
        assert!(q.is_filtered());
        assert!(q.has_job_type("contract"));
        let plain = BoardQuery::read(None).unwrap();
        assert_eq!(plain.canonical(), "");
        assert!(!plain.is_filtered());
        assert!(BoardQuery::read(Some("page=0")).is_err());
        assert!(BoardQuery::read(Some("job_types=sometimes")).is_err());
    }
}
