//! Waiting for a page to settle after an action: for what the action caused, not for fixed
//! quiet periods. Before the action, a tracker in the page is armed: from then on it counts
//! the timers (`setTimeout`), `fetch`es and `XMLHttpRequest`s the page starts, notes every
//! DOM mutation, and hears of cross-document navigations (the Navigation API's `navigate`).
//! After the action the host waits until that work is done (plus a short grace for the
//! promise chains it feeds), until a navigation it started has loaded, or, as the
//! reference does, until the DOM has been quiet for 100 ms; whichever comes first, within the
//! reference's upper bounds. So an action that changes nothing returns at once instead of
//! after the reference's ~200 ms, and one that fetches data waits exactly until it arrived.
//! An action that started no tracked work and changed nothing is settled once the page has
//! rendered a frame after it: the frame runs what the action may have queued untracked
//! (`requestAnimationFrame` callbacks, observers), and a change they make extends the wait.

use super::PageLink;
use crate::browser::cdp::{cdp, send};
use chromiumoxide::cdp::browser_protocol::inspector::EventTargetCrashed;
use chromiumoxide::cdp::browser_protocol::page::{EventFrameStartedLoading, EventLoadEventFired};
use futures::StreamExt;
use serde_json::{Value, json};
use std::future::Future;
use std::time::Duration;

/// How long the DOM must stay unchanged (× the CPU slowdown), and the cap on that wait.
/// The answer of an action whose page's renderer ended under it. Without it the action's
/// command waits out its timeout: a dead renderer never answers.
pub const PAGE_CRASHED: &str = "The page crashed during this action: its renderer process ended. Reload it with navigate_page (type \"reload\") or open another page with new_page.";

const DOM_QUIET_MS: f64 = 100.0;
const DOM_QUIET_CAP_MS: f64 = 3000.0;
/// How long a navigation the action started may take to load (× the network slowdown).
const NAVIGATION_LOAD_MS: f64 = 3000.0;
/// After the last tracked task ended or the last mutation, how long nothing may happen before
/// the page counts as settled (× the CPU slowdown): room for the promise chains a finished
/// `fetch` feeds (reading its body, then writing the DOM).
const IDLE_GRACE_MS: f64 = 25.0;

/// Installs the tracker once per document (kept on a non-enumerable symbol property) and arms
/// it: work started from now on is counted. The page can see and tamper with it; at worst
/// that ends the wait early or lets it run into the cap, as a page can do to the reference's
/// observer.
const ARM_SCRIPT: &str = r#"(cap => {
  const key = Symbol.for('devtools-mcp.settle');
  let t = window[key];
  if (!t) {
    const setT = window.setTimeout.bind(window), clearT = window.clearTimeout.bind(window);
    const raf = window.requestAnimationFrame?.bind(window);
    t = { setT, clearT, raf, armed: false, gen: 0, pending: 0, started: 0, deferred: 0, last: 0,
          lastDone: 0, armedAt: 0, navigating: false, wake: null, timers: new Map() };
    // Work left for a later frame or idle time is not awaited, only noted: an action that
    // queued some does not take the one-frame path.
    for (const name of ['requestAnimationFrame', 'requestIdleCallback']) {
      const original = window[name]?.bind(window);
      if (original) window[name] = function (...args) { if (t.armed) t.deferred++; return original(...args); };
    }
    const done = gen => { if (gen === t.gen) { t.pending--; t.lastDone = performance.now(); if (t.wake) t.wake(); } };
    const track = () => { t.pending++; t.started++; return t.gen; };
    window.setTimeout = function (fn, delay, ...args) {
      if (!t.armed || typeof fn !== 'function' || !((Number(delay) || 0) <= t.cap)) return setT(fn, delay, ...args);
      const gen = track();
      const id = setT(function () { t.timers.delete(id); try { return fn.apply(this, args); } finally { done(gen); } }, delay);
      t.timers.set(id, gen);
      return id;
    };
    window.clearTimeout = function (id) {
      if (t.timers.has(id)) { const gen = t.timers.get(id); t.timers.delete(id); done(gen); }
      return clearT(id);
    };
    if (window.fetch) {
      const fetch = window.fetch;
      window.fetch = function (...args) {
        const answer = fetch.apply(this, args);
        if (t.armed) { const gen = track(); answer.then(() => done(gen), () => done(gen)); }
        return answer;
      };
    }
    if (window.XMLHttpRequest) {
      const send = XMLHttpRequest.prototype.send;
      XMLHttpRequest.prototype.send = function (...args) {
        if (t.armed) { const gen = track(); this.addEventListener('loadend', () => done(gen), { once: true }); }
        return send.apply(this, args);
      };
    }
    new MutationObserver(() => { t.last = performance.now(); if (t.wake) t.wake(); })
      .observe(document, { childList: true, subtree: true, attributes: true, characterData: true });
    window.navigation?.addEventListener('navigate', event => {
      if (t.armed && !event.destination.sameDocument && !event.downloadRequest) { t.navigating = true; if (t.wake) t.wake(); }
    });
    Object.defineProperty(window, key, { value: t });
  }
  t.cap = cap;
  t.gen++;
  t.pending = 0;
  t.started = 0;
  t.deferred = 0;
  t.timers.clear();
  t.navigating = false;
  t.armed = true;
  t.armedAt = t.lastDone = performance.now();
  t.last = 0;
  return true;
})"#;

/// Resolves with why the page counts as settled: `navigation` (the action started one),
/// `idle` (its tracked work is done and the page stayed still for the grace), `framed` (it
/// started nothing, changed nothing, and a frame has rendered since), `quiet` (no mutation
/// for the quiet period: the reference's rule), or `cap`. Without a tracker the document was
/// replaced: a navigation. A hidden page renders no frames; the grace bounds that wait.
const SETTLE_SCRIPT: &str = r#"((quiet, cap, grace) => new Promise(resolve => {
  const t = window[Symbol.for('devtools-mcp.settle')];
  if (!t || !t.armed) { resolve('navigation'); return; }
  let timer, framed = false;
  const since = performance.now();
  const finish = why => { t.armed = false; t.wake = null; t.clearT(timer); resolve(why); };
  // After the frame's callbacks and its rendering: a task queued from the next frame.
  if (t.raf) t.raf(() => t.setT(() => { framed = true; if (t.wake) t.wake(); }, 0));
  const check = () => {
    const now = performance.now();
    if (t.navigating) return finish('navigation');
    if (now - since >= cap) return finish('cap');
    const still = now - Math.max(t.last, since);
    if (still >= quiet) return finish('quiet');
    if (framed && t.started === 0 && t.deferred === 0 && t.last === 0) return finish('framed');
    const idle = now - Math.max(t.last, t.lastDone);
    if (t.pending <= 0 && idle >= grace) return finish('idle');
    const next = Math.min(quiet - still, t.pending <= 0 ? grace - idle : Infinity, cap - (now - since));
    t.clearT(timer);
    timer = t.setT(check, Math.max(0, next));
  };
  t.wake = check;
  check();
}))"#;

/// Resolves once the DOM had no mutation for `quiet` ms, or after `cap` ms: the reference's
/// wait, used for a new document after a navigation.
const DOM_QUIET_SCRIPT: &str = r#"((quiet, cap) => new Promise(resolve => {
  let timer;
  const done = () => { observer.disconnect(); clearTimeout(limit); clearTimeout(timer); resolve(true); };
  const observer = new MutationObserver(() => { clearTimeout(timer); timer = setTimeout(done, quiet); });
  observer.observe(document, {childList: true, subtree: true, attributes: true, characterData: true});
  timer = setTimeout(done, quiet);
  const limit = setTimeout(done, cap);
}))"#;

/// The waits of one page, scaled by its CPU and network emulation as the reference scales them.
struct Waits {
    navigation_load: Duration,
    dom_quiet_ms: u64,
    dom_cap_ms: u64,
    idle_grace_ms: u64,
}

impl Waits {
    fn of(page: &PageLink) -> Waits {
        let cpu = page.emulation().cpu_multiplier().max(1.0);
        let network = page.emulation().network_multiplier().max(1.0);
        let millis = |value: f64| value.round() as u64;
        Waits {
            navigation_load: Duration::from_millis(millis(NAVIGATION_LOAD_MS * network)),
            dom_quiet_ms: millis(DOM_QUIET_MS * cpu),
            dom_cap_ms: millis(DOM_QUIET_CAP_MS * cpu),
            idle_grace_ms: millis(IDLE_GRACE_MS * cpu),
        }
    }
}

/// What the wait after an action found.
#[derive(Debug, PartialEq)]
enum Settled {
    /// The action's work is done (or the DOM went quiet, or the cap passed).
    Still,
    /// The action started a navigation.
    Navigation,
    /// The page could not be asked (no tracker): wait the reference's way.
    Unknown,
}

/// Runs `action`, then waits for what it caused. Returns the action's value (none when a dialog
/// it opened stalled the page) and the URL the page navigated to, if it changed.
pub async fn after_action<T>(
    page: &PageLink,
    action: impl Future<Output = Result<T, String>>,
) -> Result<(Option<T>, Option<String>), String> {
    let url_before = page.url().await;
    let main_frame = page.page.mainframe().await.ok().flatten();
    let mut started_loading = page
        .page
        .event_listener::<EventFrameStartedLoading>()
        .await
        .map_err(|error| error.to_string())?;
    let mut loads = page
        .page
        .event_listener::<EventLoadEventFired>()
        .await
        .map_err(|error| error.to_string())?;
    let mut crashes = page
        .page
        .event_listener::<EventTargetCrashed>()
        .await
        .map_err(|error| error.to_string())?;
    let mut dialogs = page.dialog_watch();
    let waits = Waits::of(page);
    let armed = arm(page, &waits).await;

    let value = tokio::select! {
        result = action => Some(result?),
        _ = dialogs.wait_for(Option::is_some) => None,
        Some(_) = crashes.next() => return Err(PAGE_CRASHED.to_string()),
    };
    if value.is_some() && page.dialog().is_none() {
        let navigation_started = async {
            while let Some(event) = started_loading.next().await {
                if main_frame
                    .as_ref()
                    .is_none_or(|frame| *frame == event.frame_id)
                {
                    return;
                }
            }
            std::future::pending::<()>().await;
        };
        let settled = async {
            match armed {
                true => settle(page, &waits).await,
                false => Settled::Unknown,
            }
        };
        let outcome = tokio::select! {
            _ = navigation_started => Settled::Navigation,
            settled = settled => settled,
        };
        match outcome {
            Settled::Still => {}
            Settled::Unknown => dom_quiet(page, &waits).await,
            Settled::Navigation => {
                let mut dialogs = page.dialog_watch();
                tokio::select! {
                    _ = tokio::time::timeout(waits.navigation_load, loads.next()) => {}
                    _ = dialogs.wait_for(Option::is_some) => {}
                }
                if page.dialog().is_none() {
                    dom_quiet(page, &waits).await;
                }
            }
        }
    }
    let url_after = page.url().await;
    let navigated = (url_after != url_before).then_some(url_after);
    Ok((value, navigated))
}

/// Arms the page's tracker; false when the page could not run it.
async fn arm(page: &PageLink, waits: &Waits) -> bool {
    let expression = format!("({ARM_SCRIPT})({})", waits.dom_cap_ms);
    let armed = send(
        &page.page,
        cdp(
            "Runtime.evaluate",
            json!({ "expression": expression, "returnByValue": true }),
        ),
        Duration::from_secs(2),
    )
    .await;
    matches!(armed, Ok(answer) if answer["result"]["value"] == Value::Bool(true))
}

/// Waits for the armed tracker to call the page settled; a dialog ends the wait early.
async fn settle(page: &PageLink, waits: &Waits) -> Settled {
    let mut dialogs = page.dialog_watch();
    let expression = format!(
        "{SETTLE_SCRIPT}({}, {}, {})",
        waits.dom_quiet_ms, waits.dom_cap_ms, waits.idle_grace_ms
    );
    let wait = send(
        &page.page,
        cdp(
            "Runtime.evaluate",
            json!({ "expression": expression, "awaitPromise": true, "returnByValue": true }),
        ),
        Duration::from_millis(waits.dom_cap_ms + 1000),
    );
    tokio::select! {
        answer = wait => match answer {
            Ok(answer) => match answer["result"]["value"].as_str() {
                Some("navigation") => Settled::Navigation,
                Some(_) => Settled::Still,
                // The page broke the tracker (it threw): wait the reference's way.
                None => Settled::Unknown,
            },
            // The document went away while waiting (its context was destroyed).
            Err(_) => Settled::Navigation,
        },
        _ = dialogs.wait_for(Option::is_some) => Settled::Still,
    }
}

/// Waits for a quiet DOM; a dialog or a navigation ends the wait early.
async fn dom_quiet(page: &PageLink, waits: &Waits) {
    let mut dialogs = page.dialog_watch();
    let expression = format!(
        "{DOM_QUIET_SCRIPT}({}, {})",
        waits.dom_quiet_ms, waits.dom_cap_ms
    );
    let wait = send(
        &page.page,
        cdp(
            "Runtime.evaluate",
            json!({ "expression": expression, "awaitPromise": true }),
        ),
        Duration::from_millis(waits.dom_cap_ms + 1000),
    );
    tokio::select! {
        _ = wait => {}
        _ = dialogs.wait_for(Option::is_some) => {}
    }
}

/// Runs `work`, handling any dialog that opens meanwhile as `action` says (`accept`, the
/// default, `dismiss`, or a prompt text to accept with), so the work can finish.
pub async fn handling_dialogs<T>(
    page: &PageLink,
    action: Option<&str>,
    work: impl Future<Output = T>,
) -> T {
    let (accept, prompt_text) = match action {
        None | Some("accept") => (true, None),
        Some("dismiss") => (false, None),
        Some(text) => (true, Some(text)),
    };
    let mut dialogs = page.dialog_watch();
    tokio::pin!(work);
    loop {
        let opened = tokio::select! {
            value = &mut work => return value,
            changed = dialogs.wait_for(Option::is_some) => changed.is_ok(),
        };
        if !opened {
            return work.await;
        }
        if let Err(error) = page.handle_dialog(accept, prompt_text).await {
            tracing::debug!(%error, "could not handle a dialog during evaluation");
        }
        // Let the closed event reset the state before watching again.
        page.wait_dialog_closed(Duration::from_millis(500)).await;
    }
}
