//! Admission of TCP connections: a cap in total (below the file-descriptor limit, see
//! `descriptors`) and per client address (one client cannot take the whole cap), each held by
//! a guard for the connection's life. At the cap, the oldest connection that never
//! authenticated is closed to admit the next one, so idle unauthenticated clients cannot lock
//! tenants out; when every connection has authenticated, the oldest idle one of the tenant
//! holding the most (two or more) makes room, so one tenant's keep-alive connections cannot
//! lock the others out either. A connection carrying an open event stream (the `GET` of
//! streamable HTTP, a tenant's live notifications) goes after its owner's idle keep-alive
//! ones, and only while that owner holds more than its share (the cap divided among the
//! tenants holding connections and one more), so neither are a tenant's notifications cut for
//! its spare connections nor can one tenant lock the others out with many streams. A
//! tenant's only connection, and a connection with a request in flight, are never closed.
//! Accept errors are backed off and logged at a bounded rate instead of spinning.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
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
    /// Whose token the connection's first authenticated request carried.
    owner: OnceLock<String>,
    /// Requests being served on it (HTTP/1: one at a time).
    busy: AtomicUsize,
    /// Event streams open on it, answered but still being sent.
    streams: AtomicUsize,
    evicted: CancellationToken,
}

/// An event stream open on a connection, for as long as its response body lives.
pub struct Streaming(Arc<ConnectionState>);

impl Drop for Streaming {
    fn drop(&mut self) {
        self.0.streams.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A request in flight on a connection, for as long as it lives.
pub struct Busy(Arc<ConnectionState>);

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.busy.fetch_sub(1, Ordering::SeqCst);
    }
}

impl ConnectionState {
    /// A request on this connection carried a valid token of `owner` (a tenant, or the
    /// metrics reader): it is closed at the cap only when its owner holds several.
    pub fn mark_authenticated(&self, owner: &str) {
        let _first = self.owner.set(owner.to_owned());
        self.authenticated.store(true, Ordering::Relaxed);
    }

    /// Marks a request in flight until the guard drops: such a connection is never evicted.
    pub fn busy(self: &Arc<Self>) -> Busy {
        self.busy.fetch_add(1, Ordering::SeqCst);
        Busy(self.clone())
    }

    /// Marks an event stream open until the guard drops (kept with the response body).
    pub fn streaming(self: &Arc<Self>) -> Streaming {
        self.streams.fetch_add(1, Ordering::SeqCst);
        Streaming(self.clone())
    }

    fn is_streaming(&self) -> bool {
        self.streams.load(Ordering::SeqCst) > 0
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
    /// cap, a connection is told to close first (see the module's doc for which).
    pub async fn reserve(&self) -> Option<OwnedSemaphorePermit> {
        if let Ok(place) = self.total.clone().try_acquire_owned() {
            return Some(place);
        }
        self.evict_one();
        self.total.clone().acquire_owned().await.ok()
    }

    fn evict_one(&self) {
        let Ok(mut live) = self.live.lock() else {
            return;
        };
        live.retain(|state| state.strong_count() > 0);
        let live: Vec<Arc<ConnectionState>> = live
            .iter()
            .filter_map(Weak::upgrade)
            .filter(|state| !state.evicted.is_cancelled())
            .collect();
        let unauthenticated = live
            .iter()
            .find(|state| !state.authenticated.load(Ordering::Relaxed));
        if let Some(victim) = unauthenticated {
            tracing::debug!("at the connection cap: closing the oldest unauthenticated connection");
            victim.evicted.cancel();
            return;
        }
        if let Some(victim) = oldest_idle_of_the_largest_owner(&live, self.cap) {
            tracing::debug!(
                owner = victim.owner.get().map(String::as_str).unwrap_or_default(),
                "at the connection cap: closing the oldest idle connection of the tenant holding the most"
            );
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

/// The connection to close among authenticated ones: the oldest idle keep-alive connection
/// of the owner holding the most connections, when that owner holds two or more (a tenant's
/// only connection stays); failing that, the oldest event stream of the largest owner holding
/// more than its share of `cap` (divided among the owners and one more, the newcomer).
fn oldest_idle_of_the_largest_owner(
    live: &[Arc<ConnectionState>],
    cap: usize,
) -> Option<&Arc<ConnectionState>> {
    let mut held: HashMap<&str, usize> = HashMap::new();
    for state in live {
        if let Some(owner) = state.owner.get() {
            *held.entry(owner.as_str()).or_default() += 1;
        }
    }
    let share = cap / (held.len() + 1);
    let idle = |state: &&Arc<ConnectionState>| state.busy.load(Ordering::SeqCst) == 0;
    let mut owners: Vec<(&str, usize)> =
        held.into_iter().filter(|(_, count)| *count >= 2).collect();
    // The largest holder first; among equals, any order is fair (names break ties stably).
    owners.sort_by(|left, right| right.1.cmp(&left.1).then(left.0.cmp(right.0)));
    let of = |owner: &str| {
        let owner = owner.to_owned();
        live.iter()
            .filter(move |state| state.owner.get() == Some(&owner))
    };
    let keep_alive = owners
        .iter()
        .find_map(|(owner, _)| of(owner).filter(idle).find(|state| !state.is_streaming()));
    keep_alive.or_else(|| {
        owners
            .iter()
            .filter(|(_, count)| *count > share)
            .find_map(|(owner, _)| of(owner).filter(idle).find(|state| state.is_streaming()))
    })
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
        tenant.state.mark_authenticated("alice");
        let idle_first = admit().await;
        let idle_second = admit().await;
        // The next connection waits for a place, and the oldest idle one is told to go.
        let next = tokio::spawn({
            let total = limits.total.clone();
            async move { total.acquire_owned().await }
        });
        limits.evict_one();
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
        tenant.state.mark_authenticated("alice");
        let waiting = tokio::time::timeout(Duration::from_millis(100), limits.reserve()).await;
        assert!(
            waiting.is_err(),
            "no place while the tenant holds the only one"
        );
        assert!(!tenant.state.evicted.is_cancelled());
    }

    /// One tenant's keep-alive connections took the whole cap and locked the others out: at
    /// the cap its oldest idle one makes room, never one with a request in flight, and never
    /// another tenant's only connection.
    #[tokio::test]
    async fn a_tenant_holding_many_connections_makes_room_for_others() {
        let limits = ConnectionLimits::new(4, 10);
        let peer: IpAddr = "127.0.0.1".parse().expect("address");
        let admit = async |owner: &str| {
            let admitted = limits
                .admit(peer, limits.reserve().await.expect("place"))
                .expect("admitted");
            admitted.state.mark_authenticated(owner);
            admitted
        };
        let bob = admit("bob").await;
        let busy_alice = admit("alice").await;
        let idle_alice = admit("alice").await;
        let newest_alice = admit("alice").await;
        let _in_flight = busy_alice.state.busy();
        let next = tokio::spawn({
            let total = limits.total.clone();
            async move { total.acquire_owned().await }
        });
        limits.evict_one();
        tokio::time::timeout(Duration::from_secs(1), idle_alice.state.evicted())
            .await
            .expect("alice's oldest idle connection is evicted");
        assert!(
            !busy_alice.state.evicted.is_cancelled(),
            "a request in flight"
        );
        assert!(!newest_alice.state.evicted.is_cancelled());
        assert!(!bob.state.evicted.is_cancelled(), "bob's only connection");
        drop(idle_alice);
        assert!(next.await.expect("task").is_ok());
    }

    /// A tenant's open event stream (its live notifications) goes after its idle keep-alive
    /// connections, and only while it holds more than its share: many streams of one tenant
    /// cannot lock the others out, a few cannot be cut for a newcomer.
    #[tokio::test]
    async fn event_streams_go_last_and_only_past_their_owners_share() {
        let limits = ConnectionLimits::new(6, 10);
        let peer: IpAddr = "127.0.0.1".parse().expect("address");
        let admit = async |owner: &str| {
            let admitted = limits
                .admit(peer, limits.reserve().await.expect("place"))
                .expect("admitted");
            admitted.state.mark_authenticated(owner);
            admitted
        };
        let bob_stream = admit("bob").await;
        let _bob_streaming = bob_stream.state.streaming();
        let bob_idle = admit("bob").await;
        let alice: Vec<Admitted> = [
            admit("alice").await,
            admit("alice").await,
            admit("alice").await,
            admit("alice").await,
        ]
        .into();
        let _alice_streaming: Vec<Streaming> =
            alice.iter().map(|held| held.state.streaming()).collect();
        // Alice holds four streams (over her share of 6 / 3 = 2), bob one stream and one
        // idle connection: bob's idle keep-alive goes first...
        limits.evict_one();
        assert!(
            bob_idle.state.evicted.is_cancelled(),
            "an idle keep-alive first"
        );
        assert!(!bob_stream.state.evicted.is_cancelled());
        assert!(alice.iter().all(|held| !held.state.evicted.is_cancelled()));
        drop(bob_idle);
        // ...then, streams only, alice's oldest: she is over her share.
        limits.evict_one();
        assert!(
            alice[0].state.evicted.is_cancelled(),
            "the largest holder's oldest stream"
        );
        assert!(
            !bob_stream.state.evicted.is_cancelled(),
            "bob's stream is within his share"
        );
        // Streams within every owner's share stay.
        let within = ConnectionLimits::new(6, 10);
        let first = within
            .admit(peer, within.reserve().await.expect("place"))
            .expect("admitted");
        let second = within
            .admit(peer, within.reserve().await.expect("place"))
            .expect("admitted");
        for held in [&first, &second] {
            held.state.mark_authenticated("carol");
        }
        let _streams = (first.state.streaming(), second.state.streaming());
        within.evict_one();
        assert!(!first.state.evicted.is_cancelled() && !second.state.evicted.is_cancelled());
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
