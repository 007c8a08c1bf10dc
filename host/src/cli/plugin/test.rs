//! `plugin test`: one call of a plugin's tool, in a real headless browser, on the author's own
//! page served on loopback; the answer is printed as a client would see its text. The plugin
//! is granted what its imports ask for (or what `--policy` says), so an author sees the tool
//! work before writing the policy an operator will need.

use crate::config::Args;
use crate::pipeline::Pipeline;
use crate::pipeline::tools::folders::ToolFolders;
use crate::policy::limits::Limits;
use crate::policy::plugins::{Origin, Policy};
use crate::runtime::{CompiledCache, Loader, Runtime, needs};
use crate::session::Session;
use page::PageServer;
use rmcp::model::ContentBlock;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

mod page;

/// What the browser shows before the tool runs.
#[derive(Clone)]
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
    let mut bench = Bench::open(component, opened, policy, headful).await?;
    let result = match bench.load().await {
        Ok(()) => bench.call(params).await,
        Err(error) => Err(error),
    };
    bench.shutdown().await;
    result
}

/// A plugin's tool ready to be called as the server calls it: the server's pipeline over the
/// component's folder, a browser session, the author's page served on loopback. `plugin test`
/// calls it once; `--watch` keeps the browser and the page between edits and loads the
/// changed component again.
pub struct Bench {
    component: PathBuf,
    /// The author's policy; without one, each load grants what the imports ask for.
    policy: Option<PathBuf>,
    args: Args,
    scratch: tempfile::TempDir,
    session: Session,
    url: Option<String>,
    _page: Option<PageServer>,
    loaded: Option<Loaded>,
}

struct Loaded {
    pipeline: Pipeline,
    folders: ToolFolders,
    name: String,
    /// What the generated policy granted, or the text of the author's policy file.
    policy_inputs: Vec<String>,
}

impl Bench {
    /// The browser (started at the first call), the page server and a scratch folder for the
    /// files the tool writes; the component is loaded by [`Bench::load`].
    pub async fn open(
        component: &Path,
        opened: Opened,
        policy: Option<&Path>,
        headful: bool,
    ) -> Result<Bench, String> {
        let scratch = tempfile::Builder::new()
            .prefix("devtools-mcp-plugin-test-")
            .tempdir()
            .map_err(|error| format!("Cannot create a scratch folder: {error}"))?;
        let policy_file = policy
            .map(Path::to_path_buf)
            .unwrap_or_else(|| scratch.path().join("policy.toml"));
        let args = server_args(component, &policy_file, headful)?;
        // The files the tool may write go to a scratch folder of their own.
        let files = scratch.path().join("files");
        std::fs::create_dir_all(&files)
            .map_err(|error| format!("Cannot create {}: {error}", files.display()))?;
        let sandbox = crate::sandbox::Sandbox::new(vec![files])
            .map_err(|error| format!("Cannot use the scratch folder: {error}"))?;
        let session = Session::new(crate::cli::browser_options(&args)?, sandbox);
        let page = match &opened {
            Opened::File(page) => Some(PageServer::start(page).await?),
            _ => None,
        };
        let url = match (&opened, &page) {
            (Opened::Url(url), _) => Some(url.clone()),
            (Opened::File(_), Some(page)) => Some(page.url.clone()),
            _ => None,
        };
        Ok(Bench {
            component: component.to_path_buf(),
            policy: policy.map(Path::to_path_buf),
            args,
            scratch,
            session,
            url,
            _page: page,
            loaded: None,
        })
    }

    /// Loads the component (again): only it is loaded again while its tool keeps its name
    /// and the policy stays the same (the author's file unchanged, or the same capabilities
    /// asked for); otherwise the whole server side is set up anew, under the new policy.
    pub async fn load(&mut self) -> Result<(), String> {
        let bytes = std::fs::read(&self.component)
            .map_err(|error| format!("Cannot read {}: {error}", self.component.display()))?;
        // What the policy says: the author's file as it is now, or what the imports ask for.
        let granted = match &self.policy {
            Some(file) => vec![std::fs::read_to_string(file).unwrap_or_default()],
            None => granted_by_imports(&bytes),
        };
        if let Some(loaded) = self
            .loaded
            .as_mut()
            .filter(|loaded| loaded.policy_inputs == granted)
        {
            let reloaded = loaded.folders.reload().await;
            if let Some(failure) = reloaded.failures.into_iter().next() {
                return Err(failure);
            }
            if let Some(tools) = reloaded.tools {
                loaded.pipeline.tools.replace(tools);
            }
            if loaded
                .folders
                .loaded_from(&self.component)
                .map(|tool| &tool.definition.name)
                == Some(&loaded.name)
            {
                return Ok(());
            }
        }
        self.loaded = None;
        // The server's own cache (out of the temp dir, where start-up refuses code): a plugin
        // tested again is not compiled again.
        let name = tool_name(&self.component, &crate::cli::default_cache_dir()).await?;
        if self.policy.is_none() {
            let file = self.scratch.path().join("policy.toml");
            println!("Granted for this test: {}", granted.join(", "));
            let quoted: Vec<String> = granted.iter().map(|name| format!("{name:?}")).collect();
            let text = format!("[plugins.{name}]\ncapabilities = [{}]\n", quoted.join(", "));
            std::fs::write(&file, text)
                .map_err(|error| format!("Cannot write {}: {error}", file.display()))?;
        }
        // Where the code may be, checked as the server checks it (the same writable folders):
        // a plugin that passes its test loads.
        let writable = crate::cli::stdio_writable(&self.args);
        let (pipeline, folders) = crate::cli::build_pipeline(&self.args, writable, false).await?;
        self.loaded = Some(Loaded {
            pipeline,
            folders,
            name,
            policy_inputs: granted,
        });
        Ok(())
    }

    /// Opens the page (afresh each time) and calls the tool; whether it answered without an
    /// error, and the answer's text (printed as a client would see it).
    pub async fn call(&self, params: &str) -> Result<(bool, String), String> {
        let Some(loaded) = &self.loaded else {
            return Err("the tool is not loaded".into());
        };
        if let Some(url) = &self.url {
            let arguments = json!({ "type": "url", "url": url });
            let navigated = loaded
                .pipeline
                .call(
                    &self.session,
                    "navigate_page",
                    arguments.as_object().cloned(),
                )
                .await
                .map_err(|error| error.to_string())?;
            if navigated.is_error == Some(true) {
                crate::serve::oneshot::print(&navigated);
                return Err(format!("Could not open {url}."));
            }
        }
        let arguments = crate::serve::oneshot::parse_params(Some(params))?;
        let result = loaded
            .pipeline
            .call(&self.session, &loaded.name, Some(arguments))
            .await
            .map_err(|error| error.to_string())?;
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

    pub async fn shutdown(self) {
        self.session.shutdown(Duration::from_millis(700)).await;
    }
}

/// The server's flags for a test: the component's folder as the plugin folder, one page.
fn server_args(component: &Path, policy: &Path, headful: bool) -> Result<Args, String> {
    let folder = component
        .parent()
        .filter(|folder| !folder.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
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
        policy.display().to_string(),
    ];
    if !headful {
        argv.push("--headless".to_string());
    }
    Args::try_parse_compatible(argv).map_err(|error| error.to_string())
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
