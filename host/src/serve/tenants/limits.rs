//! The tenants file's limits that reach past the tool pipeline: egress lists and defaults of
//! the rate, concurrency, idle-session and renderer-memory quotas.

use crate::net::{EgressPolicy, Rule};
use std::time::Duration;

/// Calls of one tenant running at once when its entry does not say.
pub const DEFAULT_MAX_CONCURRENT_CALLS: usize = 64;
/// Requests per minute of one tenant when its entry does not say.
pub const DEFAULT_REQUESTS_PER_MINUTE: u32 = 600;
/// An MCP session unused this long is closed when the entry does not say.
pub const DEFAULT_SESSION_IDLE: Duration = Duration::from_secs(30 * 60);
/// JavaScript heap of one page when the entry does not say.
pub const DEFAULT_RENDERER_MEMORY_MIB: u64 = 1024;

pub fn egress_policy(
    tenant: &str,
    allow: &[String],
    deny: &[String],
    public: Option<bool>,
) -> Result<EgressPolicy, String> {
    let rules = |key: &str, list: &[String]| {
        list.iter()
            .map(|text| Rule::parse(text).map_err(|reason| format!("{key}: {reason}")))
            .collect::<Result<Vec<Rule>, String>>()
    };
    Ok(EgressPolicy {
        tenant: tenant.to_string(),
        allow: rules("egress_allow", allow)?,
        deny: rules("egress_deny", deny)?,
        public: public.unwrap_or(true),
    })
}
