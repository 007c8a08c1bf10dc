//! What one ramp step costs the machine, read from `/proc`: the servers' resident memory, the
//! proportional memory (PSS) of every process under them (the browsers: their renderers,
//! GPU and utility processes), and the CPU time of the whole tree.
//!
//! PSS rather than RSS for the browser tree: Chromium's processes share most of their pages
//! (the binary, fonts, shared memory), so summing RSS counts those once per process and
//! overstates what another agent costs; PSS splits each shared page among its sharers.

use std::time::{Duration, Instant};

use crate::server::descendants;

/// One reading of a target's processes.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sample {
    /// Resident memory of the server processes themselves, in bytes.
    pub server_rss: u64,
    /// PSS of the server processes, in bytes (what they add to the machine's total).
    pub server_pss: u64,
    /// PSS summed over every descendant of the servers, in bytes.
    pub browser_pss: u64,
    /// Processes under the servers.
    pub browser_processes: usize,
}

impl Sample {
    pub fn total_pss(&self) -> u64 {
        self.server_pss + self.browser_pss
    }
}

/// Reads the servers `pids` and their descendants now.
pub fn sample(pids: &[u32]) -> Sample {
    let mut sample = Sample::default();
    for &pid in pids {
        sample.server_rss += status_kib(pid, "VmRSS:").unwrap_or(0) * 1024;
        sample.server_pss += pss_kib(pid).unwrap_or(0) * 1024;
        for child in descendants(pid) {
            if let Some(kib) = pss_kib(child) {
                sample.browser_pss += kib * 1024;
                sample.browser_processes += 1;
            }
        }
    }
    sample
}

/// The largest of each field over `samples` (the step's peak).
pub fn peak(samples: &[Sample]) -> Sample {
    samples.iter().fold(Sample::default(), |peak, s| Sample {
        server_rss: peak.server_rss.max(s.server_rss),
        server_pss: peak.server_pss.max(s.server_pss),
        browser_pss: peak.browser_pss.max(s.browser_pss),
        browser_processes: peak.browser_processes.max(s.browser_processes),
    })
}

fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// `Pss:` of `/proc/PID/smaps_rollup` (one line per process, cheaper than `smaps`).
fn pss_kib(pid: u32) -> Option<u64> {
    let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
    let line = rollup.lines().find(|l| l.starts_with("Pss:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// CPU time of a process tree: utime + stime of the servers and every descendant alive at
/// each reading. A renderer that exits between two readings takes its time with it (its
/// parent only collects it when it reaps it), so this slightly undercounts churn.
pub struct CpuClock {
    started: Instant,
    ticks: std::collections::HashMap<u32, u64>,
    first: std::collections::HashMap<u32, u64>,
}

/// Clock ticks per second of `/proc/PID/stat`'s times (`getconf CLK_TCK`, 100 on Linux).
const TICKS_PER_SECOND: f64 = 100.0;

impl CpuClock {
    pub fn start(pids: &[u32]) -> CpuClock {
        let first = tree_ticks(pids);
        CpuClock {
            started: Instant::now(),
            ticks: first.clone(),
            first,
        }
    }

    /// Reads the tree again, keeping each process's latest time.
    pub fn update(&mut self, pids: &[u32]) {
        self.ticks.extend(tree_ticks(pids));
    }

    /// Average cores busy since `start`: CPU seconds over wall seconds.
    pub fn cores(&self) -> f64 {
        let used: u64 = self
            .ticks
            .iter()
            .map(|(pid, ticks)| ticks.saturating_sub(*self.first.get(pid).unwrap_or(&0)))
            .sum();
        let wall = self.started.elapsed().max(Duration::from_millis(1));
        used as f64 / TICKS_PER_SECOND / wall.as_secs_f64()
    }
}

fn tree_ticks(pids: &[u32]) -> std::collections::HashMap<u32, u64> {
    let mut all: Vec<u32> = pids.to_vec();
    for &pid in pids {
        all.extend(descendants(pid));
    }
    all.into_iter()
        .filter_map(|pid| Some((pid, ticks(pid)?)))
        .collect()
}

/// utime + stime of `/proc/PID/stat` (fields 14 and 15), read after the last `)`.
fn ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut fields = stat.get(stat.rfind(')')? + 1..)?.split_whitespace();
    // After `)`: state is field 3, so utime (14) is the 12th and stime (15) the 13th.
    let utime: u64 = fields.nth(11)?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(utime + stime)
}

/// The `percent`th percentile of `sorted` (nearest rank), zero when empty.
pub fn percentile(sorted: &[Duration], percent: usize) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = (sorted.len() * percent).div_ceil(100).max(1);
    sorted[rank.min(sorted.len()) - 1]
}

/// The machine's 1-minute load average, for the report (other work on the machine shows
/// there).
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .next()
        .unwrap_or("?")
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let ms =
            |v: &[u64]| -> Vec<Duration> { v.iter().map(|&m| Duration::from_millis(m)).collect() };
        let sorted = ms(&[10, 20, 30, 40, 50, 60, 70, 80, 90, 100]);
        assert_eq!(percentile(&sorted, 50), Duration::from_millis(50));
        assert_eq!(percentile(&sorted, 95), Duration::from_millis(100));
        assert_eq!(percentile(&ms(&[7]), 99), Duration::from_millis(7));
        assert_eq!(percentile(&[], 95), Duration::ZERO);
    }

    #[test]
    fn this_process_has_memory_and_cpu_time() {
        let me = std::process::id();
        let sample = sample(&[me]);
        assert!(sample.server_rss > 0 && sample.server_pss > 0, "{sample:?}");
        assert!(ticks(me).is_some());
    }
}
