//! The WebSocket under the thin CDP connection (RFC 6455, client side, no extensions),
//! written for replies of megabytes: a message is read straight into one buffer of its
//! announced size, and a large one into fresh anonymous memory advised for huge pages.
//! A general-purpose WebSocket reader zero-fills its buffer before each read and grows it
//! page by page; for a 3.7 MB `Accessibility.getFullAXTree` reply that was a few
//! milliseconds of page faults and memset, paid again at every snapshot because the
//! buffer is given back afterwards (as it should be: a snapshot must not pin memory).

use async_tungstenite::tungstenite::handshake::derive_accept_key;
use base64::Engine;
use memmap2::{Advice, MmapMut};
use std::io;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

/// Messages at least this large are read into their own huge-page-advised mapping.
const MAPPED_FROM: usize = 1 << 20;
/// The kernel's transparent huge page; mappings are rounded up to it.
const HUGE_PAGE: usize = 2 << 20;
/// No reply of the browser comes near this; a header announcing more is refused before
/// anything is allocated.
const MAX_MESSAGE: u64 = 512 << 20;
/// Bound on the handshake response's header lines.
const MAX_HANDSHAKE: usize = 16 << 10;

/// One whole message's bytes.
pub enum Payload {
    Heap(Vec<u8>),
    Mapped { map: MmapMut, len: usize },
}

impl Payload {
    pub fn bytes(&self) -> &[u8] {
        match self {
            Payload::Heap(bytes) => bytes,
            Payload::Mapped { map, len } => &map[..*len],
        }
    }

    /// A zeroed buffer of `len` bytes to read a message into.
    pub(super) fn zeroed(len: usize) -> io::Result<Payload> {
        if len < MAPPED_FROM {
            return Ok(Payload::Heap(vec![0; len]));
        }
        let map = MmapMut::map_anon(len.div_ceil(HUGE_PAGE) * HUGE_PAGE)?;
        // Only advice: where huge pages are off, the mapping works with small ones.
        let _advice = map.advise(Advice::HugePage);
        Ok(Payload::Mapped { map, len })
    }

    pub(super) fn bytes_mut(&mut self) -> &mut [u8] {
        match self {
            Payload::Heap(bytes) => bytes,
            Payload::Mapped { map, len } => &mut map[..*len],
        }
    }
}

/// Opens `ws://host:port/path` and completes the client handshake.
pub async fn connect(url: &str) -> io::Result<(Reader, Writer)> {
    let invalid = |why: &str| io::Error::new(io::ErrorKind::InvalidInput, why.to_string());
    let parsed = url::Url::parse(url).map_err(|error| invalid(&error.to_string()))?;
    if parsed.scheme() != "ws" {
        return Err(invalid("only ws:// DevTools addresses are supported"));
    }
    // Connect to the parsed host (an IPv6 address without its brackets), and name it in
    // `Host:` as the URL writes it.
    let host = parsed.host_str().ok_or_else(|| invalid("no host"))?;
    let port = parsed.port_or_known_default().unwrap_or(80);
    let stream = match parsed.host() {
        Some(url::Host::Ipv4(address)) => TcpStream::connect((address, port)).await?,
        Some(url::Host::Ipv6(address)) => TcpStream::connect((address, port)).await?,
        Some(url::Host::Domain(name)) => TcpStream::connect((name, port)).await?,
        None => return Err(invalid("no host")),
    };
    stream.set_nodelay(true)?;
    let (read, mut write) = stream.into_split();
    let mut key = [0u8; 16];
    getrandom::fill(&mut key).map_err(|error| io::Error::other(error.to_string()))?;
    let key = base64::engine::general_purpose::STANDARD.encode(key);
    let path = match parsed.query() {
        Some(query) => format!("{}?{query}", parsed.path()),
        None => parsed.path().to_string(),
    };
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n\
         Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    );
    write.write_all(request.as_bytes()).await?;
    let mut reader = BufReader::new(read);
    let (mut status, mut accept, mut read_bytes) = (None, None, 0);
    loop {
        let mut line = String::new();
        let n = reader.read_line(&mut line).await?;
        read_bytes += n;
        if n == 0 || read_bytes > MAX_HANDSHAKE {
            return Err(io::Error::other("the DevTools handshake did not complete"));
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if status.is_none() {
            status = Some(line.to_string());
        } else if let Some((name, value)) = line.split_once(':')
            && name.trim().eq_ignore_ascii_case("sec-websocket-accept")
        {
            accept = Some(value.trim().to_string());
        }
    }
    let switched = status
        .as_deref()
        .and_then(|s| s.split_whitespace().nth(1))
        .is_some_and(|code| code == "101");
    if !switched || accept.as_deref() != Some(derive_accept_key(key.as_bytes()).as_str()) {
        return Err(io::Error::other(format!(
            "the DevTools endpoint refused the WebSocket handshake ({})",
            status.unwrap_or_default()
        )));
    }
    Ok((Reader { stream: reader }, Writer { stream: write }))
}

/// The receiving half: whole text messages, in order.
pub struct Reader {
    stream: BufReader<OwnedReadHalf>,
}

impl Reader {
    /// The next text message; `None` once the browser closed the connection. Control
    /// frames are consumed (the browser sends none that need an answer).
    pub async fn next_text(&mut self) -> io::Result<Option<Payload>> {
        let mut partial: Option<Vec<u8>> = None;
        loop {
            let mut head = [0u8; 2];
            if let Err(error) = self.stream.read_exact(&mut head).await {
                return match error.kind() {
                    io::ErrorKind::UnexpectedEof => Ok(None),
                    _ => Err(error),
                };
            }
            let (fin, opcode) = (head[0] & 0x80 != 0, head[0] & 0x0f);
            if head[0] & 0x70 != 0 {
                return Err(io::Error::other(
                    "a frame uses an extension we did not ask for",
                ));
            }
            let len = match head[1] & 0x7f {
                126 => u64::from(self.stream.read_u16().await?),
                127 => self.stream.read_u64().await?,
                short => u64::from(short),
            };
            let mask = match head[1] & 0x80 != 0 {
                true => Some(self.stream.read_u32().await?.to_be_bytes()),
                false => None,
            };
            let already = partial.as_ref().map_or(0, Vec::len) as u64;
            if len.saturating_add(already) > MAX_MESSAGE {
                return Err(io::Error::other(format!(
                    "the browser sent a message of more than {MAX_MESSAGE} bytes"
                )));
            }
            let mut payload = Payload::zeroed(len as usize)?;
            self.stream.read_exact(payload.bytes_mut()).await?;
            if let Some(mask) = mask {
                for (i, byte) in payload.bytes_mut().iter_mut().enumerate() {
                    *byte ^= mask[i % 4];
                }
            }
            match opcode {
                // Close.
                0x8 => return Ok(None),
                // Ping, pong: nothing to do for a connection that only asks.
                0x9 | 0xA => continue,
                // Text or binary starting a message, or its continuation.
                0x1 | 0x2 if partial.is_none() && fin => return Ok(Some(payload)),
                0x1 | 0x2 if partial.is_none() => partial = Some(payload.bytes().to_vec()),
                0x0 if partial.is_some() => {
                    let mut whole = partial.take().unwrap_or_default();
                    whole.extend_from_slice(payload.bytes());
                    if fin {
                        return Ok(Some(Payload::Heap(whole)));
                    }
                    partial = Some(whole);
                }
                _ => return Err(io::Error::other("the browser sent an unexpected frame")),
            }
        }
    }
}

/// The sending half: text messages, masked as a client must.
pub struct Writer {
    stream: OwnedWriteHalf,
}

impl Writer {
    pub async fn send_text(&mut self, text: &str) -> io::Result<()> {
        let payload = text.as_bytes();
        let mut frame = Vec::with_capacity(payload.len() + 14);
        frame.push(0x81);
        match payload.len() {
            len @ 0..=125 => frame.push(0x80 | len as u8),
            len @ 126..=0xffff => {
                frame.push(0x80 | 126);
                frame.extend_from_slice(&(len as u16).to_be_bytes());
            }
            len => {
                frame.push(0x80 | 127);
                frame.extend_from_slice(&(len as u64).to_be_bytes());
            }
        }
        let mut mask = [0u8; 4];
        getrandom::fill(&mut mask).map_err(|error| io::Error::other(error.to_string()))?;
        frame.extend_from_slice(&mask);
        frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        self.stream.write_all(&frame).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::TcpListener;

    /// A one-connection WebSocket server that answers the handshake and then writes
    /// `frames` as they are.
    async fn server(frames: Vec<Vec<u8>>) -> (String, tokio::task::JoinHandle<Vec<u8>>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!(
            "ws://{}/devtools/browser/x",
            listener.local_addr().expect("addr")
        );
        let task = tokio::spawn(async move {
            let (stream, _) = listener.accept().await.expect("accept");
            let mut stream = BufReader::new(stream);
            let mut key = String::new();
            loop {
                let mut line = String::new();
                stream.read_line(&mut line).await.expect("request");
                if line.trim().is_empty() {
                    break;
                }
                if let Some(value) = line.strip_prefix("Sec-WebSocket-Key:") {
                    key = value.trim().to_string();
                }
            }
            let accept = derive_accept_key(key.as_bytes());
            let answer = format!(
                "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\
                 Connection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n\r\n"
            );
            let mut out = answer.into_bytes();
            for frame in frames {
                out.extend(frame);
            }
            stream.get_mut().write_all(&out).await.expect("write");
            let mut sent = Vec::new();
            let _ = stream.read_to_end(&mut sent).await;
            sent
        });
        (url, task)
    }

    fn frame(first: u8, payload: &[u8]) -> Vec<u8> {
        let mut out = vec![first];
        match payload.len() {
            len @ 0..=125 => out.push(len as u8),
            len @ 126..=0xffff => {
                out.push(126);
                out.extend((len as u16).to_be_bytes());
            }
            len => {
                out.push(127);
                out.extend((len as u64).to_be_bytes());
            }
        }
        out.extend_from_slice(payload);
        out
    }

    #[tokio::test]
    async fn messages_of_every_length_encoding_arrive_whole() {
        let big = "x".repeat(3 << 20);
        let medium = "y".repeat(70_000);
        let frames = vec![
            frame(0x81, b"{\"id\":1}"),
            frame(0x89, b"ping"),
            frame(0x81, medium.as_bytes()),
            frame(0x01, b"{\"id\":"),
            frame(0x80, b"2}"),
            frame(0x81, big.as_bytes()),
            frame(0x88, b""),
        ];
        let (url, server) = server(frames).await;
        let (mut reader, mut writer) = connect(&url).await.expect("connect");
        writer
            .send_text("{\"id\":1,\"method\":\"M\"}")
            .await
            .expect("send");
        let mut got = Vec::new();
        while let Some(payload) = reader.next_text().await.expect("read") {
            got.push(payload.bytes().to_vec());
        }
        assert_eq!(got.len(), 4);
        assert_eq!(got[0], b"{\"id\":1}");
        assert_eq!(got[1], medium.as_bytes());
        assert_eq!(got[2], b"{\"id\":2}");
        assert_eq!(got[3], big.as_bytes());
        drop(writer);
        let sent = server.await.expect("server");
        // One masked text frame: FIN|text, MASK|length, the key, the masked payload.
        let text = b"{\"id\":1,\"method\":\"M\"}";
        assert_eq!(sent[0], 0x81);
        assert_eq!(usize::from(sent[1]), 0x80 | text.len());
        let mask = &sent[2..6];
        let unmasked: Vec<u8> = sent[6..]
            .iter()
            .enumerate()
            .map(|(i, b)| b ^ mask[i % 4])
            .collect();
        assert_eq!(unmasked, text);
    }

    #[tokio::test]
    async fn a_header_announcing_a_giant_message_is_refused_before_allocating() {
        let mut giant = vec![0x81, 127];
        giant.extend(u64::MAX.to_be_bytes());
        let (url, _server) = server(vec![giant]).await;
        let (mut reader, _writer) = connect(&url).await.expect("connect");
        let error = reader.next_text().await.err().expect("refused");
        assert!(error.to_string().contains("more than"), "{error}");
    }

    /// A server that answers the handshake with `answer` whatever the request.
    async fn answering(answer: &'static str) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("ws://{}/x", listener.local_addr().expect("addr"));
        tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.expect("accept");
            let mut buf = [0u8; 1024];
            let _ = stream.read(&mut buf).await;
            let _ = stream.write_all(answer.as_bytes()).await;
        });
        url
    }

    #[tokio::test]
    async fn a_switch_without_the_right_accept_key_is_refused() {
        let url = answering(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Accept: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
        )
        .await;
        let error = connect(&url).await.err().expect("refused");
        assert!(
            error
                .to_string()
                .contains("refused the WebSocket handshake"),
            "{error}"
        );
    }

    #[tokio::test]
    async fn an_ipv6_address_is_reached_without_its_brackets() {
        let Ok(listener) = TcpListener::bind("[::1]:0").await else {
            return; // No IPv6 loopback on this machine.
        };
        let url = format!("ws://{}/x", listener.local_addr().expect("addr"));
        assert!(url.contains("[::1]"), "{url}");
        tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.expect("accept");
            let mut buf = [0u8; 1024];
            let _ = stream.read(&mut buf).await;
            let _ = stream.write_all(b"HTTP/1.1 404 Not Found\r\n\r\n").await;
        });
        // Reaching the server at all is the point: it answers 404.
        let error = connect(&url).await.err().expect("refused");
        assert!(error.to_string().contains("404"), "{error}");
    }

    #[tokio::test]
    async fn a_server_that_does_not_switch_protocols_is_refused() {
        let url = answering("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n").await;
        let error = connect(&url).await.err().expect("refused");
        assert!(error.to_string().contains("404"), "{error}");
    }
}
