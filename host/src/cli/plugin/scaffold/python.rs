//! A Python tool: `app.py` against the bindings componentize-py makes from the tool's world
//! when it builds (`wit_world`), made a component with CPython inside (componentize-py
//! 0.25.1, from PyPI). CPython imports WASI; the server links a WASI that grants nothing.

use super::{Template, action, structured, write_files};
use std::path::Path;

/// The componentize-py the tests build with.
pub const COMPONENTIZE_PY_VERSION: &str = "0.25.1";

pub fn create(name: &str, root: &Path, template: Template) -> Result<(), String> {
    let source = match template {
        Template::PageReader => page_reader(name),
        Template::Action => action::python(name),
        Template::Structured => structured::python(name),
    };
    write_files(
        root,
        &[
            ("app.py", source),
            (".gitignore", "/dist\n__pycache__/\n".to_string()),
        ],
    )
}

fn page_reader(name: &str) -> String {
    format!(
        r#""""`{name}`: a devtools-mcp tool. Build it with `devtools-mcp plugin build`.

It imports the host's interfaces through `wit_world.imports`; each is a capability (see
wit/world.wit). componentize-py makes `wit_world` from that world when it builds.
"""

import json

from componentize_py_types import Err
from wit_world import exports
from wit_world.exports.tool import Annotations, Category, ToolDefinition
from wit_world.imports import pages, response

# The tool's parameters, as JSON Schema.
INPUT_SCHEMA = json.dumps(
    {{
        "type": "object",
        "properties": {{
            "prefix": {{
                "type": "string",
                "description": "Text to put before the page's URL in the answer (default: \"The page is at\").",
            }},
        }},
    }}
)


class Tool(exports.Tool):
    def definition(self, server_flags: str) -> ToolDefinition:
        return ToolDefinition(
            name="{name}",
            description="Tells the URL of the selected page.",
            annotations=Annotations(
                title=None,
                category=Category.DEBUGGING,
                read_only_hint=True,
                conditions=[],
            ),
            input_schema=INPUT_SCHEMA,
            page_scoped=True,
            blocked_by_dialog=False,
            file_params=[],
        )

    def handle(self, params: str, page) -> None:
        if page is None:
            raise Err("This page-scoped tool was called without a page.")
        prefix = json.loads(params).get("prefix") or "The page is at"
        response.append_line(f"{{prefix}} {{pages.url(page)}}")
"#
    )
}
