//! Downloads (`--experimentalDownloads`, beyond 1.11.0): whatever starts a download (a link,
//! a script, a redirect to an attachment), the file lands in the session's own folder, the
//! answer lists it under `## Downloads`, limits cancel what is too big, and the page and the
//! connection go on.

use crate::fixtures::uid_of;
use crate::support::{FixtureServer, McpServer, Route, ToolOutput};
use serde_json::json;
use std::path::Path;

const PAGE: &str = r#"<!doctype html><html><head><title>Files</title></head><body>
<a href="/files/report.csv" download>Report</a>
<a href="/redirect">Data</a>
<a href="/big">Big</a>
<p>Files to fetch</p>
</body></html>"#;

const CSV: &str = "name,total\nalpha,1\nbeta,2\n";
const JSON_BODY: &str = r#"{"rows":[1,2,3]}"#;

fn pages() -> FixtureServer {
    FixtureServer::start(vec![
        Route::html("/", PAGE),
        Route::new("/files/report.csv", "text/csv", CSV),
        Route::html("/redirect", "")
            .with_status(302)
            .with_header("Location", "/attachment"),
        Route::new("/attachment", "application/json", JSON_BODY).with_header(
            "Content-Disposition",
            "attachment; filename=\"../data.json\"",
        ),
        Route::new("/big", "application/octet-stream", vec![7u8; 3 << 20])
            .with_header("Content-Disposition", "attachment; filename=\"big.bin\""),
    ])
}

/// The answer of the action that started a download, which lists it.
fn downloads_listed(answer: &ToolOutput) -> String {
    assert!(!answer.is_error, "{}", answer.text);
    assert!(
        answer.text.contains("## Downloads"),
        "no download listed:\n{}",
        answer.text
    );
    answer.text.clone()
}

fn files_in(folder: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(folder)
        .expect("the downloads folder")
        .map(|entry| {
            entry
                .expect("entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn downloads_by_link_script_and_redirect_land_in_the_sessions_folder_and_are_listed() {
    let pages = pages();
    let folder = tempfile::tempdir().expect("temp dir");
    let dir = folder.path().join("downloads");
    let dir_arg = dir.display().to_string();
    let server = McpServer::start(&[
        "--experimentalDownloads",
        "--experimentalStructuredContent",
        "--downloadsDir",
        &dir_arg,
        "--maxDownloadMib",
        "1",
    ])
    .await;
    let opened = server
        .call("navigate_page", json!({ "url": pages.url("/") }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    let snapshot = server.call("take_snapshot", json!({})).await.text;

    // A link with `download`.
    let clicked = server
        .call(
            "click",
            json!({ "uid": uid_of(&snapshot, "link \"Report\"") }),
        )
        .await;
    let listed = downloads_listed(&clicked);
    let saved = dir.join("report.csv");
    assert!(
        listed.contains(&format!(
            "report.csv ({} bytes, text/csv) saved to {}",
            CSV.len(),
            saved.display()
        )),
        "{listed}"
    );
    assert_eq!(std::fs::read_to_string(&saved).expect("the file"), CSV);

    // A script's click on a blob link.
    let script = server
        .call(
            "evaluate_script",
            json!({ "function": "() => { const a = document.createElement('a'); a.href = URL.createObjectURL(new Blob(['hello notes'], { type: 'text/plain' })); a.download = 'notes.txt'; document.body.append(a); a.click(); return 'clicked'; }" }),
        )
        .await;
    let listed = downloads_listed(&script);
    assert!(
        listed.contains("notes.txt (11 bytes, text/plain) saved to"),
        "{listed}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).expect("the file"),
        "hello notes"
    );

    // A link to a redirect that ends in an attachment; its suggested name cannot leave the
    // folder.
    let clicked = server
        .call(
            "click",
            json!({ "uid": uid_of(&snapshot, "link \"Data\"") }),
        )
        .await;
    let listed = downloads_listed(&clicked);
    assert!(listed.contains("data.json ("), "{listed}");
    assert_eq!(
        std::fs::read_to_string(dir.join("_data.json")).expect("the file"),
        JSON_BODY
    );
    if let Some(structured) = &clicked.structured
        && let Some(rows) = structured.get("downloads")
    {
        assert_eq!(rows[0]["state"], "completed", "{rows}");
        assert_eq!(rows[0]["type"], "application/json", "{rows}");
    }

    // Past --maxDownloadMib: cancelled, said so, nothing left behind.
    let clicked = server
        .call("click", json!({ "uid": uid_of(&snapshot, "link \"Big\"") }))
        .await;
    let listed = downloads_listed(&clicked);
    assert!(
        listed.contains(
            "big.bin: failed (cancelled: larger than the 1 MiB a file may have (--maxDownloadMib))"
        ),
        "{listed}"
    );
    assert_eq!(files_in(&dir), ["_data.json", "notes.txt", "report.csv"]);

    // The page and the connection go on; a download is listed once.
    let after = server.call("take_snapshot", json!({})).await;
    assert!(!after.is_error, "{}", after.text);
    assert!(after.text.contains("Files to fetch"), "{}", after.text);
    assert!(!after.text.contains("## Downloads"), "{}", after.text);
    server.shutdown().await;
}

#[tokio::test]
async fn download_settings_without_the_flag_or_on_an_attached_browser_are_refused() {
    for (args, expected) in [
        (
            vec!["--maxDownloadMib", "5"],
            "take effect only with --experimentalDownloads",
        ),
        (
            vec![
                "--experimentalDownloads",
                "--browserUrl",
                "http://127.0.0.1:9",
            ],
            "needs a browser this server launches",
        ),
    ] {
        let output = crate::support::server_command()
            .args(&args)
            .args(["call", "list_pages"])
            .output()
            .expect("run the server");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?} started");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}

#[tokio::test]
async fn a_tenants_downloads_go_under_its_own_root_and_no_other_tenant_hears_of_them() {
    use crate::support::{HttpServer, TenantSpec};
    let pages = pages();
    let server = HttpServer::start(
        &[
            TenantSpec::new("alice", "token-alice").on_loopback(),
            TenantSpec::new("bob", "token-bob").on_loopback(),
        ],
        &["--experimentalDownloads"],
    )
    .await;
    let bob = server.connect("token-bob").await;
    let opened = bob.call("new_page", json!({ "url": pages.url("/") })).await;
    assert!(!opened.is_error, "{}", opened.text);
    let alice = server.connect("token-alice").await;
    let opened = alice
        .call("new_page", json!({ "url": pages.url("/") }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    let snapshot = alice.call("take_snapshot", json!({})).await.text;
    let clicked = alice
        .call(
            "click",
            json!({ "uid": uid_of(&snapshot, "link \"Report\"") }),
        )
        .await;
    assert!(!clicked.is_error, "{}", clicked.text);
    let saved = server.root("alice").join("downloads").join("report.csv");
    assert!(
        clicked
            .text
            .contains(&format!("saved to {}", saved.display())),
        "{}",
        clicked.text
    );
    assert_eq!(std::fs::read_to_string(&saved).expect("alice's file"), CSV);

    // Bob shares the browser and its DevTools connection: he hears every download event, and
    // takes none of Alice's.
    let listed = bob.call("list_pages", json!({})).await;
    assert!(!listed.text.contains("## Downloads"), "{}", listed.text);
    let bobs = server.root("bob").join("downloads");
    assert!(files_in(&bobs).is_empty(), "{:?}", files_in(&bobs));
}
