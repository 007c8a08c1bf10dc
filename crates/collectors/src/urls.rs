//! URL handling as DevTools' `ParsedURL` and `UISourceCode` do it, to name stack frames.

/// DevTools' default ignore list, `/node_modules/|^node:`.
pub(super) fn ignore_listed(url: &str) -> bool {
    url.contains("/node_modules/") || url.starts_with("node:")
}

/// The parts of a URL that DevTools' `ParsedURL` recognises.
pub(super) struct Parsed<'a> {
    origin: String,
    path: &'a str,
    query: &'a str,
}

pub(super) fn parse_url(url: &str) -> Option<Parsed<'_>> {
    let (scheme, rest) = url.split_once("://")?;
    let mut chars = scheme.chars();
    let valid_scheme = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c));
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    if !valid_scheme || authority.chars().any(char::is_whitespace) {
        return None;
    }
    let tail = &rest[authority_end..];
    let path_end = tail.find(['?', '#']).unwrap_or(tail.len());
    let path = if path_end == 0 {
        "/"
    } else {
        &tail[..path_end]
    };
    let after = &tail[path_end..];
    let query = match after.strip_prefix('?') {
        Some(query) => &query[..query.find('#').unwrap_or(query.len())],
        None => "",
    };
    let host = authority.rsplit('@').next().unwrap_or(authority);
    Some(Parsed {
        origin: format!("{}://{host}", scheme.to_ascii_lowercase()),
        path,
        query,
    })
}

/// `UISourceCode.displayName()`: the last path component (with its query), or the URL.
pub(super) fn source_name(url: &str) -> String {
    let name = match parse_url(url) {
        Some(parsed) => {
            let path = parsed.path;
            let without_last = path.char_indices().last().map_or(0, |(index, _)| index);
            let last = match path[..without_last].rfind('/') {
                Some(slash) => &path[slash + 1..],
                None if path.starts_with('/') => &path[1..],
                None => path,
            };
            if parsed.query.is_empty() {
                decode_uri_component(last).unwrap_or_else(|| last.to_string())
            } else {
                format!("{last}?{}", parsed.query)
            }
        }
        None => url.to_string(),
    };
    if name.is_empty() {
        return "(index)".to_string();
    }
    if name.chars().count() <= 100 {
        return name;
    }
    format!("{}…", name.chars().take(99).collect::<String>())
}

/// `ParsedURL.extractName`.
pub(super) fn extract_name(url: &str) -> &str {
    let url = url.strip_suffix('/').unwrap_or(url);
    let last = url.rfind('/').map_or(url, |slash| &url[slash + 1..]);
    last.find('?').map_or(last, |question| &last[..question])
}

fn decode_uri_component(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' {
            let hex = text.get(index + 1..index + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            index += 3;
        } else {
            out.push(bytes[index]);
            index += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// `ParsedURL.completeURL` for a `sourceURL` relative to the page.
pub(super) fn complete_url(base: &str, href: &str) -> Option<String> {
    if ["data:", "blob:", "javascript:", "mailto:"]
        .iter()
        .any(|scheme| href.starts_with(scheme))
    {
        return Some(href.to_string());
    }
    let href = href.trim();
    if parse_url(href).is_some() {
        return Some(href.to_string());
    }
    let base = parse_url(base)?;
    if let Some(rest) = href.strip_prefix("//") {
        let scheme = base.origin.split("://").next().unwrap_or_default();
        return Some(format!("{scheme}://{rest}"));
    }
    let query = if base.query.is_empty() {
        String::new()
    } else {
        format!("?{}", base.query)
    };
    if href.is_empty() {
        return Some(format!("{}{}{query}", base.origin, base.path));
    }
    if href.starts_with('#') {
        return Some(format!("{}{}{query}{href}", base.origin, base.path));
    }
    if href.starts_with('?') {
        return Some(format!("{}{}{href}", base.origin, base.path));
    }
    let split = href.find(['#', '?']).unwrap_or(href.len());
    let (path, suffix) = href.split_at(split);
    let joined = if path.starts_with('/') {
        path.to_string()
    } else {
        let folder = &base.path[..base.path.rfind('/').unwrap_or(0)];
        format!("{folder}/{path}")
    };
    Some(format!(
        "{}{}{suffix}",
        base.origin,
        normalize_path(&joined)
    ))
}

/// Resolves `.` and `..` segments.
fn normalize_path(path: &str) -> String {
    let mut segments: Vec<&str> = Vec::new();
    let parts: Vec<&str> = path.split('/').collect();
    for (index, segment) in parts.iter().enumerate() {
        match *segment {
            "." if index + 1 == parts.len() => segments.push(""),
            "." => {}
            ".." => {
                if segments.len() > 1 {
                    segments.pop();
                }
                if index + 1 == parts.len() {
                    segments.push("");
                }
            }
            other => segments.push(other),
        }
    }
    segments.join("/")
}

#[cfg(test)]
mod tests {
    use super::{complete_url, source_name};

    #[test]
    fn urls_resolve_and_names_match_devtools() {
        let base = "http://h:1/a/b.html?q=1";
        assert_eq!(
            complete_url(base, "./x/../y.js").as_deref(),
            Some("http://h:1/a/y.js")
        );
        assert_eq!(
            complete_url(base, "/z.js").as_deref(),
            Some("http://h:1/z.js")
        );
        assert_eq!(source_name("http://h/dir/"), "dir/");
        assert_eq!(source_name("http://h/"), "(index)");
        assert_eq!(source_name("http://h/a.js?v=2"), "a.js?v=2");
        assert_eq!(source_name("http://h/a%20b.js"), "a b.js");
        assert_eq!(
            source_name(&format!("http://h/{}", "n".repeat(120)))
                .chars()
                .count(),
            100
        );
    }
}
