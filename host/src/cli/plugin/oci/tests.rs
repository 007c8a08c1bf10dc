//! The reference syntax, and what a hostile registry on 127.0.0.1 (a tiny HTTP server of the
//! test's) tries against `fetch`: bodies too large (declared or streamed), redirects and token
//! realms to plain HTTP elsewhere, credentials sent off the registry's origin, a slow answer.

use super::*;
use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// How the test server answers one request.
enum Reply {
    /// The status line and headers (no Content-Length), then the body.
    Full(String, Vec<u8>),
    /// The status line and headers as given (a Content-Length that lies), then nothing.
    Head(String),
    /// A chunked body of this many bytes (no Content-Length), 64 KiB at a time.
    Chunked(usize),
    /// A Content-Length of 1000, then one byte every 100 ms.
    Dribble,
}

struct Server {
    port: u16,
    requests: Arc<Mutex<Vec<String>>>,
}

impl Server {
    /// Answers each request (its head, lower-cased) with `answer`'s reply, one per connection.
    fn start(answer: impl Fn(&str) -> Reply + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("address").port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (seen, answer) = (requests.clone(), Arc::new(answer));
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (seen, answer) = (seen.clone(), answer.clone());
                std::thread::spawn(move || serve(stream, &seen, &*answer));
            }
        });
        Server { port, requests }
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().expect("requests").clone()
    }

    fn plugin(&self) -> PluginRef {
        PluginRef::parse(&format!("oci://127.0.0.1:{}/tools/probe:1", self.port)).expect("ref")
    }
}

fn serve(mut stream: TcpStream, seen: &Mutex<Vec<String>>, answer: &dyn Fn(&str) -> Reply) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
    }
    let head = String::from_utf8_lossy(&head).to_lowercase();
    seen.lock().expect("requests").push(head.clone());
    let _ = match answer(&head) {
        Reply::Full(status, body) => stream
            .write_all(
                format!(
                    "{status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                )
                .as_bytes(),
            )
            .and_then(|()| stream.write_all(&body)),
        Reply::Head(head) => {
            let written = stream.write_all(format!("{head}\r\n\r\n").as_bytes());
            std::thread::sleep(Duration::from_secs(20));
            written
        }
        Reply::Chunked(total) => {
            let head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
            let chunk = [b'{'; 64 << 10];
            let mut written = stream.write_all(head.as_bytes());
            for _ in 0..total / chunk.len() {
                written = written
                    .and_then(|()| stream.write_all(format!("{:x}\r\n", chunk.len()).as_bytes()))
                    .and_then(|()| stream.write_all(&chunk))
                    .and_then(|()| stream.write_all(b"\r\n"));
            }
            written.and_then(|()| stream.write_all(b"0\r\n\r\n"))
        }
        Reply::Dribble => {
            let head = "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n";
            let mut written = stream.write_all(head.as_bytes());
            while written.is_ok() {
                std::thread::sleep(Duration::from_millis(100));
                written = stream.write_all(b" ");
            }
            written
        }
    };
}

fn ok(body: Vec<u8>) -> Reply {
    Reply::Full("HTTP/1.1 200 OK".into(), body)
}

fn redirect(to: &str) -> Reply {
    Reply::Full(
        format!("HTTP/1.1 307 Temporary Redirect\r\nLocation: {to}"),
        Vec::new(),
    )
}

fn challenge(value: &str) -> Reply {
    Reply::Full(
        format!("HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: {value}"),
        Vec::new(),
    )
}

const COMPONENT: &[u8] = b"\0asm the component's bytes";

/// A plugin's manifest whose component layer declares `size` bytes of [`COMPONENT`]'s digest.
fn manifest_of(size: usize) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": { "mediaType": CONFIG_MEDIA_TYPE, "digest": sha256_digest(b"{}"), "size": 2 },
        "layers": [{ "mediaType": WASM_MEDIA_TYPE, "digest": sha256_digest(COMPONENT), "size": size }],
    }))
    .expect("json")
}

async fn fetch_from(
    server: &Server,
    credentials: Option<(&str, &str)>,
) -> Result<Artifact, OciError> {
    let credentials = credentials.map(|(user, password)| (user.to_string(), password.to_string()));
    fetch_with(&server.plugin(), credentials, Duration::from_secs(5)).await
}

fn is_manifest(head: &str) -> bool {
    head.starts_with("get /v2/tools/probe/manifests/1 ")
}

#[tokio::test]
async fn sizes_are_bounded_before_and_while_reading() {
    // A manifest that declares 1 GiB is refused by its Content-Length, before a byte of it.
    let declared =
        Server::start(|_| Reply::Head("HTTP/1.1 200 OK\r\nContent-Length: 1073741824".into()));
    let error = fetch_from(&declared, None).await.err().expect("refused");
    assert!(
        matches!(&error, OciError::TooLarge { what, .. } if what == "manifest"),
        "{error}"
    );
    assert!(error.to_string().contains("over 4 MiB"), "{error}");
    // One with no length that streams 16 MiB is cut at 4 MiB.
    let streamed = Server::start(|_| Reply::Chunked(16 << 20));
    let error = fetch_from(&streamed, None).await.err().expect("refused");
    assert!(matches!(error, OciError::TooLarge { .. }), "{error}");
    // A component layer whose descriptor says 65 MiB is refused before it is asked for.
    let big_layer = Server::start(|head| match is_manifest(head) {
        true => ok(manifest_of(65 << 20)),
        false => ok(COMPONENT.to_vec()),
    });
    let error = fetch_from(&big_layer, None).await.err().expect("refused");
    assert!(error.to_string().contains("over 64 MiB"), "{error}");
    assert_eq!(big_layer.requests().len(), 1, "{:?}", big_layer.requests());
    // One that says 26 bytes and streams 72 MiB is cut at 64 MiB.
    let long_layer = Server::start(|head| match is_manifest(head) {
        true => ok(manifest_of(COMPONENT.len())),
        false => Reply::Chunked(72 << 20),
    });
    let error = fetch_from(&long_layer, None).await.err().expect("refused");
    assert!(matches!(error, OciError::TooLarge { .. }), "{error}");
}

#[tokio::test]
async fn redirects_and_realms_to_plain_http_elsewhere_are_refused_before_connecting() {
    // registry.invalid never resolves: had the client tried it, the error would be
    // "Cannot reach", not the refusal.
    let manifest_moved =
        Server::start(|_| redirect("http://registry.invalid/v2/tools/probe/manifests/1"));
    let error = fetch_from(&manifest_moved, None)
        .await
        .err()
        .expect("refused");
    assert!(
        matches!(
            &error,
            OciError::UnsafeHop {
                hop: "a redirect to",
                ..
            }
        ),
        "{error}"
    );
    assert!(
        error.to_string().contains("http://registry.invalid/"),
        "{error}"
    );
    let blob_moved = Server::start(|head| match is_manifest(head) {
        true => ok(manifest_of(COMPONENT.len())),
        false => redirect("http://registry.invalid/blobs/x"),
    });
    let error = fetch_from(&blob_moved, None).await.err().expect("refused");
    assert!(matches!(error, OciError::UnsafeHop { .. }), "{error}");
    let realm = Server::start(|_| {
        challenge(r#"Bearer realm="http://auth.invalid/token",service="registry""#)
    });
    let error = fetch_from(&realm, Some(("operator", "secret")))
        .await
        .err()
        .expect("refused");
    assert!(
        matches!(
            &error,
            OciError::UnsafeHop {
                hop: "the token service at",
                ..
            }
        ),
        "{error}"
    );
    assert!(
        !realm
            .requests()
            .iter()
            .any(|head| head.contains("authorization"))
    );
}

#[tokio::test]
async fn credentials_and_tokens_stay_on_the_registrys_origin() {
    use base64::Engine as _;
    let basic = base64::engine::general_purpose::STANDARD.encode("operator:secret");
    // Elsewhere: another origin on this machine, with the token service and the blob store.
    let elsewhere = Server::start(|head| match head.starts_with("get /token?") {
        true => ok(br#"{"token":"granted"}"#.to_vec()),
        false => ok(COMPONENT.to_vec()),
    });
    for (scheme, authorization) in [
        (
            format!(
                r#"Bearer realm="http://127.0.0.1:{}/token",service="probe""#,
                elsewhere.port
            ),
            "authorization: bearer granted".to_string(),
        ),
        (
            r#"Basic realm="probe""#.to_string(),
            format!("authorization: basic {basic}").to_lowercase(),
        ),
    ] {
        let (blobs, expected) = (elsewhere.port, authorization.clone());
        let registry = Server::start(move |head| {
            if !head.contains(&expected) {
                challenge(&scheme)
            } else if is_manifest(head) {
                ok(manifest_of(COMPONENT.len()))
            } else {
                redirect(&format!(
                    "http://127.0.0.1:{blobs}/blobs/{}",
                    sha256_digest(COMPONENT)
                ))
            }
        });
        let artifact = fetch_from(&registry, Some(("operator", "secret")))
            .await
            .unwrap_or_else(|error| panic!("{authorization}: {error}"));
        assert_eq!(artifact.component, COMPONENT);
        let to_registry = registry.requests();
        assert!(
            to_registry
                .iter()
                .any(|head| is_manifest(head) && head.contains(&authorization))
        );
    }
    let to_elsewhere = elsewhere.requests();
    assert_eq!(to_elsewhere.len(), 3, "{to_elsewhere:?}");
    assert!(
        to_elsewhere
            .iter()
            .any(|head| head.contains("scope=repository%3atools%2fprobe%3apull")),
        "{to_elsewhere:?}"
    );
    for head in to_elsewhere {
        assert!(!head.contains("authorization"), "{head}");
    }
}

#[tokio::test]
async fn a_registry_that_answers_slowly_meets_the_deadline() {
    let slow = Server::start(|_| Reply::Dribble);
    let plugin = slow.plugin();
    let fetching = fetch_with(&plugin, None, Duration::from_secs(2));
    let error = tokio::time::timeout(Duration::from_secs(20), fetching)
        .await
        .expect("no deadline: the fetch was still reading after 20 s")
        .err()
        .expect("refused");
    assert!(
        matches!(error, OciError::Deadline { seconds: 2, .. }),
        "{error}"
    );
    assert!(error.to_string().contains("took more than 2 s"), "{error}");
}

#[test]
fn references_need_the_scheme_and_a_registry() {
    let parse = |text: &str| PluginRef::parse(text).expect(text);
    let plugin = parse("oci://127.0.0.1:5000/tools/page_title:1.0.0");
    assert_eq!(plugin.name(), "page_title");
    assert_eq!(plugin.reference.tag(), Some("1.0.0"));
    assert!(plugin.is_loopback());
    assert!(!parse("oci://ghcr.io/acme/x:1").is_loopback());
    assert!(!parse("oci://127.0.0.1.nip.io/x:1").is_loopback());
    assert!(parse("oci://localhost:5000/x:1").is_loopback());
    // An implicit Docker Hub, a missing scheme or a bad name is refused with the syntax.
    for bad in [
        "oci://acme/page_title:1",
        "ghcr.io/acme/x:1",
        "oci://ghcr.io",
        "oci://ghcr.io/UPPER:1",
        "oci://127.0.0.1.nip.io.evil/x:1 y",
    ] {
        let error = PluginRef::parse(bad).err().expect(bad).to_string();
        assert!(error.contains("oci://HOST[:PORT]/NAME:TAG"), "{error}");
    }
    let pinned = plugin.pinned(&format!("sha256:{}", "a".repeat(64)));
    assert!(
        pinned.display().contains("@sha256:aaaa"),
        "{}",
        pinned.display()
    );
    assert_eq!(pinned.name(), "page_title");
}
