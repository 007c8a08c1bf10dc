//! Debugging and emulation tools: screenshots, console and network lists, emulation state,
//! resizing; plus slim mode and the one-shot CLI.

use crate::fixtures;
use crate::support::{McpServer, normalize};
use serde_json::json;

#[tokio::test]
async fn screenshots_inline_to_files_and_by_element() {
    let pages = fixtures::server();
    let workspace = tempfile::tempdir().expect("workspace");
    let server = fixtures::server_in_workspace(&pages, "/", &workspace).await;

    let viewport = server.call("take_screenshot", json!({})).await;
    assert_eq!(
        viewport.text,
        "Took a screenshot of the current page's viewport."
    );
    assert_eq!(viewport.images.len(), 1);
    assert_eq!(viewport.images[0].0, "image/png");
    assert!(viewport.images[0].1.starts_with(b"\x89PNG"), "a PNG");

    let jpeg = server
        .call(
            "take_screenshot",
            json!({ "format": "jpeg", "quality": 40, "fullPage": true }),
        )
        .await;
    assert_eq!(jpeg.text, "Took a screenshot of the full current page.");
    assert_eq!(jpeg.images[0].0, "image/jpeg");
    assert!(jpeg.images[0].1.starts_with(&[0xFF, 0xD8]), "a JPEG");

    let snapshot = server.call("take_snapshot", json!({})).await.text;
    let button = crate::fixtures::uid_of(&snapshot, "button \"Add item\"");
    let element = server
        .call(
            "take_screenshot",
            json!({ "uid": button, "format": "webp" }),
        )
        .await;
    assert_eq!(
        element.text,
        format!("Took a screenshot of node with uid \"{button}\".")
    );
    assert!(element.images[0].1.starts_with(b"RIFF"), "a WebP");
    let both = server
        .call(
            "take_screenshot",
            json!({ "uid": button, "fullPage": true }),
        )
        .await;
    assert!(both.is_error);
    assert!(
        both.text
            .ends_with("Error: Providing both \"uid\" and \"fullPage\" is not allowed."),
        "{}",
        both.text
    );

    let saved = server
        .call("take_screenshot", json!({ "filePath": "shots/page" }))
        .await;
    let file = workspace
        .path()
        .canonicalize()
        .expect("canonical")
        .join("shots/page.png");
    assert_eq!(
        saved.text,
        format!(
            "Took a screenshot of the current page's viewport.\nSaved screenshot to {}.",
            file.display()
        )
    );
    assert!(saved.images.is_empty());
    assert!(
        std::fs::read(&file)
            .expect("saved screenshot")
            .starts_with(b"\x89PNG")
    );
    server.shutdown().await;
}

#[tokio::test]
async fn console_and_network_are_collected_per_page() {
    let pages = fixtures::server();
    let server = McpServer::start(&[]).await;
    server
        .call("navigate_page", json!({ "url": pages.url("/console") }))
        .await;
    server
        .call("wait_for", json!({ "text": ["Console"] }))
        .await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;

    let console = server.call("list_console_messages", json!({})).await;
    assert!(!console.is_error, "{}", console.text);
    assert!(
        console.text.starts_with("## Console messages\n"),
        "{}",
        console.text
    );
    assert!(
        console
            .text
            .contains("msgid=1 [log] hello from the page 42 (2 args)"),
        "{}",
        console.text
    );
    assert!(
        console.text.contains("[warn] careful (1 args)"),
        "{}",
        console.text
    );
    assert!(
        console.text.contains("[error] broken (1 args)"),
        "{}",
        console.text
    );
    let errors = server
        .call("list_console_messages", json!({ "types": ["error"] }))
        .await;
    assert!(!errors.text.contains("careful"), "{}", errors.text);
    let paged = server
        .call(
            "list_console_messages",
            json!({ "pageSize": 1, "pageIdx": 1 }),
        )
        .await;
    assert!(paged.text.contains("Showing 2-2 of "), "{}", paged.text);
    let detail = server
        .call("get_console_message", json!({ "msgid": 1 }))
        .await;
    assert!(detail.text.contains("ID: 1"), "{}", detail.text);

    let network = server.call("list_network_requests", json!({})).await;
    let text = normalize(&network.text, &pages);
    assert!(text.starts_with("## Network requests\n"), "{text}");
    assert!(
        text.contains("GET http://127.0.0.1:PORT/console [200]"),
        "{text}"
    );
    assert!(
        text.contains("GET http://127.0.0.1:PORT/data.json [200]"),
        "{text}"
    );
    let fetches = server
        .call(
            "list_network_requests",
            json!({ "resourceTypes": ["fetch"] }),
        )
        .await;
    assert!(!fetches.text.contains("/console "), "{}", fetches.text);
    let reqid = fetches
        .text
        .lines()
        .find_map(|line| line.strip_prefix("reqid="))
        .and_then(|rest| rest.split_whitespace().next())
        .expect("a fetch request")
        .to_string();
    let request = server
        .call(
            "get_network_request",
            json!({ "reqid": reqid.parse::<u32>().unwrap_or(0) }),
        )
        .await;
    assert!(
        request.text.contains("## Request http://127.0.0.1:"),
        "{}",
        request.text
    );
    assert!(request.text.contains("{\"value\": 7}"), "{}", request.text);
    let saved = server
        .call(
            "get_network_request",
            json!({ "reqid": reqid.parse::<u32>().unwrap_or(0), "responseFilePath": "body" }),
        )
        .await;
    let body_file = crate::support::server_temp_dir().join("body.network-response");
    assert!(
        saved.text.contains(&body_file.display().to_string()),
        "{}",
        saved.text
    );
    assert!(
        !saved.text.contains("{\"value\": 7}"),
        "the body is in the file: {}",
        saved.text
    );
    assert_eq!(
        std::fs::read_to_string(&body_file).expect("body file"),
        "{\"value\": 7}"
    );
    let _removed = std::fs::remove_file(&body_file);

    // A new navigation starts a new list.
    server
        .call("navigate_page", json!({ "url": pages.url("/next") }))
        .await;
    let after = server.call("list_console_messages", json!({})).await;
    assert!(
        !after.text.contains("hello from the page"),
        "{}",
        after.text
    );
    let preserved = server
        .call(
            "list_console_messages",
            json!({ "includePreservedMessages": true }),
        )
        .await;
    assert!(
        preserved.text.contains("hello from the page"),
        "{}",
        preserved.text
    );
    server.shutdown().await;
}

#[tokio::test]
async fn emulation_is_whole_state_and_shown_in_later_responses() {
    let pages = fixtures::server();
    let server = McpServer::start(&[]).await;
    server
        .call("navigate_page", json!({ "url": pages.url("/") }))
        .await;
    let emulated = server
        .call("emulate", json!({ "userAgent": "TestAgent/1.0", "colorScheme": "dark", "viewport": "400x300x2,touch", "cpuThrottlingRate": 2 }))
        .await;
    assert!(!emulated.is_error, "{}", emulated.text);
    assert!(
        emulated
            .text
            .starts_with("Emulation configured successfully\n"),
        "{}",
        emulated.text
    );
    assert!(
        emulated
            .text
            .contains("Emulating user agent: TestAgent/1.0"),
        "{}",
        emulated.text
    );
    assert!(
        emulated
            .text
            .contains("Emulating CPU throttling: 2x slowdown"),
        "{}",
        emulated.text
    );
    assert!(
        emulated.text.contains("Emulating color scheme: dark"),
        "{}",
        emulated.text
    );
    let seen = server
        .call("evaluate_script", json!({ "function": "() => [navigator.userAgent, matchMedia('(prefers-color-scheme: dark)').matches, innerWidth, devicePixelRatio, navigator.maxTouchPoints > 0]" }))
        .await;
    assert!(
        seen.text.contains("[\"TestAgent/1.0\",true,400,2,true]"),
        "{}",
        seen.text
    );
    let snapshot = server.call("take_snapshot", json!({})).await;
    assert!(
        snapshot.text.starts_with("Emulating "),
        "page-scoped responses show emulation: {}",
        snapshot.text
    );

    // Omitted fields reset.
    let reset = server.call("emulate", json!({})).await;
    assert_eq!(reset.text, "Emulation configured successfully");
    let seen = server
        .call(
            "evaluate_script",
            json!({ "function": "() => navigator.userAgent.includes('TestAgent')" }),
        )
        .await;
    assert!(seen.text.contains("\nfalse\n"), "{}", seen.text);

    let resized = server
        .call("resize_page", json!({ "width": 700, "height": 500 }))
        .await;
    assert!(resized.text.starts_with("## Pages"), "{}", resized.text);
    let size = server
        .call(
            "evaluate_script",
            json!({ "function": "() => [innerWidth, innerHeight]" }),
        )
        .await;
    assert!(size.text.contains("[700,500]"), "{}", size.text);
    server.shutdown().await;
}

#[tokio::test]
async fn slim_mode_offers_three_tools_with_plain_answers() {
    let pages = fixtures::server();
    let server = McpServer::start(&["--slim"]).await;
    let mut names: Vec<String> = server
        .list_tools()
        .await
        .iter()
        .map(|tool| tool.name.to_string())
        .collect();
    names.sort();
    assert_eq!(names, ["evaluate", "navigate", "screenshot"]);
    let navigated = server
        .call("navigate", json!({ "url": pages.url("/") }))
        .await;
    assert_eq!(navigated.text, format!("Navigated to {}.", pages.url("/")));
    let evaluated = server
        .call("evaluate", json!({ "script": "document.title" }))
        .await;
    assert_eq!(evaluated.text, "\"Fixture\"");
    let thrown = server
        .call("evaluate", json!({ "script": "nope.value" }))
        .await;
    assert!(!thrown.is_error);
    assert_eq!(thrown.text, "nope is not defined");
    let shot = server.call("screenshot", json!({})).await;
    assert!(shot.text.ends_with("/screenshot.png"), "{}", shot.text);
    assert!(shot.images.is_empty());
    assert!(
        std::fs::read(&shot.text)
            .expect("screenshot file")
            .starts_with(b"\x89PNG")
    );
    server.shutdown().await;
}

#[tokio::test]
async fn the_one_shot_cli_lists_and_calls_tools() {
    let binary = env!("CARGO_BIN_EXE_devtools-mcp");
    let cache = crate::support::cache_dir().to_string_lossy().into_owned();
    let plugins = std::path::Path::new(binary)
        .parent()
        .map(|dir| dir.join("test-plugins"))
        .unwrap_or_default();
    let listed = crate::support::command(binary)
        .envs(crate::support::server_env())
        .args([
            "tools",
            "--cache-dir",
            &cache,
            "--no-category-network",
            "--plugin-dir",
        ])
        .arg(&plugins)
        .output()
        .expect("run tools");
    let stdout = String::from_utf8_lossy(&listed.stdout);
    assert!(
        listed.status.success(),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
    assert!(
        stdout
            .lines()
            .any(|line| line == "take_snapshot\tdebugging\tenabled"),
        "{stdout}"
    );
    assert!(stdout.contains("network_probe\tnetwork\tdisabled: Tool network_probe is in category Network which is currently disabled."), "{stdout}");

    let disabled = crate::support::command(binary)
        .envs(crate::support::server_env())
        .args([
            "call",
            "network_probe",
            "{}",
            "--cache-dir",
            &cache,
            "--categoryNetwork=false",
            "--plugin-dir",
        ])
        .arg(&plugins)
        .output()
        .expect("run call");
    assert!(!disabled.status.success());
    assert!(
        String::from_utf8_lossy(&disabled.stdout)
            .contains("Enable it by running devtools-mcp --categoryNetwork=true.")
    );

    let pages = fixtures::server();
    let mut args: Vec<String> = crate::support::browser_args();
    args.retain(|arg| arg != "--headless");
    let called = crate::support::command(binary)
        .envs(crate::support::server_env())
        .args(["call", "new_page"])
        .arg(json!({ "url": pages.url("/") }).to_string())
        .args(&args)
        .output()
        .expect("run call");
    let stdout = String::from_utf8_lossy(&called.stdout);
    assert!(
        called.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&called.stderr)
    );
    assert!(
        stdout.contains(&format!("Fixture ({}) [selected]", pages.url("/"))),
        "{stdout}"
    );

    let bad = crate::support::command(binary)
        .envs(crate::support::server_env())
        .args(["call", "list_pages", "[1]", "--cache-dir", &cache])
        .output()
        .expect("run");
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("must be a JSON object"));
}
