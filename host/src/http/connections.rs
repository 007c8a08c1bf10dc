//! Admission of TCP connections: a cap in total (below the file-descriptor limit, so accept
//! never fails for lack of descriptors) and per client address (one client cannot take the
//! whole cap), each held by a guard for the connection's life. Accept errors are backed off
//! and logged at a bounded rate instead of spinning.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Connections open at once when `--max-connections` does not say.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// Connections of one client address when `--max-connections-per-ip` does not say.
pub const DEFAULT_MAX_CONNECTIONS_PER_IP: usize = 256;

pub struct ConnectionLimits {
    total: Arc<Semaphore>,
    per_peer: usize,
    open: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

/// One admitted connection; dropping it frees its places.
pub struct Admitted {
    _total: OwnedSemaphorePermit,
    peer: IpAddr,
    open: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

impl Drop for Admitted {
    fn drop(&mut self) {
        if let Ok(mut open) = self.open.lock()
            && let Some(count) = open.get_mut(&self.peer)
        {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.peer);
            }
        }
    }
}

impl ConnectionLimits {
    pub fn new(total: usize, per_peer: usize) -> ConnectionLimits {
        ConnectionLimits {
            total: Arc::new(Semaphore::new(total.max(1))),
            per_peer: per_peer.max(1),
            open: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    /// Waits for a place in the total (the accept loop stops accepting meanwhile: the kernel
    /// queues new connections instead of this process running out of descriptors).
    pub async fn reserve(&self) -> Option<OwnedSemaphorePermit> {
        self.total.clone().acquire_owned().await.ok()
    }

    /// Admits a connection from `peer` with its reserved place; `None` when that address has
    /// its cap of connections already.
    pub fn admit(&self, peer: IpAddr, place: OwnedSemaphorePermit) -> Option<Admitted> {
        let peer = peer.to_canonical();
        let mut open = self.open.lock().ok()?;
        let count = open.entry(peer).or_insert(0);
        if *count >= self.per_peer {
            return None;
        }
        *count += 1;
        Some(Admitted {
            _total: place,
            peer,
            open: self.open.clone(),
        })
    }
}

/// Logs a recurring failure at most once per interval, with how many were not logged.
pub struct RateLimitedLog {
    interval: Duration,
    last: Option<Instant>,
    suppressed: u64,
}

impl RateLimitedLog {
    pub fn new(interval: Duration) -> RateLimitedLog {
        RateLimitedLog {
            interval,
            last: None,
            suppressed: 0,
        }
    }

    /// `Some(suppressed since the last line)` when a line may be written now.
    pub fn allow(&mut self) -> Option<u64> {
        let now = Instant::now();
        if self
            .last
            .is_some_and(|last| now.duration_since(last) < self.interval)
        {
            self.suppressed += 1;
            return None;
        }
        self.last = Some(now);
        Some(std::mem::take(&mut self.suppressed))
    }
}

/// How long to wait after an accept error: none for a connection the client already gave
/// up (it says nothing about us), a pause for anything else (EMFILE, ENFILE, ENOMEM), so
/// the loop never spins.
pub fn accept_backoff(error: &std::io::Error) -> Option<Duration> {
    use std::io::ErrorKind;
    match error.kind() {
        ErrorKind::ConnectionRefused
        | ErrorKind::ConnectionAborted
        | ErrorKind::ConnectionReset => None,
        _ => Some(Duration::from_millis(500)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_client_address_gets_at_most_its_cap_and_places_come_back() {
        let limits = ConnectionLimits::new(10, 2);
        let peer: IpAddr = "127.0.0.1".parse().expect("address");
        let mapped: IpAddr = "::ffff:127.0.0.1".parse().expect("address");
        let first = limits.admit(peer, limits.reserve().await.expect("place"));
        let second = limits.admit(mapped, limits.reserve().await.expect("place"));
        assert!(first.is_some() && second.is_some());
        let third = limits.admit(peer, limits.reserve().await.expect("place"));
        assert!(third.is_none(), "a third connection of the same address");
        let other = limits.admit(
            "10.0.0.1".parse().expect("address"),
            limits.reserve().await.expect("place"),
        );
        assert!(other.is_some(), "another address is not affected");
        drop(first);
        assert!(
            limits
                .admit(peer, limits.reserve().await.expect("place"))
                .is_some()
        );
    }

    #[tokio::test]
    async fn the_total_cap_holds_until_a_connection_closes() {
        let limits = ConnectionLimits::new(1, 5);
        let peer: IpAddr = "127.0.0.1".parse().expect("address");
        let held = limits.admit(peer, limits.reserve().await.expect("place"));
        let waiting = tokio::time::timeout(Duration::from_millis(50), limits.reserve()).await;
        assert!(waiting.is_err(), "no place while the only one is held");
        drop(held);
        assert!(limits.reserve().await.is_some());
    }

    #[test]
    fn accept_errors_other_than_a_client_giving_up_are_backed_off() {
        let emfile = std::io::Error::from_raw_os_error(24);
        assert!(accept_backoff(&emfile).is_some());
        let reset = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
        assert!(accept_backoff(&reset).is_none());
        let mut log = RateLimitedLog::new(Duration::from_secs(60));
        assert_eq!(log.allow(), Some(0));
        assert_eq!(log.allow(), None);
        assert_eq!(log.allow(), None);
    }
}
