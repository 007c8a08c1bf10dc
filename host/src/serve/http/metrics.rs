//! Prometheus metrics of the HTTP server: calls, errors and latency per tenant and tool, and
//! per tenant its open pages and queue depth (sampled when `/metrics` is scraped).

use crate::serve::tenants::registry::Registry as Tenants;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use std::time::Duration;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CallLabels {
    tenant: String,
    tool: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TenantLabels {
    tenant: String,
}

type HistogramFamily = Family<CallLabels, Histogram, fn() -> Histogram>;

pub struct Metrics {
    registry: Registry,
    calls: Family<CallLabels, Counter>,
    errors: Family<CallLabels, Counter>,
    latency: HistogramFamily,
    pages: Family<TenantLabels, Gauge>,
    queue_depth: Family<TenantLabels, Gauge>,
    /// The instance's load, for a HorizontalPodAutoscaler: calls in flight over all tenants,
    /// tenants with a browser context open (what memory scales with) and tenants with a call
    /// running now (agents mid-turn rather than thinking).
    in_flight: Gauge,
    active_tenants: Gauge,
    busy_tenants: Gauge,
    unauthorized: Counter,
    refused_full: Counter,
}

/// 5 ms to about 80 s, doubling.
fn latency_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.005, 2.0, 15))
}

impl Metrics {
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("devtools_mcp");
        let calls = Family::<CallLabels, Counter>::default();
        let errors = Family::<CallLabels, Counter>::default();
        let latency: HistogramFamily = Family::new_with_constructor(latency_histogram);
        let pages = Family::<TenantLabels, Gauge>::default();
        let queue_depth = Family::<TenantLabels, Gauge>::default();
        let unauthorized = Counter::default();
        let refused_full = Counter::default();
        let in_flight = Gauge::default();
        let active_tenants = Gauge::default();
        let busy_tenants = Gauge::default();
        registry.register(
            "calls_in_flight",
            "Calls waiting for or holding a tenant's lock, over all tenants (the autoscaling signal)",
            in_flight.clone(),
        );
        registry.register(
            "active_tenants",
            "Tenants with a browser context (or browser) open on this instance",
            active_tenants.clone(),
        );
        registry.register(
            "busy_tenants",
            "Tenants with a call running or waiting for their lock now, out of the active ones",
            busy_tenants.clone(),
        );
        registry.register("tool_calls", "Tool calls answered", calls.clone());
        registry.register(
            "tool_errors",
            "Tool calls answered with an error (or not answered)",
            errors.clone(),
        );
        registry.register(
            "tool_call_duration_seconds",
            "Time from a call's arrival to its answer, lock wait included",
            latency.clone(),
        );
        registry.register("tenant_pages", "Open pages of a tenant", pages.clone());
        registry.register(
            "tenant_queue_depth",
            "Calls of a tenant waiting for or holding its lock",
            queue_depth.clone(),
        );
        registry.register(
            "http_unauthorized_requests",
            "Requests refused for a missing, unknown or revoked token",
            unauthorized.clone(),
        );
        registry.register(
            "http_refused_full_requests",
            "Requests of a new tenant refused (503) because this instance holds --max-tenants",
            refused_full.clone(),
        );
        Metrics {
            registry,
            calls,
            errors,
            latency,
            pages,
            queue_depth,
            in_flight,
            active_tenants,
            busy_tenants,
            unauthorized,
            refused_full,
        }
    }

    pub fn record_call(&self, tenant: &str, tool: &str, failed: bool, elapsed: Duration) {
        let labels = CallLabels {
            tenant: tenant.to_string(),
            tool: tool.to_string(),
        };
        self.calls.get_or_create(&labels).inc();
        if failed {
            self.errors.get_or_create(&labels).inc();
        }
        self.latency
            .get_or_create(&labels)
            .observe(elapsed.as_secs_f64());
    }

    pub fn record_unauthorized(&self) {
        self.unauthorized.inc();
    }

    pub fn record_refused_full(&self) {
        self.refused_full.inc();
    }

    /// The text exposition format, with the per-tenant gauges sampled now. A tenant whose
    /// lock is held keeps its last page count.
    pub fn render(&self, tenants: &Tenants) -> String {
        self.queue_depth.clear();
        let runtimes = tenants.runtimes();
        let total: usize = runtimes.iter().map(|runtime| runtime.queued()).sum();
        self.in_flight.set(i64::try_from(total).unwrap_or(i64::MAX));
        self.active_tenants
            .set(i64::try_from(runtimes.len()).unwrap_or(i64::MAX));
        let busy = runtimes
            .iter()
            .filter(|runtime| runtime.queued() > 0)
            .count();
        self.busy_tenants
            .set(i64::try_from(busy).unwrap_or(i64::MAX));
        for runtime in runtimes {
            let labels = TenantLabels {
                tenant: runtime.name.clone(),
            };
            let depth = i64::try_from(runtime.queued()).unwrap_or(i64::MAX);
            self.queue_depth.get_or_create(&labels).set(depth);
            if let Some(pages) = runtime.session.try_page_count() {
                let pages = i64::try_from(pages).unwrap_or(i64::MAX);
                self.pages.get_or_create(&labels).set(pages);
            }
        }
        let mut text = String::new();
        if let Err(error) = prometheus_client::encoding::text::encode(&mut text, &self.registry) {
            tracing::warn!(%error, "could not encode the metrics");
        }
        text
    }
}
