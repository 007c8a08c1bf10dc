//! Which tenant each MCP session belongs to, checked on every request that names a session
//! (`POST` with a call or a cancellation, `GET` of its event stream, `DELETE`): a token of
//! another tenant is answered as if the session did not exist. Also each session's last use
//! and requests in flight, so sessions a client abandoned are closed after the idle time its
//! tenant's entry sets, freeing their `max_sessions` places.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The header rmcp names the session in.
pub const SESSION_HEADER: &str = "mcp-session-id";

struct Entry {
    tenant: String,
    in_flight: usize,
    last_used: Instant,
}

#[derive(Default, Clone)]
pub struct SessionOwners {
    sessions: Arc<Mutex<HashMap<String, Entry>>>,
}

/// Whether a request naming a session may go on.
#[derive(Debug, PartialEq, Eq)]
pub enum Ownership {
    /// The session is the tenant's (or unknown here: rmcp answers 404 for it).
    Own,
    /// Another tenant's session.
    Foreign,
}

/// A request in flight in a session: the session is not idle until it is dropped.
pub struct Activity {
    id: String,
    sessions: Arc<Mutex<HashMap<String, Entry>>>,
}

impl Drop for Activity {
    fn drop(&mut self) {
        if let Ok(mut sessions) = self.sessions.lock()
            && let Some(entry) = sessions.get_mut(&self.id)
        {
            entry.in_flight = entry.in_flight.saturating_sub(1);
            entry.last_used = Instant::now();
        }
    }
}

impl SessionOwners {
    pub fn check(&self, id: &str, tenant: &str) -> Ownership {
        match self.sessions.lock() {
            Ok(sessions) => match sessions.get(id) {
                Some(entry) if entry.tenant != tenant => Ownership::Foreign,
                _ => Ownership::Own,
            },
            // Fail closed.
            Err(_) => Ownership::Foreign,
        }
    }

    /// Records that `tenant` opened session `id`.
    pub fn bind(&self, id: &str, tenant: &str) {
        if let Ok(mut sessions) = self.sessions.lock() {
            sessions.entry(id.to_string()).or_insert(Entry {
                tenant: tenant.to_string(),
                in_flight: 0,
                last_used: Instant::now(),
            });
        }
    }

    /// Marks a request of session `id` in flight until the guard is dropped.
    pub fn begin(&self, id: &str) -> Option<Activity> {
        let mut sessions = self.sessions.lock().ok()?;
        let entry = sessions.get_mut(id)?;
        entry.in_flight += 1;
        entry.last_used = Instant::now();
        Some(Activity {
            id: id.to_string(),
            sessions: self.sessions.clone(),
        })
    }

    pub fn forget(&self, id: &str) {
        if let Ok(mut sessions) = self.sessions.lock() {
            sessions.remove(id);
        }
    }

    /// Takes out the sessions to close: idle for longer than `idle(tenant)` with nothing in
    /// flight, or of a tenant that is gone (`idle` answers `None`).
    pub fn take_expired(&self, idle: impl Fn(&str) -> Option<Duration>) -> Vec<String> {
        let Ok(mut sessions) = self.sessions.lock() else {
            return Vec::new();
        };
        let expired: Vec<String> = sessions
            .iter()
            .filter(|(_, entry)| match idle(&entry.tenant) {
                None => true,
                Some(limit) => entry.in_flight == 0 && entry.last_used.elapsed() >= limit,
            })
            .map(|(id, _)| id.clone())
            .collect();
        for id in &expired {
            sessions.remove(id);
        }
        expired
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_answers_only_to_its_tenant() {
        let owners = SessionOwners::default();
        owners.bind("s1", "alice");
        assert_eq!(owners.check("s1", "alice"), Ownership::Own);
        assert_eq!(owners.check("s1", "bob"), Ownership::Foreign);
        assert_eq!(owners.check("unknown", "bob"), Ownership::Own);
        owners.bind("s1", "bob");
        assert_eq!(owners.check("s1", "bob"), Ownership::Foreign, "rebinding");
    }

    #[test]
    fn idle_sessions_expire_unless_a_request_is_in_flight() {
        let owners = SessionOwners::default();
        owners.bind("busy", "alice");
        owners.bind("idle", "alice");
        owners.bind("revoked", "mallory");
        let activity = owners.begin("busy");
        let idle = |tenant: &str| (tenant == "alice").then_some(Duration::ZERO);
        let mut expired = owners.take_expired(idle);
        expired.sort();
        assert_eq!(expired, vec!["idle".to_string(), "revoked".to_string()]);
        drop(activity);
        assert_eq!(owners.take_expired(idle), vec!["busy".to_string()]);
    }
}
