//! What a long run is judged by, read from `/proc`: the server's resident memory, descriptors
//! and threads, and the browser processes under it with their proportional memory.

use crate::server::descendants;

/// One reading of the server and its browser.
#[derive(Clone, Debug, Default)]
pub struct Sample {
    /// Calls answered when the sample was taken.
    pub calls: usize,
    /// The server's `VmRSS`, in bytes.
    pub server_rss: u64,
    /// Entries of `/proc/<pid>/fd`.
    pub descriptors: usize,
    /// Entries of `/proc/<pid>/task`.
    pub threads: usize,
    /// Live processes descending from the server (Chromium's browser, renderers, GPU, utility).
    pub browser_processes: usize,
    /// Their summed `Pss` (shared pages split between the processes that map them), in bytes.
    pub browser_pss: u64,
    /// The processes by Chromium's `--type=` (`renderer 3, utility 2, ...`; `browser` for the
    /// one without), to tell a leaked renderer from a service started late.
    pub kinds: String,
    /// Of those, renderers: a page's process, the one a page left open would leak.
    pub renderers: usize,
}

impl Sample {
    /// Reads the server `pid` and its descendants now.
    pub fn take(pid: u32, calls: usize) -> Sample {
        let children = descendants(pid);
        Sample {
            calls,
            server_rss: status_kib(pid, "VmRSS:").unwrap_or(0) * 1024,
            descriptors: entries(&format!("/proc/{pid}/fd")),
            threads: entries(&format!("/proc/{pid}/task")),
            browser_processes: children.len(),
            browser_pss: children.iter().filter_map(|&child| pss(child)).sum(),
            kinds: kinds(&children),
            renderers: children
                .iter()
                .filter(|&&child| kind_of(child).as_deref() == Some("renderer"))
                .count(),
        }
    }
}

fn kinds(pids: &[u32]) -> String {
    let mut counts: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    for kind in pids.iter().filter_map(|&pid| kind_of(pid)) {
        *counts.entry(kind).or_default() += 1;
    }
    counts
        .iter()
        .map(|(kind, count)| format!("{kind} {count}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Chromium's `--type=` of a process (`browser` for the one without).
fn kind_of(pid: u32) -> Option<String> {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    // Chromium rewrites the title of the processes its zygote forks: their arguments are
    // then one string joined by spaces rather than NULs.
    Some(
        cmdline
            .split(|&byte| byte == 0 || byte == b' ')
            .find_map(|arg| arg.strip_prefix(b"--type="))
            .map_or_else(
                || "browser".to_owned(),
                |kind| String::from_utf8_lossy(kind).into_owned(),
            ),
    )
}

fn entries(folder: &str) -> usize {
    std::fs::read_dir(folder).map_or(0, |entries| entries.count())
}

/// A `kB` field of `/proc/<pid>/status`.
fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// `Pss` of `/proc/<pid>/smaps_rollup` in bytes, else its `VmRSS` (an older kernel, or a
/// process we may not read the maps of).
fn pss(pid: u32) -> Option<u64> {
    let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok();
    let from_rollup = rollup.as_deref().and_then(|text| {
        let line = text.lines().find(|line| line.starts_with("Pss:"))?;
        line.split_whitespace().nth(1)?.parse::<u64>().ok()
    });
    from_rollup
        .or_else(|| status_kib(pid, "VmRSS:"))
        .map(|kib| kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_read() {
        let sample = Sample::take(std::process::id(), 7);
        assert_eq!(sample.calls, 7);
        assert!(sample.server_rss > 0);
        assert!(sample.descriptors >= 3, "{sample:?}");
        assert!(sample.threads >= 1, "{sample:?}");
    }
}
