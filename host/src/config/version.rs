//! `--version`: the release, the commit it was built from, the contract versions a plugin may
//! be built against, and the target, so a bug report or a plugin author's question names what
//! really runs: `devtools-mcp 0.1.0 (commit 9d725b8, contract devtools:tool@0.3.0 and 0.2.0,
//! x86_64-unknown-linux-gnu)`.

use std::sync::OnceLock;

/// What only the binary's build knows. The binary's own build script reads them (not this
/// library's, which would then be compiled again after every commit).
#[derive(Clone, Copy, Debug)]
pub struct BuildInfo {
    /// The short commit hash, or `unknown` outside a git checkout (a source tarball).
    pub commit: &'static str,
    /// The target triple, e.g. `x86_64-unknown-linux-gnu`.
    pub target: &'static str,
}

static LINE: OnceLock<String> = OnceLock::new();

/// Records the binary's build, for `--version`. Later calls change nothing.
pub fn set(build: BuildInfo) {
    let _first = LINE.set(line(build));
}

/// The version clap prints after the name, once the binary has said how it was built.
pub(super) fn current() -> Option<&'static str> {
    LINE.get().map(String::as_str)
}

/// `0.1.0 (commit 9d725b8, contract devtools:tool@0.3.0 and 0.2.0, x86_64-unknown-linux-gnu)`:
/// the contracts are those the loader links, newest first.
pub fn line(build: BuildInfo) -> String {
    let contracts: Vec<&str> = crate::runtime::CONTRACTS
        .iter()
        .rev()
        .map(|(version, _)| *version)
        .collect();
    let contracts = match contracts.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => "none".to_string(),
    };
    format!(
        "{} (commit {}, contract devtools:tool@{contracts}, {})",
        env!("CARGO_PKG_VERSION"),
        build.commit,
        build.target
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The contracts named are the `wit/since_vX.Y.Z` folders, newest first.
    #[test]
    fn the_line_names_every_contract_folder_newest_first() {
        let wit = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../wit");
        let mut folders: Vec<Vec<u64>> = std::fs::read_dir(&wit)
            .expect("the wit folder")
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                let version = name.strip_prefix("since_v")?.to_string();
                version.split('.').map(|part| part.parse().ok()).collect()
            })
            .collect();
        folders.sort();
        folders.reverse();
        let versions: Vec<String> = folders
            .iter()
            .map(|parts| {
                parts
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(".")
            })
            .collect();
        assert!(versions.len() >= 2, "{versions:?}");
        let (last, rest) = versions.split_last().expect("two versions");
        let listed = format!("{} and {last}", rest.join(", "));
        let line = line(BuildInfo {
            commit: "abc1234",
            target: "x86_64-unknown-linux-gnu",
        });
        assert_eq!(
            line,
            format!(
                "{} (commit abc1234, contract devtools:tool@{listed}, x86_64-unknown-linux-gnu)",
                env!("CARGO_PKG_VERSION")
            )
        );
    }
}
