//! What the renderer processes of a browser this server launched hold, as the OS counts it:
//! the private memory each has resident or swapped (`RssAnon` + `VmSwap`), which includes
//! what no DevTools measurement shows (Wasm memories, allocator slack, a thread too busy to
//! answer). The browser names its renderers (`SystemInfo.getProcessInfo`); a process is read
//! only if it is a local Chromium renderer, since an attached browser's process ids are
//! another machine's.

use super::CdpError;
use super::raw::RawClient;
use serde_json::json;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// What a renderer holds besides what its pages' scripts can measure (its DOM, layout,
/// decoded images, code): the ceiling is the page cap plus this.
pub const RENDERER_BASELINE: u64 = 128 << 20;
/// How long an ended renderer explains a crashed page in the notes.
const ENDED_EXPLAINS: Duration = Duration::from_secs(30);

/// The most a renderer process of one browser may hold before it is ended: its session's
/// page cap, or in a browser shared by tenants the largest of theirs (a process serves one
/// browser context, but the OS cannot tell which; each tenant's own cap holds through its
/// footprint, `features::footprint`), plus [`RENDERER_BASELINE`].
#[derive(Debug, Default)]
pub struct RendererCeiling {
    cap: AtomicU64,
    /// The last renderer ended: when, and what it held.
    ended: Mutex<Option<(Instant, u64)>>,
}

impl RendererCeiling {
    /// Makes room for a session whose pages may hold `cap` bytes.
    pub fn raise(&self, cap: u64) {
        self.cap.fetch_max(cap, Ordering::Relaxed);
    }

    /// The ceiling in bytes; `None` before any session set a cap.
    pub fn bytes(&self) -> Option<u64> {
        match self.cap.load(Ordering::Relaxed) {
            0 => None,
            cap => Some(cap.saturating_add(RENDERER_BASELINE)),
        }
    }

    /// Ends every renderer of the browser over the ceiling.
    pub async fn enforce(&self, raw: &RawClient, timeout: Duration) {
        let Some(ceiling) = self.bytes() else { return };
        let Ok(renderers) = renderers(raw, timeout).await else {
            return;
        };
        for renderer in renderers {
            if renderer.private_bytes > ceiling && end(renderer.pid) {
                tracing::warn!(
                    pid = renderer.pid,
                    mib = renderer.private_bytes >> 20,
                    "ended a renderer over the memory ceiling"
                );
                if let Ok(mut ended) = self.ended.lock() {
                    *ended = Some((Instant::now(), renderer.private_bytes));
                }
            }
        }
    }

    /// What the renderer ended last held, if that was recent enough to explain a crash.
    pub fn recently_ended(&self) -> Option<u64> {
        let ended = *self.ended.lock().ok()?;
        ended
            .filter(|(at, _)| at.elapsed() < ENDED_EXPLAINS)
            .map(|(_, bytes)| bytes)
    }
}

/// One renderer process and what it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Renderer {
    pub pid: u32,
    pub private_bytes: u64,
}

/// The browser's renderer processes that can be read here.
pub async fn renderers(raw: &RawClient, timeout: Duration) -> Result<Vec<Renderer>, CdpError> {
    let info = raw
        .call(None, "SystemInfo.getProcessInfo", json!({}), timeout)
        .await?
        .result()?;
    let pids = info["processInfo"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|process| process["type"] == "renderer")
        .filter_map(|process| process["id"].as_u64())
        .filter_map(|pid| u32::try_from(pid).ok());
    Ok(pids
        .filter_map(|pid| private_bytes(pid).map(|private_bytes| Renderer { pid, private_bytes }))
        .collect())
}

/// The browser's renderer processes that serve web content and can be read here (the
/// browser's own UI renderers, `--top-chrome-webui`, serve no tenant).
pub async fn content_renderer_pids(
    raw: &RawClient,
    timeout: Duration,
) -> Result<Vec<u32>, CdpError> {
    let info = raw
        .call(None, "SystemInfo.getProcessInfo", json!({}), timeout)
        .await?
        .result()?;
    Ok(info["processInfo"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|process| process["type"] == "renderer")
        .filter_map(|process| u32::try_from(process["id"].as_u64()?).ok())
        .filter(|pid| command_line(*pid).is_some_and(|line| is_content_renderer(&line)))
        .collect())
}

/// `/proc` counts CPU time in `USER_HZ` ticks, 100 a second on every Linux architecture
/// Chromium runs on.
pub const TICKS_PER_SECOND: u64 = 100;

/// CPU time a process used so far, in ticks (`utime` + `stime` of `/proc/PID/stat`).
pub fn cpu_ticks(pid: u32) -> Option<u64> {
    stat_cpu_ticks(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// When the process started (ticks since boot): with its pid, it names one process for good.
pub fn start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat_field(&stat, 22)?.parse().ok()
}

/// One thread of a renderer that runs a worker, and the CPU time it used so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerThread {
    pub tid: u32,
    /// `SharedWorker`, `DedicatedWorker` or `ServiceWorker`: what Blink names the thread.
    pub kind: &'static str,
    pub cpu_ticks: u64,
}

/// The worker threads of a renderer process.
pub fn worker_threads(pid: u32) -> Vec<WorkerThread> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return vec![];
    };
    tasks
        .flatten()
        .filter_map(|task| {
            let tid: u32 = task.file_name().to_str()?.parse().ok()?;
            let name = std::fs::read_to_string(task.path().join("comm")).ok()?;
            let kind = worker_kind(name.trim())?;
            let stat = std::fs::read_to_string(task.path().join("stat")).ok()?;
            Some(WorkerThread {
                tid,
                kind,
                cpu_ticks: stat_cpu_ticks(&stat)?,
            })
        })
        .collect()
}

/// The worker a thread runs, by the name Blink gives it (cut to 15 bytes by the kernel).
fn worker_kind(thread_name: &str) -> Option<&'static str> {
    ["SharedWorker", "DedicatedWorker", "ServiceWorker"]
        .into_iter()
        .find(|kind| thread_name.starts_with(kind))
}

/// Field `number` (1-based, as `proc(5)` counts) of a `stat` line; the name in parentheses
/// may hold spaces and parentheses, so fields are counted after its last `)`.
fn stat_field(stat: &str, number: usize) -> Option<&str> {
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(number.checked_sub(3)?)
}

fn stat_cpu_ticks(stat: &str) -> Option<u64> {
    let user: u64 = stat_field(stat, 14)?.parse().ok()?;
    let system: u64 = stat_field(stat, 15)?.parse().ok()?;
    Some(user + system)
}

/// Ends a renderer at once (`SIGKILL`): the browser shows its pages as crashed, and no
/// other browser context's page is in the same process.
pub fn end(pid: u32) -> bool {
    let Some(pid) = rustix::process::Pid::from_raw(pid as i32) else {
        return false;
    };
    is_renderer(pid.as_raw_pid() as u32)
        && rustix::process::kill_process(pid, rustix::process::Signal::KILL).is_ok()
}

/// `RssAnon` + `VmSwap` of a local Chromium renderer, in bytes.
pub fn private_bytes(pid: u32) -> Option<u64> {
    if !is_renderer(pid) {
        return None;
    }
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    Some(private_from_status(&status))
}

/// Whether `pid` is a Chromium renderer. A renderer forked by the zygote rewrites its
/// command line as one string of space-separated arguments.
fn is_renderer(pid: u32) -> bool {
    command_line(pid).is_some_and(|line| line.iter().any(|argument| argument == "--type=renderer"))
}

/// A renderer of web content, not of the browser's own UI.
fn is_content_renderer(line: &[String]) -> bool {
    line.iter().any(|argument| argument == "--type=renderer")
        && !line.iter().any(|argument| argument == "--top-chrome-webui")
}

fn command_line(pid: u32) -> Option<Vec<String>> {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    Some(
        cmdline
            .split(|byte| *byte == 0 || *byte == b' ')
            .map(|argument| String::from_utf8_lossy(argument).into_owned())
            .collect(),
    )
}

fn private_from_status(status: &str) -> u64 {
    status
        .lines()
        .filter_map(|line| {
            let (key, value) = line.split_once(':')?;
            matches!(key, "RssAnon" | "VmSwap").then_some(value)
        })
        .filter_map(|value| value.trim().strip_suffix("kB")?.trim().parse::<u64>().ok())
        .map(|kib| kib << 10)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_memory_is_anonymous_resident_plus_swapped() {
        let status = "Name:\tchromium\nVmRSS:\t  923288 kB\nRssAnon:\t  815312 kB\n\
                      RssFile:\t  100000 kB\nVmSwap:\t     100 kB\n";
        assert_eq!(private_from_status(status), (815_312 + 100) << 10);
        assert_eq!(private_from_status("Name:\tx\n"), 0);
    }

    #[test]
    fn the_ceiling_is_the_largest_cap_plus_a_baseline() {
        let ceiling = RendererCeiling::default();
        assert_eq!(ceiling.bytes(), None);
        ceiling.raise(64 << 20);
        ceiling.raise(32 << 20);
        assert_eq!(ceiling.bytes(), Some((64 << 20) + RENDERER_BASELINE));
        assert_eq!(ceiling.recently_ended(), None);
    }

    #[test]
    fn cpu_time_and_start_are_read_after_the_process_name() {
        let stat =
            "42 (a (weird) name) S 1 42 42 0 -1 4194560 100 0 0 0 250 31 0 0 20 0 9 0 777 0 0";
        assert_eq!(stat_cpu_ticks(stat), Some(281));
        assert_eq!(stat_field(stat, 20), Some("9"));
        assert_eq!(stat_field(stat, 22), Some("777"));
        let own = std::process::id();
        assert!(cpu_ticks(own).is_some() && start_ticks(own).is_some());
    }

    #[test]
    fn worker_threads_are_known_by_their_names_and_ui_renderers_serve_no_tenant() {
        assert_eq!(worker_kind("SharedWorker th"), Some("SharedWorker"));
        assert_eq!(worker_kind("DedicatedWorker"), Some("DedicatedWorker"));
        assert_eq!(worker_kind("ServiceWorker t"), Some("ServiceWorker"));
        assert_eq!(worker_kind("CrRendererMain"), None);
        let line = |text: &str| text.split(' ').map(String::from).collect::<Vec<_>>();
        assert!(is_content_renderer(&line(
            "chromium --type=renderer --lang=en"
        )));
        assert!(!is_content_renderer(&line(
            "chromium --type=renderer --top-chrome-webui"
        )));
        assert!(!is_content_renderer(&line("chromium --type=gpu-process")));
    }

    #[test]
    fn only_chromium_renderers_are_read_or_ended() {
        let own = std::process::id();
        assert!(!is_renderer(own), "the test runner is no renderer");
        assert_eq!(private_bytes(own), None);
        assert!(!end(own));
        assert!(!end(0));
    }
}
