//! ARCHITECTURE.md draws the crate graph; this holds the drawing to `cargo metadata`, so
//! the map cannot go stale: a crate added, removed or given a new dependency on another
//! workspace crate fails here until the map says so.

use std::{collections::BTreeMap, process::Command};

fn workspace_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Each workspace crate and the workspace crates it depends on (normal dependencies).
fn from_metadata() -> BTreeMap<String, Vec<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(workspace_root())
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let members: Vec<String> = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect();
    meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let mut deps: Vec<String> = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["kind"].is_null())
                .map(|d| d["name"].as_str().unwrap().to_string())
                .filter(|d| members.contains(d))
                .collect();
            deps.sort();
            (p["name"].as_str().unwrap().to_string(), deps)
        })
        .collect()
}

/// The graph between the markers of ARCHITECTURE.md, in its order (bottom up).
fn from_architecture() -> Vec<(String, Vec<String>)> {
    let text = std::fs::read_to_string(workspace_root().join("ARCHITECTURE.md")).unwrap();
    let start = text
        .find("<!-- crate graph:")
        .expect("ARCHITECTURE.md marks its crate graph");
    let end = text[start..].find("<!-- end of crate graph -->").unwrap() + start;
    text[start..end]
        .lines()
        .skip(1)
        .filter(|l| !l.starts_with("```"))
        .filter_map(|l| l.split_once("->"))
        .map(|(name, deps)| {
            let deps = deps
                .split(',')
                .map(str::trim)
                .filter(|d| !d.is_empty())
                .map(String::from)
                .collect();
            (name.trim().to_string(), deps)
        })
        .collect()
}

#[test]
fn the_architecture_map_is_the_crate_graph() {
    let drawn = from_architecture();
    let drawn_map: BTreeMap<String, Vec<String>> = drawn.iter().cloned().collect();
    assert_eq!(
        drawn_map,
        from_metadata(),
        "ARCHITECTURE.md's crate graph (left) differs from Cargo.toml's (right)"
    );
    // Drawn bottom up: every crate stands on crates drawn before it.
    for (i, (name, deps)) in drawn.iter().enumerate() {
        for d in deps {
            assert!(
                drawn[..i].iter().any(|(n, _)| n == d),
                "{name} depends on {d}, which is not drawn below it"
            );
        }
    }
}
