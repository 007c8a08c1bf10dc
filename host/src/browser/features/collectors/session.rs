//! The collecting session (commands through `Target.sendMessageToTarget`) and the task that
//! reads console arguments and exception causes back from the browser.

use super::Shared;
use crate::browser::cdp::{cdp, timeouts};
use chromiumoxide::cdp::browser_protocol::target::EventReceivedMessageFromTarget;
use chromiumoxide::listeners::EventStream;
use devtools_collectors::{
    Arg, Pending, Symbolized, description_message, exception_message, format_value, primitive_arg,
};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// Reading back a console argument must not stall behind a blocked page for long.
const RESOLVE_TIMEOUT: Duration = timeouts::PROBE;

/// A session attached to the page for the collectors alone.
pub(super) struct Session {
    page: chromiumoxide::Page,
    id: String,
    next_id: AtomicU64,
    waiting: Mutex<HashMap<u64, oneshot::Sender<Result<Value, String>>>>,
    /// This session's `Debugger` id, to fetch async stacks it owns.
    debugger_id: OnceLock<String>,
}

impl Session {
    /// Attaches (non-flat) and returns the session with the stream its messages arrive on.
    pub async fn attach(
        page: &chromiumoxide::Page,
    ) -> Result<(Session, EventStream<EventReceivedMessageFromTarget>), String> {
        let events = page
            .event_listener::<EventReceivedMessageFromTarget>()
            .await
            .map_err(|error| error.to_string())?;
        let params = json!({"targetId": page.target_id().as_ref(), "flatten": false});
        let attached = tokio::time::timeout(
            timeouts::COMMAND,
            page.execute(cdp("Target.attachToTarget", params)),
        )
        .await
        .map_err(|_| "The browser did not answer Target.attachToTarget in time.".to_string())?
        .map_err(|error| error.to_string())?;
        let id = attached.result["sessionId"]
            .as_str()
            .ok_or("Target.attachToTarget gave no session id.")?;
        let session = Session {
            page: page.clone(),
            id: id.to_string(),
            next_id: AtomicU64::new(1),
            waiting: Mutex::new(HashMap::new()),
            debugger_id: OnceLock::new(),
        };
        Ok((session, events))
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn set_debugger_id(&self, id: Option<&str>) {
        if let Some(id) = id {
            let _ = self.debugger_id.set(id.to_string());
        }
    }

    /// Hands a command's answer to its sender; false when the message is an event.
    pub fn answer(&self, message: &Value) -> bool {
        let Some(id) = message.get("id").and_then(Value::as_u64) else {
            return false;
        };
        let waiter = self
            .waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&id);
        if let Some(waiter) = waiter {
            let answer = match message.get("error") {
                Some(error) => Err(error["message"]
                    .as_str()
                    .unwrap_or("protocol error")
                    .to_string()),
                None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
            };
            let _ = waiter.send(answer);
        }
        true
    }

    /// Detaches in the background (called on drop).
    pub fn detach(&self) {
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let page = self.page.clone();
            let detach = cdp("Target.detachFromTarget", json!({"sessionId": self.id}));
            runtime.spawn(async move {
                let _ = tokio::time::timeout(timeouts::COMMAND, page.execute(detach)).await;
            });
        }
    }

    /// Sends one command on the collecting session and waits (at most `timeout`) for its answer.
    pub async fn send(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, String> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (sender, answer) = oneshot::channel();
        self.waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, sender);
        let message = json!({"id": id, "method": method, "params": params}).to_string();
        let command = cdp(
            "Target.sendMessageToTarget",
            json!({"sessionId": self.id, "message": message}),
        );
        let outcome = tokio::time::timeout(timeout, async {
            self.page
                .execute(command)
                .await
                .map_err(|error| error.to_string())?;
            answer
                .await
                .map_err(|_| "The collecting session closed.".to_string())?
        })
        .await;
        self.waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&id);
        outcome.unwrap_or_else(|_| Err(format!("The browser did not answer {method} in time.")))
    }
}

/// Reads back console arguments and exception causes, one after another.
pub(super) async fn resolve(shared: Arc<Shared>, mut jobs: mpsc::UnboundedReceiver<Pending>) {
    while let Some(job) = jobs.recv().await {
        shared.backlog.fetch_sub(1, Ordering::Relaxed);
        match job {
            Pending::Args { id, objects } => {
                for (index, object) in objects {
                    let arg = if object["type"] == "object" && object["subtype"] == "error" {
                        Arg::Error(symbolize(&shared.session, &object, 0).await)
                    } else {
                        json_value(&shared.session, &object).await
                    };
                    shared.state().set_arg(id, index, arg);
                }
            }
            Pending::Stack { id, stack } => {
                let stack = fetch_parents(&shared.session, stack).await;
                shared.state().set_stack(id, stack);
            }
            Pending::Cause { id, exception } => {
                if let Some(cause) = lookup_cause(&shared.session, &exception).await {
                    let cause = symbolize(&shared.session, &cause, 1).await;
                    shared.state().set_cause(id, cause);
                }
            }
        }
    }
}

/// puppeteer's `jsonValue()`, printed as the reference's `formatArg`.
async fn json_value(session: &Session, object: &Value) -> Arg {
    let params = json!({"functionDeclaration": "object => object", "objectId": object["objectId"],
                        "arguments": [{"objectId": object["objectId"]}], "returnByValue": true, "awaitPromise": true});
    let Ok(result) = session
        .send("Runtime.callFunctionOn", params, RESOLVE_TIMEOUT)
        .await
    else {
        return Arg::Unavailable;
    };
    let value = &result["result"];
    if result.get("exceptionDetails").is_some() {
        Arg::Unavailable
    } else if value.get("unserializableValue").is_some() {
        Arg::Text(primitive_arg(value))
    } else {
        value
            .get("value")
            .map_or(Arg::Unavailable, |value| Arg::Text(format_value(value)))
    }
}

/// The reference's `SymbolizedError.fromError`: the error's details, stack and causes.
async fn symbolize(session: &Session, error: &Value, depth: usize) -> Symbolized {
    let details = if (error["type"] == "object" || error["subtype"] == "error")
        && error.get("objectId").is_some()
    {
        let params = json!({"errorObjectId": error["objectId"]});
        let result = session
            .send("Runtime.getExceptionDetails", params, RESOLVE_TIMEOUT)
            .await
            .ok();
        result.and_then(|result| result.get("exceptionDetails").cloned())
    } else {
        None
    };
    let Some(details) = details else {
        return Symbolized {
            message: description_message(error),
            stack: None,
            cause: None,
        };
    };
    let mut cause = None;
    if depth < 8
        && let Some(exception) = details.get("exception")
        && let Some(found) = lookup_cause(session, exception).await
    {
        cause = Some(Box::new(
            Box::pin(symbolize(session, &found, depth + 1)).await,
        ));
    }
    let stack = match details.get("stackTrace") {
        Some(stack) => Some(fetch_parents(session, stack.clone()).await),
        None => None,
    };
    Symbolized {
        message: exception_message(&details),
        stack,
        cause,
    }
}

/// Replaces `parentId` references along a stack's async chain with the stacks they name
/// (`Debugger.getStackTrace`), as DevTools' `iterateAsyncParents` does.
async fn fetch_parents(session: &Session, mut stack: Value) -> Value {
    let mut level = &mut stack;
    for _ in 0..32 {
        if level.get("parent").is_none() {
            let Some(parent_id) = level.get("parentId").cloned() else {
                break;
            };
            let own = parent_id["debuggerId"]
                .as_str()
                .is_none_or(|id| session.debugger_id.get().is_some_and(|own| own == id));
            let params = json!({"stackTraceId": parent_id});
            let fetched = if own {
                session
                    .send("Debugger.getStackTrace", params, RESOLVE_TIMEOUT)
                    .await
                    .ok()
            } else {
                None
            };
            match fetched.and_then(|result| result.get("stackTrace").cloned()) {
                Some(parent) => level["parent"] = parent,
                None => break,
            }
        }
        match level.get_mut("parent") {
            Some(parent) => level = parent,
            None => break,
        }
    }
    stack
}

/// The error's own `cause` property, when it has one.
async fn lookup_cause(session: &Session, error: &Value) -> Option<Value> {
    if error["type"] != "object" && error["subtype"] != "error" {
        return None;
    }
    let params = json!({"objectId": error.get("objectId")?});
    let properties = session
        .send("Runtime.getProperties", params, RESOLVE_TIMEOUT)
        .await
        .ok()?;
    let properties = properties["result"].as_array()?;
    properties
        .iter()
        .find(|property| property["name"] == "cause")?
        .get("value")
        .cloned()
}
