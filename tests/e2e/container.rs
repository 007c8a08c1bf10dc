//! The container image (`Dockerfile`, built by `deploy/build-image`): built with podman from
//! the server binary under test, run as its non-root user, healthy by its own health check,
//! serving MCP to a tenant (tools/list, a page, `take_snapshot`), and stopping cleanly on
//! SIGTERM. Skipped, saying why, where podman is not installed or cannot run containers.
//!
//! No container registry is reachable here, so the Debian base image is `debian:bookworm-slim`
//! when podman has (or can pull) it, else one made from Debian's packages with `mmdebstrap`
//! (what `scripts/test` installs), imported once as `localhost/devtools-mcp-test-base:bookworm`.

use crate::support::{FixtureServer, HttpClient, Route, binary_dir, timeout};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// The repository of the images the test builds; each run tags its own and removes it.
const IMAGE_REPOSITORY: &str = "localhost/devtools-mcp";
/// The label on every image the test builds, so its cleanup removes exactly those.
const IMAGE_LABEL: &str = "io.devtools-mcp.e2e=1";
const LOCAL_BASE: &str = "localhost/devtools-mcp-test-base:bookworm";
const UPSTREAM_BASE: &str = "docker.io/library/debian:bookworm-slim";
const TOKEN: &str = "container-tenant-token";

/// podman, with the configuration that runs containers on this machine.
struct Podman {
    /// A `containers.conf` of ours when podman's defaults cannot run containers here.
    conf: Option<PathBuf>,
    /// Our fallback configuration (see [`Podman::find`]).
    fallback: PathBuf,
    _dir: tempfile::TempDir,
}

impl Podman {
    fn command(&self) -> Command {
        let mut command = crate::support::command("podman");
        if let Some(conf) = &self.conf {
            command.env("CONTAINERS_CONF", conf);
        }
        command
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command().args(args).output().expect("run podman")
    }

    /// podman, if it is installed. Besides its defaults it may use our fallback
    /// configuration: runc (crun refuses hosts with hybrid cgroups) and rlimits no higher
    /// than this process's (for hosts without CAP_SYS_RESOURCE, such as this one).
    fn find() -> Result<Podman, String> {
        if crate::support::command("podman")
            .arg("--version")
            .output()
            .is_err()
        {
            return Err("podman is not installed".into());
        }
        let dir = tempfile::tempdir().map_err(|error| error.to_string())?;
        let conf = dir.path().join("containers.conf");
        let nofile = soft_limit("Max open files").unwrap_or(1024).min(65536);
        std::fs::write(
            &conf,
            format!(
                "[containers]\ndefault_ulimits = [\"nofile={nofile}:{nofile}\", \"nproc=8192:8192\"]\n[engine]\nruntime = \"runc\"\n"
            ),
        )
        .map_err(|error| error.to_string())?;
        Ok(Podman {
            conf: None,
            fallback: conf,
            _dir: dir,
        })
    }

    /// Whether a container of `image` runs `true` with this configuration; tries podman's
    /// defaults first.
    fn runs(&mut self, image: &str) -> Result<(), String> {
        let mut failures = Vec::new();
        for conf in [None, Some(self.fallback.clone())] {
            self.conf = conf;
            let output = self.run(&["run", "--rm", "--network", "host", image, "true"]);
            if output.status.success() {
                return Ok(());
            }
            failures.push(String::from_utf8_lossy(&output.stderr).trim().to_owned());
        }
        Err(failures.join(" / "))
    }

    fn image_exists(&self, image: &str) -> bool {
        self.run(&["image", "exists", image]).status.success()
    }

    /// The Debian base image, found or made; `Err` says why there is none.
    fn base_image(&self) -> Result<String, String> {
        if let Ok(base) = std::env::var("DEVTOOLS_MCP_TEST_BASE_IMAGE") {
            return Ok(base);
        }
        for image in [UPSTREAM_BASE, LOCAL_BASE] {
            if self.image_exists(image) {
                return Ok(image.into());
            }
        }
        if self
            .run(&["pull", "--quiet", UPSTREAM_BASE])
            .status
            .success()
        {
            return Ok(UPSTREAM_BASE.into());
        }
        if crate::support::command("mmdebstrap")
            .arg("--version")
            .output()
            .is_err()
        {
            return Err(format!(
                "{UPSTREAM_BASE} cannot be pulled and mmdebstrap (to make a Debian base from packages) is not installed"
            ));
        }
        eprintln!("making the Debian base image {LOCAL_BASE} with mmdebstrap (once)");
        let dir = tempfile::tempdir().map_err(|error| error.to_string())?;
        let tarball = dir.path().join("base.tar");
        let made = crate::support::command("mmdebstrap")
            .args(["--variant=apt", "--include=ca-certificates", "bookworm"])
            .arg(&tarball)
            .output()
            .map_err(|error| error.to_string())?;
        if !made.status.success() {
            return Err(format!(
                "mmdebstrap failed: {}",
                String::from_utf8_lossy(&made.stderr)
            ));
        }
        let imported = self.run(&["import", &tarball.to_string_lossy(), LOCAL_BASE]);
        if !imported.status.success() {
            return Err(format!(
                "podman import failed: {}",
                String::from_utf8_lossy(&imported.stderr)
            ));
        }
        Ok(LOCAL_BASE.into())
    }
}

/// The soft limit of this process named `name` in `/proc/self/limits`.
fn soft_limit(name: &str) -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|line| line.starts_with(name))?;
    line[name.len()..].split_whitespace().next()?.parse().ok()
}

/// Removes the container however the test ends.
struct Container<'a> {
    podman: &'a Podman,
    name: String,
}

impl Container<'_> {
    fn logs(&self) -> String {
        let output = self.podman.run(&["logs", &self.name]);
        format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    }
}

impl Drop for Container<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("--- container log ---\n{}", self.logs());
        }
        let _ = self
            .podman
            .run(&["rm", "--force", "--time", "0", &self.name]);
    }
}

/// Removes the images this test built, however it ends: this run's tag, then every image
/// with the test's label that no tag holds any more (earlier runs' that were interrupted).
struct BuiltImages<'a> {
    podman: &'a Podman,
    tag: String,
}

impl Drop for BuiltImages<'_> {
    fn drop(&mut self) {
        let _ = self.podman.run(&["rmi", "--force", &self.tag]);
        let label = format!("label={IMAGE_LABEL}");
        let _ = self
            .podman
            .run(&["image", "prune", "--force", "--filter", &label]);
    }
}

fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_image_builds_and_serves_mcp_as_a_non_root_user() {
    // DEVTOOLS_MCP_CONTAINER_TEST=0 skips it (scripts/test then installs nothing for it).
    if std::env::var("DEVTOOLS_MCP_CONTAINER_TEST").as_deref() == Ok("0") {
        eprintln!("SKIPPED: the container image test (DEVTOOLS_MCP_CONTAINER_TEST=0)");
        return;
    }
    let mut podman = match Podman::find() {
        Ok(podman) => podman,
        Err(reason) => {
            eprintln!("SKIPPED: the container image test: {reason}");
            return;
        }
    };
    let base = match podman.base_image() {
        Ok(base) => base,
        Err(reason) => {
            eprintln!("SKIPPED: the container image test: no Debian base image: {reason}");
            return;
        }
    };
    if let Err(reason) = podman.runs(&base) {
        eprintln!("SKIPPED: the container image test: podman cannot run containers here: {reason}");
        return;
    }

    // The build: apt-get needs the network (host networking: no bridge is needed for it).
    // Each image is 1.4 GB: the guard removes this run's, and any earlier run left behind.
    let image = format!("{IMAGE_REPOSITORY}:e2e-{}", std::process::id());
    let images = BuiltImages {
        podman: &podman,
        tag: image.clone(),
    };
    let started = Instant::now();
    let binary = binary_dir().join("devtools-mcp");
    let built = crate::support::command(repository_root().join("deploy/build-image"))
        .arg(&image)
        .envs(podman.conf.iter().map(|conf| ("CONTAINERS_CONF", conf)))
        .env("ENGINE", "podman")
        .env("BINARY", &binary)
        .env("BASE", &base)
        .env(
            "ENGINE_ARGS",
            format!("--network host --label {IMAGE_LABEL}"),
        )
        .output()
        .expect("run deploy/build-image");
    assert!(
        built.status.success(),
        "the image did not build:\n{}\n{}",
        String::from_utf8_lossy(&built.stdout),
        String::from_utf8_lossy(&built.stderr)
    );
    eprintln!("image built in {:?}", started.elapsed());

    // A tenants file mounted read-only, as in a deployment.
    let dir = tempfile::tempdir().expect("a temporary directory");
    let tenants = dir.path().join("tenants.toml");
    std::fs::write(
        &tenants,
        format!(
            "[[tenant]]\nname = \"alice\"\ntoken_sha256 = {:?}\nsandbox_root = \"/var/lib/devtools-mcp/tenants/alice\"\negress_allow = [\"127.0.0.1/32\"]\n",
            devtools_mcp::serve::tenants::token_hash_hex(TOKEN)
        ),
    )
    .expect("the tenants file");
    let port = crate::support::free_port();
    let name = format!("devtools-mcp-e2e-{}", std::process::id());
    let mount = format!("{}:/etc/devtools-mcp/tenants.toml:ro", tenants.display());
    let listen = format!("--http=127.0.0.1:{port}");
    let health_port = format!("DEVTOOLS_MCP_HEALTH_PORT={port}");
    let ran = podman.run(&[
        "run",
        "--detach",
        "--name",
        &name,
        "--network",
        "host",
        "--volume",
        &mount,
        "--env",
        &health_port,
        &image,
        &listen,
        "--tenants=/etc/devtools-mcp/tenants.toml",
        "--executablePath=/usr/bin/chromium",
        "--headless",
        "--chromeArg=--disable-gpu",
    ]);
    assert!(
        ran.status.success(),
        "the container did not start: {}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let container = Container {
        podman: &podman,
        name: name.clone(),
    };

    let base_url = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + timeout();
    loop {
        let healthy = reqwest::get(format!("{base_url}/healthz"))
            .await
            .is_ok_and(|response| response.status().is_success());
        if healthy {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the server in the container did not answer /healthz:\n{}",
            container.logs()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // The image's own HEALTHCHECK passes, and the server is not root.
    let health = podman.run(&["healthcheck", "run", &name]);
    assert!(
        health.status.success(),
        "the image's health check failed: {}{}",
        String::from_utf8_lossy(&health.stdout),
        String::from_utf8_lossy(&health.stderr)
    );
    let user = podman.run(&["exec", &name, "id", "-u"]);
    assert_eq!(String::from_utf8_lossy(&user.stdout).trim(), "10001");

    let pages = FixtureServer::start(vec![Route::html(
        "/boxed",
        "<!doctype html><title>Boxed</title><h1>Served to a container</h1>",
    )]);
    let client = match HttpClient::connect(&format!("{base_url}/mcp"), TOKEN).await {
        Ok(client) => client,
        Err(error) => panic!("{error}\n--- container log ---\n{}", container.logs()),
    };
    let tools = client.tool_names().await;
    assert!(
        tools.iter().any(|tool| tool == "take_snapshot"),
        "{tools:?}"
    );
    let opened = client
        .call("new_page", json!({ "url": pages.url("/boxed") }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    let page = crate::styles::selected_page_id(&opened.text);
    let snapshot = client
        .call("take_snapshot", json!({ "pageId": page }))
        .await;
    assert!(
        snapshot.text.contains("Served to a container"),
        "{}",
        snapshot.text
    );
    client.close().await;

    // SIGTERM (through tini) drains and exits 0.
    let stopped = podman.run(&["stop", "--time", "20", &name]);
    assert!(stopped.status.success());
    let exit = podman.run(&["inspect", "--format", "{{.State.ExitCode}}", &name]);
    assert_eq!(
        String::from_utf8_lossy(&exit.stdout).trim(),
        "0",
        "{}",
        container.logs()
    );

    // Nothing of the run stays on the disk: neither the container nor its image.
    drop(container);
    drop(images);
    assert!(
        !podman.image_exists(&image),
        "the test's image {image} was left behind"
    );
    let label = format!("label={IMAGE_LABEL}");
    let left = podman.run(&["images", "--quiet", "--filter", &label]);
    assert_eq!(String::from_utf8_lossy(&left.stdout).trim(), "");
}
