//! The Blobs each browser context of a shared browser holds. Blob data lives in the browser
//! process (one `BlobStorageContext` per browser context), out of reach of every renderer
//! measure; its memory-infra dump provider reports each storage context as
//! `site_storage/blob_storage/0x<address>` with its size in bytes, which a memory dump
//! (`Tracing.requestMemoryDump`, `background` detail) returns.
//!
//! A storage context is made with its browser context, so the address of a tenant's context
//! is the one address a dump taken right after `Target.createBrowserContext` has and a dump
//! taken right before had not: every context of the shared browser is made here, one at a
//! time ([`BlobCensus::create_context`]), and one that cannot be told apart is disposed of
//! and made again; nothing a page does can move the mapping.
//!
//! A dump costs the browser process about 0.16 s of CPU (Chromium 156, eight processes), so
//! the census is taken at most every [`CENSUS_PERIOD`] and shared by every tenant. Tracing is
//! the census's alone in a shared browser: tenants there are refused every trace.

use super::raw::RawClient;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::time::{Duration, Instant};
use tokio::sync::Mutex;

/// How old a census may be before the next measurement takes a new one.
pub const CENSUS_PERIOD: Duration = Duration::from_secs(5);
/// How long one dump may take, from `Tracing.start` to the last event.
const DUMP_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the browser has to answer one command of a dump.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(5);
/// How often a new context whose storage could not be told apart is made again.
const CREATE_ATTEMPTS: usize = 3;
/// What the browser's blob storage dump provider names each storage context.
const BLOB_STORAGE: &str = "site_storage/blob_storage/0x";

#[derive(Debug, thiserror::Error)]
pub enum CensusError {
    #[error("the browser's memory dump failed: {0}")]
    Dump(String),
    #[error(
        "the browser's memory dump did not tell this context's Blob storage apart from the others' after {CREATE_ATTEMPTS} attempts"
    )]
    Ambiguous,
}

/// The browser's blob storage contexts: address -> bytes held in memory.
type Census = HashMap<String, u64>;

/// The Blobs of every context of one shared browser, by context.
#[derive(Default)]
pub struct BlobCensus {
    /// browser context id -> the address of its blob storage.
    addresses: std::sync::Mutex<HashMap<String, String>>,
    /// The last census and when it was taken; held while one is taken or a context made.
    last: Mutex<Option<(Instant, Census)>>,
}

impl BlobCensus {
    /// Makes a browser context with `create` and finds its blob storage: a dump before and
    /// one after, the one new address is the context's. A context that cannot be told apart
    /// (another storage context appeared or went at the same time) is disposed of and made
    /// again; one that cannot be measured at all is refused, so no tenant works in a context
    /// whose Blobs are not counted.
    pub async fn create_context<F, Fut>(&self, raw: &RawClient, create: F) -> Result<String, String>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<String, String>>,
    {
        let mut last = self.last.lock().await;
        for _ in 0..CREATE_ATTEMPTS {
            let before = dump(raw).await.map_err(refusal)?;
            let context = create().await?;
            let after = dump(raw).await;
            let new = after
                .as_ref()
                .ok()
                .and_then(|after| only_new(&before, after));
            if let (Ok(after), Some(address)) = (after, new) {
                self.addresses().insert(context.clone(), address);
                *last = Some((Instant::now(), after));
                return Ok(context);
            }
            let dispose = json!({ "browserContextId": context });
            let _gone = call(raw, "Target.disposeBrowserContext", dispose).await;
        }
        Err(refusal(CensusError::Ambiguous))
    }

    /// Forgets a context given up.
    pub fn forget(&self, context: &str) {
        self.addresses().remove(context);
    }

    fn addresses(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        self.addresses
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The bytes of Blobs `contexts` hold, from a census taken after `not_before` and at most
    /// [`CENSUS_PERIOD`] ago (a new one is taken otherwise). `None` when none can be had yet:
    /// before `not_before`, or when the dump fails (its error logged).
    pub async fn held(
        &self,
        raw: &RawClient,
        contexts: &[String],
        not_before: Instant,
    ) -> Option<u64> {
        let now = Instant::now();
        if now < not_before {
            return None;
        }
        let mut last = self.last.lock().await;
        let fresh = last
            .as_ref()
            .is_some_and(|(at, _)| *at >= not_before && at.elapsed() < CENSUS_PERIOD);
        if !fresh {
            match dump(raw).await {
                Ok(census) => *last = Some((Instant::now(), census)),
                Err(error) => {
                    tracing::warn!(%error, "the Blob census failed; Blobs are not counted this time");
                    return None;
                }
            }
        }
        let (_, census) = last.as_ref()?;
        Some(held_by(&self.addresses(), census, contexts))
    }
}

fn refusal(error: CensusError) -> String {
    format!(
        "Cannot account for a new browser context's Blobs, so it was not made: {error}. Try again; a tenant with browser = \"dedicated\" does not need this."
    )
}

/// What `contexts` hold in `census`; a context of no known storage holds none yet.
fn held_by(addresses: &HashMap<String, String>, census: &Census, contexts: &[String]) -> u64 {
    contexts
        .iter()
        .filter_map(|context| census.get(addresses.get(context)?))
        .sum()
}

/// The one address `after` has and `before` had not.
fn only_new(before: &Census, after: &Census) -> Option<String> {
    let old: HashSet<&String> = before.keys().collect();
    let mut new = after.keys().filter(|address| !old.contains(address));
    let address = new.next()?;
    new.next().is_none().then(|| address.clone())
}

/// One memory dump of the browser: every blob storage context and what it holds.
async fn dump(raw: &RawClient) -> Result<Census, CensusError> {
    // Tapped before the trace starts, so no event of it is missed.
    let mut events = raw.tap("Tracing.");
    let run = async {
        call(
            raw,
            "Tracing.start",
            json!({
                "traceConfig": {
                    "includedCategories": ["disabled-by-default-memory-infra"],
                    "excludedCategories": ["*"],
                    "memoryDumpConfig": { "allowed_dump_modes": ["background"], "triggers": [] },
                },
                "transferMode": "ReportEvents",
            }),
        )
        .await?;
        let requested = call(
            raw,
            "Tracing.requestMemoryDump",
            json!({ "deterministic": false, "levelOfDetail": "background" }),
        )
        .await;
        call(raw, "Tracing.end", json!({})).await?;
        if requested?["success"] != true {
            return Err(CensusError::Dump(
                "the browser did not take the dump".into(),
            ));
        }
        let mut census = Census::new();
        // One connection delivers them in order: every chunk before the completion.
        while let Some(text) = events.recv().await {
            let event: Value = serde_json::from_str(&text)
                .map_err(|error| CensusError::Dump(format!("unreadable event: {error}")))?;
            match event["method"].as_str() {
                Some("Tracing.dataCollected") => {
                    let chunk = event["params"]["value"].as_array();
                    census.extend(storage_contexts(chunk.map_or(&[][..], Vec::as_slice)));
                }
                Some("Tracing.tracingComplete") => return Ok(census),
                _ => {}
            }
        }
        Err(CensusError::Dump("the connection closed".into()))
    };
    let taken = tokio::time::timeout(DUMP_TIMEOUT, run)
        .await
        .unwrap_or_else(|_| {
            Err(CensusError::Dump(format!(
                "no answer within {} s",
                DUMP_TIMEOUT.as_secs()
            )))
        });
    if taken.is_err() {
        // A trace left running would refuse every later census.
        let _ended = call(raw, "Tracing.end", json!({})).await;
    }
    taken
}

async fn call(raw: &RawClient, method: &'static str, params: Value) -> Result<Value, CensusError> {
    raw.call(None, method, params, COMMAND_TIMEOUT)
        .await
        .and_then(|reply| reply.result())
        .map_err(|error| CensusError::Dump(format!("{method}: {error}")))
}

/// The blob storage contexts a dump's events report: address -> `size` (absent: nothing held).
fn storage_contexts(events: &[Value]) -> Census {
    let mut census = Census::new();
    for event in events.iter().filter(|event| event["ph"] == "v") {
        let Some(allocators) = event["args"]["dumps"]["allocators"].as_object() else {
            continue;
        };
        for (name, dump) in allocators {
            let Some(address) = name.strip_prefix(BLOB_STORAGE) else {
                continue;
            };
            if address.contains('/') {
                continue;
            }
            let size = dump["attrs"]["size"]["value"]
                .as_str()
                .and_then(|hex| u64::from_str_radix(hex, 16).ok())
                .unwrap_or(0);
            census.insert(address.to_string(), size);
        }
    }
    census
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dump_reports_each_storage_context_with_what_it_holds() {
        // As Chromium 156 reports it: the parent without an address, a size only when not 0.
        let events = vec![
            json!({"ph": "X", "name": "other"}),
            json!({"ph": "v", "pid": 7, "args": {"dumps": {"allocators": {
                "site_storage/blob_storage": {"attrs": {"size": {"type": "scalar", "units": "bytes", "value": "20012c87"}}},
                "site_storage/blob_storage/0x2424000E8D00": {"attrs": {"blob_count": {"type": "scalar", "units": "objects", "value": "0"}}},
                "site_storage/blob_storage/0x242401260440": {"attrs": {"size": {"type": "scalar", "units": "bytes", "value": "20000000"}}},
                "malloc": {"attrs": {"size": {"type": "scalar", "units": "bytes", "value": "ffff"}}},
            }}}}),
        ];
        let census = storage_contexts(&events);
        assert_eq!(
            census,
            Census::from([
                ("2424000E8D00".to_string(), 0),
                ("242401260440".to_string(), 512 << 20),
            ])
        );
    }

    #[test]
    fn a_new_context_is_the_one_new_address_or_none() {
        let census = |addresses: &[&str]| -> Census {
            addresses.iter().map(|a| (a.to_string(), 0)).collect()
        };
        let before = census(&["A", "B"]);
        assert_eq!(
            only_new(&before, &census(&["A", "B", "C"])),
            Some("C".into())
        );
        // One disposed of meanwhile does not matter; two new ones cannot be told apart.
        assert_eq!(only_new(&before, &census(&["B", "C"])), Some("C".into()));
        assert_eq!(only_new(&before, &census(&["A", "B", "C", "D"])), None);
        // A new context at the address of one disposed of meanwhile shows no new address.
        assert_eq!(only_new(&before, &census(&["A", "B"])), None);
    }

    #[test]
    fn a_tenant_holds_what_its_contexts_storage_holds() {
        let addresses = HashMap::from([
            ("ctx1".to_string(), "A".to_string()),
            ("ctx2".to_string(), "B".to_string()),
            ("other".to_string(), "C".to_string()),
        ]);
        let census = Census::from([("A".into(), 5), ("B".into(), 7), ("C".into(), 100)]);
        let mine = [
            "ctx1".to_string(),
            "ctx2".to_string(),
            "unknown".to_string(),
        ];
        assert_eq!(held_by(&addresses, &census, &mine), 12);
    }
}
