//! The host's layers, deepest first, and the test that keeps imports pointing down: a module
//! may name (`crate::x`) only modules listed before it. A new top-level module must be placed
//! here, and an import that points up fails the test with the file that holds it.

/// Deepest first: each module may use only the ones before it.
pub const LAYERS: &[&str] = &[
    // Leaves: data in, verdict or text out; no browser, no runtime.
    "shared_pool",
    "sandbox",
    "policy",
    "engine",
    "schema",
    "telemetry",
    "fswatch",
    "snapshot",
    "heap_analysis",
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

#[cfg(test)]
mod tests {
    use super::{BROWSER_LAYERS, LAYERS};
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
