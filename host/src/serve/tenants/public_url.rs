//! `public_url` of the tenants file: the address people's browsers reach this server at (its
//! origin, behind whatever proxy terminates TLS). Live views' URLs are built on it; without
//! it a tenant's live view can only be offered when the agent's client itself reached the
//! server by a loopback name.

/// The origin `text` names (`https://host[:port]`), or why it is not one. Plain `http` only
/// on a loopback host: a cookie that binds a live view must not cross a network in clear.
pub fn parse(text: &str) -> Result<String, String> {
    let url = url::Url::parse(text.trim()).map_err(|error| {
        format!(
            "public_url {text:?} is not a URL ({error}); write it as \"https://mcp.example.com\""
        )
    })?;
    let loopback = crate::net::address::is_loopback_host(url.host());
    match url.scheme() {
        "https" => {}
        "http" if loopback => {}
        _ => {
            return Err(format!(
                "public_url {text:?} must be https (plain http only on a loopback host); write it as \"https://{}\"",
                url.host_str().unwrap_or("mcp.example.com")
            ));
        }
    }
    if url.path() != "/" || url.query().is_some() || url.fragment().is_some() {
        return Err(format!(
            "public_url {text:?} must be an origin only (live views are served at /live/ of it); write it as {:?}",
            url.origin().ascii_serialization()
        ));
    }
    Ok(url.origin().ascii_serialization())
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn public_urls_are_origins_over_https_or_on_loopback() {
        assert_eq!(
            parse("https://MCP.example.com/").as_deref(),
            Ok("https://mcp.example.com")
        );
        assert_eq!(
            parse("http://127.0.0.1:8080").as_deref(),
            Ok("http://127.0.0.1:8080")
        );
        assert!(parse("http://mcp.example.com").is_err_and(|error| error.contains("https")));
        assert!(parse("https://mcp.example.com/mcp").is_err_and(|error| error.contains("origin")));
        assert!(parse("mcp.example.com").is_err());
    }
}
