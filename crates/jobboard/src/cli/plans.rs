//! `plans create|list`.

use clap::Subcommand;
use jobboard_store::Db;

use super::org_exists;
use jobboard_domain::OrgId;

#[derive(Subcommand)]
pub enum PlansCmd {
    /// Create a plan; prints its id as the last line.
    Create {
        #[arg(long)]
        org: OrgId,
        #[arg(long)]
        name: String,
        /// Exact decimal price, e.g. 49.99.
        #[arg(long)]
        price: String,
        /// Three-letter currency code.
        #[arg(long)]
        currency: String,
        /// month, year or one_time.
        #[arg(long)]
        interval: String,
        /// Job posts an access record on this plan starts with.
        #[arg(long, default_value_t = 0)]
        jobs_included: i64,
        #[arg(long)]
        processor_price_id: Option<String>,
        #[arg(long)]
        alt_processor_plan_id: Option<String>,
    },
    /// List the plans of an organization.
    List {
        #[arg(long)]
        org: OrgId,
    },
}

pub async fn run(db: &Db, cmd: PlansCmd) -> anyhow::Result<()> {
    use jobboard_domain::{
        Error, Money,
        plans::{self, PlanIn, PlanInterval},
    };
    match cmd {
        PlansCmd::Create {
            org,
            name,
            price,
            currency,
            interval,
            jobs_included,
            processor_price_id,
            alt_processor_plan_id,
        } => {
            anyhow::ensure!(
                org_exists(db, org).await?,
                "organization {org} does not exist"
            );
            let name = name.trim().to_string();
            anyhow::ensure!(
                !name.is_empty() && name.chars().count() <= 100,
                "--name must be 1 to 100 characters"
            );
            let price =
                Money::parse(price.trim()).map_err(|(_, m)| anyhow::anyhow!("--price: {m}"))?;
            anyhow::ensure!(
                currency.len() == 3 && currency.bytes().all(|b| b.is_ascii_alphabetic()),
                "--currency must be a three-letter code"
            );
            let interval = PlanInterval::parse(&interval).ok_or_else(|| {
                anyhow::anyhow!(
                    "--interval must be one of: {}",
                    PlanInterval::ALL.join(", ")
                )
            })?;
            anyhow::ensure!(
                (0..=1_000_000_000).contains(&jobs_included),
                "--jobs-included must be between 0 and 1000000000"
            );
            for (flag, v) in [
                ("--processor-price-id", &processor_price_id),
                ("--alt-processor-plan-id", &alt_processor_plan_id),
            ] {
                if let Some(v) = v {
                    anyhow::ensure!(
                        !v.is_empty() && v.chars().count() <= 255,
                        "{flag} must be 1 to 255 characters"
                    );
                }
            }
            let new = PlanIn {
                name,
                processor_price_id,
                alt_processor_plan_id,
                price,
                currency: currency.to_ascii_uppercase(),
                interval,
                jobs_included,
            };
            match plans::create_from(db, org, new).await {
                Ok(p) => {
                    println!(
                        "Created plan {:?} ({} {} per {}, {} jobs included)",
                        p.name,
                        p.price,
                        p.currency,
                        p.interval.as_str(),
                        p.jobs_included
                    );
                    println!("{}", p.id);
                }
                Err(Error::Conflict { details, .. }) => {
                    let field = details["field"].as_str().unwrap_or("value");
                    anyhow::bail!("a plan with this {field} already exists in organization {org}")
                }
                Err(e) => return Err(e.into()),
            }
        }
        PlansCmd::List { org } => {
            for p in plans::list(db, org).await? {
                println!(
                    "{}\t{}\t{} {}\t{}\t{} jobs\t{}\t{}",
                    p.id,
                    p.name,
                    p.price,
                    p.currency,
                    p.interval.as_str(),
                    p.jobs_included,
                    p.processor_price_id.as_deref().unwrap_or("-"),
                    p.alt_processor_plan_id.as_deref().unwrap_or("-"),
                );
            }
        }
    }
    Ok(())
}
