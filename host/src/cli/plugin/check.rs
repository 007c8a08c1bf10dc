//! `plugin check`: what a component is, what it imports, which capabilities its code can ask
//! for, and whether a policy grants them: everything an operator decides on before loading it.

use crate::policy::capability::Capability;
use crate::policy::plugins::{Origin, Policy};
use crate::policy::signature::{self, Verdict};
use crate::printable::{escape, escape_keeping_lines};
use crate::runtime::definition::category_info;
use crate::runtime::needs::needed_by;
use crate::runtime::{CompiledCache, Loader, Runtime};
use crate::runtime::{WASI_PREFIX, is_allowed_import};
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

pub async fn print(
    file: &Path,
    policy_file: Option<&Path>,
    flags_json: &str,
) -> Result<(), String> {
    let report = report(file, policy_file, flags_json).await?;
    print!("{}", report.text);
    report
        .verdict
        .map_err(|_| "the check found problems (see above)".to_string())
}

/// `plugin build`'s report on what it built, under the default policy. A good build succeeds:
/// what that policy would refuse is a warning (an operator's policy may grant it), unless
/// `strict` makes it the command's failure.
pub async fn print_after_build(file: &Path, strict: bool) -> Result<(), String> {
    let report = report(file, None, "{}").await?;
    print!("{}", report.text);
    match (report.verdict, strict) {
        (Ok(()), _) => Ok(()),
        (Err(refusal), true) => Err(format!(
            "--strict: the default policy would not run {} as it is: {refusal}",
            file.display()
        )),
        (Err(_), false) => {
            eprintln!(
                "Warning: {} is built, but the default policy would not run it as it is (see above); an operator's policy can grant what it needs. `plugin build --strict` makes this an error.",
                file.display()
            );
            Ok(())
        }
    }
}

/// The report's text, and whether the server would load the component under this policy.
/// Everything the plugin defines is escaped ([`escape`]): a definition cannot move the
/// terminal's cursor, change colours or reorder text with bidi controls.
pub async fn report(
    file: &Path,
    policy_file: Option<&Path>,
    flags_json: &str,
) -> Result<Report, String> {
    let bytes =
        std::fs::read(file).map_err(|error| format!("Cannot read {}: {error}", file.display()))?;
    report_on(file, &bytes, Signed::Beside, policy_file, flags_json).await
}

/// What `plugin check` found.
pub struct Report {
    /// The whole report, for a terminal.
    pub text: String,
    /// Whether the server would load it and grant what its code can call for.
    pub verdict: Result<(), Refusal>,
    /// The tool's name, from its definition.
    pub tool: String,
    /// The component's imports (interfaces, with versions).
    pub imports: Vec<String>,
    /// The tool's description, from its definition.
    pub description: String,
    /// The capabilities its code can call for, by name.
    pub capabilities: Vec<String>,
}

/// Why the server would not run a component as it is.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    /// The policy refuses to load it (a pinned sha256, a category it may not claim...).
    #[error("The policy refuses it: {0}.")]
    Policy(String),
    /// It loads, but some of its calls need capabilities the policy does not grant.
    #[error(
        "It loads, but calls that use {capabilities} will be refused. Grant them under [plugins.{tool}] capabilities in the policy."
    )]
    Ungranted { capabilities: String, tool: String },
}

/// Where a component's signature is.
pub enum Signed<'a> {
    /// In `<file>.sig`, as the server reads it.
    Beside,
    /// Held in memory (`plugin install`, before anything is written); `None`: unsigned.
    Text(Option<&'a str>),
}

/// [`report`] on bytes in memory: `file` only names them.
pub async fn report_on(
    file: &Path,
    bytes: &[u8],
    signed: Signed<'_>,
    policy_file: Option<&Path>,
    flags_json: &str,
) -> Result<Report, String> {
    if serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(flags_json).is_err() {
        return Err(format!("--flags must be a JSON object, got {flags_json}"));
    }
    let policy = match policy_file {
        Some(path) => Policy::load(path, Default::default()).map_err(|error| error.to_string())?,
        None => Policy::default(),
    };
    let runtime = Runtime::new().map_err(|error| format!("cannot start wasmtime: {error}"))?;
    // Compiled in memory: checking a plugin writes nothing.
    let cache = CompiledCache::in_memory(runtime.engine());
    let loader = Loader::new(runtime, cache, Arc::new(policy));
    let inspection = loader
        .inspect(file, bytes, flags_json)
        .await
        .map_err(|error| escape_keeping_lines(&error.to_string()))?;
    let definition = &inspection.definition;
    let annotations = &definition.annotations;
    let mut out = String::new();
    let line = &mut out;
    let _ = writeln!(line, "Plugin {}", file.display());
    let _ = writeln!(line, "  sha256: {}", inspection.sha256);
    let _ = writeln!(line, "  size: {} bytes", bytes.len());
    let trusted_keys = &loader.policy().trusted_keys;
    let verdict = match signed {
        Signed::Beside => signature::verify(file, bytes, trusted_keys),
        Signed::Text(None) => Verdict::Unsigned,
        Signed::Text(Some(text)) => {
            let origin = signature::signature_path(file).display().to_string();
            signature::verify_text(text, &origin, bytes, trusted_keys)
        }
    };
    let signed = match verdict {
        Verdict::Unsigned => "not signed".to_string(),
        Verdict::Trusted { key } => format!("signed by trusted key {key}"),
        Verdict::UnknownKey { key } => format!("signed by {key}, a key the policy does not trust"),
        Verdict::Invalid { reason } => format!("INVALID: {reason}"),
    };
    let _ = writeln!(line, "  signature: {signed}");
    let _ = writeln!(line, "\nTool {}", escape(&definition.name));
    if let Some(title) = &annotations.title {
        let _ = writeln!(line, "  title: {}", escape(title));
    }
    let _ = writeln!(
        line,
        "  description: {}",
        escape_keeping_lines(&definition.description).replace('\n', "\n    ")
    );
    let (category, _, _) = category_info(annotations.category);
    let _ = writeln!(line, "  category: {category}");
    let _ = writeln!(line, "  read-only: {}", annotations.read_only_hint);
    if !annotations.conditions.is_empty() {
        let _ = writeln!(
            line,
            "  conditions: {}",
            escape(&annotations.conditions.join(", "))
        );
    }
    let _ = writeln!(line, "  page-scoped: {}", definition.page_scoped);
    let _ = writeln!(
        line,
        "  blocked by dialog: {}",
        definition.blocked_by_dialog
    );
    if !definition.file_params.is_empty() {
        let _ = writeln!(
            line,
            "  file parameters: {}",
            escape(&definition.file_params.join(", "))
        );
    }
    let schema = serde_json::to_string_pretty(&inspection.input_schema).unwrap_or_default();
    let _ = writeln!(
        line,
        "  input schema: {}",
        escape_keeping_lines(&schema).replace('\n', "\n  ")
    );
    if let Some(output) = &inspection.output_schema {
        let schema = serde_json::to_string_pretty(output).unwrap_or_default();
        let _ = writeln!(
            line,
            "  output schema (structured result, contract 0.3.1): {}",
            escape_keeping_lines(&schema).replace('\n', "\n  ")
        );
    }

    let _ = writeln!(line, "\nImports");
    let (wasi, ours): (Vec<&String>, Vec<&String>) = inspection
        .imports
        .iter()
        .partition(|import| import.starts_with(WASI_PREFIX));
    for import in ours {
        let note = if is_allowed_import(import.as_str()) {
            "devtools-mcp host interface"
        } else {
            "not provided"
        };
        let _ = writeln!(line, "  {}: {note}", escape(import));
    }
    if !wasi.is_empty() {
        let names: Vec<&str> = wasi.iter().map(|import| import.as_str()).collect();
        let _ = writeln!(
            line,
            "  WASI 0.2, linked to an implementation that grants nothing (no preopened folders, no environment, no sockets, stdin closed; stdout and stderr go to the server log): {}",
            escape(&names.join(", "))
        );
    }

    let resolved = loader
        .policy()
        .resolve(&definition.name, Origin::Community, &inspection.sha256);
    let policy_name = policy_file
        .map(|path| path.display().to_string())
        .unwrap_or_else(|| "the default policy".to_string());
    let _ = writeln!(line, "\nCapabilities (policy: {policy_name})");
    let needs = needed_by(bytes);
    let granted = |capability: &Capability| {
        resolved
            .as_ref()
            .is_ok_and(|resolved| resolved.grants.grants(*capability))
    };
    let mut missing = Vec::new();
    if needs.always.is_empty() && needs.depending.is_empty() {
        let _ = writeln!(line, "  none: it only declares response content");
    }
    for (capability, functions) in &needs.always {
        if !granted(capability) {
            missing.push(*capability);
        }
        let functions: Vec<&str> = functions.iter().map(String::as_str).collect();
        let _ = writeln!(
            line,
            "  {capability}: {} (uses {})",
            if granted(capability) {
                "granted"
            } else {
                "NOT granted"
            },
            escape(&functions.join(", "))
        );
    }
    for (capability, functions) in &needs.depending {
        if needs.always.contains_key(capability) {
            continue;
        }
        let functions: Vec<&str> = functions.iter().map(String::as_str).collect();
        let _ = writeln!(
            line,
            "  {capability}: {} (needed by some arguments of {})",
            if granted(capability) {
                "granted"
            } else {
                "not granted"
            },
            escape(&functions.join(", "))
        );
    }
    let verdict = match resolved {
        Err(reason) => Err(Refusal::Policy(reason)),
        Ok(_) if !missing.is_empty() => {
            let names: Vec<&str> = missing
                .iter()
                .map(|capability: &Capability| capability.name())
                .collect();
            Err(Refusal::Ungranted {
                capabilities: names.join(", "),
                tool: escape(&definition.name),
            })
        }
        Ok(_) => Ok(()),
    };
    let summary = match &verdict {
        Ok(()) => {
            "OK: the server loads it and grants everything its code can call for.".to_string()
        }
        Err(refusal) => refusal.to_string(),
    };
    let _ = writeln!(line, "\n{summary}");
    let mut capabilities: Vec<String> = needs
        .always
        .keys()
        .chain(needs.depending.keys())
        .map(|capability| capability.name().to_string())
        .collect();
    capabilities.sort();
    capabilities.dedup();
    Ok(Report {
        text: out,
        verdict,
        tool: definition.name.clone(),
        imports: inspection.imports.clone(),
        description: definition.description.clone(),
        capabilities,
    })
}
