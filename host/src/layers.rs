//! The host's layers, deepest first, and the test that keeps imports pointing down: a module
//! may name (`crate::x`) only modules listed before it. A new top-level module must be placed
//! here, and an import that points up fails the test with the file that holds it.

/// Deepest first: each module may use only the ones before it.
pub const LAYERS: &[&str] = &[
    // Leaves: data in, verdict or text out; no browser, no runtime.
    "sandbox",
    "policy",
    "engine",
    "schema",
    "telemetry",
    "snapshot",
    "heap_analysis",
    "net",
    "lighthouse",
    // The state a call acts on.
    "browser",
    "session",
    "response",
    // Tools: the component runtime and its host functions, then one call through them.
    "plugin",
    "pipeline",
    "catalog",
    // The faces the server shows.
    "tenants",
    "http",
    "mcp",
    "oneshot",
    "plugin_cli",
    "cli",
];

#[cfg(test)]
mod tests {
    use super::LAYERS;
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
