//! What the operator says: the command-line flags (the reference's names, camelCase or
//! kebab-case, `--no-X` for false, plus ours: plugin folders, workspace roots, tenants, local
//! telemetry), the subcommands ([`commands`]) and the `--config` file ([`file`]) that holds
//! the same flags. Parsed here; turned into a running server by `cli`.

pub mod commands;
pub mod file;
mod help;
mod unknown;
pub mod version;

use clap::{ArgAction, CommandFactory, FromArgMatches, Parser};
use serde::Serialize;
use std::path::PathBuf;

/// What `devtools-mcp -h` starts with: what the program is, for someone who has never met it.
const ABOUT: &str = "Lets an AI agent drive a real Chrome or Chromium: open pages, click and type, read the page, its console and network, record performance traces. An MCP server, a drop-in for chrome-devtools-mcp 1.11.0, in which every tool is a sandboxed WebAssembly component.";

/// `devtools-mcp --help`: the same, and how it is used.
const LONG_ABOUT: &str = "Lets an AI agent drive a real Chrome or Chromium: open pages, click and type, read the page, its console and network, record performance traces.

It is an MCP server: an MCP client (Claude, Cursor, VS Code, Gemini CLI...) starts it and speaks to it on stdin and stdout. Add `devtools-mcp` (with flags such as --headless or --isolated) as a server in the client's configuration; run alone, it waits for a client. It is a drop-in for chrome-devtools-mcp 1.11.0 (same flags, tools and answers), and every tool is a sandboxed WebAssembly component.

Try it from a shell: `devtools-mcp tools` lists the tools, `devtools-mcp call new_page '{\"url\": \"https://example.com\"}'` runs one. `devtools-mcp serve` serves MCP over HTTP to several tenants; `devtools-mcp plugin` writes and builds tools.";

/// The server's flags; one-shot commands and `serve` take them too.
#[derive(Parser, Serialize, Debug, Clone, Default)]
#[command(name = "devtools-mcp", version, about = ABOUT, long_about = LONG_ABOUT, args_override_self = true)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    #[command(subcommand)]
    #[serde(skip)]
    pub command: Option<commands::Command>,

    /// Attach to the user's running Chrome (144+) of --channel (default stable), found by the
    /// DevToolsActivePort file of its profile (or of --userDataDir). Remote debugging must be
    /// on: chrome://inspect/#remote-debugging.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set, conflicts_with_all = ["isolated", "executable_path", "browser_url", "ws_endpoint"])]
    pub auto_connect: Option<bool>,
    /// Connect to a running, debuggable Chrome, e.g. http://127.0.0.1:9222.
    #[arg(long, short = 'u', conflicts_with = "ws_endpoint")]
    pub browser_url: Option<String>,
    /// Connect to the browser's WebSocket endpoint (ws:// or wss://).
    #[arg(long, short = 'w')]
    pub ws_endpoint: Option<String>,
    /// Headers for the WebSocket connection, a JSON object, e.g. '{"Authorization":"Bearer
    /// token"}' (needs --wsEndpoint).
    #[arg(long, requires = "ws_endpoint", value_parser = parse_ws_headers)]
    #[serde(skip)]
    pub ws_headers: Option<WsHeaders>,
    /// Run the launched browser headless.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    pub headless: Option<bool>,
    /// Chrome or Chromium binary to launch.
    #[arg(long, short = 'e', conflicts_with_all = ["browser_url", "ws_endpoint"], value_parser = parse_browser_path)]
    pub executable_path: Option<PathBuf>,
    /// Use a temporary user-data-dir, deleted when the browser closes.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    pub isolated: Option<bool>,
    /// Persistent browser profile directory.
    #[arg(long, conflicts_with_all = ["browser_url", "ws_endpoint"])]
    pub user_data_dir: Option<PathBuf>,
    /// The Chrome channel to launch: stable, beta, dev or canary, where its installer puts it
    /// (without it: Chrome stable, then Chromium; --executablePath names any other binary).
    #[arg(long, value_parser = ["stable", "beta", "dev", "canary"], conflicts_with_all = ["browser_url", "ws_endpoint", "executable_path"])]
    pub channel: Option<String>,
    /// Initial viewport of the first page, WIDTHxHEIGHT.
    #[arg(long, value_parser = parse_viewport)]
    #[serde(serialize_with = "serialize_viewport")]
    pub viewport: Option<(u32, u32)>,
    /// Extra argument for the launched browser (repeatable).
    #[arg(long, allow_hyphen_values = true)]
    pub chrome_arg: Vec<String>,
    /// A default argument the launched browser is not given (repeatable), as Puppeteer's
    /// `ignoreDefaultArgs`: `--ignoreDefaultChromeArg=--hide-scrollbars`.
    #[arg(long, allow_hyphen_values = true)]
    pub ignore_default_chrome_arg: Vec<String>,
    /// Proxy server passed to the launched browser.
    #[arg(long)]
    pub proxy_server: Option<String>,
    /// Restricts the browser's network by blocking requests whose URL matches a pattern
    /// (https://urlpattern.spec.whatwg.org/; repeatable, or several values after one flag):
    /// navigations, redirects and subresources of every page, frame and worker. Pages already
    /// open at a blocked URL when the server attaches are left out. A pattern with a regexp
    /// group, a `:name` group or a partial IPv4 wildcard is refused.
    #[arg(long, num_args = 1.., action = ArgAction::Append)]
    #[serde(skip)]
    pub blocked_url_pattern: Vec<String>,
    /// Restricts the browser's network to requests whose URL matches one of the patterns
    /// (needs Chrome 149+); otherwise as --blockedUrlPattern, which it cannot be given with.
    #[arg(long, num_args = 1.., action = ArgAction::Append)]
    #[serde(skip)]
    pub allowed_url_pattern: Vec<String>,
    /// Ignore certificate errors in the launched browser.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    pub accept_insecure_certs: Option<bool>,

    /// Only the three slim tools (screenshot, navigate, evaluate).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    pub slim: Option<bool>,
    /// CLI semantics: disabled tools stay listed and answer with how to enable them.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    pub via_cli: Option<bool>,
    /// Require `pageId` on page-scoped tools and route calls by it (on by default, as in the
    /// reference 1.11.0; `--no-page-id-routing` turns it off). The old
    /// `--experimentalPageIdRouting` is accepted as an alias.
    #[arg(long, alias = "experimental-page-id-routing", num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    pub page_id_routing: Option<bool>,
    /// Add `structuredContent` to tool results.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    pub experimental_structured_content: Option<bool>,
    /// Enable coordinate-based tools.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    pub experimental_vision: Option<bool>,
    /// Beyond 1.11.0: `take_snapshot` and `wait_for` take `uid` (snapshot the subtree under an
    /// element) and `depth`, and the `find_in_page` tool finds elements by text or pattern.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    pub experimental_scoped_snapshots: Option<bool>,
    /// Beyond 1.11.0: when a call opens pages (a popup from a click, `window.open` in a script),
    /// its answer lists them under `## New pages` (and `newPages` in structured content).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    pub experimental_new_pages: Option<bool>,
    /// Beyond 1.11.0: what a page wrote (snapshot, console messages, network requests, dialog
    /// messages) is fenced in answers by delimiters with a random marker the page cannot forge,
    /// and the opening line says it is data, not instructions.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    pub experimental_fence_page_content: Option<bool>,
    /// Beyond 1.11.0: calls on different pages of one client run in parallel (a lock per page;
    /// the session is released while a page waits for text or for its screenshot), so one slow
    /// page no longer stalls the others; calls on the same page still run one at a time.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    pub experimental_parallel_pages: Option<bool>,
    /// Beyond 1.11.0: the MCP Tasks extension. A client that declares it gets a call still
    /// running after a second as a task (`tasks/get` for its state and answer, `tasks/cancel`
    /// to stop it and the scripts it started).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    pub experimental_tasks: Option<bool>,
    /// Beyond 1.11.0: when the browser dies (a crash, an out-of-memory kill), the next call
    /// starts it again and reopens the pages that were open, at their last URLs and with the
    /// same ids, and its answer says what came back.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    pub experimental_recovery: Option<bool>,
    /// Beyond 1.11.0: a download any action starts is saved into the session's own folder
    /// (--downloadsDir; a private temp folder by default; under `serve`, `downloads` in the
    /// tenant's sandbox root), never the user's download folder, and the answer lists it
    /// under `## Downloads`. Needs a browser the server launches.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    pub experimental_downloads: Option<bool>,
    /// Where downloads are saved (with --experimentalDownloads; not used by `serve`).
    #[arg(long)]
    pub downloads_dir: Option<PathBuf>,
    /// Largest file a page may download, in MiB (with --experimentalDownloads; default 100).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    pub max_download_mib: Option<u64>,
    /// Downloads one call may start (with --experimentalDownloads; default 5).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub max_downloads_per_call: Option<u64>,
    /// What one session's (a tenant's) downloads may hold in all, in MiB (with
    /// --experimentalDownloads; default 1024).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1 << 24))]
    pub max_downloads_mib: Option<u64>,
    /// Beyond 1.11.0: no answer's text exceeds N tokens (estimated as one per 3 bytes, at least
    /// 200). What does not fit is cut at a line boundary; the last line says how much was left
    /// out and gives the `cursor` the same tool takes for the rest (tools then list `cursor`),
    /// and clients that read resources get the whole text as a `resource_link`.
    #[arg(long, value_parser = clap::value_parser!(u32).range(200..))]
    pub max_output_tokens: Option<u32>,
    /// Beyond 1.11.0: named sessions. `save_session`, `restore_session`, `list_sessions` and
    /// `delete_session` keep the browser's cookies (HttpOnly too) and local storage under a
    /// name in this folder, sealed with the key of --sessionKeyFile or DEVTOOLS_MCP_SESSION_KEY
    /// (64 hex digits); under `serve`, each tenant's in a folder of its own.
    #[arg(long)]
    pub session_store: Option<PathBuf>,
    /// The file holding the key that seals named sessions (64 hex digits, readable by this
    /// user only; `openssl rand -hex 32`), with --sessionStore.
    #[arg(long)]
    pub session_key_file: Option<PathBuf>,
    /// Restores this named session when the browser starts, before the first call (with
    /// --sessionStore).
    #[arg(long)]
    pub session: Option<String>,
    /// Beyond 1.11.0: the `request_human` tool shows the page to a person through a live view
    /// (a one-time URL on 127.0.0.1: the page's screencast, with the person's clicks, keys and
    /// scrolls forwarded) and waits until they press Done. stdio only.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    pub experimental_human_in_the_loop: Option<bool>,
    /// Record screencasts with ffmpeg (the reference's legacy recorder) instead of Chrome's own.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    pub experimental_screencast: Option<bool>,
    /// The ffmpeg binary of the legacy screencast recorder (needs --experimentalScreencast).
    #[arg(long, requires = "experimental_screencast")]
    pub experimental_ffmpeg_path: Option<PathBuf>,
    /// Frames per second of screencast recordings (a positive integer).
    #[arg(long, alias = "experimental-screencast-fps", value_parser = parse_fps)]
    pub screencast_fps: Option<u32>,
    /// Automate DevTools windows: the launched browser opens DevTools for every tab
    /// (`--auto-open-devtools-for-tabs`). Input tools can then reach the DevTools console,
    /// which --no-javascript-evaluation does not restrict.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    pub experimental_devtools: Option<bool>,
    /// Accepted for compatibility (1.11.0 lists background pages and webviews as pages too):
    /// this server lists page targets only, and says so on stderr when it is set.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    pub experimental_include_all_pages: Option<bool>,
    /// Accepted for compatibility: 1.11.0 sends the URLs of performance traces to Google's
    /// CrUX API for field data. This server never sends anything anywhere: traces report lab
    /// data only, as 1.11.0 does with --no-performance-crux.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    pub performance_crux: Option<bool>,
    /// Enable interop tools such as get_tab_id.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set, hide = true)]
    pub experimental_interop_tools: Option<bool>,
    /// DevTools comment tools (hidden, as in the reference).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set, hide = true)]
    pub devtools_comments: Option<bool>,
    /// Enable the heap-snapshot analysis tools.
    #[arg(long, alias = "experimental-memory", num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    pub memory_debugging: Option<bool>,
    /// Input tools (on by default).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    pub category_input: Option<bool>,
    /// Navigation tools (on by default).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    pub category_navigation: Option<bool>,
    /// Debugging tools (on by default).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    pub category_debugging: Option<bool>,
    /// Memory tools (on by default; most heap tools also need --memoryDebugging).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    pub category_memory: Option<bool>,
    /// Emulation tools (on by default).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    pub category_emulation: Option<bool>,
    /// Performance tools (on by default).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    pub category_performance: Option<bool>,
    /// Network tools (on by default).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    pub category_network: Option<bool>,
    /// Extension tools (off by default).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    pub category_extensions: Option<bool>,
    /// Third-party developer tools exposed by pages (off by default).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    pub category_experimental_third_party: Option<bool>,
    /// WebMCP tools (off by default).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    pub category_experimental_webmcp: Option<bool>,
    /// Progressive Web App tools (off by default).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    pub category_pwa: Option<bool>,

    /// Default `take_screenshot` format.
    #[arg(long, value_parser = ["png", "jpeg", "webp"])]
    pub screenshot_format: Option<String>,
    /// Default JPEG/WebP quality (0-100).
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=100))]
    pub screenshot_quality: Option<u32>,
    /// Downscale screenshots wider than this (aspect ratio kept).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub screenshot_max_width: Option<u32>,
    /// Downscale screenshots taller than this (aspect ratio kept).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub screenshot_max_height: Option<u32>,

    /// Redact sensitive headers (cookies, authorization...) in network request details.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    pub redact_network_headers: Option<bool>,

    /// Evaluating caller-provided JavaScript (on by default). `--no-javascript-evaluation`
    /// disables evaluate_script and the slim evaluate, navigate_page's initScript, and
    /// navigations to javascript:, data: and vbscript: URLs. Page scripts still run.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    pub javascript_evaluation: Option<bool>,
    /// Navigations to file: URLs, view-source:file: included (on by default).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    pub file_navigations: Option<bool>,
    /// Resolve source maps (on by default; accepted for compatibility: console stack traces
    /// are reported as the browser gives them).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    pub source_maps: Option<bool>,
    /// A directory file parameters may point into (repeatable; `--workspace` is the same
    /// flag). The server's temp dir and the client's MCP roots are always allowed too.
    #[arg(long, alias = "workspace", conflicts_with = "allow_unrestricted_paths")]
    #[serde(skip)]
    pub filesystem_root: Vec<PathBuf>,
    /// Deprecated: use --workspace=/ instead. Lets file parameters point anywhere.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    pub allow_unrestricted_paths: Option<bool>,
    /// A JSON file of options (the flags' camelCase names); command-line flags win over it.
    /// Reloadable options are applied again when the file changes.
    #[arg(long)]
    #[serde(skip)]
    pub config: Option<PathBuf>,
    /// Load every tool component in this folder too (repeatable).
    #[arg(long)]
    pub plugin_dir: Vec<PathBuf>,
    /// Load the built-in tools from this folder instead of the ones embedded in the binary.
    #[arg(long)]
    pub builtin_plugins: Option<PathBuf>,
    /// Capability policy (TOML) for plugins: capabilities, URL patterns, categories, limits,
    /// sha256 pins and trusted signing keys. Without it, `--plugin-dir` plugins get read-only
    /// page access.
    #[arg(long)]
    #[serde(skip)]
    pub policy: Option<PathBuf>,
    /// Refuse `--plugin-dir` plugins that are unsigned or signed by a key the policy does not
    /// trust.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    #[serde(skip)]
    pub require_signed: Option<bool>,
    /// Start the browser and open its first page in the background once a client has
    /// initialized (after its first tools/list, or 100 ms), so the first call does not wait
    /// for them (default true; never when attaching to a running browser).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    #[serde(skip)]
    pub background_launch: Option<bool>,
    /// Reload plugin folders when components are added, changed or removed.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    #[serde(skip)]
    pub watch: Option<bool>,
    /// Wall-clock budget of one plugin call, in seconds (default 120).
    #[arg(long, value_parser = parse_seconds)]
    #[serde(skip)]
    pub plugin_timeout: Option<std::time::Duration>,
    /// CPU budget of one plugin call, in fuel units (about one per wasm instruction; default
    /// 500000000).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    #[serde(skip)]
    pub plugin_fuel: Option<u64>,
    /// Linear memory one plugin instance may grow to, in MiB (default 64, at most 1024).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
    #[serde(skip)]
    pub plugin_memory: Option<u64>,
    /// Where compiled tool code is cached (default: the user's cache dir).
    #[arg(long)]
    pub cache_dir: Option<PathBuf>,
    /// Append one local JSON line per tool call (tool, success, latency bucket, sanitized
    /// parameters) to this file. Nothing is ever sent anywhere.
    #[arg(long)]
    pub telemetry_file: Option<PathBuf>,
    /// Accepted for compatibility; this server never sends usage statistics.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set, hide = true)]
    pub usage_statistics: Option<bool>,
    /// Write the server's log to this file instead of stderr.
    #[arg(long)]
    pub log_file: Option<PathBuf>,
    /// The Node.js binary lighthouse_audit runs Lighthouse with (default: `node` on PATH).
    #[arg(long)]
    #[serde(skip)]
    pub node_path: Option<PathBuf>,
    /// The folder of Lighthouse's npm package (or one holding `node_modules/lighthouse`) for
    /// lighthouse_audit (default: `~/.cache/devtools-mcp/lighthouse`, then global npm folders).
    #[arg(long)]
    #[serde(skip)]
    pub lighthouse_path: Option<PathBuf>,

    /// `serve`: the address to serve MCP over streamable HTTP at (default 127.0.0.1:8808).
    #[arg(long, value_parser = parse_http_address)]
    #[serde(skip)]
    pub http: Option<std::net::SocketAddr>,
    /// `serve`: the tenants file (TOML): hashed bearer tokens, policies, quotas, roots.
    #[arg(long)]
    #[serde(skip)]
    pub tenants: Option<PathBuf>,
    /// `serve`: a `Host` to accept besides localhost, 127.0.0.1 and ::1 (repeatable), e.g.
    /// the name a load balancer forwards.
    #[arg(long)]
    #[serde(skip)]
    pub allowed_host: Vec<String>,
    /// `serve`: a browser origin allowed to call, e.g. https://app.example.com:443
    /// (repeatable). Requests with any other `Origin` are refused.
    #[arg(long)]
    #[serde(skip)]
    pub allowed_origin: Vec<String>,
    /// `serve`: the largest request body accepted, in bytes (default 1 MiB, at most 1 GiB).
    #[arg(long, value_parser = parse_body_bytes)]
    #[serde(skip)]
    pub max_body_bytes: Option<usize>,
    /// `serve`: close a tenant's browser context after this many seconds without calls
    /// (default 600, at most 31536000: a year).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=31_536_000))]
    #[serde(skip)]
    pub idle_timeout_secs: Option<u64>,
    /// `serve`: close an idle tenant's pages after this many seconds without calls, keeping
    /// its browser context (cookies, storage); its next call reopens them at their URLs under
    /// the same ids, and says so (default: never; at most 31536000).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=31_536_000))]
    #[serde(skip)]
    pub discard_idle_secs: Option<u64>,
    /// `serve`: tenants this instance holds at once (default: no limit). Past it, a new
    /// tenant's requests are answered 503 with Retry-After (a load balancer retries them on
    /// another instance) and `/readyz` answers 503.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    #[serde(skip)]
    pub max_tenants: Option<u64>,
    /// `serve`: on SIGTERM, let in-flight calls finish for this many seconds before
    /// cancelling them (default 10, at most 3600).
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=3600))]
    #[serde(skip)]
    pub shutdown_grace_secs: Option<u64>,
    /// `serve`: connections open at once (default: the open-files limit, raised to its hard
    /// limit at start, less a reserve of a quarter, at least 256, for the browser and tenants).
    #[arg(long)]
    #[serde(skip)]
    pub max_connections: Option<usize>,
    /// `serve`: connections open at once from one client address (default 256).
    #[arg(long)]
    #[serde(skip)]
    pub max_connections_per_ip: Option<usize>,
    /// `serve`: seconds a client has to send a request's headers; also how long an idle
    /// connection is kept (default 10).
    #[arg(long)]
    #[serde(skip)]
    pub header_read_timeout_secs: Option<u64>,
    /// `serve`: seconds a client has to send a request's body (default 30).
    #[arg(long)]
    #[serde(skip)]
    pub body_read_timeout_secs: Option<u64>,
}

impl Args {
    /// Parses the process arguments, accepting the reference's spellings.
    pub fn parse_compatible() -> Args {
        Args::try_parse_compatible(std::env::args()).unwrap_or_else(|error| error.exit())
    }

    /// Parses an explicit argument list (tests, the one-shot CLI).
    pub fn try_parse_compatible<I: IntoIterator<Item = String>>(
        argv: I,
    ) -> Result<Args, clap::Error> {
        let argv: Vec<String> = argv.into_iter().collect();
        if let Some(help) = help::requested(&argv) {
            return Err(help);
        }
        let (normalized, ignored) = normalize(argv.clone());
        let mut args = parse(normalized)?;
        unknown::report(&args, &ignored)?;
        if let Some(config) = args.config.clone() {
            let options = file::read(&config).map_err(|message| {
                Args::command().error(clap::error::ErrorKind::InvalidValue, message)
            })?;
            let (normalized, _) = normalize(file::with_options(argv, &options));
            args = parse(normalized).map_err(|error| {
                Args::command().error(
                    clap::error::ErrorKind::InvalidValue,
                    format!(
                        "Invalid JSON config file {}: {}",
                        config.display(),
                        file::first_line(&error.to_string())
                    ),
                )
            })?;
        }
        args.apply_defaults();
        args.apply_cli_defaults();
        args.check_conflicts()?;
        Ok(args)
    }

    /// Conflicts that depend on a flag's value, which clap's `conflicts_with` cannot see: as in
    /// the reference, `--categoryPwa=false` conflicts with nothing. The PWA tools need the
    /// DevTools pipe of a browser this server launches.
    fn check_conflicts(&self) -> Result<(), clap::Error> {
        if !self.blocked_url_pattern.is_empty() && !self.allowed_url_pattern.is_empty() {
            return Err(Args::command().error(
                clap::error::ErrorKind::ArgumentConflict,
                "Arguments blockedUrlPattern and allowedUrlPattern are mutually exclusive",
            ));
        }
        self.url_patterns().map_err(|message| {
            Args::command().error(clap::error::ErrorKind::InvalidValue, message)
        })?;
        if self.category_pwa == Some(true) {
            let connecting = [
                ("browserUrl", self.browser_url.is_some()),
                ("wsEndpoint", self.ws_endpoint.is_some()),
            ];
            if let Some((flag, _)) = connecting.iter().find(|(_, given)| *given) {
                return Err(Args::command().error(
                    clap::error::ErrorKind::ArgumentConflict,
                    format!("Arguments categoryPwa and {flag} are mutually exclusive"),
                ));
            }
        }
        Ok(())
    }

    /// The reference 1.11.0's defaults for flags that are on unless turned off.
    fn apply_defaults(&mut self) {
        for flag in [
            &mut self.page_id_routing,
            &mut self.javascript_evaluation,
            &mut self.file_navigations,
            &mut self.source_maps,
        ] {
            flag.get_or_insert(true);
        }
        // An empty `--executablePath=` (what an MCP bundle's unset browser path becomes) means
        // "find the browser", as the reference's Puppeteer reads an empty executablePath.
        if self
            .executable_path
            .as_ref()
            .is_some_and(|path| path.as_os_str().is_empty())
        {
            self.executable_path = None;
        }
        if self.allow_unrestricted_paths == Some(true) {
            eprintln!(
                "--allowUnrestrictedPaths is deprecated: use --workspace=/ instead (file parameters may point anywhere)."
            );
        }
        for note in self.compatibility_notes() {
            eprintln!("{note}");
        }
    }

    /// What the flags 1.11.0 has and this server accepts without their full effect do here,
    /// said when they are turned on so that none is silently ignored.
    pub fn compatibility_notes(&self) -> Vec<&'static str> {
        let mut notes = Vec::new();
        if self.performance_crux == Some(true) {
            notes.push(
                "--performanceCrux: this server never sends trace URLs to the CrUX API (nor anything anywhere); performance tools report lab data only, as with --no-performance-crux.",
            );
        }
        if self.experimental_include_all_pages == Some(true) {
            notes.push(
                "--experimentalIncludeAllPages: this server lists page targets only. The kinds the flag adds in 1.11.0, extension background pages and webviews, do not exist in Chromium 139 and later (Manifest V2 extensions are refused, Chrome Apps are gone), so with those browsers every page is listed either way.",
            );
        }
        notes
    }

    /// The patterns of `--blockedUrlPattern` or `--allowedUrlPattern`, validated with the
    /// reference's messages; `None` when neither restricts the network.
    pub fn url_patterns(&self) -> Result<Option<crate::policy::url_patterns::UrlPatterns>, String> {
        use crate::policy::url_patterns::{Restriction, UrlPatterns};
        match UrlPatterns::parse(Restriction::Blocked, &self.blocked_url_pattern)? {
            Some(blocked) => Ok(Some(blocked)),
            None => UrlPatterns::parse(Restriction::Allowed, &self.allowed_url_pattern),
        }
    }

    /// Whether `pageId` routes page-scoped calls (never for the slim tools).
    pub fn page_id_routing(&self) -> bool {
        self.page_id_routing != Some(false) && !Args::enabled(self.slim)
    }

    /// The roots file parameters may point into besides the temp dir and the client's roots.
    pub fn filesystem_roots(&self) -> Vec<PathBuf> {
        let mut roots = self.filesystem_root.clone();
        if Args::enabled(self.allow_unrestricted_paths) {
            roots.push(PathBuf::from("/"));
        }
        roots
    }

    /// With `--viaCli` the reference turns on headless, memory debugging, extensions and
    /// structured content unless they were given.
    fn apply_cli_defaults(&mut self) {
        if self.command.is_some() {
            self.via_cli.get_or_insert(true);
        }
        if self.via_cli == Some(true) {
            let connecting = self.browser_url.is_some()
                || self.ws_endpoint.is_some()
                || Args::enabled(self.auto_connect);
            if !connecting {
                self.headless.get_or_insert(true);
            }
            // `serve` offers tenants what the same flags offer on stdio, never more: the heap
            // and extension tools stay opt-in there (a tenant's flags can only narrow them).
            if !matches!(self.command, Some(commands::Command::Serve)) {
                self.memory_debugging.get_or_insert(true);
                self.category_extensions.get_or_insert(true);
            }
            self.experimental_structured_content.get_or_insert(true);
        }
    }

    /// The per-call plugin limits the flags set (policy rules override them per plugin).
    pub fn plugin_limits(&self) -> crate::policy::limits::Limits {
        let mut limits = crate::policy::limits::Limits::default();
        if let Some(timeout) = self.plugin_timeout {
            limits.wall_clock = timeout;
        }
        if let Some(fuel) = self.plugin_fuel {
            limits.fuel = fuel;
        }
        if let Some(mib) = self.plugin_memory.and_then(|mib| usize::try_from(mib).ok()) {
            limits.memory_bytes = mib << 20;
        }
        limits
    }

    /// The flags as the JSON object tool definitions are computed from.
    pub fn flags_json(&self) -> serde_json::Map<String, serde_json::Value> {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(map)) => map
                .into_iter()
                .filter(|(_, value)| !value.is_null())
                .collect(),
            _ => serde_json::Map::new(),
        }
    }

    pub fn enabled(value: Option<bool>) -> bool {
        value == Some(true)
    }
}

/// Parses normalized arguments; `--version` says how the binary was built ([`version`]).
fn parse(argv: Vec<String>) -> Result<Args, clap::Error> {
    let mut command = Args::command();
    if let Some(version) = version::current() {
        command = command.version(version);
    }
    let mut matches = command.try_get_matches_from_mut(argv)?;
    Args::from_arg_matches_mut(&mut matches).map_err(|error| error.format(&mut command))
}

/// Rewrites `--fooBar` to `--foo-bar` and `--no-foo-bar` to `--foo-bar=false`, so one clap
/// definition accepts every spelling the reference's yargs accepts. Flags no command knows are
/// left out, with their value, and returned (as written) for the reference's warning.
fn normalize<I: IntoIterator<Item = String>>(argv: I) -> (Vec<String>, Vec<String>) {
    let argv = subcommand_last(argv.into_iter().collect());
    let mut out = Vec::new();
    let mut ignored = Vec::new();
    let mut after_double_dash = false;
    let mut argv = argv.into_iter().enumerate().peekable();
    while let Some((index, arg)) = argv.next() {
        // The value of `--chrome-arg` (or `--ignore-default-chrome-arg`) is a browser flag:
        // pass it through untouched.
        let is_chrome_arg_value = out.last().is_some_and(|previous: &String| {
            previous == "--chrome-arg" || previous == "--ignore-default-chrome-arg"
        });
        if index == 0
            || after_double_dash
            || is_chrome_arg_value
            || !arg.starts_with("--")
            || arg == "--"
        {
            after_double_dash |= arg == "--";
            out.push(arg);
            continue;
        }
        let (name, value) = match arg[2..].split_once('=') {
            Some((name, value)) => (name.to_string(), Some(value.to_string())),
            None => (arg[2..].to_string(), None),
        };
        let kebab = kebab(&name);
        let known =
            unknown::is_known(&kebab) || kebab.strip_prefix("no-").is_some_and(unknown::is_known);
        if !known {
            ignored.push(format!("--{name}"));
            // Its value, if it has one, goes with it (`--x value`), as yargs reads it.
            if value.is_none() {
                argv.next_if(|(_, next)| !next.starts_with('-') && !unknown::is_subcommand(next));
            }
            continue;
        }
        match (kebab.strip_prefix("no-"), value) {
            (Some(positive), None) => {
                out.push(format!("--{positive}=false"));
            }
            (_, Some(value)) => out.push(format!("--{kebab}={value}")),
            // A boolean flag takes a following literal `true`/`false` (as yargs does) and
            // nothing else: `--page-id-routing serve` must leave `serve` a subcommand.
            (_, None) if is_optional_value_flag(&kebab) => {
                let value = argv
                    .next_if(|(_, next)| next == "true" || next == "false")
                    .map_or_else(|| "true".to_string(), |(_, value)| value);
                out.push(format!("--{kebab}={value}"));
            }
            (_, None) => out.push(format!("--{kebab}")),
        }
    }
    (out, ignored)
}

/// `devtools-mcp call <tool> [params] --flags...` reads naturally, but clap wants the server
/// flags before the subcommand: move the subcommand and its positionals to the end.
fn subcommand_last(mut argv: Vec<String>) -> Vec<String> {
    let positionals = match argv.get(1).map(String::as_str) {
        Some("call") => 3,
        Some("tools") | Some("serve") => 1,
        Some("tenant") => 2,
        _ => return argv,
    };
    let mut taken = vec![argv.remove(1)];
    while taken.len() < positionals && argv.get(1).is_some_and(|arg| !arg.starts_with('-')) {
        taken.push(argv.remove(1));
    }
    // `call t '{}' --headless` becomes `--headless call t '{}'`: `normalize` gives the boolean
    // flag its value, so `call` stays the subcommand. A help flag stays after it, so that
    // `tenant hash-token --help` is the subcommand's help, not the server's.
    let end = argv
        .iter()
        .position(|arg| arg == "--")
        .unwrap_or(argv.len());
    let help = argv[..end]
        .iter()
        .position(|arg| arg == "--help" || arg == "-h");
    let help = help.map(|index| argv.remove(index));
    argv.extend(taken);
    argv.extend(help);
    argv
}

/// Whether `--flag` (any spelling) is a boolean flag whose value is optional.
fn is_optional_value_flag(arg: &str) -> bool {
    let name = kebab(arg.trim_start_matches('-'));
    if name.starts_with("no-") {
        return false;
    }
    Args::command()
        .get_arguments()
        .find(|argument| argument.get_long() == Some(name.as_str()))
        .and_then(|argument| argument.get_num_args())
        .is_some_and(|range| range.min_values() == 0)
}

pub(crate) fn kebab(name: &str) -> String {
    let mut kebab = String::with_capacity(name.len() + 4);
    for character in name.chars() {
        if character.is_ascii_uppercase() {
            kebab.push('-');
            kebab.push(character.to_ascii_lowercase());
        } else {
            kebab.push(character);
        }
    }
    kebab
}

/// A plugin budget in seconds: above 0, at most a day (larger values overflow deadlines).
fn parse_seconds(value: &str) -> Result<std::time::Duration, String> {
    let invalid = |why: String| format!("Invalid duration \"{value}\": {why}, e.g. 30.");
    let seconds = value
        .trim()
        .parse::<f64>()
        .map_err(|_| invalid("expected a number of seconds".into()))?;
    crate::policy::limits::wall_clock_from_secs(seconds).map_err(invalid)
}

/// `--http`: an IP address and port, or `localhost:PORT` (the loopback address, 127.0.0.1).
/// Other names are refused: a name can resolve to several addresses, or to another one later.
fn parse_http_address(value: &str) -> Result<std::net::SocketAddr, String> {
    if let Ok(address) = value.trim().parse() {
        return Ok(address);
    }
    let refused = || {
        format!(
            "Invalid address \"{value}\": expected IP:PORT, e.g. 127.0.0.1:8808, [::1]:8808, localhost:8808 or 0.0.0.0:8808 (every interface)."
        )
    };
    let (host, port) = value.trim().rsplit_once(':').ok_or_else(refused)?;
    let port: u16 = port.parse().map_err(|_| refused())?;
    match host.eq_ignore_ascii_case("localhost") {
        true => Ok((std::net::Ipv4Addr::LOCALHOST, port).into()),
        false => Err(refused()),
    }
}

/// Any path, the empty one too (clap's own parser refuses it): see `apply_defaults`.
fn parse_browser_path(value: &str) -> Result<PathBuf, String> {
    Ok(PathBuf::from(value))
}

fn parse_body_bytes(value: &str) -> Result<usize, String> {
    match value.trim().parse::<usize>() {
        Ok(bytes) if (1..=1 << 30).contains(&bytes) => Ok(bytes),
        _ => Err(format!(
            "Invalid size \"{value}\": expected a number of bytes from 1 to 1073741824 (1 GiB)."
        )),
    }
}

fn parse_fps(value: &str) -> Result<u32, String> {
    match value.parse::<u32>() {
        Ok(fps) if fps > 0 => Ok(fps),
        _ => Err(format!(
            "Invalid screencastFps {value}. Expected a positive integer."
        )),
    }
}

/// `--wsHeaders`: the JSON object of headers sent with the WebSocket handshake.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WsHeaders(pub Vec<(String, String)>);

fn parse_ws_headers(value: &str) -> Result<WsHeaders, String> {
    let parsed: serde_json::Value = serde_json::from_str(value)
        .map_err(|error| format!("Invalid JSON for wsHeaders: {error}"))?;
    let serde_json::Value::Object(map) = parsed else {
        return Err("Invalid JSON for wsHeaders: Headers must be a JSON object".into());
    };
    map.into_iter()
        .map(|(name, value)| match value {
            serde_json::Value::String(text) => Ok((name, text)),
            other => Err(format!(
                "Invalid JSON for wsHeaders: the value of header \"{name}\" must be a string, not {other}"
            )),
        })
        .collect::<Result<_, _>>()
        .map(WsHeaders)
}

fn parse_viewport(value: &str) -> Result<(u32, u32), String> {
    let invalid = || format!("Invalid viewport \"{value}\": expected WIDTHxHEIGHT, e.g. 1280x720.");
    let (width, height) = value.split_once('x').ok_or_else(invalid)?;
    let width: u32 = width.trim().parse().map_err(|_| invalid())?;
    let height: u32 = height.trim().parse().map_err(|_| invalid())?;
    if width == 0 || height == 0 {
        return Err(invalid());
    }
    Ok((width, height))
}

fn serialize_viewport<S: serde::Serializer>(
    viewport: &Option<(u32, u32)>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match viewport {
        Some((width, height)) => serializer.serialize_str(&format!("{width}x{height}")),
        None => serializer.serialize_none(),
    }
}

#[cfg(test)]
mod command_line_tests;
#[cfg(test)]
mod tests;
