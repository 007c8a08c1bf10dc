//! The host's layers, deepest first, and the test that keeps imports pointing down: a module
//! may name (`crate::x`) only modules listed before it. A new top-level module must be placed
//! here, and an import that points up fails the test with the file that holds it.

/// Deepest first: each module may use only the ones before it.
pub const LAYERS: &[&str] = &[
    // Leaves: data in, verdict or text out; no browser, no runtime.
    "activity",
    "printable",
    "source_map",
    "shared_pool",
    "sandbox",
    "policy",
    "engine",
    "schema",
    "telemetry",
    "fswatch",
    "snapshot",
    "memory_analysis",
    "net",
    "lighthouse",
    // The state a call acts on: the browser (cdp -> page -> features inside), the session.
    "browser",
    "session",
    // What an answer holds, declared by the tools and assembled after them.
    "response",
    // The wasm side: loading components, their limits, one adapter per host capability.
    "runtime",
    // One call, in the reference's order, and the tool set it runs against.
    "pipeline",
    // The faces: stdio, one-shot, HTTP and its tenants.
    "serve",
    // What the operator says: flags, subcommands, the config file.
    "config",
    // The command line made a running server.
    "cli",
];

/// Inside `browser`, deepest first: a file under one of these folders may not name a later
/// one (`crate::browser::page`, `crate::browser::features`, or the same through `super::`).
pub const BROWSER_LAYERS: &[&str] = &["cdp", "page", "features"];

/// Inside `runtime`, the calling room (bindings, engine, limits, host functions) names nothing
/// of the loading room (files, componentizing, cache, memory images, embedded tools); loading
/// builds on calling. The facade (`runtime.rs`) re-exports both.
pub const RUNTIME_ROOMS: &[&str] = &["calling", "loading"];

#[cfg(test)]
mod tests {
    use super::{BROWSER_LAYERS, LAYERS, RUNTIME_ROOMS};
    use std::path::{Path, PathBuf};

    fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("read src") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                sources(&path, out);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                out.push(path);
            }
        }
    }

    /// The top-level modules a source names with `crate::x` or `use crate::{x, ...}`.
    fn named_modules(source: &str) -> Vec<String> {
        let mut named = Vec::new();
        let mut rest = source;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                // Only the group's first level names modules: `{a::{b, c}, d}` is a and d.
                let (mut depth, mut item_start) = (0usize, true);
                for (at, c) in group.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => break,
                        '}' => depth -= 1,
                        ',' if depth == 0 => item_start = true,
                        c if item_start && (c.is_alphanumeric() || c == '_') => {
                            item_start = false;
                            named.push(
                                group[at..]
                                    .chars()
                                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                                    .collect(),
                            );
                        }
                        _ => {}
                    }
                }
            } else {
                named.push(
                    rest.chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect(),
                );
            }
        }
        named
    }

    #[test]
    fn every_import_points_down() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        sources(&src, &mut files);
        let rank = |name: &str| LAYERS.iter().position(|layer| *layer == name);
        let mut upward = Vec::new();
        for file in &files {
            let relative = file.strip_prefix(&src).expect("under src");
            let top = relative
                .components()
                .next()
                .and_then(|part| part.as_os_str().to_str())
                .map(|part| part.trim_end_matches(".rs").to_string())
                .expect("a file name");
            if top == "lib" || top == "main" || top == "layers" {
                continue;
            }
            let Some(own) = rank(&top) else {
                panic!("{top} (src/{top}.rs) is not placed in LAYERS: add it at its depth");
            };
            let source = std::fs::read_to_string(file).expect("read source");
            for name in named_modules(&source) {
                if let Some(other) = rank(&name)
                    && other >= own
                    && name != top
                {
                    upward.push(format!("{} uses crate::{name}", relative.display()));
                }
            }
        }
        upward.sort();
        upward.dedup();
        assert!(
            upward.is_empty(),
            "imports that point up (or sideways) the layers of host/src/layers.rs:\n{}",
            upward.join("\n")
        );
    }

    /// The browser's own layers: `cdp` names neither `page` nor `features`; `page` does not
    /// name `features`. Re-exports from the module root (`browser.rs`) are the facade and free.
    #[test]
    fn the_browser_imports_point_down_its_layers() {
        let browser = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/browser");
        let mut upward = Vec::new();
        for (rank, layer) in BROWSER_LAYERS.iter().enumerate() {
            let mut files = vec![browser.join(format!("{layer}.rs"))];
            if browser.join(layer).is_dir() {
                sources(&browser.join(layer), &mut files);
            }
            for file in files {
                let source = std::fs::read_to_string(&file).expect("read source");
                for higher in &BROWSER_LAYERS[rank + 1..] {
                    let named = [
                        format!("crate::browser::{higher}"),
                        format!("super::{higher}"),
                        format!("super::super::{higher}"),
                    ];
                    if named.iter().any(|path| source.contains(path.as_str())) {
                        upward.push(format!("{} names browser::{higher}", file.display()));
                    }
                }
                // `crate::browser::{a, b}` and `crate::browser::X` reach the facade's re-exports,
                // which include the higher layers' types: only the options and errors are free.
                for line in source
                    .lines()
                    .filter(|line| line.contains("crate::browser::"))
                {
                    let allowed = ["BrowserError", "BrowserOptions", "cdp", layer]
                        .iter()
                        .any(|name| line.contains(&format!("crate::browser::{name}")));
                    let grouped_ok = line.contains("crate::browser::{")
                        && line.split("crate::browser::{").nth(1).is_some_and(|group| {
                            group
                                .split([',', '}', ' ', ';'])
                                .filter(|item| !item.is_empty())
                                .all(|item| ["BrowserError", "BrowserOptions"].contains(&item))
                        });
                    if !allowed && !grouped_ok && rank + 1 < BROWSER_LAYERS.len() {
                        upward.push(format!("{}: {}", file.display(), line.trim()));
                    }
                }
            }
        }
        assert!(
            upward.is_empty(),
            "browser imports that point up its layers (cdp -> page -> features):\n{}",
            upward.join("\n")
        );
    }

    /// A file of the calling room may name `crate::runtime::` only as `crate::runtime::calling`
    /// (the facade re-exports the loading room too), and no `super::` path may reach `loading`.
    #[test]
    fn the_runtime_rooms_import_one_way() {
        let runtime = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/runtime");
        let [calling, loading] = RUNTIME_ROOMS else {
            panic!("two rooms")
        };
        let mut files = vec![runtime.join(format!("{calling}.rs"))];
        sources(&runtime.join(calling), &mut files);
        assert!(files.len() > 20, "the calling room's files were found");
        assert!(runtime.join(loading).is_dir(), "the loading room exists");
        let mut upward = Vec::new();
        for file in files {
            let source = std::fs::read_to_string(&file).expect("read source");
            let mut rest = source.as_str();
            while let Some(at) = rest.find("crate::runtime::") {
                rest = &rest[at + "crate::runtime::".len()..];
                if !rest.starts_with(&format!("{calling}::")) {
                    let line = rest.lines().next().unwrap_or_default();
                    upward.push(format!("{}: crate::runtime::{line}", file.display()));
                }
            }
            for path in ["super::", "super::super::", "super::super::super::"] {
                if source.contains(&format!("{path}{loading}")) {
                    upward.push(format!("{} names {path}{loading}", file.display()));
                }
            }
        }
        assert!(
            upward.is_empty(),
            "the calling room names the loading room (it must not: loading -> calling only):\n{}",
            upward.join("\n")
        );
    }

    /// Engine crates and browser features that are not a capability of their own, and why.
    const NOT_CAPABILITIES: &[(&str, &str)] = &[
        ("build-info", "what the binary was built from"),
        ("cbor", "the browser pipe's encoding"),
        (
            "collectors",
            "console and network records, read through `pages`",
        ),
        (
            "snapshot",
            "the accessibility tree, read through `pages` and `response`",
        ),
        ("call_timers", "what a call set up, cleared when it ends"),
        (
            "call_workers",
            "workers a call started, stopped when it ends",
        ),
        ("downloads", "files a page downloads, saved by the session"),
        ("footprint", "what a tenant's browser context holds"),
        (
            "long_lived",
            "what outlives a call, by the tool's declaration",
        ),
        (
            "renderer_memory",
            "what a page's contexts hold, for tenant limits",
        ),
    ];

    /// One name per capability from WIT to engine: each interface of the newest contract is
    /// its own `.wit` file; its host functions are declared in `host_api/<interface>.rs` (or
    /// the file of its family, `pages` for `pages-manage`); and every engine crate and browser
    /// feature is named after a capability, or is listed above with why it is not one.
    #[test]
    fn every_capability_has_one_name() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let newest = std::fs::read_dir(root.join("wit"))
            .expect("wit/")
            .filter_map(|entry| {
                let name = entry.ok()?.file_name().into_string().ok()?;
                let version = name.strip_prefix("since_v")?;
                let parts: Vec<u32> = version.split('.').filter_map(|n| n.parse().ok()).collect();
                Some((parts, name))
            })
            .max()
            .expect("a contract")
            .1;
        let mut interfaces = Vec::new();
        let mut problems = Vec::new();
        for entry in std::fs::read_dir(root.join("wit").join(&newest)).expect("contract") {
            let path = entry.expect("entry").path();
            let text = std::fs::read_to_string(&path).expect("read wit");
            let declared: Vec<String> = text
                .lines()
                .filter_map(|line| line.strip_prefix("interface "))
                .map(|rest| rest.trim_end_matches(" {").to_string())
                .collect();
            let stem = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default();
            if stem != "tool" && declared != [stem.to_string()] {
                problems.push(format!(
                    "{newest}/{stem}.wit declares {declared:?}, not one interface named {stem}"
                ));
            }
            interfaces.extend(declared);
        }
        assert!(interfaces.len() >= 19, "interfaces found: {interfaces:?}");
        let host_api = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/runtime/calling/host_api");
        let mut declarations = 0;
        let mut files = Vec::new();
        sources(&host_api, &mut files);
        for path in files {
            // A file in a folder counts as the folder's (`pages/collected.rs` is `pages`).
            let relative = path.strip_prefix(&host_api).expect("under host_api");
            let Some(file) = relative
                .components()
                .next()
                .and_then(|part| part.as_os_str().to_str())
                .map(|part| part.trim_end_matches(".rs").to_string())
            else {
                continue;
            };
            if file == "v0_2" {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("read");
            for declared in text.split("F::new(").skip(1) {
                let Some(quoted) = declared.trim_start().strip_prefix('"') else {
                    continue;
                };
                let interface = quoted.split('"').next().unwrap_or_default();
                declarations += 1;
                let family = interface.split('-').next().unwrap_or_default();
                if file != interface.replace('-', "_") && file != family {
                    problems.push(format!(
                        "{interface}'s host functions are declared in host_api/{file}.rs"
                    ));
                }
            }
        }
        assert!(declarations > 60, "host functions found: {declarations}");
        let capability = |name: &str| {
            interfaces
                .iter()
                .any(|i| i.replace('-', "_") == name.replace('-', "_"))
        };
        let mut named = Vec::new();
        for entry in std::fs::read_dir(root.join("crates")).expect("crates/") {
            named.push((
                "crates/",
                entry
                    .expect("entry")
                    .file_name()
                    .into_string()
                    .expect("utf-8"),
            ));
        }
        let features = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/browser/features");
        for entry in std::fs::read_dir(features).expect("features/") {
            let path = entry.expect("entry").path();
            if path.extension().is_some_and(|ext| ext == "rs") {
                let stem = path.file_stem().and_then(|s| s.to_str()).expect("name");
                named.push(("host/src/browser/features/", stem.to_string()));
            }
        }
        for (folder, name) in named {
            if !capability(&name) && !NOT_CAPABILITIES.iter().any(|(n, _)| *n == name) {
                problems.push(format!(
                    "{folder}{name} is named after no capability: name it after the interface it serves, or list it in NOT_CAPABILITIES with why"
                ));
            }
        }
        for (name, _) in NOT_CAPABILITIES {
            assert!(
                !capability(name),
                "{name} is a capability: take it off NOT_CAPABILITIES"
            );
        }
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    #[test]
    fn every_module_of_the_crate_is_placed() {
        let lib = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs"))
            .expect("read lib.rs");
        for line in lib.lines() {
            if let Some(name) = line
                .strip_prefix("pub mod ")
                .and_then(|rest| rest.strip_suffix(';'))
                && name != "layers"
            {
                assert!(LAYERS.contains(&name), "{name} is missing from LAYERS");
            }
        }
    }

    #[test]
    fn the_scan_sees_grouped_and_plain_paths() {
        let named =
            named_modules("use crate::{plugin::{x, cli}, session};\nlet a = crate::browser::Y;");
        assert_eq!(named, ["plugin", "session", "browser"]);
    }
}
