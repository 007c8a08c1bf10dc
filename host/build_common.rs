//! What both build scripts need (this package's, and ../server's, which builds the built-in
//! tools against the contract): the newest contract folder, file listings, and reads and
//! writes that fail the build with the path.

use std::path::{Path, PathBuf};

/// The newest contract folder, `wit/since_vX.Y.Z` with the highest version: the one the host
/// implements natively and the SDK carries. Older folders are released contracts, frozen.
pub fn newest_contract(wit: &Path) -> PathBuf {
    let version = |name: &str| -> Option<Vec<u64>> {
        name.strip_prefix("since_v")?
            .split('.')
            .map(|part| part.parse().ok())
            .collect()
    };
    let newest = std::fs::read_dir(wit)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|entry| {
                    let name = entry.file_name().to_string_lossy().into_owned();
                    Some((version(&name)?, entry.path()))
                })
                .max()
        })
        .ok()
        .flatten();
    match newest {
        Some((_, path)) => path,
        None => panic!("no wit/since_vX.Y.Z folder in {}", wit.display()),
    }
}

/// The names of the files in `dir` that end with `suffix`, sorted (none if `dir` is missing).
pub fn names_ending(dir: &Path, suffix: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .filter(|name| name.ends_with(suffix))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The file's bytes; a missing or unreadable file fails the build with its path.
pub fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()))
}

/// Writes only when the content changed, so an unchanged tool does not relink the binary.
pub fn write(path: &Path, bytes: &[u8]) {
    if std::fs::read(path).is_ok_and(|existing| existing == bytes) {
        return;
    }
    if let Err(error) = std::fs::write(path, bytes) {
        panic!("cannot write {}: {error}", path.display());
    }
}
