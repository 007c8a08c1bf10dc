//! Accessibility snapshots: the engine lives in its own crate, `devtools-snapshot`, so that
//! the dev profile can optimise it (a 4,000-element page is a 3.7 MB reply to parse).

pub use devtools_snapshot::*;
