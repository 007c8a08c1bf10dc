//! The plugin catalog (issue 49 item 5): an index of this project's example plugins published
//! to a real OCI registry (Debian's docker-registry on loopback), written by `plugin index add`,
//! signed by `plugin sign`; `plugin search`, `plugin info` and `plugin install NAME[@VERSION]`
//! read it from a file and over HTTP, and an unsigned, tampered or foreign-signed index is
//! refused before anything is installed.

use crate::registry::Registry;
use crate::support::{FixtureServer, Route, binary_dir, devtools_mcp, keygen};
use std::path::Path;

fn copy_fixture(dir: &Path, name: &str) -> String {
    let path = dir.join(format!("{name}.wasm"));
    std::fs::copy(
        binary_dir().join(format!("test-plugins/{name}.wasm")),
        &path,
    )
    .expect("copy fixture");
    path.to_string_lossy().into_owned()
}

#[test]
fn a_signed_index_finds_describes_and_installs_plugins_and_a_tampered_one_is_refused() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let dir = scratch.path();
    let registry = Registry::start(dir);
    let crashing = copy_fixture(dir, "crashing_tool");
    let noop = copy_fixture(dir, "noop");
    let (key, public) = keygen(dir, "publisher.key");
    let (stranger_key, _) = keygen(dir, "stranger.key");
    let policy = dir.join("policy.toml");
    std::fs::write(
        &policy,
        format!("[signing]\ntrusted_keys = [\"{public}\"]\n"),
    )
    .expect("policy");
    let policy = policy.to_string_lossy().into_owned();
    let index = dir.join("index.json").to_string_lossy().into_owned();

    // Published, then added to the index from the component and the registry.
    for (file, reference) in [
        (
            &crashing,
            registry.reference("examples/crashing_tool:1.0.0"),
        ),
        (&noop, registry.reference("examples/noop:1.0.0")),
        (&noop, registry.reference("examples/noop:1.1.0")),
    ] {
        let (ok, text) = devtools_mcp(&["plugin", "publish", file, &reference, "--key", &key]);
        assert!(ok, "{text}");
        let (ok, text) = devtools_mcp(&[
            "plugin",
            "index",
            "add",
            &index,
            file,
            "--reference",
            &reference,
        ]);
        assert!(ok, "{text}");
        assert!(text.contains("Sign the index again"), "{text}");
    }
    // A reference whose tag holds other bytes is not added.
    let (ok, text) = devtools_mcp(&[
        "plugin",
        "index",
        "add",
        &index,
        &crashing,
        "--reference",
        &registry.reference("examples/noop:1.0.0"),
    ]);
    assert!(!ok && text.contains("holds other bytes"), "{text}");

    // Unsigned: refused, with the way out.
    let search = |extra: &[&str]| {
        let mut args = vec!["plugin", "search"];
        args.extend_from_slice(extra);
        devtools_mcp(&args)
    };
    let (ok, text) = search(&["crash", "--index", &index, "--policy", &policy]);
    assert!(
        !ok && text.contains("it is not signed") && text.contains("plugin sign"),
        "{text}"
    );

    // Signed by a trusted key: found by words, described, installed by name.
    let (ok, text) = devtools_mcp(&["plugin", "sign", &index, "--key", &key]);
    assert!(ok, "{text}");
    let (ok, text) = search(&["crash", "--index", &index, "--policy", &policy]);
    assert!(ok, "{text}");
    assert!(text.contains("crashing_tool 1.0.0: "), "{text}");
    assert!(!text.contains("noop"), "{text}");
    let (ok, text) = search(&["--index", &index, "--policy", &policy]);
    assert!(
        ok && text.contains("noop 1.1.0: ") && text.contains("crashing_tool"),
        "{text}"
    );
    let (ok, text) = devtools_mcp(&[
        "plugin", "info", "noop", "--index", &index, "--policy", &policy,
    ]);
    assert!(ok, "{text}");
    for expected in [
        "Plugin noop",
        "capabilities:",
        "1.0.0 oci://",
        "1.1.0 oci://",
        "(sha256:",
    ] {
        assert!(text.contains(expected), "{expected}: {text}");
    }
    let (ok, text) = devtools_mcp(&[
        "plugin", "info", "nop", "--index", &index, "--policy", &policy,
    ]);
    assert!(!ok && text.contains("Did you mean noop?"), "{text}");

    // The tag moves to other bytes: the index's digest is what is installed.
    let (ok, text) = devtools_mcp(&[
        "plugin",
        "publish",
        &noop,
        &registry.reference("examples/crashing_tool:1.0.0"),
        "--key",
        &key,
    ]);
    assert!(ok, "{text}");
    let plugins = dir.join("plugins");
    let plugins_arg = plugins.to_string_lossy().into_owned();
    let (ok, text) = devtools_mcp(&[
        "plugin",
        "install",
        "crashing_tool@1.0.0",
        "--index",
        &index,
        "--plugin-dir",
        &plugins_arg,
        "--policy",
        &policy,
    ]);
    assert!(ok, "{text}");
    assert_eq!(
        std::fs::read(plugins.join("crashing_tool.wasm")).expect("installed"),
        std::fs::read(&crashing).expect("fixture")
    );

    // Over HTTP on loopback, signature beside it.
    let served = FixtureServer::start(vec![
        Route::new(
            "/index.json",
            "application/json",
            std::fs::read(&index).expect("index"),
        ),
        Route::new(
            "/index.json.sig",
            "text/plain",
            std::fs::read(format!("{index}.sig")).expect("signature"),
        ),
    ]);
    let url = served.url("/index.json");
    let (ok, text) = search(&["noop", "--index", &url, "--policy", &policy]);
    assert!(ok && text.contains("noop 1.1.0"), "{text}");

    // Tampered after signing: refused, nothing installed.
    let tampered = std::fs::read_to_string(&index).expect("index").replacen(
        "\"description\": \"",
        "\"description\": \"Trusted! ",
        1,
    );
    std::fs::write(&index, tampered).expect("tamper");
    let (ok, text) = search(&["--index", &index, "--policy", &policy]);
    assert!(!ok && text.contains("altered after signing"), "{text}");
    let elsewhere = dir.join("elsewhere").to_string_lossy().into_owned();
    let (ok, text) = devtools_mcp(&[
        "plugin",
        "install",
        "noop",
        "--index",
        &index,
        "--plugin-dir",
        &elsewhere,
        "--policy",
        &policy,
    ]);
    assert!(!ok && text.contains("refused"), "{text}");
    assert!(!Path::new(&elsewhere).join("noop.wasm").exists());

    // Signed by a key the policy does not trust: refused unless --allow-untrusted.
    let (ok, text) = devtools_mcp(&["plugin", "sign", &index, "--key", &stranger_key]);
    assert!(ok, "{text}");
    let (ok, text) = search(&["--index", &index, "--policy", &policy]);
    assert!(
        !ok && text.contains("a key the policy does not trust"),
        "{text}"
    );
    let (ok, text) = search(&[
        "noop",
        "--index",
        &index,
        "--policy",
        &policy,
        "--allow-untrusted",
    ]);
    assert!(ok && text.contains("noop"), "{text}");
}
