//! The command line made a running server: parses the flags (`config`), loads the tools,
//! serves MCP over stdio (or, with `serve`, over streamable HTTP to several tenants; or runs a
//! one-shot or `plugin` subcommand), and closes the browser on the way out.

pub mod plugin;
pub mod release;
pub mod reload;

use crate::browser::{BrowserOptions, ScreencastOptions, ScreenshotFlags};
use crate::config::Args;
use crate::config::commands::{Command, TenantAction};
use crate::lighthouse::LighthouseOptions;
use crate::pipeline::tools::folders;
use crate::pipeline::tools::folders::ToolFolders;
use crate::pipeline::tools::known_names::{self, KnownNames};
use crate::pipeline::{CurrentToolSet, Pipeline};
use crate::policy::code_folders::{Named, Placement};
use crate::policy::plugins::{Origin, Policy};
use crate::runtime::embedded::{self, Builtins};
use crate::runtime::{CompiledCache, Loader, Runtime};
use crate::sandbox::Sandbox;
use crate::serve::{http, oneshot, stdio, tenants};
use crate::session::Session;
use crate::session::saved::{Owner, SessionKey, SessionStore};
use crate::telemetry;
use rmcp::ServiceExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// Time given to the browser to close on shutdown (the whole exit must take under 1 s).
const BROWSER_CLOSE_BUDGET: Duration = Duration::from_millis(700);
/// How long the background browser launch waits for the client's first `tools/list`.
const LAUNCH_AFTER_INITIALIZE: Duration = Duration::from_millis(100);
/// `serve` without `--http`.
const DEFAULT_HTTP_ADDRESS: &str = "127.0.0.1:8808";
/// Request bodies `serve` accepts when `--max-body-bytes` is not given.
const DEFAULT_MAX_BODY_BYTES: usize = 1 << 20;
/// A tenant's browser context is closed after this long without calls, by default.
const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(600);
/// In-flight calls may finish for this long after SIGTERM, by default.
const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// The `devtools-mcp` binary, with the built-in tools it embeds and how it was built (for
/// `--version`).
pub fn main(builtins: &'static Builtins, build: crate::config::version::BuildInfo) -> ExitCode {
    // The loader's componentizer: this binary run again, alone with one core module.
    if std::env::args_os()
        .nth(1)
        .is_some_and(|arg| arg == crate::runtime::componentize::SUBCOMMAND)
    {
        return crate::runtime::componentize::child_main();
    }
    embedded::install(builtins);
    crate::config::version::set(build);
    let args = Args::parse_compatible();
    init_logging(&args);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("devtools-mcp: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let code = match runtime.block_on(run(args)) {
        Ok(()) => 0,
        Err(error) => {
            eprintln!("devtools-mcp: {error}");
            1
        }
    };
    // stdin's reader thread may still be blocked in read(2); do not wait for it.
    std::process::exit(code);
}

async fn run(args: Args) -> Result<(), String> {
    match &args.command {
        Some(Command::Tenant {
            action: TenantAction::HashToken,
        }) => return hash_token(),
        Some(Command::Serve) => return serve_http(&args).await,
        Some(Command::Plugin { command }) => {
            return plugin::run(command).await;
        }
        Some(Command::Release { command }) => return release::run(command),
        _ => {}
    }
    let serving = args.command.is_none();
    if let Some(flag) = serve_only_flag(&args) {
        return Err(format!(
            "{flag} applies to `serve` (its tenants) only; this stdio server has one user and would ignore it. Leave it out, or run `devtools-mcp serve --http ADDRESS --tenants FILE {flag} ...`."
        ));
    }
    let (pipeline, tool_folders) = build_pipeline(&args, stdio_writable(&args), serving).await?;
    let compiling = tool_folders.has_pending();
    let pipeline = Arc::new(pipeline);
    let tool_folders = Arc::new(tokio::sync::Mutex::new(tool_folders));
    let watching = Args::enabled(args.watch) && args.command.is_none();
    if watching {
        folders::watch(tool_folders.clone(), pipeline.clone())?;
    }
    let reloading = args.command.is_none() && args.config.is_some();
    if let (true, Some(file)) = (reloading, &args.config) {
        reload::watch(
            file.clone(),
            std::env::args().collect(),
            args.clone(),
            tool_folders.clone(),
            pipeline.clone(),
        )?;
    }
    let options = browser_options(&args)?;
    let mut sandbox = sandbox(&args)?;
    let downloads = match &options.downloads {
        Some(settings) => Some(stdio_downloads(settings, &mut sandbox)?),
        None => None,
    };
    let mut session = Session::new(options, sandbox);
    if let Some(downloads) = downloads {
        session = session.with_downloads(downloads);
    }
    if let Some(store) = session_store(&args)? {
        let sessions = store.of(Owner::Local);
        // A --session that cannot be opened stops the start: the user asked to be signed in.
        if let Some(name) = &args.session {
            sessions
                .read(name)
                .map_err(|error| format!("--session {name}: {error}"))?;
        }
        session = session.with_named_sessions(sessions, args.session.clone());
    }
    match &args.command {
        Some(Command::Tools) => {
            oneshot::tools(&pipeline);
            return Ok(());
        }
        Some(Command::Call { tool, params }) => {
            return match oneshot::call(&pipeline, &session, tool, params.as_deref()).await? {
                true => Ok(()),
                false => Err(format!("{tool} answered with an error")),
            };
        }
        _ => {}
    }
    if compiling {
        folders::finish_in_background(tool_folders, pipeline.clone());
    }
    let server = stdio::McpServer::new(
        pipeline,
        session.clone(),
        watching || reloading || compiling,
    )?;
    let listed = server.listed();
    let service = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|error| format!("MCP initialization failed: {error}"))?;
    let background = (args.background_launch != Some(false)).then(|| {
        let session = session.clone();
        tokio::spawn(async move {
            // After the tool list every client asks for first, or a moment after initialize.
            let _ = tokio::time::timeout(LAUNCH_AFTER_INITIALIZE, listed.notified()).await;
            session.launch_in_background().await
        })
    });
    let cancel = service.cancellation_token();
    tokio::select! {
        _ = service.waiting() => {}
        _ = shutdown_signal() => cancel.cancel(),
    }
    // A start still under way is dropped, which kills the browser it was starting.
    if let Some(background) = background {
        background.abort();
        let _ended = background.await;
    }
    session.shutdown(BROWSER_CLOSE_BUDGET).await;
    Ok(())
}

/// The folders a stdio server lets plugins and its client write to (its `--workspace` roots
/// and the temp dir), which no code folder may overlap; `plugin test` checks the same.
pub(crate) fn stdio_writable(args: &Args) -> Vec<Named> {
    let mut writable: Vec<Named> = args
        .filesystem_roots()
        .iter()
        .map(|root| Named::new("the --workspace", root))
        .collect();
    writable.push(Named::temp_dir());
    writable
}

/// `tenant hash-token`: the token on stdin, its hash on stdout.
/// The first flag given that only `serve` reads (stdio must not start with it ignored).
fn serve_only_flag(args: &Args) -> Option<&'static str> {
    [
        ("--idle-timeout-secs", args.idle_timeout_secs.is_some()),
        ("--discard-idle-secs", args.discard_idle_secs.is_some()),
        ("--max-tenants", args.max_tenants.is_some()),
        ("--shutdown-grace-secs", args.shutdown_grace_secs.is_some()),
    ]
    .into_iter()
    .find_map(|(flag, given)| given.then_some(flag))
}

fn hash_token() -> Result<(), String> {
    use std::io::Read;
    let mut token = String::new();
    std::io::stdin()
        .read_to_string(&mut token)
        .map_err(|error| format!("cannot read the token from stdin: {error}"))?;
    if token.trim().is_empty() {
        return Err("no token on stdin; pipe one in, e.g. `openssl rand -hex 32 | tee token.txt | devtools-mcp tenant hash-token`".into());
    }
    println!("{}", tenants::token_hash_hex(&token));
    Ok(())
}

/// `serve`: MCP over streamable HTTP, one session per tenant of the tenants file.
async fn serve_http(args: &Args) -> Result<(), String> {
    let path = args
        .tenants
        .clone()
        .ok_or("serve needs --tenants FILE (see docs/tenants.example.toml)")?;
    let address = match args.http {
        Some(address) => address,
        None => DEFAULT_HTTP_ADDRESS
            .parse()
            .map_err(|error| format!("invalid default address: {error}"))?,
    };
    // Tools are loaded once here; `--watch` reloading serves stdio only. The tenants' sandbox
    // roots are checked against the code folders with the rest of the file, by the same
    // checks at start and at every reload.
    let writable = vec![Named::temp_dir()];
    let (pipeline, _tool_folders) = build_pipeline(args, writable, false).await?;
    let pipeline = Arc::new(pipeline);
    let checks = tenants::checks::TenantChecks::new(
        KnownNames::of(&pipeline.tools.current()),
        pipeline.flags.clone(),
        code_placement(args).code_folders(),
    );
    let idle = args
        .idle_timeout_secs
        .map(Duration::from_secs)
        .unwrap_or(DEFAULT_IDLE_TIMEOUT);
    if args.session.is_some() {
        return Err("--session restores a session of stdio's one user; under serve each tenant restores its own with restore_session. Leave --session out.".into());
    }
    let registry = Arc::new(
        tenants::registry::Registry::open(path, checks, browser_options(args)?, idle)
            .map_err(|error| format!("Refusing to start: {error}"))?
            .with_max_tenants(args.max_tenants.map(|max| max as usize))
            .with_discard_idle(args.discard_idle_secs.map(Duration::from_secs))
            .with_session_store(session_store(args)?),
    );
    let options = http::HttpOptions {
        address,
        allowed_hosts: args.allowed_host.clone(),
        allowed_origins: args.allowed_origin.clone(),
        max_body_bytes: args.max_body_bytes.unwrap_or(DEFAULT_MAX_BODY_BYTES),
        shutdown_grace: args
            .shutdown_grace_secs
            .map(Duration::from_secs)
            .unwrap_or(DEFAULT_SHUTDOWN_GRACE),
        max_connections: args.max_connections,
        max_connections_per_ip: args
            .max_connections_per_ip
            .unwrap_or(http::DEFAULT_MAX_CONNECTIONS_PER_IP),
        header_read_timeout: args
            .header_read_timeout_secs
            .map(Duration::from_secs)
            .unwrap_or(http::DEFAULT_HEADER_READ_TIMEOUT),
        body_read_timeout: args
            .body_read_timeout_secs
            .map(Duration::from_secs)
            .unwrap_or(http::DEFAULT_BODY_READ_TIMEOUT),
    };
    http::serve(pipeline, registry, options).await
}

/// Loads every tool component and decides what each call will go through; the tool folders can
/// load them again (`--watch`). `writable`: the folders plugins or tenants may write to,
/// which must not overlap the plugin folders or the compiled-code cache.
///
/// `defer`: plugins whose code is not compiled yet are left out of the set and loaded by
/// `folders::finish_in_background` (a stdio server answers `initialize` without them).
pub(crate) async fn build_pipeline(
    args: &Args,
    writable: Vec<Named>,
    defer: bool,
) -> Result<(Pipeline, ToolFolders), String> {
    let flags = args.flags_json();
    let runtime = Runtime::new().map_err(|error| format!("cannot start wasmtime: {error}"))?;
    let mut policy = match &args.policy {
        Some(file) => {
            Policy::load(file, args.plugin_limits()).map_err(|error| error.to_string())?
        }
        None => Policy::with_base_limits(args.plugin_limits()),
    };
    policy.require_signed |= Args::enabled(args.require_signed);
    let policy = Arc::new(policy);
    let dirs = plugin_dirs(args);
    let cache_dir = cache_dir(args);
    let placement = Placement {
        writable,
        ..code_placement(args)
    };
    placement.check()?;
    let cache =
        CompiledCache::open(runtime.engine(), &cache_dir).map_err(|error| error.to_string())?;
    let loader = Loader::new(runtime.clone(), cache, policy.clone());
    let slim = Args::enabled(args.slim);
    let page_id_routing = args.page_id_routing();
    let mut tool_folders = ToolFolders::new(loader, dirs, flags.clone(), slim, page_id_routing);
    if args.builtin_plugins.is_none() {
        tool_folders = tool_folders.with_embedded_builtins();
    }
    if defer {
        tool_folders = tool_folders.deferring_uncompiled();
    }
    let tools = tool_folders.load().await?;
    // Every section of the policy must name a loaded tool; with `--watch` (or plugins still
    // to compile) a plugin may still arrive, so a section naming none is a warning there.
    let watching = Args::enabled(args.watch) || tool_folders.has_pending();
    // Checked again, refusing, once they compiled (`folders::finish_in_background`).
    let checked_later = tool_folders.has_pending() && !Args::enabled(args.watch);
    let policy_file = args.policy.as_deref().unwrap_or(Path::new("--policy"));
    for problem in known_names::policy_problems(
        &policy,
        &KnownNames::from_definitions(tool_folders.definitions()),
        watching,
    ) {
        match problem {
            known_names::Problem::Refused(reason) => {
                return Err(format!(
                    "The policy file {} is invalid: {reason}",
                    policy_file.display()
                ));
            }
            known_names::Problem::Warning(_) if checked_later => {}
            known_names::Problem::Warning(reason) => {
                tracing::warn!("The policy file {}: {reason}", policy_file.display())
            }
        }
    }
    let telemetry = match &args.telemetry_file {
        Some(path) => Some(telemetry::TelemetrySink::open(path).map_err(|error| {
            format!("cannot open the telemetry file {}: {error}", path.display())
        })?),
        None => None,
    };
    let pipeline = Pipeline {
        tools: CurrentToolSet::new(tools),
        flags,
        runtime,
        via_cli: Args::enabled(args.via_cli),
        slim,
        structured_content: Args::enabled(args.experimental_structured_content),
        new_pages: Args::enabled(args.experimental_new_pages),
        parallel_pages: Args::enabled(args.experimental_parallel_pages),
        tasks: Args::enabled(args.experimental_tasks),
        fence: Args::enabled(args.experimental_fence_page_content),
        telemetry,
        output_tokens: args.max_output_tokens,
    };
    Ok((pipeline, tool_folders))
}

/// The plugin folders: the built-in tools are embedded in the binary; `--builtinPlugins DIR`
/// replaces them, and `--pluginDir` adds community ones.
fn plugin_dirs(args: &Args) -> Vec<(PathBuf, Origin)> {
    let mut dirs: Vec<(PathBuf, Origin)> = args
        .builtin_plugins
        .iter()
        .map(|dir| (dir.clone(), Origin::Builtin))
        .collect();
    dirs.extend(
        args.plugin_dir
            .iter()
            .map(|dir| (dir.clone(), Origin::Community)),
    );
    dirs
}

/// The folders this server runs code from (cache, plugin folders, helpers), no writable ones.
pub(crate) fn code_placement(args: &Args) -> Placement {
    Placement {
        cache: Some(cache_dir(args)),
        plugin_dirs: plugin_dirs(args)
            .iter()
            .map(|(dir, origin)| match origin {
                Origin::Builtin => Named::new("the built-in tools folder", dir),
                Origin::Community => Named::new("the --pluginDir", dir),
            })
            .collect(),
        helpers: helper_code(args),
        writable: Vec::new(),
    }
}

/// The helpers this server would execute, as found at start: Chromium (and its folder), Node.js
/// and the Lighthouse package, ffmpeg. Each is a code folder (see `plugin::placement`); one
/// found only later is vetted before it first runs.
fn helper_code(args: &Args) -> Vec<Named> {
    use crate::policy::code_folders::{executable, node_package};
    let mut code = Vec::new();
    if let Some(browser) = &args.executable_path {
        code.extend(executable("the browser (--executablePath)", browser, true));
    }
    let lighthouse = LighthouseOptions {
        node_path: args.node_path.clone(),
        lighthouse_path: args.lighthouse_path.clone(),
    };
    if let Ok(node) = lighthouse.node() {
        code.extend(executable("Node.js (for Lighthouse)", &node, false));
    }
    if let Ok(package) = lighthouse.lighthouse_dir() {
        code.push(node_package("the Lighthouse package", &package));
    }
    let ffmpeg = crate::browser::find_ffmpeg(args.experimental_ffmpeg_path.as_deref());
    if let Ok(ffmpeg) = ffmpeg {
        code.extend(executable("ffmpeg (for screencasts)", &ffmpeg, false));
    }
    code
}

pub(crate) fn browser_options(args: &Args) -> Result<BrowserOptions, String> {
    Ok(BrowserOptions {
        browser_url: args.browser_url.clone(),
        ws_endpoint: args.ws_endpoint.clone(),
        executable_path: args.executable_path.clone(),
        channel: args.channel.clone(),
        auto_connect: Args::enabled(args.auto_connect),
        devtools: Args::enabled(args.experimental_devtools),
        headless: Args::enabled(args.headless),
        isolated: Args::enabled(args.isolated),
        user_data_dir: args.user_data_dir.clone(),
        chrome_args: args.chrome_arg.clone(),
        ignore_default_chrome_args: args.ignore_default_chrome_arg.clone(),
        viewport: args.viewport,
        proxy_server: args.proxy_server.clone(),
        accept_insecure_certs: Args::enabled(args.accept_insecure_certs),
        redact_network_headers: Args::enabled(args.redact_network_headers),
        screencast: ScreencastOptions {
            legacy: Args::enabled(args.experimental_screencast),
            ffmpeg_path: args.experimental_ffmpeg_path.clone(),
            fps: args.screencast_fps,
        },
        lighthouse: LighthouseOptions {
            node_path: args.node_path.clone(),
            lighthouse_path: args.lighthouse_path.clone(),
        },
        webmcp: Args::enabled(args.category_experimental_webmcp)
            || Args::enabled(args.category_experimental_third_party),
        extensions: Args::enabled(args.category_extensions),
        human_in_the_loop: Args::enabled(args.experimental_human_in_the_loop),
        // Tenants' browsers turn it on (see tenants/registry.rs); stdio keeps the reference's.
        block_popups: false,
        navigation: crate::policy::navigation::NavigationPolicy {
            javascript_evaluation: args.javascript_evaluation != Some(false),
            file_navigations: args.file_navigations != Some(false),
            extensions: Args::enabled(args.category_extensions),
        },
        ws_headers: args
            .ws_headers
            .as_ref()
            .map(|headers| headers.0.clone())
            .unwrap_or_default(),
        screenshot: ScreenshotFlags {
            format: args.screenshot_format.clone(),
            quality: args.screenshot_quality,
            max_width: args.screenshot_max_width,
            max_height: args.screenshot_max_height,
        },
        url_patterns: args.url_patterns()?.map(std::sync::Arc::new),
        recovery: Args::enabled(args.experimental_recovery),
        downloads: download_settings(args)?,
    })
}

/// `--experimentalDownloads` and its limits; a limit without the flag, or the flag on a
/// browser the server attaches to (its default context is the user's: all of the user's own
/// downloads would be redirected), is refused rather than ignored.
fn download_settings(
    args: &Args,
) -> Result<Option<crate::browser::features::downloads::DownloadSettings>, String> {
    use crate::browser::features::downloads::{DownloadLimits, DownloadSettings};
    let limits_given = args.downloads_dir.is_some()
        || args.max_download_mib.is_some()
        || args.max_downloads_per_call.is_some()
        || args.max_downloads_mib.is_some();
    if !Args::enabled(args.experimental_downloads) {
        return match limits_given {
            true => Err("--downloadsDir, --maxDownloadMib, --maxDownloadsPerCall and --maxDownloadsMib take effect only with --experimentalDownloads: add it, or leave them out.".into()),
            false => Ok(None),
        };
    }
    if args.browser_url.is_some() || args.ws_endpoint.is_some() || Args::enabled(args.auto_connect)
    {
        return Err("--experimentalDownloads needs a browser this server launches: on a browser it attaches to (--browserUrl, --wsEndpoint, --autoConnect) it would send all of that browser's downloads, the user's own included, to the server's folder. Leave one of them out.".into());
    }
    let defaults = DownloadLimits::default();
    let mib = |value: Option<u64>, default: u64| value.map_or(default, |mib| mib << 20);
    Ok(Some(DownloadSettings {
        dir: args.downloads_dir.clone(),
        limits: DownloadLimits {
            max_file_bytes: mib(args.max_download_mib, defaults.max_file_bytes),
            per_call: args
                .max_downloads_per_call
                .map_or(defaults.per_call, |count| count as usize),
            total_bytes: mib(args.max_downloads_mib, defaults.total_bytes),
        },
    }))
}

/// `--sessionStore` with its key; `--sessionKeyFile` or `--session` without the store, or the
/// store without a key, is refused rather than ignored.
fn session_store(args: &Args) -> Result<Option<Arc<SessionStore>>, String> {
    let Some(dir) = &args.session_store else {
        if args.session_key_file.is_some() || args.session.is_some() {
            return Err("--sessionKeyFile and --session take effect only with --sessionStore DIR: add it, or leave them out.".into());
        }
        return Ok(None);
    };
    let key =
        SessionKey::load(args.session_key_file.as_deref()).map_err(|error| error.to_string())?;
    let store =
        SessionStore::open(dir.clone(), key).map_err(|error| format!("--sessionStore: {error}"))?;
    Ok(Some(Arc::new(store)))
}

/// The downloads of the one session of stdio: into `--downloadsDir`, or a private folder of
/// the temp dir that outlives the server (the user reads the files after it). Either is a
/// file root, so a tool can upload what was downloaded.
fn stdio_downloads(
    settings: &crate::browser::features::downloads::DownloadSettings,
    sandbox: &mut Sandbox,
) -> Result<crate::browser::features::downloads::Downloads, String> {
    use crate::browser::features::downloads::Downloads;
    let folder = match &settings.dir {
        Some(dir) => dir.clone(),
        None => tempfile::Builder::new()
            .prefix("devtools-mcp-downloads-")
            .tempdir()
            .map_err(|error| format!("Cannot create a downloads folder in the temp dir: {error}. Pass --downloadsDir with a folder this user can write."))?
            .keep(),
    };
    let downloads = Downloads::new(folder, settings.limits).map_err(|error| error.to_string())?;
    sandbox
        .add_root(downloads.folder())
        .map_err(|error| format!("--downloadsDir: {error}"))?;
    Ok(downloads)
}

/// `--workspace` roots first (relative paths resolve against the first), then the temp dir.
fn sandbox(args: &Args) -> Result<Sandbox, String> {
    let mut roots = args.filesystem_roots();
    roots.push(std::env::temp_dir());
    Sandbox::new(roots).map_err(|error| format!("invalid --workspace: {error}"))
}

fn cache_dir(args: &Args) -> PathBuf {
    args.cache_dir.clone().unwrap_or_else(default_cache_dir)
}

/// The compiled-code cache without `--cacheDir`: the user's cache folder.
pub(crate) fn default_cache_dir() -> PathBuf {
    dirs::cache_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("devtools-mcp")
        .join("compiled")
}

/// SIGTERM, SIGINT (Ctrl-C) or SIGHUP.
pub(crate) async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut terminate), Ok(mut interrupt), Ok(mut hangup)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
        signal(SignalKind::hangup()),
    ) else {
        std::future::pending::<()>().await;
        return;
    };
    tokio::select! {
        _ = terminate.recv() => {}
        _ = interrupt.recv() => {}
        _ = hangup.recv() => {}
    }
}

fn init_logging(args: &Args) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,chromiumoxide=off"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false);
    let file = args.log_file.as_ref().and_then(|path| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .ok()
    });
    match file {
        Some(file) => builder.with_writer(std::sync::Mutex::new(file)).init(),
        None => builder.with_writer(std::io::stderr).init(),
    }
}

#[cfg(test)]
mod tests {
    /// The URL patterns the flags give reach the browser's options (never dropped on the way).
    #[test]
    fn the_browser_gets_the_url_patterns() {
        let argv = [
            "devtools-mcp",
            "--blockedUrlPattern",
            "http://127.0.0.1:*/a*",
        ]
        .map(String::from);
        let args = crate::config::Args::try_parse_compatible(argv).expect("valid flags");
        let options = super::browser_options(&args).expect("options");
        assert!(options.url_patterns.is_some(), "the browser gets them");
    }
}
