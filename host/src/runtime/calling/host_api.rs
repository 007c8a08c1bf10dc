//! The interfaces a tool imports, implemented over the session: one adapter per interface of
//! the newest contract, and each interface one capability. Each adapter declares its functions
//! (marks and any capability needed besides the interface's, in [`function::HostFunction`])
//! next to their bodies, and every body runs inside [`CallState::dispatch`], which alone can
//! reach the session: the bodies hold no checks of their own beyond their arguments. Released
//! older contracts are linked through `v0_2`, on top of these.

mod dispatch;
mod emulation;
mod extensions;
mod files;
pub mod function;
mod human;
mod input;
mod lighthouse;
mod memory;
mod navigate;
mod page_tools;
mod pages;
mod performance;
mod provenance;
mod pwa;
mod response;
mod screencast;
mod script;
mod sessions;
mod styles;
mod types;
mod v0_2;

pub use dispatch::{Call, CallState};
pub use response::PLUGIN_FILE_EXTENSIONS;

use function::HostFunction;
use std::time::Duration;

/// Every host function, by interface: what the dispatcher applies, what `plugin check`
/// reports and what docs/plugins.md lists. A test holds it to the WIT, both ways.
pub const HOST_FUNCTIONS: &[&[&HostFunction]] = &[
    types::FUNCTIONS,
    response::FUNCTIONS,
    files::FUNCTIONS,
    pages::FUNCTIONS,
    pages::collected::FUNCTIONS,
    navigate::FUNCTIONS,
    input::FUNCTIONS,
    script::FUNCTIONS,
    emulation::FUNCTIONS,
    performance::FUNCTIONS,
    memory::FUNCTIONS,
    styles::FUNCTIONS,
    screencast::FUNCTIONS,
    lighthouse::FUNCTIONS,
    page_tools::FUNCTIONS,
    extensions::FUNCTIONS,
    pwa::FUNCTIONS,
    sessions::FUNCTIONS,
    human::FUNCTIONS,
];

/// What most host functions return: a trap, or the function's own result.
type Outcome<T> = wasmtime::Result<Result<T, String>>;

/// What a component built for WASI may print, per call, before its output is cut.
const WASI_OUTPUT_CAPACITY: usize = 64 << 10;

/// A `page` handle held by the guest: just the page id; the host owns the page.
pub struct PageHandle {
    pub id: u32,
}

/// How long host clean-up (removing an init script, leaving a refused page) may take.
const CLEANUP_TIMEOUT: Duration = Duration::from_secs(2);

/// WASI clocks that tell nothing: the wall clock always reads the Unix epoch and the
/// monotonic clock always reads 0. The WIT promises tools no clocks; a plugin cannot time
/// the host or other tenants' work through them. (A WASI sleep still waits, within the
/// call's wall-clock budget.)
struct FrozenClock;

impl wasmtime_wasi::HostWallClock for FrozenClock {
    fn resolution(&self) -> Duration {
        Duration::from_secs(1)
    }
    fn now(&self) -> Duration {
        Duration::ZERO
    }
}

impl wasmtime_wasi::HostMonotonicClock for FrozenClock {
    fn resolution(&self) -> u64 {
        1_000_000_000
    }
    fn now(&self) -> u64 {
        0
    }
}

/// A tool's timeout parameter; none (or 0) means the default.
fn timeout(milliseconds: Option<u32>) -> Option<Duration> {
    milliseconds
        .filter(|ms| *ms > 0)
        .map(|ms| Duration::from_millis(u64::from(ms)))
}

/// Unwraps the tool-level error of a lookup into the host function's result.
macro_rules! or_return {
    ($result:expr) => {
        match $result {
            Ok(value) => value,
            Err(error) => return Ok(Err(error)),
        }
    };
}
use or_return;
