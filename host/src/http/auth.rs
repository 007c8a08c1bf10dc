//! Bearer-token authentication of `/mcp` requests, before rmcp sees them: a request without a
//! known, unrevoked token is answered 401 and goes no further.

use crate::tenants::Tenant;
use crate::tenants::registry::Registry;
use http::HeaderMap;
use std::sync::Arc;

/// The tenant a request authenticated as, put in the request's extensions for the handler.
#[derive(Clone)]
pub struct AuthenticatedTenant(pub Arc<Tenant>);

/// Why a request was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum AuthError {
    Missing,
    Malformed,
    Unknown,
}

impl AuthError {
    pub fn message(&self) -> &'static str {
        match self {
            AuthError::Missing => {
                "Missing bearer token: send `Authorization: Bearer <token>` (tokens are listed, hashed, in the server's tenants file)."
            }
            AuthError::Malformed => {
                "Malformed Authorization header: expected `Authorization: Bearer <token>`."
            }
            AuthError::Unknown => "Unknown or revoked bearer token.",
        }
    }
}

pub fn authenticate(headers: &HeaderMap, tenants: &Registry) -> Result<Arc<Tenant>, AuthError> {
    let value = headers
        .get(http::header::AUTHORIZATION)
        .ok_or(AuthError::Missing)?;
    let value = value.to_str().map_err(|_| AuthError::Malformed)?;
    let (scheme, token) = value.trim().split_once(' ').ok_or(AuthError::Malformed)?;
    if !scheme.eq_ignore_ascii_case("bearer") || token.trim().is_empty() {
        return Err(AuthError::Malformed);
    }
    tenants.authenticate(token.trim()).ok_or(AuthError::Unknown)
}
