//! Linux-only code stays where docs/porting.md says it is: every file of the server that calls
//! something only Linux has is listed there with the reason, and every file listed still does,
//! so a port is a visible list, not a search.

use std::path::{Path, PathBuf};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
/// What only Linux (or only this build's Linux setup) provides.
const LINUX_ONLY: [&str; 8] = [
    "\"/proc/",
    "/proc/self",
    "memfd",
    "unshare",
    "prctl",
    "pidfd",
    "libc::",
    "rustix::",
];

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("source folder").flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            found.push(path);
        }
    }
}

/// The code of a file without its `#[cfg(test)]` module (tests may read `/proc` freely).
fn production_code(text: &str) -> &str {
    text.split("#[cfg(test)]\nmod tests").next().unwrap_or(text)
}

#[test]
fn every_linux_only_call_is_listed_in_docs_porting_md() {
    let doc = std::fs::read_to_string(format!("{ROOT}/docs/porting.md")).expect("docs/porting.md");
    let mut files = Vec::new();
    for dir in ["host/src", "server/src"] {
        rust_files(&Path::new(ROOT).join(dir), &mut files);
    }
    let mut unlisted = Vec::new();
    let mut linux_only = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("source");
        let code = production_code(&text);
        let relative = file
            .strip_prefix(ROOT)
            .expect("under the root")
            .to_string_lossy()
            .into_owned();
        if LINUX_ONLY.iter().any(|needle| code.contains(needle)) {
            if !doc.contains(&format!("`{relative}`")) {
                unlisted.push(relative.clone());
            }
            linux_only.push(relative);
        }
    }
    assert!(
        unlisted.is_empty(),
        "Linux-only calls in files docs/porting.md does not list (add a row with the reason): {unlisted:?}"
    );
    let stale: Vec<&str> = doc
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|rest| rest.split('`').next())
        .filter(|listed| !linux_only.iter().any(|file| file == listed))
        .collect();
    assert!(
        stale.is_empty(),
        "docs/porting.md lists files with no Linux-only call left (remove their rows): {stale:?}"
    );
    assert!(linux_only.len() >= 5, "the scan found {linux_only:?}");
}
