//! `plugin test --watch`: the author's inner loop. The test runs, then again after each saved
//! change: a project folder is rebuilt (a TypeScript one in a resident builder), the changed
//! component loaded again (its unchanged functions reused from the compiled-code cache) and
//! the tool called on a freshly opened page, in the browser kept from the last run. A build
//! or a test that fails says why and waits for the next change; Ctrl-C stops.

mod resident;

use super::build;
use super::test::{self, Bench, Opened};
use crate::fswatch::SettledChanges;
use notify::RecursiveMode;
use resident::ResidentBuilder;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Folders of a project that builds write, or that hold no source.
const NOT_SOURCE: &[&str] = &[
    "node_modules",
    "target",
    "dist",
    "build",
    "types",
    "__pycache__",
];

/// What one run of the test is.
pub struct TestSpec {
    pub params: String,
    pub opened: Opened,
    pub expect: Vec<String>,
    pub policy: Option<PathBuf>,
    pub headful: bool,
    /// The parameters and expected texts come from the project's `test/test.json`, read
    /// again each round (an edit of the test is a change like any other).
    pub own_test: bool,
}

/// Runs the test now and after every change, until Ctrl-C.
pub async fn watch(plugin: &Path, spec: TestSpec) -> Result<(), String> {
    let plugin = plugin
        .canonicalize()
        .map_err(|error| format!("Cannot open {}: {error}", plugin.display()))?;
    let project = plugin.is_dir().then(|| plugin.clone());
    let mut changes = match &project {
        Some(dir) => project_changes(dir)?,
        None => component_changes(&plugin)?,
    };
    let mut builder = Builder::default();
    let mut tried_resident = false;
    let mut bench: Option<Bench> = None;
    // Listened to from the start, so a Ctrl-C during a build or a call ends the loop too.
    let stop = crate::cli::shutdown_signal();
    tokio::pin!(stop);
    loop {
        tokio::select! {
            outcome = run_once(&plugin, project.as_deref(), &mut builder, &mut bench, &spec) => {
                match outcome {
                    Ok(line) => println!("{line}"),
                    Err(error) => eprintln!("FAIL: {error}"),
                }
            }
            _ = &mut stop => break,
        }
        if let Some(dir) = project
            .as_deref()
            .filter(|dir| !tried_resident && build::resident_typescript(dir).is_some())
        {
            tried_resident = true;
            tokio::select! {
                warmed = Builder::warmed_up(dir) => builder = warmed,
                _ = &mut stop => break,
            }
        }
        println!(
            "Watching {} for changes (Ctrl-C stops).",
            project.as_deref().unwrap_or(&plugin).display()
        );
        tokio::select! {
            changed = changes.next() => if changed.is_none() { break },
            _ = &mut stop => break,
        }
        println!("--- changed: testing again");
    }
    if let Some(bench) = bench {
        bench.shutdown().await;
    }
    Ok(())
}

/// Builds (a project), loads and calls once; the line that says how long each step took.
async fn run_once(
    plugin: &Path,
    project: Option<&Path>,
    builder: &mut Builder,
    bench: &mut Option<Bench>,
    spec: &TestSpec,
) -> Result<String, String> {
    let started = Instant::now();
    let (component, by) = match project {
        Some(dir) => {
            let (component, by) = builder.build(dir).await?;
            (component, Some(by))
        }
        None => (plugin.to_path_buf(), None),
    };
    let built = started.elapsed();
    let bench = match bench {
        Some(bench) => bench,
        None => bench.insert(
            Bench::open(
                &component,
                spec.opened.clone(),
                spec.policy.as_deref(),
                spec.headful,
            )
            .await?,
        ),
    };
    let (params, expect) = match project.filter(|_| spec.own_test) {
        Some(dir) => match test::project_test(dir)? {
            Some(own) => (own.params, own.expect),
            None => (spec.params.clone(), spec.expect.clone()),
        },
        None => (spec.params.clone(), spec.expect.clone()),
    };
    bench.load().await?;
    let loaded = started.elapsed();
    let (answered, text) = bench.call(&params).await?;
    let called = started.elapsed();
    if !answered {
        return Err("the tool answered with an error".into());
    }
    test::check_expected(&text, &expect)?;
    let build = match by {
        Some(by) => format!("built in {:.1} s{by}, ", seconds(built)),
        None => String::new(),
    };
    Ok(format!(
        "Done in {:.1} s: {build}loaded in {:.1} s, answered in {:.1} s.",
        seconds(called),
        seconds(loaded - built),
        seconds(called - loaded),
    ))
}

fn seconds(duration: Duration) -> f64 {
    duration.as_secs_f64()
}

/// How a project is rebuilt: as `plugin build` does, or, for a TypeScript project whose
/// `compile` script is still the generated one, in a resident Node.js builder.
#[derive(Default)]
enum Builder {
    #[default]
    Plain,
    Resident(Box<ResidentBuilder>),
}

impl Builder {
    /// The resident builder for a project that can use one, started and warmed up by one
    /// compile to a scratch file (the first compile in a new process is the slow one); plain
    /// otherwise, or when the builder cannot start (then each build runs the npm scripts).
    async fn warmed_up(dir: &Path) -> Builder {
        let Some((_name, world)) = build::resident_typescript(dir) else {
            return Builder::Plain;
        };
        let mut resident = ResidentBuilder::new(dir, &world);
        let scratch = match tempfile::Builder::new()
            .prefix("devtools-mcp-watch-")
            .tempdir()
        {
            Ok(scratch) => scratch,
            Err(_) => return Builder::Plain,
        };
        println!("Warming the TypeScript builder up (once)...");
        let warmed = resident.compile(&scratch.path().join("warm-up.wasm")).await;
        match warmed {
            Ok(()) => Builder::Resident(Box::new(resident)),
            // The sources do not compile yet (the round said why): the builder is warm anyway.
            Err(_) if resident.is_running() => Builder::Resident(Box::new(resident)),
            Err(error) => {
                eprintln!(
                    "The resident TypeScript builder failed ({error}): each change is built through npm instead."
                );
                Builder::Plain
            }
        }
    }

    /// The component the project builds to, built; and by what, for the author.
    async fn build(&mut self, dir: &Path) -> Result<(PathBuf, &'static str), String> {
        if let Builder::Resident(resident) = self
            && let Some((name, _world)) = build::resident_typescript(dir)
        {
            let out = dir.join("dist").join(format!("{name}.wasm"));
            resident.compile(&out).await?;
            let component = build::finish_typescript(dir, &name)?;
            return Ok((component, " by the resident TypeScript builder"));
        }
        let dir = dir.to_path_buf();
        let component = tokio::task::spawn_blocking(move || build::build(&dir, None))
            .await
            .map_err(|error| format!("the build stopped: {error}"))??;
        Ok((component, ""))
    }
}

/// Changes to a project's sources: its top folder and every folder under it but those
/// builds write (dist, build, target, node_modules...) and hidden ones.
fn project_changes(dir: &Path) -> Result<SettledChanges, String> {
    let mut folders = vec![(dir.to_path_buf(), RecursiveMode::NonRecursive)];
    let entries = std::fs::read_dir(dir)
        .map_err(|error| format!("Cannot read {}: {error}", dir.display()))?;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() && is_source(dir, &path) {
            folders.push((path, RecursiveMode::Recursive));
        }
    }
    let root = dir.to_path_buf();
    SettledChanges::watch_modes(&folders, SETTLE, move |event| {
        event.paths.iter().any(|path| is_source(&root, path))
    })
}

/// Changes to one component file (built some other way).
fn component_changes(file: &Path) -> Result<SettledChanges, String> {
    let folder = file
        .parent()
        .ok_or_else(|| format!("{} is in no folder", file.display()))?
        .to_path_buf();
    let name = file.file_name().map(|name| name.to_os_string());
    SettledChanges::watch_modes(
        &[(folder, RecursiveMode::NonRecursive)],
        SETTLE,
        move |event| {
            event
                .paths
                .iter()
                .any(|path| path.file_name().map(|name| name.to_os_string()) == name)
        },
    )
}

/// An editor's save is a few writes and renames close together.
const SETTLE: Duration = Duration::from_millis(100);

/// Whether `path` (under the project `root`) is the author's source: not in a folder builds
/// write or a hidden one, not an editor's scratch file, not the lock file cargo rewrites.
fn is_source(root: &Path, path: &Path) -> bool {
    let Ok(relative) = path.strip_prefix(root) else {
        return false;
    };
    let mut parts = relative.iter().map(|part| part.to_string_lossy());
    let (Some(first), file) = (parts.next(), relative.file_name()) else {
        return false;
    };
    let hidden_or_built = std::iter::once(first)
        .chain(parts)
        .any(|part| part.starts_with('.') || NOT_SOURCE.contains(&part.as_ref()));
    let file = file.map(|name| name.to_string_lossy()).unwrap_or_default();
    let scratch = file.ends_with('~')
        || file.ends_with(".swp")
        || file.ends_with(".swx")
        || file.starts_with(".#")
        || file == "4913"
        || file == "Cargo.lock";
    !hidden_or_built && !scratch
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_what_the_author_writes_not_what_builds_write() {
        let root = Path::new("/p");
        for source in [
            "/p/src/tool.ts",
            "/p/app.py",
            "/p/wit/world.wit",
            "/p/test/page.html",
        ] {
            assert!(is_source(root, Path::new(source)), "{source}");
        }
        for not_source in [
            "/p/dist/tool.wasm",
            "/p/build/tool.js",
            "/p/types/tool.d.ts",
            "/p/node_modules/x/index.js",
            "/p/target/release/x.wasm",
            "/p/sub/__pycache__/app.cpython-312.pyc",
            "/p/.git/index",
            "/p/src/.tool.ts.swp",
            "/p/src/tool.ts~",
            "/p/Cargo.lock",
            "/p",
            "/elsewhere/app.py",
        ] {
            assert!(!is_source(root, Path::new(not_source)), "{not_source}");
        }
    }
}
