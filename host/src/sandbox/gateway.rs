//! The file gateway: every file of a root the host reads or writes, and nothing else, through
//! one root lookup and one open. Opens never block (`O_NONBLOCK`: a FIFO without a peer fails
//! at once), take regular files only (checked before and after opening, so a swap in between is
//! refused too), never follow a symlink out of the root (cap-std), and reads are bounded. Writes
//! go to a fresh temporary name beside the target and are renamed over it, so a write cut short
//! (a full disk, a killed server) never leaves a partial file at the target.

use super::kinds::FileKind;
use super::paths::{ensure_extension, file_url_to_path, url_scheme};
use super::{Root, Sandbox, SandboxError, protected_overlap};
use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::OpenOptions;
use std::io::{self, Read, Write};
use std::path::{Component, Path, PathBuf};

impl Sandbox {
    /// The root holding an already-resolved path (the deepest, for the shortest walk) and the
    /// path relative to it; only plain components, never the root itself, never inside a
    /// protected code folder.
    fn locate<'a>(&'a self, resolved: &'a Path) -> Result<(&'a Root, &'a Path), SandboxError> {
        let denied = || SandboxError::AccessDenied {
            path: resolved.display().to_string(),
            canonical: resolved.display().to_string(),
        };
        if protected_overlap(resolved).is_some_and(|folder| resolved.starts_with(folder)) {
            return Err(denied());
        }
        let (root, rel) = self
            .roots
            .iter()
            .filter_map(|r| resolved.strip_prefix(&r.path).ok().map(|rel| (r, rel)))
            .max_by_key(|(r, _)| r.path.components().count())
            .ok_or_else(denied)?;
        if !rel.components().all(|c| matches!(c, Component::Normal(_))) {
            return Err(denied());
        }
        Ok((root, rel))
    }

    /// Resolves `path` (its extension forced to the kind's) and writes `data` there; returns
    /// the final path. For every file a tool asks the host to write.
    pub fn save(&self, path: &str, kind: FileKind, data: &[u8]) -> Result<String, SandboxError> {
        let file = self.resolve(&ensure_extension(path, kind.extension()))?;
        self.write(Path::new(&file), data)?;
        Ok(file)
    }

    /// Writes bytes to an already-resolved path, through the root `Dir` that contains it.
    ///
    /// Missing parent directories are created inside the root; the bytes go to a new file
    /// (mode 0600, `O_EXCL`, never following a symlink) beside the target, which is then
    /// renamed over it: a symlink, FIFO or device at the target is replaced, never written
    /// through, and a target that is a directory is refused.
    pub fn write(&self, resolved: &Path, bytes: &[u8]) -> Result<(), SandboxError> {
        let io_err = |source| SandboxError::Io {
            path: resolved.to_path_buf(),
            source,
        };
        let (root, rel) = self.locate(resolved)?;
        if rel.file_name().is_none() {
            return Err(io_err(io::Error::from(io::ErrorKind::IsADirectory)));
        }
        let parent = rel.parent().unwrap_or(Path::new(""));
        if !parent.as_os_str().is_empty() {
            root.dir.create_dir_all(parent).map_err(io_err)?;
        }
        // What stands at the target is replaced only when it is a regular file: a directory,
        // a symlink, a FIFO, a socket or a device there is refused (and one swapped in after
        // this check is replaced by the rename, never written through).
        if let Ok(existing) = root.dir.symlink_metadata(rel) {
            if existing.is_dir() {
                return Err(io_err(io::Error::from(io::ErrorKind::IsADirectory)));
            }
            if !existing.is_file() {
                return Err(io_err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "not a regular file (symlinks, FIFOs, sockets and devices are never written)",
                )));
            }
        }
        let partial = parent.join(partial_name());
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        options.follow(FollowSymlinks::No);
        cap_std::fs::OpenOptionsExt::mode(&mut options, 0o600);
        cap_std::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
        let mut file = root.dir.open_with(&partial, &options).map_err(io_err)?;
        let written = file
            .write_all(bytes)
            .and_then(|()| file.sync_data())
            .and_then(|()| root.dir.rename(&partial, &root.dir, rel));
        if let Err(error) = written {
            let _gone = root.dir.remove_file(&partial);
            return Err(io_err(error));
        }
        Ok(())
    }

    /// Opens a file of a root for reading: `value` is resolved (a path or a `file:` URL), then
    /// opened without blocking, as a regular file only. Returns the file and its length.
    pub fn open_regular(&self, value: &str) -> Result<(std::fs::File, u64), SandboxError> {
        let resolved = self.resolve_local(value)?;
        let read_err = |source| SandboxError::Read {
            path: resolved.clone(),
            source,
        };
        let not_regular = || SandboxError::NotRegular {
            path: resolved.clone(),
        };
        let (root, rel) = self.locate(&resolved)?;
        if rel.as_os_str().is_empty() {
            return Err(not_regular());
        }
        if let Ok(found) = root.dir.metadata(rel)
            && !found.is_file()
        {
            return Err(not_regular());
        }
        let mut options = OpenOptions::new();
        options.read(true);
        cap_std::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
        let file = root.dir.open_with(rel, &options).map_err(read_err)?;
        let metadata = file.metadata().map_err(read_err)?;
        if !metadata.is_file() {
            return Err(not_regular());
        }
        Ok((file.into_std(), metadata.len()))
    }

    /// Reads a whole file of a root, at most `limit` bytes (a larger file is refused).
    pub fn read(&self, value: &str, limit: u64) -> Result<Vec<u8>, SandboxError> {
        let (file, length) = self.open_regular(value)?;
        let path = || PathBuf::from(value);
        if length > limit {
            return Err(SandboxError::TooLarge {
                path: path(),
                limit,
            });
        }
        let mut bytes = Vec::with_capacity(usize::try_from(length).unwrap_or(0));
        file.take(limit + 1)
            .read_to_end(&mut bytes)
            .map_err(|source| SandboxError::Read {
                path: path(),
                source,
            })?;
        if bytes.len() as u64 > limit {
            return Err(SandboxError::TooLarge {
                path: path(),
                limit,
            });
        }
        Ok(bytes)
    }

    /// Resolves a path that something else will read (the browser, for a file input): it
    /// must be an existing regular file of a root.
    pub fn resolve_regular_file(&self, value: &str) -> Result<String, SandboxError> {
        let resolved = self.resolve(value)?;
        self.open_regular(&resolved)?;
        Ok(resolved)
    }

    /// Resolves a folder that something else will load (an unpacked extension).
    pub fn resolve_folder(&self, value: &str) -> Result<String, SandboxError> {
        let resolved = self.resolve(value)?;
        let local = self.resolve_local(&resolved)?;
        let (root, rel) = self.locate(&local)?;
        let is_dir = match rel.as_os_str().is_empty() {
            true => true,
            false => root.dir.metadata(rel).is_ok_and(|found| found.is_dir()),
        };
        if !is_dir {
            return Err(SandboxError::NotAFolder { path: local });
        }
        Ok(resolved)
    }

    /// The local path of a value (`file:` URLs decoded), checked against the roots.
    fn resolve_local(&self, value: &str) -> Result<PathBuf, SandboxError> {
        let resolved = self.resolve(value)?;
        let local = match url_scheme(&resolved)
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("file") => {
                file_url_to_path(&resolved).ok_or_else(|| SandboxError::CannotResolve {
                    path: value.to_string(),
                })?
            }
            Some(_) => {
                return Err(SandboxError::Read {
                    path: PathBuf::from(value),
                    source: io::Error::new(
                        io::ErrorKind::InvalidInput,
                        "only local files can be read",
                    ),
                });
            }
            None => resolved,
        };
        Ok(PathBuf::from(local))
    }
}

/// A hidden name beside the target for the bytes being written, unique per write (and short,
/// whatever the target's name).
fn partial_name() -> String {
    let mut random = [0u8; 8];
    let _filled = getrandom::fill(&mut random);
    format!("{PARTIAL_PREFIX}{}{PARTIAL_SUFFIX}", hex::encode(random))
}

const PARTIAL_PREFIX: &str = ".devtools-mcp-";
const PARTIAL_SUFFIX: &str = ".partial";
/// A temporary file this old was left by a server that died while writing it (a write takes
/// well under a second); a younger one may be another instance's write under way.
const STALE_PARTIAL: std::time::Duration = std::time::Duration::from_secs(60);

/// Removes, from the top of a root, the temporary files of writes cut short by a killed
/// server, so that the next start is clean. Only regular files named as [`partial_name`]
/// makes them and older than [`STALE_PARTIAL`] are touched.
pub(super) fn sweep_stale_partials(dir: &cap_std::fs::Dir) -> usize {
    let Ok(entries) = dir.entries() else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(hex) = name
            .strip_prefix(PARTIAL_PREFIX)
            .and_then(|rest| rest.strip_suffix(PARTIAL_SUFFIX))
        else {
            continue;
        };
        if hex.len() != 16 || !hex.bytes().all(|byte| byte.is_ascii_hexdigit()) {
            continue;
        }
        let stale = dir.symlink_metadata(name).is_ok_and(|metadata| {
            metadata.is_file()
                && metadata
                    .modified()
                    .ok()
                    .and_then(|modified| modified.into_std().elapsed().ok())
                    .is_some_and(|age| age >= STALE_PARTIAL)
        });
        if stale && dir.remove_file(name).is_ok() {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod sweep_tests {
    use super::*;

    fn aged(path: &Path, age: std::time::Duration) {
        let file = std::fs::File::options()
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .expect("create");
        let when = std::time::SystemTime::now() - age;
        file.set_modified(when).expect("set mtime");
    }

    #[test]
    fn only_stale_partials_of_ours_are_swept() {
        let root = tempfile::tempdir().expect("temp dir");
        let old = std::time::Duration::from_secs(600);
        let stale = root.path().join(".devtools-mcp-0123456789abcdef.partial");
        let fresh = root.path().join(".devtools-mcp-fedcba9876543210.partial");
        let not_ours = root.path().join(".devtools-mcp-notours.partial");
        let user_file = root.path().join("report.partial");
        aged(&stale, old);
        aged(&fresh, std::time::Duration::ZERO);
        aged(&not_ours, old);
        aged(&user_file, old);
        let dir = cap_std::fs::Dir::open_ambient_dir(root.path(), cap_std::ambient_authority())
            .expect("open");
        assert_eq!(sweep_stale_partials(&dir), 1);
        assert!(!stale.exists());
        assert!(fresh.exists() && not_ours.exists() && user_file.exists());
    }
}
