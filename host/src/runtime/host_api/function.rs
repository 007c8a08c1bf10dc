//! What a host function is allowed to do, declared once, next to its capability: the
//! dispatcher ([`super::CallState::dispatch`]) reads these declarations and applies them, so a
//! function cannot act without its capability, move a page without a landing check, or leave a
//! recording running after its call, whatever its body does.

use crate::policy::capability::Capability;

/// What a host function may cause besides answering the guest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Marks(u8);

impl Marks {
    pub const NONE: Marks = Marks(0);
    /// It can make a page load something: input, script, navigation, page tools, extension
    /// actions, app launches, emulation and resizes (media and resize listeners run page code),
    /// reloads by traces and audits. Under URL patterns every page it moved is checked where it
    /// landed.
    pub const NAVIGATES: Marks = Marks(1);
    /// It may write files the guest names (through the file gateway, with `files.write`).
    pub const WRITES: Marks = Marks(1 << 1);
    /// It may read files the guest names (through the file gateway).
    pub const READS: Marks = Marks(1 << 2);
    /// It can start something that runs on after the call (a trace, a screencast): ended with
    /// the call unless the policy grants `long-lived`.
    pub const LONG_LIVED: Marks = Marks(1 << 3);

    pub const fn and(self, other: Marks) -> Marks {
        Marks(self.0 | other.0)
    }

    pub const fn has(self, mark: Marks) -> bool {
        self.0 & mark.0 == mark.0
    }

    /// The names of the marks set, for `plugin check` and the documentation.
    pub fn names(self) -> Vec<&'static str> {
        [
            (Marks::NAVIGATES, "navigates"),
            (Marks::WRITES, "writes files"),
            (Marks::READS, "reads files"),
            (Marks::LONG_LIVED, "long-lived"),
        ]
        .into_iter()
        .filter(|(mark, _)| self.has(*mark))
        .map(|(_, name)| name)
        .collect()
    }
}

/// One function a tool component imports, as the WIT names it.
#[derive(Debug)]
pub struct HostFunction {
    /// The WIT interface (`pages`, `response`, ...).
    pub interface: &'static str,
    /// The function's WIT name (`[method]page.click`, `save-file`).
    pub name: &'static str,
    /// Capabilities every call needs; none for response declarations and handle bookkeeping.
    pub needs: &'static [Capability],
    /// Capabilities a call needs depending on its arguments (a file path given, an init
    /// script, a `javascript:` URL), checked by the body through [`super::Call::require`],
    /// which refuses any capability not declared here.
    pub may_need: &'static [Capability],
    pub marks: Marks,
}

impl HostFunction {
    pub const fn new(
        interface: &'static str,
        name: &'static str,
        needs: &'static [Capability],
        marks: Marks,
    ) -> HostFunction {
        HostFunction {
            interface,
            name,
            needs,
            may_need: &[],
            marks,
        }
    }

    /// The same, with capabilities that only some arguments need.
    pub const fn depending(self, may_need: &'static [Capability]) -> HostFunction {
        HostFunction { may_need, ..self }
    }

    /// Whether a call may use `capability` at all (always or for some arguments).
    pub fn may_use(&self, capability: Capability) -> bool {
        self.needs.contains(&capability) || self.may_need.contains(&capability)
    }
}

/// The host function `name` of `interface` (as a component's import names them), if any.
pub fn find(interface: &str, name: &str) -> Option<&'static HostFunction> {
    super::HOST_FUNCTIONS
        .iter()
        .flat_map(|functions| functions.iter())
        .copied()
        .find(|function| function.interface == interface && function.name == name)
}

/// Every host function, interface by interface.
pub fn all() -> impl Iterator<Item = &'static HostFunction> {
    super::HOST_FUNCTIONS
        .iter()
        .flat_map(|functions| functions.iter())
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The declarations and the WIT world name the same functions, both ways: a function the
    /// WIT adds cannot be linked without deciding what it needs and may do, and a declaration
    /// cannot outlive its function.
    #[test]
    fn every_wit_function_is_declared_once_and_every_declaration_exists() {
        let wit = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../wit/since_v0.2.0");
        let mut resolve = wit_parser::Resolve::default();
        let (package, _) = resolve.push_dir(&wit).expect("wit/ parses");
        let world = resolve.packages[package].worlds["plugin"];
        let mut in_wit = Vec::new();
        for item in resolve.worlds[world].imports.values() {
            let wit_parser::WorldItem::Interface { id, .. } = item else {
                continue;
            };
            let interface = &resolve.interfaces[*id];
            let interface_name = interface.name.clone().unwrap_or_default();
            for name in interface.functions.keys() {
                in_wit.push((interface_name.clone(), name.clone()));
            }
            for (type_name, type_id) in &interface.types {
                if matches!(
                    resolve.types[*type_id].kind,
                    wit_parser::TypeDefKind::Resource
                ) {
                    in_wit.push((
                        interface_name.clone(),
                        format!("[resource-drop]{type_name}"),
                    ));
                }
            }
        }
        let declared: Vec<(String, String)> = all()
            .map(|function| (function.interface.to_string(), function.name.to_string()))
            .collect();
        let missing: Vec<_> = in_wit.iter().filter(|f| !declared.contains(f)).collect();
        let stale: Vec<_> = declared.iter().filter(|f| !in_wit.contains(f)).collect();
        assert!(
            missing.is_empty(),
            "WIT functions without a declaration: {missing:?}"
        );
        assert!(
            stale.is_empty(),
            "declarations of no WIT function: {stale:?}"
        );
        let mut unique = declared.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), declared.len(), "a function is declared twice");
        assert!(declared.len() > 70, "only {} functions", declared.len());
    }

    #[test]
    fn lookups_are_by_interface_and_name() {
        let click = find("pages", "[method]page.click").expect("declared");
        assert_eq!(click.needs, &[Capability::Input]);
        assert!(click.marks.has(Marks::NAVIGATES));
        assert!(find("vision", "[method]page.click").is_none());
        assert!(find("response", "append-line").is_some_and(|f| f.needs.is_empty()));
    }
}
