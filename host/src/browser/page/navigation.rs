//! Navigation: to a URL, back, forward or a reload, waiting for the load (or a back/forward
//! cache restore), with a `beforeunload` dialog on the way accepted or dismissed as asked.

use super::{Navigated, PageLink, Target};
use crate::browser::cdp::{CdpError, cdp, send, settle_events, timeouts};
use chromiumoxide::cdp::browser_protocol::page::{
    EventFrameNavigated, EventLoadEventFired, NavigationType,
};
use futures::StreamExt;
use serde_json::{Value, json};
use std::time::Duration;

impl PageLink {
    /// Navigates and waits for the load event; a `beforeunload` dialog on the way is accepted or
    /// dismissed as asked.
    pub async fn navigate(
        &self,
        target: Target,
        timeout: Option<Duration>,
        accept_before_unload: bool,
        init_script: Option<&str>,
    ) -> Result<Navigated, String> {
        let timeout = timeout.unwrap_or_else(|| self.emulation.navigation_timeout());
        // A tenant's URL is parsed and checked here, and the browser gets the checked text.
        let target = match (target, self.url_policy) {
            (Target::Url(url), Some(policy)) => Target::Url(
                policy
                    .check(&url)
                    .map_err(|refusal| refusal.to_string())?
                    .to_string(),
            ),
            (target, _) => target,
        };
        if let (Target::Url(url), Some(patterns)) = (&target, &self.url_patterns) {
            patterns.check_navigation(url)?;
        }
        if init_script.is_some() && self.url_policy.is_some_and(|policy| !policy.script) {
            return Err(
                "initScript runs script in the page, and this tenant may not run script (evaluate_script is not allowed for it).".into(),
            );
        }
        let script_id = match init_script {
            Some(source) => send(
                &self.page,
                cdp(
                    "Page.addScriptToEvaluateOnNewDocument",
                    json!({ "source": source }),
                ),
                timeouts::COMMAND,
            )
            .await
            .ok()
            .and_then(|value| value["identifier"].as_str().map(String::from)),
            None => None,
        };
        let outcome = self
            .navigate_and_wait(target, timeout, accept_before_unload)
            .await;
        if let Some(identifier) = script_id {
            let removed = send(
                &self.page,
                cdp(
                    "Page.removeScriptToEvaluateOnNewDocument",
                    json!({ "identifier": identifier }),
                ),
                timeouts::COMMAND,
            )
            .await;
            if let Err(error) = removed {
                tracing::debug!(%error, "failed to remove init script");
            }
        }
        let before_unload_handled = outcome?;
        Ok(Navigated {
            url: self.url().await,
            before_unload_handled,
        })
    }

    async fn navigate_and_wait(
        &self,
        target: Target,
        timeout: Duration,
        accept_before_unload: bool,
    ) -> Result<bool, String> {
        let mut loads = self
            .page
            .event_listener::<EventLoadEventFired>()
            .await
            .map_err(|error| error.to_string())?;
        // A page restored from the back/forward cache fires no load event.
        let mut restores = self
            .page
            .event_listener::<EventFrameNavigated>()
            .await
            .map_err(|error| error.to_string())?;
        let mut dialogs = self.dialog_watch();
        let mut before_unload_handled = false;
        // The commands get a second more than the navigation, so a page that does not answer
        // ends in the reference's "Navigation timeout" below, not in a protocol timeout.
        let command_timeout = timeout.saturating_add(Duration::from_secs(1));
        let start = async {
            let started = match target {
                Target::Url(url) => {
                    let result = self.send_navigate(&url, command_timeout).await?;
                    if let Some(error) =
                        result["errorText"].as_str().filter(|text| !text.is_empty())
                    {
                        return Err(format!("{error} at {url}"));
                    }
                    // A same-document navigation has no loader and no load event; what the
                    // page's own session heard before the answer (its new URL) is read before
                    // the caller asks for the URL.
                    let new_document = result.get("loaderId").is_some_and(|id| !id.is_null());
                    if !new_document && let Err(error) = settle_events(&self.page).await {
                        tracing::debug!(%error, "the page did not settle after navigating");
                    }
                    new_document
                }
                Target::Back | Target::Forward => {
                    let offset = if matches!(target, Target::Back) {
                        -1
                    } else {
                        1
                    };
                    self.go_in_history(offset, command_timeout).await?
                }
                Target::Reload { ignore_cache } => {
                    send(
                        &self.page,
                        cdp("Page.reload", json!({ "ignoreCache": ignore_cache })),
                        command_timeout,
                    )
                    .await
                    .map_err(|error| error.to_string())?;
                    true
                }
            };
            Ok::<bool, String>(started)
        };
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(start, deadline);
        let mut waiting_for_load = false;
        loop {
            tokio::select! {
                started = &mut start, if !waiting_for_load => {
                    if !started? {
                        return Ok(before_unload_handled);
                    }
                    waiting_for_load = true;
                }
                _ = loads.next(), if waiting_for_load => return Ok(before_unload_handled),
                Some(navigated) = restores.next(), if waiting_for_load => {
                    let main = navigated.frame.parent_id.is_none();
                    if main && navigated.r#type == NavigationType::BackForwardCacheRestore {
                        return Ok(before_unload_handled);
                    }
                }
                changed = dialogs.changed() => {
                    if changed.is_err() {
                        return Err("The page was closed.".into());
                    }
                    let dialog = dialogs.borrow_and_update().clone();
                    match dialog {
                        Some(dialog) if dialog.kind == "beforeunload" => {
                            self.handle_dialog(accept_before_unload, None).await?;
                            before_unload_handled = true;
                            if !accept_before_unload {
                                return Ok(true);
                            }
                        }
                        // Another dialog stalls the page; report it rather than time out.
                        Some(_) => return Ok(before_unload_handled),
                        None => {}
                    }
                }
                _ = &mut deadline => {
                    return Err(format!("Navigation timeout of {} ms exceeded", timeout.as_millis()));
                }
            }
        }
    }

    /// `Page.navigate` on the page's own session of the thin connection, so that its answer
    /// comes back as soon as the browser gives it: chromiumoxide holds the answer to a
    /// `Page.navigate` sent through it until the frame's next load, which a same-document
    /// navigation (`about:blank` to `about:blank#x`) never has, and queues every later
    /// navigation of the page behind it. Without the thin connection, through chromiumoxide.
    async fn send_navigate(&self, url: &str, timeout: Duration) -> Result<Value, String> {
        let params = json!({ "url": url });
        let thin = async {
            let client = self.raw.client().await?;
            let session = client
                .session(self.page.target_id().as_ref(), timeouts::COMMAND)
                .await?;
            Ok::<_, CdpError>((client, session))
        };
        match thin.await {
            Ok((client, session)) => {
                let result = client
                    .call(Some(&session), "Page.navigate", params, timeout)
                    .await
                    .and_then(|reply| reply.result())
                    .map_err(|error| error.to_string())?;
                Ok(result)
            }
            Err(error) => {
                tracing::debug!(%error, "navigating through chromiumoxide instead");
                send(&self.page, cdp("Page.navigate", params), timeout)
                    .await
                    .map_err(|error| error.to_string())
            }
        }
    }

    /// Moves `offset` entries in the history; false when there is no such entry.
    async fn go_in_history(&self, offset: i64, timeout: Duration) -> Result<bool, String> {
        let history = send(
            &self.page,
            cdp("Page.getNavigationHistory", json!({})),
            timeout,
        )
        .await
        .map_err(|error| error.to_string())?;
        let current = history["currentIndex"].as_i64().unwrap_or(0);
        let Some(entry) = history["entries"]
            .as_array()
            .and_then(|entries| entries.get(usize::try_from(current + offset).ok()?))
        else {
            return Ok(false);
        };
        send(
            &self.page,
            cdp(
                "Page.navigateToHistoryEntry",
                json!({ "entryId": entry["id"] }),
            ),
            timeout,
        )
        .await
        .map_err(|error| error.to_string())?;
        Ok(true)
    }
}
