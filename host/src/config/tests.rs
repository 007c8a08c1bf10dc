//! The flags: every spelling the reference accepts, range checks and their messages.

use super::*;
use crate::config::commands::{Command, TenantAction};

fn parse(args: &[&str]) -> Args {
    let argv = std::iter::once("devtools-mcp")
        .chain(args.iter().copied())
        .map(String::from);
    match Args::try_parse_compatible(argv) {
        Ok(args) => args,
        Err(error) => panic!("parse failed: {error}"),
    }
}

#[test]
fn serve_takes_its_flags_and_the_browser_flags_in_any_order() {
    let args = parse(&[
        "serve",
        "--http",
        "127.0.0.1:0",
        "--tenants",
        "t.toml",
        "--headless",
        "--allowedOrigin",
        "https://app.example.com:443",
    ]);
    assert!(matches!(args.command, Some(Command::Serve)));
    assert_eq!(args.http.map(|address| address.port()), Some(0));
    assert_eq!(args.tenants, Some(PathBuf::from("t.toml")));
    assert_eq!(args.headless, Some(true));
    assert_eq!(args.allowed_origin, vec!["https://app.example.com:443"]);
    let flags = args.flags_json();
    assert!(!flags.contains_key("tenants") && !flags.contains_key("http"));
    let args = parse(&["tenant", "hash-token"]);
    assert!(matches!(
        args.command,
        Some(Command::Tenant {
            action: TenantAction::HashToken
        })
    ));
}

#[test]
fn a_boolean_flag_before_the_moved_subcommand_keeps_its_meaning() {
    let args = parse(&["call", "list_pages", "{}", "--headless"]);
    assert_eq!(args.headless, Some(true));
    assert!(matches!(args.command, Some(Command::Call { ref tool, .. }) if tool == "list_pages"));
    let args = parse(&["call", "list_pages", "--isolated", "--no-headless"]);
    assert_eq!((args.isolated, args.headless), (Some(true), Some(false)));
}

#[test]
fn accepts_camel_and_kebab_case() {
    let args = parse(&[
        "--executablePath",
        "/usr/bin/chromium",
        "--user-data-dir=/tmp/p",
    ]);
    assert_eq!(
        args.executable_path,
        Some(PathBuf::from("/usr/bin/chromium"))
    );
    assert_eq!(args.user_data_dir, Some(PathBuf::from("/tmp/p")));
}

#[test]
fn booleans_take_no_prefix_and_explicit_values() {
    let args = parse(&[
        "--no-category-network",
        "--categoryEmulation=false",
        "--headless",
    ]);
    assert_eq!(args.category_network, Some(false));
    assert_eq!(args.category_emulation, Some(false));
    assert_eq!(args.headless, Some(true));
    let args = parse(&["--categoryExtensions=true", "--no-usage-statistics"]);
    assert_eq!(args.category_extensions, Some(true));
    assert_eq!(args.usage_statistics, Some(false));
}

#[test]
fn a_boolean_flag_never_takes_a_subcommand_as_its_value() {
    let args = parse(&["--http", "127.0.0.1:0", "--page-id-routing", "serve"]);
    assert!(matches!(args.command, Some(Command::Serve)));
    assert_eq!(args.page_id_routing, Some(true));
    let args = parse(&["--headless", "tools"]);
    assert!(matches!(args.command, Some(Command::Tools)));
    assert_eq!(args.headless, Some(true));
    let args = parse(&["--headless", "false", "--isolated", "true"]);
    assert_eq!((args.headless, args.isolated), (Some(false), Some(true)));
    let refused =
        Args::try_parse_compatible(["devtools-mcp", "--headless", "maybe"].map(String::from));
    assert!(refused.is_err());
}

#[test]
fn chrome_args_keep_their_dashes() {
    let args = parse(&["--chromeArg=--no-sandbox", "--chrome-arg", "--no-zygote"]);
    assert_eq!(args.chrome_arg, vec!["--no-sandbox", "--no-zygote"]);
    let args = parse(&[
        "--ignoreDefaultChromeArg=--hide-scrollbars",
        "--ignore-default-chrome-arg",
        "--mute-audio",
    ]);
    assert_eq!(
        args.ignore_default_chrome_arg,
        vec!["--hide-scrollbars", "--mute-audio"]
    );
}

/// As the reference's yargs: a flag nobody knows is reported and left out, with its value,
/// and the server starts; a subcommand is never taken for such a value.
#[test]
fn unknown_flags_are_left_out_with_their_values() {
    let argv = [
        "devtools-mcp",
        "--someNewFlag",
        "value",
        "--headless",
        "--other-new=1",
        "--no-third-new",
        "--isolated",
    ];
    let (normalized, ignored) = super::normalize(argv.map(String::from));
    assert_eq!(
        ignored,
        vec!["--someNewFlag", "--other-new", "--no-third-new"]
    );
    assert_eq!(
        normalized,
        vec!["devtools-mcp", "--headless=true", "--isolated=true"]
    );
    let args = parse(&["--someNewFlag", "--headless", "false"]);
    assert_eq!(args.headless, Some(false));
    let (normalized, ignored) =
        super::normalize(["devtools-mcp", "--newBoolean", "serve"].map(String::from));
    assert_eq!(ignored, vec!["--newBoolean"]);
    assert_eq!(normalized, vec!["devtools-mcp", "serve"]);
    // Subcommands' own flags are known.
    let (_, ignored) = super::normalize(
        ["devtools-mcp", "plugin", "new", "demo", "--lang", "rust"].map(String::from),
    );
    assert!(ignored.is_empty(), "{ignored:?}");
    // Our own commands refuse them: a misspelt restriction must not go unnoticed.
    for command in [&["serve"][..], &["plugin", "check", "x.wasm"][..]] {
        let mut argv = vec!["devtools-mcp", "--no-javascript-evalution"];
        argv.extend_from_slice(command);
        let refused = Args::try_parse_compatible(argv.iter().map(|arg| arg.to_string()));
        let error = refused
            .expect_err("an unknown flag on our own command")
            .to_string();
        assert!(
            error.contains("Unknown arguments: --no-javascript-evalution"),
            "{error}"
        );
    }
}

#[test]
fn via_cli_changes_defaults() {
    let args = parse(&["--viaCli"]);
    assert_eq!(args.headless, Some(true));
    assert_eq!(args.category_extensions, Some(true));
    assert_eq!(args.memory_debugging, Some(true));
    let args = parse(&["--viaCli", "--browserUrl", "http://127.0.0.1:9222"]);
    assert_eq!(args.headless, None);
}

#[test]
fn one_shot_commands_use_cli_semantics() {
    let args = parse(&[
        "call",
        "list_pages",
        "{}",
        "--browserUrl",
        "http://127.0.0.1:9222",
    ]);
    assert!(matches!(args.command, Some(Command::Call { ref tool, .. }) if tool == "list_pages"));
    assert_eq!(args.via_cli, Some(true));
    assert!(!args.flags_json().contains_key("command"));
    assert!(matches!(parse(&["tools"]).command, Some(Command::Tools)));
}

#[test]
fn viewport_is_validated() {
    assert_eq!(
        parse(&["--viewport", "1280x720"]).viewport,
        Some((1280, 720))
    );
    let error =
        Args::try_parse_compatible(["devtools-mcp", "--viewport", "wide"].map(String::from));
    assert!(error.is_err_and(|e| e.to_string().contains("expected WIDTHxHEIGHT")));
}

#[test]
fn flags_json_is_camel_case_without_unset_flags() {
    let flags = parse(&["--categoryExtensions", "--experimentalPageIdRouting=false"]).flags_json();
    assert_eq!(
        flags.get("categoryExtensions"),
        Some(&serde_json::Value::Bool(true))
    );
    assert_eq!(
        flags.get("pageIdRouting"),
        Some(&serde_json::Value::Bool(false))
    );
    assert!(!flags.contains_key("headless"));
}

#[test]
fn numeric_flags_are_range_checked_with_clear_errors() {
    for (flag, value) in [
        ("--pluginTimeout", "1e300"),
        ("--pluginTimeout", "1e19"),
        ("--pluginTimeout", "0"),
        ("--pluginTimeout", "-1"),
        ("--pluginTimeout", "NaN"),
        ("--pluginTimeout", "inf"),
        ("--pluginFuel", "0"),
        ("--pluginMemory", "4096"),
        ("--maxBodyBytes", "0"),
        ("--maxBodyBytes", "99999999999999999999"),
        ("--idleTimeoutSecs", "18446744073709551615"),
        ("--shutdownGraceSecs", "99999999"),
        ("--screenshotQuality", "101"),
    ] {
        let parsed = Args::try_parse_compatible(["devtools-mcp", flag, value].map(String::from));
        let error = parsed.err().map(|error| error.to_string());
        assert!(
            error.as_deref().is_some_and(|text| text.contains(value)),
            "{flag} {value}: {error:?}"
        );
    }
    assert_eq!(
        parse(&["--pluginTimeout", "86400"]).plugin_timeout,
        Some(std::time::Duration::from_secs(86_400))
    );
    assert_eq!(
        parse(&["--pluginTimeout", "0.5"]).plugin_timeout,
        Some(std::time::Duration::from_millis(500))
    );
}

#[test]
fn pwa_tools_conflict_with_a_browser_they_did_not_launch() {
    for connect in [
        ["--browserUrl", "http://127.0.0.1:1"],
        ["--wsEndpoint", "ws://127.0.0.1:1/x"],
    ] {
        let refused = Args::try_parse_compatible(
            ["devtools-mcp", "--categoryPwa", connect[0], connect[1]].map(String::from),
        )
        .err()
        .map(|error| error.to_string())
        .unwrap_or_default();
        let flag = connect[0].trim_start_matches("--");
        assert!(
            refused.contains(&format!(
                "Arguments categoryPwa and {flag} are mutually exclusive"
            )),
            "{refused}"
        );
    }
    let off = Args::try_parse_compatible(
        [
            "devtools-mcp",
            "--categoryPwa=false",
            "--browserUrl",
            "http://127.0.0.1:1",
        ]
        .map(String::from),
    );
    assert!(off.is_ok());
}

#[test]
fn conflicting_connection_flags_are_refused() {
    let result = Args::try_parse_compatible(
        [
            "devtools-mcp",
            "--browserUrl",
            "http://127.0.0.1:1",
            "--wsEndpoint",
            "ws://127.0.0.1:1",
        ]
        .map(String::from),
    );
    assert!(result.is_err());
}

fn refusal(args: &[&str]) -> String {
    let argv = std::iter::once("devtools-mcp")
        .chain(args.iter().copied())
        .map(String::from);
    Args::try_parse_compatible(argv)
        .err()
        .map(|error| error.to_string())
        .unwrap_or_default()
}

#[test]
fn url_patterns_are_arrays_as_in_the_reference_and_never_ignored() {
    let args = parse(&[
        "--blockedUrlPattern",
        "http://127.0.0.1:*/a*",
        "http://127.0.0.1:*/b*",
        "--blocked-url-pattern=http://127.0.0.1:*/c*",
        "--headless",
    ]);
    assert_eq!(args.blocked_url_pattern.len(), 3);
    assert_eq!(args.headless, Some(true));
    let patterns = args.url_patterns().expect("valid").expect("restricted");
    assert!(!patterns.is_url_allowed("http://127.0.0.1:9/c.html"));
    let allowed = parse(&["--allowedUrlPattern=http://localhost:*/*"]);
    assert!(allowed.url_patterns().expect("valid").is_some());
    assert!(parse(&[]).url_patterns().expect("valid").is_none());
}

#[test]
fn url_pattern_refusals_are_the_references() {
    let both = refusal(&[
        "--blockedUrlPattern",
        "http://a/*",
        "--allowedUrlPattern",
        "http://b/*",
    ]);
    assert!(
        both.contains("Arguments blockedUrlPattern and allowedUrlPattern are mutually exclusive"),
        "{both}"
    );
    let invalid = refusal(&["--blockedUrlPattern", "http://127.0.0.*/"]);
    assert!(
        invalid
            .contains("Invalid --blockedUrlPattern \"http://127.0.0.*/\": a partial IPv4 wildcard"),
        "{invalid}"
    );
    let empty = refusal(&["--allowedUrlPattern="]);
    assert!(
        empty.contains("Invalid --allowedUrlPattern: at least one pattern is required."),
        "{empty}"
    );
}

#[test]
fn an_empty_executable_path_means_find_the_browser_and_release_takes_its_flags() {
    let args = parse(&["--executablePath=", "--headless=false"]);
    assert_eq!((args.executable_path, args.headless), (None, Some(false)));
    let args = parse(&[
        "release",
        "verify",
        "SUMS",
        "--key",
        "a+b/c=",
        "--signature",
        "S.sig",
    ]);
    assert!(matches!(
        args.command,
        Some(Command::Release {
            command: commands::ReleaseCommand::Verify { ref key, signature: Some(_), .. }
        }) if key == "a+b/c="
    ));
}
