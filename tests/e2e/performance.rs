//! Performance traces and heap snapshots: real recordings, honest summaries, files in the sandbox.

use crate::fixtures;

use serde_json::json;

#[tokio::test]
async fn a_trace_is_recorded_summarised_and_saved() {
    let pages = fixtures::server();
    let workspace = tempfile::tempdir().expect("workspace");
    let server = fixtures::server_in_workspace(&pages, "/", &workspace).await;

    let started = server
        .call(
            "performance_start_trace",
            json!({ "reload": true, "autoStop": false }),
        )
        .await;
    assert_eq!(
        started.text,
        "The performance trace is being recorded. Use performance_stop_trace to stop it."
    );
    let again = server
        .call(
            "performance_start_trace",
            json!({ "reload": false, "autoStop": false }),
        )
        .await;
    assert!(!again.is_error);
    assert!(
        again
            .text
            .starts_with("Error: a performance trace is already running."),
        "{}",
        again.text
    );

    let stopped = server
        .call(
            "performance_stop_trace",
            json!({ "filePath": "trace.json.gz" }),
        )
        .await;
    assert!(!stopped.is_error, "{}", stopped.text);
    let file = workspace
        .path()
        .canonicalize()
        .expect("canonical")
        .join("trace.json.gz");
    assert!(stopped.text.starts_with(&format!("The raw trace data was saved to {}.\nThe performance trace has been stopped.\n## Summary of Performance trace findings:", file.display())), "{}", stopped.text);
    assert!(
        stopped.text.contains("# Available insight sets"),
        "{}",
        stopped.text
    );
    assert!(
        stopped.text.contains("## insight set id: NAVIGATION_0"),
        "{}",
        stopped.text
    );
    let bytes = std::fs::read(&file).expect("trace file");
    assert_eq!(&bytes[..2], &[0x1f, 0x8b], "gzipped");

    let insight = server
        .call(
            "performance_analyze_insight",
            json!({ "insightSetId": "NAVIGATION_0", "insightName": "DocumentLatency" }),
        )
        .await;
    assert!(!insight.is_error, "{}", insight.text);
    assert!(!insight.text.is_empty());
    let unknown = server
        .call(
            "performance_analyze_insight",
            json!({ "insightSetId": "NAVIGATION_0", "insightName": "ThirdParties" }),
        )
        .await;
    assert!(
        unknown.text.contains("not computed by this server"),
        "{}",
        unknown.text
    );
    let nothing = server.call("performance_stop_trace", json!({})).await;
    assert_eq!(nothing.text, "", "stopping without a trace says nothing");
    server.shutdown().await;
}

#[tokio::test]
async fn a_heap_snapshot_is_written_to_a_checked_path() {
    let pages = fixtures::server();
    let workspace = tempfile::tempdir().expect("workspace");
    let server = fixtures::server_in_workspace(&pages, "/", &workspace).await;
    let taken = server
        .call("take_heapsnapshot", json!({ "filePath": "memory.json" }))
        .await;
    let file = workspace
        .path()
        .canonicalize()
        .expect("canonical")
        .join("memory.heapsnapshot");
    assert_eq!(
        taken.text,
        format!("Heap snapshot saved to {}", file.display())
    );
    let snapshot: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&file).expect("file")).expect("JSON");
    assert!(snapshot["snapshot"]["meta"].is_object() && snapshot["nodes"].is_array());
    let refused = server
        .call("take_heapsnapshot", json!({ "filePath": "/root/escape" }))
        .await;
    assert!(
        refused.text.starts_with("Error: Access denied:"),
        "{}",
        refused.text
    );
    server.shutdown().await;
}
