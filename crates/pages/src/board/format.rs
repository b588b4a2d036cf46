//! How stored values read on the board: dates, salaries, job types, excerpts, and the
//! text of XML documents (escaped, with the characters XML cannot carry removed).

use jobboard_domain::{
    Ts,
    form::Labelled,
    jobs::{ApplyMethod, Job, JobType, SalaryPeriod},
    links,
};

/// `12 March 2026`.
pub fn date(t: Ts) -> String {
    t.0.format("%-d %B %Y").to_string()
}

/// `2026-03-12` (the `datetime` of a `<time>` element).
pub fn iso_date(t: Ts) -> String {
    t.0.format("%Y-%m-%d").to_string()
}

/// `Full-time` (the label the job model gives the value).
pub fn job_type(t: JobType) -> &'static str {
    t.label()
}

fn period(p: SalaryPeriod) -> &'static str {
    match p {
        SalaryPeriod::Hourly => "per hour",
        SalaryPeriod::Daily => "per day",
        SalaryPeriod::Weekly => "per week",
        SalaryPeriod::Monthly => "per month",
        SalaryPeriod::Yearly => "per year",
    }
}

/// An amount with thousands separators, without decimals when whole (`52,000`,
/// `18.50`).
pub fn amount(v: f64) -> String {
    let whole = v.trunc();
    let cents = ((v - whole) * 100.0).round() as i64;
    let digits = format!("{}", whole as i64);
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if cents > 0 {
        out.push_str(&format!(".{cents:02}"));
    }
    out
}

/// `50,000–70,000 EUR per year`, `From 40 USD per hour`, or `None` without amounts.
pub fn salary(job: &Job) -> Option<String> {
    let range = match (job.salary_min, job.salary_max) {
        (Some(a), Some(b)) if a == b => amount(a),
        (Some(a), Some(b)) => format!("{}–{}", amount(a), amount(b)),
        (Some(a), None) => format!("From {}", amount(a)),
        (None, Some(b)) => format!("Up to {}", amount(b)),
        (None, None) => return None,
    };
    let mut s = range;
    if let Some(c) = &job.salary_currency {
        s.push(' ');
        s.push_str(c);
    }
    if let Some(p) = job.salary_period {
        s.push(' ');
        s.push_str(period(p));
    }
    Some(s)
}

/// At most `max` characters of `text`, cut at a word and marked with `…`.
pub fn excerpt(text: &str, max: usize) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.chars().count() <= max {
        return text;
    }
    let cut: String = text.chars().take(max).collect();
    let cut = cut.rsplit_once(' ').map_or(cut.as_str(), |(a, _)| a);
    format!("{cut}…")
}

/// Where the job's own apply link leads, when it has one the board may send visitors to:
/// the `how_to_apply` URL of `website` and `form-external`, a `mailto:` for `email`, and,
/// when no method is set, an http(s), `mailto:` or `tel:` target written as such (or a
/// bare email address). Only what [`links::renderable_href`] accepts.
pub fn apply_target(job: &Job) -> Option<String> {
    let target = job.how_to_apply.as_deref()?.trim();
    match job.how_to_apply_method {
        Some(ApplyMethod::Website | ApplyMethod::FormExternal) => links::renderable_href(target),
        Some(ApplyMethod::Email) => email_href(target),
        Some(ApplyMethod::Phone) => {
            let number = target.strip_prefix("tel:").unwrap_or(target).trim();
            links::renderable_href(&format!("tel:{number}"))
        }
        Some(ApplyMethod::Form) => None,
        None => links::renderable_href(target).or_else(|| email_href(target)),
    }
}

fn email_href(target: &str) -> Option<String> {
    let address = target
        .strip_prefix("mailto:")
        .or_else(|| target.strip_prefix("MAILTO:"))
        .unwrap_or(target);
    links::renderable_href(&format!("mailto:{address}"))
}

/// What a job's page offers to apply: the address candidates apply at (if any), whether
/// the board's apply link (`/jobs/<slug>/apply`) leads anywhere (that address, or the
/// board's own form), and the instructions shown when the job names no address.
pub struct Applying<'a> {
    pub target: Option<String>,
    pub link: bool,
    pub instructions: Option<&'a str>,
}

pub fn applying(job: &Job) -> Applying<'_> {
    let target = apply_target(job);
    Applying {
        link: target.is_some() || hosted(job),
        instructions: if target.is_none() {
            job.how_to_apply.as_deref()
        } else {
            None
        },
        target,
    }
}

/// True when candidates apply to `job` on the board itself.
pub fn hosted(job: &Job) -> bool {
    match job.how_to_apply_method {
        Some(ApplyMethod::Form) => true,
        None => apply_target(job).is_none(),
        Some(_) => false,
    }
}

/// `target` as a `Location` header may carry it: bytes outside visible ASCII (a space in
/// a phone number, letters of an international address) percent-encoded.
pub fn location_header(target: &str) -> String {
    let mut out = String::with_capacity(target.len());
    for b in target.bytes() {
        if b.is_ascii_graphic() {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// JSON placed inside a `<script>` element: `<`, `>`, `&` and the JavaScript line
/// separators written as `\u` escapes, so no value can close the element.
pub fn script_json(v: &serde_json::Value) -> String {
    let s = serde_json::to_string(v).unwrap_or_else(|_| "{}".into());
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// True for the characters XML 1.0 can carry (not most control characters, not the
/// non-characters U+FFFE and U+FFFF).
fn xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r') || !((c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}')
}

/// Text for an XML document: markup characters escaped, characters XML 1.0 cannot carry
/// removed.
pub fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars().filter(|c| xml_char(*c)) {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// Text with the characters XML 1.0 cannot carry removed (for CDATA sections).
pub fn xml_chars(s: &str) -> String {
    s.chars().filter(|c| xml_char(*c)).collect()
}

/// A date-time as RSS writes it (RFC 2822).
pub fn rfc2822(t: Ts) -> String {
    t.0.to_rfc2822()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_and_salaries() {
        assert_eq!(amount(52_000.0), "52,000");
        assert_eq!(amount(1_234_567.5), "1,234,567.50");
        assert_eq!(amount(999.0), "999");
        let job = Job {
            salary_min: Some(50_000.0),
            salary_max: Some(70_000.0),
            salary_currency: Some("EUR".into()),
            salary_period: Some(SalaryPeriod::Yearly),
            ..Job::default()
        };
        assert_eq!(salary(&job).unwrap(), "50,000–70,000 EUR per year");
        assert_eq!(salary(&Job::default()), None);
    }

    #[test]
    fn apply_targets_are_only_safe_links() {
        let job = |method, target: &str| Job {
            how_to_apply_method: method,
            how_to_apply: Some(target.into()),
            ..Job::default()
        };
        assert_eq!(
            apply_target(&job(Some(ApplyMethod::Website), "https://a.example/x")).as_deref(),
            Some("https://a.example/x")
        );
        assert_eq!(
            apply_target(&job(Some(ApplyMethod::Email), "jobs@a.example")).as_deref(),
            Some("mailto:jobs@a.example")
        );
        assert_eq!(
            apply_target(&job(None, "tel:+44 20 7946 0958")).as_deref(),
            Some("tel:+44 20 7946 0958")
        );
        assert_eq!(apply_target(&job(None, "javascript:alert(1)")), None);
        assert_eq!(apply_target(&job(None, "Send a letter")), None);
        assert_eq!(
            apply_target(&job(Some(ApplyMethod::Form), "https://x.example")),
            None
        );
        assert_eq!(location_header("tel:+44 20"), "tel:+44%2020");
        assert_eq!(
            location_header("mailto:é@x.example"),
            "mailto:%C3%A9@x.example"
        );
    }

    #[test]
    fn text_for_scripts_and_xml() {
        let v = serde_json::json!({"t": "</script><b>&\u{2028}"});
        let s = script_json(&v);
        assert!(
            !s.contains('<') && !s.contains('>') && !s.contains('&'),
            "{s}"
        );
        assert_eq!(serde_json::from_str::<serde_json::Value>(&s).unwrap(), v);
        assert_eq!(xml("a<b & \u{1}c\"'"), "a&lt;b &amp; c&quot;&apos;");
        assert_eq!(excerpt("one two three four", 9), "one two…");
    }
}
