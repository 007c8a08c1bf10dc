//! What one call of a tool may consume: the budget a policy grants (flags, the plugin policy
//! file, a tenant's quotas), and the bounds any grant must stay within.

use std::time::Duration;

/// The per-call budget of a tool. Defaults fit the built-in tools many times over: the
/// heaviest (take_snapshot's formatting happens in the host) use a few million fuel units and
/// a few MiB of memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock time of the whole call, host work (navigation, waits) included.
    pub wall_clock: Duration,
    /// Guest CPU, in wasmtime fuel units.
    pub fuel: u64,
    /// Linear memory the instance may grow to, in bytes.
    pub memory_bytes: usize,
    /// Total bytes the handler may declare (lines, images, files, messages).
    pub output_bytes: usize,
    /// Response lines the handler may declare.
    pub output_lines: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            wall_clock: Duration::from_secs(120),
            fuel: 500_000_000,
            memory_bytes: 64 << 20,
            output_bytes: 32 << 20,
            output_lines: 10_000,
        }
    }
}

impl Limits {
    /// The tighter of two budgets, limit by limit (a tenant's quota over a plugin's grant).
    pub fn min(self, other: Limits) -> Limits {
        Limits {
            wall_clock: self.wall_clock.min(other.wall_clock),
            fuel: self.fuel.min(other.fuel),
            memory_bytes: self.memory_bytes.min(other.memory_bytes),
            output_bytes: self.output_bytes.min(other.output_bytes),
            output_lines: self.output_lines.min(other.output_lines),
        }
    }
}

/// The largest linear memory any policy may grant (the instance pool reserves this much address
/// space per memory slot).
pub const MAX_MEMORY_BYTES: usize = 1 << 30;

/// The longest wall-clock budget a flag or a policy may set: one day. Larger values would
/// overflow deadline arithmetic (`Instant + Duration`).
pub const MAX_WALL_CLOCK: Duration = Duration::from_secs(24 * 60 * 60);

/// The most response lines a policy may allow.
pub const MAX_OUTPUT_LINES: usize = 10_000_000;

/// The most images (attached or screenshots) one call may declare.
pub const MAX_IMAGES: usize = 64;

/// A wall-clock budget in seconds, range-checked: more than 0, at most [`MAX_WALL_CLOCK`].
pub fn wall_clock_from_secs(seconds: f64) -> Result<Duration, String> {
    if seconds.is_finite() && seconds > 0.0 && seconds <= MAX_WALL_CLOCK.as_secs_f64() {
        // At least a millisecond, so that a tiny value is still a usable budget.
        Ok(Duration::from_secs_f64(seconds).max(Duration::from_millis(1)))
    } else {
        Err(format!(
            "must be a number of seconds above 0 and at most {} (one day), got {seconds}",
            MAX_WALL_CLOCK.as_secs()
        ))
    }
}
