//! `--wsHeaders`: extra headers on the WebSocket handshake of `--wsEndpoint` (e.g. a bearer
//! token for a browser behind an authenticating proxy). The CDP client cannot add headers, so
//! it connects to a one-shot loopback relay that adds them to the handshake and then copies
//! bytes both ways. The relay accepts a single connection and stops listening, so no other
//! local process can borrow the headers.

use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The largest handshake request accepted from the CDP client.
const MAX_HEAD: usize = 16 * 1024;
/// How long the relay waits for the CDP client to connect.
const ACCEPT_TIMEOUT: Duration = Duration::from_secs(30);

/// Starts a relay to `endpoint` that adds `headers`; returns the loopback URL to connect to.
pub async fn relay(endpoint: &str, headers: &[(String, String)]) -> Result<String, String> {
    let parsed =
        url::Url::parse(endpoint).map_err(|error| format!("invalid --wsEndpoint: {error}"))?;
    if parsed.scheme() != "ws" {
        return Err(format!(
            "--wsHeaders needs a ws:// endpoint (got {}://); for wss:// put a TLS-terminating proxy on a ws:// address in front of the browser.",
            parsed.scheme()
        ));
    }
    for (name, value) in headers {
        let bad = |text: &str| text.chars().any(|c| c == '\r' || c == '\n');
        if name.is_empty() || bad(name) || bad(value) || name.contains(':') {
            return Err(format!("invalid --wsHeaders header {name:?}"));
        }
    }
    let host = parsed.host_str().unwrap_or_default().to_string();
    let port = parsed.port_or_known_default().unwrap_or(80);
    let authority = match parsed.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.clone(),
    };
    let listener = TcpListener::bind(("127.0.0.1", 0))
        .await
        .map_err(|error| format!("cannot start the --wsHeaders relay: {error}"))?;
    let local = listener
        .local_addr()
        .map_err(|error| format!("cannot start the --wsHeaders relay: {error}"))?;
    let extra: String = headers
        .iter()
        .map(|(name, value)| format!("{name}: {value}\r\n"))
        .collect();
    let upstream = (host.trim_matches(['[', ']']).to_string(), port);
    tokio::spawn(async move {
        let Ok(Ok((client, _))) = tokio::time::timeout(ACCEPT_TIMEOUT, listener.accept()).await
        else {
            return;
        };
        drop(listener);
        if let Err(error) = forward(client, upstream, &authority, &extra).await {
            tracing::warn!(%error, "--wsHeaders relay closed");
        }
    });
    let mut url = parsed.clone();
    url.set_host(Some("127.0.0.1"))
        .map_err(|error| error.to_string())?;
    url.set_port(Some(local.port()))
        .map_err(|()| "cannot set the relay port".to_string())?;
    Ok(url.to_string())
}

/// Reads the client's handshake, sends it upstream with the real `Host` and the extra headers,
/// then relays both directions until either side closes.
async fn forward(
    mut client: TcpStream,
    upstream: (String, u16),
    authority: &str,
    extra: &str,
) -> Result<(), String> {
    let mut head = Vec::new();
    let mut buffer = [0u8; 2048];
    let end = loop {
        let read = client
            .read(&mut buffer)
            .await
            .map_err(|error| error.to_string())?;
        if read == 0 {
            return Err("the CDP client closed before its handshake".into());
        }
        head.extend_from_slice(&buffer[..read]);
        if let Some(index) = head.windows(4).position(|window| window == b"\r\n\r\n") {
            break index;
        }
        if head.len() > MAX_HEAD {
            return Err("handshake too large".into());
        }
    };
    let text = String::from_utf8_lossy(&head[..end]).into_owned();
    let mut request = String::new();
    for (index, line) in text.split("\r\n").enumerate() {
        let is_host = line
            .split_once(':')
            .is_some_and(|(name, _)| name.trim().eq_ignore_ascii_case("host"));
        if index > 0 && is_host {
            request.push_str(&format!("Host: {authority}\r\n"));
        } else {
            request.push_str(line);
            request.push_str("\r\n");
        }
    }
    request.push_str(extra);
    request.push_str("\r\n");
    let mut server = TcpStream::connect((upstream.0.as_str(), upstream.1))
        .await
        .map_err(|error| format!("cannot reach {}:{}: {error}", upstream.0, upstream.1))?;
    server
        .write_all(request.as_bytes())
        .await
        .map_err(|error| error.to_string())?;
    server
        .write_all(&head[end + 4..])
        .await
        .map_err(|error| error.to_string())?;
    tokio::io::copy_bidirectional(&mut client, &mut server)
        .await
        .map(|_| ())
        .map_err(|error| error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_handshake_carries_the_headers_and_the_real_host() {
        let upstream = TcpListener::bind(("127.0.0.1", 0)).await.expect("bind");
        let port = upstream.local_addr().expect("addr").port();
        let headers = vec![("Authorization".to_string(), "Bearer t0ken".to_string())];
        let url = relay(
            &format!("ws://127.0.0.1:{port}/devtools/browser/x"),
            &headers,
        )
        .await
        .expect("relay");
        assert!(url.starts_with("ws://127.0.0.1:") && url.ends_with("/devtools/browser/x"));
        let relay_port = url::Url::parse(&url)
            .ok()
            .and_then(|url| url.port())
            .expect("port");
        let mut client = TcpStream::connect(("127.0.0.1", relay_port))
            .await
            .expect("connect");
        client
            .write_all(b"GET /devtools/browser/x HTTP/1.1\r\nHost: 127.0.0.1:1\r\nUpgrade: websocket\r\n\r\nrest")
            .await
            .expect("write");
        let (mut server, _) = upstream.accept().await.expect("accept");
        let mut received = vec![0u8; 512];
        let mut total = 0;
        while !String::from_utf8_lossy(&received[..total]).ends_with("rest") {
            total += server.read(&mut received[total..]).await.expect("read");
        }
        let text = String::from_utf8_lossy(&received[..total]);
        assert!(
            text.contains(&format!("Host: 127.0.0.1:{port}\r\n")),
            "{text}"
        );
        assert!(
            text.contains("Authorization: Bearer t0ken\r\n\r\nrest"),
            "{text}"
        );
        // The relay took its one connection: nobody else gets the headers.
        assert!(TcpStream::connect(("127.0.0.1", relay_port)).await.is_err());
    }

    #[tokio::test]
    async fn secure_endpoints_and_header_injection_are_refused() {
        let headers = vec![("X".to_string(), "a\r\nEvil: 1".to_string())];
        assert!(relay("ws://127.0.0.1:9/x", &headers).await.is_err());
        assert!(relay("wss://example.com/x", &[]).await.is_err());
    }
}
