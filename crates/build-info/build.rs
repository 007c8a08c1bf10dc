//! Reads the commit (`git rev-parse`) and the target for `src/lib.rs`. Never fails the build:
//! without git, or outside a checkout, the commit is `unknown`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let commit = git(&dir, &["rev-parse", "--short=7", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=DEVTOOLS_MCP_COMMIT={commit}");
    let target = std::env::var("TARGET").unwrap_or_else(|_| "unknown".into());
    println!("cargo:rustc-env=DEVTOOLS_MCP_TARGET={target}");
    println!("cargo:rerun-if-changed=build.rs");
    // Run again when HEAD moves: a checkout changes HEAD, a commit the branch it names (a
    // loose ref, or `packed-refs` after `git gc`). Only files that exist: cargo runs a build
    // script whose watched file is missing at every build.
    let mut watched = vec!["HEAD".to_string(), "packed-refs".to_string()];
    watched.extend(git(&dir, &["symbolic-ref", "-q", "HEAD"]));
    for name in watched {
        let Some(path) = git(&dir, &["rev-parse", "--git-path", &name]) else {
            continue;
        };
        let path = dir.join(path);
        if path.exists() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
}

/// The trimmed output of `git args` run in `dir`, if git ran and succeeded.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    let text = String::from_utf8(output.stdout).ok()?.trim().to_string();
    (output.status.success() && !text.is_empty()).then_some(text)
}
