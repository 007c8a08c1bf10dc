//! Checks on what a component says about itself, before anything of it is listed: a tool name
//! an MCP client can address and a user can read (no control, bidi or look-alike characters),
//! bounded texts, and an input schema the host can validate arguments against in bounded time.

use crate::printable::{escape, is_deceptive};
use crate::runtime::{Category, ToolDefinition};
use serde_json::{Map, Value};

/// MCP tool names: 1 to 128 characters of `A-Z a-z 0-9 _ - .` (the MCP specification's
/// rule). ASCII only, so no two names can look alike through Unicode confusables or bidi
/// controls; names with the same [`skeleton`] are refused by the tool folders.
pub const MAX_NAME_CHARS: usize = 128;
pub const MAX_TITLE_BYTES: usize = 256;
pub const MAX_DESCRIPTION_BYTES: usize = 64 << 10;
pub const MAX_CONDITIONS: usize = 32;
pub const MAX_FILE_PARAMS: usize = 64;

/// Why a name is not a valid MCP tool name, if it is not.
pub fn name_problem(name: &str) -> Option<String> {
    if name.is_empty() || name.len() > MAX_NAME_CHARS {
        return Some(format!(
            "tool names must have 1 to {MAX_NAME_CHARS} characters (this one has {})",
            name.chars().count()
        ));
    }
    let bad = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))?;
    Some(format!(
        "tool names may use only A-Z, a-z, 0-9, `_`, `-` and `.`, and the name {} contains {}",
        escape(name),
        escape(&bad.to_string())
    ))
}

/// What a name looks like to a reader, after UTS #39's confusables for the characters a tool
/// name may hold: case folded, `I l 1` alike, `O 0` alike, `-` `_` `.` alike, and the
/// sequences `rn`, `vv` and `cl` read as `m`, `w` and `d`. Two tools whose names have the same
/// skeleton would be told apart by no person and no model, so the second is refused.
pub fn skeleton(name: &str) -> String {
    let folded: String = name
        .chars()
        .map(|c| match c {
            'I' | 'l' | '1' | '|' => 'l',
            'O' | 'o' | '0' => 'o',
            '-' | '_' | '.' => '_',
            other => other.to_ascii_lowercase(),
        })
        .collect();
    folded
        .replace("rn", "m")
        .replace("vv", "w")
        .replace("cl", "d")
}

fn text_problem(field: &str, text: &str, max: usize, allow_newlines: bool) -> Option<String> {
    if text.len() > max {
        return Some(format!(
            "its {field} has {} bytes, more than the {max} allowed",
            text.len()
        ));
    }
    let bad = text.chars().find(|&c| is_deceptive(c, allow_newlines))?;
    Some(format!(
        "its {field} contains the control or bidi character {}",
        escape(&bad.to_string())
    ))
}

/// Validates a definition; returns the parsed input schema. The error names the rule.
pub fn validate(definition: &ToolDefinition) -> Result<Map<String, Value>, String> {
    if let Some(problem) = name_problem(&definition.name) {
        return Err(format!("its tool name is refused: {problem}"));
    }
    let annotations = &definition.annotations;
    let texts = [
        (
            "description",
            definition.description.as_str(),
            MAX_DESCRIPTION_BYTES,
            true,
        ),
        (
            "title",
            annotations.title.as_deref().unwrap_or_default(),
            MAX_TITLE_BYTES,
            false,
        ),
    ];
    for (field, text, max, newlines) in texts {
        if let Some(problem) = text_problem(field, text, max, newlines) {
            return Err(problem);
        }
    }
    if annotations.conditions.len() > MAX_CONDITIONS
        || annotations
            .conditions
            .iter()
            .any(|c| name_problem(c).is_some())
    {
        return Err(format!(
            "its conditions must be at most {MAX_CONDITIONS} flag names (A-Z, a-z, 0-9, `_`, `-`, `.`)"
        ));
    }
    if definition.file_params.len() > MAX_FILE_PARAMS
        || definition
            .file_params
            .iter()
            .any(|p| name_problem(p).is_some())
    {
        return Err(format!(
            "its file parameters must be at most {MAX_FILE_PARAMS} parameter names (A-Z, a-z, 0-9, `_`, `-`, `.`)"
        ));
    }
    crate::schema::parse(&definition.input_schema)
        .map_err(|problem| format!("its input schema is refused: {problem}"))
}

/// An output schema MCP accepts: `"type": "object"` at the top (a tool's `structuredContent`
/// is an object).
pub fn object_schema(schema: Map<String, Value>) -> Result<Map<String, Value>, String> {
    match schema.get("type") {
        Some(Value::String(kind)) if kind == "object" => Ok(schema),
        _ => Err("MCP requires an output schema of \"type\": \"object\" at the top".into()),
    }
}

/// The reference's name, label and default of each category.
pub fn category_info(category: Category) -> (&'static str, &'static str, bool) {
    match category {
        Category::Input => ("input", "Input automation", false),
        Category::Navigation => ("navigation", "Navigation automation", false),
        Category::Emulation => ("emulation", "Emulation", false),
        Category::Performance => ("performance", "Performance", false),
        Category::Network => ("network", "Network", false),
        Category::Debugging => ("debugging", "Debugging", false),
        Category::Extensions => ("extensions", "Extensions", true),
        Category::ExperimentalThirdParty => ("experimentalThirdParty", "Third-party", true),
        Category::Memory => ("memory", "Memory", false),
        Category::ExperimentalWebmcp => ("experimentalWebmcp", "WebMCP", true),
        Category::Pwa => ("pwa", "Progressive Web Apps", true),
    }
}

/// Every category, in the WIT's order.
pub const CATEGORIES: [Category; 11] = [
    Category::Input,
    Category::Navigation,
    Category::Emulation,
    Category::Performance,
    Category::Network,
    Category::Debugging,
    Category::Extensions,
    Category::ExperimentalThirdParty,
    Category::Memory,
    Category::ExperimentalWebmcp,
    Category::Pwa,
];

/// The category `category_info` names `name`.
pub fn category_named(name: &str) -> Option<Category> {
    CATEGORIES
        .into_iter()
        .find(|category| category_info(*category).0 == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::Category;
    use crate::runtime::calling::bindings_for_tests::definition;

    #[test]
    fn look_alike_names_share_a_skeleton() {
        for (a, b) in [
            ("click", "cIick"),
            ("click", "c1ick"),
            ("take_snapshot", "take-snapshot"),
            ("take_snapshot", "TAKE.SNAPSH0T"),
            ("list_pages", "Iist_pages"),
            ("emulate", "ernulate"),
            ("wait_for", "wait_for"),
            ("new_page", "new_page"),
            ("close", "dose"),
        ] {
            assert_eq!(skeleton(a), skeleton(b), "{a} / {b}");
        }
        for (a, b) in [("click", "clicks"), ("fill", "fil"), ("hover", "h0ver_2")] {
            assert_ne!(skeleton(a), skeleton(b), "{a} / {b}");
        }
    }

    #[test]
    fn names_follow_the_mcp_rules() {
        assert_eq!(name_problem("take_snapshot"), None);
        assert_eq!(name_problem("a.b-c_9"), None);
        for bad in [
            "",
            "click\u{202E}",
            "cl\u{0456}ck",
            "a b",
            "tab\t",
            &"x".repeat(129),
        ] {
            assert!(name_problem(bad).is_some(), "{bad:?}");
        }
    }

    #[test]
    fn definitions_with_deceptive_or_oversized_fields_are_refused_naming_the_rule() {
        let mut tool = definition("t", Category::Debugging, &[]);
        assert!(validate(&tool).is_ok());
        tool.description = "fine\nlines\ttabs".into();
        assert!(validate(&tool).is_ok());
        tool.description = "hidden \u{1b}[2J".into();
        let error = validate(&tool).expect_err("refused");
        assert!(
            error.contains("description contains the control or bidi character \\u{1b}"),
            "{error}"
        );
        tool.description = "x".repeat(MAX_DESCRIPTION_BYTES + 1);
        assert!(
            validate(&tool)
                .expect_err("refused")
                .contains("more than the")
        );
        let mut tool = definition("t", Category::Debugging, &[]);
        tool.annotations.title = Some("a\u{202E}b".into());
        assert!(validate(&tool).expect_err("refused").contains("title"));
        let mut tool = definition("t", Category::Debugging, &[]);
        tool.file_params = vec!["../x".into()];
        assert!(
            validate(&tool)
                .expect_err("refused")
                .contains("file parameters")
        );
    }
}
