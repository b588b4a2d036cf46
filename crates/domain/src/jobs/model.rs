//! The job: its closed sets, its stored row (defined once with [`crate::model!`]), the
//! projection lists show, and the filters of a list.

use serde::Serialize;
use utoipa::ToSchema;

use crate::{
    CategoryId, Countries, JobId, MemberId, Ts,
    form::{Field, Group, Labelled},
    form_text_enum,
    kind::{
        Amount, Country, CountryList, Email, Enum, Flag, Id, Instant, Line, Link, Text, Trimmed,
        UpperCurrency,
    },
    model, text_enum,
};

text_enum!(
    /// Where a job is in its life: `pending` (awaiting approval), `active` (listed while
    /// not past `expires_at`), `expired`, `draft`.
    JobStatus { Pending = "pending", Active = "active", Expired = "expired", Draft = "draft" }
);

impl Default for JobStatus {
    /// A new job waits for approval.
    fn default() -> Self {
        JobStatus::Pending
    }
}

text_enum!(
    /// The kind of employment.
    JobType {
        FullTime = "full-time",
        PartTime = "part-time",
        Contract = "contract",
        Internship = "internship",
        Temporary = "temporary",
        Casual = "casual",
    }
);

text_enum!(
    /// How candidates apply: the board's own `form`, an `email` address, a `website`, or
    /// an external form (`form-external`).
    ApplyMethod { Form = "form", Email = "email", Website = "website", FormExternal = "form-external", Phone = "phone" }
);

text_enum!(
    /// What a salary amount is paid for.
    SalaryPeriod { Hourly = "hourly", Daily = "daily", Weekly = "weekly", Monthly = "monthly", Yearly = "yearly" }
);

model! {
    /// A job with every stored field.
    pub struct Job in "jobs";
    changes JobChanges;
    /// Body of `POST /jobs`. `title`, `description` and `company_name` are required; `null`
    /// counts as absent.
    create JobIn;
    /// Body of `PATCH /jobs/{id}`: at least one field. Every field of `POST /jobs` is
    /// accepted; `null` clears an optional field (and is refused for the others). Setting
    /// `status` to `active` approves a job.
    patch JobPatch;
    {
        #[schema(value_type = Uuid)]
        key id: JobId,
        write title: String = required Trimmed<1, 255>
            => Field::line("Job title").ld("title"),
        /// HTML; sanitised with an allow-list (scripts, event handlers and `javascript:`
        /// URLs are removed) and stored sanitised.
        write description: String = required Text<1, 100000>
            => Field::prose("Description")
                .hint("Plain text: leave a blank line between paragraphs. Simple HTML (paragraphs, lists, bold, links) works too.")
                .ld("description"),
        /// The description with its tags stripped (what search matches).
        derived description_text: String,
        write company_name: String = required Trimmed<1, 255>
            => Field::line("Company name")
                .group(Group::Company)
                .autocomplete("organization")
                .ld("hiringOrganization.name"),
        /// Made from the title and company name, unique in the organization.
        fixed slug: String,
        write job_type: Option<JobType> = optional Enum<JobType>
            => Field::choice::<JobType>("Job type").ld("employmentType"),
        /// Where the job is, as shown on the board; a blank value counts as none.
        write location: Option<String> = optional Line<255>
            => Field::line("Location")
                .hint("As shown on the board, e.g. Berlin, Germany.")
                .group(Group::Place)
                .ld("jobLocation.address.addressLocality"),
        /// Only candidates from `location` may apply. Default false.
        write location_restricted: bool = flag Flag
            => Field::checkbox("Only candidates from this location may apply")
                .group(Group::Place)
                .ld("applicantLocationRequirements"),
        /// Default false.
        write is_remote: bool = flag Flag
            => Field::checkbox("Remote work is possible")
                .group(Group::Place)
                .ld("jobLocationType"),
        /// The country of the job's place: an ISO 3166-1 alpha-2 code, any case, kept
        /// upper-case.
        write country: Option<String> = optional Country
            => Field::country("Country")
                .group(Group::Place)
                .autocomplete("country")
                .ld("jobLocation.address.addressCountry"),
        /// The state, province or region of the job's place.
        write region: Option<String> = optional Line<255>
            => Field::line("Region")
                .hint("State, province or region.")
                .group(Group::Place)
                .autocomplete("address-level1")
                .ld("jobLocation.address.addressRegion"),
        /// The city of the job's place.
        write city: Option<String> = optional Line<255>
            => Field::line("City")
                .group(Group::Place)
                .autocomplete("address-level2")
                .ld("jobLocation.address.addressLocality"),
        write postal_code: Option<String> = optional Line<32>
            => Field::line("Postal code")
                .group(Group::Place)
                .autocomplete("postal-code")
                .ld("jobLocation.address.postalCode"),
        /// Where a remote job may be done from: country codes (ISO 3166-1 alpha-2, any
        /// case, kept upper-case, each once). An empty array counts as none.
        #[schema(value_type = Option<Vec<String>>)]
        write remote_countries: Option<Countries> = optional CountryList
            => Field::countries("Remote from")
                .hint("For remote work: the countries it may be done from, as two-letter codes separated by commas, e.g. DE, FR, US.")
                .group(Group::Place)
                .ld("applicantLocationRequirements"),
        /// Default false.
        write is_highlighted: bool = flag Flag
            => Field::checkbox("Highlighted on the board")
                .group(Group::Listing)
                .staff_only()
                .no_ld(),
        /// Default false. Sticky jobs are listed first.
        write is_sticky: bool = flag Flag
            => Field::checkbox("Sticky (listed first)")
                .group(Group::Listing)
                .staff_only()
                .no_ld(),
        write how_to_apply_method: Option<ApplyMethod> = optional Enum<ApplyMethod>
            => Field::choice::<ApplyMethod>("Candidates apply")
                .group(Group::Applications)
                .ld("directApply"),
        /// Where or how to apply: an http(s) URL for `website` and `form-external`, an
        /// email address for `email`; instructions otherwise.
        write how_to_apply: Option<String> = optional Text<1, 10000>
            => Field::lines("Where or how to apply")
                .hint("The email address or web address candidates apply at, or instructions.")
                .group(Group::Applications)
                .no_ld(),
        /// A category of the organization.
        #[schema(value_type = Option<Uuid>)]
        write category_id: Option<CategoryId> = optional Id<CategoryId>
            => Field::categories("Category").no_ld(),
        /// Absolute http(s) URL.
        write company_website: Option<String> = optional Link
            => Field::url("Company website")
                .hint("An address starting with https://")
                .group(Group::Company)
                .autocomplete("url")
                .ld("hiringOrganization.sameAs"),
        /// Absolute http(s) URL.
        write company_logo_url: Option<String> = optional Link
            => Field::url("Logo address")
                .hint("The https:// address of a logo image.")
                .group(Group::Company)
                .ld("hiringOrganization.logo"),
        /// At least 0, at most `salary_max`.
        write salary_min: Option<f64> = optional Amount
            => Field::number("From").group(Group::Salary).ld("baseSalary.value.minValue"),
        write salary_max: Option<f64> = optional Amount
            => Field::number("To").group(Group::Salary).ld("baseSalary.value.maxValue"),
        /// Three upper-case letters (ISO 4217).
        write salary_currency: Option<String> = optional UpperCurrency
            => Field::currency("Currency")
                .hint("Three letters, e.g. EUR or USD.")
                .group(Group::Salary)
                .ld("baseSalary.currency"),
        write salary_period: Option<SalaryPeriod> = optional Enum<SalaryPeriod>
            => Field::choice::<SalaryPeriod>("Paid")
                .group(Group::Salary)
                .ld("baseSalary.value.unitText"),
        write contact_email: Option<String> = optional Email
            => Field::email("Contact email")
                .hint("For candidates’ questions; shown on the job page.")
                .group(Group::Applications)
                .autocomplete("email")
                .no_ld(),
        /// The member who owns the job: posted it from their account on the board, and
        /// sees, edits, closes and renews it there. A member of the organization; `null`
        /// clears it. Cleared when the member is deleted (the job stays).
        #[schema(value_type = Option<Uuid>)]
        write owner_user_id: Option<MemberId> = optional Id<MemberId>
            => Field::line("Owner (member id)")
                .hint("The id of the member who owns the job and manages it from their account; blank for none.")
                .group(Group::Listing)
                .staff_only()
                .no_ld(),
        /// While set and not past, the job is featured: `is_sticky` (listed first) until
        /// then, when the scheduler ends it (`job.updated`). Set by a paid featured upgrade,
        /// or by staff.
        write featured_until: Option<Ts> = optional Instant
            => Field::date_time("Featured until (UTC)")
                .hint("The job is listed first (sticky) until then.")
                .group(Group::Listing)
                .staff_only()
                .no_ld(),
        /// When the job stops being listed; it then moves to `expired` by itself.
        write expires_at: Option<Ts> = optional Instant
            => Field::date_time("Expires at (UTC)")
                .hint("The job stops being listed then and moves to expired.")
                .group(Group::Listing)
                .staff_only()
                .ld("validThrough"),
        /// Default pending.
        write status: JobStatus = flag Enum<JobStatus>
            => Field::choice::<JobStatus>("Status")
                .hint("Active jobs are listed on the board; pending ones wait for approval.")
                .group(Group::Listing)
                .staff_only()
                .no_ld(),
        fixed created_at: Ts,
        stamp updated_at: Ts,
    }
}

form_text_enum!(JobStatus, JobType, ApplyMethod, SalaryPeriod);

impl Labelled for JobStatus {
    fn label(self) -> &'static str {
        match self {
            JobStatus::Pending => "Pending approval",
            JobStatus::Active => "Active (listed)",
            JobStatus::Expired => "Expired",
            JobStatus::Draft => "Draft",
        }
    }
}

impl Labelled for JobType {
    fn label(self) -> &'static str {
        match self {
            JobType::FullTime => "Full-time",
            JobType::PartTime => "Part-time",
            JobType::Contract => "Contract",
            JobType::Internship => "Internship",
            JobType::Temporary => "Temporary",
            JobType::Casual => "Casual",
        }
    }
}

impl Labelled for ApplyMethod {
    fn label(self) -> &'static str {
        match self {
            ApplyMethod::Form => "On this board’s application form",
            ApplyMethod::Email => "By email",
            ApplyMethod::Website => "On our website",
            ApplyMethod::FormExternal => "With our own application form",
            ApplyMethod::Phone => "By phone",
        }
    }
    /// Applications made on the board's own form are read in the dashboard, which
    /// someone posting on the public board cannot open.
    fn public(self) -> bool {
        self != ApplyMethod::Form
    }
}

impl Labelled for SalaryPeriod {
    fn label(self) -> &'static str {
        match self {
            SalaryPeriod::Hourly => "Per hour",
            SalaryPeriod::Daily => "Per day",
            SalaryPeriod::Weekly => "Per week",
            SalaryPeriod::Monthly => "Per month",
            SalaryPeriod::Yearly => "Per year",
        }
    }
}

impl Job {
    /// True when the job is listed: active and not past `expires_at` at `now`.
    pub fn is_live(&self, now: Ts) -> bool {
        self.status == JobStatus::Active && self.expires_at.is_none_or(|t| t > now)
    }

    /// Until when the job is announced as valid at `now` (structured data, feeds): its
    /// `expires_at`; without one, the end of its current period of `listing_days` counted
    /// from its posting (the board's setting), so the date stays the same for a whole
    /// period and is always ahead.
    pub fn valid_through(&self, now: Ts, listing_days: i64) -> Ts {
        if let Some(t) = self.expires_at {
            return t;
        }
        let period = listing_days.max(1) * 86_400_000_000;
        let since = (now.micros() - self.created_at.micros()).max(0);
        Ts::from_micros(self.created_at.micros() + (since / period + 1) * period)
    }

    /// Where the job is, in words: its `location` as written, else its city, region and
    /// country's name (`None` when it says nothing of its place).
    pub fn place(&self) -> Option<String> {
        if let Some(l) = &self.location {
            return Some(l.clone());
        }
        let parts: Vec<&str> = [self.city.as_deref(), self.region.as_deref()]
            .into_iter()
            .flatten()
            .chain(self.country.as_deref().map(crate::countries::name))
            .collect();
        (!parts.is_empty()).then(|| parts.join(", "))
    }

    /// The countries a remote job may be done from, by name (`None` when it names none).
    pub fn remote_from(&self) -> Option<String> {
        let names: Vec<&str> = self
            .remote_countries
            .as_ref()?
            .0
            .iter()
            .map(|c| crate::countries::name(c))
            .collect();
        (!names.is_empty()).then(|| names.join(", "))
    }
}

/// The public path of a job.
pub fn url_of(slug: &str) -> String {
    format!("/jobs/{slug}")
}

/// A job as listed.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct JobListItem {
    #[schema(value_type = Uuid)]
    pub id: JobId,
    pub title: String,
    pub description: String,
    pub company_name: String,
    pub slug: String,
    pub location: Option<String>,
    pub job_type: Option<JobType>,
    pub status: JobStatus,
    pub is_remote: bool,
    pub contact_email: Option<String>,
}

impl JobListItem {
    /// The columns of the list projection, in field order.
    pub const COLUMNS: &'static str = "id, title, description, company_name, slug, location, job_type, status, is_remote, contact_email";
}

/// The filters of a job list, validated.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ListFilter {
    /// Words of the search, each matched as a word prefix.
    pub search_words: Vec<String>,
    pub job_types: Vec<JobType>,
    /// Lower-case substrings; any may match.
    pub locations: Vec<String>,
    pub categories: Vec<CategoryId>,
    pub is_remote: Option<bool>,
    /// Jobs whose salary range reaches this amount, in their own period.
    pub salary_min: Option<f64>,
    /// Jobs in this country (upper-case code) or remote from it.
    pub country: Option<String>,
    /// The statuses listed; `None` is every status.
    pub statuses: Option<Vec<JobStatus>>,
}

impl ListFilter {
    /// True when only statuses filter the list, so its total can be read from counters.
    pub fn counted(&self) -> bool {
        self.search_words.is_empty()
            && self.job_types.is_empty()
            && self.locations.is_empty()
            && self.categories.is_empty()
            && self.is_remote.is_none()
            && !self.by_row()
    }

    /// True when a filter asks what the full-text index on SQLite does not hold (salary,
    /// country): without the node's search index, the general query answers the list.
    pub fn by_row(&self) -> bool {
        self.salary_min.is_some() || self.country.is_some()
    }
}

/// Splits a search string into the words it matches: runs of letters and digits,
/// lower-cased, at most 16.
pub fn search_words(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .take(16)
        .collect()
}

/// The number of jobs a list matches, always exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Total {
    pub items: i64,
}
