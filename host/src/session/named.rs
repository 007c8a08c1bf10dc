//! Named sessions (beyond 1.11.0, `--sessionStore`): `save_session`, `restore_session`,
//! `list_sessions`, `delete_session` and `--session NAME` over the session's own browser
//! context, in its owner's sealed folder (`saved`). Answers name sessions, sites, origins and
//! counts, never a cookie or a stored value. The session last saved or restored is the active
//! one: a relaunch after the browser died (`--experimentalRecovery`) restores it.

use super::saved::{OwnedSessions, Saved, SavedError};
use super::{Session, SessionState};
use crate::browser::features::sessions::{
    OriginStorage, StorageState, read_cookies, read_indexed_db, read_local_storage, storage_origin,
    write_cookies, write_origin, write_origin_elsewhere,
};

/// A session's named sessions.
pub(super) struct NamedSessions {
    store: OwnedSessions,
    /// The one last saved or restored (what a relaunch restores).
    active: Option<String>,
    /// `--session NAME`: restored when the browser first starts.
    at_start: Option<String>,
}

const NO_STORE: &str = "Named sessions are off on this server: start it with --sessionStore DIR (and --sessionKeyFile FILE), or under serve give the tenant the server's sessionStore.";

impl Session {
    /// Saves and restores named sessions in `store`; with `at_start`, restores that one when
    /// the browser first starts.
    pub fn with_named_sessions(self, store: OwnedSessions, at_start: Option<String>) -> Session {
        if let Ok(mut state) = self.state.try_lock() {
            state.named = Some(NamedSessions {
                store,
                active: None,
                at_start,
            });
        }
        self
    }
}

/// `3 cookies (sites: a.com, b.org), storage of 1 origin (https://a.com), 1 IndexedDB
/// database`: what a session holds, never a value.
fn summary(state: &StorageState) -> String {
    let sites = state.cookie_sites();
    let mut text = format!(
        "{} cookie{}",
        state.cookies.len(),
        if state.cookies.len() == 1 { "" } else { "s" }
    );
    if !sites.is_empty() {
        text.push_str(&format!(" (sites: {})", sites.join(", ")));
    }
    let origins: Vec<&str> = state
        .origins
        .iter()
        .map(|origin| origin.origin.as_str())
        .collect();
    text.push_str(&format!(
        ", storage of {} origin{}",
        origins.len(),
        if origins.len() == 1 { "" } else { "s" }
    ));
    if !origins.is_empty() {
        text.push_str(&format!(" ({})", origins.join(", ")));
    }
    let databases: usize = state
        .origins
        .iter()
        .map(OriginStorage::database_count)
        .sum();
    if databases > 0 {
        text.push_str(&format!(
            ", {databases} IndexedDB database{}",
            if databases == 1 { "" } else { "s" }
        ));
    }
    text
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_secs())
        .unwrap_or_default()
}

fn message(error: SavedError) -> String {
    error.to_string()
}

impl SessionState {
    fn named(&self) -> Result<&NamedSessions, String> {
        self.named.as_ref().ok_or_else(|| NO_STORE.to_string())
    }

    /// The browser context the session's own pages live in (`None`: the default one).
    fn own_context(&self) -> Option<String> {
        self.scope.as_ref().and_then(|scope| scope.context.clone())
    }

    /// What the session's context holds now: every cookie, and the local storage of the
    /// origins its pages show (isolated contexts' pages are not the session's login).
    async fn read_storage(&self) -> Result<StorageState, String> {
        let context = self.own_context();
        let cookies = read_cookies(self.browser()?, context.as_deref()).await?;
        let mut origins: Vec<OriginStorage> = Vec::new();
        for page in self.pages.values() {
            if page.isolated_context.is_some() {
                continue;
            }
            let Some(origin) = storage_origin(&page.url().await) else {
                continue;
            };
            if origins.iter().any(|known| known.origin == origin) {
                continue;
            }
            let local_storage = read_local_storage(page.cdp(), &origin)
                .await
                .unwrap_or_else(|error| {
                    tracing::info!(%error, %origin, "local storage not read");
                    Vec::new()
                });
            let indexed_db = read_indexed_db(page.cdp()).await.unwrap_or_else(|error| {
                tracing::info!(%error, %origin, "IndexedDB not read");
                String::new()
            });
            if !local_storage.is_empty() || !indexed_db.is_empty() {
                origins.push(OriginStorage {
                    origin,
                    local_storage,
                    indexed_db,
                });
            }
        }
        Ok(StorageState { cookies, origins })
    }

    /// Writes `state` into the session's context: every cookie, and local storage through the
    /// pages showing its origins, or a blank page of the context opened for an origin none
    /// shows. Returns the origins whose storage could not be written, with why.
    async fn write_storage(&mut self, state: &StorageState) -> Result<Vec<String>, String> {
        let context = self.own_context();
        write_cookies(self.browser()?, context.as_deref(), &state.cookies).await?;
        let mut failed = Vec::new();
        for origin in &state.origins {
            let mut written = false;
            for page in self.pages.values() {
                if page.isolated_context.is_some()
                    || storage_origin(&page.url().await).as_deref() != Some(&origin.origin)
                {
                    continue;
                }
                write_origin(page.cdp(), origin).await?;
                written = true;
            }
            if !written && let Err(error) = self.write_storage_elsewhere(origin).await {
                failed.push(format!("{} ({error})", origin.origin));
            }
        }
        Ok(failed)
    }

    /// Local storage of an origin no page shows, through a blank page of the session's context
    /// that is closed after (and never adopted as one of the session's pages).
    async fn write_storage_elsewhere(&mut self, origin: &OriginStorage) -> Result<(), String> {
        let mut params =
            chromiumoxide::cdp::browser_protocol::target::CreateTargetParams::new("about:blank");
        params.background = Some(true);
        params.browser_context_id = self.own_context().map(Into::into);
        let page = tokio::time::timeout(
            crate::browser::cdp::timeouts::COMMAND,
            self.browser()?.new_page(params),
        )
        .await
        .map_err(|_| "The browser did not open a page in time.".to_string())?
        .map_err(|error| error.to_string())?;
        self.closing.insert(super::pages::target_key(&page));
        let written = write_origin_elsewhere(&page, origin).await;
        let _closed = page.close().await;
        written
    }

    /// `save_session`: the session's cookies and local storage, sealed under `name`. Origins
    /// saved before under the name whose pages are not open now are kept.
    pub async fn save_named(&mut self, name: &str) -> Result<Vec<String>, String> {
        super::saved::check_name(name).map_err(message)?;
        self.named()?;
        self.ensure_browser()
            .await
            .map_err(|error| error.to_string())?;
        let mut state = self.read_storage().await?;
        let named = self.named()?;
        if let Ok(before) = named.store.read(name) {
            for kept in before.state.origins {
                if !state.origins.iter().any(|now| now.origin == kept.origin) {
                    state.origins.push(kept);
                }
            }
        }
        let line = format!("Saved session \"{name}\": {}.", summary(&state));
        named
            .store
            .write(
                name,
                &Saved {
                    saved_at: now_secs(),
                    state,
                },
            )
            .map_err(message)?;
        if let Some(named) = self.named.as_mut() {
            named.active = Some(name.to_string());
        }
        Ok(vec![line])
    }

    /// Restores `name` into the session's context; the line that says what came back.
    async fn restore_state(&mut self, name: &str) -> Result<String, String> {
        let saved = self.named()?.store.read(name).map_err(message)?;
        let failed = self.write_storage(&saved.state).await?;
        if let Some(named) = self.named.as_mut() {
            named.active = Some(name.to_string());
        }
        let mut line = format!("Restored session \"{name}\": {}", summary(&saved.state));
        if !failed.is_empty() {
            line.push_str(&format!(
                "; the storage of these origins could not be written: {}",
                failed.join("; ")
            ));
        }
        line.push('.');
        Ok(line)
    }

    /// `restore_session`.
    pub async fn restore_named(&mut self, name: &str) -> Result<Vec<String>, String> {
        super::saved::check_name(name).map_err(message)?;
        self.named()?;
        self.ensure_browser()
            .await
            .map_err(|error| error.to_string())?;
        let line = self.restore_state(name).await?;
        Ok(vec![
            line,
            "Pages load with it from their next navigation or reload.".to_string(),
        ])
    }

    /// `list_sessions`: each name with what it holds (or why it cannot be opened).
    pub fn list_named(&self) -> Result<Vec<String>, String> {
        let named = self.named()?;
        let names = named.store.names().map_err(message)?;
        if names.is_empty() {
            return Ok(vec![
                "No sessions are saved. save_session saves this session under a name.".into(),
            ]);
        }
        let mut lines = vec!["## Saved sessions".to_string()];
        for name in names {
            let active = match named.active.as_deref() == Some(name.as_str()) {
                true => " [active]",
                false => "",
            };
            lines.push(match named.store.read(&name) {
                Ok(saved) => format!("{name}{active}: {}", summary(&saved.state)),
                Err(error) => format!("{name}: {error}"),
            });
        }
        Ok(lines)
    }

    /// `delete_session`.
    pub fn delete_named(&mut self, name: &str) -> Result<Vec<String>, String> {
        let named = self.named()?;
        named.store.delete(name).map_err(message)?;
        if let Some(named) = self.named.as_mut()
            && named.active.as_deref() == Some(name)
        {
            named.active = None;
        }
        Ok(vec![format!("Deleted session \"{name}\".")])
    }

    /// After the browser started: the `--session` named at start on the first launch, the
    /// active session on a relaunch with `--experimentalRecovery`. Returns what a relaunch's
    /// recovery note says; a failed start restore is noted for the first answer.
    pub(super) async fn restore_after_launch(&mut self, relaunch: bool) -> Option<String> {
        let named = self.named.as_mut()?;
        let name = match relaunch {
            true if self.options.recovery => named.active.clone()?,
            true => return None,
            false => named.at_start.take()?,
        };
        match self.restore_state(&name).await {
            Ok(_) if relaunch => Some(format!("the named session \"{name}\" was restored")),
            Ok(_) => None,
            Err(error) if relaunch => Some(format!(
                "the named session \"{name}\" could not be restored: {error}"
            )),
            Err(error) => {
                self.watch.note(format!(
                    "The session \"{name}\" (--session) could not be restored: {error}"
                ));
                None
            }
        }
    }
}
