//! Configuration fails closed: every name in the tenants file and in the plugin policy is
//! checked against what the server has, at start and at every reload alike (one check, so a
//! reload never accepts what start refuses), and a tenant's tool set is the server's flags
//! narrowed by the tenants file, never wider.

use crate::support::{HttpServer, TenantSpec, browser_args, devtools_mcp, refused_start};
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

/// A tenant entry the server must refuse, and what the refusal must say.
struct Case {
    lines: &'static str,
    says: &'static [&'static str],
}

const CASES: [Case; 6] = [
    Case {
        lines: "deny_tools = [\"evaluate_scirpt\"]",
        says: &[
            "deny_tools names \"evaluate_scirpt\"",
            "did you mean \"evaluate_script\"?",
            "The tools of this server are: ",
        ],
    },
    Case {
        lines: "tools = [\"take_snapshot\", \"navigate_pgae\"]",
        says: &[
            "tools names \"navigate_pgae\"",
            "did you mean \"navigate_page\"?",
        ],
    },
    Case {
        lines: "categories = [\"netwrok\"]",
        says: &["categories names \"netwrok\"", "did you mean \"network\"?"],
    },
    Case {
        lines: "flags = { categoryNetwrok = false }",
        says: &[
            "flags names \"categoryNetwrok\"",
            "did you mean \"categoryNetwork\"?",
        ],
    },
    Case {
        lines: "flags = { memoryDebugging = true }",
        says: &[
            "flag `memoryDebugging` = true would turn on tools the server's flags leave off",
            "--memoryDebugging=true",
        ],
    },
    // The sandbox root of this case is put inside the --pluginDir (see `bad_tenant`).
    Case {
        lines: "",
        says: &[
            "the --pluginDir",
            "overlaps the sandbox_root of tenant \"alice\"",
        ],
    },
];

/// Alice's entry with the case's lines; the last case puts her files in the plugin folder.
fn bad_tenant(case: &Case, plugins: &Path) -> TenantSpec {
    let alice = TenantSpec::new("alice", "token-alice").with(case.lines);
    if case.lines.is_empty() {
        alice.with_root(&plugins.join("alice-files"))
    } else {
        alice
    }
}

fn assert_says(text: &str, case: &Case) {
    for expected in case.says {
        assert!(
            text.contains(expected),
            "{expected:?} missing from:\n{text}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_name_flag_and_root_of_the_tenants_file_is_checked_at_start_and_at_reload() {
    let scratch = tempfile::tempdir().expect("scratch");
    let plugins = scratch.path().join("plugins");
    std::fs::create_dir_all(&plugins).expect("plugin folder");
    let plugin_arg = plugins.to_string_lossy().into_owned();
    let extra = ["--plugin-dir", plugin_arg.as_str()];

    // At start: each mistake stops the server, naming the entry and the way out.
    for case in &CASES {
        let printed = refused_start(scratch.path(), &[bad_tenant(case, &plugins)], &extra).await;
        assert!(printed.contains("Refusing to start"), "{printed}");
        assert_says(&printed, case);
    }

    // At reload: the same mistakes are refused whole, and the running tenants stay as they were.
    let alice = TenantSpec::new("alice", "token-alice").with("deny_tools = [\"evaluate_script\"]");
    let server = HttpServer::start(std::slice::from_ref(&alice), &extra).await;
    for (index, case) in CASES.iter().enumerate() {
        server.write_tenants(&[bad_tenant(case, &plugins)]);
        server.signal("HUP");
        let log = wait_for_refusals(&server, index + 1).await;
        assert_says(&log, case);
    }
    let client = server.connect("token-alice").await;
    let tools = client.tool_names().await;
    assert!(
        !tools.contains(&"evaluate_script".to_owned()) && tools.contains(&"list_pages".to_owned()),
        "the previous file stays in force: {tools:?}"
    );
    // A correct file is still applied.
    server.write_tenants(&[
        TenantSpec::new("alice", "token-alice").with("deny_tools = [\"list_pages\"]")
    ]);
    server.signal("HUP");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let fresh = server.connect("token-alice").await;
        let tools = fresh.tool_names().await;
        if tools.contains(&"evaluate_script".to_owned())
            && !tools.contains(&"list_pages".to_owned())
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the good file was not applied: {tools:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let listed = client.call("list_pages", json!({})).await;
    assert!(
        listed.is_error && listed.text.contains("not allowed for tenant"),
        "the reloaded file applies to an open session: {}",
        listed.text
    );
}

/// The server's log once it has refused `count` reloads.
async fn wait_for_refusals(server: &HttpServer, count: usize) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let log = server.stderr();
        if log.matches("keeping the previous tenants").count() >= count {
            return log;
        }
        assert!(
            Instant::now() < deadline,
            "reload {count} was not refused:\n{log}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn heap_or_extension_tools(tools: &[String]) -> Vec<&String> {
    tools
        .iter()
        .filter(|name| {
            name.contains("heapsnapshot") && *name != "take_heapsnapshot"
                || name.contains("extension")
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenant_is_offered_the_tools_the_server_flags_enable_narrowed_never_more() {
    let plain = TenantSpec::new("plain", "token-plain");
    let server = HttpServer::start(std::slice::from_ref(&plain), &[]).await;
    let tools = server.connect("token-plain").await.tool_names().await;
    assert!(
        heap_or_extension_tools(&tools).is_empty() && tools.contains(&"list_pages".to_owned()),
        "default flags offer no heap analysis or extension tools: {tools:?}"
    );
    drop(server);

    let narrowed = TenantSpec::new("narrowed", "token-narrowed")
        .with("flags = { memoryDebugging = false, categoryExtensions = false }");
    let server = HttpServer::start(
        &[plain, narrowed],
        &["--memoryDebugging", "--categoryExtensions"],
    )
    .await;
    let tools = server.connect("token-plain").await.tool_names().await;
    let offered = heap_or_extension_tools(&tools);
    assert!(
        tools.contains(&"get_heapsnapshot_summary".to_owned())
            && tools.contains(&"install_extension".to_owned()),
        "the server's flags enable them: {offered:?}"
    );
    let tools = server.connect("token-narrowed").await.tool_names().await;
    assert!(
        heap_or_extension_tools(&tools).is_empty(),
        "the tenant's flags narrow them away: {tools:?}"
    );
}

#[test]
fn a_policy_section_for_a_tool_no_plugin_defines_is_refused_or_under_watch_warned() {
    let scratch = tempfile::tempdir().expect("scratch");
    let policy = scratch.path().join("policy.toml");
    std::fs::write(
        &policy,
        "[plugins.evaluate_scirpt]\ncapabilities = [\"pages.read\"]\n",
    )
    .expect("policy");
    let policy_arg = policy.to_string_lossy().into_owned();
    let run = |more: &[&str]| {
        let mut args = browser_args();
        args.extend(["--policy".to_owned(), policy_arg.clone()]);
        args.extend(more.iter().map(|arg| (*arg).to_owned()));
        args.push("tools".to_owned());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        devtools_mcp(&args)
    };
    let (started, printed) = run(&[]);
    assert!(!started, "{printed}");
    assert!(
        printed.contains("[plugins.evaluate_scirpt] names \"evaluate_scirpt\"")
            && printed.contains("did you mean \"evaluate_script\"?")
            && printed.contains("name it after the tool"),
        "{printed}"
    );
    // Under --watch the plugin may still arrive: said, not refused.
    let (started, printed) = run(&["--watch"]);
    assert!(started, "{printed}");
    assert!(
        printed.contains("[plugins.evaluate_scirpt] names \"evaluate_scirpt\"")
            && printed.contains("once a plugin defining that tool is loaded"),
        "{printed}"
    );
    // A misspelt category is refused even then.
    std::fs::write(&policy, "[default]\ncategories = [\"netwrok\"]\n").expect("policy");
    let (started, printed) = run(&["--watch"]);
    assert!(!started, "{printed}");
    assert!(
        printed.contains("[default]: categories names \"netwrok\""),
        "{printed}"
    );
}
