//! Bearer-token authentication of `/mcp` and `/metrics` requests, before rmcp sees them: a
//! request without a known, unrevoked token is answered 401 and goes no further. Tokens are
//! checked by [`TokenVerifier`]s in turn (today the tenants file's hashed tokens; an OAuth
//! resource server adds a second one).

use crate::serve::tenants::Tenant;
use crate::serve::tenants::registry::Registry;
use http::HeaderMap;
use std::sync::Arc;

/// The tenant a request authenticated as, put in the request's extensions for the handler.
#[derive(Clone)]
pub struct AuthenticatedTenant(pub Arc<Tenant>);

/// Something that maps a bearer token to a tenant.
pub trait TokenVerifier: Send + Sync {
    /// The tenant of `token`; `None` when this verifier does not know it.
    fn verify(&self, token: &str) -> Option<Arc<Tenant>>;
}

/// The hashed tokens of the tenants file (as last read).
impl TokenVerifier for Registry {
    fn verify(&self, token: &str) -> Option<Arc<Tenant>> {
        self.authenticate(token)
    }
}

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

/// The token of `Authorization: Bearer <token>`.
pub fn bearer(headers: &HeaderMap) -> Result<&str, AuthError> {
    let value = headers
        .get(http::header::AUTHORIZATION)
        .ok_or(AuthError::Missing)?;
    let value = value.to_str().map_err(|_| AuthError::Malformed)?;
    let (scheme, token) = value.trim().split_once(' ').ok_or(AuthError::Malformed)?;
    if !scheme.eq_ignore_ascii_case("bearer") || token.trim().is_empty() {
        return Err(AuthError::Malformed);
    }
    Ok(token.trim())
}

pub fn authenticate(
    headers: &HeaderMap,
    verifiers: &[&dyn TokenVerifier],
) -> Result<Arc<Tenant>, AuthError> {
    let token = bearer(headers)?;
    verifiers
        .iter()
        .find_map(|verifier| verifier.verify(token))
        .ok_or(AuthError::Unknown)
}
