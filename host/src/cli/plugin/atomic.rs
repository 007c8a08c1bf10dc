//! Files `plugin install` writes (components, signatures, the lock) replace what was there in
//! one step.

use std::path::{Path, PathBuf};

/// Writes `bytes` to a temporary file beside `path` and renames it over `path`: a reader (the
/// server's plugin watcher) sees the old file or the new one, never half of one.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), String> {
    use std::io::Write as _;
    let folder: PathBuf = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let failed = |error: std::io::Error| format!("Cannot write {}: {error}", path.display());
    let mut file = tempfile::Builder::new()
        .prefix(".devtools-mcp-")
        .suffix(".partial")
        .tempfile_in(&folder)
        .map_err(failed)?;
    file.write_all(bytes).map_err(failed)?;
    file.as_file().sync_all().map_err(failed)?;
    file.persist(path).map_err(|error| failed(error.error))?;
    Ok(())
}
