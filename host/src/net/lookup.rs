//! Name lookups of the egress proxies, bounded. `getaddrinfo` holds a thread of the runtime's
//! blocking pool until the resolver answers or gives up, which can take far longer than a
//! proxy waits (retries over every nameserver): a page asking for many names that no resolver
//! answers would otherwise hold every blocking thread, and every tenant's calls need those
//! threads (a soak run here grew to 70 of them). Each tenant gets a few lookups at once and all
//! tenants together a few more; a slot is held until its thread is free again, not merely
//! until the proxy stops waiting.
//!
//! The process's slots are a shared pool with a reserve: a tenant's first lookup may take any
//! free slot, its further ones only while more than the reserve is free. Four tenants flooding
//! names no resolver answers took all 32 slots and a fifth tenant's lookups failed; now the
//! floods stop at the reserve, which tenants with no lookup running share (the rule of every
//! pool tenants share: [`crate::shared_pool`]).

use crate::shared_pool::{Share, SharedPool};
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

/// Lookups one tenant's proxy runs at once.
const PER_TENANT: usize = 8;
/// Lookups all proxies of the process run at once.
const IN_ALL: usize = 32;
/// Slots of [`IN_ALL`] kept for tenants that have no lookup running.
const RESERVE: usize = 8;

/// The process's lookup slots, shared with a reserve (see the module's doc).
static ALL: LazyLock<Arc<SharedPool>> =
    LazyLock::new(|| SharedPool::new(IN_ALL, RESERVE, PER_TENANT));

/// A blocking lookup: the system's, or a test's.
type Lookup = fn(&str, u16) -> std::io::Result<Vec<SocketAddr>>;

fn system_lookup(host: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
    (host, port).to_socket_addrs().map(Iterator::collect)
}

/// One tenant's share of the lookups.
pub struct Lookups {
    share: Arc<Share>,
}

impl Lookups {
    pub fn new() -> Lookups {
        Lookups::in_pool(ALL.clone())
    }

    fn in_pool(pool: Arc<SharedPool>) -> Lookups {
        Lookups {
            share: pool.share(),
        }
    }

    /// The addresses of `host`, or why there are none within `limit` (the wait for a slot
    /// included).
    pub async fn resolve(
        &self,
        host: &str,
        port: u16,
        limit: Duration,
    ) -> Result<Vec<SocketAddr>, String> {
        self.resolve_with(host, port, limit, system_lookup).await
    }

    async fn resolve_with(
        &self,
        host: &str,
        port: u16,
        limit: Duration,
        lookup: Lookup,
    ) -> Result<Vec<SocketAddr>, String> {
        let name = host.to_owned();
        let work = async {
            let slot = self.share.take().await;
            tokio::task::spawn_blocking(move || {
                let _slot = slot;
                lookup(&name, port)
            })
            .await
            .map_err(|error| error.to_string())?
            .map_err(|error| error.to_string())
        };
        match tokio::time::timeout(limit, work).await {
            Ok(Ok(found)) => Ok(found),
            Ok(Err(error)) => Err(format!("cannot resolve {host}: {error}")),
            Err(_) => Err(format!("resolving {host} timed out")),
        }
    }
}

impl Default for Lookups {
    fn default() -> Self {
        Lookups::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static RUNNING: AtomicUsize = AtomicUsize::new(0);
    static MOST: AtomicUsize = AtomicUsize::new(0);

    /// A resolver that never answers in time, counting how many threads it holds at once.
    fn stuck(_host: &str, _port: u16) -> std::io::Result<Vec<SocketAddr>> {
        let now = RUNNING.fetch_add(1, Ordering::SeqCst) + 1;
        MOST.fetch_max(now, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(300));
        RUNNING.fetch_sub(1, Ordering::SeqCst);
        Err(std::io::Error::other("no answer"))
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_flood_of_unanswered_names_holds_a_bounded_number_of_threads() {
        let tenants: Vec<Lookups> = (0..6).map(|_| Lookups::new()).collect();
        let floods = tenants.iter().flat_map(|tenant| {
            (0..30).map(move |_| {
                tenant.resolve_with("flood.invalid", 80, Duration::from_millis(50), stuck)
            })
        });
        let answers = futures::future::join_all(floods).await;
        assert!(answers.iter().all(Result::is_err));
        // The proxies stopped waiting long ago; the threads finish on their own.
        while RUNNING.load(Ordering::SeqCst) > 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let most = MOST.load(Ordering::SeqCst);
        assert!(most <= IN_ALL, "{most} lookups at once");
        assert!(most >= PER_TENANT, "{most}: the tenants did run lookups");
        // One tenant alone never holds more than its share.
        MOST.store(0, Ordering::SeqCst);
        let alone = Lookups::new();
        let flood =
            (0..30).map(|_| alone.resolve_with("x.invalid", 80, Duration::from_millis(50), stuck));
        let _answers = futures::future::join_all(flood).await;
        while RUNNING.load(Ordering::SeqCst) > 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(MOST.load(Ordering::SeqCst) <= PER_TENANT);
    }

    fn slow(_host: &str, _port: u16) -> std::io::Result<Vec<SocketAddr>> {
        std::thread::sleep(Duration::from_millis(500));
        Err(std::io::Error::other("no answer"))
    }

    fn quick(_host: &str, _port: u16) -> std::io::Result<Vec<SocketAddr>> {
        Ok(vec![SocketAddr::from(([127, 0, 0, 1], 80))])
    }

    /// Four tenants flooding unanswered names took every slot and a fifth tenant's lookup
    /// failed: the reserve keeps slots for tenants with none running.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_flood_by_four_tenants_leaves_a_fifth_its_lookups() {
        let pool = SharedPool::new(IN_ALL, RESERVE, PER_TENANT);
        let flooders: Vec<Lookups> = (0..4).map(|_| Lookups::in_pool(pool.clone())).collect();
        let floods = flooders.iter().flat_map(|tenant| {
            (0..PER_TENANT).map(move |_| {
                tenant.resolve_with("flood.invalid", 80, Duration::from_secs(3), slow)
            })
        });
        let flood = futures::future::join_all(floods);
        let fifth = async {
            // The floods take their slots first.
            tokio::time::sleep(Duration::from_millis(100)).await;
            let held: usize = flooders.iter().map(|tenant| tenant.share.held()).sum();
            let answer = Lookups::in_pool(pool.clone())
                .resolve_with("fifth.test", 80, Duration::from_millis(300), quick)
                .await;
            (held, answer)
        };
        let (_flooded, (held, answer)) = tokio::join!(flood, fifth);
        // Extras stop at the reserve; a tenant's first slot may come from it.
        assert!(
            held <= IN_ALL - RESERVE + 4,
            "{held} slots held by the floods"
        );
        assert!(
            held >= IN_ALL - RESERVE,
            "{held}: the floods did take their slots"
        );
        assert!(answer.is_ok(), "the fifth tenant's lookup: {answer:?}");
    }
}
