//! Files the host writes to the temp dir (a fresh private folder each).

use std::fs;
use std::io::Write;
use std::path::PathBuf;

/// `saveTemporaryFile`: a fresh `chrome-devtools-mcp-XXXXXX` directory under the OS temp dir,
/// the file created new and owner-only, so no planted file or link is followed. Errors read
/// like the reference's `Could not write <path>` with its cause.
pub fn save_temporary_file(bytes: &[u8], filename: &str) -> Result<PathBuf, String> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let directory = tempfile::Builder::new()
        .prefix("chrome-devtools-mcp-")
        .rand_bytes(6)
        .tempdir()
        .map_err(|error| format!("Could not create a temporary directory\nCause: {error}"))?
        .keep();
    let path = directory.join(filename);
    let written = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .and_then(|mut file| file.write_all(bytes));
    written.map_err(|error| format!("Could not write {}\nCause: {error}", path.display()))?;
    Ok(path)
}
