//! `plugin test`: one call of a plugin's tool, in a real headless browser, on the author's own
//! page served on loopback; the answer is printed as a client would see its text. The plugin
//! is granted what its imports ask for (or what `--policy` says), so an author sees the tool
//! work before writing the policy an operator will need.

use crate::config::Args;
use crate::policy::limits::Limits;
use crate::policy::plugins::{Origin, Policy};
use crate::runtime::{CompiledCache, Loader, Runtime, needs};
use crate::session::Session;
use rmcp::model::ContentBlock;
use serde_json::{Value, json};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// What the browser shows before the tool runs.
pub enum Opened {
    Blank,
    /// An HTML file, served with the files of its folder.
    File(PathBuf),
    Url(String),
}

/// A project's own test, `test/test.json` (written by `plugin new`): the fixture page to open
/// (beside it), the parameters, and texts the answer must contain.
pub struct ProjectTest {
    pub file: PathBuf,
    pub page: PathBuf,
    pub params: String,
    pub expect: Vec<String>,
}

/// What `test/test.json` holds.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct TestFile {
    page: String,
    #[serde(default)]
    params: serde_json::Map<String, Value>,
    #[serde(default)]
    expect: Vec<String>,
}

/// The project's test, if it has one (`test/test.json`).
pub fn project_test(project: &Path) -> Result<Option<ProjectTest>, String> {
    let file = project.join("test").join("test.json");
    let text = match std::fs::read_to_string(&file) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(format!("Cannot read {}: {error}", file.display())),
    };
    let test: TestFile = serde_json::from_str(&text).map_err(|error| {
        format!(
            "{} is not a test: {error}. It holds {{\"page\": \"page.html\", \"params\": {{...}}, \"expect\": [\"text the answer must contain\"]}}.",
            file.display()
        )
    })?;
    Ok(Some(ProjectTest {
        page: project.join("test").join(&test.page),
        params: Value::Object(test.params).to_string(),
        expect: test.expect,
        file,
    }))
}

/// Whether the answer holds every expected text; the error names the first one missing.
pub fn check_expected(answer: &str, expected: &[String]) -> Result<(), String> {
    match expected.iter().find(|text| !answer.contains(text.as_str())) {
        Some(missing) => Err(format!(
            "The answer does not contain {missing:?}: change the tool, or what the test expects."
        )),
        None => {
            if !expected.is_empty() {
                println!("PASS: the answer contains every expected text.");
            }
            Ok(())
        }
    }
}

/// Runs the tool once; whether it answered without an error, and the answer's text.
pub async fn run(
    component: &Path,
    params: &str,
    opened: Opened,
    policy: Option<&Path>,
    headful: bool,
) -> Result<(bool, String), String> {
    let bytes = std::fs::read(component)
        .map_err(|error| format!("Cannot read {}: {error}", component.display()))?;
    let folder = component
        .parent()
        .filter(|folder| !folder.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf();
    let scratch = tempfile::Builder::new()
        .prefix("devtools-mcp-plugin-test-")
        .tempdir()
        .map_err(|error| format!("Cannot create a scratch folder: {error}"))?;
    // The server's own cache (out of the temp dir, where start-up refuses code): a plugin
    // tested again is not compiled again.
    let cache = crate::cli::default_cache_dir();
    let name = tool_name(component, &cache).await?;
    let policy_file = match policy {
        Some(file) => file.to_path_buf(),
        None => {
            let file = scratch.path().join("policy.toml");
            let granted = granted_by_imports(&bytes);
            println!("Granted for this test: {}", granted.join(", "));
            let quoted: Vec<String> = granted.iter().map(|name| format!("{name:?}")).collect();
            let text = format!("[plugins.{name}]\ncapabilities = [{}]\n", quoted.join(", "));
            std::fs::write(&file, text)
                .map_err(|error| format!("Cannot write {}: {error}", file.display()))?;
            file
        }
    };
    let mut argv = vec![
        "devtools-mcp".to_string(),
        "--isolated".to_string(),
        // One page, the one opened: the tool acts on it without a pageId.
        "--page-id-routing=false".to_string(),
        // A tool that declares an output schema shows its structured result, as a client
        // that reads structured content gets it.
        "--experimentalStructuredContent".to_string(),
        "--plugin-dir".to_string(),
        folder.display().to_string(),
        "--policy".to_string(),
        policy_file.display().to_string(),
    ];
    if !headful {
        argv.push("--headless".to_string());
    }
    let args = Args::try_parse_compatible(argv).map_err(|error| error.to_string())?;
    // Where the code may be, checked as the server checks it (the same writable folders): a
    // plugin that passes its test loads.
    let writable = crate::cli::stdio_writable(&args);
    let (pipeline, _folders) = crate::cli::build_pipeline(&args, writable, false).await?;
    // The files the tool may write go to a scratch folder of their own.
    let files = scratch.path().join("files");
    std::fs::create_dir_all(&files)
        .map_err(|error| format!("Cannot create {}: {error}", files.display()))?;
    let sandbox = crate::sandbox::Sandbox::new(vec![files])
        .map_err(|error| format!("Cannot use the scratch folder: {error}"))?;
    let session = Session::new(crate::cli::browser_options(&args)?, sandbox);
    let server = match &opened {
        Opened::File(page) => Some(PageServer::start(page).await?),
        _ => None,
    };
    let url = match (&opened, &server) {
        (Opened::Url(url), _) => Some(url.clone()),
        (Opened::File(_), Some(server)) => Some(server.url.clone()),
        _ => None,
    };
    if let Some(url) = url {
        let arguments = json!({ "type": "url", "url": url });
        let navigated = pipeline
            .call(&session, "navigate_page", arguments.as_object().cloned())
            .await
            .map_err(|error| error.to_string())?;
        if navigated.is_error == Some(true) {
            crate::serve::oneshot::print(&navigated);
            session.shutdown(Duration::from_millis(700)).await;
            return Err(format!("Could not open {url}."));
        }
    }
    let arguments = crate::serve::oneshot::parse_params(Some(params))?;
    let result = pipeline.call(&session, &name, Some(arguments)).await;
    session.shutdown(Duration::from_millis(700)).await;
    let result = result.map_err(|error| error.to_string())?;
    crate::serve::oneshot::print(&result);
    let mut text: Vec<String> = result
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(text) => Some(text.text.clone()),
            _ => None,
        })
        .collect();
    if let Some(line) = structured_line(result.structured_content.as_ref()) {
        println!("{line}");
        text.push(line);
    }
    Ok((result.is_error != Some(true), text.join("\n")))
}

/// The tool's own structured result (under `result`, beside the host's keys), as one line
/// the test's `expect` texts can match; nothing for a tool that declared no output schema.
fn structured_line(structured: Option<&Value>) -> Option<String> {
    let result = structured?.get("result")?;
    Some(format!(
        "Structured result (checked against the declared output schema): {result}"
    ))
}

/// The tool's name, from its definition (loaded under the default policy).
async fn tool_name(component: &Path, cache: &Path) -> Result<String, String> {
    let runtime = Runtime::new().map_err(|error| format!("cannot start wasmtime: {error}"))?;
    let compiled =
        CompiledCache::open(runtime.engine(), cache).map_err(|error| error.to_string())?;
    let policy = Arc::new(Policy::with_base_limits(Limits::default()));
    let loader = Loader::new(runtime, compiled, policy);
    let loaded = loader
        .load_file(
            component,
            Origin::Community,
            &Value::Object(Default::default()).to_string(),
        )
        .await
        .map_err(|error| error.to_string())?;
    Ok(loaded.definition.name)
}

/// The capabilities a component's imports ask for (every call's and some arguments').
fn granted_by_imports(bytes: &[u8]) -> Vec<String> {
    let needed = needs::needed_by(bytes);
    let mut names: Vec<String> = needed
        .always
        .keys()
        .chain(needed.depending.keys())
        .map(|capability| capability.name().to_string())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// A page of the author's, served on 127.0.0.1 with the files of its folder (and nothing
/// outside it), for as long as the test runs.
struct PageServer {
    url: String,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for PageServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl PageServer {
    async fn start(page: &Path) -> Result<PageServer, String> {
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
