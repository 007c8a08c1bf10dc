//! Flags the server does not know. The reference's yargs parser prints `Unknown arguments:
//! --x,--y` to stderr and starts anyway, so a client configured for another version of
//! chrome-devtools-mcp still gets a server: the MCP server and the reference's CLI commands do
//! the same. The commands of our own (`serve`, `tenant`, `plugin`, `release`) refuse them: an operator's
//! misspelt restriction must not leave a multi-tenant server without it.

use super::Args;
use super::commands::Command;
use clap::CommandFactory;
use std::collections::HashSet;
use std::sync::OnceLock;

/// Whether `--{kebab}` (already in kebab case, without `no-`) names a flag of the server or of
/// any of its subcommands: a subcommand's own flags arrive in the same argument list.
pub(super) fn is_known(kebab: &str) -> bool {
    static KNOWN: OnceLock<HashSet<String>> = OnceLock::new();
    KNOWN
        .get_or_init(|| {
            let mut known: HashSet<String> = ["help", "version"].map(String::from).into();
            let mut commands = vec![Args::command()];
            while let Some(command) = commands.pop() {
                for argument in command.get_arguments() {
                    known.extend(argument.get_long().map(String::from));
                    let aliases = argument.get_all_aliases().into_iter().flatten();
                    known.extend(aliases.map(String::from));
                }
                commands.extend(command.get_subcommands().cloned());
            }
            known
        })
        .contains(kebab)
}

/// Whether `word` is a subcommand's name: it is never the value of an unknown flag.
pub(super) fn is_subcommand(word: &str) -> bool {
    Args::command()
        .get_subcommands()
        .any(|command| command.get_name() == word)
}

/// The reference's warning for the flags left out, as it prints it; for our own commands, an
/// error naming them.
pub(super) fn report(args: &Args, unknown: &[String]) -> Result<(), clap::Error> {
    if unknown.is_empty() {
        return Ok(());
    }
    let listed = format!("Unknown arguments: {}", unknown.join(","));
    let own = match &args.command {
        Some(Command::Serve) => Some("serve"),
        Some(Command::Tenant { .. }) => Some("tenant"),
        Some(Command::Plugin { .. }) => Some("plugin"),
        Some(Command::Release { .. }) => Some("release"),
        Some(Command::Call { .. } | Command::Tools) | None => None,
    };
    match own {
        Some(command) => Err(Args::command().error(
            clap::error::ErrorKind::UnknownArgument,
            format!("{listed} (`{command}` takes no flag it does not know)"),
        )),
        None => {
            eprintln!("{listed}");
            Ok(())
        }
    }
}
