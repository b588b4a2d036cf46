//! One parser per kind of source, each reading the public job-board format its system
//! publishes (docs/distribution.md has each mapping) into [`Item`]s, and saying whether
//! the read is whole: only a whole read may expire the jobs it no longer lists.

use serde_json::Value;

use super::Kind;
use crate::{
    countries,
    html::{decode_entities, escape},
};

/// A job as a source lists it, mapped to the board's fields.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Item {
    /// The source's own id of the job (stable across reads).
    pub external_id: String,
    pub title: String,
    /// HTML (sanitised like every description when stored).
    pub description: String,
    pub company_name: Option<String>,
    pub location: Option<String>,
    /// A country code (ISO 3166-1 alpha-2).
    pub country: Option<&'static str>,
    pub region: Option<String>,
    pub city: Option<String>,
    pub postal_code: Option<String>,
    /// One of the board's job types.
    pub job_type: Option<&'static str>,
    pub is_remote: bool,
    /// Where candidates apply (the job's page at the source).
    pub apply_url: Option<String>,
    pub salary_min: Option<f64>,
    pub salary_max: Option<f64>,
    pub salary_currency: Option<String>,
    /// One of the board's salary periods.
    pub salary_period: Option<&'static str>,
}

/// What one read of a source gave.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Read {
    pub items: Vec<Item>,
    /// False when the source says there is more than it gave (a next page, a total
    /// larger than the list): nothing may be expired from it.
    pub complete: bool,
}

/// Why a body could not be read: nothing changes.
#[derive(Debug, Clone, PartialEq)]
pub struct Unreadable(pub String);

/// Reads `body` as a source of `kind` publishes it. A job without its id makes the
/// read unreadable (it could not be kept apart from the others); a job the board would
/// refuse (no title, say) is read, and refused with its reasons when imported. `fallback_company` names the
/// employer when the format does not (Lever, Ashby: the board's name in the URL).
pub fn read(kind: Kind, body: &[u8], fallback_company: &str) -> Result<Read, Unreadable> {
    let mut read = match kind {
        Kind::Xml => xml(body)?,
        _ => {
            let v: Value =
                serde_json::from_slice(body).map_err(|e| Unreadable(format!("not JSON: {e}")))?;
            match kind {
                Kind::Greenhouse => greenhouse(&v)?,
                Kind::Lever => lever(&v)?,
                Kind::Ashby => ashby(&v)?,
                Kind::JsonFeed => json_feed(&v)?,
                Kind::Xml => unreachable!(),
            }
        }
    };
    for item in &mut read.items {
        if item
            .company_name
            .as_deref()
            .is_none_or(|c| c.trim().is_empty())
        {
            item.company_name = Some(fallback_company.to_string());
        }
    }
    let mut seen = std::collections::HashSet::new();
    if let Some(dup) = read
        .items
        .iter()
        .find(|i| !seen.insert(i.external_id.as_str()))
    {
        return Err(Unreadable(format!(
            "the id {:?} is listed twice",
            dup.external_id
        )));
    }
    Ok(read)
}

fn text(v: &Value, key: &str) -> Option<String> {
    match v.get(key)? {
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn id_of(v: &Value, key: &str) -> Result<String, Unreadable> {
    text(v, key).ok_or_else(|| Unreadable(format!("a job has no {key}")))
}

fn array<'a>(v: &'a Value, key: &str) -> Result<&'a Vec<Value>, Unreadable> {
    v.get(key)
        .and_then(Value::as_array)
        .ok_or_else(|| Unreadable(format!("no {key} list")))
}

/// Greenhouse's job board API (`GET /v1/boards/{board}/jobs?content=true`): `jobs` with
/// `id`, `title`, `content` (HTML, entity-escaped), `location.name`, `absolute_url`,
/// `company_name`; `meta.total` counts them all.
fn greenhouse(v: &Value) -> Result<Read, Unreadable> {
    let jobs = array(v, "jobs")?;
    let items = jobs
        .iter()
        .map(|j| {
            Ok(Item {
                external_id: id_of(j, "id")?,
                title: text(j, "title").unwrap_or_default(),
                // HTML written with its markup escaped: `&lt;p&gt;` is `<p>`.
                description: decode_entities(&text(j, "content").unwrap_or_default()),
                company_name: text(j, "company_name"),
                location: j.get("location").and_then(|l| text(l, "name")),
                is_remote: j
                    .get("location")
                    .and_then(|l| text(l, "name"))
                    .is_some_and(|l| l.to_ascii_lowercase().contains("remote")),
                apply_url: text(j, "absolute_url"),
                ..Item::default()
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let total = v
        .get("meta")
        .and_then(|m| m.get("total"))
        .and_then(Value::as_u64);
    Ok(Read {
        complete: total.is_none_or(|t| t as usize == items.len()),
        items,
    })
}

/// Lever's postings API (`GET /v0/postings/{site}?mode=json`): a list of postings with
/// `id`, `text` (the title), `description` and `lists` and `additional` (HTML),
/// `categories.location` and `.commitment`, `country`, `workplaceType`, `hostedUrl`,
/// `salaryRange`.
fn lever(v: &Value) -> Result<Read, Unreadable> {
    let jobs = v
        .as_array()
        .ok_or_else(|| Unreadable("not a list of postings".into()))?;
    let items = jobs
        .iter()
        .map(|j| {
            let cats = j.get("categories").cloned().unwrap_or(Value::Null);
            let mut description = text(j, "description").unwrap_or_default();
            for list in j
                .get("lists")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let (Some(head), Some(body)) = (text(list, "text"), text(list, "content")) {
                    description.push_str(&format!("<h3>{}</h3><ul>{body}</ul>", escape(&head)));
                }
            }
            if let Some(more) = text(j, "additional") {
                description.push_str(&more);
            }
            let salary = j.get("salaryRange");
            Ok(Item {
                external_id: id_of(j, "id")?,
                title: text(j, "text").unwrap_or_default(),
                description,
                location: text(&cats, "location"),
                country: text(j, "country").and_then(|c| countries::lookup(&c)),
                job_type: text(&cats, "commitment").and_then(|c| job_type(&c)),
                is_remote: text(j, "workplaceType").as_deref() == Some("remote"),
                apply_url: text(j, "hostedUrl").or_else(|| text(j, "applyUrl")),
                salary_min: salary.and_then(|s| s.get("min")).and_then(Value::as_f64),
                salary_max: salary.and_then(|s| s.get("max")).and_then(Value::as_f64),
                salary_currency: salary.and_then(|s| text(s, "currency")),
                salary_period: salary
                    .and_then(|s| text(s, "interval"))
                    .and_then(|i| period(&i)),
                ..Item::default()
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Read {
        items,
        complete: true,
    })
}

/// Ashby's posting API (`GET /posting-api/job-board/{board}?includeCompensation=true`):
/// `jobs` with `id`, `title`, `descriptionHtml`, `location`, `address.postalAddress`
/// (`addressLocality`, `addressRegion`, `addressCountry`, `postalCode`), `isRemote`,
/// `employmentType`, `jobUrl`, `isListed`; unlisted jobs are not imported.
fn ashby(v: &Value) -> Result<Read, Unreadable> {
    let jobs = array(v, "jobs")?;
    let mut items = Vec::new();
    for j in jobs {
        if j.get("isListed").and_then(Value::as_bool) == Some(false) {
            continue;
        }
        let address = j
            .get("address")
            .and_then(|a| a.get("postalAddress"))
            .cloned()
            .unwrap_or(Value::Null);
        items.push(Item {
            external_id: id_of(j, "id")?,
            title: text(j, "title").unwrap_or_default(),
            description: text(j, "descriptionHtml").unwrap_or_default(),
            location: text(j, "location"),
            country: text(&address, "addressCountry").and_then(|c| countries::lookup(&c)),
            region: text(&address, "addressRegion"),
            city: text(&address, "addressLocality"),
            postal_code: text(&address, "postalCode"),
            job_type: text(j, "employmentType").and_then(|t| job_type(&t)),
            is_remote: j.get("isRemote").and_then(Value::as_bool).unwrap_or(false),
            apply_url: text(j, "jobUrl").or_else(|| text(j, "applyUrl")),
            ..Item::default()
        });
    }
    Ok(Read {
        items,
        complete: true,
    })
}

/// JSON Feed 1.1: `items` with `id`, `title`, `content_html` (or `content_text`), `url`,
/// `authors[0].name` (the employer); a `next_url` means the feed is paged, so this read
/// is not whole.
fn json_feed(v: &Value) -> Result<Read, Unreadable> {
    if !text(v, "version").is_some_and(|s| s.starts_with("https://jsonfeed.org/version/")) {
        return Err(Unreadable("not a JSON Feed (no version)".into()));
    }
    let jobs = array(v, "items")?;
    let items = jobs
        .iter()
        .map(|j| {
            Ok(Item {
                external_id: id_of(j, "id")?,
                title: text(j, "title").unwrap_or_default(),
                description: text(j, "content_html")
                    .or_else(|| text(j, "content_text").map(|t| escape(&t)))
                    .unwrap_or_default(),
                company_name: j
                    .get("authors")
                    .and_then(Value::as_array)
                    .and_then(|a| a.first())
                    .and_then(|a| text(a, "name")),
                apply_url: text(j, "url"),
                ..Item::default()
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Read {
        complete: text(v, "next_url").is_none(),
        items,
    })
}

/// The Indeed XML format (the one `/feeds/indeed.xml` writes): `source` with one `job`
/// per job: `referencenumber`, `title`, `description`, `company`, `city`, `state`,
/// `country`, `postalcode`, `url`, `jobtype`, `remotetype`.
fn xml(body: &[u8]) -> Result<Read, Unreadable> {
    let s = std::str::from_utf8(body).map_err(|_| Unreadable("not UTF-8".into()))?;
    let doc = roxmltree::Document::parse(s).map_err(|e| Unreadable(format!("not XML: {e}")))?;
    let root = doc.root_element();
    if root.tag_name().name() != "source" {
        return Err(Unreadable("no <source> element".into()));
    }
    let mut items = Vec::new();
    for job in root.children().filter(|n| n.has_tag_name("job")) {
        let field = |name: &str| {
            job.children()
                .find(|n| n.has_tag_name(name))
                .map(|n| n.text().unwrap_or("").trim().to_string())
                .filter(|t| !t.is_empty())
        };
        let place: Vec<String> = ["city", "state", "country"]
            .iter()
            .filter_map(|k| field(k))
            .collect();
        items.push(Item {
            external_id: field("referencenumber")
                .ok_or_else(|| Unreadable("a job has no referencenumber".into()))?,
            title: field("title").unwrap_or_default(),
            description: field("description").unwrap_or_default(),
            company_name: field("company"),
            location: (!place.is_empty()).then(|| place.join(", ")),
            country: field("country").and_then(|c| countries::lookup(&c)),
            region: field("state"),
            city: field("city"),
            postal_code: field("postalcode"),
            job_type: field("jobtype").and_then(|t| job_type(&t)),
            is_remote: field("remotetype").is_some_and(|r| !r.is_empty()),
            apply_url: field("url"),
            ..Item::default()
        });
    }
    Ok(Read {
        items,
        complete: true,
    })
}

/// A job type as the systems write it (`Full-time`, `FullTime`, `fulltime`, `Intern`).
fn job_type(s: &str) -> Option<&'static str> {
    let k: String = s
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .to_ascii_lowercase();
    Some(match k.as_str() {
        "fulltime" => "full-time",
        "parttime" => "part-time",
        "contract" | "contractor" => "contract",
        "intern" | "internship" => "internship",
        "temporary" | "temp" => "temporary",
        "casual" => "casual",
        _ => return None,
    })
}

/// A salary interval as Lever writes it (`per-year-salary`, `per-hour-wage`).
fn period(s: &str) -> Option<&'static str> {
    let s = s.to_ascii_lowercase();
    Some(if s.contains("year") || s.contains("annual") {
        "yearly"
    } else if s.contains("month") {
        "monthly"
    } else if s.contains("week") {
        "weekly"
    } else if s.contains("day") {
        "daily"
    } else if s.contains("hour") {
        "hourly"
    } else {
        return None;
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaped_markup_reads_back() {
        assert_eq!(
            decode_entities("&lt;p&gt;Bake &amp;amp; sell&lt;/p&gt; &#233;&#x20AC; &bogus; &"),
            "<p>Bake &amp; sell</p> é€ &bogus; &"
        );
    }

    #[test]
    fn job_types_and_periods_as_the_systems_write_them() {
        assert_eq!(job_type("Full-time"), Some("full-time"));
        assert_eq!(job_type("FullTime"), Some("full-time"));
        assert_eq!(job_type("Intern"), Some("internship"));
        assert_eq!(job_type("Volunteer"), None);
        assert_eq!(period("per-year-salary"), Some("yearly"));
        assert_eq!(period("per-hour-wage"), Some("hourly"));
    }

    #[test]
    fn a_paged_feed_or_a_short_list_is_not_whole() {
        let feed = serde_json::json!({"version": "https://jsonfeed.org/version/1.1",
            "items": [{"id": "1", "title": "Baker"}], "next_url": "https://x/2"});
        let r = read(Kind::JsonFeed, feed.to_string().as_bytes(), "Crumbs").unwrap();
        assert!(!r.complete);
        assert_eq!(r.items[0].company_name.as_deref(), Some("Crumbs"));
        let gh = serde_json::json!({"jobs": [{"id": 1, "title": "Baker"}], "meta": {"total": 2}});
        assert!(
            !read(Kind::Greenhouse, gh.to_string().as_bytes(), "C")
                .unwrap()
                .complete
        );
        let dup = serde_json::json!({"jobs": [{"id": 1, "title": "A"}, {"id": 1, "title": "B"}]});
        assert!(read(Kind::Greenhouse, dup.to_string().as_bytes(), "C").is_err());
    }
}
