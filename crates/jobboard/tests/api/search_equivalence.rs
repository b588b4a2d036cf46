//! The job list's meaning, checked against a brute-force reference: 500 generated queries
//! (word prefixes, pairs, job types, locations, categories, remote, country, salary,
//! statuses, pages) run through
//! `GET /api/jobs` on each backend, and through a plain filter-and-sort over the same jobs
//! read back from the API. Every page must hold the same jobs in the same order (sticky
//! first, then newest first), and every total must be the reference's exact count. Some
//! active jobs are past `expires_at` without the scheduler having moved them (never
//! listed), and another organization holds jobs with the same words (never listed). Run
//! with the node's in-memory search index (the default) and without it (SQL answers).

use serde_json::json;

use crate::{backends, common::*};

backends!(
    five_hundred_queries_match_the_reference,
    five_hundred_queries_match_the_reference_without_the_index
);

/// Countries of jobs and of remote work.
const COUNTRIES: [&str; 3] = ["DE", "FR", "PT"];

/// Words, some prefixes of others (`rust`, `rustacean`) and some inside others not as a
/// prefix (`data` in `metadata`, `night` in `overnight`), which must not match.
const WORDS: [&str; 14] = [
    "rust",
    "rustacean",
    "python",
    "pharmacist",
    "pharmacy",
    "data",
    "database",
    "metadata",
    "nurse",
    "night",
    "nightly",
    "overnight",
    "chef",
    "cloud",
];
const CITIES: [&str; 6] = ["Berlin", "Paris", "Lyon", "Porto", "New York", "Berlingen"];
const TYPES: [&str; 4] = ["full-time", "part-time", "contract", "internship"];

/// A small deterministic generator (the test needs no randomness crate).
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len())]
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// A job as the reference sees it.
struct Job {
    id: String,
    words: Vec<String>,
    location: String,
    job_type: String,
    category: String,
    remote: bool,
    sticky: bool,
    status: String,
    created_at: String,
    /// Active, but past `expires_at`: in no list.
    overdue: bool,
    country: String,
    remote_countries: Vec<String>,
    /// The top of the salary range, else its bottom.
    salary: Option<f64>,
}

fn tokens(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

async fn five_hundred_queries_match_the_reference(b: Backend) {
    five_hundred_queries(b, true).await;
}

async fn five_hundred_queries_match_the_reference_without_the_index(b: Backend) {
    five_hundred_queries(b, false).await;
}

async fn five_hundred_queries(b: Backend, index: bool) {
    let t = TestApp::spawn_with(b, |c| {
        c.scheduler = false;
        if !index {
            c.search_index = 0;
        }
    })
    .await;
    let mut g = Gen(42);
    let mut categories = Vec::new();
    for name in ["Engineering", "Care", "Kitchen"] {
        let r = t.post("/categories", json!({ "name": name })).await;
        categories.push(r.body["data"]["id"].as_str().unwrap().to_string());
    }
    // Another organization's jobs, with the same words, cities and types.
    let (other_org, _) = t.new_org("Other", "jobs:read", 1000, 1000).await;
    for i in 0..30 {
        let title = format!("{} {} {}", g.pick(&WORDS), g.pick(&WORDS), i);
        t.insert_job(other_org, &title).await;
    }
    for i in 0..240 {
        let title = format!("{} {} {}", g.pick(&WORDS), g.pick(&WORDS), i);
        let mut body = json!({
            "title": title,
            "company_name": format!("{} Co", g.pick(&["Acme", "Globex", "Initech", "Umbrella"])),
            "description": format!("<p>We need a {} for {} work.</p>", g.pick(&WORDS), g.pick(&WORDS)),
            "status": *[ "active", "active", "active", "active", "pending", "draft", "expired"]
                .get(g.below(7)).unwrap(),
            "is_remote": g.chance(30),
            "is_sticky": g.chance(8),
        });
        if g.chance(85) {
            body["location"] = json!(g.pick(&CITIES));
        }
        if g.chance(85) {
            body["job_type"] = json!(g.pick(&TYPES));
        }
        if g.chance(70) {
            body["category_id"] = json!(categories[g.below(categories.len())]);
        }
        if g.chance(60) {
            body["country"] = json!(g.pick(&COUNTRIES));
        }
        if g.chance(40) {
            body["remote_countries"] = json!([g.pick(&COUNTRIES), g.pick(&COUNTRIES)]);
        }
        if g.chance(60) {
            let low = g.below(100) as f64 * 1000.0;
            body["salary_min"] = json!(low);
            if g.chance(50) {
                body["salary_max"] = json!(low + g.below(50) as f64 * 1000.0);
            }
        }
        t.post("/jobs", body).await.expect(201);
    }
    // The jobs as stored, read back through the API.
    let mut all: Vec<Job> = Vec::new();
    for page in 1..=3 {
        let r = t
            .get(&format!("/jobs?status=all&per_page=100&page={page}"))
            .await;
        for j in r.body["data"].as_array().unwrap() {
            let full = t.get(&format!("/jobs/{}", j["id"].as_str().unwrap())).await;
            let d = &full.body["data"];
            let text = format!(
                "{} {} {}",
                d["title"].as_str().unwrap(),
                d["company_name"].as_str().unwrap(),
                d["description"]
                    .as_str()
                    .unwrap()
                    .replace("<p>", " ")
                    .replace("</p>", " ")
            );
            all.push(Job {
                id: d["id"].as_str().unwrap().to_string(),
                words: tokens(&text),
                location: d["location"].as_str().unwrap_or("").to_lowercase(),
                job_type: d["job_type"].as_str().unwrap_or("").to_string(),
                category: d["category_id"].as_str().unwrap_or("").to_string(),
                remote: d["is_remote"].as_bool().unwrap(),
                sticky: d["is_sticky"].as_bool().unwrap(),
                status: d["status"].as_str().unwrap().to_string(),
                created_at: d["created_at"].as_str().unwrap().to_string(),
                overdue: false,
                country: d["country"].as_str().unwrap_or("").to_string(),
                remote_countries: d["remote_countries"]
                    .as_array()
                    .map(|a| a.iter().map(|c| c.as_str().unwrap().to_string()).collect())
                    .unwrap_or_default(),
                salary: d["salary_max"].as_f64().or(d["salary_min"].as_f64()),
            });
        }
    }
    assert_eq!(all.len(), 240);
    // One active job in eight passes its expiry; the scheduler is off, so it stays active.
    let past = jobboard_store::Ts(chrono::Utc::now() - chrono::Duration::minutes(5));
    let mut overdue = 0;
    for j in all.iter_mut().filter(|j| j.status == "active") {
        if g.chance(12) {
            let id: uuid::Uuid = j.id.parse().unwrap();
            jobboard_store::dispatch!(t.db().writer(), p => {
                sqlx::query("UPDATE jobs SET expires_at = $1 WHERE id = $2")
                    .bind(past)
                    .bind(id)
                    .execute(p)
                    .await
                    .unwrap();
            });
            j.overdue = true;
            overdue += 1;
        }
    }
    assert!(overdue > 5, "{overdue} overdue");
    // Sticky first, then newest first (ids are time-ordered: the last tie-breaker).
    all.sort_by(|a, b| {
        b.sticky
            .cmp(&a.sticky)
            .then(b.created_at.cmp(&a.created_at))
            .then(b.id.cmp(&a.id))
    });

    let mut checked_pages = 0;
    let mut answered = 0;
    let mut paged = 0;
    for n in 0..500 {
        let mut params: Vec<(String, String)> = Vec::new();
        let mut words: Vec<String> = Vec::new();
        if g.chance(70) {
            for _ in 0..(1 + g.below(2)) {
                let w = g.pick(&WORDS);
                // Sometimes a prefix of the word.
                let w = if g.chance(40) {
                    &w[..3.max(w.len() / 2)]
                } else {
                    w
                };
                words.push(w.to_string());
            }
            params.push(("search".into(), words.join(" ")));
        }
        let mut types: Vec<&str> = Vec::new();
        if g.chance(30) {
            types.push(g.pick(&TYPES));
            if g.chance(40) {
                types.push(g.pick(&TYPES));
            }
            params.push(("job_types".into(), types.join(",")));
        }
        let mut places: Vec<String> = Vec::new();
        if g.chance(30) {
            let c = g.pick(&CITIES).to_lowercase();
            places.push(c[..4.min(c.len())].to_string());
            params.push(("locations".into(), places.join(",")));
        }
        let mut cats: Vec<&str> = Vec::new();
        if g.chance(20) {
            cats.push(&categories[g.below(categories.len())]);
            if g.chance(30) {
                cats.push(&categories[g.below(categories.len())]);
            }
            params.push(("categories".into(), cats.join(",")));
        }
        let remote = if g.chance(20) {
            Some(g.chance(50))
        } else {
            None
        };
        if let Some(r) = remote {
            params.push(("is_remote".into(), r.to_string()));
        }
        let country = g.chance(15).then(|| g.pick(&COUNTRIES));
        if let Some(c) = country {
            params.push(("country".into(), c.to_lowercase()));
        }
        let salary_min = g.chance(15).then(|| g.below(120) as f64 * 1000.0);
        if let Some(m) = salary_min {
            params.push(("salary_min".into(), m.to_string()));
        }
        let statuses: Vec<&str> = match g.below(6) {
            0 => vec!["active", "pending", "draft", "expired"],
            1 => vec!["pending", "draft"],
            _ => vec!["active"],
        };
        if statuses.len() == 4 {
            params.push(("status".into(), "all".into()));
        } else if statuses != ["active"] {
            params.push(("status".into(), statuses.join(",")));
        }
        let per_page = [5usize, 20, 100][g.below(3)];
        params.push(("per_page".into(), per_page.to_string()));
        let expected: Vec<&str> = all
            .iter()
            .filter(|j| !j.overdue && statuses.contains(&j.status.as_str()))
            .filter(|j| cats.is_empty() || cats.contains(&j.category.as_str()))
            .filter(|j| types.is_empty() || types.contains(&j.job_type.as_str()))
            .filter(|j| places.is_empty() || places.iter().any(|p| j.location.contains(p.as_str())))
            .filter(|j| remote.is_none_or(|r| j.remote == r))
            .filter(|j| {
                country.is_none_or(|c| {
                    j.country == c || (j.remote && j.remote_countries.iter().any(|r| r == c))
                })
            })
            .filter(|j| salary_min.is_none_or(|m| j.salary.is_some_and(|s| s >= m)))
            .filter(|j| {
                words
                    .iter()
                    .all(|w| j.words.iter().any(|t| t.starts_with(w.as_str())))
            })
            .map(|j| j.id.as_str())
            .collect();
        answered += usize::from(!expected.is_empty());
        paged += usize::from(expected.len() > per_page);
        let pages = expected.len().div_ceil(per_page).clamp(1, 3);
        for page in 1..=pages {
            let mut p = params.clone();
            p.push(("page".into(), page.to_string()));
            let qs = serde_urlencoded::to_string(&p).unwrap();
            let r = t
                .req(reqwest::Method::GET, &format!("/jobs?{qs}"))
                .header("cache-control", "no-cache")
                .send()
                .await;
            r.expect(200);
            let got: Vec<&str> = r.body["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|j| j["id"].as_str().unwrap())
                .collect();
            let want: Vec<&str> = expected
                .iter()
                .skip((page - 1) * per_page)
                .take(per_page)
                .copied()
                .collect();
            assert_eq!(got, want, "query {n}: {qs}");
            let pagination = &r.body["meta"]["pagination"];
            assert_eq!(pagination["total_items"], expected.len(), "query {n}: {qs}");
            assert_eq!(pagination.get("total_items_exact"), None, "query {n}: {qs}");
            checked_pages += 1;
        }
    }
    assert!(checked_pages >= 500);
    // The lists were answered by the index (the node's start may also have indexed the
    // other organization), or without one.
    let r = t.metrics().await;
    let indexes = gauge(&r.text, "jobboard_search_indexes");
    if index {
        assert!(indexes >= 1.0, "{}", r.text);
        assert!(
            gauge(&r.text, "jobboard_search_index_bytes") > 1000.0,
            "{}",
            r.text
        );
    } else {
        assert_eq!(indexes, 0.0, "{}", r.text);
    }
    // The generated queries are not vacuous: most find jobs, and some span pages.
    assert!(
        answered > 250 && paged > 25,
        "{answered} answered, {paged} paged"
    );
}
