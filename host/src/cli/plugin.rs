//! `devtools-mcp plugin ...`: what a plugin author needs, from an empty folder to a signed
//! component the server loads: `new`, `build`, `check`, `test`, `keygen` and `sign`; and for
//! distribution, `publish` to and `install` from an OCI registry.

mod atomic;
mod build;
mod catalog;
mod check;
mod install;
mod lock;
mod oci;
mod scaffold;
mod test;
mod watch;

/// The registry manifest check, public for the fuzz target `oci_manifest`.
pub use oci::manifest::{PluginManifest, read as read_oci_manifest};

use crate::config::commands::PluginCommand;
use crate::policy::signature;
use std::path::{Path, PathBuf};

/// Runs one plugin subcommand; the error is the whole message for the user. Nothing here
/// writes compiled code anywhere (`check` compiles in memory).
pub async fn run(command: &PluginCommand) -> Result<(), String> {
    match command {
        PluginCommand::New {
            name,
            dir,
            lang,
            template,
            sdk_path,
            sdk_version,
            force,
        } => {
            let sdk = match (sdk_path, sdk_version) {
                (Some(path), _) => scaffold::Sdk::Path(path),
                (None, Some(version)) => scaffold::Sdk::Version(version),
                (None, None) => scaffold::Sdk::Vendored,
            };
            let created = scaffold::create(name, dir, *lang, *template, sdk, *force)?;
            println!("Created {}.", created.display());
            println!("{}", scaffold::next_steps(&created));
            Ok(())
        }
        PluginCommand::Build { dir, out, strict } => {
            let component = build::build(dir, out.as_deref())?;
            println!("Built {}.", component.display());
            check::print_after_build(&component, *strict).await
        }
        PluginCommand::Check {
            file,
            policy,
            flags,
        } => check::print(&component_of(file)?, policy.as_deref(), flags).await,
        PluginCommand::Search { words, index } => {
            let catalog = catalog::load(&index_source(index))
                .await
                .map_err(|error| error.to_string())?;
            let found = catalog::search(&catalog, words);
            if found.is_empty() {
                println!(
                    "No plugin in {} matches {:?}.",
                    index.index,
                    words.join(" ")
                );
            }
            for entry in found {
                println!("{}", catalog::summary(entry));
            }
            Ok(())
        }
        PluginCommand::Info { name, index } => {
            let catalog = catalog::load(&index_source(index))
                .await
                .map_err(|error| error.to_string())?;
            let entry =
                catalog::find(&catalog, name, &index.index).map_err(|error| error.to_string())?;
            println!("{}", catalog::details(entry));
            Ok(())
        }
        PluginCommand::Index(crate::config::commands::IndexCommand::Add {
            index,
            file,
            reference,
        }) => catalog::add::add(index, file, reference).await,
        PluginCommand::Keygen { key_file } => keygen(key_file),
        PluginCommand::Test {
            plugin,
            params,
            page,
            url,
            expect,
            policy,
            headful,
            watch,
        } => {
            // Nothing said of the call: a project made by `plugin new` runs its own test.
            let own = match (page, url, params.as_str(), expect.is_empty()) {
                (None, None, "{}", true) if plugin.is_dir() => test::project_test(plugin)?,
                _ => None,
            };
            let own_test = own.is_some();
            let (opened, params, expect) = match own {
                Some(own) => {
                    println!("Running {}.", own.file.display());
                    (test::Opened::File(own.page), own.params, own.expect)
                }
                None => {
                    let opened = match (page, url) {
                        (Some(page), _) => test::Opened::File(page.clone()),
                        (None, Some(url)) => test::Opened::Url(url.clone()),
                        (None, None) => test::Opened::Blank,
                    };
                    (opened, params.clone(), expect.clone())
                }
            };
            if *watch == Some(true) {
                let spec = watch::TestSpec {
                    params,
                    opened,
                    expect,
                    policy: policy.clone(),
                    headful: *headful,
                    own_test,
                };
                return watch::watch(plugin, spec).await;
            }
            let component = component_of(plugin)?;
            let (passed, answer) =
                test::run(&component, &params, opened, policy.as_deref(), *headful).await?;
            if !passed {
                return Err("the tool answered with an error".into());
            }
            test::check_expected(&answer, &expect)
        }
        PluginCommand::Sign { file, key } => sign(file, key),
        PluginCommand::Publish {
            file,
            reference,
            key,
        } => install::publish(file, reference, key.as_deref()).await,
        PluginCommand::Install {
            reference,
            plugin_dir,
            policy,
            lock,
            locked,
            update,
            allow_untrusted,
            index,
        } => {
            let resolved = match (reference.as_deref(), index.as_deref()) {
                (Some(name), Some(index)) if !name.starts_with("oci://") => {
                    let source = catalog::Source {
                        index,
                        policy: policy.as_deref(),
                        allow_untrusted: *allow_untrusted,
                    };
                    let catalog = catalog::load(&source)
                        .await
                        .map_err(|error| error.to_string())?;
                    let pinned = catalog::resolve(&catalog, name, index)
                        .map_err(|error| error.to_string())?;
                    println!("{name} is {pinned} in the index.");
                    Some(pinned)
                }
                (Some(name), None) if !name.starts_with("oci://") => {
                    let error = oci::PluginRef::parse(name)
                        .err()
                        .map(|error| error.to_string());
                    return Err(format!(
                        "{} To install a plugin by name from a plugin index instead, give the index with --index (or DEVTOOLS_MCP_PLUGIN_INDEX).",
                        error.unwrap_or_default()
                    ));
                }
                (reference, _) => reference.map(String::from),
            };
            install::install(install::Install {
                reference: resolved.as_deref(),
                plugin_dir,
                policy: policy.as_deref(),
                lock: lock.as_deref(),
                locked: *locked,
                update: *update,
                allow_untrusted: *allow_untrusted,
            })
            .await
        }
    }
}

/// The component a command acts on: the file given, or for a tool's folder (made by `plugin
/// new`), the component built from it now.
fn component_of(path: &Path) -> Result<PathBuf, String> {
    match path.is_dir() {
        true => build::build(path, None),
        false => Ok(path.to_path_buf()),
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

/// The index arguments of `plugin search` and `plugin info`.
fn index_source(index: &crate::config::commands::IndexArgs) -> catalog::Source<'_> {
    catalog::Source {
        index: &index.index,
        policy: index.policy.as_deref(),
        allow_untrusted: index.allow_untrusted,
    }
}

/// Signs a component, or a plugin index.
fn sign(file: &Path, key_file: &Path) -> Result<(), String> {
    let bytes =
        std::fs::read(file).map_err(|error| format!("Cannot read {}: {error}", file.display()))?;
    let what =
        if wasmparser::Parser::is_component(&bytes) || wasmparser::Parser::is_core_wasm(&bytes) {
            "plugin"
        } else if catalog::parse(&bytes).is_ok() {
            "plugin index"
        } else {
            return Err(format!(
                "{} is neither a WebAssembly file nor a plugin index ({}).",
                file.display(),
                catalog::SCHEMA
            ));
        };
    let key = std::fs::read_to_string(key_file)
        .map_err(|error| format!("Cannot read the key {}: {error}", key_file.display()))?;
    let signed = signature::sign_as(&bytes, &key, what)
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
