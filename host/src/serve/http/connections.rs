//! Admission of TCP connections: a cap in total (below the file-descriptor limit, see
//! `descriptors`) and per client address (one client cannot take the whole cap), each held by
//! a guard for the connection's life. A connection that has authenticated keeps its place: at
//! the cap, the oldest connection that never authenticated is closed to admit the next one, so
//! idle unauthenticated clients cannot lock tenants out. Accept errors are backed off and
//! logged at a bounded rate instead of spinning.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

/// Connections of one client address when `--max-connections-per-ip` does not say.
pub const DEFAULT_MAX_CONNECTIONS_PER_IP: usize = 256;

pub struct ConnectionLimits {
    total: Arc<Semaphore>,
    per_peer: usize,
    open: Arc<Mutex<HashMap<IpAddr, usize>>>,
    /// The admitted connections, oldest first; closed ones are swept at eviction and
    /// whenever the list outgrows twice the cap, so it never grows with the connections seen.
    live: Mutex<Vec<Weak<ConnectionState>>>,
    cap: usize,
}

/// What the server knows of one connection while it lives.
#[derive(Default)]
pub struct ConnectionState {
    authenticated: AtomicBool,
    evicted: CancellationToken,
}

impl ConnectionState {
    /// A request on this connection carried a valid token: it keeps its place from now on.
    pub fn mark_authenticated(&self) {
        self.authenticated.store(true, Ordering::Relaxed);
    }

    /// Resolves when the connection must close to make room for another.
    pub async fn evicted(&self) {
        self.evicted.cancelled().await;
    }
}

/// One admitted connection; dropping it frees its places.
pub struct Admitted {
    _total: OwnedSemaphorePermit,
    peer: IpAddr,
    open: Arc<Mutex<HashMap<IpAddr, usize>>>,
    pub state: Arc<ConnectionState>,
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
            live: Mutex::new(Vec::new()),
            cap: total.max(1),
        }
    }

    /// Waits for a place in the total (the accept loop stops accepting meanwhile: the kernel
    /// queues new connections instead of this process running out of descriptors). At the
    /// cap, the oldest connection that never authenticated is told to close first.
    pub async fn reserve(&self) -> Option<OwnedSemaphorePermit> {
        if let Ok(place) = self.total.clone().try_acquire_owned() {
            return Some(place);
        }
        self.evict_oldest_unauthenticated();
        self.total.clone().acquire_owned().await.ok()
    }

    fn evict_oldest_unauthenticated(&self) {
        let Ok(mut live) = self.live.lock() else {
            return;
        };
        live.retain(|state| state.strong_count() > 0);
        let victim = live.iter().filter_map(Weak::upgrade).find(|state| {
            !state.authenticated.load(Ordering::Relaxed) && !state.evicted.is_cancelled()
        });
        if let Some(victim) = victim {
            tracing::debug!("at the connection cap: closing the oldest unauthenticated connection");
            victim.evicted.cancel();
        }
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
        let state = Arc::new(ConnectionState::default());
        if let Ok(mut live) = self.live.lock() {
            if live.len() >= self.cap.saturating_mul(2) {
                live.retain(|state| state.strong_count() > 0);
            }
            live.push(Arc::downgrade(&state));
        }
        Some(Admitted {
            _total: place,
            peer,
            open: self.open.clone(),
            state,
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

    #[tokio::test]
    async fn at_the_cap_the_oldest_unauthenticated_connection_makes_room() {
        let limits = ConnectionLimits::new(3, 5);
        let peer: IpAddr = "127.0.0.1".parse().expect("address");
        let admit = async || {
            limits
                .admit(peer, limits.reserve().await.expect("place"))
                .expect("admitted")
        };
        let tenant = admit().await;
        tenant.state.mark_authenticated();
        let idle_first = admit().await;
        let idle_second = admit().await;
        // The next connection waits for a place, and the oldest idle one is told to go.
        let next = tokio::spawn({
            let total = limits.total.clone();
            async move { total.acquire_owned().await }
        });
        limits.evict_oldest_unauthenticated();
        tokio::time::timeout(Duration::from_secs(1), idle_first.state.evicted())
            .await
            .expect("the oldest unauthenticated connection is evicted");
        assert!(
            !tenant.state.evicted.is_cancelled(),
            "an authenticated one never is"
        );
        assert!(!idle_second.state.evicted.is_cancelled());
        drop(idle_first);
        assert!(next.await.expect("task").is_ok());
    }

    #[tokio::test]
    async fn closed_connections_leave_nothing_behind_below_the_cap() {
        let limits = ConnectionLimits::new(3, 5);
        let peer: IpAddr = "127.0.0.1".parse().expect("address");
        for _ in 0..1000 {
            let place = limits.reserve().await.expect("place");
            drop(limits.admit(peer, place).expect("admitted"));
        }
        let remembered = limits.live.lock().expect("live").len();
        assert!(
            remembered <= 6,
            "{remembered} closed connections remembered"
        );
    }

    #[tokio::test]
    async fn authenticated_connections_are_never_evicted() {
        let limits = ConnectionLimits::new(1, 5);
        let peer: IpAddr = "127.0.0.1".parse().expect("address");
        let tenant = limits
            .admit(peer, limits.reserve().await.expect("place"))
            .expect("admitted");
        tenant.state.mark_authenticated();
        let waiting = tokio::time::timeout(Duration::from_millis(100), limits.reserve()).await;
        assert!(
            waiting.is_err(),
            "no place while the tenant holds the only one"
        );
        assert!(!tenant.state.evicted.is_cancelled());
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
