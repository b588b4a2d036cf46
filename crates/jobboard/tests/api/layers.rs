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

/// The Rust files under `dir`, recursively.
fn rust_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The most lines a source file of the workspace has, tests included: past it, a file
/// holds more than one thing and is split.
const MAX_LINES: usize = 650;

#[test]
fn no_source_file_is_over_the_line_limit() {
    let root = workspace_root();
    let mut files = Vec::new();
    rust_files(&root.join("crates"), &mut files);
    assert!(files.len() > 100, "the workspace's files are found");
    let mut long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let n = std::fs::read_to_string(f).unwrap().lines().count();
            let name = f.strip_prefix(&root).unwrap_or(f).display().to_string();
            (n > MAX_LINES).then(|| format!("{name} ({n} lines)"))
        })
        .collect();
    long.sort();
    assert!(long.is_empty(), "over {MAX_LINES} lines: {long:?}");
}
