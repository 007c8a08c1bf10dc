//! How many tenants this instance takes (`--max-tenants`): `/readyz`, and the refusal a new
//! tenant gets once the instance is full, made before any work so that a load balancer may
//! retry the request on another instance (deploy/haproxy/haproxy.cfg does).

use super::{Body, json_error, text};
use crate::serve::tenants::Tenant;
use crate::serve::tenants::registry::{Registry, RuntimeError};
use http::{Response, StatusCode};

/// `/readyz`: ready for new tenants, or full. (A draining instance no longer listens.)
pub fn readiness(tenants: &Registry) -> Response<Body> {
    if tenants.is_full() {
        return text(
            StatusCode::SERVICE_UNAVAILABLE,
            "text/plain; charset=utf-8",
            "full: this instance holds its --max-tenants\n".into(),
        );
    }
    text(
        StatusCode::OK,
        "text/plain; charset=utf-8",
        "ready\n".into(),
    )
}

/// Takes `tenant` in; `Some` refusal (`503` with `Retry-After`) when it is new here and the
/// instance is full. Other failures to set the tenant up are left to its call to report.
pub fn refusal(tenants: &Registry, tenant: &Tenant) -> Option<Response<Body>> {
    match tenants.reserve(tenant) {
        Err(error @ RuntimeError::Full { .. }) => {
            let mut response =
                json_error(StatusCode::SERVICE_UNAVAILABLE, -32003, &error.to_string());
            response.headers_mut().insert(
                http::header::RETRY_AFTER,
                http::HeaderValue::from_static("2"),
            );
            Some(response)
        }
        _ => None,
    }
}
