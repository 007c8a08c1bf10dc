//! Plugins through a real OCI registry (Debian's `docker-registry`, distribution/distribution,
//! on loopback): `plugin publish`, `plugin install`, the lock file's pins (and `--update`), and
//! what must be refused before anything is written: a tampered blob, a signature by a key the
//! policy does not trust, an unsigned artifact, a registry that is down.

use crate::support::{McpServer, binary_dir, browser_args, devtools_mcp, keygen};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

/// A `docker-registry` serving a folder of the test's on a free loopback port.
pub(crate) struct Registry {
    child: Child,
    port: u16,
    storage: PathBuf,
}

impl Registry {
    pub(crate) fn start(scratch: &Path) -> Registry {
        let program = crate::support::which("docker-registry").unwrap_or_else(|| {
            panic!("Debian's docker-registry is not installed (scripts/test installs it: apt-get install docker-registry)")
        });
        let port = crate::support::free_port();
        let storage = scratch.join("registry");
        let config = scratch.join("registry.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: 127.0.0.1:{port}\n",
                storage.display()
            ),
        )
        .expect("registry config");
        let child = crate::support::command(program)
            .arg("serve")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start docker-registry");
        crate::support::wait_for_port(port, Duration::from_secs(20), "docker-registry");
        Registry {
            child,
            port,
            storage,
        }
    }

    pub(crate) fn reference(&self, name: &str) -> String {
        format!("oci://127.0.0.1:{}/{name}", self.port)
    }

    /// The file the registry keeps a blob's bytes in.
    fn blob_file(&self, digest: &str) -> PathBuf {
        let hex = digest.trim_start_matches("sha256:");
        self.storage
            .join("docker/registry/v2/blobs/sha256")
            .join(&hex[..2])
            .join(hex)
            .join("data")
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        self.stop();
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    hex::encode(sha2::Sha256::digest(bytes))
}

fn wasm_files(folder: &Path) -> Vec<String> {
    crate::support::file_names(folder)
        .into_iter()
        .filter(|name| !name.ends_with(".lock"))
        .collect()
}

#[tokio::test]
async fn plugins_publish_install_pin_and_refuse_tampering_untrusted_keys_and_a_dead_registry() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let dir = scratch.path();
    let mut registry = Registry::start(dir);
    let fixture = |name: &str| {
        let path = dir.join(format!("{name}.wasm"));
        std::fs::copy(
            binary_dir().join(format!("test-plugins/{name}.wasm")),
            &path,
        )
        .expect("copy fixture");
        path.to_string_lossy().into_owned()
    };
    let crashing = fixture("crashing_tool");
    let noop = fixture("noop");
    let crashing_bytes = std::fs::read(&crashing).expect("read");
    let (trusted_key, trusted_public) = keygen(dir, "release.key");
    let (stranger_key, stranger_public) = keygen(dir, "stranger.key");
    let policy = dir.join("policy.toml");
    std::fs::write(
        &policy,
        format!("[signing]\ntrusted_keys = [\"{trusted_public}\"]\n"),
    )
    .expect("policy");
    let policy_arg = policy.to_string_lossy().into_owned();
    let plugins = dir.join("plugins");
    let plugins_arg = plugins.to_string_lossy().into_owned();
    let install = |reference: Option<&str>, folder: &str, extra: &[&str]| {
        let mut args = vec!["plugin", "install"];
        args.extend(reference);
        args.extend(["--plugin-dir", folder, "--policy", &policy_arg]);
        args.extend(extra);
        devtools_mcp(&args)
    };

    // Publish, signed while publishing; install: the component, its signature, the lock.
    let tagged = registry.reference("tools/crashing_tool:1.0.0");
    let (ok, text) = devtools_mcp(&[
        "plugin",
        "publish",
        &crashing,
        &tagged,
        "--key",
        &trusted_key,
    ]);
    assert!(ok, "{text}");
    let published_digest = |text: &str| {
        text.split("(sha256:")
            .nth(1)
            .and_then(|rest| rest.split(')').next())
            .map(|hex| format!("sha256:{hex}"))
            .unwrap_or_else(|| panic!("publish prints the digest: {text}"))
    };
    let digest = published_digest(&text);
    let (ok, text) = install(Some(&tagged), &plugins_arg, &[]);
    assert!(ok, "{text}");
    assert!(
        text.contains(&format!("signed by trusted key {trusted_public}")),
        "{text}"
    );
    assert!(text.contains("Tool crashing_tool"), "{text}");
    let installed = plugins.join("crashing_tool.wasm");
    assert_eq!(
        std::fs::read(&installed).expect("installed"),
        crashing_bytes
    );
    let lock =
        std::fs::read_to_string(dir.join("policy.lock")).expect("the lock beside the policy");
    assert!(lock.contains(&format!("digest = \"{digest}\"")), "{lock}");
    assert!(lock.contains(&sha256_hex(&crashing_bytes)), "{lock}");

    // The server loads what was installed, signature and all.
    let mut args = browser_args();
    args.extend([
        "--plugin-dir".into(),
        plugins_arg.clone(),
        "--policy".into(),
        policy_arg.clone(),
    ]);
    args.push("--require-signed".into());
    let server = McpServer::start_with(args, Vec::new())
        .await
        .unwrap_or_else(|error| panic!("{error}"));
    let answer = server.call("crashing_tool", json!({ "mode": "ok" })).await;
    assert_eq!(answer.text, "Before the crash\nNo crash");
    server.shutdown().await;

    // The tag moves to other bytes: --locked (and a bare `install`) puts back the pinned ones.
    let (ok, text) = devtools_mcp(&["plugin", "publish", &noop, &tagged, "--key", &trusted_key]);
    assert!(ok, "{text}");
    let moved_digest = published_digest(&text);
    assert_ne!(moved_digest, digest);
    let noop_bytes = std::fs::read(&noop).expect("read");
    std::fs::remove_file(&installed).expect("remove");
    let (ok, text) = install(None, &plugins_arg, &[]);
    assert!(ok, "{text}");
    assert_eq!(
        std::fs::read(&installed).expect("reinstalled"),
        crashing_bytes
    );
    let (ok, text) = install(Some(&tagged), &plugins_arg, &["--locked"]);
    assert!(ok, "{text}");
    assert_eq!(
        std::fs::read(&installed).expect("reinstalled"),
        crashing_bytes
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("policy.lock")).expect("lock"),
        lock,
        "a pinned reinstall leaves the lock as it was"
    );
    // As cargo's lock: a plain install of the tag installs what the lock pins, and says the
    // tag moved and how to follow it.
    let (ok, text) = install(Some(&tagged), &plugins_arg, &[]);
    assert!(ok, "{text}");
    assert_eq!(std::fs::read(&installed).expect("pinned"), crashing_bytes);
    assert!(
        text.contains(&format!(
            "Note: the tag {tagged} now points at {moved_digest}; installed {digest}"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!("`devtools-mcp plugin install {tagged} --update`")),
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("policy.lock")).expect("lock"),
        lock,
        "installing the pinned digest leaves the lock as it was"
    );
    // --update follows the tag, and says what changed.
    let (ok, text) = install(Some(&tagged), &plugins_arg, &["--update"]);
    assert!(ok, "{text}");
    assert_eq!(std::fs::read(&installed).expect("updated"), noop_bytes);
    assert!(
        text.contains(&format!(
            "Updated crashing_tool.wasm: {tagged}: {digest} -> {moved_digest} (component sha256 {} -> {})",
            sha256_hex(&crashing_bytes),
            sha256_hex(&noop_bytes)
        )),
        "{text}"
    );
    let updated_lock = std::fs::read_to_string(dir.join("policy.lock")).expect("lock");
    assert!(
        updated_lock.contains(&format!("digest = \"{moved_digest}\"")),
        "{updated_lock}"
    );

    // Signed by a key the policy does not trust, or not signed: refused, nothing written.
    let fresh = dir.join("fresh");
    let fresh_arg = fresh.to_string_lossy().into_owned();
    let fresh_lock = dir.join("fresh.lock").to_string_lossy().into_owned();
    let stranger = registry.reference("tools/stranger:1");
    let (ok, text) = devtools_mcp(&[
        "plugin",
        "publish",
        &crashing,
        &stranger,
        "--key",
        &stranger_key,
    ]);
    assert!(ok, "{text}");
    let (ok, text) = install(Some(&stranger), &fresh_arg, &["--lock", &fresh_lock]);
    assert!(!ok, "{text}");
    assert!(
        text.contains(&format!(
            "it is signed by {stranger_public}, a key the policy does not trust"
        )),
        "{text}"
    );
    assert!(text.contains("Nothing was written"), "{text}");
    assert_eq!(wasm_files(&fresh), Vec::<String>::new());
    let unsigned = registry.reference("tools/unsigned:1");
    let (ok, text) = devtools_mcp(&["plugin", "publish", &crashing, &unsigned]);
    assert!(ok && text.contains("It is not signed"), "{text}");
    let (ok, text) = install(Some(&unsigned), &fresh_arg, &["--lock", &fresh_lock]);
    assert!(
        !ok && text.contains("it is not signed; pass --allow-untrusted"),
        "{text}"
    );
    assert_eq!(wasm_files(&fresh), Vec::<String>::new());
    let (ok, text) = install(
        Some(&unsigned),
        &fresh_arg,
        &["--allow-untrusted", "--lock", &fresh_lock],
    );
    assert!(ok, "{text}");
    assert_eq!(wasm_files(&fresh), vec!["unsigned.wasm".to_string()]);

    // A blob altered in the registry's storage: the digest check refuses it, nothing written.
    let tampered = registry.reference("tools/tampered:1");
    let (ok, text) = devtools_mcp(&["plugin", "publish", &noop, &tampered, "--key", &trusted_key]);
    assert!(ok, "{text}");
    let noop_digest = format!(
        "sha256:{}",
        sha256_hex(&std::fs::read(&noop).expect("noop"))
    );
    let blob = registry.blob_file(&noop_digest);
    let mut bytes = std::fs::read(&blob).expect("the registry's blob");
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x01;
    std::fs::write(&blob, &bytes).expect("tamper");
    let elsewhere = dir.join("elsewhere");
    let elsewhere_arg = elsewhere.to_string_lossy().into_owned();
    let elsewhere_lock = dir.join("elsewhere.lock").to_string_lossy().into_owned();
    let (ok, text) = install(
        Some(&tampered),
        &elsewhere_arg,
        &["--lock", &elsewhere_lock],
    );
    assert!(!ok, "{text}");
    assert!(text.contains("does not match its digest"), "{text}");
    assert!(text.contains("nothing was installed"), "{text}");
    assert_eq!(wasm_files(&elsewhere), Vec::<String>::new());

    // The registry down: a clear error naming it, the installed plugin untouched.
    registry.stop();
    let (ok, text) = install(Some(&tagged), &plugins_arg, &[]);
    assert!(!ok, "{text}");
    assert!(
        text.contains(&format!(
            "Cannot reach the registry 127.0.0.1:{}",
            registry.port
        )),
        "{text}"
    );
    assert_eq!(std::fs::read(&installed).expect("still there"), noop_bytes);

    // Bad references say how to write one.
    let (ok, text) = install(Some("ghcr.io/acme/x:1"), &plugins_arg, &[]);
    assert!(!ok && text.contains("oci://HOST[:PORT]/NAME:TAG"), "{text}");
}
