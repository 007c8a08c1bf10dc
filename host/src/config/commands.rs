//! The subcommands: without one the server speaks MCP over stdio.

use std::path::PathBuf;

/// One-shot commands; without one the server speaks MCP over stdio.
#[derive(clap::Subcommand, Debug, Clone)]
pub enum Command {
    /// Run one tool and print its response (CLI semantics: a disabled tool explains how to
    /// enable it). With --browserUrl, several calls can share one browser.
    Call {
        /// The tool name, e.g. take_snapshot.
        tool: String,
        /// Its parameters as a JSON object, e.g. '{"url": "http://127.0.0.1:8080"}'.
        params: Option<String>,
    },
    /// List the tools with their category and whether the flags enable them.
    Tools,
    /// Serve MCP over streamable HTTP to the tenants of --tenants (see --http).
    Serve,
    /// Tenant administration.
    Tenant {
        #[command(subcommand)]
        action: TenantAction,
    },
    /// Write, build, check and sign tool plugins.
    Plugin {
        #[command(subcommand)]
        command: PluginCommand,
    },
    /// Sign and verify release files (SHA256SUMS) with the plugins' ed25519 keys.
    Release {
        #[command(subcommand)]
        command: ReleaseCommand,
    },
}

/// The release subcommands: the same keys and signature files as `plugin keygen`/`sign`, for
/// any file, so a downloaded release is checked with the binary it ships.
#[derive(clap::Subcommand, Debug, Clone)]
pub enum ReleaseCommand {
    /// Sign any file (e.g. SHA256SUMS): writes `<file>.sig` beside it.
    Sign {
        /// The file to sign.
        file: PathBuf,
        /// The private key file written by `plugin keygen`.
        #[arg(long)]
        key: PathBuf,
    },
    /// Check that a file is signed by a key: exits non-zero unless it is.
    Verify {
        /// The signed file (e.g. SHA256SUMS).
        file: PathBuf,
        /// The public key (base64, as `plugin keygen` prints it), or a file holding it.
        #[arg(long)]
        key: String,
        /// The signature file (default: `<file>.sig`).
        #[arg(long)]
        signature: Option<PathBuf>,
    },
}

#[derive(clap::Subcommand, Debug, Clone)]
pub enum TenantAction {
    /// Read a bearer token on stdin and print the token_sha256 to put in the tenants file.
    HashToken,
}

/// The plugin subcommands.
#[derive(clap::Subcommand, Debug, Clone)]
pub enum PluginCommand {
    /// Create a ready-to-build tool: a Rust crate using the devtools-tool SDK, or a
    /// TypeScript or Python project against the contract.
    New {
        /// The tool name (snake_case), e.g. page_title. Also the crate's folder.
        name: String,
        /// Create the crate inside this folder (default: the current folder).
        #[arg(long, default_value = ".")]
        dir: PathBuf,
        /// The tool's language: rust (the default), ts (TypeScript, built with jco and
        /// componentize-js from npm) or python (built with componentize-py from PyPI).
        #[arg(long, value_enum, default_value = "rust")]
        lang: Language,
        /// What the tool does: page-reader (reads the selected page; the default), action
        /// (follows a link by its text and checks where the page landed) or structured
        /// (answers JSON). Each comes with a fixture page and a test (`plugin test DIR`).
        #[arg(long, value_enum, default_value = "page-reader")]
        template: Template,
        /// Depend on the devtools-tool SDK in this folder (plugins/sdk of the devtools-mcp
        /// sources) instead of writing the SDK this server carries beside the crate.
        #[arg(long, alias = "sdk", conflicts_with = "sdk_version")]
        sdk_path: Option<PathBuf>,
        /// Depend on the published devtools-tool crate at this version instead of writing the
        /// SDK this server carries beside the crate.
        #[arg(long)]
        sdk_version: Option<String>,
        /// Create the tool even when its name is a built-in tool's (it then loads only where
        /// that built-in does not, e.g. with --builtinPlugins pointing at a folder without it).
        #[arg(long)]
        force: bool,
    },
    /// Build a tool crate for wasm32-unknown-unknown and turn it into a component.
    Build {
        /// The crate folder (default: the current folder).
        #[arg(default_value = ".")]
        dir: PathBuf,
        /// Where to write `<name>.wasm` (default: the crate folder).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Fail (exit 1) when the default policy would refuse the component or a capability
        /// its code uses; without it they are warnings.
        #[arg(long)]
        strict: bool,
    },
    /// Print a component's definition, imports and needed capabilities, and whether the
    /// policy grants them.
    Check {
        /// The component (.wasm), or a tool's folder made by `plugin new` (built first).
        file: PathBuf,
        /// The policy to check against (default: the built-in default for --plugin-dir).
        #[arg(long)]
        policy: Option<PathBuf>,
        /// Server flags (JSON object) to evaluate the definition with.
        #[arg(long, default_value = "{}")]
        flags: String,
    },
    /// Create an ed25519 signing key; prints the public key for the policy's trusted_keys.
    Keygen {
        /// Where to write the private key (created with mode 0600; never overwritten).
        key_file: PathBuf,
    },
    /// Sign a component or a plugin index: writes `<file>.sig` beside it.
    Sign {
        /// The component (.wasm).
        file: PathBuf,
        /// The private key file written by `plugin keygen`.
        #[arg(long)]
        key: PathBuf,
    },
    /// Push a component (and its signature) to an OCI registry as a WebAssembly artifact.
    Publish {
        /// The component (.wasm); its `.sig` beside it goes along unless --key signs anew.
        file: PathBuf,
        /// Where: oci://HOST[:PORT]/NAME:TAG. Credentials, if the registry needs them, come
        /// from DEVTOOLS_MCP_REGISTRY_USERNAME and DEVTOOLS_MCP_REGISTRY_PASSWORD.
        reference: String,
        /// Sign with this private key (from `plugin keygen`) while publishing.
        #[arg(long)]
        key: Option<PathBuf>,
    },
    /// Find plugins in a plugin index by words (in their names, descriptions and
    /// capabilities); without words, list them all.
    Search {
        words: Vec<String>,
        #[command(flatten)]
        index: IndexArgs,
    },
    /// Show one plugin of a plugin index: its description, the capabilities it asks for, its
    /// versions and their OCI references.
    Info {
        name: String,
        #[command(flatten)]
        index: IndexArgs,
    },
    /// Write a plugin index (a JSON file to host over HTTPS, signed with `plugin sign`).
    #[command(subcommand)]
    Index(IndexCommand),
    /// Install a plugin from an OCI registry into a plugin folder, after checking its digest,
    /// its signature against the policy's trusted keys, and that it loads; records the digest
    /// in a lock file. Without a reference, installs everything the lock file pins.
    Install {
        /// oci://HOST[:PORT]/NAME:TAG (or NAME@sha256:DIGEST).
        reference: Option<String>,
        /// The plugin folder (the server's --plugin-dir).
        #[arg(long)]
        plugin_dir: PathBuf,
        /// The operator's policy: its trusted keys decide the signature, its rules the grants.
        #[arg(long)]
        policy: Option<PathBuf>,
        /// The lock file (default: next to the policy, `<policy>.lock`; without a policy,
        /// `plugins.lock` in the plugin folder).
        #[arg(long)]
        lock: Option<PathBuf>,
        /// Refuse a reference the lock file does not pin yet (what the lock pins is always
        /// installed, unless --update).
        #[arg(long, conflicts_with = "update")]
        locked: bool,
        /// Follow the tag: install what it points at now, even when the lock file pins another
        /// digest, and record the new digest (without a reference: every plugin of the lock).
        #[arg(long)]
        update: bool,
        /// Install an unsigned artifact, or one signed by a key the policy does not trust
        /// (never when the policy requires signatures); read such a plugin index too.
        #[arg(long)]
        allow_untrusted: bool,
        /// The plugin index a NAME[@VERSION] reference resolves through (a URL or a file).
        #[arg(long, env = "DEVTOOLS_MCP_PLUGIN_INDEX")]
        index: Option<String>,
    },
    /// Run a plugin's tool once in a real (headless) browser, on a page of yours served on
    /// loopback, and print its answer: iterate without an MCP client.
    Test {
        /// The component (.wasm), or a crate folder made by `plugin new` (built first).
        plugin: PathBuf,
        /// The tool's parameters, a JSON object.
        #[arg(long, default_value = "{}")]
        params: String,
        /// An HTML file to open first, served on 127.0.0.1 with the files of its folder.
        #[arg(long, conflicts_with = "url")]
        page: Option<PathBuf>,
        /// A URL to open first instead.
        #[arg(long)]
        url: Option<String>,
        /// The policy to test under (default: grant what the component's imports ask for).
        #[arg(long)]
        policy: Option<PathBuf>,
        /// Fail unless the answer contains this text (repeatable). Without --page, --url,
        /// --params and --expect, a folder made by `plugin new` runs its own test
        /// (`test/test.json` on `test/page.html`).
        #[arg(long)]
        expect: Vec<String>,
        /// Show the browser window.
        #[arg(long)]
        headful: bool,
        /// Keep running: test again after every saved change (a project folder is rebuilt,
        /// the component loaded again, the page opened afresh; the browser stays up).
        #[arg(long, num_args = 0..=1, default_missing_value = "true", action = clap::ArgAction::Set)]
        watch: Option<bool>,
    },
}

/// Where a plugin index is, and how far to trust it.
#[derive(clap::Args, Debug, Clone)]
pub struct IndexArgs {
    /// The index: an https:// URL (http:// only on this machine) or a file. Its signature is
    /// `<index>.sig`.
    #[arg(long, env = "DEVTOOLS_MCP_PLUGIN_INDEX")]
    pub index: String,
    /// The policy whose trusted keys must have signed the index.
    #[arg(long)]
    pub policy: Option<PathBuf>,
    /// Read an unsigned index, or one signed by a key the policy does not trust.
    #[arg(long)]
    pub allow_untrusted: bool,
}

/// `plugin index ...`.
#[derive(clap::Subcommand, Debug, Clone)]
pub enum IndexCommand {
    /// Add (or update) the entry of a published component: its name, description and
    /// capabilities from the component, its digest from the registry (which must hold the
    /// same bytes under the reference's tag, a version such as 1.0.0).
    Add {
        /// The index file (created if missing).
        index: PathBuf,
        /// The component (.wasm) that was published.
        file: PathBuf,
        /// Where it was published: oci://HOST[:PORT]/NAME:VERSION.
        #[arg(long)]
        reference: String,
    },
}

/// What a new tool does (`plugin new --template`): the same three in every language.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Template {
    /// Reads the selected page (its URL) and answers in a line of text.
    PageReader,
    /// Follows a link by its text and checks where the page landed.
    Action,
    /// Answers JSON: the page's title, URL and headings.
    Structured,
}

/// The language of a new tool (`plugin new --lang`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Language {
    Rust,
    #[value(alias = "typescript", alias = "js", alias = "javascript")]
    Ts,
    #[value(alias = "py")]
    Python,
}
