//! Named sessions (`--sessionStore`, beyond 1.11.0): a login saved by one server is restored by
//! the next, and the site sees it; the file is sealed (no value in it or in any answer), bound
//! to its name and owner (a tampered, renamed or foreign file is refused); under `serve` one
//! tenant never sees or restores another's; without the flag the tools are absent.

use crate::support::{FixtureServer, HttpServer, McpServer, Route, TenantSpec, ToolOutput};
use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

const TOOLS: [&str; 4] = [
    "save_session",
    "restore_session",
    "list_sessions",
    "delete_session",
];
/// The session cookie the fixture site sets on login: HttpOnly, so no page script reads it.
const SECRET: &str = "alice-7f3c9e";
/// What the login page keeps in local storage.
const THEME: &str = "dusk-51b2";
/// What the login page keeps in IndexedDB.
const NOTE: &str = "note-0c44d1";

fn site() -> FixtureServer {
    FixtureServer::start(vec![
        Route::html(
            "/login",
            format!(
                "<!doctype html><title>Login</title><p>welcome</p><script>localStorage.setItem('theme', '{THEME}'); const r = indexedDB.open('app', 1); r.onupgradeneeded = () => r.result.createObjectStore('notes', {{ keyPath: 'id' }}); r.onsuccess = () => {{ const tx = r.result.transaction('notes', 'readwrite'); tx.objectStore('notes').put({{ id: 1, text: '{NOTE}' }}); tx.oncomplete = () => document.body.append('note kept'); }};</script>"
            ),
        )
        .with_header("Set-Cookie", &format!("sid={SECRET}; Path=/; HttpOnly")),
        Route::account("/account", "sid"),
        Route::html(
            "/prefs",
            "<!doctype html><title>Prefs</title><p id=t></p><p id=n></p><script>document.getElementById('t').textContent = 'theme is ' + (localStorage.getItem('theme') || 'unset'); const r = indexedDB.open('app'); r.onsuccess = () => { const db = r.result; const note = (text) => document.getElementById('n').textContent = 'note is ' + text; if (!db.objectStoreNames.contains('notes')) return note('unset'); db.transaction('notes').objectStore('notes').get(1).onsuccess = (e) => note(e.target.result ? e.target.result.text : 'unset'); };</script>",
        ),
    ])
}

/// A store folder and a key file (mode 600) in `dir`: the flags that name them.
fn store_flags(dir: &Path) -> Vec<String> {
    let key = dir.join("session.key");
    std::fs::write(
        &key,
        "4f1c2d3e4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0\n",
    )
    .expect("key");
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    vec![
        "--sessionStore".into(),
        dir.join("store").display().to_string(),
        "--sessionKeyFile".into(),
        key.display().to_string(),
    ]
}

fn as_strs(flags: &[String]) -> Vec<&str> {
    flags.iter().map(String::as_str).collect()
}

fn ok(answer: &ToolOutput) -> &str {
    assert!(!answer.is_error, "{}", answer.text);
    &answer.text
}

/// What the account page says after a fresh load.
async fn account_stdio(server: &McpServer, site: &FixtureServer) -> String {
    ok(&server
        .call("navigate_page", json!({ "url": site.url("/account") }))
        .await);
    ok(&server.call("take_snapshot", json!({})).await).to_string()
}

#[tokio::test]
async fn a_login_saved_before_a_restart_is_restored_and_the_site_sees_it() {
    let site = site();
    let dir = tempfile::tempdir().expect("dir");
    let flags = store_flags(dir.path());
    let first = McpServer::start(&as_strs(&flags)).await;
    let names: Vec<String> = first
        .list_tools()
        .await
        .into_iter()
        .map(|tool| tool.name.to_string())
        .collect();
    for tool in TOOLS {
        assert!(names.iter().any(|name| name == tool), "{tool}: {names:?}");
    }
    ok(&first
        .call("navigate_page", json!({ "url": site.url("/login") }))
        .await);
    ok(&first
        .call("wait_for", json!({ "text": ["note kept"] }))
        .await);
    let account = account_stdio(&first, &site).await;
    assert!(
        account.contains(&format!("logged in as {SECRET}")),
        "{account}"
    );
    let saved = first.call("save_session", json!({ "name": "work" })).await;
    let saved = ok(&saved);
    let origin = site.url("/").trim_end_matches('/').to_string();
    assert!(
        saved.contains(&format!(
            "Saved session \"work\": 1 cookie (sites: 127.0.0.1), storage of 1 origin ({origin}), 1 IndexedDB database"
        )),
        "{saved}"
    );
    for value in [SECRET, THEME, NOTE] {
        assert!(!saved.contains(value), "a value reached the agent: {saved}");
    }
    first.shutdown().await;
    let file = dir.path().join("store/local/work.session");
    let sealed = std::fs::read(&file).expect("the session file");
    for value in [SECRET, THEME, NOTE] {
        assert!(
            !sealed
                .windows(value.len())
                .any(|bytes| bytes == value.as_bytes()),
            "{value} is readable in the file"
        );
    }

    // A new server: a fresh browser, signed out, until the session is restored.
    let second = McpServer::start(&as_strs(&flags)).await;
    let account = account_stdio(&second, &site).await;
    assert!(account.contains("not logged in"), "{account}");
    let restored = second
        .call("restore_session", json!({ "name": "work" }))
        .await;
    assert!(ok(&restored).contains("Restored session \"work\": 1 cookie"));
    assert!(!restored.text.contains(SECRET), "{}", restored.text);
    let account = account_stdio(&second, &site).await;
    assert!(
        account.contains(&format!("logged in as {SECRET}")),
        "{account}"
    );
    let listed = second.call("list_sessions", json!({})).await;
    assert!(
        ok(&listed).contains("work [active]: 1 cookie (sites: 127.0.0.1)"),
        "{}",
        listed.text
    );
    assert!(!listed.text.contains(SECRET), "{}", listed.text);
    let bad = second
        .call("restore_session", json!({ "name": "../work" }))
        .await;
    assert!(bad.is_error, "{}", bad.text);
    assert!(
        bad.text.contains("1 to 64 characters of A-Z, a-z, 0-9"),
        "{}",
        bad.text
    );

    // A file copied to another name, and a tampered one: refused, nothing restored.
    std::fs::copy(&file, dir.path().join("store/local/copy.session")).expect("copy");
    let copied = second
        .call("restore_session", json!({ "name": "copy" }))
        .await;
    assert!(copied.is_error, "{}", copied.text);
    assert!(copied.text.contains("was refused"), "{}", copied.text);
    let mut tampered = sealed.clone();
    let middle = tampered.len() / 2;
    tampered[middle] ^= 0x20;
    std::fs::write(dir.path().join("store/local/edited.session"), &tampered).expect("write");
    let edited = second
        .call("restore_session", json!({ "name": "edited" }))
        .await;
    assert!(edited.is_error, "{}", edited.text);
    assert!(edited.text.contains("was refused"), "{}", edited.text);
    second.shutdown().await;

    // --session restores it before the first call.
    let mut at_start = flags.clone();
    at_start.extend(["--session".to_string(), "work".to_string()]);
    let third = McpServer::start(&as_strs(&at_start)).await;
    // No page of the site was open: its local storage went in through a blank page, which
    // is not one of the session's pages.
    ok(&third
        .call("navigate_page", json!({ "url": site.url("/prefs") }))
        .await);
    let prefs = third
        .call("wait_for", json!({ "text": [format!("note is ")] }))
        .await;
    let prefs = ok(&prefs).to_string();
    assert!(prefs.contains(&format!("theme is {THEME}")), "{prefs}");
    assert!(prefs.contains(&format!("note is {NOTE}")), "{prefs}");
    let listed = ok(&third.call("list_pages", json!({})).await).to_string();
    assert_eq!(listed.matches("127.0.0.1").count(), 1, "{listed}");
    let account = account_stdio(&third, &site).await;
    assert!(
        account.contains(&format!("logged in as {SECRET}")),
        "{account}"
    );
    let deleted = third
        .call("delete_session", json!({ "name": "work" }))
        .await;
    assert!(ok(&deleted).contains("Deleted session \"work\""));
    assert!(!file.exists());
    third.shutdown().await;

    // A --session that cannot be opened stops the start, with the reason.
    let mut tampered_start = flags.clone();
    tampered_start.extend(["--session".to_string(), "edited".to_string()]);
    let mut args = crate::support::browser_args();
    args.extend(tampered_start);
    let refused = McpServer::start_with(args, Vec::new()).await.err();
    let refused = refused.expect("a tampered --session must refuse the start");
    assert!(refused.contains("--session edited"), "{refused}");
    assert!(refused.contains("was refused"), "{refused}");
}

#[tokio::test]
async fn without_the_flag_the_tools_are_absent_and_without_a_key_the_server_refuses() {
    let server = McpServer::start(&[]).await;
    let names: Vec<String> = server
        .list_tools()
        .await
        .into_iter()
        .map(|tool| tool.name.to_string())
        .collect();
    for tool in TOOLS {
        assert!(!names.iter().any(|name| name == tool), "{tool} listed");
    }
    server.shutdown().await;

    let dir = tempfile::tempdir().expect("dir");
    let mut args = crate::support::browser_args();
    args.extend([
        "--sessionStore".to_string(),
        dir.path().join("store").display().to_string(),
    ]);
    let refused = McpServer::start_with(args, Vec::new()).await.err();
    let refused = refused.expect("a store without a key must refuse the start");
    assert!(
        refused.contains("--sessionKeyFile") && refused.contains("DEVTOOLS_MCP_SESSION_KEY"),
        "{refused}"
    );
}

fn tenant_file(store: &Path, tenant: &str) -> PathBuf {
    store.join("tenants").join(tenant).join("work.session")
}

#[tokio::test]
async fn under_serve_a_tenant_never_sees_or_restores_anothers_session() {
    let site = site();
    let dir = tempfile::tempdir().expect("dir");
    let flags = store_flags(dir.path());
    let tenants = [
        TenantSpec::new("alice", "token-alice").on_loopback(),
        TenantSpec::new("bob", "token-bob").on_loopback(),
        TenantSpec::new("carol", "token-carol")
            .on_loopback()
            .with("flags = { sessionStore = false }"),
    ];
    let server = HttpServer::start(&tenants, &as_strs(&flags)).await;
    let alice = server.connect("token-alice").await;
    let bob = server.connect("token-bob").await;
    for tool in TOOLS {
        assert!(alice.tool_names().await.iter().any(|name| name == tool));
    }
    ok(&alice
        .call("new_page", json!({ "url": site.url("/login") }))
        .await);
    let saved = alice.call("save_session", json!({ "name": "work" })).await;
    assert!(
        ok(&saved).contains("1 cookie (sites: 127.0.0.1)"),
        "{}",
        saved.text
    );

    let listed = bob.call("list_sessions", json!({})).await;
    assert!(
        ok(&listed).contains("No sessions are saved"),
        "{}",
        listed.text
    );
    let restored = bob.call("restore_session", json!({ "name": "work" })).await;
    assert!(restored.is_error, "{}", restored.text);
    assert!(
        restored
            .text
            .contains("No session is saved under the name \"work\""),
        "{}",
        restored.text
    );
    // Alice's file put into Bob's folder: sealed to Alice, refused.
    let store = dir.path().join("store");
    std::fs::create_dir_all(tenant_file(&store, "bob").parent().expect("folder")).expect("dir");
    std::fs::copy(tenant_file(&store, "alice"), tenant_file(&store, "bob")).expect("copy");
    let foreign = bob.call("restore_session", json!({ "name": "work" })).await;
    assert!(foreign.is_error, "{}", foreign.text);
    assert!(foreign.text.contains("was refused"), "{}", foreign.text);
    let opened = bob
        .call("new_page", json!({ "url": site.url("/account") }))
        .await;
    ok(&opened);
    let page = bob.call("take_snapshot", json!({})).await;
    assert!(ok(&page).contains("not logged in"), "{}", page.text);

    // Alice's own restore works.
    let back = alice
        .call("restore_session", json!({ "name": "work" }))
        .await;
    assert!(
        ok(&back).contains("Restored session \"work\""),
        "{}",
        back.text
    );
    alice.close().await;
    bob.close().await;

    // A tenant whose flags switch sessions off is offered none of the tools.
    let carol = server.connect("token-carol").await;
    let offered = carol.tool_names().await;
    for tool in TOOLS {
        assert!(
            !offered.iter().any(|name| name == tool),
            "{tool}: {offered:?}"
        );
    }
    carol.close().await;
}

/// Recovery (`--experimentalRecovery`): the browser killed, the next call relaunches it and
/// restores the active session before the lost pages reopen, so they load signed in, and the
/// one recovery note says so.
#[tokio::test]
async fn after_the_browser_dies_the_active_session_is_restored_before_pages_reopen() {
    use crate::support::{descendants, kill_all, wait_until_gone};
    let site = site();
    let dir = tempfile::tempdir().expect("dir");
    let mut flags = store_flags(dir.path());
    flags.push("--experimentalRecovery".into());
    let server = McpServer::start(&as_strs(&flags)).await;
    ok(&server
        .call("navigate_page", json!({ "url": site.url("/login") }))
        .await);
    ok(&server.call("save_session", json!({ "name": "work" })).await);
    let account = account_stdio(&server, &site).await;
    assert!(
        account.contains(&format!("logged in as {SECRET}")),
        "{account}"
    );

    let browser = descendants(server.pid());
    assert!(!browser.is_empty(), "no browser process");
    kill_all(&browser);
    assert!(
        wait_until_gone(&browser, std::time::Duration::from_secs(10))
            .await
            .is_empty()
    );
    let listed = server.call("list_pages", json!({})).await;
    assert!(
        ok(&listed).contains("was started again; these pages were reopened"),
        "{}",
        listed.text
    );
    assert!(
        listed
            .text
            .contains("; the named session \"work\" was restored."),
        "{}",
        listed.text
    );
    // The reopened page loaded with the session's cookie (a session cookie: the killed
    // browser's profile kept none).
    let page = server.call("take_snapshot", json!({})).await;
    assert!(
        ok(&page).contains(&format!("logged in as {SECRET}")),
        "{}",
        page.text
    );
    assert!(
        !page.text.contains("was restored"),
        "said twice: {}",
        page.text
    );
    server.shutdown().await;
}
