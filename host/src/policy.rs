//! Who may do what, decided in one place: each rule once, data in and a verdict out, so the
//! layers above (the runtime's gate, the pipeline, the tenants) enforce one answer.
//!
//! - [`capability`]: what a plugin is granted, and what each grant admits.
//! - [`plugins`]: the operator's plugin policy file (grants and limits per plugin).
//! - [`limits`]: what one call may consume, and the bounds of any grant.
//! - [`plugin_urls`]: the URL patterns of a plugin's `navigate` grant.
//! - [`tenant_urls`]: which URLs a tenant may have the browser open.
//! - [`navigation`]: the reference's rules for the URLs every client may open.
//! - [`url_patterns`]: `--blockedUrlPattern`/`--allowedUrlPattern`, the browser's network.
//! - [`tenant_tools`]: which tools a tenant (or an OAuth token's scopes) may list and call.
//! - [`code_folders`]: the folders the server executes or loads code from, never writable.
//! - [`signature`]: which plugin files are signed by a key the operator trusts.
//! - [`names`]: names in configuration checked against the names there are.
//!
//! Policy is a leaf: it may use the sandbox and small utilities, never the runtime, the
//! browser or the servers that consult it.

pub mod capability;
pub mod code_folders;
pub mod limits;
pub mod names;
pub mod navigation;
pub mod plugin_urls;
pub mod plugins;
pub mod signature;
pub mod tenant_tools;
pub mod tenant_urls;
pub mod url_patterns;
