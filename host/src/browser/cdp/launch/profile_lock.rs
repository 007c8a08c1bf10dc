//! Whether a Chromium already runs on a profile, read from its `SingletonLock` as Chromium
//! reads it: a symlink (not a file) whose target, `<hostname>-<pid>`, never exists, so
//! `Path::exists`, which follows it, always says no. A second browser on the profile then dies
//! with `zygote ... Broken pipe`; this lets the server say what 1.11.0 says instead. As in
//! Chromium, a lock left by a process that is gone (a crash) holds nothing.

use std::path::Path;

/// Whether the lock in `profile_dir` is held: by a live process of this host, or by another
/// host (Chromium refuses a profile in use on another computer too).
pub fn in_use(profile_dir: &Path) -> bool {
    let Ok(target) = std::fs::read_link(profile_dir.join("SingletonLock")) else {
        // No lock, or a plain file (not Chromium's): nothing to go by.
        return false;
    };
    let target = target.to_string_lossy();
    let Some((host, pid)) = target.rsplit_once('-') else {
        return true;
    };
    let Ok(pid) = pid.parse::<i32>() else {
        return true;
    };
    match this_host() {
        Some(this) if this == host => alive(pid),
        // Another host's lock, or a host name this system does not tell.
        _ => true,
    }
}

/// The host name Chromium writes into its lock: the kernel's (Linux-only: `/proc`; elsewhere
/// unknown, and every lock counts as held).
fn this_host() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|name| name.trim().to_string())
}

/// Whether process `pid` exists (signal 0; one of another user exists too).
fn alive(pid: i32) -> bool {
    let Some(pid) = rustix::process::Pid::from_raw(pid) else {
        return false;
    };
    match rustix::process::test_kill_process(pid) {
        Ok(()) => true,
        Err(error) => error == rustix::io::Errno::PERM,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lock(target: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("temp dir");
        std::os::unix::fs::symlink(target, dir.path().join("SingletonLock")).expect("symlink");
        dir
    }

    #[test]
    fn a_lock_of_a_live_process_of_this_host_holds_the_profile() {
        let host = this_host().expect("a Linux host name");
        let held = lock(&format!("{host}-{}", std::process::id()));
        assert!(in_use(held.path()), "our own pid is alive");
        // The symlink's target does not exist: what `exists()` (the old check) missed.
        assert!(!held.path().join("SingletonLock").exists());
    }

    #[test]
    fn a_stale_lock_or_none_leaves_the_profile_free() {
        let host = this_host().expect("a Linux host name");
        // Above the largest pid Linux hands out (pid_max is at most 2^22).
        let stale = lock(&format!("{host}-2147483646"));
        assert!(!in_use(stale.path()));
        let empty = tempfile::tempdir().expect("temp dir");
        assert!(!in_use(empty.path()));
    }

    #[test]
    fn another_hosts_lock_holds_the_profile() {
        let other = lock(&format!("not-{}-1", this_host().unwrap_or_default()));
        assert!(in_use(other.path()));
    }
}
