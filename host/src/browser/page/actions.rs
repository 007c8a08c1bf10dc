//! What tools do to a page besides input (`prepared`): evaluate, wait for text, resize,
//! emulate and prepare captures. Each action that can change the page waits for it to settle
//! (see `settle`).

use super::emulation::EmulateRequest;
use super::screenshot::ScreenshotRequest;
use super::settle;
use super::{McpPage, PageLink};
use crate::browser::cdp::{CdpError, cdp, send, timeouts};
use serde_json::{Value, json};
use std::time::Duration;

impl McpPage {
    /// Sets the whole emulation state (the reference's semantics) and keeps it for the
    /// `Emulating ...` lines and the timeouts.
    pub async fn emulate(&mut self, request: EmulateRequest) -> Result<(), String> {
        let next = self.emulation.next(request)?;
        next.apply_after(&self.emulation, &self.page).await?;
        self.emulation = next;
        Ok(())
    }

    /// A checked screenshot request, its element resolved: what [`super::screenshot::capture`] needs
    /// besides the page's handles, so the capture can run with the session released.
    pub async fn screenshot_request(
        &self,
        format: Option<String>,
        quality: Option<u32>,
        uid: Option<&str>,
        full_page: bool,
    ) -> Result<ScreenshotRequest, String> {
        let mut request = ScreenshotRequest {
            format,
            quality,
            element_object_id: None,
            full_page,
            uid: uid.map(String::from),
        };
        request.validate()?;
        if let Some(uid) = uid {
            request.element_object_id = Some(self.resolve_element(uid).await?);
        }
        Ok(request)
    }

    /// Evaluates a script expression (awaiting a promise) and returns its JSON text, as the
    /// slim `evaluate` does.
    pub async fn evaluate_expression(&self, script: &str) -> Result<String, String> {
        let params = json!({ "expression": script, "awaitPromise": true, "returnByValue": true });
        let evaluation = run_script(&self.page, "Runtime.evaluate", params);
        let result = settle::handling_dialogs(self, None, evaluation).await?;
        if let Some(exception) = result.get("exceptionDetails") {
            return Err(exception_message(exception));
        }
        Ok(match result["result"].get("value") {
            Some(value) => value.to_string(),
            None => "undefined".to_string(),
        })
    }

    /// Waits until any of `texts` is on the page, at most `timeout` (the reference's default
    /// action timeout when none).
    pub async fn wait_for_text(&self, texts: &[String], timeout: Duration) -> Result<(), String> {
        wait_for_text(&self.page, texts, timeout).await
    }

    /// Makes the content area `width` x `height`: the window is un-maximized, then sized so
    /// that its inner size matches.
    pub async fn resize(&self, width: u32, height: u32) -> Result<(), String> {
        let window = send(
            &self.page,
            cdp("Browser.getWindowForTarget", json!({})),
            timeouts::COMMAND,
        )
        .await
        .map_err(|error| error.to_string())?;
        let window_id = window["windowId"].clone();
        if window["bounds"]["windowState"].as_str() != Some("normal") {
            let normal = json!({ "windowId": window_id, "bounds": { "windowState": "normal" } });
            let _normal = send(
                &self.page,
                cdp("Browser.setWindowBounds", normal),
                timeouts::COMMAND,
            )
            .await;
        }
        let inner = send(
            &self.page,
            cdp(
                "Runtime.evaluate",
                json!({ "expression": "[window.outerWidth - window.innerWidth, window.outerHeight - window.innerHeight]", "returnByValue": true }),
            ),
            timeouts::COMMAND,
        )
        .await
        .map_err(|error| error.to_string())?;
        let frame = |index: usize| inner["result"]["value"][index].as_u64().unwrap_or(0);
        let bounds = json!({
            "windowId": window_id,
            "bounds": { "width": u64::from(width) + frame(0), "height": u64::from(height) + frame(1) },
        });
        send(
            &self.page,
            cdp("Browser.setWindowBounds", bounds),
            timeouts::COMMAND,
        )
        .await
        .map(|_| ())
        .map_err(|error| error.to_string())
    }

    /// A function declaration with elements (by uid) as arguments, ready to run on the page's
    /// link ([`PageLink::evaluate`]): the uids are resolved now, while the session is held.
    pub async fn evaluation(
        &self,
        function: &str,
        arg_uids: &[String],
    ) -> Result<Evaluation, String> {
        let mut object_ids = Vec::with_capacity(arg_uids.len());
        for uid in arg_uids {
            object_ids.push(self.resolve_uid(uid).await?);
        }
        let wrapper = format!(
            "async function(...args) {{ return JSON.stringify(await ({function})(...args)); }}"
        );
        // Without element arguments, one `Runtime.evaluate` in the page's current context:
        // a remote reference to `globalThis` taken first would die with the document if the
        // page navigated in between ("Cannot find context with specified id").
        Ok(match object_ids.first() {
            Some(first) => Evaluation {
                method: "Runtime.callFunctionOn",
                params: json!({
                    "functionDeclaration": wrapper,
                    "objectId": first,
                    "arguments": object_ids.iter().map(|id| json!({ "objectId": id })).collect::<Vec<_>>(),
                    "awaitPromise": true,
                    "returnByValue": true,
                }),
            },
            None => Evaluation {
                method: "Runtime.evaluate",
                params: json!({
                    "expression": format!("({wrapper})()"),
                    "awaitPromise": true,
                    "returnByValue": true,
                }),
            },
        })
    }
}

/// A script to run in a page, its element arguments resolved ([`McpPage::evaluation`]).
pub struct Evaluation {
    method: &'static str,
    params: Value,
}

impl PageLink {
    /// Runs an evaluation (see [`run_script`]) and returns the JSON text of its awaited result,
    /// then waits for the page to settle.
    pub async fn evaluate(
        &self,
        evaluation: Evaluation,
        dialog_action: Option<&str>,
        wait_for_stable_dom: bool,
    ) -> Result<(String, Option<String>), String> {
        let evaluation = run_script(&self.page, evaluation.method, evaluation.params);
        let evaluation = settle::handling_dialogs(self, dialog_action, evaluation);
        let (result, navigated) = if wait_for_stable_dom {
            settle::after_action(self, evaluation).await?
        } else {
            (Some(evaluation.await?), None)
        };
        let result = result.ok_or("A dialog opened during the evaluation and is still open.")?;
        if let Some(exception) = result.get("exceptionDetails") {
            return Err(exception_message(exception));
        }
        let text = match &result["result"]["value"] {
            Value::String(json) => json.clone(),
            _ => "undefined".to_string(),
        };
        Ok((text, navigated))
    }
}

/// Runs a script command (`Runtime.evaluate` or `Runtime.callFunctionOn`) with the time page work
/// gets. A script still running then is stopped, so the page answers the next call instead of
/// spinning on.
async fn run_script(
    page: &chromiumoxide::Page,
    method: &'static str,
    params: Value,
) -> Result<Value, String> {
    match send(page, cdp(method, params), timeouts::PAGE_WORK).await {
        Ok(answer) => Ok(answer),
        Err(error @ CdpError::Timeout { .. }) => {
            let stop = cdp("Runtime.terminateExecution", json!({}));
            Err(match send(page, stop, timeouts::COMMAND).await {
                Ok(_) => format!("{error} The script was stopped; the page answers again."),
                Err(_) => format!("{error} The page does not answer; close it with close_page."),
            })
        }
        Err(error) => Err(error.to_string()),
    }
}

/// Resolves `true` once any of the texts is on the page (text or accessible label, in the
/// document and its same-origin frames), `false` after the timeout. Event-driven: it re-checks
/// on DOM mutations instead of polling.
const WAIT_FOR_TEXT_SCRIPT: &str = r#"(texts, timeout) => new Promise(resolve => {
  const found = doc => {
    if (!doc || !doc.body) return false;
    const text = doc.body.innerText || '';
    if (texts.some(value => text.includes(value))) return true;
    for (const element of doc.querySelectorAll('[aria-label],[alt],[title],input[value]')) {
      const label = element.getAttribute('aria-label') || element.getAttribute('alt') || element.getAttribute('title') || element.value;
      if (label && texts.some(value => label.includes(value))) return true;
    }
    for (const frame of doc.querySelectorAll('iframe,frame')) {
      try { if (found(frame.contentDocument)) return true; } catch (error) {}
    }
    return false;
  };
  if (found(document)) return resolve(true);
  const observer = new MutationObserver(() => { if (found(document)) { observer.disconnect(); clearTimeout(timer); resolve(true); } });
  observer.observe(document, {childList: true, subtree: true, characterData: true, attributes: true});
  const timer = setTimeout(() => { observer.disconnect(); resolve(false); }, timeout);
})"#;

/// The reference replaces the reason of a failed hover, click or fill with this text; the reason
/// goes to the log.
pub(super) fn interaction_failed(uid: &str, reason: &str) -> String {
    tracing::debug!(uid, reason, "interaction failed");
    format!(
        "Failed to interact with the element with uid {uid}. The element did not become interactive within the configured timeout."
    )
}

/// The message of a thrown error, as Puppeteer reports it (`x is not defined`).
pub fn exception_message(details: &Value) -> String {
    let description = details["exception"]["description"]
        .as_str()
        .or_else(|| details["text"].as_str())
        .unwrap_or("Evaluation failed");
    let first_line = description.lines().next().unwrap_or(description);
    match first_line.split_once(": ") {
        Some((name, message)) if name.ends_with("Error") => message.to_string(),
        _ => first_line.to_string(),
    }
}

/// Waits until any of `texts` is on `page`, at most `timeout`. Needs nothing of the session
/// (a page handle of its own), so it can run with the session released.
pub async fn wait_for_text(
    page: &chromiumoxide::Page,
    texts: &[String],
    timeout: Duration,
) -> Result<(), String> {
    let deadline = tokio::time::Instant::now() + timeout;
    let texts = serde_json::to_string(texts).map_err(|error| error.to_string())?;
    loop {
        let remaining = deadline.saturating_duration_since(tokio::time::Instant::now());
        let expression = format!(
            "({WAIT_FOR_TEXT_SCRIPT})({texts}, {})",
            remaining.as_millis()
        );
        let answer = send(
            page,
            cdp(
                "Runtime.evaluate",
                json!({ "expression": expression, "awaitPromise": true, "returnByValue": true }),
            ),
            remaining + Duration::from_secs(1),
        )
        .await;
        match answer {
            Ok(value) if value["result"]["value"] == Value::Bool(true) => return Ok(()),
            // The document was replaced while waiting: look again in the new one.
            Ok(value) if value.get("exceptionDetails").is_some() => {}
            Ok(_) => {}
            Err(_) => {}
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(format!("Timed out after waiting {}ms", timeout.as_millis()));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exception_messages_drop_the_error_name() {
        let details = json!({"exception": {"description": "ReferenceError: nope is not defined\n    at <anonymous>:1:1"}});
        assert_eq!(exception_message(&details), "nope is not defined");
        let details = json!({"exception": {"description": "boom"}, "text": "Uncaught"});
        assert_eq!(exception_message(&details), "boom");
        let details = json!({"text": "Uncaught"});
        assert_eq!(exception_message(&details), "Uncaught");
    }
}
