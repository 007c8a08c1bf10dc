//! What a tenants file is checked against beyond its own syntax: the names it uses (tools,
//! categories, flags, the tools of OAuth scopes) against what the server loaded, its flags
//! against the server's (a tenant's flags can only narrow them), and its sandbox roots against
//! the folders the server runs code from. Start and every reload (SIGHUP) read the file through
//! [`TenantChecks::load`] alone, so a reload can never accept what start refuses.

use super::{TenantTable, TenantsError};
use crate::pipeline::gate;
use crate::pipeline::tools::known_names::KnownNames;
use crate::policy::code_folders::{self, Named};
use serde_json::{Map, Value};
use std::path::Path;

/// What this server is, as far as a tenants file must agree with it.
#[derive(Debug, Clone, Default)]
pub struct TenantChecks {
    known: KnownNames,
    /// The server's flags: a tenant's may switch off what they enable, never switch on more.
    server_flags: Map<String, Value>,
    /// Folders the server runs code from, which no tenant's `sandbox_root` may overlap.
    code_folders: Vec<Named>,
}

impl TenantChecks {
    pub fn new(
        known: KnownNames,
        server_flags: Map<String, Value>,
        code_folders: Vec<Named>,
    ) -> TenantChecks {
        TenantChecks {
            known,
            server_flags,
            code_folders,
        }
    }

    /// Reads and checks the tenants file: the one way to a table, at start and at reload. On
    /// success each sandbox root is remembered as writable (code found later is vetted
    /// against it).
    pub fn load(&self, path: &Path) -> Result<TenantTable, TenantsError> {
        let table = TenantTable::load(path)?;
        self.check(&table, path)?;
        for (_, root) in table.sandbox_roots() {
            crate::sandbox::register_writable(&root);
        }
        Ok(table)
    }

    /// Every name, flag and root of `table`, checked against this server.
    pub fn check(&self, table: &TenantTable, path: &Path) -> Result<(), TenantsError> {
        let shown = path.display().to_string();
        for tenant in &table.tenants {
            let unknown = |field: &str, reason: String| TenantsError::UnknownName {
                path: shown.clone(),
                name: tenant.name.clone(),
                reason: format!("{field} names {reason}. Correct the name, or remove it."),
            };
            let policy = &tenant.policy;
            for tool in policy.tools.iter().flatten() {
                self.known
                    .tool(tool)
                    .map_err(|reason| unknown("tools", reason))?;
            }
            for tool in &policy.deny_tools {
                self.known
                    .tool(tool)
                    .map_err(|reason| unknown("deny_tools", reason))?;
            }
            for category in policy.categories.iter().flatten() {
                self.known
                    .category(category)
                    .map_err(|reason| unknown("categories", reason))?;
            }
            for (flag, value) in &tenant.flags {
                self.known
                    .gating_flag(flag)
                    .map_err(|reason| unknown("flags", reason))?;
                if value == &Value::Bool(true) && !gate::enables(&self.server_flags, flag) {
                    return Err(TenantsError::WideningFlag {
                        path: shown,
                        name: tenant.name.clone(),
                        flag: flag.clone(),
                    });
                }
            }
            let root = Named::new(
                format!("the sandbox_root of tenant {:?}", tenant.name),
                &tenant.sandbox_root,
            );
            code_folders::check_writable(&self.code_folders, &root).map_err(|reason| {
                TenantsError::CodeFolder {
                    path: shown.clone(),
                    reason,
                }
            })?;
        }
        if let Some(oauth) = table.oauth() {
            for scope in &oauth.scopes {
                for tool in scope.tool_names() {
                    self.known.tool(tool).map_err(|reason| TenantsError::OAuth {
                        path: shown.clone(),
                        reason: format!(
                            "[oauth] scope {:?}: tools names {reason}. Correct the name, or remove it.",
                            scope.name
                        ),
                    })?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::browser::BrowserOptions;
    use crate::runtime::Category;
    use crate::runtime::bindings_for_tests::definition;
    use crate::serve::tenants::registry::Registry;
    use crate::serve::tenants::token_hash_hex;
    use std::time::Duration;

    fn checks(code: &Path) -> TenantChecks {
        let tools = [
            definition("evaluate_script", Category::Debugging, &[]),
            definition("list_pages", Category::Navigation, &[]),
            definition(
                "get_heapsnapshot_summary",
                Category::Memory,
                &["memoryDebugging"],
            ),
        ];
        TenantChecks::new(
            KnownNames::from_definitions(&tools),
            Map::new(),
            vec![Named::new("the --pluginDir", code)],
        )
    }

    /// Alice's entry with `extra` lines, her files in `root`, then `tail` (an `[oauth]`).
    fn file(root: &Path, extra: &str, tail: &str) -> String {
        format!(
            "[[tenant]]\nname = \"alice\"\ntoken_sha256 = {:?}\nsandbox_root = {:?}\n{extra}\n{tail}",
            token_hash_hex("token"),
            root.display().to_string()
        )
    }

    const OAUTH: &str = "[oauth]\nresource = \"https://mcp.example.com/mcp\"\nissuer = \"https://idp.example.com\"\n[[oauth.scope]]\nname = \"devtools:read\"\n";

    /// Every check: the entry's lines, whether its root lies in the code folder, what follows
    /// the entry, and what the refusal says.
    const CASES: [(&str, bool, &str, &str); 8] = [
        (
            "deny_tools = [\"evaluate_scirpt\"]",
            false,
            "",
            "deny_tools names \"evaluate_scirpt\", which is not one of the tools of this server (did you mean \"evaluate_script\"?)",
        ),
        (
            "tools = [\"list_pgaes\"]",
            false,
            "",
            "tools names \"list_pgaes\"",
        ),
        (
            "categories = [\"netwrok\"]",
            false,
            "",
            "did you mean \"network\"?",
        ),
        (
            "flags = { categoryNetwrok = false }",
            false,
            "",
            "flags names \"categoryNetwrok\"",
        ),
        (
            "flags = { experimentalStructuredContent = true }",
            false,
            "",
            "not one of the flags that enable tools",
        ),
        (
            "flags = { memoryDebugging = true }",
            false,
            "",
            "flag `memoryDebugging` = true would turn on tools",
        ),
        ("", true, "", "the --pluginDir"),
        (
            "",
            false,
            "tools = [\"evaluate_scrpt\"]",
            "[oauth] scope \"devtools:read\": tools names \"evaluate_scrpt\"",
        ),
    ];

    #[tokio::test]
    async fn every_check_refuses_at_start_and_at_reload_and_a_refused_reload_keeps_the_old_file() {
        let scratch = tempfile::tempdir().expect("a temporary folder");
        let code = scratch.path().join("plugins");
        std::fs::create_dir_all(&code).expect("the code folder");
        let path = scratch.path().join("tenants.toml");
        let open = || {
            Registry::open(
                path.clone(),
                checks(&code),
                BrowserOptions::default(),
                Duration::ZERO,
            )
        };
        let good_root = scratch.path().join("alice");
        let good = file(&good_root, "deny_tools = [\"evaluate_script\"]", "");
        for (extra, in_code, tail, says) in CASES {
            let root = if in_code {
                code.join("alice")
            } else {
                good_root.clone()
            };
            let tail = if tail.is_empty() {
                String::new()
            } else {
                format!("{OAUTH}{tail}\n")
            };
            let bad = file(&root, extra, &tail);
            std::fs::write(&path, &bad).expect("write");
            let started = open().map(drop).expect_err("start refuses");
            assert!(started.to_string().contains(says), "start: {started}");

            std::fs::write(&path, &good).expect("write");
            let registry = open().expect("a good file starts");
            std::fs::write(&path, &bad).expect("write");
            let reloaded = registry.reload().await.expect_err("reload refuses");
            assert!(reloaded.to_string().contains(says), "reload: {reloaded}");
            let alice = registry.authenticate("token").expect("alice stays");
            assert!(
                alice.policy.deny_tools.contains("evaluate_script"),
                "the previous file stays in force"
            );
        }
        // Narrowing flags and known names pass.
        let fine = file(
            &good_root,
            "tools = [\"list_pages\"]\ncategories = [\"memory\"]\nflags = { categoryNetwork = false, memoryDebugging = false }",
            "",
        );
        std::fs::write(&path, fine).expect("write");
        open().expect("a file naming what exists starts");
    }
}
