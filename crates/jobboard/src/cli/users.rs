//! `users create|list|remove`: the organization's staff, who sign in to the dashboard.

use clap::Subcommand;
use jobboard_store::Db;

use super::{described, org_exists};
use jobboard_domain::{OrgId, UserId};

#[derive(Subcommand)]
pub enum UsersCmd {
    /// Create a staff user; reads the password (at least 12 characters) from standard
    /// input and prints the user's id as the last line.
    Create {
        #[arg(long)]
        org: OrgId,
        #[arg(long)]
        email: String,
    },
    /// List the staff users of an organization.
    List {
        #[arg(long)]
        org: OrgId,
    },
    /// Remove a staff user; their sessions end at once.
    Remove {
        /// The user's id.
        id: String,
    },
}

pub async fn run(db: &Db, cmd: UsersCmd) -> anyhow::Result<()> {
    use jobboard_domain::users;
    match cmd {
        UsersCmd::Create { org, email } => {
            anyhow::ensure!(
                org_exists(db, org).await?,
                "organization {org} does not exist"
            );
            let password = read_password()?;
            let mut body = serde_json::Map::new();
            body.insert("email".into(), email.into());
            body.insert("password".into(), password.into());
            let user = users::create(db, org, jobboard_domain::Input::new(body), db.now())
                .await
                .map_err(described)?;
            println!(
                "Created staff user {} of organization {org}; they sign in at /dashboard/login.",
                user.email
            );
            println!("{}", user.id);
        }
        UsersCmd::List { org } => {
            for u in users::list(db, org).await? {
                let last = u
                    .last_login_at
                    .map_or_else(|| "never".to_string(), |t| t.to_string());
                println!(
                    "{}\t{}\tcreated {}\tlast sign-in {last}",
                    u.id, u.email, u.created_at
                );
            }
        }
        UsersCmd::Remove { id } => {
            let id: UserId = id
                .trim()
                .parse()
                .map_err(|_| anyhow::anyhow!("{id:?} is not a user id"))?;
            let user = match users::remove_any(db, id).await {
                Err(jobboard_domain::Error::NotFound(_)) => {
                    anyhow::bail!("no staff user with id {id}")
                }
                other => other.map_err(described)?,
            };
            println!(
                "Removed staff user {} ({}) of organization {}; their sessions have ended.",
                user.id, user.email, user.org_id
            );
        }
    }
    Ok(())
}

/// Reads a password from standard input: one line (without echo, and twice, on a
/// terminal). Never from the command line, where other users of the machine could read it.
fn read_password() -> anyhow::Result<String> {
    use std::io::{BufRead, IsTerminal};
    let stdin = std::io::stdin();
    let terminal = stdin.is_terminal();
    let read_line = |prompt: &str| -> anyhow::Result<String> {
        if terminal {
            eprint!("{prompt}");
            set_echo(false);
        }
        let mut line = String::new();
        let read = stdin.lock().read_line(&mut line);
        if terminal {
            set_echo(true);
            eprintln!();
        }
        read?;
        Ok(line.trim_end_matches(['\n', '\r']).to_string())
    };
    let password = read_line("Password (at least 12 characters): ")?;
    anyhow::ensure!(
        !password.is_empty(),
        "no password on standard input (e.g. `printf '%s\\n' \"$PASSWORD\" | jobboard users create ...`)"
    );
    if let Some(problem) = jobboard_domain::users::password::check(&password) {
        anyhow::bail!("the password is refused: {problem}");
    }
    if terminal {
        let again = read_line("The same password again: ")?;
        anyhow::ensure!(again == password, "the two passwords differ");
    }
    Ok(password)
}

/// Turns the terminal's echo off or back on (`stty`; nothing happens where it is missing).
fn set_echo(on: bool) {
    let _ = std::process::Command::new("stty")
        .arg(if on { "echo" } else { "-echo" })
        .stdin(std::process::Stdio::inherit())
        .status();
}
