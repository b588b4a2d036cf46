//! `orgs create|update|list`.

use clap::Subcommand;
use jobboard::config::Config;
use jobboard_domain::{
    Input, OrgId,
    orgs::{self, domains::Reserved},
};
use jobboard_store::Db;
use serde_json::{Map, Value};

use super::described;

#[derive(Subcommand)]
// Parsed once per command: the size of its largest variant costs nothing.
#[allow(clippy::large_enum_variant)]
pub enum OrgsCmd {
    /// Create an organization; prints its id as the last line.
    Create {
        #[arg(long)]
        name: String,
        /// The host name its public board answers on (e.g. jobs.example.com).
        #[arg(long)]
        domain: Option<String>,
    },
    /// Change an organization's name, board domain, board look, mails and whether its
    /// staff must use two-factor sign-in.
    Update {
        /// The organization's id.
        id: OrgId,
        #[arg(long)]
        name: Option<String>,
        /// The host name its board answers on, in use at once (staff claiming one in the
        /// dashboard must prove it); an empty value removes it.
        #[arg(long)]
        domain: Option<String>,
        /// A line shown under the board's name; an empty value removes it.
        #[arg(long)]
        tagline: Option<String>,
        /// An absolute http(s) URL of the board's logo; an empty value removes it.
        #[arg(long)]
        logo_url: Option<String>,
        /// The board's accent colour, #rrggbb; an empty value returns to the default.
        #[arg(long)]
        accent_color: Option<String>,
        /// Whether visitors may submit jobs on the board: on or off.
        #[arg(long, value_parser = ["on", "off"])]
        public_posting: Option<String>,
        /// Mail a job's contact address when the job goes live: on or off.
        #[arg(long, value_parser = ["on", "off"])]
        mail_job_live: Option<String>,
        /// Mail a job's contact address this many days before it expires (0: never).
        #[arg(long)]
        mail_expiry_days: Option<i64>,
        /// Mail a job's contact address on each application: on or off.
        #[arg(long, value_parser = ["on", "off"])]
        mail_applications: Option<String>,
        /// Delete applications this many days after they were made (0: keep them; the
        /// scheduler deletes what is older, in small batches).
        #[arg(long)]
        keep_applications_days: Option<i64>,
        /// Delete the applications of a job that has ended (expired, or deleted) this
        /// many days after it ended (0: keep them).
        #[arg(long)]
        keep_applications_after_job_days: Option<i64>,
        /// Who may sign up on the board: open (any address; a link by mail creates the
        /// member) or closed (only existing members sign in).
        #[arg(long, value_parser = ["open", "closed"])]
        member_signup: Option<String>,
        /// Whether members who sign up are approved at once (auto) or wait for staff in
        /// the dashboard (manual).
        #[arg(long, value_parser = ["auto", "manual"])]
        member_approval: Option<String>,
        /// What members' new and edited jobs become: pending (until staff approve them)
        /// or active (the organization trusts its members).
        #[arg(long, value_parser = ["pending", "active"])]
        member_posts: Option<String>,
        /// The card processor's API base (default its own, https://api.stripe.com); set
        /// with the secret key and the webhook secret, it lets the board sell posts.
        #[arg(long)]
        payments_api_url: Option<String>,
        /// The processor account's secret key (never printed or logged).
        #[arg(long, env = "JOBBOARD_PAYMENTS_SECRET_KEY", hide_env_values = true)]
        payments_secret_key: Option<String>,
        /// The secret the processor signs its events with (never printed or logged).
        #[arg(long, env = "JOBBOARD_PAYMENTS_WEBHOOK_SECRET", hide_env_values = true)]
        payments_webhook_secret: Option<String>,
        /// What a paid post becomes once paid: pending (until staff approve it) or active.
        #[arg(long, value_parser = ["pending", "active"])]
        paid_posts: Option<String>,
        /// Whether a refund takes the job it paid for off the board: on or off.
        #[arg(long, value_parser = ["on", "off"])]
        refund_unpublishes: Option<String>,
        /// Refuse jobs without a salary range (salary_min and salary_max) from every door:
        /// on or off.
        #[arg(long, value_parser = ["on", "off"])]
        require_salary: Option<String>,
        /// Refuse remote jobs that do not name the countries they may be done from: on or
        /// off.
        #[arg(long, value_parser = ["on", "off"])]
        require_remote_countries: Option<String>,
        /// How long a job without an expiry is announced as valid to search engines, in
        /// days (1 to 365; default 30).
        #[arg(long)]
        listing_days: Option<i64>,
        /// Tell search engines of published, changed and removed jobs (instant indexing):
        /// on (the default; only engines with a key are told) or off.
        #[arg(long, value_parser = ["on", "off"])]
        indexing: Option<String>,
        /// The board's IndexNow key (8 to 128 letters, digits and dashes), served at
        /// /<key>.txt; an empty value removes it.
        #[arg(long)]
        indexnow_key: Option<String>,
        /// A Google service account's JSON key file for the Indexing API (the account must
        /// own the board's site in Search Console); an empty value removes the key. The
        /// key is never printed.
        #[arg(long)]
        google_indexing_key: Option<String>,
        /// Notices the Google Indexing API takes from this organization a day (default
        /// 200, Google's default quota); the rest wait for the next day.
        #[arg(long)]
        google_indexing_quota: Option<i64>,
        /// Require two-factor sign-in of every staff user: on or off. Users without it
        /// set it up at their next sign-in before they get a session.
        #[arg(long = "require-2fa", value_parser = ["on", "off"])]
        require_2fa: Option<String>,
    },
    /// List organizations.
    List,
}

pub async fn run(db: &Db, config: &Config, cmd: OrgsCmd) -> anyhow::Result<()> {
    let reserved = Reserved::of(config.listen.ip(), &config.public_url);
    match cmd {
        OrgsCmd::Create { name, domain } => create(db, &name, domain.as_deref(), &reserved).await,
        OrgsCmd::Update {
            id,
            name,
            domain,
            tagline,
            logo_url,
            accent_color,
            public_posting,
            mail_job_live,
            mail_expiry_days,
            mail_applications,
            keep_applications_days,
            keep_applications_after_job_days,
            member_signup,
            member_approval,
            member_posts,
            payments_api_url,
            payments_secret_key,
            payments_webhook_secret,
            paid_posts,
            refund_unpublishes,
            require_salary,
            require_remote_countries,
            listing_days,
            indexing,
            indexnow_key,
            google_indexing_key,
            google_indexing_quota,
            require_2fa,
        } => {
            let mut changes = Map::new();
            for (field, value) in [
                ("name", name),
                ("domain", domain),
                ("tagline", tagline),
                ("logo_url", logo_url),
                ("accent_color", accent_color),
            ] {
                if let Some(v) = value {
                    // An empty value removes the setting.
                    let v = if v.is_empty() {
                        Value::Null
                    } else {
                        Value::String(v)
                    };
                    changes.insert(field.into(), v);
                }
            }
            for (field, value) in [
                ("public_posting", public_posting),
                ("mail_job_live", mail_job_live),
                ("mail_applications", mail_applications),
                ("refund_unpublishes", refund_unpublishes),
                ("require_salary", require_salary),
                ("require_remote_countries", require_remote_countries),
            ] {
                if let Some(v) = value {
                    changes.insert(field.into(), (v == "on").into());
                }
            }
            for (field, value) in [
                ("member_signup", member_signup),
                ("member_approval", member_approval),
                ("member_posts", member_posts),
                ("paid_posts", paid_posts),
            ] {
                if let Some(v) = value {
                    changes.insert(field.into(), v.into());
                }
            }
            if let Some(v) = listing_days {
                changes.insert("listing_days".into(), v.into());
            }
            if let Some(v) = mail_expiry_days {
                changes.insert("mail_expiry_days".into(), v.into());
            }
            if let Some(v) = keep_applications_days {
                changes.insert("keep_applications_days".into(), v.into());
            }
            if let Some(v) = keep_applications_after_job_days {
                changes.insert("keep_applications_after_job_days".into(), v.into());
            }
            let mut acted = false;
            let change = jobboard_domain::indexing::Change {
                indexing: indexing.map(|v| v == "on"),
                indexnow_key: indexnow_key.map(|k| Some(k).filter(|k| !k.is_empty())),
                google_key: match google_indexing_key.as_deref() {
                    None => None,
                    Some("") => Some(None),
                    Some(path) => {
                        let text = std::fs::read_to_string(path)
                            .map_err(|e| anyhow::anyhow!("reading {path}: {e}"))?;
                        jobboard::delivery::indexing::ServiceAccount::parse(&text)
                            .map_err(|e| anyhow::anyhow!("{path}: {e}"))?;
                        Some(Some(text))
                    }
                },
                google_quota: google_indexing_quota,
            };
            if change.indexing.is_some()
                || change.indexnow_key.is_some()
                || change.google_key.is_some()
                || change.google_quota.is_some()
            {
                let s = jobboard_domain::indexing::update(db, id, change)
                    .await
                    .map_err(described)?;
                println!(
                    "Organization {id}: indexing {}, IndexNow {}, Google Indexing API {} (quota {} a day)",
                    if s.indexing { "on" } else { "off" },
                    if s.indexnow_key.is_some() {
                        "key set"
                    } else {
                        "no key"
                    },
                    if s.google { "key set" } else { "no key" },
                    s.google_indexing_quota
                );
                acted = true;
            }
            if let Some(v) = require_2fa {
                let on = v == "on";
                orgs::set_require_2fa(db, id, on).await.map_err(described)?;
                println!(
                    "Organization {id}: two-factor sign-in {}",
                    if on { "required" } else { "not required" }
                );
                acted = true;
            }
            match (payments_secret_key, payments_webhook_secret) {
                (Some(secret_key), Some(webhook_secret)) => {
                    let account = jobboard_domain::payments::Account {
                        api_url: payments_api_url.unwrap_or_else(|| {
                            jobboard_domain::payments::DEFAULT_API_URL.to_string()
                        }),
                        secret_key,
                        webhook_secret,
                    };
                    jobboard_domain::payments::set_account(db, id, &account)
                        .await
                        .map_err(described)?;
                    println!(
                        "Organization {id}: payment account set ({})",
                        account.api_url
                    );
                    acted = true;
                }
                (None, None) if payments_api_url.is_none() => {}
                _ => anyhow::bail!(
                    "--payments-secret-key and --payments-webhook-secret go together (with --payments-api-url when it is not the processor's own)"
                ),
            }
            if changes.is_empty() && acted {
                return Ok(());
            }
            update(db, id, changes, &reserved).await
        }
        OrgsCmd::List => list(db).await,
    }
}

async fn create(
    db: &Db,
    name: &str,
    domain: Option<&str>,
    reserved: &Reserved,
) -> anyhow::Result<()> {
    let org = orgs::create_reserving(db, name, domain, reserved)
        .await
        .map_err(described)?;
    println!("Created organization {:?}", org.name);
    println!("{}", org.id);
    Ok(())
}

async fn update(
    db: &Db,
    id: OrgId,
    changes: Map<String, Value>,
    reserved: &Reserved,
) -> anyhow::Result<()> {
    anyhow::ensure!(!changes.is_empty(), "nothing to change");
    let org = orgs::update_reserving(db, id, Input::new(changes), reserved)
        .await
        .map_err(described)?;
    println!(
        "Updated organization {} {:?} (domain {}, public posting {})",
        org.id,
        org.name,
        org.domain.as_deref().unwrap_or("none"),
        if org.public_posting { "on" } else { "off" }
    );
    Ok(())
}

async fn list(db: &Db) -> anyhow::Result<()> {
    for o in orgs::list(db).await? {
        println!(
            "{}\t{}\t{}\t{}",
            o.id,
            o.created_at,
            o.name,
            o.domain.as_deref().unwrap_or("-")
        );
    }
    Ok(())
}
