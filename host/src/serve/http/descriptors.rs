//! File descriptors: the soft limit raised to the hard one at start, as servers do, and the
//! default connection cap derived from what the process may really open, minus a reserve the
//! browser connection, tenants' files, the compiled-code cache and the log always keep.

use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};

/// Descriptors kept out of the connection cap: at least this many...
const MIN_RESERVE: u64 = 256;
/// ...or this share of the limit, whichever is more.
const RESERVE_SHARE: u64 = 4;
/// The derived cap never exceeds this (beyond it, memory per connection is the limit).
const MAX_DERIVED_CONNECTIONS: u64 = 65_536;
/// And never goes below this, however low the limit.
const MIN_DERIVED_CONNECTIONS: u64 = 16;

/// The descriptor limit the process now runs under, after raising its soft limit to the hard
/// one (a failure to raise leaves the soft limit as it was, and is logged).
pub fn raise_to_hard_limit() -> u64 {
    let limits = getrlimit(Resource::Nofile);
    let Some(hard) = limits.maximum else {
        // No hard limit: keep the soft one unless it is unlimited too.
        return limits.current.unwrap_or(u64::MAX);
    };
    let soft = limits.current.unwrap_or(u64::MAX);
    if soft >= hard {
        return soft;
    }
    match setrlimit(
        Resource::Nofile,
        Rlimit {
            current: Some(hard),
            maximum: Some(hard),
        },
    ) {
        Ok(()) => {
            tracing::debug!(soft, hard, "raised the open-files limit to the hard limit");
            hard
        }
        Err(error) => {
            tracing::warn!(soft, hard, %error, "cannot raise the open-files limit");
            soft
        }
    }
}

/// The descriptors of `limit` kept out of the connection cap.
pub fn reserve(limit: u64) -> u64 {
    MIN_RESERVE.max(limit / RESERVE_SHARE)
}

/// The connection cap when `--max-connections` does not say: what `limit` leaves after the
/// reserve, within bounds.
pub fn default_max_connections(limit: u64) -> usize {
    let cap = limit
        .saturating_sub(reserve(limit))
        .clamp(MIN_DERIVED_CONNECTIONS, MAX_DERIVED_CONNECTIONS);
    usize::try_from(cap).unwrap_or(usize::MAX)
}

/// A warning for an explicit cap that would leave less than the reserve (the operator's value
/// is kept: accept then backs off at EMFILE instead of failing to start).
pub fn check_explicit(max_connections: usize, limit: u64) -> Option<String> {
    let wanted = u64::try_from(max_connections).unwrap_or(u64::MAX);
    let room = limit.saturating_sub(reserve(limit));
    (wanted > room).then(|| {
        format!(
            "--max-connections {max_connections} leaves fewer than {} of this process's {limit} descriptors (ulimit -n) for the browser and tenants; lower it to {room} or raise the limit.",
            reserve(limit)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_cap_leaves_the_reserve() {
        // The common soft limit: 1,024 descriptors, 768 connections, 256 kept.
        assert_eq!(default_max_connections(1024), 768);
        assert_eq!(default_max_connections(1 << 20), 65_536);
        assert_eq!(default_max_connections(100), 16);
        assert_eq!(default_max_connections(4096), 3072);
    }

    #[test]
    fn an_explicit_cap_past_the_reserve_is_warned_about() {
        assert!(check_explicit(1024, 1024).is_some());
        assert!(check_explicit(768, 1024).is_none());
    }

    #[test]
    fn the_soft_limit_is_raised_to_the_hard_one() {
        let limit = raise_to_hard_limit();
        let now = getrlimit(Resource::Nofile);
        assert_eq!(now.current.unwrap_or(u64::MAX), limit);
        if let Some(hard) = now.maximum {
            assert_eq!(limit, hard);
        }
    }
}
