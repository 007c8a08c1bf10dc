//! Large real documents, as agents meet them: documentation pages that installable packages
//! ship (rustup's `rust-docs` component, Debian's `python3.11-doc`), served on loopback with
//! everything they load, so the snapshot steps measure pages nobody wrote for this bench.

use std::path::{Path, PathBuf};

/// One real page: where it lives and what an agent would look for on it.
pub struct RealPage {
    /// The row label.
    pub label: &'static str,
    /// The URL prefix its folder is served under.
    pub mount: &'static str,
    /// Its path inside that folder.
    pub path: &'static str,
    /// Text naming one element of the page, for the `find` row of the token table.
    pub find: &'static str,
}

const RUST: &str = "/docs/rust/";
const PYTHON: &str = "/docs/python/";

pub const PAGES: [RealPage; 5] = [
    RealPage {
        label: "Rust book: strings chapter",
        mount: RUST,
        path: "book/ch08-02-strings.html",
        find: "Slicing Strings",
    },
    RealPage {
        label: "std::collections::HashMap",
        mount: RUST,
        path: "std/collections/struct.HashMap.html",
        find: "get_key_value",
    },
    RealPage {
        label: "std::string::String",
        mount: RUST,
        path: "std/string/struct.String.html",
        find: "from_utf8_lossy_owned",
    },
    RealPage {
        label: "Python: library/functions.html",
        mount: PYTHON,
        path: "library/functions.html",
        find: "issubclass",
    },
    RealPage {
        label: "Python: library/stdtypes.html",
        mount: PYTHON,
        path: "library/stdtypes.html",
        find: "removeprefix",
    },
];

/// The documentation folders found on this machine, as `(prefix, folder)` for the fixture
/// server, and a line for each one missing, saying how to install it.
pub fn mounts() -> (Vec<(String, PathBuf)>, Vec<String>) {
    let mut found = Vec::new();
    let mut missing = Vec::new();
    match rust_docs() {
        Some(dir) => found.push((RUST.to_owned(), dir)),
        None => missing.push(
            "Rust's documentation is not installed (`rustup component add rust-docs`): \
             its three real pages are skipped"
                .to_owned(),
        ),
    }
    match python_docs() {
        Some(dir) => found.push((PYTHON.to_owned(), dir)),
        None => missing.push(
            "Python's documentation is not installed (`apt install python3.11-doc`): \
             its two real pages are skipped"
                .to_owned(),
        ),
    }
    (found, missing)
}

/// The pages whose folder is mounted and whose file exists.
pub fn available(mounts: &[(String, PathBuf)]) -> Vec<&'static RealPage> {
    PAGES
        .iter()
        .filter(|page| {
            mounts
                .iter()
                .any(|(prefix, dir)| prefix == page.mount && dir.join(page.path).is_file())
        })
        .collect()
}

/// The active toolchain's `share/doc/rust/html`, else any rustup toolchain's.
fn rust_docs() -> Option<PathBuf> {
    let has_pages = |dir: &Path| dir.join("std/index.html").is_file();
    let sysroot = std::process::Command::new("rustc")
        .args(["--print", "sysroot"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned());
    if let Some(dir) = sysroot.map(|root| Path::new(&root).join("share/doc/rust/html"))
        && has_pages(&dir)
    {
        return Some(dir);
    }
    let home = std::env::var_os("RUSTUP_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".rustup")))?;
    let mut toolchains: Vec<PathBuf> = std::fs::read_dir(home.join("toolchains"))
        .ok()?
        .filter_map(|entry| Some(entry.ok()?.path().join("share/doc/rust/html")))
        .filter(|dir| has_pages(dir))
        .collect();
    toolchains.sort();
    toolchains.pop()
}

/// Debian's `/usr/share/doc/python3.X/html`, the newest one installed.
fn python_docs() -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/share/doc")
        .ok()?
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let name = entry.file_name();
            let name = name.to_str()?;
            let minor = name.strip_prefix("python3.")?;
            minor.parse::<u32>().ok()?;
            Some(entry.path().join("html"))
        })
        .filter(|dir| dir.join("library/functions.html").is_file())
        .collect();
    found.sort_by_key(|dir| {
        dir.parent().and_then(|p| {
            p.file_name()?
                .to_str()?
                .strip_prefix("python3.")?
                .parse::<u32>()
                .ok()
        })
    });
    found.pop()
}
