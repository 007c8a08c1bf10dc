//! How the runtime holds a call to its limits (`policy::limits`), and the errors that say
//! which limit stopped it.
//!
//! CPU is counted in fuel (roughly one unit per wasm instruction), so a busy guest is stopped
//! however fast the machine is; the wall-clock budget covers everything else, host work
//! included. Memory is capped by a `ResourceLimiter` that remembers what it refused, so the
//! error can name the limit instead of a bare trap.

use crate::policy::limits::Limits;
use std::time::Duration;
use wasmtime::ResourceLimiter;

/// Fixed by the engine for every instance: wasm stack a call may use.
pub const MAX_WASM_STACK: usize = 1 << 20;

/// Which limit stopped a call. The text completes "The tool's plugin (...) was stopped: ".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitExceeded {
    #[error(
        "it used more than its CPU budget of {fuel} fuel units (raise it with --plugin-fuel or `fuel` in the plugin's policy)"
    )]
    Cpu { fuel: u64 },
    #[error(
        "it ran longer than its time budget of {} s (raise it with --plugin-timeout or `timeout_secs` in the plugin's policy)",
        .budget.as_secs_f64()
    )]
    WallClock { budget: Duration },
    #[error(
        "it tried to grow its memory to {:.1} MiB, over its limit of {:.1} MiB (raise it with --plugin-memory or `memory_mib` in the plugin's policy)",
        mib(*.requested), mib(*.limit)
    )]
    Memory { requested: usize, limit: usize },
    #[error("it exceeded the stack limit of {} KiB (too deep a recursion)", MAX_WASM_STACK >> 10)]
    Stack,
    #[error(
        "it declared more than {:.1} MiB of output (raise it with `output_mib` in the plugin's policy)",
        mib(*.limit)
    )]
    OutputBytes { limit: usize },
    #[error(
        "it declared more than {limit} response lines (raise it with `output_lines` in the plugin's policy)"
    )]
    OutputLines { limit: usize },
    #[error("it declared more than {limit} images")]
    Images { limit: usize },
}

#[allow(clippy::cast_precision_loss, reason = "a size shown to one decimal")]
fn mib(bytes: usize) -> f64 {
    bytes as f64 / f64::from(1 << 20)
}

/// Caps linear memory and tables, and remembers the refusal for the error message.
pub struct MemoryLimiter {
    memory_bytes: usize,
    pub refused: Option<LimitExceeded>,
}

/// Tables hold function references; this many is far beyond any tool (CPython uses ~10k).
const MAX_TABLE_ELEMENTS: usize = 1_000_000;

impl MemoryLimiter {
    pub fn new(memory_bytes: usize) -> MemoryLimiter {
        MemoryLimiter {
            memory_bytes,
            refused: None,
        }
    }
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired <= self.memory_bytes {
            return Ok(true);
        }
        let exceeded = LimitExceeded::Memory {
            requested: desired,
            limit: self.memory_bytes,
        };
        self.refused = Some(exceeded.clone());
        Err(wasmtime::Error::new(exceeded))
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= MAX_TABLE_ELEMENTS)
    }
}

/// Counts what a handler declares against its output budget.
#[derive(Debug, Default)]
pub struct OutputMeter {
    bytes: usize,
    lines: usize,
}

impl OutputMeter {
    /// Adds `bytes` (and `lines` response lines); an error once over the budget.
    pub fn charge(
        &mut self,
        limits: &Limits,
        bytes: usize,
        lines: usize,
    ) -> Result<(), LimitExceeded> {
        self.bytes = self.bytes.saturating_add(bytes);
        self.lines = self.lines.saturating_add(lines);
        if self.bytes > limits.output_bytes {
            return Err(LimitExceeded::OutputBytes {
                limit: limits.output_bytes,
            });
        }
        if self.lines > limits.output_lines {
            return Err(LimitExceeded::OutputLines {
                limit: limits.output_lines,
            });
        }
        Ok(())
    }
}

/// Names the limit behind a trap, if one was hit.
pub fn classify(
    error: &wasmtime::Error,
    limits: &Limits,
    memory_refused: Option<&LimitExceeded>,
    wall_clock_hit: bool,
) -> Option<LimitExceeded> {
    if let Some(exceeded) = error.downcast_ref::<LimitExceeded>() {
        return Some(exceeded.clone());
    }
    if let Some(exceeded) = memory_refused {
        return Some(exceeded.clone());
    }
    match error.downcast_ref::<wasmtime::Trap>() {
        Some(wasmtime::Trap::OutOfFuel) => Some(LimitExceeded::Cpu { fuel: limits.fuel }),
        Some(wasmtime::Trap::StackOverflow) => Some(LimitExceeded::Stack),
        Some(wasmtime::Trap::Interrupt) if wall_clock_hit => Some(LimitExceeded::WallClock {
            budget: limits.wall_clock,
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_meter_stops_at_the_byte_and_line_budgets() {
        let limits = Limits {
            output_bytes: 10,
            output_lines: 2,
            ..Limits::default()
        };
        let mut meter = OutputMeter::default();
        assert_eq!(meter.charge(&limits, 4, 1), Ok(()));
        assert_eq!(
            meter.charge(&limits, 4, 2),
            Err(LimitExceeded::OutputLines { limit: 2 })
        );
        let mut meter = OutputMeter::default();
        assert_eq!(
            meter.charge(&limits, 11, 0),
            Err(LimitExceeded::OutputBytes { limit: 10 })
        );
    }

    #[test]
    fn memory_refusals_are_remembered_with_sizes() {
        let mut limiter = MemoryLimiter::new(1 << 20);
        assert!(matches!(limiter.memory_growing(0, 1 << 20, None), Ok(true)));
        assert!(limiter.memory_growing(0, 2 << 20, None).is_err());
        let message = limiter.refused.map(|refused| refused.to_string());
        assert_eq!(
            message.as_deref(),
            Some(
                "it tried to grow its memory to 2.0 MiB, over its limit of 1.0 MiB (raise it with --plugin-memory or `memory_mib` in the plugin's policy)"
            )
        );
    }

    #[test]
    fn the_tighter_budget_wins() {
        let tenant = Limits {
            fuel: 10,
            ..Limits::default()
        };
        let plugin = Limits {
            memory_bytes: 1,
            ..Limits::default()
        };
        let both = tenant.min(plugin);
        assert_eq!((both.fuel, both.memory_bytes), (10, 1));
    }
}
