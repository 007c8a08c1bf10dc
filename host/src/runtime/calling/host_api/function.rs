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
    /// Its answer carries what a page wrote (titles, URLs, console and network records, dialog
    /// messages, page tools' words, script results, heap strings): the dispatcher records every
    /// string of it, its error included, as page-written, so `--experimentalFencePageContent`
    /// fences each line of the answer that carries one, wherever the tool puts it.
    pub const PAGE_CONTENT: Marks = Marks(1 << 4);
    /// It acts on a page its arguments name (a page handle, a page id): page code may run
    /// while it does. The body reaches that page only through [`super::Call`], which checks it
    /// against a plugin's URL patterns first, and the dispatcher checks where it stands after;
    /// a body that reaches a page without this mark is stopped.
    pub const ON_PAGE: Marks = Marks(1 << 5);

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
            (Marks::PAGE_CONTENT, "page content"),
            (Marks::ON_PAGE, "on a page"),
        ]
        .into_iter()
        .filter(|(mark, _)| self.has(*mark))
        .map(|(_, name)| name)
        .collect()
    }
}

/// One function a tool component imports, as the newest contract names it. What it needs is
/// its interface's capability (the WIT's `Capability:` line), plus any it always needs
/// besides (a heap snapshot is written to a file), plus those only some arguments need.
#[derive(Debug)]
pub struct HostFunction {
    /// The WIT interface (`pages`, `input`, ...).
    pub interface: &'static str,
    /// The function's WIT name (`click`, `[method]page.id`, `save-file`).
    pub name: &'static str,
    /// Capabilities every call needs besides its interface's.
    pub also_needs: &'static [Capability],
    /// Capabilities a call needs depending on its arguments (a file path given, an init
    /// script, a `javascript:` URL), checked by the body through [`super::Call::require`],
    /// which refuses any capability not declared here.
    pub may_need: &'static [Capability],
    pub marks: Marks,
}

impl HostFunction {
    pub const fn new(interface: &'static str, name: &'static str, marks: Marks) -> HostFunction {
        HostFunction {
            interface,
            name,
            also_needs: &[],
            may_need: &[],
            marks,
        }
    }

    /// The same, needing these capabilities on every call besides its interface's.
    pub const fn also(self, also_needs: &'static [Capability]) -> HostFunction {
        HostFunction { also_needs, ..self }
    }

    /// The same, with capabilities that only some arguments need.
    pub const fn depending(self, may_need: &'static [Capability]) -> HostFunction {
        HostFunction { may_need, ..self }
    }

    /// Every capability each call needs: its interface's first.
    pub fn needs(&self) -> impl Iterator<Item = Capability> + use<> {
        let own = Capability::of_interface(self.interface).ok().flatten();
        own.into_iter().chain(self.also_needs.iter().copied())
    }

    /// Whether a call may use `capability` at all (always or for some arguments).
    pub fn may_use(&self, capability: Capability) -> bool {
        self.needs().any(|needed| needed == capability) || self.may_need.contains(&capability)
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

/// The host function a component built against contract `version` reaches when it imports
/// `name` from `interface`: today's own for the newest contract, and through the adapter's
/// table for a released older one.
pub fn find_in_contract(
    version: &str,
    interface: &str,
    name: &str,
) -> Option<&'static HostFunction> {
    match version {
        "0.2.0" => super::v0_2::V0_2_FUNCTIONS
            .iter()
            .find(|(old_interface, old_name, _, _)| {
                *old_interface == interface && *old_name == name
            })
            .and_then(|(_, _, new_interface, new_name)| find(new_interface, new_name)),
        _ => find(interface, name),
    }
}

/// Every host function, interface by interface.
pub fn all() -> impl Iterator<Item = &'static HostFunction> {
    super::HOST_FUNCTIONS
        .iter()
        .flat_map(|functions| functions.iter())
        .copied()
}

/// The capability table of docs/plugins.md, made from the declarations (the one source that
/// enforcement and `plugin check` read): each capability, the interface that is it, the
/// functions every call of which needs it, and those that need it for some arguments.
pub fn capability_table() -> String {
    let mut table = String::from(
        "| capability | interface | functions that need it | and for some arguments |\n|---|---|---|---|\n",
    );
    let names = |functions: Vec<&HostFunction>| -> String {
        match functions.is_empty() {
            true => "-".to_string(),
            false => functions
                .iter()
                .map(|function| format!("`{}.{}`", function.interface, function.name))
                .collect::<Vec<_>>()
                .join(", "),
        }
    };
    for capability in Capability::ALL {
        let interface = match capability.interface() {
            Some(interface) => format!("`{interface}`"),
            None => "(a grant on effects, checked per call)".to_string(),
        };
        let always = all()
            .filter(|function| function.needs().any(|needed| needed == capability))
            .collect();
        let sometimes = all()
            .filter(|function| function.may_need.contains(&capability))
            .collect();
        table.push_str(&format!(
            "| `{capability}` | {interface} | {} | {} |\n",
            names(always),
            names(sometimes)
        ));
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The newest contract, parsed, and its `plugin` world.
    fn contract() -> (wit_parser::Resolve, wit_parser::WorldId) {
        let wit = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../wit/since_v0.3.2");
        let mut resolve = wit_parser::Resolve::default();
        let (package, _) = resolve.push_dir(&wit).expect("the contract parses");
        let world = resolve.packages[package].worlds["plugin"];
        (resolve, world)
    }

    /// The interfaces the `plugin` world imports (the host's functions), with their names.
    fn imported(
        resolve: &wit_parser::Resolve,
        world: wit_parser::WorldId,
    ) -> Vec<(String, &wit_parser::Interface)> {
        resolve.worlds[world]
            .imports
            .values()
            .filter_map(|item| match item {
                wit_parser::WorldItem::Interface { id, .. } => Some(&resolve.interfaces[*id]),
                _ => None,
            })
            .map(|interface| (interface.name.clone().unwrap_or_default(), interface))
            .collect()
    }

    /// The declarations and the WIT world name the same functions, both ways: a function the
    /// WIT adds cannot be linked without deciding what it needs and may do, and a declaration
    /// cannot outlive its function.
    #[test]
    fn every_wit_function_is_declared_once_and_every_declaration_exists() {
        let (resolve, world) = contract();
        let mut in_wit = Vec::new();
        for (interface_name, interface) in imported(&resolve, world) {
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

    /// Whether a WIT type is a handle to the `page` resource (through `use` aliases).
    fn is_page(resolve: &wit_parser::Resolve, ty: &wit_parser::Type) -> bool {
        let &wit_parser::Type::Id(mut id) = ty else {
            return false;
        };
        loop {
            let def = &resolve.types[id];
            match &def.kind {
                wit_parser::TypeDefKind::Type(wit_parser::Type::Id(next)) => id = *next,
                wit_parser::TypeDefKind::Handle(
                    wit_parser::Handle::Borrow(target) | wit_parser::Handle::Own(target),
                ) => id = *target,
                wit_parser::TypeDefKind::Resource => return def.name.as_deref() == Some("page"),
                _ => return false,
            }
        }
    }

    /// The page-scope contract: every function of the WIT whose arguments name a page (a
    /// `page` handle, or a page `id: u32`) is marked `ON_PAGE`, so its body reaches the page
    /// only through the checked [`super::super::Call::page_id`] (a body that reaches a page
    /// unmarked is stopped), and no other function is. A new function is classified by its
    /// signature, whatever its author thought of it. The handle's own `id` and drop read no
    /// page.
    #[test]
    fn every_function_that_names_a_page_is_marked_as_acting_on_one() {
        const HANDLE_ONLY: &[&str] = &["[method]page.id", "[resource-drop]page"];
        let (resolve, world) = contract();
        let mut on_page = 0;
        for (interface_name, interface) in imported(&resolve, world) {
            for (name, function) in &interface.functions {
                let names_page = function.params.iter().any(|param| {
                    is_page(&resolve, &param.ty)
                        || (param.name == "id" && param.ty == wit_parser::Type::U32)
                });
                let declared = find(&interface_name, name).expect("declared");
                let expected = names_page && !HANDLE_ONLY.contains(&name.as_str());
                assert_eq!(
                    declared.marks.has(Marks::ON_PAGE),
                    expected,
                    "{interface_name}.{name}: a function whose arguments name a page is marked ON_PAGE, and only those"
                );
                on_page += usize::from(expected);
            }
        }
        assert!(on_page >= 40, "only {on_page} functions act on a page");
        // Every declaration was seen above (the WIT test holds them to the same list).
        assert!(all().filter(|f| f.marks.has(Marks::ON_PAGE)).count() == on_page);
    }

    /// Page tools answer with what the page wrote (names, descriptions, results): each of them
    /// is marked, so its answer is fenced and its body cannot skip the marking.
    #[test]
    fn every_page_tools_function_carries_page_content() {
        let page_tools: Vec<&HostFunction> = all()
            .filter(|function| function.interface == "page-tools")
            .collect();
        assert!(page_tools.len() >= 4, "{page_tools:?}");
        for function in page_tools {
            assert!(
                function.marks.has(Marks::PAGE_CONTENT),
                "{} is not marked PAGE_CONTENT",
                function.name
            );
        }
    }

    /// The functions whose answers hold strings only the host or the browser wrote (never a
    /// page), with why. Every other function whose answer can hold a string is marked
    /// `PAGE_CONTENT`: a new function is classified here, or the test below fails.
    const HOST_WRITTEN: &[(&str, &str)] = &[
        // The image's MIME type and file extension.
        ("pages", "take-screenshot"),
        // The browser's tab id.
        ("pages", "tab-id"),
        // The path the host wrote.
        ("files", "save-file"),
        ("files", "save-temp-file"),
        // The id the browser gave the extension.
        ("extensions-install", "install"),
        // The host's lines and the recording's path.
        ("screencast", "start"),
        ("screencast", "stop"),
    ];

    /// Whether a value of `ty` can hold a string; at the top of an answer, `result`'s error
    /// does not count (errors of marked functions are recorded all the same).
    fn holds_string(resolve: &wit_parser::Resolve, ty: &wit_parser::Type, errors: bool) -> bool {
        use wit_parser::{Type, TypeDefKind as Kind};
        fn any<'a>(
            resolve: &wit_parser::Resolve,
            types: impl IntoIterator<Item = &'a Type>,
        ) -> bool {
            types
                .into_iter()
                .any(|inner| holds_string(resolve, inner, true))
        }
        let Type::Id(id) = ty else {
            return matches!(ty, Type::String);
        };
        match &resolve.types[*id].kind {
            Kind::Record(record) => any(resolve, record.fields.iter().map(|field| &field.ty)),
            Kind::Variant(variant) => {
                any(resolve, variant.cases.iter().filter_map(|c| c.ty.as_ref()))
            }
            Kind::Tuple(tuple) => any(resolve, &tuple.types),
            Kind::Option(inner) | Kind::List(inner) | Kind::Type(inner) => {
                holds_string(resolve, inner, true)
            }
            Kind::FixedLengthList(inner, _) => holds_string(resolve, inner, true),
            Kind::Map(key, value) => any(resolve, [key, value]),
            Kind::Result(result) => {
                result
                    .ok
                    .as_ref()
                    .is_some_and(|ok| holds_string(resolve, ok, true))
                    || (errors
                        && result
                            .err
                            .as_ref()
                            .is_some_and(|err| holds_string(resolve, err, true)))
            }
            _ => false,
        }
    }

    /// Every renderer of page text, enumerated from the contract: each function whose answer
    /// can hold a string hands it over recorded as page-written (marked `PAGE_CONTENT`), but
    /// the reviewed host-written few; and none of those is stale or marked.
    #[test]
    fn every_function_answering_with_strings_records_them_as_page_written() {
        let (resolve, world) = contract();
        let mut checked = 0;
        for (interface_name, interface) in imported(&resolve, world) {
            for (name, function) in &interface.functions {
                let declared = find(&interface_name, name).expect("declared");
                let strings = function
                    .result
                    .as_ref()
                    .is_some_and(|ty| holds_string(&resolve, ty, false));
                let host_written = HOST_WRITTEN.contains(&(interface_name.as_str(), name.as_str()));
                if host_written {
                    assert!(
                        strings,
                        "{interface_name}.{name} is listed but answers no string"
                    );
                    assert!(
                        !declared.marks.has(Marks::PAGE_CONTENT),
                        "{interface_name}.{name}"
                    );
                } else if strings {
                    assert!(
                        declared.marks.has(Marks::PAGE_CONTENT),
                        "{interface_name}.{name} answers with strings: mark it PAGE_CONTENT, or list it in HOST_WRITTEN with why"
                    );
                    checked += 1;
                }
            }
        }
        assert!(
            checked >= 30,
            "only {checked} functions answer with strings"
        );
    }

    #[test]
    fn lookups_are_by_interface_and_name() {
        let click = find("input", "click").expect("declared");
        assert_eq!(click.needs().collect::<Vec<_>>(), [Capability::Input]);
        assert!(click.marks.has(Marks::NAVIGATES));
        assert!(find("pages", "click").is_none());
        assert!(find("response", "append-line").is_some_and(|f| f.needs().next().is_none()));
        let snapshot = find("memory", "take-snapshot").expect("declared");
        assert_eq!(
            snapshot.needs().collect::<Vec<_>>(),
            [Capability::Memory, Capability::FilesWrite]
        );
    }

    /// Every interface of the world names its capability in the WIT, and every capability is
    /// exactly one interface, but `long-lived` (a grant on effects, not functions). Where a
    /// path is optional, `files.write` is also checked per call, as the WIT states. A
    /// component's imports are its capability request.
    #[test]
    fn each_interface_is_one_capability_and_each_capability_one_interface() {
        let (resolve, world) = contract();
        let mut interfaces = Vec::new();
        let items = resolve.worlds[world]
            .imports
            .values()
            .chain(resolve.worlds[world].exports.values());
        for item in items {
            if let wit_parser::WorldItem::Interface { id, .. } = item {
                let interface = &resolve.interfaces[*id];
                let name = interface.name.clone().unwrap_or_default();
                let docs = interface.docs.contents.clone().unwrap_or_default();
                assert!(
                    docs.lines().any(|line| line.starts_with("Capability: ")),
                    "{name} does not say its capability"
                );
                assert!(Capability::of_interface(&name).is_ok(), "{name}");
                interfaces.push(name);
            }
        }
        for capability in Capability::ALL {
            let named: Vec<&String> = interfaces
                .iter()
                .filter(|name| Capability::of_interface(name) == Ok(Some(capability)))
                .collect();
            let expected = usize::from(capability != Capability::LongLived);
            assert_eq!(named.len(), expected, "{capability}: {named:?}");
            if expected == 1 {
                assert_eq!(capability.interface(), Some(named[0].as_str()));
            }
        }
    }

    /// docs/plugins.md shows the table the server enforces: regenerate it with
    /// `DEVTOOLS_MCP_WRITE_DOCS=1 cargo test -p devtools-mcp-host --lib capability_table` after
    /// changing a declaration.
    #[test]
    fn the_documented_capability_table_is_the_enforced_one() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/plugins.md");
        let text = std::fs::read_to_string(&path).expect("docs/plugins.md");
        let (begin, end) = ("<!-- capabilities:begin -->\n", "<!-- capabilities:end -->");
        let start = text.find(begin).expect("the begin marker") + begin.len();
        let stop = text.find(end).expect("the end marker");
        let generated = capability_table();
        if std::env::var_os("DEVTOOLS_MCP_WRITE_DOCS").is_some() {
            let updated = format!("{}{generated}{}", &text[..start], &text[stop..]);
            std::fs::write(&path, updated).expect("write docs/plugins.md");
            return;
        }
        assert_eq!(
            &text[start..stop],
            generated,
            "docs/plugins.md's capability table differs from the declarations (regenerate it: DEVTOOLS_MCP_WRITE_DOCS=1 cargo test -p devtools-mcp-host --lib capability_table)"
        );
    }
}
