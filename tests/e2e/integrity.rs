//! Integrity: sha256 pins and ed25519 signatures, made with the real `plugin keygen` and
//! `plugin sign` commands and checked by the real server at start-up.

use crate::support::{McpServer, binary_dir, browser_args, devtools_mcp, keygen};
use serde_json::json;
use std::path::{Path, PathBuf};

async fn start(plugins: &Path, extra: &[&str]) -> Result<McpServer, String> {
    let mut args = browser_args();
    args.extend([
        "--plugin-dir".into(),
        plugins.to_string_lossy().into_owned(),
    ]);
    args.extend(extra.iter().map(|arg| arg.to_string()));
    McpServer::start_with(args, Vec::new()).await
}

/// Writes `policy.toml` in `dir`; returns its path as an argument.
fn write_policy(dir: &Path, text: &str) -> String {
    let policy = dir.join("policy.toml");
    std::fs::write(&policy, text).expect("policy");
    policy.to_string_lossy().into_owned()
}

/// A plugin folder holding a copy of the crashing_tool fixture: (folder, component).
fn plugin_folder(scratch: &Path) -> (PathBuf, PathBuf) {
    let plugins = scratch.join("plugins");
    std::fs::create_dir(&plugins).expect("plugins dir");
    let component = plugins.join("crashing_tool.wasm");
    std::fs::copy(
        binary_dir().join("test-plugins/crashing_tool.wasm"),
        &component,
    )
    .expect("copy fixture");
    (plugins, component)
}

#[tokio::test]
async fn signed_components_load_and_tampered_unsigned_or_unknown_ones_are_refused() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let (plugins, component) = plugin_folder(scratch.path());
    let (key, public) = keygen(scratch.path(), "release.key");
    let (other_key, _) = keygen(scratch.path(), "other.key");
    let policy_arg = write_policy(
        scratch.path(),
        &format!("[signing]\ntrusted_keys = [\"{public}\"]\nrequire_signed = true\n"),
    );
    let component_arg = component.to_string_lossy().into_owned();

    // Unsigned, with signatures required.
    let error = start(&plugins, &["--policy", &policy_arg])
        .await
        .err()
        .unwrap_or_default();
    assert!(
        error.contains(&format!(
            "Plugin {component_arg} was refused: it is not signed and --require-signed is on"
        )),
        "{error}"
    );

    // Signed by a trusted key: loads and works.
    let (ok, text) = devtools_mcp(&["plugin", "sign", &component_arg, "--key", &key]);
    assert!(ok, "{text}");
    let server = start(&plugins, &["--policy", &policy_arg])
        .await
        .unwrap_or_else(|error| panic!("{error}"));
    let answer = server.call("crashing_tool", json!({ "mode": "ok" })).await;
    assert_eq!(answer.text, "Before the crash\nNo crash");
    server.shutdown().await;

    // One byte changed after signing: refused even without --require-signed.
    let mut bytes = std::fs::read(&component).expect("read");
    let last = bytes.len() - 1;
    bytes[last] ^= 0x01;
    std::fs::write(&component, &bytes).expect("tamper");
    let error = start(&plugins, &[]).await.err().unwrap_or_default();
    assert!(
        error.contains(&format!(
            "Plugin {component_arg} was refused: the signature in "
        )) && error.contains("does not match the component: the file was altered after signing"),
        "{error}"
    );

    // Signed by a key the policy does not trust.
    bytes[last] ^= 0x01;
    std::fs::write(&component, &bytes).expect("restore");
    let (ok, text) = devtools_mcp(&["plugin", "sign", &component_arg, "--key", &other_key]);
    assert!(ok, "{text}");
    let error = start(&plugins, &["--policy", &policy_arg])
        .await
        .err()
        .unwrap_or_default();
    assert!(
        error.contains("which is not among the policy's [signing] trusted_keys"),
        "{error}"
    );
}

#[tokio::test]
async fn a_pinned_hash_refuses_any_other_content() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let (plugins, component) = plugin_folder(scratch.path());
    let component_arg = component.to_string_lossy().into_owned();
    let (ok, report) = devtools_mcp(&["plugin", "check", &component_arg]);
    assert!(ok, "{report}");
    let sha256 = report
        .lines()
        .find_map(|line| line.trim().strip_prefix("sha256: "))
        .expect("check prints the sha256")
        .to_string();
    let policy_arg = write_policy(
        scratch.path(),
        &format!("[plugins.crashing_tool]\nsha256 = \"{sha256}\"\n"),
    );
    let server = start(&plugins, &["--policy", &policy_arg])
        .await
        .unwrap_or_else(|error| panic!("{error}"));
    server.shutdown().await;

    // The same tool in other bytes (the module encoded as a component): the pin refuses it.
    let module = std::fs::read(&component).expect("read");
    let other = wit_component::ComponentEncoder::default()
        .module(&module)
        .and_then(|encoder| encoder.validate(true).encode())
        .expect("componentize");
    std::fs::write(&component, &other).expect("replace");
    let error = start(&plugins, &["--policy", &policy_arg])
        .await
        .err()
        .unwrap_or_default();
    assert!(
        error.contains(&format!(
            "Plugin {component_arg} (tool `crashing_tool`) was refused by the policy: its sha256 is "
        )) && error.contains(&format!("but the policy pins [plugins.crashing_tool] to {sha256}")),
        "{error}"
    );
}

/// The cache entries (any naming) of the component whose bytes hash to `sha256`.
fn cache_entries(cache: &Path, sha256: &str) -> Vec<PathBuf> {
    std::fs::read_dir(cache)
        .expect("cache folder")
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.starts_with(sha256))
        })
        .collect()
}

fn sha256_hex(path: &Path) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(std::fs::read(path).expect("read")))
}

#[tokio::test]
async fn compiled_code_planted_in_the_cache_is_refused_and_recompiled() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let (plugins, victim) = plugin_folder(scratch.path());
    let attacker = plugins.join("hostile.wasm");
    std::fs::copy(binary_dir().join("test-plugins/hostile.wasm"), &attacker).expect("copy");
    // A cache of this test's own, so that its entries are this server's.
    let cache = scratch.path().join("compiled");
    let cache_arg = cache.to_string_lossy().into_owned();
    let server = start(&plugins, &["--cache-dir", &cache_arg])
        .await
        .unwrap_or_else(|error| panic!("{error}"));
    server.shutdown().await;
    let victim_entries = cache_entries(&cache, &sha256_hex(&victim));
    let attacker_entries = cache_entries(&cache, &sha256_hex(&attacker));
    assert_eq!((victim_entries.len(), attacker_entries.len()), (1, 1));
    // Someone who can write the cache puts the hostile tool's compiled code (genuine output of
    // this very server) where crashing_tool's code is looked up.
    std::fs::copy(&attacker_entries[0], &victim_entries[0]).expect("plant");
    let log = scratch.path().join("server.log");
    let server = start(
        &plugins,
        &[
            "--cache-dir",
            &cache_arg,
            "--log-file",
            &log.to_string_lossy(),
        ],
    )
    .await
    .unwrap_or_else(|error| panic!("{error}"));
    let answer = server.call("crashing_tool", json!({ "mode": "ok" })).await;
    assert_eq!(answer.text, "Before the crash\nNo crash");
    server.shutdown().await;
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        logged.contains("refusing a compiled-code cache entry; recompiling"),
        "{logged}"
    );
    // The key that seals entries lives outside the cache folder, private.
    use std::os::unix::fs::MetadataExt;
    let key = scratch.path().join("compiled-key/cache.key");
    assert_eq!(std::fs::metadata(&key).expect("key").mode() & 0o777, 0o600);
}
