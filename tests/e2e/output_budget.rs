//! Beyond 1.11.0: `--maxOutputTokens` (issue 48 item 1). A big page's snapshot comes in pieces
//! within the budget, each ending with the cursor for the rest; the pieces joined are the
//! snapshot the server gives without a budget; a cursor dies with its page's document; the
//! whole text is a resource of the session that got it, refused to another. Long echoes of
//! the agent's own arguments are shortened with or without the flag.

use crate::differential::{Side, fixture_pages, scenario, scenario_args, scenario_workspace};
use crate::support::{FixtureServer, HttpServer, McpServer, Route, TenantSpec, ToolOutput};
use serde_json::json;

const BUDGET: usize = 2000;
/// Lines the budget adds to a piece start with this.
const NOTE: &str = "[Output budget]";

/// A page whose snapshot is ~150 KB, with a text field far down.
fn big_page() -> String {
    let mut html = String::from(
        "<!doctype html><html><head><title>Big</title></head><body><h1>Reference</h1><ul>",
    );
    for i in 0..1500 {
        html.push_str(&format!(
            "<li><a href=\"/item{i}\">Item {i} of the reference</a> describes method number {i}</li>"
        ));
    }
    html.push_str("</ul><label>Bottom search <input type=\"text\"></label></body></html>");
    html
}

/// Equal texts, or a panic showing where they part (not both whole: they are ~150 KB).
fn same_text(got: &str, want: &str) {
    if got == want {
        return;
    }
    let at = got
        .bytes()
        .zip(want.bytes())
        .position(|(a, b)| a != b)
        .unwrap_or(got.len().min(want.len()));
    let around = |text: &str| {
        let start = text.floor_char_boundary(at.saturating_sub(80));
        let end = text.floor_char_boundary((at + 80).min(text.len()));
        text[start..end].to_string()
    };
    panic!(
        "texts part at byte {at} (lengths {} and {}):\n got: {:?}\nwant: {:?}",
        got.len(),
        want.len(),
        around(got),
        around(want)
    );
}

fn tokens(text: &str) -> usize {
    text.len().div_ceil(3)
}

/// The cursor the piece's last line gives, if any.
fn cursor_of(piece: &str) -> Option<String> {
    let last = piece.lines().last()?;
    let start = last.find("{\"cursor\": \"")? + "{\"cursor\": \"".len();
    let end = start + last[start..].find('"')?;
    Some(last[start..end].to_string())
}

/// What a piece shows of the answer: its text before the budget's lines.
fn content_of(piece: &str) -> &str {
    match piece.find(&format!("\n{NOTE}")) {
        Some(at) => &piece[..at],
        None => piece,
    }
}

async fn snapshot_of(server: &McpServer, url: &str) -> ToolOutput {
    let opened = server.call("navigate_page", json!({ "url": url })).await;
    assert!(!opened.is_error, "{}", opened.text);
    server.call("take_snapshot", json!({})).await
}

#[tokio::test]
async fn a_big_snapshot_comes_in_pieces_within_the_budget_that_join_to_the_whole() {
    let pages = FixtureServer::start(vec![
        Route::html("/", big_page()),
        Route::html("/other", "<title>Other</title><p>Other page</p>"),
    ]);
    let plain = McpServer::start(&[]).await;
    assert!(
        plain
            .capabilities()
            .get("resources")
            .is_none_or(|r| r.is_null()),
        "the default capabilities stay 1.11.0's: {}",
        plain.capabilities()
    );
    let whole = snapshot_of(&plain, &pages.url("/")).await;
    assert!(!whole.is_error, "{}", whole.text);
    assert!(tokens(&whole.text) > 10 * BUDGET, "{}", whole.text.len());
    plain.shutdown().await;

    let budgeted = McpServer::start(&["--maxOutputTokens", &BUDGET.to_string()]).await;
    let tools = budgeted.list_tools().await;
    assert!(
        tools
            .iter()
            .all(|tool| tool.input_schema["properties"]["cursor"]["type"] == "string"),
        "every tool takes a cursor under the budget"
    );
    let first = snapshot_of(&budgeted, &pages.url("/")).await;
    assert!(!first.is_error, "{}", first.text);
    assert!(
        tokens(&first.text) <= BUDGET,
        "{} tokens",
        tokens(&first.text)
    );
    assert!(
        first.text.starts_with("## Latest page snapshot\nuid=")
            && first.text[..200].contains("RootWebArea \"Big\""),
        "the top of the tree first: {}",
        &first.text[..200]
    );
    // The text field far below the cut is listed, its uid usable at once.
    let index = first
        .text
        .lines()
        .find(|line| line.starts_with("[Output budget] Further down, focused and interactive:"))
        .unwrap_or_else(|| panic!("no index line: {}", first.text));
    assert!(index.contains("textbox \"Bottom search\""), "{index}");
    let last = first.text.lines().last().expect("present");
    assert!(
        last.starts_with("[Output budget] Left out: ")
            && last.contains(" lines (~")
            && last.contains("The rest: call take_snapshot with {\"cursor\": \""),
        "{last}"
    );

    // The whole text, as a resource of this session.
    let [uri] = first.resource_links.as_slice() else {
        panic!("one resource_link: {:?}", first.resource_links)
    };
    let read = budgeted.read_resource(uri).await.expect("readable here");
    same_text(&read, &whole.text);

    // Following the cursors: every piece within the budget, all joined the whole answer.
    let mut joined: Vec<String> = vec![content_of(&first.text).to_string()];
    let mut cursor = cursor_of(&first.text);
    let mut pieces = 1;
    let first_cursor = cursor.clone().expect("a cursor");
    while let Some(next) = cursor {
        let piece = budgeted
            .call("take_snapshot", json!({ "cursor": next }))
            .await;
        assert!(!piece.is_error, "{}", piece.text);
        assert!(
            tokens(&piece.text) <= BUDGET,
            "{} tokens",
            tokens(&piece.text)
        );
        joined.push(content_of(&piece.text).to_string());
        cursor = cursor_of(&piece.text);
        pieces += 1;
        assert!(pieces < 200, "the pieces never end");
    }
    same_text(&joined.join("\n"), &whole.text);
    assert!(pieces > 10, "{pieces} pieces");

    // Another tool does not take this cursor; after a navigation it is refused.
    let other = budgeted
        .call("list_pages", json!({ "cursor": first_cursor }))
        .await;
    assert!(other.is_error, "{}", other.text);
    assert!(
        other.text.contains("belongs to an answer of take_snapshot"),
        "{}",
        other.text
    );
    let moved = budgeted
        .call("navigate_page", json!({ "url": pages.url("/other") }))
        .await;
    assert!(!moved.is_error, "{}", moved.text);
    let stale = budgeted
        .call("take_snapshot", json!({ "cursor": first_cursor }))
        .await;
    assert!(stale.is_error, "{}", stale.text);
    assert_eq!(
        stale.text,
        "The page changed (it navigated or reloaded) since this answer was given, so its rest no longer describes it and was dropped. Call take_snapshot again without `cursor` for a fresh answer."
    );

    // Another session (another server, the same budget) neither reads the resource nor takes
    // the cursor.
    let other_session = McpServer::start(&["--maxOutputTokens", &BUDGET.to_string()]).await;
    let refused = other_session
        .read_resource(uri)
        .await
        .expect_err("another session's answer");
    assert!(
        refused.contains("is not an answer of this session"),
        "{refused}"
    );
    let foreign = other_session
        .call("take_snapshot", json!({ "cursor": first_cursor }))
        .await;
    assert!(foreign.is_error);
    assert!(
        foreign.text.contains("is not one of this session's"),
        "{}",
        foreign.text
    );
    other_session.shutdown().await;
    budgeted.shutdown().await;
}

/// Under `serve`, the budget is a tenant's own (`max_output_tokens`), and so are its cut
/// answers: another tenant neither reads one nor takes its cursor.
#[tokio::test]
async fn a_tenants_budget_and_cut_answers_are_its_own() {
    let pages = FixtureServer::start(vec![Route::html("/", big_page())]);
    let tenants = [
        TenantSpec::new("alice", "token-alice")
            .on_loopback()
            .with("max_output_tokens = 500"),
        TenantSpec::new("bob", "token-bob").on_loopback(),
    ];
    let server = HttpServer::start(&tenants, &[]).await;
    let alice = server.connect("token-alice").await;
    let bob = server.connect("token-bob").await;
    let mut answers = Vec::new();
    for client in [&alice, &bob] {
        let opened = client
            .call("new_page", json!({ "url": pages.url("/") }))
            .await;
        assert!(!opened.is_error, "{}", opened.text);
        answers.push(client.call("take_snapshot", json!({})).await);
    }
    let (cut, whole) = (&answers[0], &answers[1]);
    assert!(tokens(&cut.text) <= 500, "{}", cut.text);
    assert!(!whole.text.contains(NOTE), "bob has no budget");
    let [uri] = cut.resource_links.as_slice() else {
        panic!(
            "one resource_link: {:?}; last line: {:?}",
            cut.resource_links,
            cut.text.lines().last()
        )
    };
    let read = alice.read_resource(uri).await.expect("alice reads her own");
    assert!(read.len() > 100_000 && read.starts_with("## Latest page snapshot"));
    let refused = bob.read_resource(uri).await.expect_err("not bob's");
    assert!(refused.contains("is not an answer of"), "{refused}");
    let cursor = cursor_of(&cut.text).expect("a cursor");
    let foreign = bob
        .call_raw("take_snapshot", json!({ "cursor": cursor }))
        .await;
    // Bob's tools do not take `cursor` at all (he has no budget): refused either way.
    match foreign {
        Ok(answer) => assert!(answer.is_error, "{}", answer.text),
        Err(error) => assert!(!error.is_empty()),
    }
    alice.close().await;
    bob.close().await;
}

#[tokio::test]
async fn long_echoes_of_the_agents_arguments_are_shortened_without_any_flag() {
    let form = "<!doctype html><title>Form</title><label>Notes <textarea oninput=\"if (!window.sent) { window.sent = 1; location.href = '/sent?' + this.value.slice(0, 4000); }\"></textarea></label>";
    let pages = FixtureServer::start(vec![
        Route::html("/", form),
        Route::html("/sent", "<title>Sent</title><p>Sent</p>"),
    ]);
    let server = McpServer::start(&[]).await;
    let query = "q".repeat(1000);
    let long_url = format!("{}?{query}", pages.url("/"));
    let opened = server
        .call("navigate_page", json!({ "url": long_url }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    assert!(!opened.text.contains(&query), "{}", opened.text);
    assert!(
        opened.text.contains(&format!(
            "Successfully navigated to {}… ({} more characters).",
            &long_url[..100],
            long_url.len() - 100
        )),
        "{}",
        opened.text
    );

    // A fill whose value the page puts in the URL it goes to: the answer stays small.
    let sent = server
        .call("navigate_page", json!({ "url": pages.url("/") }))
        .await;
    assert!(!sent.is_error, "{}", sent.text);
    let snapshot = server.call("take_snapshot", json!({})).await.text;
    let uid = crate::fixtures::uid_of(&snapshot, "textbox \"Notes\"");
    let value = "v".repeat(2 * 1024 * 1024);
    let filled = server
        .call("fill", json!({ "uid": uid, "value": value }))
        .await;
    assert!(!filled.is_error, "{}", filled.text);
    assert!(filled.text.len() < 2_000, "{} bytes", filled.text.len());
    let went = format!("{}sent?{}", pages.url("/"), "v".repeat(4000));
    assert!(
        filled.text.contains(&format!(
            "Page navigated to {}… ({} more characters).",
            &went[..100],
            went.len() - 100
        )),
        "{}",
        filled.text
    );
    server.shutdown().await;
}

/// Every listed tool's answer (the differential scenario, then each tool it does not call)
/// stays within a small budget and keeps its output schema.
#[tokio::test]
async fn every_tools_answer_stays_within_a_small_budget() {
    const SMALL: usize = 300;
    let pages = fixture_pages();
    let workspace = scenario_workspace();
    let mut args = scenario_args();
    args.extend(
        [
            "--experimentalStructuredContent",
            "--maxOutputTokens",
            &SMALL.to_string(),
            "--categoryExtensions",
            "--categoryPwa",
            "--experimentalVision",
            "--memoryDebugging",
            "--experimentalInteropTools",
        ]
        .map(str::to_string),
    );
    let server = McpServer::start_with(args, Vec::new())
        .await
        .unwrap_or_else(|message| panic!("{message}"));
    let tools = server.list_tools().await;
    let validators = crate::typed_results::validators(&tools);
    let mut side = Side::new("ours", server);
    let mut called = std::collections::BTreeSet::new();
    let mut problems = Vec::new();
    let mut check = |tool: &str, answer: &Result<ToolOutput, String>| {
        if let Ok(output) = answer
            && tokens(&output.text) > SMALL
        {
            problems.push(format!("{tool}: {} tokens", tokens(&output.text)));
        }
        problems.extend(crate::typed_results::violation(&validators, tool, answer));
    };
    for step in scenario(&pages, workspace.path()) {
        side.run(&step).await;
        called.insert(step.tool.to_string());
        check(step.tool, &side.output);
    }
    for tool in validators.keys().filter(|tool| !called.contains(*tool)) {
        let answer = side.server.call_raw(tool, json!({})).await;
        check(tool, &answer);
    }
    assert!(called.len() >= 25, "{called:?}");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    side.server.shutdown().await;
}

/// Images count in the budget as a model pays for them (about width x height / 750 tokens): a
/// screenshot that does not fit beside the text leaves the answer, with a line that says what
/// it was and the resource that holds it, byte for byte; one that fits stays inline.
#[tokio::test]
async fn a_screenshot_over_the_budget_is_a_resource_and_one_within_it_stays() {
    let pages = FixtureServer::start(vec![Route::html(
        "/",
        "<title>Shot</title><h1>A page to take</h1>",
    )]);
    let small = McpServer::start(&["--maxOutputTokens", "300"]).await;
    let opened = small
        .call("navigate_page", json!({ "url": pages.url("/") }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    let shot = small.call("take_screenshot", json!({})).await;
    assert!(!shot.is_error, "{}", shot.text);
    assert!(
        shot.images.is_empty(),
        "the image stayed inline: {}",
        shot.text
    );
    assert!(
        shot.text.contains("[Output budget] An image of ")
            && shot.text.contains("did not fit the budget of 300 tokens"),
        "{}",
        shot.text
    );
    let [uri] = shot.resource_links.as_slice() else {
        panic!("one resource_link: {:?}", shot.resource_links)
    };
    assert!(shot.text.contains(uri.as_str()), "{}", shot.text);
    match small.read_resource_contents(uri).await {
        Ok(rmcp::model::ResourceContents::BlobResourceContents {
            blob, mime_type, ..
        }) => {
            use base64::Engine as _;
            let png = base64::engine::general_purpose::STANDARD
                .decode(blob)
                .expect("base64");
            assert!(png.starts_with(b"\x89PNG"), "a PNG");
            assert_eq!(mime_type.as_deref(), Some("image/png"));
        }
        other => panic!("the image as a blob: {other:?}"),
    }
    small.shutdown().await;

    let roomy = McpServer::start(&["--maxOutputTokens", "100000"]).await;
    let opened = roomy
        .call("navigate_page", json!({ "url": pages.url("/") }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    let shot = roomy.call("take_screenshot", json!({})).await;
    assert_eq!(shot.images.len(), 1, "{}", shot.text);
    assert!(!shot.text.contains("[Output budget]"), "{}", shot.text);
    roomy.shutdown().await;
}
