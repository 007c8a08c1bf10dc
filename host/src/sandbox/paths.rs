//! Path and `file:` URL conversions, as Node and the reference do them.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

/// Replaces the extension of `path` (as Node's `path.extname` sees it) with `extension`
/// (`".json"`), like the reference's `ensureExtension`. The new final component was not what
/// was validated: hand the result to [`Sandbox::write`] (which never follows a final symlink)
/// or resolve it again.
pub fn ensure_extension(path: &str, extension: &str) -> String {
    let name_start = path.rfind('/').map_or(0, |i| i + 1);
    let name = &path[name_start..];
    let current = match name.rfind('.') {
        Some(i) if i > 0 && name != ".." => &name[i..],
        _ => "",
    };
    format!("{}{extension}", &path[..path.len() - current.len()])
}

/// Canonicalizes an absolute path whose tail may not exist yet: existing components are resolved
/// (symlinks followed) one at a time, missing ones are appended. A `..` pops a missing component
/// or goes to the physical parent of the canonical prefix, so it can never hide an escape.
/// A dangling symlink is an error: where it points is unknown, and a later writer might follow it.
pub(super) fn canonicalize_lenient(path: &Path) -> io::Result<PathBuf> {
    let mut components = path.components().peekable();
    let mut anchor = PathBuf::new();
    while let Some(c @ (Component::Prefix(_) | Component::RootDir)) = components.peek().copied() {
        anchor.push(c);
        components.next();
    }
    let mut current = fs::canonicalize(&anchor)?;
    let mut missing: Vec<OsString> = Vec::new();
    for component in components {
        match component {
            Component::Normal(name) if missing.is_empty() => {
                let next = current.join(name);
                match fs::symlink_metadata(&next) {
                    Ok(_) => current = fs::canonicalize(&next)?,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => missing.push(name.to_owned()),
                    Err(e) => return Err(e),
                }
            }
            Component::Normal(name) => missing.push(name.to_owned()),
            Component::ParentDir => {
                if missing.pop().is_none() {
                    current.pop();
                }
            }
            Component::CurDir | Component::Prefix(_) | Component::RootDir => {}
        }
    }
    current.extend(missing);
    Ok(current)
}

/// The scheme of an absolute URL (`scheme:`), as a WHATWG parser would accept it.
pub(super) fn url_scheme(value: &str) -> Option<&str> {
    let value = value.trim_start_matches(|c: char| c <= ' ');
    let (scheme, _) = value.split_once(':')?;
    let mut chars = scheme.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    valid.then_some(scheme)
}

/// Node's `fileURLToPath` for POSIX: host empty or `localhost`, no encoded `/`, percent-decoded.
pub(super) fn file_url_to_path(url: &str) -> Option<String> {
    let url = url
        .trim_start_matches(|c: char| c <= ' ')
        .replace('\\', "/");
    let rest = url.get(5..)?; // after "file:", checked by the caller
    let rest = rest.split(['?', '#']).next().unwrap_or_default();
    let path = match rest.strip_prefix("//") {
        Some(authority_and_path) => {
            let (host, path) = match authority_and_path.find('/') {
                Some(i) => authority_and_path.split_at(i),
                None => (authority_and_path, "/"),
            };
            (host.is_empty() || host.eq_ignore_ascii_case("localhost")).then_some(path)?
        }
        None => rest,
    };
    if path.to_ascii_lowercase().contains("%2f") {
        return None;
    }
    let bytes = path.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len() + 1);
    if !path.starts_with('/') {
        decoded.push(b'/');
    }
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match hex
            .filter(|_| bytes[i] == b'%')
            .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            Some(byte) => {
                decoded.push(byte);
                i += 3;
            }
            None => {
                decoded.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8(decoded).ok()
}

/// Node's `pathToFileURL(path).href`: percent-encodes what the URL path set requires.
pub(super) fn path_to_file_url(path: &str) -> String {
    let mut url = String::from("file://");
    for &byte in path.as_bytes() {
        let keep = byte.is_ascii_graphic() && !b"\"#%<>?\\^`{}".contains(&byte);
        if keep {
            url.push(char::from(byte));
        } else {
            url.push_str(&format!("%{byte:02X}"));
        }
    }
    url
}

/// The canonical form of a path whose tail may not exist yet.
pub fn canonical(path: &Path) -> PathBuf {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    let mut missing = Vec::new();
    let mut existing = absolute.as_path();
    loop {
        if let Ok(found) = std::fs::canonicalize(existing) {
            let mut found = found;
            found.extend(missing.iter().rev());
            return found;
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(name.to_os_string());
                existing = parent;
            }
            _ => return absolute,
        }
    }
}
