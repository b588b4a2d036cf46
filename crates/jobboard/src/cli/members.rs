//! `members erase`: staff answering a member's request by mail to delete what the board
//! keeps about them, as the member's own `POST /account/delete` does.

use clap::Subcommand;
use jobboard_store::Db;

use super::{described, org_exists};
use jobboard_domain::{OrgId, accounts::data};

#[derive(Subcommand)]
pub enum MembersCmd {
    /// Delete a member and what the board keeps about them: their sessions, saved jobs,
    /// job alerts and the applications made with their address (their jobs stay without
    /// an owner, their payments without a member); emits `user.deleted`.
    Erase {
        #[arg(long)]
        org: OrgId,
        /// The member's address (letters' case aside).
        #[arg(long)]
        email: String,
    },
}

pub async fn run(db: &Db, cmd: MembersCmd) -> anyhow::Result<()> {
    match cmd {
        MembersCmd::Erase { org, email } => {
            if !org_exists(db, org).await? {
                anyhow::bail!("no organization {org}");
            }
            let erased = data::erase_address(db, org, &email)
                .await
                .map_err(described)?;
            println!(
                "Member {} erased: {} applications and {} job alerts deleted with it",
                erased.member, erased.applications, erased.alerts
            );
            Ok(())
        }
    }
}
