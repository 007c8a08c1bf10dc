//! The compiled-code folder kept to a size. Every edit of a TypeScript or Python tool is a new
//! component, and each leaves about 40 MB of compiled code (and its functions pack): without a
//! bound, an author's folder grew past 4 GB in a day. Entries are used least recently first
//! out (a hit refreshes its entry's time), and only compiled code and packs are ever removed,
//! never the key or the remembered definitions. Removing an entry is always safe: an entry is
//! read into memory before it is used, and a missing one is compiled again.

use std::fs;
use std::path::Path;
use std::time::SystemTime;

/// The folder's compiled code and packs are kept under this many bytes.
pub const MAX_FOLDER_BYTES: u64 = 2 << 30;

/// Whether `name` is an entry pruning may remove.
fn prunable(name: &str) -> bool {
    name.ends_with(".cwasm") || (name.starts_with("functions-") && name.ends_with(".pack"))
}

/// How stale an entry's time may get before a use refreshes it: an hour's precision is
/// plenty to order entries by use, and a start that loads everything from the cache writes
/// nothing.
const TOUCH_AFTER: std::time::Duration = std::time::Duration::from_secs(3600);

/// Marks an entry as used now (unless it was within the hour), so pruning keeps it over
/// entries unused for longer.
pub fn touch(path: &Path) {
    let now = SystemTime::now();
    let stale = fs::metadata(path)
        .and_then(|metadata| metadata.modified())
        .is_ok_and(|modified| now.duration_since(modified).unwrap_or_default() > TOUCH_AFTER);
    if !stale {
        return;
    }
    if let Ok(file) = fs::OpenOptions::new().append(true).open(path) {
        let _ignored = file.set_modified(now);
    }
}

/// Removes the least recently used entries until the folder's entries fit in `budget` bytes.
pub fn prune(dir: &Path, budget: u64) {
    let Ok(listing) = fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<(SystemTime, u64, std::path::PathBuf)> = listing
        .flatten()
        .filter(|entry| entry.file_name().to_str().is_some_and(prunable))
        .filter_map(|entry| {
            let metadata = entry.metadata().ok().filter(fs::Metadata::is_file)?;
            Some((metadata.modified().ok()?, metadata.len(), entry.path()))
        })
        .collect();
    let mut total: u64 = entries.iter().map(|(_, len, _)| len).sum();
    // Oldest first.
    entries.sort();
    for (_, len, path) in entries {
        if total <= budget {
            break;
        }
        match fs::remove_file(&path) {
            Ok(()) => {
                total -= len;
                tracing::debug!(path = %path.display(), "pruned a compiled-code cache entry");
            }
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "cannot prune a compiled-code cache entry")
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_least_recently_used_entries_go_first_and_nothing_else_ever_does() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, age_secs: u64| {
            let path = dir.path().join(name);
            fs::write(&path, vec![0u8; 100]).unwrap();
            let file = fs::OpenOptions::new().append(true).open(&path).unwrap();
            file.set_modified(SystemTime::now() - Duration::from_secs(age_secs))
                .unwrap();
            path
        };
        let oldest = write("a-1.cwasm", 30_000);
        let used_again = write("b-1.cwasm", 20_000);
        let pack = write("functions-c.pack", 10_000);
        let record = write("definitions-1.record", 100_000);
        touch(&used_again);
        prune(dir.path(), 200);
        assert!(!oldest.exists(), "the least recently used entry goes");
        assert!(used_again.exists() && pack.exists());
        assert!(record.exists(), "only compiled code and packs are pruned");
        prune(dir.path(), 100);
        assert!(!pack.exists() && used_again.exists());
        // A use within the hour writes nothing.
        let recent = write("d-1.cwasm", 60);
        let before = fs::metadata(&recent).unwrap().modified().unwrap();
        touch(&recent);
        assert_eq!(fs::metadata(&recent).unwrap().modified().unwrap(), before);
    }
}
