//! `prices create|list|archive`: what a post costs on an organization's board (with a
//! payment account, `orgs update --payments-*`, the board then sells posts).

use clap::Subcommand;
use jobboard_store::Db;
use serde_json::{Value, json};
use uuid::Uuid;

use super::{described, org_exists};
use jobboard_domain::{Input, OrgId, payments};

#[derive(Subcommand)]
pub enum PricesCmd {
    /// Create a price of a post; prints its id as the last line.
    Create {
        #[arg(long)]
        org: OrgId,
        #[arg(long)]
        name: String,
        /// In minor units of the currency (4900 is 49.00 EUR).
        #[arg(long)]
        amount: i64,
        /// Three-letter currency code.
        #[arg(long)]
        currency: String,
        /// How many days a job bought at this price is listed.
        #[arg(long)]
        days: i64,
        /// How many days a job bought at this price is featured (listed first); a price
        /// with it is also offered as the featured upgrade of a live job.
        #[arg(long)]
        featured_days: Option<i64>,
    },
    /// List an organization's prices (archived ones marked).
    List {
        #[arg(long)]
        org: OrgId,
    },
    /// Archive a price: no longer offered; orders made at it keep it.
    Archive { id: Uuid },
}

pub async fn run(db: &Db, cmd: PricesCmd) -> anyhow::Result<()> {
    match cmd {
        PricesCmd::Create {
            org,
            name,
            amount,
            currency,
            days,
            featured_days,
        } => {
            if !org_exists(db, org).await? {
                anyhow::bail!("no organization {org}");
            }
            let Value::Object(mut body) =
                json!({"name": name, "amount": amount, "currency": currency, "days": days})
            else {
                unreachable!()
            };
            if let Some(f) = featured_days {
                body.insert("featured_days".into(), f.into());
            }
            let p = payments::create_price(db, org, Input::new(body))
                .await
                .map_err(described)?;
            println!(
                "Price {} ({}, {} days) created",
                p.name,
                p.display(),
                p.days
            );
            println!("{}", p.id);
            Ok(())
        }
        PricesCmd::List { org } => {
            for p in payments::all_prices(db, org).await.map_err(described)? {
                println!(
                    "{}\t{}\t{}\t{} days{}{}",
                    p.id,
                    p.name,
                    p.display(),
                    p.days,
                    p.featured_days
                        .map(|f| format!(", featured {f} days"))
                        .unwrap_or_default(),
                    if p.archived_at.is_some() {
                        "\tarchived"
                    } else {
                        ""
                    }
                );
            }
            Ok(())
        }
        PricesCmd::Archive { id } => {
            let p = payments::archive_price(db, id).await.map_err(described)?;
            println!("Price {} archived", p.name);
            Ok(())
        }
    }
}
