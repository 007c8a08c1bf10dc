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
/// browser context, but the OS cannot tell which; each tenant's own cap holds through the
/// DevTools measurement of its pages), plus [`RENDERER_BASELINE`].
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
fn private_bytes(pid: u32) -> Option<u64> {
    if !is_renderer(pid) {
        return None;
    }
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    Some(private_from_status(&status))
}

/// Whether `pid` is a Chromium renderer. A renderer forked by the zygote rewrites its
/// command line as one string of space-separated arguments.
fn is_renderer(pid: u32) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|cmdline| {
            cmdline
                .split(|byte| *byte == 0 || *byte == b' ')
                .any(|argument| argument == b"--type=renderer")
        })
        .unwrap_or(false)
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
    fn only_chromium_renderers_are_read_or_ended() {
        let own = std::process::id();
        assert!(!is_renderer(own), "the test runner is no renderer");
        assert_eq!(private_bytes(own), None);
        assert!(!end(own));
        assert!(!end(0));
    }
}
