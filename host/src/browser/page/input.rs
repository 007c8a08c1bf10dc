//! The input actions behind `hover`, `fill`, `fill_form`, `type_text`, `press_key`, `drag` and
//! `upload_file`, done the way the reference's Puppeteer does them so pages see the same events.
//!
//! Elements arrive as Runtime object ids; resolving snapshot uids and waiting for the page to
//! settle afterwards is the caller's job. Every call starts with no key or mouse button held,
//! like Puppeteer between tool calls, and releases whatever it pressed, even when it fails.

mod keyboard;

pub use keyboard::parse_key;

use crate::browser::cdp::raw::RawLink;
use crate::browser::cdp::run;
use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::page::EventFileChooserOpened;
use futures::StreamExt;
use keyboard::Keyboard;
use serde_json::{Value, json};
use std::time::Duration;

/// How long the reference waits for a click to open a file chooser.
const FILE_CHOOSER_TIMEOUT: Duration = Duration::from_secs(3);
/// The reference's pause between dragging over the target and dropping.
const DROP_PAUSE: Duration = Duration::from_millis(50);
/// Puppeteer's `typingThreshold`: shorter values are typed key by key, longer ones set at once.
const TYPING_THRESHOLD: usize = 100;
/// The reference's error when neither a direct upload nor a file chooser worked.
const UPLOAD_FAILED: &str = "Failed to upload file. The element could not accept the file directly, and clicking it did not trigger a file chooser.";
/// Puppeteer's error for an element without a visible box.
const NOT_CLICKABLE: &str = "Node is either not clickable or not an Element";

/// A viewport position in CSS pixels.
pub type Point = (f64, f64);

/// Moves the mouse to the element's centre, scrolling it into view first (Puppeteer's `hover`).
pub async fn hover(page: &Page, object_id: &str) -> Result<(), String> {
    let point = clickable_point(page, object_id).await?;
    mouse(page, "mouseMoved", point, 0).await
}

/// Puppeteer's `Locator.fill` as the reference drives it: a `<select>` picks the option whose
/// text (else value) is `value`; checkboxes, radios and `role=checkbox|radio|switch` take
/// `"true"`/`"false"` and are clicked when their state differs; text fields and contenteditable
/// are cleared (or kept when `value` extends them) and typed into, or set at once from 100
/// characters on; other inputs (date, range, ...) are set directly. Input and change events fire.
pub async fn fill(page: &Page, raw: &RawLink, object_id: &str, value: &str) -> Result<(), String> {
    let typed = value.encode_utf16().count() < TYPING_THRESHOLD;
    // One round trip classifies the element and, for a field typed into, clears and focuses it.
    let arguments = [json!(value), json!(typed)];
    let prepared = call_on(page, object_id, &prepare_fill(), &arguments).await?;
    match prepared[0].as_str().unwrap_or_default() {
        "disabled" => return Err("The element is disabled.".into()),
        "select" => {
            call_on(page, object_id, SELECT_OPTION, &[json!(value)]).await?;
        }
        "toggle" => {
            let wanted = match value {
                "true" => true,
                "false" => false,
                _ => {
                    return Err(format!(
                        "Checkboxes, radio boxes and toggles require \"true\" or \"false\" value, but {value} was used"
                    ));
                }
            };
            let state = call_on(page, object_id, TOGGLE_STATE, &[]).await?;
            if state.as_bool() != Some(wanted) {
                click(page, object_id).await?;
            }
        }
        "typeable" if typed => {
            let rest = prepared[1].as_str().unwrap_or_default();
            if !rest.is_empty() {
                let target = page.target_id().as_ref();
                Keyboard::new(raw, target).type_text(rest).await?;
            }
        }
        "typeable" | "other" => {
            call_on(page, object_id, FOCUS, &[]).await?;
            call_on(page, object_id, SET_VALUE, &[json!(value)]).await?;
        }
        _ => return Err("Element cannot be filled out.".into()),
    }
    Ok(())
}

/// Puppeteer's `keyboard.type` into whatever has focus: characters of the US layout are pressed
/// as keys (so `\n` is Enter), anything else goes through `Input.insertText`.
pub async fn type_text(page: &Page, raw: &RawLink, text: &str) -> Result<(), String> {
    Keyboard::new(raw, page.target_id().as_ref())
        .type_text(text)
        .await
}

/// Presses a combination such as `"Control+Shift+R"` or `"Control++"`: the modifiers go down in
/// order, the key is pressed, and the modifiers are released in reverse, even after a failure.
pub async fn press_key(page: &Page, raw: &RawLink, key: &str) -> Result<(), String> {
    let (modifiers, key) = parse_key(key)?;
    let mut keyboard = Keyboard::new(raw, page.target_id().as_ref());
    let mut held = Vec::new();
    let mut result = Ok(());
    for modifier in &modifiers {
        result = keyboard.down(modifier).await;
        if result.is_err() {
            break;
        }
        held.push(modifier);
    }
    if result.is_ok() {
        result = keyboard.press(&key).await;
    }
    for modifier in held.into_iter().rev() {
        result = result.and(keyboard.up(modifier).await);
    }
    result
}

/// Presses one key by its Puppeteer name, no combination: what `type_text`'s `submitKey` does.
/// Unknown names fail with Puppeteer's `Unknown key: "XXX"`.
pub async fn press_named_key(page: &Page, raw: &RawLink, key: &str) -> Result<(), String> {
    Keyboard::new(raw, page.target_id().as_ref())
        .press(key)
        .await
}

/// The reference's `from.drag(to)`, 50 ms, `to.drop(from)` without drag interception: hover the
/// source, press, hover the target, pause, (scroll the source into view,) hover the target
/// again, release. Chromium turns these mouse events into HTML5 drag and drop by itself, so no
/// `Input.dispatchDragEvent` is needed. The button is released even when a step fails.
pub async fn drag(page: &Page, from_object_id: &str, to_object_id: &str) -> Result<(), String> {
    let mut point = clickable_point(page, from_object_id).await?;
    mouse(page, "mouseMoved", point, 0).await?;
    mouse(page, "mousePressed", point, 1).await?;
    let dragged = async {
        point = clickable_point(page, to_object_id).await?;
        mouse(page, "mouseMoved", point, 1).await?;
        tokio::time::sleep(DROP_PAUSE).await;
        scroll_into_view(page, from_object_id).await?;
        point = clickable_point(page, to_object_id).await?;
        mouse(page, "mouseMoved", point, 1).await
    }
    .await;
    let released = mouse(page, "mouseReleased", point, 0).await;
    dragged.and(released)
}

/// Sets the files of an `<input type=file>`. For any other element (a styled button that opens a
/// hidden input), clicks it and fills the file chooser that opens within 3 s, like the reference.
/// Relative paths resolve against the current directory, as Puppeteer does.
pub async fn upload_files(page: &Page, object_id: &str, paths: &[String]) -> Result<(), String> {
    if set_input_files(page, object_id, paths).await.is_ok() {
        return Ok(());
    }
    let intercept = "Page.setInterceptFileChooserDialog";
    let through_chooser = async {
        let mut opened = page.event_listener::<EventFileChooserOpened>().await;
        let opened = opened.as_mut().map_err(|error| error.to_string())?;
        run(page, intercept, json!({ "enabled": true })).await?;
        let chooser = tokio::time::timeout(FILE_CHOOSER_TIMEOUT, async {
            click(page, object_id).await?;
            opened.next().await.ok_or("the page closed".to_string())
        });
        let chooser = chooser
            .await
            .map_err(|_| "no file chooser opened".to_string())??;
        let node = chooser.backend_node_id.as_ref().map(|id| *id.inner());
        let input = run(page, "DOM.resolveNode", json!({ "backendNodeId": node })).await?;
        let input = input["object"]["objectId"].as_str().unwrap_or_default();
        set_input_files(page, input, paths).await
    };
    let result = through_chooser.await;
    let _ = run(page, intercept, json!({ "enabled": false })).await;
    result.map_err(|_| UPLOAD_FAILED.to_string())
}

/// Puppeteer's `ElementHandle.uploadFile`: more than one file needs `multiple`.
async fn set_input_files(page: &Page, object_id: &str, paths: &[String]) -> Result<(), String> {
    let multiple = call_on(
        page,
        object_id,
        "function () { return this.multiple; }",
        &[],
    );
    if paths.len() > 1 && multiple.await? != Value::Bool(true) {
        return Err("Multiple file uploads only work with <input type=file multiple>".into());
    }
    if paths.is_empty() {
        return call_on(page, object_id, CLEAR_FILES, &[]).await.map(drop);
    }
    let absolute = |path: &String| match std::path::absolute(path) {
        Ok(absolute) => absolute.to_string_lossy().into_owned(),
        Err(_) => path.clone(),
    };
    let files: Vec<String> = paths.iter().map(absolute).collect();
    let params = json!({ "objectId": object_id, "files": files });
    run(page, "DOM.setFileInputFiles", params).await.map(drop)
}

/// Puppeteer's `ElementHandle.click`: move to the centre, press, release.
async fn click(page: &Page, object_id: &str) -> Result<(), String> {
    click_times(page, object_id, 1).await
}

/// Clicks the element's centre `count` times in a row (2 is a double click: the second press
/// carries clickCount 2, as Puppeteer's `count` option does).
pub async fn click_times(page: &Page, object_id: &str, count: u32) -> Result<(), String> {
    let point = clickable_point(page, object_id).await?;
    click_at(page, point, count).await
}

/// Clicks `count` times at a viewport point found by the caller (an element of a
/// cross-process iframe, located through its own target).
pub async fn click_at(page: &Page, point: Point, count: u32) -> Result<(), String> {
    mouse(page, "mouseMoved", point, 0).await?;
    for click_count in 1..=count.max(1) {
        for (kind, buttons) in [("mousePressed", 1), ("mouseReleased", 0)] {
            let mut event = mouse_event(kind, point, buttons);
            event["clickCount"] = json!(click_count);
            run(page, "Input.dispatchMouseEvent", event).await?;
        }
    }
    Ok(())
}

/// One mouse event with the left button; `buttons` is the pressed set after the event.
async fn mouse(page: &Page, kind: &str, point: Point, buttons: u32) -> Result<(), String> {
    run(
        page,
        "Input.dispatchMouseEvent",
        mouse_event(kind, point, buttons),
    )
    .await
    .map(drop)
}

fn mouse_event(kind: &str, (x, y): Point, buttons: u32) -> Value {
    let button = if kind == "mouseMoved" && buttons == 0 {
        "none"
    } else {
        "left"
    };
    let mut event = json!({ "type": kind, "modifiers": 0, "buttons": buttons, "button": button });
    event["x"] = json!(x);
    event["y"] = json!(y);
    if kind != "mouseMoved" {
        event["clickCount"] = json!(1);
    }
    event
}

/// Scrolls the element into view if it is not, falling back to `scrollIntoView()` where the
/// protocol command refuses (as Puppeteer does). Fails for detached nodes and non-elements.
async fn scroll_into_view(page: &Page, object_id: &str) -> Result<(), String> {
    call_on(page, object_id, ASSERT_CONNECTED, &[]).await?;
    let params = json!({ "objectId": object_id });
    if run(page, "DOM.scrollIntoViewIfNeeded", params)
        .await
        .is_err()
    {
        call_on(page, object_id, SCROLL_INTO_VIEW, &[]).await?;
    }
    Ok(())
}

/// Puppeteer's `clickablePoint`: the centre of the element's first box that keeps at least one
/// pixel in each direction once clipped to the viewport, after scrolling it into view.
async fn clickable_point(page: &Page, object_id: &str) -> Result<Point, String> {
    scroll_into_view(page, object_id).await?;
    let quads = run(
        page,
        "DOM.getContentQuads",
        json!({ "objectId": object_id }),
    )
    .await;
    let quads = quads.map_err(|_| NOT_CLICKABLE.to_string())?;
    let metrics = run(page, "Page.getLayoutMetrics", json!({})).await?;
    let viewport = &metrics["cssLayoutViewport"];
    let width = viewport["clientWidth"].as_f64().unwrap_or(f64::MAX);
    let height = viewport["clientHeight"].as_f64().unwrap_or(f64::MAX);
    let quads = quads["quads"].as_array().cloned().unwrap_or_default();
    let centre = |quad: &Value| {
        let points: Vec<f64> = quad.as_array()?.iter().filter_map(Value::as_f64).collect();
        let [x1, y1, x2, y2, x3, y3, x4, y4] = points[..] else {
            return None;
        };
        let (left, right) = clip([x1, x2, x3, x4], width);
        let (top, bottom) = clip([y1, y2, y3, y4], height);
        let visible = right - left >= 1.0 && bottom - top >= 1.0;
        visible.then_some(((left + right) / 2.0, (top + bottom) / 2.0))
    };
    quads
        .iter()
        .find_map(centre)
        .ok_or(NOT_CLICKABLE.to_string())
}

/// The extent of some coordinates, clipped to `[0, limit]`.
fn clip(coordinates: [f64; 4], limit: f64) -> (f64, f64) {
    let low = coordinates.into_iter().fold(f64::INFINITY, f64::min);
    let high = coordinates.into_iter().fold(f64::NEG_INFINITY, f64::max);
    (low.max(0.0), high.min(limit))
}

/// Calls `function` with the element as `this` and returns its result by value; a thrown error
/// becomes its message.
async fn call_on(page: &Page, id: &str, function: &str, args: &[Value]) -> Result<Value, String> {
    let arguments: Vec<Value> = args.iter().map(|value| json!({ "value": value })).collect();
    let params = json!({
        "objectId": id, "functionDeclaration": function, "arguments": arguments,
        "returnByValue": true, "awaitPromise": true,
    });
    let result = run(page, "Runtime.callFunctionOn", params).await?;
    let Some(details) = result.get("exceptionDetails") else {
        return Ok(result["result"]["value"].clone());
    };
    let description = details["exception"]["description"].as_str();
    let text = description
        .or(details["text"].as_str())
        .unwrap_or("The page threw an error");
    let line = text.lines().next().unwrap_or(text);
    Err(line.strip_prefix("Error: ").unwrap_or(line).to_string())
}

/// The fill path: the locator's wait-for-enabled check, the reference's toggle test, then the
/// locator's own classification. Tag names rather than `instanceof`, so elements of other frames
/// (other realms) classify too.
const CLASSIFY: &str = r#"function () {
  const el = this;
  if (el.nodeType !== Node.ELEMENT_NODE) return 'unknown';
  const tag = el.namespaceURI === 'http://www.w3.org/1999/xhtml' ? el.nodeName : '';
  const controls = ['BUTTON', 'INPUT', 'SELECT', 'TEXTAREA', 'OPTION', 'OPTGROUP'];
  if (controls.includes(tag) && el.hasAttribute('disabled')) return 'disabled';
  if (tag === 'SELECT') return 'select';
  const role = el.getAttribute('role');
  const toggle = tag === 'INPUT' ? el.type === 'checkbox' || el.type === 'radio'
    : role === 'checkbox' || role === 'radio' || role === 'switch';
  if (toggle) return 'toggle';
  if (tag === 'TEXTAREA') return 'typeable';
  const typeable = ['text', 'url', 'tel', 'search', 'password', 'number', 'email'];
  if (tag === 'INPUT') return typeable.includes(el.type) ? 'typeable' : 'other';
  return el.isContentEditable ? 'typeable' : 'unknown';
}"#;

/// The reference matches an option by its accessible name (its label or text); Puppeteer's
/// `select` then selects it alone and fires input and change. The value is a fallback.
const SELECT_OPTION: &str = r#"function (wanted) {
  const options = [...this.options];
  const name = option => option.label.replace(/\s+/g, ' ').trim();
  const option = options.find(o => name(o) === wanted) ?? options.find(o => o.value === wanted);
  if (!option) throw new Error(`Could not find option with text "${wanted}"`);
  for (const other of options) other.selected = false;
  option.selected = true;
  this.dispatchEvent(new Event('input', {bubbles: true}));
  this.dispatchEvent(new Event('change', {bubbles: true}));
}"#;

/// `true`/`false`, or `"mixed"`, which never equals the wanted state and so gets a click.
const TOGGLE_STATE: &str = r#"function () {
  if (this.indeterminate || this.getAttribute('aria-checked') === 'mixed') return 'mixed';
  return this.checked === true || this.getAttribute('aria-checked') === 'true';
}"#;

/// Clears the field unless `value` extends what it holds; returns what is left to type.
const PREPARE_TYPING: &str = r#"function (value) {
  const editable = this.isContentEditable;
  const current = editable ? this.innerText : this.value;
  if (current === value) return '';
  const set = text => { if (editable) this.innerText = text; else this.value = text; };
  if (!value.startsWith(current) || !current) { set(''); return value; }
  set(''); set(current);
  return value.substring(current.length);
}"#;

/// Puppeteer's `fillDirectly`.
const SET_VALUE: &str = r#"function (value) {
  const editable = this.isContentEditable;
  if ((editable ? this.innerText : this.value) === value) return;
  if (editable) this.innerText = value; else this.value = value;
  this.dispatchEvent(new Event('input', {bubbles: true}));
  this.dispatchEvent(new Event('change', {bubbles: true}));
}"#;

/// `[kind, rest]`: the element's kind ([`CLASSIFY`]); for a field typed into, what is left to
/// type ([`PREPARE_TYPING`]), the field focused when that is not empty. The three steps of the
/// reference's fill, in its order, in one task of the page instead of three round trips.
fn prepare_fill() -> String {
    format!(
        "function (value, typed) {{
  const kind = ({CLASSIFY}).call(this);
  if (kind !== 'typeable' || !typed) return [kind, null];
  const rest = ({PREPARE_TYPING}).call(this, value);
  if (rest) ({FOCUS}).call(this);
  return [kind, rest];
}}"
    )
}

const FOCUS: &str = r#"function () {
  const html = this.namespaceURI === 'http://www.w3.org/1999/xhtml';
  if (!html || typeof this.focus !== 'function') throw new Error('Cannot focus non-HTMLElement');
  this.focus();
}"#;

/// `DOM.setFileInputFiles` ignores an empty list, so Puppeteer empties the input by hand.
const CLEAR_FILES: &str = r#"function () {
  this.files = new DataTransfer().files;
  this.dispatchEvent(new Event('input', {bubbles: true, composed: true}));
  this.dispatchEvent(new Event('change', {bubbles: true}));
}"#;

const ASSERT_CONNECTED: &str = r#"function () {
  if (!this.isConnected) throw new Error('Node is detached from document');
  if (this.nodeType !== Node.ELEMENT_NODE) throw new Error('Node is not of type HTMLElement');
}"#;

const SCROLL_INTO_VIEW: &str = r#"function () {
  this.scrollIntoView({block: 'center', inline: 'center', behavior: 'instant'});
}"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clips_boxes_to_the_viewport() {
        assert_eq!(clip([-10.0, 30.0, 30.0, -10.0], 100.0), (0.0, 30.0));
        assert_eq!(clip([90.0, 120.0, 120.0, 90.0], 100.0), (90.0, 100.0));
    }
}
