//! Which server instance holds a tenant's browser state, recorded in the tenant's sandbox root.
//! Behind a load balancer the roots are on shared storage: when an instance dies (killed,
//! rescheduled, drained) its tenants move to another instance, which finds a lease it did not
//! write and tells the tenant, in its first answer, that its pages are gone while its files
//! are not. A tenant closed as idle releases its lease: losing its pages then is the
//! documented idle timeout, not a fault.

use std::io::Read;
use std::path::Path;
use std::sync::OnceLock;

/// The lease's file name in the sandbox root.
pub const LEASE_FILE: &str = ".devtools-mcp-lease";
/// A lease is an instance id; anything longer is not one of ours.
const MAX_LEASE_BYTES: u64 = 128;

/// The note of the first answer after a move.
pub const STATE_LOST: &str = "This tenant's browser state (its pages, cookies and storage) was lost: the server instance that held it stopped. Files in its sandbox root are kept. Call list_pages to see open pages.";

/// This process's id: random, so that two instances never share one (pids repeat across
/// containers).
fn instance_id() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/kernel/random/uuid")
            .map(|uuid| uuid.trim().to_owned())
            .unwrap_or_else(|_| {
                let nanos = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|since| since.as_nanos())
                    .unwrap_or_default();
                format!("{}-{nanos}", std::process::id())
            })
    })
}

/// Takes the tenant's lease for this instance. True when another instance held it and never
/// released it: the tenant's browser state was lost with that instance.
pub fn claim(root: &Path) -> bool {
    let path = root.join(LEASE_FILE);
    let previous = read_lease(&path);
    let ours = instance_id();
    if previous.as_deref() != Some(ours) {
        // A temporary name renamed over the lease: a reader never sees half an id, and a
        // symlink planted at the lease's name is replaced, never followed. The temporary file
        // is created anew (`O_EXCL`), so a symlink planted at its name is not followed either.
        let temporary = root.join(format!("{LEASE_FILE}.{}", std::process::id()));
        let _stale = std::fs::remove_file(&temporary);
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary)
            .and_then(|mut file| std::io::Write::write_all(&mut file, ours.as_bytes()))
            .and_then(|()| std::fs::rename(&temporary, &path));
        if let Err(error) = written {
            let _removed = std::fs::remove_file(&temporary);
            tracing::warn!(%error, root = %root.display(), "cannot record the tenant's lease");
        }
    }
    previous.is_some_and(|previous| previous != ours)
}

/// Gives the lease up, if it is still ours.
pub fn release(root: &Path) {
    let path = root.join(LEASE_FILE);
    if read_lease(&path).as_deref() == Some(instance_id()) {
        let _removed = std::fs::remove_file(&path);
    }
}

/// The lease's id, when the file is a regular file of a plausible size.
fn read_lease(path: &Path) -> Option<String> {
    let metadata = std::fs::symlink_metadata(path).ok()?;
    if !metadata.is_file() || metadata.len() > MAX_LEASE_BYTES {
        return None;
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(MAX_LEASE_BYTES)
        .read_to_string(&mut text)
        .ok()?;
    Some(text.trim().to_owned()).filter(|id| !id.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_of_another_instance_is_reported_once_and_ours_is_released() {
        let root = tempfile::tempdir().expect("temp dir");
        assert!(!claim(root.path()), "no lease yet");
        assert!(!claim(root.path()), "our own lease");
        std::fs::write(root.path().join(LEASE_FILE), "another-instance").expect("write");
        assert!(claim(root.path()), "another instance's lease");
        assert!(!claim(root.path()), "ours again");
        release(root.path());
        assert!(!root.path().join(LEASE_FILE).exists());
        // Another instance's lease is not ours to release.
        std::fs::write(root.path().join(LEASE_FILE), "another-instance").expect("write");
        release(root.path());
        assert!(root.path().join(LEASE_FILE).exists());
    }

    #[test]
    fn a_symlink_at_the_temporary_name_is_not_written_through() {
        let root = tempfile::tempdir().expect("temp dir");
        let outside = tempfile::tempdir().expect("temp dir");
        let target = outside.path().join("precious");
        std::fs::write(&target, "keep me").expect("write");
        let temporary = root
            .path()
            .join(format!("{LEASE_FILE}.{}", std::process::id()));
        std::os::unix::fs::symlink(&target, &temporary).expect("symlink");
        assert!(!claim(root.path()));
        assert_eq!(std::fs::read_to_string(&target).expect("read"), "keep me");
        assert!(read_lease(&root.path().join(LEASE_FILE)).is_some());
    }

    #[test]
    fn a_symlink_at_the_lease_is_replaced_not_followed() {
        let root = tempfile::tempdir().expect("temp dir");
        let outside = tempfile::tempdir().expect("temp dir");
        let target = outside.path().join("precious");
        std::fs::write(&target, "keep me").expect("write");
        std::os::unix::fs::symlink(&target, root.path().join(LEASE_FILE)).expect("symlink");
        assert!(!claim(root.path()), "a symlink is no lease");
        assert_eq!(std::fs::read_to_string(&target).expect("read"), "keep me");
        assert!(
            std::fs::symlink_metadata(root.path().join(LEASE_FILE))
                .expect("lease")
                .is_file()
        );
    }
}
