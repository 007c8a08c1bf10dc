//! The nine tools against real pages: outputs asserted section by section.

use crate::fixtures::{self, page_lines, uid_of};
use crate::support::{McpServer, normalize};
use serde_json::json;

#[tokio::test]
async fn navigate_snapshot_click_and_evaluate() {
    let pages = fixtures::server();
    let server = McpServer::start(&[]).await;

    let opened = server
        .call("new_page", json!({ "url": pages.url("/") }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    let lines = page_lines(&opened.text);
    assert_eq!(lines.len(), 2, "{}", opened.text);
    assert_eq!(lines[0], "1: about:blank");
    assert!(
        lines[1].ends_with(&format!(": Fixture ({}) [selected]", pages.url("/"))),
        "{}",
        opened.text
    );

    let snapshot = server.call("take_snapshot", json!({})).await;
    assert!(!snapshot.is_error, "{}", snapshot.text);
    assert!(
        snapshot.text.starts_with("## Latest page snapshot\nuid="),
        "{}",
        snapshot.text
    );
    assert!(
        snapshot.text.contains("RootWebArea \"Fixture\""),
        "{}",
        snapshot.text
    );
    assert!(
        snapshot.text.contains("heading \"Hello\" level=\"1\""),
        "{}",
        snapshot.text
    );
    let button = uid_of(&snapshot.text, "button \"Add item\"");
    let link = uid_of(&snapshot.text, "link \"Next page\"");

    let clicked = server
        .call("click", json!({ "uid": button, "includeSnapshot": true }))
        .await;
    assert!(!clicked.is_error, "{}", clicked.text);
    assert!(
        clicked
            .text
            .starts_with("Successfully clicked on the element\n## Latest page snapshot\n"),
        "{}",
        clicked.text
    );
    assert!(clicked.text.contains("\"Item 1\""), "{}", clicked.text);
    // The same element keeps its uid in later snapshots.
    assert_eq!(uid_of(&clicked.text, "button \"Add item\""), button);

    let evaluated = server
        .call(
            "evaluate_script",
            json!({ "function": "() => [document.title, document.querySelectorAll('li').length]" }),
        )
        .await;
    assert_eq!(
        evaluated.text,
        "Script ran on page and returned:\n```json\n[\"Fixture\",1]\n```"
    );
    let by_element = server
        .call(
            "evaluate_script",
            json!({ "function": "(el) => el.textContent", "args": [button] }),
        )
        .await;
    assert_eq!(
        by_element.text,
        "Script ran on page and returned:\n```json\n\"Add item\"\n```"
    );
    let verbose = server
        .call("take_snapshot", json!({ "verbose": true }))
        .await;
    assert!(
        verbose.text.lines().count() > snapshot.text.lines().count(),
        "{}",
        verbose.text
    );
    let saved = server
        .call(
            "evaluate_script",
            json!({ "function": "() => ({ title: document.title })", "filePath": "eval-output" }),
        )
        .await;
    let file = crate::support::server_temp_dir().join("eval-output.json");
    assert_eq!(
        saved.text,
        format!("Script ran on page. Output saved to {}.", file.display())
    );
    assert_eq!(
        std::fs::read_to_string(&file).expect("output file"),
        "{\"title\":\"Fixture\"}"
    );
    let _removed = std::fs::remove_file(&file);
    let thrown = server
        .call(
            "evaluate_script",
            json!({ "function": "() => missing.value" }),
        )
        .await;
    assert!(thrown.is_error);
    assert_eq!(thrown.text, "Error: missing is not defined");

    let followed = server.call("click", json!({ "uid": link })).await;
    assert_eq!(
        normalize(&followed.text, &pages),
        "Successfully clicked on the element\nPage navigated to http://127.0.0.1:PORT/next."
    );

    let back = server
        .call("navigate_page", json!({ "type": "back" }))
        .await;
    assert!(
        back.text.starts_with(&format!(
            "Successfully navigated back to {}.\n## Pages\n",
            pages.url("/")
        )),
        "{}",
        back.text
    );
    let forward = server
        .call("navigate_page", json!({ "type": "forward" }))
        .await;
    assert!(
        forward.text.starts_with(&format!(
            "Successfully navigated forward to {}.",
            pages.url("/next")
        )),
        "{}",
        forward.text
    );
    server
        .call("navigate_page", json!({ "type": "back", "timeout": 0 }))
        .await;
    let reload = server
        .call("navigate_page", json!({ "type": "reload" }))
        .await;
    assert!(
        reload
            .text
            .starts_with("Successfully reloaded the page.\n## Pages"),
        "{}",
        reload.text
    );
    let to_next = server
        .call("navigate_page", json!({ "url": pages.url("/next") }))
        .await;
    assert!(
        to_next.text.starts_with(&format!(
            "Successfully navigated to {}.",
            pages.url("/next")
        )),
        "{}",
        to_next.text
    );
    let closed_port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("a free port");
    let refused = server
        .call(
            "navigate_page",
            json!({ "url": format!("http://127.0.0.1:{closed_port}/nothing") }),
        )
        .await;
    assert!(
        refused
            .text
            .starts_with("Unable to navigate in the selected page: net::ERR_CONNECTION_REFUSED"),
        "{}",
        refused.text
    );
    let neither = server.call("navigate_page", json!({})).await;
    assert!(neither.is_error);
    assert!(
        neither
            .text
            .ends_with("Error: Either URL or a type is required."),
        "{}",
        neither.text
    );

    // A stale uid from an earlier document is refused with the reference's message.
    let stale = server.call("click", json!({ "uid": "999_1" })).await;
    assert!(stale.is_error);
    assert!(
        stale
            .text
            .contains("Element uid \"999_1\" not found on page 2."),
        "{}",
        stale.text
    );
    server.shutdown().await;
}

#[tokio::test]
async fn pages_are_listed_selected_and_closed() {
    let pages = fixtures::server();
    let server = McpServer::start(&[]).await;

    let listed = server.call("list_pages", json!({})).await;
    assert_eq!(listed.text, "## Pages\n1: about:blank [selected]");
    server
        .call("new_page", json!({ "url": pages.url("/next") }))
        .await;
    let background = server
        .call(
            "new_page",
            json!({ "url": pages.url("/"), "background": true, "isolatedContext": "alice" }),
        )
        .await;
    let lines = page_lines(&background.text);
    assert_eq!(lines.len(), 3, "{}", background.text);
    assert!(
        lines[1].ends_with("[selected]"),
        "the foreground page stays selected: {}",
        background.text
    );
    assert!(
        lines[2].ends_with(&format!(
            ": Fixture ({}) isolatedContext=alice",
            pages.url("/")
        )),
        "{}",
        background.text
    );

    let selected = server
        .call("select_page", json!({ "pageId": 1, "bringToFront": true }))
        .await;
    assert_eq!(page_lines(&selected.text)[0], "1: about:blank [selected]");
    let missing = server.call("select_page", json!({ "pageId": 77 })).await;
    assert!(missing.is_error);
    assert!(
        missing.text.ends_with("Error: No page found"),
        "{}",
        missing.text
    );

    let closed = server.call("close_page", json!({ "pageId": 1 })).await;
    let lines = page_lines(&closed.text);
    assert_eq!(lines.len(), 2, "{}", closed.text);
    assert!(!closed.text.contains("1: about:blank"), "{}", closed.text);
    let second = lines[0].split(':').next().unwrap_or_default().to_owned();
    let third = lines[1].split(':').next().unwrap_or_default().to_owned();
    server
        .call(
            "close_page",
            json!({ "pageId": third.parse::<u32>().unwrap_or(0) }),
        )
        .await;
    let last = server
        .call(
            "close_page",
            json!({ "pageId": second.parse::<u32>().unwrap_or(0) }),
        )
        .await;
    assert!(!last.is_error);
    assert!(
        last.text.starts_with(
            "The last open page cannot be closed. It is fine to keep it open.\n## Pages\n"
        ),
        "{}",
        last.text
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_dialog_blocks_calls_until_handled() {
    let pages = fixtures::server();
    let server = McpServer::start(&[]).await;
    server
        .call("navigate_page", json!({ "url": pages.url("/dialog") }))
        .await;
    let snapshot = server.call("take_snapshot", json!({})).await;
    let alert = uid_of(&snapshot.text, "button \"Show alert\"");
    let ask = uid_of(&snapshot.text, "button \"Ask name\"");

    // The click returns as soon as the dialog stalls the page (the reference waits 5 s).
    let started = std::time::Instant::now();
    let clicked = server.call("click", json!({ "uid": alert })).await;
    let took = started.elapsed();
    assert!(
        took < std::time::Duration::from_secs(2),
        "a click opening a dialog took {took:?}"
    );
    assert!(!clicked.is_error, "{}", clicked.text);
    assert_eq!(
        clicked.text,
        "The element was clicked and it opened a dialog.\n# Open dialog\nalert: test dialog.\nCall handle_dialog to handle it before continuing."
    );
    let blocked = server.call("take_snapshot", json!({})).await;
    assert!(blocked.is_error);
    assert_eq!(
        blocked.text,
        "# Open dialog\nalert: test dialog.\nCall handle_dialog to handle it before continuing.\nError: A dialog is open (alert: test dialog)."
    );
    let handled = server
        .call("handle_dialog", json!({ "action": "accept" }))
        .await;
    assert!(!handled.is_error, "{}", handled.text);
    assert!(
        handled
            .text
            .starts_with("Successfully accepted the dialog\n## Pages\n"),
        "{}",
        handled.text
    );
    let again = server
        .call("handle_dialog", json!({ "action": "dismiss" }))
        .await;
    assert!(
        again.text.ends_with("Error: No open dialog found"),
        "{}",
        again.text
    );

    server.call("click", json!({ "uid": ask })).await;
    let prompted = server.call("take_snapshot", json!({})).await;
    assert!(
        prompted
            .text
            .contains("prompt: Your name? (default value: \"anon\")."),
        "{}",
        prompted.text
    );
    server
        .call(
            "handle_dialog",
            json!({ "action": "accept", "promptText": "Ada" }),
        )
        .await;
    let answered = server
        .call(
            "evaluate_script",
            json!({ "function": "() => document.getElementById('answer').textContent" }),
        )
        .await;
    assert_eq!(
        answered.text,
        "Script ran on page and returned:\n```json\n\"Ada\"\n```"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn snapshots_descend_into_iframes() {
    let pages = fixtures::server();
    let server = McpServer::start(&[]).await;
    server
        .call("navigate_page", json!({ "url": pages.url("/framed") }))
        .await;
    let snapshot = server.call("take_snapshot", json!({})).await;
    assert!(!snapshot.is_error, "{}", snapshot.text);
    let lines: Vec<&str> = snapshot.text.lines().collect();
    let frame = lines
        .iter()
        .position(|line| line.contains(" Iframe "))
        .unwrap_or_else(|| panic!("no Iframe: {}", snapshot.text));
    let inner = lines
        .iter()
        .position(|line| line.contains("heading \"Second page\""))
        .unwrap_or_else(|| panic!("no frame content: {}", snapshot.text));
    assert!(
        inner > frame,
        "the frame's content sits under its Iframe node: {}",
        snapshot.text
    );
    // Elements inside the frame can be acted on by uid.
    let heading = uid_of(&snapshot.text, "heading \"Second page\"");
    let text = server
        .call(
            "evaluate_script",
            json!({ "function": "(el) => el.textContent", "args": [heading] }),
        )
        .await;
    assert_eq!(
        text.text,
        "Script ran on page and returned:\n```json\n\"Second page\"\n```"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn isolated_contexts_keep_cookies_apart_and_navigation_options_work() {
    let pages = fixtures::server();
    let server = McpServer::start(&[]).await;
    server
        .call(
            "new_page",
            json!({ "url": pages.url("/"), "isolatedContext": "alice" }),
        )
        .await;
    server
        .call(
            "evaluate_script",
            json!({ "function": "() => { document.cookie = 'who=alice'; }" }),
        )
        .await;
    let bob = server
        .call(
            "new_page",
            json!({ "url": pages.url("/"), "isolatedContext": "bob" }),
        )
        .await;
    assert!(
        bob.text.contains("isolatedContext=bob [selected]")
            || bob.text.contains("[selected] isolatedContext=bob"),
        "{}",
        bob.text
    );
    let cookies = server
        .call(
            "evaluate_script",
            json!({ "function": "() => document.cookie" }),
        )
        .await;
    assert!(
        cookies.text.contains("```json\n\"\"\n```"),
        "bob does not see alice's cookie: {}",
        cookies.text
    );

    let init = server
        .call("navigate_page", json!({ "url": pages.url("/next"), "initScript": "window.__marker = 'set before scripts'" }))
        .await;
    assert!(!init.is_error, "{}", init.text);
    let marker = server
        .call(
            "evaluate_script",
            json!({ "function": "() => window.__marker" }),
        )
        .await;
    assert!(
        marker.text.contains("\"set before scripts\""),
        "{}",
        marker.text
    );
    let reloaded = server
        .call(
            "navigate_page",
            json!({ "type": "reload", "ignoreCache": true }),
        )
        .await;
    assert!(
        reloaded.text.starts_with("Successfully reloaded the page."),
        "{}",
        reloaded.text
    );
    let gone = server
        .call(
            "evaluate_script",
            json!({ "function": "() => window.__marker ?? null" }),
        )
        .await;
    assert!(
        gone.text.contains("\nnull\n"),
        "the init script is for one navigation only: {}",
        gone.text
    );

    // A page that asks before it unloads (it needs a real user gesture first).
    let guard = "() => { window.onbeforeunload = (event) => { event.preventDefault(); event.returnValue = ''; }; }";
    server
        .call("evaluate_script", json!({ "function": guard }))
        .await;
    let snapshot = server.call("take_snapshot", json!({})).await;
    let heading = uid_of(&snapshot.text, "heading \"Second page\"");
    server
        .call("click", json!({ "uid": heading, "dblClick": true }))
        .await;
    let dismissed = server
        .call(
            "navigate_page",
            json!({ "url": pages.url("/"), "handleBeforeUnload": "dismiss" }),
        )
        .await;
    assert!(
        dismissed.text.contains("Dismissed a beforeunload dialog."),
        "{}",
        dismissed.text
    );
    let still = server
        .call(
            "evaluate_script",
            json!({ "function": "() => location.pathname" }),
        )
        .await;
    assert!(
        still.text.contains("\"/next\""),
        "a dismissed beforeunload keeps the page: {}",
        still.text
    );
    server.shutdown().await;

    let server = McpServer::start(&[]).await;
    server
        .call("navigate_page", json!({ "url": pages.url("/next") }))
        .await;
    server
        .call("evaluate_script", json!({ "function": guard }))
        .await;
    let snapshot = server.call("take_snapshot", json!({})).await;
    let heading = uid_of(&snapshot.text, "heading \"Second page\"");
    server.call("click", json!({ "uid": heading })).await;
    let accepted = server
        .call("navigate_page", json!({ "url": pages.url("/") }))
        .await;
    assert!(
        accepted.text.starts_with(&format!(
            "Successfully navigated to {}.\nAccepted a beforeunload dialog.",
            pages.url("/")
        )),
        "{}",
        accepted.text
    );
    server.shutdown().await;
}

/// A navigation that stays in the document (`about:blank` to `about:blank#x`) answers at once,
/// as 1.11.0's does, and the next navigation is not held behind it (chromiumoxide holds a
/// `Page.navigate` it sends until the frame's next load, which such a navigation never has).
#[tokio::test]
async fn navigations_within_the_document_answer_at_once() {
    let server = McpServer::start(&[]).await;
    let started = std::time::Instant::now();
    let opened = server
        .call("new_page", json!({ "url": "about:blank#second" }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    assert!(
        opened.text.contains("about:blank#second"),
        "{}",
        opened.text
    );
    for url in ["about:blank#third", "about:blank", "about:blank#fourth"] {
        let navigated = server
            .call("navigate_page", json!({ "type": "url", "url": url }))
            .await;
        assert_eq!(
            navigated.text.lines().next(),
            Some(format!("Successfully navigated to {url}.").as_str()),
            "{}",
            navigated.text
        );
        // As 1.11.0 lists it: the URL, not the placeholder title of the URL before.
        assert!(
            navigated.text.contains(&format!(": {url} [selected]")),
            "{}",
            navigated.text
        );
    }
    // Each took 10 s (the navigation timeout) before.
    assert!(
        started.elapsed() < std::time::Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
}
