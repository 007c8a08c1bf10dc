//! `devtools-mcp plugin ...`: what a plugin author needs, from an empty folder to a signed
//! component the server loads: `new`, `build`, `check`, `keygen` and `sign`.

mod build;
mod check;
mod scaffold;

use crate::policy::signature;
use std::path::{Path, PathBuf};

/// The plugin subcommands.
#[derive(clap::Subcommand, Debug, Clone)]
pub enum PluginCommand {
    /// Create a ready-to-build tool crate using the devtools-tool SDK.
    New {
        /// The tool name (snake_case), e.g. page_title. Also the crate's folder.
        name: String,
        /// Create the crate inside this folder (default: the current folder).
        #[arg(long, default_value = ".")]
        dir: PathBuf,
        /// Depend on the devtools-tool SDK in this folder (plugins/sdk of the devtools-mcp
        /// sources) instead of the released crate.
        #[arg(long, alias = "sdk")]
        sdk_path: Option<PathBuf>,
    },
    /// Build a tool crate for wasm32-unknown-unknown and turn it into a component.
    Build {
        /// The crate folder (default: the current folder).
        #[arg(default_value = ".")]
        dir: PathBuf,
        /// Where to write `<name>.wasm` (default: the crate folder).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Print a component's definition, imports and needed capabilities, and whether the
    /// policy grants them.
    Check {
        /// The component (.wasm).
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
    /// Sign a component: writes `<file>.sig` beside it.
    Sign {
        /// The component (.wasm).
        file: PathBuf,
        /// The private key file written by `plugin keygen`.
        #[arg(long)]
        key: PathBuf,
    },
}

/// Runs one plugin subcommand; the error is the whole message for the user. Nothing here
/// writes compiled code anywhere (`check` compiles in memory).
pub async fn run(command: &PluginCommand) -> Result<(), String> {
    match command {
        PluginCommand::New {
            name,
            dir,
            sdk_path,
        } => {
            let created = scaffold::create(name, dir, sdk_path.as_deref())?;
            println!("Created {}.", created.display());
            println!(
                "Next: `devtools-mcp plugin build {}`, then start the server with --plugin-dir {}.",
                created.display(),
                created.join("dist").display()
            );
            Ok(())
        }
        PluginCommand::Build { dir, out } => {
            let component = build::build(dir, out.as_deref())?;
            println!("Built {}.", component.display());
            check::print(&component, None, "{}").await
        }
        PluginCommand::Check {
            file,
            policy,
            flags,
        } => check::print(file, policy.as_deref(), flags).await,
        PluginCommand::Keygen { key_file } => keygen(key_file),
        PluginCommand::Sign { file, key } => sign(file, key),
    }
}

fn keygen(key_file: &Path) -> Result<(), String> {
    let (private_key, public_key) = signature::generate_key()?;
    write_new_private(key_file, &format!("{private_key}\n"))?;
    println!("Wrote the private key to {}.", key_file.display());
    println!("Public key (add it to [signing] trusted_keys in the policy):");
    println!("{public_key}");
    Ok(())
}

fn sign(file: &Path, key_file: &Path) -> Result<(), String> {
    let bytes =
        std::fs::read(file).map_err(|error| format!("Cannot read {}: {error}", file.display()))?;
    if !wasmparser::Parser::is_component(&bytes) && !wasmparser::Parser::is_core_wasm(&bytes) {
        return Err(format!("{} is not a WebAssembly file.", file.display()));
    }
    let key = std::fs::read_to_string(key_file)
        .map_err(|error| format!("Cannot read the key {}: {error}", key_file.display()))?;
    let signed = signature::sign(&bytes, &key)
        .map_err(|error| format!("{}: {error}", key_file.display()))?;
    let path = signature::signature_path(file);
    std::fs::write(&path, signed)
        .map_err(|error| format!("Cannot write {}: {error}", path.display()))?;
    println!("Wrote {}.", path.display());
    Ok(())
}

/// Creates a file only this user can read, refusing to replace one.
fn write_new_private(path: &Path, text: &str) -> Result<(), String> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|error| format!("Cannot create {}: {error}", path.display()))?;
    file.write_all(text.as_bytes())
        .map_err(|error| format!("Cannot write {}: {error}", path.display()))
}
