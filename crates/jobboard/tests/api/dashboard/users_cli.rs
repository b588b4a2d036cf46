//! `jobboard users create|list|remove`: the password comes from standard input only.

use std::{io::Write, process::Stdio};

use super::*;
use crate::backends;

backends!(users_are_managed_from_the_command_line);

/// Runs `jobboard --database DB args...` with `stdin` on standard input.
fn run_with_stdin(db: &str, args: &[&str], stdin: &str) -> (bool, String, String) {
    let mut child = bin()
        .arg("--database")
        .arg(db)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

async fn users_are_managed_from_the_command_line(b: Backend) {
    let t = TestApp::spawn(b).await;
    let db = t.database_url.clone();
    let org = t.org_id.to_string();
    let create = [
        "users",
        "create",
        "--org",
        org.as_str(),
        "--email",
        "ada@example.com",
    ];
    // No password, or a short one: refused, nothing created.
    let (ok, _, err) = run_with_stdin(&db, &create, "");
    assert!(!ok && err.contains("no password"), "{err}");
    let (ok, _, err) = run_with_stdin(&db, &create, "short\n");
    assert!(!ok && err.contains("at least 12 characters"), "{err}");
    let (ok, _, err) = run_with_stdin(&db, &create, "aaaaaaaaaaaa\n");
    assert!(!ok && err.contains("too easy to guess"), "{err}");
    let (ok, _, err) = run_with_stdin(
        &db,
        &[
            "users",
            "create",
            "--org",
            "999",
            "--email",
            "x@example.com",
        ],
        &format!("{PASSWORD}\n"),
    );
    assert!(!ok && err.contains("does not exist"), "{err}");
    assert!(
        jobboard_domain::users::list(t.db(), t.org_id)
            .await
            .unwrap()
            .is_empty()
    );
    // A good one: the id is the last line, and the user signs in.
    let (ok, out, err) = run_with_stdin(&db, &create, &format!("{PASSWORD}\n"));
    assert!(ok, "{err}");
    let id = out.lines().last().unwrap().trim().to_string();
    uuid::Uuid::parse_str(&id).unwrap();
    let br = Browser::signed_in(&t, "ada@example.com").await;
    // The same address again is refused.
    let (ok, _, err) = run_with_stdin(&db, &create, &format!("{PASSWORD}\n"));
    assert!(
        !ok && err.contains("cannot be used for a new staff user"),
        "{err}"
    );
    let (ok, out, _) = run_cli(&["users", "list", "--org", &org], &db);
    assert!(ok);
    assert!(
        out.contains(&id) && out.contains("ada@example.com"),
        "{out}"
    );
    // Removal ends the user's session at once.
    let (ok, out, err) = run_cli(&["users", "remove", &id], &db);
    assert!(ok, "{err}");
    assert!(out.contains("ada@example.com"), "{out}");
    assert!(redirect(&br.get("/dashboard").await).starts_with("/dashboard/login"));
    let (ok, _, err) = run_cli(&["users", "remove", &id], &db);
    assert!(!ok && err.contains("no staff user"), "{err}");
    let (ok, out, _) = run_cli(&["users", "list", "--org", &org], &db);
    assert!(ok && out.trim().is_empty(), "{out}");
}
