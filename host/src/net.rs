//! What a tenant's browser may load and reach: URLs parsed (never matched as strings) and
//! checked at the tool boundary, and an egress proxy per tenant that decides every request
//! of its browser context on the resolved address.

pub mod address;
pub mod egress;
mod lookup;
pub mod proxy;

pub use egress::{EgressPolicy, Rule};
pub use proxy::EgressProxy;

use crate::policy::tenant_urls::UrlPolicy;

/// What a tenant's session applies in the browser: the proxy its browser contexts are created
/// with, and the URLs it may open.
#[derive(Debug, Clone)]
pub struct TenantNetwork {
    /// `http://127.0.0.1:PORT` of the tenant's [`EgressProxy`].
    pub proxy_server: String,
    pub urls: UrlPolicy,
}

/// Subtracts Chromium's implicit proxy bypass of `localhost`, loopback and link-local
/// addresses, so those requests reach the proxy (and its policy) too.
pub const PROXY_BYPASS_LIST: &str = "<-loopback>";
