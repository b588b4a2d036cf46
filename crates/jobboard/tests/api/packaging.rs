//! The Debian package's files (`packaging/`): the settings file it installs is one the
//! server reads (every key known), pointing at the service's state directory, and the
//! systemd unit runs the binary with that file under its own hardened user.

use jobboard::config::{Config, Layer};

fn repo(path: &str) -> String {
    format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_installed_settings_are_read_by_the_server() {
    let path = repo("packaging/jobboard.toml");
    let config = Config::load(Some(&path), &Layer::default()).expect("the packaged settings load");
    assert_eq!(config.database, "sqlite:///var/lib/jobboard/jobboard.db");
    assert_eq!(config.listen.to_string(), "127.0.0.1:8080");
    assert!(
        !config.mail.enabled(),
        "no mail until an SMTP server is set"
    );
}

#[test]
fn the_unit_runs_the_packaged_binary_hardened() {
    let unit = std::fs::read_to_string(repo("packaging/jobboard.service")).unwrap();
    let lines: Vec<&str> = unit.lines().map(str::trim).collect();
    for want in [
        "ExecStart=/usr/bin/jobboard --config /etc/jobboard/jobboard.toml serve",
        "User=jobboard",
        "StateDirectory=jobboard",
        "ReadWritePaths=/var/lib/jobboard",
        "NoNewPrivileges=yes",
        "ProtectSystem=strict",
        "ProtectHome=yes",
        "CapabilityBoundingSet=",
    ] {
        assert!(lines.contains(&want), "the unit has `{want}`");
    }
}
