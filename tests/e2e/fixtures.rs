//! Fixture pages and small helpers shared by the tests.

use crate::support::{FixtureServer, Route};

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

pub fn server() -> FixtureServer {
    FixtureServer::start(vec![
        Route::html("/", INDEX),
        Route::html("/next", NEXT),
        Route::html("/dialog", DIALOG),
        Route::html("/framed", FRAMED),
    ])
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
