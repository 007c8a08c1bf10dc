//! The author's page, served on 127.0.0.1 with the files of its folder (and nothing outside
//! it), for as long as `plugin test` runs.

use std::path::{Component, Path, PathBuf};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A page of the author's, served on 127.0.0.1 with the files of its folder (and nothing
/// outside it), for as long as the test runs.
pub struct PageServer {
    pub url: String,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for PageServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl PageServer {
    pub async fn start(page: &Path) -> Result<PageServer, String> {
        let page = page
            .canonicalize()
            .map_err(|error| format!("Cannot open {}: {error}", page.display()))?;
        let folder = page.parent().map(Path::to_path_buf).unwrap_or_default();
        let name = page
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(|error| format!("Cannot listen on 127.0.0.1: {error}"))?;
        let port = listener
            .local_addr()
            .map_err(|error| error.to_string())?
            .port();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve_one(stream, folder.clone()));
            }
        });
        Ok(PageServer {
            url: format!("http://127.0.0.1:{port}/{name}"),
            task,
        })
    }
}

/// Answers one request for a file of `folder` (GET, a plain relative path) and closes.
async fn serve_one(mut stream: tokio::net::TcpStream, folder: PathBuf) {
    let mut request = vec![0u8; 8192];
    let Ok(Ok(read)) =
        tokio::time::timeout(Duration::from_secs(10), stream.read(&mut request)).await
    else {
        return;
    };
    let head = String::from_utf8_lossy(&request[..read]);
    let target = head
        .lines()
        .next()
        .and_then(|line| line.strip_prefix("GET "))
        .and_then(|rest| rest.split(' ').next())
        .map(|target| target.split(['?', '#']).next().unwrap_or_default())
        .unwrap_or_default()
        .trim_start_matches('/')
        .to_string();
    let relative = Path::new(&target);
    let plain = relative
        .components()
        .all(|component| matches!(component, Component::Normal(_)));
    let body = match plain && !target.is_empty() {
        true => std::fs::read(folder.join(relative)).ok(),
        false => None,
    };
    let response = match body {
        Some(body) => {
            let kind = content_type(&target);
            let mut head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            )
            .into_bytes();
            head.extend(body);
            head
        }
        None => {
            b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_vec()
        }
    };
    let _sent = stream.write_all(&response).await;
}

fn content_type(path: &str) -> &'static str {
    match path.rsplit('.').next().unwrap_or_default() {
        "html" | "htm" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript",
        "css" => "text/css",
        "json" => "application/json",
        "png" => "image/png",
        "svg" => "image/svg+xml",
        _ => "application/octet-stream",
    }
}
