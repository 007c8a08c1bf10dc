//! Where code may live. A *code folder* is any folder or file the server executes or loads code
//! from: plugin folders and the compiled-code cache (what the server runs with a plugin's
//! grants, all of them for built-in tools), and the helpers it starts: Chromium, Node.js and the
//! Lighthouse package it runs, ffmpeg. Folders that plugins or tenants may write to (file
//! parameters, `files.write`, temporary files) must never overlap a code folder, or a plugin
//! could replace code the server runs as its own user. Checked at start-up (refusing to start
//! with a message naming the overlap and the fix); the code folders are then protected in the
//! file sandbox, so roots that arrive later (MCP client roots) cannot reach them either, and a
//! helper found only later (Lighthouse installed after start) is vetted the same way, against
//! every writable root the process has had, before it first runs ([`vet`]).

use crate::sandbox::canonical;
use std::path::{Path, PathBuf};

/// A folder with a name for messages, e.g. ("--workspace", "/srv/work").
#[derive(Debug, Clone)]
pub struct Named {
    pub what: String,
    pub path: PathBuf,
}

/// How start-up names the temp dir among the writable folders.
pub const TEMP_DIR: &str = "the temp dir";

impl Named {
    /// The process's temp dir (`TMPDIR`), where plugins write temporary files.
    pub fn temp_dir() -> Named {
        Named::new(TEMP_DIR, std::env::temp_dir())
    }

    pub fn new(what: impl Into<String>, path: impl Into<PathBuf>) -> Named {
        Named {
            what: what.into(),
            path: path.into(),
        }
    }
}

/// Everything start-up knows about: code folders and writable roots.
#[derive(Debug, Default)]
pub struct Placement {
    /// The compiled-code cache and its key folder (`None`: no cache).
    pub cache: Option<PathBuf>,
    /// Built-in and community plugin folders.
    pub plugin_dirs: Vec<Named>,
    /// Helpers the server executes, and what they load ([`executable`], [`node_package`]).
    pub helpers: Vec<Named>,
    /// Folders plugins or tenants can write to: workspaces, the temp dir, tenant roots,
    /// client roots known at start.
    pub writable: Vec<Named>,
}

impl Placement {
    /// Refuses overlapping code and writable folders; on success the code folders are
    /// protected in the file sandbox for the life of the process.
    pub fn check(&self) -> Result<(), String> {
        for writable in &self.writable {
            crate::sandbox::register_writable(&writable.path);
        }
        if let Some(refusal) = self.refusal() {
            return Err(refusal);
        }
        for code_dir in self.code_folders() {
            crate::sandbox::protect(&code_dir.path);
        }
        Ok(())
    }

    /// Why [`Placement::check`] would refuse, changing nothing: what `plugin new` asks before
    /// it suggests a plugin folder.
    pub fn refusal(&self) -> Option<String> {
        let code = self.code_folders();
        for writable in &self.writable {
            if let Err(reason) = check_writable(&code, writable) {
                return Some(format!("Refusing to start: {reason}"));
            }
        }
        let cache = self.cache.as_ref()?;
        self.plugin_dirs.iter().find(|plugins| overlaps(cache, &plugins.path)).map(|plugins| {
            format!(
                "The compiled-code cache {} overlaps {} {}: the cache must be a private folder of its own. Choose another folder with --cacheDir.",
                cache.display(),
                plugins.what,
                plugins.path.display()
            )
        })
    }

    /// Every code folder: the cache and its key folder, the plugin folders, the helpers.
    pub fn code_folders(&self) -> Vec<Named> {
        let mut code: Vec<Named> = Vec::new();
        if let Some(cache) = &self.cache {
            code.push(Named::new("the compiled-code cache (--cacheDir)", cache));
            code.push(Named::new(
                "the compiled-code cache's key folder",
                key_dir(cache),
            ));
        }
        code.extend(self.plugin_dirs.iter().cloned());
        code.extend(self.helpers.iter().cloned());
        code
    }
}

/// A temp dir to suggest (`TMPDIR`) when the current one holds code: the user's cache folder
/// (`~/.cache/devtools-mcp/tmp`), or failing that a folder in their home, when it overlaps
/// none of `code`.
pub fn private_temp_dir(code: &[&Path]) -> Option<PathBuf> {
    let candidates = [
        dirs::cache_dir().map(|cache| cache.join("devtools-mcp").join("tmp")),
        dirs::home_dir().map(|home| home.join(".devtools-mcp-tmp")),
    ];
    candidates
        .into_iter()
        .flatten()
        .find(|candidate| !code.iter().any(|code| overlaps(candidate, code)))
}

/// Vets a code folder found after start-up (a helper installed meanwhile) before the server
/// runs it: refused when it overlaps any writable root the process has had (other than the
/// unrestricted `/`, which excludes code folders path by path), else protected from now on.
pub fn vet(what: &str, path: &Path) -> Result<(), String> {
    let code = Named::new(what, path);
    for writable in crate::sandbox::writable_roots() {
        if !crate::sandbox::is_unrestricted_root(&writable) && overlaps(path, &writable) {
            return Err(format!(
                "Refusing to run {what} {}: it lies in {}, a folder plugins or tenants may write to, so anything that can write there could replace code the server runs. Install it elsewhere.",
                path.display(),
                writable.display()
            ));
        }
    }
    crate::sandbox::protect(&code.path);
    Ok(())
}

/// The code of a helper executable: the file itself, and for Chromium (`with_folder`) the
/// folder it loads its libraries and resources from.
pub fn executable(what: &str, path: &Path, with_folder: bool) -> Vec<Named> {
    let canonical = canonical(path);
    let mut code = vec![Named::new(what, &canonical)];
    if with_folder && let Some(folder) = canonical.parent() {
        code.push(Named::new(format!("the folder of {what}"), folder));
    }
    code
}

/// The code a Node.js package loads: its `node_modules` folder (its dependencies are its
/// siblings there), or the package itself when it stands alone.
pub fn node_package(what: &str, package: &Path) -> Named {
    let canonical = canonical(package);
    match canonical.parent() {
        Some(parent)
            if parent
                .file_name()
                .is_some_and(|name| name == "node_modules") =>
        {
            Named::new(what, parent)
        }
        _ => Named::new(what, canonical),
    }
}

/// Refuses a folder plugins or tenants may write to that overlaps one of the `code` folders
/// (the reason names both and the way out). A root that arrives after start (a tenant's
/// `sandbox_root` on reload) goes through this same check.
pub fn check_writable(code: &[Named], writable: &Named) -> Result<(), String> {
    // Code folders are excluded from the unrestricted root (`sandbox::protect`).
    if crate::sandbox::is_unrestricted_root(&writable.path) {
        return Ok(());
    }
    match code
        .iter()
        .find(|code_dir| overlaps(&code_dir.path, &writable.path))
    {
        Some(code_dir) => Err(overlap_reason(code_dir, writable, code)),
        None => Ok(()),
    }
}

fn overlap_reason(code: &Named, writable: &Named, all_code: &[Named]) -> String {
    let fix = if code.what.contains("cache") {
        "Choose a private cache folder outside it with --cacheDir".to_string()
    } else if writable.what == TEMP_DIR {
        // The temp dir is every process's: the way out is a temp dir of the server's own.
        let paths: Vec<&Path> = all_code.iter().map(|code| code.path.as_path()).collect();
        let give = match private_temp_dir(&paths) {
            Some(private) => format!(
                "Give the server a temp dir of its own: `mkdir -p -m 700 {0}` and start it with TMPDIR={0} in its environment (`TMPDIR={0} devtools-mcp ...`; in an MCP client's entry for the server, \"env\": {{\"TMPDIR\": \"{0}\"}})",
                private.display()
            ),
            None => format!(
                "Set TMPDIR to a private folder outside {} in the server's environment",
                code.path.display()
            ),
        };
        format!(
            "{give}, or move {} out of {}",
            code.what,
            writable.path.display()
        )
    } else if code.what.contains("plugin") || code.what.contains("built-in tools") {
        "Move the plugin folder out of it, or narrow the writable folder".to_string()
    } else {
        "Install the helper outside it (or point the server at another copy), or narrow the writable folder".to_string()
    };
    format!(
        "{} {} overlaps {} {}, which plugins or tenants may write to; anything that can write there could replace code the server runs. {fix}.",
        code.what,
        code.path.display(),
        writable.what,
        writable.path.display()
    )
}

/// One folder is inside the other (or they are the same), compared on canonical paths; a
/// folder that does not exist yet is compared through its deepest existing ancestor.
pub fn overlaps(a: &Path, b: &Path) -> bool {
    let (a, b) = (canonical(a), canonical(b));
    a.starts_with(&b) || b.starts_with(&a)
}

/// The folder holding the cache's key: a sibling of the cache folder (`<cache>-key`), so
/// that whoever can write cache entries still cannot read the key through the cache folder.
pub fn key_dir(cache_dir: &Path) -> PathBuf {
    let mut name = cache_dir
        .file_name()
        .map(|name| name.to_os_string())
        .unwrap_or_else(|| "devtools-mcp-cache".into());
    name.push("-key");
    cache_dir.with_file_name(name)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_unrestricted_root_keeps_code_folders_out_of_reach_instead_of_refusing_them() {
        let root = tempfile::tempdir().expect("temp dir");
        let cache = root.path().join("cache");
        std::fs::create_dir_all(&cache).expect("mkdir");
        let placement = Placement {
            cache: Some(cache.clone()),
            plugin_dirs: vec![],
            helpers: vec![],
            writable: vec![Named::new("the --workspace", "/")],
        };
        placement.check().expect("`/` is accepted");
        let sandbox = crate::sandbox::Sandbox::new([PathBuf::from("/")]).expect("the / root");
        let planted = cache.join("planted");
        assert!(sandbox.write(&planted, b"x").is_err());
        assert!(!planted.exists());
    }

    #[test]
    fn a_cache_or_plugin_folder_inside_a_writable_root_is_refused_naming_both() {
        let root = tempfile::tempdir().unwrap();
        let base = root.path();
        let work = base.join("work");
        std::fs::create_dir_all(work.join("plugins")).unwrap();
        let placement = Placement {
            cache: Some(work.join("cache")),
            plugin_dirs: vec![],
            helpers: vec![],
            writable: vec![Named::new("--workspace", &work)],
        };
        let error = placement.check().unwrap_err();
        assert!(
            error.contains("the compiled-code cache (--cacheDir)"),
            "{error}"
        );
        assert!(error.contains("--workspace"), "{error}");
        assert!(error.contains("--cacheDir"), "{error}");
        // A root inside the cache folder overlaps too.
        let placement = Placement {
            cache: Some(base.join("cache")),
            plugin_dirs: vec![],
            helpers: vec![],
            writable: vec![Named::new("the temp dir", base.join("cache/tmp"))],
        };
        assert!(placement.check().is_err());
        let placement = Placement {
            cache: Some(base.join("cache")),
            plugin_dirs: vec![Named::new("--pluginDir", work.join("plugins"))],
            helpers: vec![],
            writable: vec![Named::new("--workspace", &work)],
        };
        let error = placement.check().unwrap_err();
        assert!(error.contains("--pluginDir"), "{error}");
        // A sibling with a common prefix is not inside.
        let placement = Placement {
            cache: Some(base.join("cache")),
            plugin_dirs: vec![Named::new("--pluginDir", base.join("plugins"))],
            helpers: vec![],
            writable: vec![Named::new("--workspace", base.join("cache-other"))],
        };
        placement.check().unwrap();
    }

    /// Finding: with a workspace holding the Lighthouse install, a plugin with `files.write`
    /// rewrote a package the next audit ran. Helpers are code folders like plugin folders.
    #[test]
    fn a_helper_inside_a_writable_root_is_refused_and_protected_otherwise() {
        let root = tempfile::tempdir().unwrap();
        let base = root.path();
        let package = base.join("work/lh/node_modules/lighthouse");
        std::fs::create_dir_all(&package).unwrap();
        let placement = Placement {
            cache: None,
            plugin_dirs: vec![],
            helpers: vec![node_package("Lighthouse", &package)],
            writable: vec![Named::new("the --workspace", base.join("work"))],
        };
        let error = placement.check().unwrap_err();
        assert!(error.contains("Lighthouse"), "{error}");
        assert!(error.contains("Install the helper outside it"), "{error}");
        // Elsewhere it is protected: no write may land in its node_modules.
        let placement = Placement {
            cache: None,
            plugin_dirs: vec![],
            helpers: vec![node_package("Lighthouse", &package)],
            writable: vec![Named::new("the --workspace", base.join("other"))],
        };
        placement.check().unwrap();
        let sandbox = crate::sandbox::Sandbox::new([PathBuf::from("/")]).unwrap();
        let planted = base.join("work/lh/node_modules/dep/index.js");
        assert!(sandbox.write(&planted, b"x").is_err());
        assert!(sandbox.resolve(&planted.display().to_string()).is_err());
    }

    #[test]
    fn a_helper_found_after_start_is_vetted_against_every_writable_root() {
        let root = tempfile::tempdir().unwrap();
        let work = root.path().join("late-work");
        std::fs::create_dir_all(work.join("bin")).unwrap();
        let _sandbox = crate::sandbox::Sandbox::new([work.clone()]).unwrap();
        let error = vet("ffmpeg", &work.join("bin/ffmpeg")).unwrap_err();
        assert!(error.contains("ffmpeg"), "{error}");
        let elsewhere = root.path().join("tools/ffmpeg");
        vet("ffmpeg", &elsewhere).unwrap();
    }

    /// Finding: a plugin folder in /tmp was refused with "narrow the writable folder", which
    /// the temp dir cannot be; the message gives a temp dir the same rule accepts.
    #[test]
    fn a_plugin_folder_in_the_temp_dir_is_refused_with_a_temp_dir_that_works() {
        let root = tempfile::tempdir().unwrap();
        let temp = root.path().join("tmp");
        let plugins = temp.join("page_title/dist");
        std::fs::create_dir_all(&plugins).unwrap();
        let placement = Placement {
            cache: None,
            plugin_dirs: vec![Named::new("the --pluginDir", &plugins)],
            helpers: vec![],
            writable: vec![Named::new(TEMP_DIR, &temp)],
        };
        let error = placement.refusal().unwrap();
        let private = private_temp_dir(&[&plugins]).unwrap();
        assert!(
            error.contains(&format!("TMPDIR={} devtools-mcp", private.display())),
            "{error}"
        );
        assert!(error.contains("or move the --pluginDir out of"), "{error}");
        // Following the advice satisfies the same rule.
        let placement = Placement {
            writable: vec![Named::new(TEMP_DIR, &private)],
            ..placement
        };
        assert_eq!(placement.refusal(), None);
        // A suggestion never overlaps the code it is for.
        assert!(private_temp_dir(&[&private.join("plugins")]) != Some(private));
    }

    #[test]
    fn a_symlinked_alias_of_a_root_still_overlaps() {
        let root = tempfile::tempdir().unwrap();
        let work = root.path().join("work");
        std::fs::create_dir(&work).unwrap();
        std::os::unix::fs::symlink(&work, root.path().join("alias")).unwrap();
        assert!(overlaps(&root.path().join("alias/cache"), &work));
        assert!(!overlaps(&root.path().join("other"), &work));
    }
}
