//! The server installed the ways people install MCP servers, from what `scripts/package` makes
//! of the binary under test: the npm tarballs and the wheel installed offline into empty
//! folders, each installed command driving a page through the official Python MCP SDK; the
//! bundle validated by its tool and run as its host resolves it; server.json; the release
//! archive, SHA256SUMS and their signature checked with the shipped binary itself. Where Node or
//! Python's venv is missing, that channel is skipped with a loud note.

use crate::fixtures;
use crate::support::{McpServer, browser_args, command, keygen, which};
use serde_json::{Value, json};
use sha2::Digest;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const VERSION: &str = env!("CARGO_PKG_VERSION");
const BINARY: &str = env!("CARGO_BIN_EXE_devtools-mcp");
/// Packages another binary instead of the test build: the release build, to measure what
/// ships (`scripts/release`'s binary; BENCHMARKS.md, "From nothing to the first answer").
const BINARY_ENV: &str = "DEVTOOLS_MCP_PACKAGE_BINARY";
const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

#[tokio::test]
async fn every_package_installs_offline_and_drives_a_page() {
    let keys = tempfile::tempdir().expect("keys dir");
    let (private_key, public_key) = keygen(keys.path(), "release.key");
    let out = tempfile::tempdir().expect("out dir");
    let started = Instant::now();
    let packaged = command("python3")
        .arg(format!("{ROOT}/scripts/package"))
        .arg(std::env::var(BINARY_ENV).unwrap_or_else(|_| BINARY.to_string()))
        .arg(out.path())
        .env("DEVTOOLS_MCP_RELEASE_KEY", &private_key)
        .output()
        .expect("run scripts/package");
    let report = String::from_utf8_lossy(&packaged.stdout);
    let notes = String::from_utf8_lossy(&packaged.stderr);
    assert!(packaged.status.success(), "{report}{notes}");
    eprintln!(
        "scripts/package ({:?}):\n{report}{notes}",
        started.elapsed()
    );
    let out = out.path();
    for artifact in std::fs::read_dir(out).expect("out").flatten() {
        let size = artifact.metadata().map(|meta| meta.len()).unwrap_or(0);
        eprintln!("{:>12} B  {}", size, artifact.file_name().to_string_lossy());
    }

    release_files(out, &public_key);
    let bundle = out.join(format!("devtools-mcp-{VERSION}.mcpb"));
    registry_entry(out, &bundle);
    let pages = fixtures::server();
    let url = pages.url("/");
    match (which("node"), which("npm")) {
        (Some(_), Some(_)) => {
            npm(out, &url).await;
            mcp_bundle(&bundle, &url).await;
        }
        _ => eprintln!(
            "!! SKIPPED: node/npm are not installed: the npm packages and the bundle are untested"
        ),
    }
    let venv = tempfile::tempdir().expect("venv dir");
    let made = command("python3")
        .args(["-m", "venv"])
        .arg(venv.path())
        .output()
        .expect("run python3");
    match made.status.success() {
        true => wheel(out, venv.path(), &url).await,
        false => eprintln!(
            "!! SKIPPED: python3 -m venv failed (install python3-venv): the wheel is untested: {}",
            String::from_utf8_lossy(&made.stderr)
        ),
    }
}

/// SHA256SUMS covers every artifact; it and its signature check out with the archive's own
/// binary, and any alteration, or another key, is refused.
fn release_files(out: &Path, public_key: &str) {
    let sums = std::fs::read_to_string(out.join("SHA256SUMS")).expect("SHA256SUMS");
    let mut listed: Vec<&str> = sums
        .lines()
        .filter_map(|line| line.split("  ").nth(1))
        .collect();
    listed.sort_unstable();
    let mut present: Vec<String> = std::fs::read_dir(out)
        .expect("out dir")
        .map(|entry| {
            entry
                .expect("entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|name| !name.starts_with("SHA256SUMS") && !name.ends_with(".pub"))
        .collect();
    present.sort_unstable();
    assert_eq!(listed, present, "{sums}");
    for line in sums.lines() {
        let (hash, name) = line.split_once("  ").expect("hash  name");
        assert_eq!(hash, sha256(&out.join(name)), "{name}");
    }
    assert_eq!(
        read(&out.join("devtools-mcp-release.pub")).trim(),
        public_key
    );

    let archive = format!("devtools-mcp-{VERSION}-x86_64-unknown-linux-gnu");
    let unpacked = tempfile::tempdir().expect("unpack dir");
    run(command("tar")
        .args(["-xzf"])
        .arg(out.join(format!("{archive}.tar.gz")))
        .arg("-C")
        .arg(unpacked.path()));
    let folder = unpacked.path().join(&archive);
    let mut expected = vec!["QUICKSTART.md", "README.md", "devtools-mcp"];
    if Path::new(ROOT).join("LICENSE").exists() {
        expected.push("LICENSE");
    }
    for name in expected {
        assert!(folder.join(name).is_file(), "{name} in the archive");
    }
    let shipped = folder.join("devtools-mcp");
    assert_version(&run(command(&shipped).arg("--version")));

    let verified = run(command(&shipped)
        .args(["release", "verify", "SHA256SUMS", "--key", public_key])
        .current_dir(out));
    assert!(
        verified.contains(&format!("is signed by {public_key}")),
        "{verified}"
    );
    let (_, other_key) = keygen(unpacked.path(), "other.key");
    let refused = fails(
        command(&shipped)
            .args(["release", "verify", "SHA256SUMS", "--key", &other_key])
            .current_dir(out),
    );
    assert!(refused.contains("not by the key given"), "{refused}");
    let altered = unpacked.path().join("SHA256SUMS");
    std::fs::write(&altered, sums.replacen('0', "1", 1)).expect("altered copy");
    let refused = fails(
        command(&shipped)
            .args(["release", "verify"])
            .arg(&altered)
            .arg("--signature")
            .arg(out.join("SHA256SUMS.sig"))
            .args(["--key", public_key]),
    );
    assert!(refused.contains("altered after signing"), "{refused}");
}

/// server.json validated against the MCP Registry's published schema (2025-12-11, which
/// scripts/test takes from PyPI; tests/python/validate_server_json.py checks its digest), and
/// a copy broken as publishers break it refused; then what the schema cannot say (the
/// packages this project ships, their versions, the bundle's digest).
fn registry_entry(out: &Path, bundle: &Path) {
    let schema = Path::new(ROOT).join("tests/.registry-schema/server.schema.json");
    assert!(
        schema.is_file(),
        "the registry's schema is missing: run scripts/test (it fetches {})",
        schema.display()
    );
    let validator = format!("{ROOT}/tests/python/validate_server_json.py");
    let valid = run(command("python3")
        .arg(&validator)
        .arg(&schema)
        .arg(out.join("server.json")));
    assert_eq!(valid.trim(), "valid");
    let mut broken: Value = serde_json::from_str(&read(&out.join("server.json"))).expect("JSON");
    broken["description"] = json!("x".repeat(101));
    broken["packages"][0]["version"] = json!("latest");
    let broken_file = out.join("server.broken.json");
    std::fs::write(&broken_file, broken.to_string()).expect("write");
    let refused = fails(
        command("python3")
            .arg(&validator)
            .arg(&schema)
            .arg(&broken_file),
    );
    assert!(
        refused.contains("description: ") && refused.contains("packages/0/version"),
        "{refused}"
    );
    std::fs::remove_file(&broken_file).expect("remove");

    let entry: Value = serde_json::from_str(&read(&out.join("server.json"))).expect("JSON");
    assert!(
        entry["$schema"]
            .as_str()
            .is_some_and(|schema| schema.contains("/2025-12-11/"))
    );
    let name = entry["name"].as_str().expect("name");
    let (namespace, server) = name.split_once('/').expect("namespace/name");
    let allowed = |text: &str, extra: &str| {
        !text.is_empty()
            && text
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || extra.contains(c))
    };
    assert!(allowed(namespace, ".-") && allowed(server, "._-"), "{name}");
    let description = entry["description"].as_str().expect("description");
    assert!(
        (1..=100).contains(&description.chars().count()),
        "{description}"
    );
    assert_eq!(entry["version"], VERSION);
    let packages = entry["packages"].as_array().expect("packages");
    let kinds: Vec<&str> = packages
        .iter()
        .map(|package| package["registryType"].as_str().expect("registryType"))
        .collect();
    assert_eq!(kinds, ["npm", "pypi", "oci", "mcpb"]);
    for package in packages {
        assert_eq!(
            package["transport"],
            json!({ "type": "stdio" }),
            "{package}"
        );
        assert!(package["identifier"].is_string(), "{package}");
        assert_ne!(package["version"], "latest", "{package}");
        if package["registryType"] != "oci" {
            assert_eq!(package["version"], VERSION, "{package}");
        }
    }
    let mcpb = &packages[3];
    assert_eq!(mcpb["fileSha256"], sha256(bundle));
    let file_name = bundle.file_name().expect("name").to_string_lossy();
    assert!(
        mcpb["identifier"]
            .as_str()
            .is_some_and(|url| url.ends_with(&*file_name))
    );
}

/// The tarballs installed offline into an empty folder, as npx would; the installed launcher
/// starts the server; a platform without a package is told the other ways to install.
async fn npm(out: &Path, url: &str) {
    let folder = tempfile::tempdir().expect("npm folder");
    let cache = tempfile::tempdir().expect("npm cache");
    let started = Instant::now();
    run(command("npm")
        .args([
            "install",
            "--offline",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
        ])
        .arg("--cache")
        .arg(cache.path())
        .arg(out.join(format!("devtools-mcp-linux-x64-gnu-{VERSION}.tgz")))
        .arg(out.join(format!("devtools-mcp-{VERSION}.tgz")))
        .current_dir(folder.path()));
    let installed = started.elapsed();
    let npx = run(command("npx")
        .args(["--offline", "devtools-mcp", "--version"])
        .env("npm_config_cache", cache.path())
        .current_dir(folder.path()));
    assert_version(&npx);
    let package: Value = serde_json::from_str(&read(
        &folder.path().join("node_modules/devtools-mcp/package.json"),
    ))
    .expect("package.json");
    let entry: Value = serde_json::from_str(&read(&out.join("server.json"))).expect("JSON");
    assert_eq!(package["mcpName"], entry["name"], "the registry checks it");

    let launcher = folder.path().join("node_modules/.bin/devtools-mcp");
    let first = first_initialize(&launcher).await;
    eprintln!("npm: offline install {installed:?}, first initialize {first:?}");
    python_client(&launcher, url);

    let riscv = folder.path().join("riscv64.js");
    std::fs::write(
        &riscv,
        r#"Object.defineProperty(process, "arch", { value: "riscv64" });"#,
    )
    .expect("preload");
    let refused = fails(
        command("node")
            .arg("--require")
            .arg(&riscv)
            .arg(&launcher)
            .arg("--version"),
    );
    for expected in [
        "(linux-riscv64-gnu)",
        "there is one for: linux-x64-gnu",
        "uvx devtools-mcp",
        "cargo install",
    ] {
        assert!(refused.contains(expected), "{expected}: {refused}");
    }
}

/// The bundle unpacked and validated by the bundle tool; the command its host would run,
/// resolved by the tool's own code from the manifest and a user's settings, serves a page.
async fn mcp_bundle(bundle: &Path, url: &str) {
    let tool = Path::new(ROOT).join("tests/.mcpb/node_modules/@anthropic-ai/mcpb");
    if !tool.is_dir() {
        eprintln!(
            "!! SKIPPED: the bundle tool is not installed (scripts/test installs it into tests/.mcpb): the bundle is untested"
        );
        return;
    }
    let mcpb = Path::new(ROOT).join("tests/.mcpb/node_modules/.bin/mcpb");
    let unpacked = tempfile::tempdir().expect("unpack dir");
    run(command(&mcpb)
        .arg("unpack")
        .arg(bundle)
        .arg(unpacked.path()));
    let manifest = unpacked.path().join("manifest.json");
    let valid = run(command(&mcpb).arg("validate").arg(&manifest));
    assert!(
        valid.contains("Manifest schema validation passes"),
        "{valid}"
    );

    let resolve = r#"
        const [dist, folder, browser] = process.argv.slice(1);
        const { readFileSync } = await import("node:fs");
        const { getMcpConfigForManifest } = await import(`${dist}/dist/shared/config.js`);
        const manifest = JSON.parse(readFileSync(`${folder}/manifest.json`, "utf8"));
        const userConfig = { headless: true, isolated: true, executable_path: browser };
        const config = await getMcpConfigForManifest({
            manifest, extensionPath: folder, systemDirs: {}, userConfig, pathSeparator: "/" });
        console.log(JSON.stringify(config));"#;
    let resolved = run(command("node")
        .args(["--input-type=module", "-e", resolve])
        .arg(&tool)
        .arg(unpacked.path())
        .arg(crate::support::chromium_path()));
    let config: Value = serde_json::from_str(&resolved).expect("the resolved config");
    let program = PathBuf::from(config["command"].as_str().expect("command"));
    assert_eq!(program, unpacked.path().join("server/devtools-mcp"));
    let mut args: Vec<String> = config["args"]
        .as_array()
        .expect("args")
        .iter()
        .map(|arg| arg.as_str().expect("a string").to_string())
        .collect();
    assert!(args.contains(&"--headless=true".to_string()), "{args:?}");
    assert!(
        args.contains(&"--categoryExtensions=false".to_string()),
        "{args:?}"
    );
    let cache = tempfile::tempdir().expect("cache");
    args.extend(test_flags(cache.path()));
    let server = McpServer::start_program(&program, args, Vec::new())
        .await
        .expect("the bundle's server starts");
    let opened = server.call("new_page", json!({ "url": url })).await;
    assert!(!opened.is_error, "{}", opened.text);
    let snapshot = server.call("take_snapshot", json!({})).await;
    assert!(
        snapshot.text.contains("RootWebArea \"Fixture\""),
        "{}",
        snapshot.text
    );
    server.shutdown().await;
}

/// The wheel installed with pip from the file alone into a fresh venv; its `devtools-mcp`
/// serves a page; auditwheel agrees with its manylinux tag (when installed).
async fn wheel(out: &Path, venv: &Path, url: &str) {
    let wheel = std::fs::read_dir(out)
        .expect("out dir")
        .map(|entry| entry.expect("entry").path())
        .find(|path| path.extension().is_some_and(|ext| ext == "whl"))
        .expect("a wheel");
    let started = Instant::now();
    run(command(venv.join("bin/pip"))
        .args([
            "install",
            "--no-index",
            "--disable-pip-version-check",
            "--quiet",
        ])
        .arg(&wheel));
    let installed = started.elapsed();
    let server = venv.join("bin/devtools-mcp");
    assert_version(&run(command(&server).arg("--version")));
    let metadata = format!("lib/python3.{}/site-packages", python_minor(venv));
    let metadata = venv
        .join(metadata)
        .join(format!("devtools_mcp-{VERSION}.dist-info/METADATA"));
    let entry: Value = serde_json::from_str(&read(&out.join("server.json"))).expect("JSON");
    let name = entry["name"].as_str().expect("name");
    assert!(
        read(&metadata).contains(&format!("mcp-name: {name}")),
        "the registry checks it"
    );

    let tag = wheel.to_string_lossy();
    let tag = tag
        .rsplit_once("-py3-none-")
        .map(|(_, tag)| tag.trim_end_matches(".whl").to_string())
        .expect("a platform tag");
    let audit = command("python3")
        .args(["-m", "auditwheel", "show"])
        .arg(&wheel)
        .output();
    match audit {
        Ok(audit) if audit.status.success() => {
            let said = String::from_utf8_lossy(&audit.stdout)
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            let consistent = format!("is consistent with the following platform tag: \"{tag}\"");
            assert!(said.contains(&consistent), "{said}");
        }
        _ => eprintln!(
            "!! auditwheel is not installed (pip install auditwheel): the {tag} tag is the script's own glibc check"
        ),
    }

    let first = first_initialize(&server).await;
    eprintln!("wheel: offline pip install {installed:?}, first initialize {first:?}");
    python_client(&server, url);
}

/// From spawning `program` (with an empty compiled-code cache) to its answer to `initialize`.
async fn first_initialize(program: &Path) -> Duration {
    let cache = tempfile::tempdir().expect("cache");
    let started = Instant::now();
    let server = McpServer::start_program(program, test_flags(cache.path()), Vec::new())
        .await
        .expect("the installed server starts");
    let took = started.elapsed();
    server.shutdown().await;
    took
}

/// What every test passes (browser_args), with `cache` as the compiled-code cache.
fn test_flags(cache: &Path) -> Vec<String> {
    let mut args = browser_args();
    args.extend([
        "--cache-dir".to_string(),
        cache.to_string_lossy().into_owned(),
    ]);
    args
}

/// tests/python/mcp_client.py, the official SDK, driving a page through `program`.
fn python_client(program: &Path, url: &str) {
    let report = run(command("python3")
        .arg(format!("{ROOT}/tests/python/mcp_client.py"))
        .arg(program)
        .arg(url)
        .args(browser_args()));
    let report: Value = serde_json::from_str(&report).expect("the client's report");
    assert_eq!(report["calls"]["new_page"]["isError"], false, "{report}");
    let snapshot = report["calls"]["take_snapshot"]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(snapshot.contains("RootWebArea \"Fixture\""), "{report}");
    assert!(
        report["calls"]["evaluate_script"]["text"]
            .as_str()
            .is_some_and(|text| text.contains("\"Fixture\"")),
        "{report}"
    );
}

fn python_minor(venv: &Path) -> String {
    let version = run(
        command(venv.join("bin/python")).args(["-c", "import sys; print(sys.version_info[1])"])
    );
    version.trim().to_string()
}

fn assert_version(output: &str) {
    assert!(
        output.starts_with(&format!("devtools-mcp {VERSION}")),
        "--version: {output}"
    );
}

/// Runs the command; its stdout when it succeeds, else a panic with what it said.
fn run(command: &mut std::process::Command) -> String {
    let output = command
        .output()
        .unwrap_or_else(|error| panic!("{command:?}: {error}"));
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{command:?} failed:\n{stdout}{stderr}"
    );
    stdout
}

/// Runs the command, which must fail; what it said.
fn fails(command: &mut std::process::Command) -> String {
    let output = command
        .output()
        .unwrap_or_else(|error| panic!("{command:?}: {error}"));
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(!output.status.success(), "{command:?} succeeded: {said}");
    said
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

fn sha256(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    hex::encode(sha2::Sha256::digest(&bytes))
}
