//! Fixture pages and small helpers shared by the tests.

use crate::support::{FixtureServer, McpServer, Route};
use serde_json::json;

pub const INDEX: &str = r#"<!doctype html>
<html><head><title>Fixture</title></head>
<body>
  <h1>Hello</h1>
  <button onclick="const li = document.createElement('li'); li.textContent = 'Item ' + (document.querySelectorAll('li').length + 1); document.getElementById('items').append(li)">Add item</button>
  <ul id="items"></ul>
  <a href="/next">Next page</a>
</body></html>"#;

pub const NEXT: &str = r#"<!doctype html>
<html><head><title>Next</title></head><body><h1>Second page</h1></body></html>"#;

pub const DIALOG: &str = r#"<!doctype html>
<html><head><title>Dialogs</title></head>
<body>
  <button onclick="alert('test dialog')">Show alert</button>
  <button onclick="document.getElementById('answer').textContent = prompt('Your name?', 'anon')">Ask name</button>
  <p id="answer"></p>
</body></html>"#;

pub const FRAMED: &str = r#"<!doctype html>
<html><head><title>Framed</title></head>
<body><h1>Outer</h1><iframe src="/next" title="inner"></iframe></body></html>"#;

pub const FORM: &str = r#"<!doctype html>
<html><head><title>Form</title></head>
<body>
  <form id="form" onsubmit="event.preventDefault(); document.getElementById('status').textContent = 'submitted ' + document.getElementById('name').value">
    <label>Name <input id="name" type="text"></label>
    <label>Bio <textarea id="bio"></textarea></label>
    <label>Color <select id="color"><option value="r">Red</option><option value="g">Green</option></select></label>
    <label><input id="agree" type="checkbox"> Agree</label>
    <label><input id="file" type="file"> Attachment</label>
    <button type="submit">Send</button>
  </form>
  <p id="status">idle</p>
  <div id="hover-target" style="width:100px;height:40px" onmouseover="this.textContent='hovered'">Hover me</div>
  <div id="source" draggable="true" style="width:60px;height:30px" ondragstart="event.dataTransfer.setData('text/plain', 'dragged')">Drag me</div>
  <div id="target" style="width:120px;height:60px" ondragover="event.preventDefault()" ondrop="event.preventDefault(); this.textContent = 'dropped ' + event.dataTransfer.getData('text/plain')">Drop here</div>
  <button onclick="const add = text => { const p = document.createElement('p'); p.textContent = text; document.body.append(p); }; setTimeout(() => add('Late content'), 60); setTimeout(() => add('Later content'), 130)">Load later</button>
  <button onclick="const c = new MessageChannel(); c.port1.onmessage = () => { const p = document.createElement('p'); p.textContent = 'messaged'; document.body.append(p); }; c.port2.postMessage(0)">Message</button>
</body></html>"#;

pub const CONSOLE: &str = r#"<!doctype html>
<html><head><title>Console</title></head>
<body><script>
  console.log('hello from the page', 42);
  console.warn('careful');
  console.error('broken');
  fetch('/data.json').then(response => response.json()).then(data => console.log('fetched', data.value));
</script></body></html>"#;

pub fn server() -> FixtureServer {
    FixtureServer::start(vec![
        Route::html("/", INDEX),
        Route::html("/next", NEXT),
        Route::html("/dialog", DIALOG),
        Route::html("/framed", FRAMED),
        Route::html("/form", FORM),
        Route::html("/console", CONSOLE),
        Route::new("/data.json", "application/json", r#"{"value": 7}"#),
    ])
}

/// A server whose file parameters may point into a fresh workspace folder, its selected page
/// already on `path` of `pages`. Keep the folder for as long as the server.
pub async fn server_in_workspace(
    pages: &FixtureServer,
    path: &str,
    workspace: &tempfile::TempDir,
) -> McpServer {
    let workspace_arg = workspace.path().to_string_lossy().into_owned();
    let server = McpServer::start(&["--workspace", &workspace_arg]).await;
    server
        .call("navigate_page", json!({ "url": pages.url(path) }))
        .await;
    server
}

/// The uid of the snapshot line with this role and name, e.g. `button "Add item"`.
pub fn uid_of(snapshot: &str, role_and_name: &str) -> String {
    snapshot
        .lines()
        .find(|line| line.contains(role_and_name))
        .and_then(|line| line.trim_start().strip_prefix("uid="))
        .and_then(|rest| rest.split_whitespace().next())
        .map(str::to_owned)
        .unwrap_or_else(|| panic!("no {role_and_name} in the snapshot:\n{snapshot}"))
}

/// The `## Pages` section's lines.
pub fn page_lines(text: &str) -> Vec<String> {
    text.lines()
        .skip_while(|line| *line != "## Pages")
        .skip(1)
        .take_while(|line| !line.starts_with('#'))
        .map(str::to_owned)
        .collect()
}
