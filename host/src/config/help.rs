//! `serve --help`, `call --help`, `tools --help` and `help serve`: each subcommand's own help,
//! with the flags it takes. Those flags are the server's (clap keeps them on [`Args`], where
//! `subcommand_last` puts them), so clap alone would print a subcommand's help with no options;
//! this builds the help a reader needs: the subcommand's arguments and the flags that apply.

use super::Args;
use clap::{Command, CommandFactory};

/// The prefix of the doc comment of every flag only `serve` reads.
const SERVE_ONLY: &str = "`serve`:";

/// Subcommands whose options are flags of [`Args`].
const WITH_SERVER_FLAGS: [&str; 3] = ["serve", "call", "tools"];

/// When `argv` asks for the help of `serve`, `call` or `tools` (`serve --help`, `call -h`,
/// `help serve`, with server flags anywhere before a `--`), that help, as clap's own
/// `DisplayHelp` error (printed on stdout, exit status 0). `None` for anything else, which
/// clap answers itself (`tenant --help`, `plugin new --help`).
pub(super) fn requested(argv: &[String]) -> Option<clap::Error> {
    let words: Vec<&str> = argv
        .iter()
        .skip(1)
        .map(String::as_str)
        .take_while(|arg| *arg != "--")
        .collect();
    let position = words
        .iter()
        .position(|word| *word == "help" || WITH_SERVER_FLAGS.contains(word))?;
    let name = match words[position] {
        "help" => words
            .get(position + 1)
            .copied()
            .filter(|word| WITH_SERVER_FLAGS.contains(word))?,
        name if words.iter().any(|word| *word == "--help" || *word == "-h") => name,
        _ => return None,
    };
    let flag = if words.contains(&"-h") {
        "-h"
    } else {
        "--help"
    };
    subcommand_help(name)
        .try_get_matches_from(["devtools-mcp", flag])
        .err()
}

/// The help of subcommand `name`: its description and arguments, then the server flags it
/// takes (for `serve`, those only `serve` reads; for `call` and `tools`, all the others). Built
/// from the top-level command, whose flags are the ones parsed, with the others hidden.
pub(super) fn subcommand_help(name: &str) -> Command {
    let top = Args::command();
    let Some(subcommand) = top.find_subcommand(name).cloned() else {
        return top;
    };
    let serve = name == "serve";
    let mut usage = format!("devtools-mcp {name} [OPTIONS]");
    let mut command = top
        .mut_args(|argument| {
            let serve_only = argument
                .get_help()
                .is_some_and(|help| help.to_string().starts_with(SERVE_ONLY));
            let hidden = argument.is_hide_set();
            argument.hide(hidden || serve_only != serve)
        })
        .mut_subcommands(|subcommand| subcommand.hide(true))
        .disable_version_flag(true)
        .disable_help_subcommand(true);
    for positional in subcommand.get_positionals() {
        let value = positional
            .get_value_names()
            .and_then(|names| names.first())
            .map_or_else(
                || positional.get_id().to_string().to_uppercase(),
                |name| name.to_string(),
            );
        match positional.is_required_set() {
            true => usage.push_str(&format!(" <{value}>")),
            false => usage.push_str(&format!(" [{value}]")),
        }
        command = command.arg(positional.clone());
    }
    let about = subcommand.get_about().cloned().unwrap_or_default();
    let long_about = subcommand
        .get_long_about()
        .cloned()
        .unwrap_or(about.clone());
    command = command.about(about).long_about(long_about);
    let after = if serve {
        "The server's other flags (devtools-mcp --help), which set up the tools and each tenant's browser, apply too. Flags go before or after `serve`; camelCase and kebab-case are both accepted."
    } else {
        "Flags go before or after the subcommand; camelCase and kebab-case are both accepted. Without --browserUrl or --wsEndpoint, each call launches and closes its own headless browser."
    };
    command.override_usage(usage).after_help(after)
}
