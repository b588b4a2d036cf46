//! `imports create|list|run|delete`: the sources an organization's jobs are imported
//! from (docs/distribution.md). The scheduler runs each every `--every` minutes; `run`
//! runs one now.

use clap::Subcommand;
use jobboard_store::Db;
use serde_json::{Value, json};
use uuid::Uuid;

use super::{described, org_exists};
use jobboard::{config::Config, delivery::imports::Fetcher};
use jobboard_domain::{Input, OrgId, imports};

#[derive(Subcommand)]
pub enum ImportsCmd {
    /// Add a source; prints its id as the last line.
    Create {
        #[arg(long)]
        org: OrgId,
        /// greenhouse, lever, ashby, xml (the Indeed XML format) or jsonfeed.
        #[arg(long)]
        kind: String,
        /// The source's public address (Greenhouse:
        /// https://boards-api.greenhouse.io/v1/boards/BOARD/jobs?content=true).
        #[arg(long)]
        url: String,
        /// Minutes between runs (5 to 10080; default 60).
        #[arg(long)]
        every: Option<i64>,
        /// What a new job becomes: pending (default) or active.
        #[arg(long)]
        status: Option<String>,
        /// The slug of a category for every job of the source.
        #[arg(long)]
        category: Option<String>,
    },
    /// List an organization's sources with their last run.
    List {
        #[arg(long)]
        org: OrgId,
    },
    /// Run a source once, now, and print what it did.
    Run { id: Uuid },
    /// Delete a source (its jobs stay, no longer updated).
    Delete { id: Uuid },
}

pub async fn run(db: &Db, config: &Config, cmd: ImportsCmd) -> anyhow::Result<()> {
    match cmd {
        ImportsCmd::Create {
            org,
            kind,
            url,
            every,
            status,
            category,
        } => {
            if !org_exists(db, org).await? {
                anyhow::bail!("no organization {org}");
            }
            let Value::Object(mut body) = json!({"kind": kind, "url": url}) else {
                unreachable!()
            };
            for (k, v) in [
                ("every", every.map(Value::from)),
                ("status", status.map(Value::from)),
                ("category", category.map(Value::from)),
            ] {
                if let Some(v) = v {
                    body.insert(k.into(), v);
                }
            }
            let s = imports::create(db, org, Input::new(body))
                .await
                .map_err(described)?;
            println!(
                "Source {} ({}) created; it runs every {} minutes",
                s.url,
                s.kind.as_str(),
                s.every_minutes
            );
            println!("{}", s.id);
            Ok(())
        }
        ImportsCmd::List { org } => {
            for s in imports::list(db, org).await.map_err(described)? {
                let last = match (&s.last_run_at, &s.last_result) {
                    (Some(at), Some(r)) => {
                        let counts: imports::Counts =
                            serde_json::from_value(r.0.clone()).unwrap_or_default();
                        format!("last run {at}: {}", counts.summary())
                    }
                    _ => "not run yet".into(),
                };
                println!(
                    "{}\t{}\t{}\tevery {} min\t{last}",
                    s.id,
                    s.kind.as_str(),
                    s.url,
                    s.every_minutes
                );
            }
            Ok(())
        }
        ImportsCmd::Run { id } => {
            let source = imports::get(db, None, id).await.map_err(described)?;
            let fetcher = Fetcher::new(&config.webhooks)?;
            let counts = jobboard::delivery::imports::run(db, &fetcher, &source)
                .await
                .map_err(described)?;
            println!("{}", counts.summary());
            for (ext, why) in &counts.refusals {
                println!("refused {ext}: {why}");
            }
            if counts.error.is_some() {
                anyhow::bail!("the source was not read; nothing changed");
            }
            Ok(())
        }
        ImportsCmd::Delete { id } => {
            let s = imports::delete(db, None, id).await.map_err(described)?;
            println!("Source {} deleted; its jobs stay", s.url);
            Ok(())
        }
    }
}
