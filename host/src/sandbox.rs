//! File-parameter sandbox and the host's one file gateway.
//!
//! Tools declare which parameters are file paths; before a handler runs, the host passes each
//! value through [`Sandbox::resolve`], which canonicalizes it inside the allowed roots and
//! rewrites it (mirrors `validatePath` / `validateAndResolvePathOrUrl` of chrome-devtools-mcp).
//! Every file of a root the host then reads or writes goes through the gateway
//! (`sandbox/gateway.rs`): one non-blocking open, through a `cap_std::fs::Dir` per root (a
//! symlink swapped in after validation cannot lead outside), regular files only (checked
//! before and after opening), bounded reads, and writes only as one of the file kinds of
//! `sandbox/kinds.rs`. Nothing else in the host opens a file inside a root.

mod gateway;
mod kinds;
mod paths;
mod temp;

pub use kinds::{FileKind, ImageFormat, PLUGIN_FILE_EXTENSIONS, ReportFormat, VideoFormat};
pub use paths::{canonical, ensure_extension};
pub use temp::save_temporary_file;

use paths::{canonicalize_lenient, file_url_to_path, path_to_file_url, url_scheme};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use cap_std::fs::Dir;
use std::sync::RwLock;

/// Folders no root may overlap and no write may reach: plugin folders and the compiled-code
/// cache (set once at start-up by `policy::code_folders`).
static PROTECTED: RwLock<Vec<PathBuf>> = RwLock::new(Vec::new());

/// Every folder plugins or tenants could write to in this process's life (sandbox roots, the
/// temp dir): code found later is vetted against it (`policy::code_folders::vet`).
static WRITABLE: RwLock<Vec<PathBuf>> = RwLock::new(Vec::new());

/// Remembers `folder` as writable by plugins or tenants, for the rest of the process.
pub fn register_writable(folder: &Path) {
    let canonical = canonical(folder);
    if let Ok(mut writable) = WRITABLE.write()
        && !writable.contains(&canonical)
    {
        writable.push(canonical);
    }
}

/// The folders plugins or tenants could write to, so far.
pub fn writable_roots() -> Vec<PathBuf> {
    WRITABLE
        .read()
        .map(|roots| roots.clone())
        .unwrap_or_default()
}

/// Protects `folder` for the rest of the process: roots overlapping it are refused, and so are
/// paths inside it.
pub fn protect(folder: &Path) {
    let canonical = canonical(folder);
    if let Ok(mut protected) = PROTECTED.write()
        && !protected.contains(&canonical)
    {
        protected.push(canonical);
    }
}

/// Whether `root` is the unrestricted root `/` (`--workspace=/`, `--allowUnrestrictedPaths`),
/// asked for on purpose: it holds every folder, so protected folders are excluded from it
/// path by path instead of refusing it.
pub fn is_unrestricted_root(root: &Path) -> bool {
    root == Path::new("/")
}

/// The protected folder `path` (canonical) is in, or that lies inside `path`.
fn protected_overlap(path: &Path) -> Option<PathBuf> {
    let protected = PROTECTED.read().ok()?;
    protected
        .iter()
        .find(|folder| path.starts_with(folder) || folder.starts_with(path))
        .cloned()
}

/// Why a path parameter or a write was refused. The texts match the reference server.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// Paths are quoted as JSON strings, as the reference 1.11.0 prints them.
    #[error(
        "Access denied: path {} (canonical: {}) is not within any of the configured workspace roots.",
        quoted(path),
        quoted(canonical)
    )]
    AccessDenied { path: String, canonical: String },
    #[error("Access denied: Cannot resolve base path for {}.", quoted(path))]
    CannotResolve { path: String },
    /// Display is the reference's `Could not write ${filepath}`; the cause stays in `source`.
    #[error("Could not write {}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("Could not read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{} is not a regular file (FIFOs, sockets and devices are never opened)", path.display())]
    NotRegular { path: PathBuf },
    #[error("{} is not a folder", path.display())]
    NotAFolder { path: PathBuf },
    #[error("{} is larger than the {limit} bytes the server reads", path.display())]
    TooLarge { path: PathBuf, limit: u64 },
}

impl SandboxError {
    /// The cause alone, for messages that name the file themselves.
    pub fn reason(&self) -> String {
        match self {
            SandboxError::Read { source, .. } | SandboxError::Io { source, .. } => {
                source.to_string()
            }
            SandboxError::NotRegular { .. } => {
                "it is not a regular file (FIFOs, sockets and devices are never opened)".into()
            }
            SandboxError::TooLarge { limit, .. } => format!("it is larger than {limit} bytes"),
            other => other.to_string(),
        }
    }

    /// Whether the file does not exist (the reference words that case its own way).
    pub fn is_not_found(&self) -> bool {
        matches!(self, SandboxError::Read { source, .. } if source.kind() == io::ErrorKind::NotFound)
    }
}

/// A path as a JSON string, with the C1 controls and line separators escaped as well (so a
/// hostile name cannot break a log line or a message).
fn quoted(path: &str) -> String {
    let json = serde_json::Value::from(path).to_string();
    json.chars()
        .map(|c| match c {
            '\u{7f}'..='\u{9f}' | '\u{2028}' | '\u{2029}' => format!("\\u{:04x}", c as u32),
            other => other.to_string(),
        })
        .collect()
}

/// One allowed root: its canonical path (for checks) and an open handle (for writes).
struct Root {
    path: PathBuf,
    dir: Dir,
}

/// The allowed roots. The first root is the base that relative paths resolve against.
pub struct Sandbox {
    roots: Vec<Root>,
}

impl Sandbox {
    /// Opens every root. A root that cannot be opened is an error naming it, never skipped,
    /// so a mistyped `--workspace` is noticed instead of silently shrinking the sandbox.
    pub fn new(roots: impl IntoIterator<Item = PathBuf>) -> io::Result<Sandbox> {
        let mut sandbox = Sandbox { roots: Vec::new() };
        for root in roots {
            sandbox.add_root(&root)?;
        }
        Ok(sandbox)
    }

    /// Adds a root (e.g. MCP client roots arriving after start-up); a duplicate is ignored.
    pub fn add_root(&mut self, root: &Path) -> io::Result<()> {
        let named =
            |e: io::Error| io::Error::new(e.kind(), format!("root {}: {e}", root.display()));
        let path = fs::canonicalize(root).map_err(named)?;
        if self.roots.iter().any(|r| r.path == path) {
            return Ok(());
        }
        if let Some(folder) = protected_overlap(&path).filter(|_| !is_unrestricted_root(&path)) {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "root {} overlaps {}, which holds code the server runs (plugins or compiled code); it cannot be a file root",
                    root.display(),
                    folder.display()
                ),
            ));
        }
        // The only use of ambient authority: everything after goes through this handle.
        let dir = Dir::open_ambient_dir(&path, cap_std::ambient_authority()).map_err(named)?;
        let swept = gateway::sweep_stale_partials(&dir);
        if swept > 0 {
            tracing::info!(swept, root = %path.display(), "removed writes a killed server left unfinished");
        }
        register_writable(&path);
        self.roots.push(Root { path, dir });
        Ok(())
    }

    /// The canonical roots, in the order they were added.
    #[cfg(test)]
    pub fn roots(&self) -> Vec<&Path> {
        self.roots.iter().map(|r| r.path.as_path()).collect()
    }

    /// Validate a path parameter value; returns the rewritten value (canonical absolute path, or
    /// the URL untouched). A `file:` URL is checked as a path and comes back as the `file:` URL
    /// of the canonical path, as in the reference, so URL parameters stay URLs.
    pub fn resolve(&self, value: &str) -> Result<String, SandboxError> {
        match url_scheme(value).map(|s| s.to_ascii_lowercase()).as_deref() {
            Some("http" | "https" | "ws" | "wss") => Ok(value.to_owned()),
            Some("file") => {
                let path = file_url_to_path(value).ok_or_else(|| SandboxError::CannotResolve {
                    path: value.to_owned(),
                })?;
                let canonical = self.check(&path)?;
                Ok(path_to_file_url(&canonical))
            }
            // Other "scheme:rest" strings are plain (relative) file names, as in the reference.
            _ => self.check(value),
        }
    }

    /// Canonicalizes `path` (relative to the first root) and checks that it lies in a root.
    fn check(&self, path: &str) -> Result<String, SandboxError> {
        let cannot = || SandboxError::CannotResolve {
            path: path.to_owned(),
        };
        let base = self.roots.first().ok_or_else(cannot)?;
        let canonical = canonicalize_lenient(&base.path.join(path)).map_err(|_| cannot())?;
        let inside_protected =
            protected_overlap(&canonical).is_some_and(|folder| canonical.starts_with(folder));
        if inside_protected || !self.roots.iter().any(|r| canonical.starts_with(&r.path)) {
            return Err(SandboxError::AccessDenied {
                path: path.to_owned(),
                canonical: canonical.display().to_string(),
            });
        }
        // A value that is not UTF-8 cannot be handed back in a JSON string unchanged.
        canonical.to_str().map(str::to_owned).ok_or_else(cannot)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{PermissionsExt, symlink};

    /// `<tmp>/a/root` (the sandbox), `<tmp>/a/root-evil`, `<tmp>/outside/secret.txt`.
    struct Fixture {
        _tmp: tempfile::TempDir,
        tmp: PathBuf,
        root: PathBuf,
        outside: PathBuf,
        sandbox: Sandbox,
    }

    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().expect("tempdir");
        let tmp = fs::canonicalize(dir.path()).expect("canonical tempdir");
        let root = tmp.join("a/root");
        let outside = tmp.join("outside");
        for d in [root.join("sub"), tmp.join("a/root-evil"), outside.clone()] {
            fs::create_dir_all(d).expect("mkdir");
        }
        fs::write(outside.join("secret.txt"), "secret").expect("write secret");
        fs::write(root.join("file.txt"), "in").expect("write file");
        fs::write(root.join("my file.txt"), "in").expect("write file");
        fs::write(tmp.join("a/root-evil/x.txt"), "evil").expect("write evil");
        symlink(outside.join("secret.txt"), root.join("link-file")).expect("symlink");
        symlink(&outside, root.join("link-dir")).expect("symlink");
        symlink(root.join("file.txt"), root.join("link-inside")).expect("symlink");
        symlink(outside.join("nope.txt"), root.join("dangling")).expect("symlink");
        symlink(&root, tmp.join("alias")).expect("symlink");
        let sandbox = Sandbox::new([root.clone()]).expect("sandbox");
        Fixture {
            _tmp: dir,
            tmp,
            root,
            outside,
            sandbox,
        }
    }

    fn denied(path: &str, canonical: &Path) -> Result<String, String> {
        Err(format!(
            "Access denied: path \"{path}\" (canonical: \"{}\") is not within any of the configured workspace roots.",
            canonical.display()
        ))
    }

    fn cannot(path: &str) -> Result<String, String> {
        Err(format!(
            "Access denied: Cannot resolve base path for \"{path}\"."
        ))
    }

    /// What `resolve` must answer; paths are relative to the fixture's temp dir.
    enum Expect {
        Ok(&'static str),
        Url(&'static str),
        Raw,
        Deny(&'static str),
        Cannot,
    }

    #[test]
    fn attack_table() {
        use Expect::*;
        let f = fixture();
        let abs = |rel: &str| f.tmp.join(rel).display().to_string();
        let url = |rel: &str| format!("file://{}", abs(rel));
        #[rustfmt::skip]
        let cases: Vec<(&str, String, Expect)> = vec![
            // Climbing out with `..` from the base directory.
            ("dotdot", "../../outside".into(), Deny("outside")),
            // An absolute path outside every root.
            ("absolute out", abs("outside/secret.txt"), Deny("outside/secret.txt")),
            // A symlink inside the root pointing at a file outside.
            ("symlink file", "link-file".into(), Deny("outside/secret.txt")),
            // A symlink inside the root pointing at a directory outside.
            ("symlink dir", "link-dir/secret.txt".into(), Deny("outside/secret.txt")),
            // A new file below a symlinked directory would land outside.
            ("symlink dir new", "link-dir/new.txt".into(), Deny("outside/new.txt")),
            // A final-component symlink pointing inside is followed and rewritten.
            ("final symlink", "link-inside".into(), Ok("a/root/file.txt")),
            // A dangling final symlink might be followed later by someone else: refused.
            ("dangling", "dangling".into(), Cannot),
            // A not-yet-existing nested relative path is accepted.
            ("new nested", "rep/2024/t.json".into(), Ok("a/root/rep/2024/t.json")),
            // `..` in the missing remainder cannot climb past the root either.
            ("missing ..", "new/../../../outside/x".into(), Deny("outside/x")),
            // `..` in the missing remainder that stays inside is normalised.
            ("missing .. in", "new/../kept.txt".into(), Ok("a/root/kept.txt")),
            // A file inside, reached through a symlinked alias, is rewritten to canonical.
            ("alias", abs("alias/sub/../file.txt"), Ok("a/root/file.txt")),
            // Going through a regular file as if it were a directory.
            ("not a dir", "file.txt/x".into(), Cannot),
            // A `file:` URL inside comes back as the canonical `file:` URL, encoding kept.
            ("url in", url("a/root/sub/../my%20file.txt"), Url("a/root/my%20file.txt")),
            // A `file:` URL outside is refused.
            ("url out", url("outside/secret.txt"), Deny("outside/secret.txt")),
            // A `file:` URL naming a remote host is no local path.
            ("url host", "file://evil.example/etc/passwd".into(), Cannot),
            // An encoded `/` is refused, as by Node's fileURLToPath.
            ("url %2F", url("a/root/..%2F..%2Fx"), Cannot),
            // http, https, ws and wss URLs pass through untouched.
            ("http", "http://example.com/../x".into(), Raw),
            ("wss", "WSS://example.com/x".into(), Raw),
            // The root itself, relatively and absolutely.
            ("root dot", ".".into(), Ok("a/root")),
            ("root abs", abs("a/root"), Ok("a/root")),
            // `<tmp>/a/root-evil` must not match the root `<tmp>/a/root`.
            ("prefix trick", abs("a/root-evil/x.txt"), Deny("a/root-evil/x.txt")),
            // The filesystem root.
            ("slash", "/".into(), Deny("/")),
        ];
        for (what, input, expect) in cases {
            // For a `file:` URL the message names the decoded path.
            let path = input.strip_prefix("file://").unwrap_or(&input);
            let expected = match expect {
                Ok(rel) => Result::Ok(abs(rel)),
                Url(rel) => Result::Ok(url(rel)),
                Raw => Result::Ok(input.clone()),
                Deny(rel) => denied(path, &f.tmp.join(rel)),
                Cannot => cannot(&input),
            };
            let got = f.sandbox.resolve(&input).map_err(|e| e.to_string());
            assert_eq!(got, expected, "case {what}: input {input}");
        }
    }

    #[test]
    fn write_creates_parents_and_mode_0600() {
        let f = fixture();
        let resolved = f.sandbox.resolve("deep/er/out.json").expect("resolve");
        f.sandbox.write(Path::new(&resolved), b"{}").expect("write");
        let path = f.root.join("deep/er/out.json");
        assert_eq!(
            fs::read(&path).expect("read back"),
            b"{}",
            "content written"
        );
        let mode = fs::metadata(&path).expect("metadata").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "new file mode");
        f.sandbox.write(&path, b"again").expect("overwrite");
        assert_eq!(
            fs::read(&path).expect("read back"),
            b"again",
            "truncated and rewritten"
        );
    }

    #[test]
    fn write_refuses_symlinks_swapped_in_after_resolve() {
        let f = fixture();
        // A directory replaced by a symlink to the outside.
        let resolved = f.sandbox.resolve("sub/out.txt").expect("resolve");
        fs::remove_dir(f.root.join("sub")).expect("rmdir");
        symlink(&f.outside, f.root.join("sub")).expect("symlink");
        let err = f
            .sandbox
            .write(Path::new(&resolved), b"x")
            .expect_err("dir swap must fail");
        assert_eq!(
            err.to_string(),
            format!("Could not write {resolved}"),
            "dir swap message"
        );
        assert!(
            !f.outside.join("out.txt").exists(),
            "nothing written outside"
        );
        // The final component replaced by a symlink to the outside.
        let resolved = f.sandbox.resolve("final.txt").expect("resolve");
        symlink(f.outside.join("secret.txt"), f.root.join("final.txt")).expect("symlink");
        let err = f
            .sandbox
            .write(Path::new(&resolved), b"x")
            .expect_err("file swap must fail");
        assert!(
            matches!(err, SandboxError::Io { .. }),
            "file swap is an Io error: {err}"
        );
        let secret = fs::read_to_string(f.outside.join("secret.txt")).expect("read secret");
        assert_eq!(secret, "secret", "outside file untouched");
    }

    #[test]
    fn write_refuses_paths_outside_roots() {
        let f = fixture();
        let target = f.outside.join("x.txt");
        let err = f.sandbox.write(&target, b"x").expect_err("outside");
        assert_eq!(
            err.to_string(),
            denied(&target.display().to_string(), &target).expect_err("an error text")
        );
        let sneaky = f.root.join("../../outside/x.txt");
        assert!(
            f.sandbox.write(&sneaky, b"x").is_err(),
            "`..` after a root prefix"
        );
        assert!(
            f.sandbox.write(&f.root, b"x").is_err(),
            "root itself is a directory"
        );
        assert!(!target.exists(), "nothing written outside");
    }

    #[test]
    fn roots_are_canonical_deduped_and_must_exist() {
        let mut f = fixture();
        f.sandbox
            .add_root(&f.tmp.join("alias"))
            .expect("alias root");
        f.sandbox.add_root(&f.outside).expect("second root");
        assert_eq!(
            f.sandbox.roots(),
            vec![f.root.as_path(), f.outside.as_path()],
            "deduped"
        );
        assert!(
            f.sandbox
                .resolve(&f.outside.join("secret.txt").display().to_string())
                .is_ok()
        );
        let missing = f.tmp.join("missing");
        let err = Sandbox::new([missing.clone()])
            .err()
            .expect("missing root must fail");
        assert!(
            err.to_string().contains(&missing.display().to_string()),
            "names root: {err}"
        );
        let empty = Sandbox::new([]).expect("no roots");
        assert_eq!(
            empty.resolve("x").map_err(|e| e.to_string()),
            cannot("x"),
            "no base"
        );
    }

    #[test]
    fn special_files_are_refused_without_blocking() {
        let f = fixture();
        let fifo = f.root.join("pipe.txt");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|status| status.success()), "mkfifo");
        let (done, finished) = std::sync::mpsc::channel();
        let sandbox_root = f.root.clone();
        let target = fifo.clone();
        std::thread::spawn(move || {
            let sandbox = Sandbox::new([sandbox_root]).expect("sandbox");
            let _ = done.send(sandbox.write(&target, b"x").map_err(|e| format!("{e:#}")));
        });
        let outcome = finished
            .recv_timeout(std::time::Duration::from_secs(5))
            .expect("writing to a FIFO must not block");
        assert!(outcome.is_err(), "a FIFO must be refused");
        // A device reached through a symlink is refused too (the final symlink is not followed).
        symlink("/dev/null", f.root.join("null.txt")).expect("symlink");
        assert!(f.sandbox.write(&f.root.join("null.txt"), b"x").is_err());
    }

    #[test]
    fn protected_folders_cannot_be_roots_or_targets() {
        let f = fixture();
        let code = f.tmp.join("a/root/plugins");
        fs::create_dir_all(&code).expect("mkdir");
        protect(&code);
        let refused = f
            .sandbox
            .resolve(&code.join("x.wasm").display().to_string());
        assert!(matches!(refused, Err(SandboxError::AccessDenied { .. })));
        assert!(f.sandbox.write(&code.join("x.wasm"), b"x").is_err());
        let mut other = Sandbox::new([]).expect("sandbox");
        assert!(other.add_root(&code).is_err(), "inside");
        assert!(other.add_root(&f.tmp.join("a")).is_err(), "containing");
        assert!(other.add_root(&f.outside).is_ok(), "elsewhere");
        // The unrestricted root holds the protected folder but never reaches into it.
        let mut unrestricted = Sandbox::new([PathBuf::from("/")]).expect("the / root");
        let inside = code.join("y.wasm");
        assert!(matches!(
            unrestricted.resolve(&inside.display().to_string()),
            Err(SandboxError::AccessDenied { .. })
        ));
        assert!(unrestricted.write(&inside, b"x").is_err());
        assert!(!inside.exists());
        assert!(unrestricted.add_root(&f.outside).is_ok());
    }

    #[test]
    fn ensure_extension_matches_node_extname() {
        for (input, expected) in [
            ("/r/trace", "/r/trace.json"),
            ("/r/trace.txt", "/r/trace.json"),
            ("/r/trace.json", "/r/trace.json"),
            ("/r/a.b/trace", "/r/a.b/trace.json"),
            ("/r/.hidden", "/r/.hidden.json"),
            ("/r/..foo", "/r/..json"),
            ("/r/a.", "/r/a.json"),
        ] {
            assert_eq!(ensure_extension(input, ".json"), expected, "input {input}");
        }
    }

    #[test]
    fn large_images_go_to_a_private_temporary_file() {
        use std::os::unix::fs::PermissionsExt as _;
        let path = save_temporary_file(&[7; 16], "screenshot.png").expect("saved");
        assert_eq!(
            path.file_name().and_then(|n| n.to_str()),
            Some("screenshot.png")
        );
        let folder = path
            .parent()
            .and_then(|p| p.file_name())
            .and_then(|n| n.to_str());
        assert!(folder.is_some_and(|name| name.starts_with("chrome-devtools-mcp-")));
        let mode = std::fs::metadata(&path)
            .expect("metadata")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        if let Some(parent) = path.parent() {
            std::fs::remove_dir_all(parent).expect("cleaned up");
        }
    }
}
