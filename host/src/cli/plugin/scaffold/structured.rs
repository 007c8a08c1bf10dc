//! The `structured` template: a tool that answers JSON (the page's title, URL and headings),
//! in each language with the same parameters, handler and answer. It declares the answer's
//! schema (contract 0.3.1) and returns it as a structured result, which clients that read
//! structured content get typed; the same JSON is the answer's text, which every client reads.

use super::fill_in;
use super::template::READ_OUTLINE;

/// The tool's description and parameter docs, written for the model that calls it.
const DESCRIPTION: &str = "Returns the outline of the selected page as JSON: {title: string, url: string, headings: [{level: 1-6, text: string}]}, the headings in page order. Use it to see how a page is organised before reading or acting on a part of it.";
const MAX_HEADINGS: &str = "The most headings to return, from the top of the page (default 20).";

pub fn rust(name: &str, type_name: &str) -> String {
    fill(
        r##"//! `__NAME__`: a devtools-mcp tool. Build it with `devtools-mcp plugin build`; test it on its
//! fixture page (test/) with `devtools-mcp plugin test .`.
//!
//! Structured data: it answers JSON (the page's title, URL and headings) that a model or a
//! program can parse. Its shape is declared (`output::<Outline>()`), so clients that read
//! structured content get it typed, and the host checks every answer against it.

use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response};
use serde::{Deserialize, Serialize};

// The parameters. Their doc comments (`///`) become the tool's JSON Schema, which is what
// the model calling the tool reads: write them for that model; notes for people go in plain
// `//` comments like this one.
/// How much of the outline to return.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// __MAX_HEADINGS__
    max_headings: Option<u32>,
}

#[derive(Deserialize, Serialize, schemars::JsonSchema)]
struct Heading {
    level: u8,
    text: String,
}

/// What the page says (title and headings).
#[derive(Deserialize)]
struct Read {
    title: String,
    headings: Vec<Heading>,
}

/// The answer, as the description tells the model; its schema is the tool's output schema.
#[derive(Serialize, schemars::JsonSchema)]
struct Outline {
    title: String,
    url: String,
    headings: Vec<Heading>,
}

struct __TYPE__;

impl PageTool for __TYPE__ {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new("__NAME__", Category::Debugging, "__DESCRIPTION__")
            .read_only()
            .output::<Outline>()
    }

    fn handle(page: &Page, params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let limit = params.max_headings.unwrap_or(20);
        let read = page.evaluate_expression(&format!("({READ_OUTLINE})({limit})"))?;
        let read: Read = serde_json::from_str(&read)
            .map_err(|error| format!("The page answered unexpectedly: {error}"))?;
        let outline = Outline {
            title: read.title,
            url: page.url(),
            headings: read.headings,
        };
        response.line(serde_json::to_string(&outline).map_err(|error| error.to_string())?);
        response.structured(&outline)
    }
}

/// Reads the title and headings in the page (JavaScript, run by the `script` capability).
const READ_OUTLINE: &str = r#"__JS__"#;

devtools_tool::register_page_tool!(__TYPE__);
"##,
        name,
        type_name,
    )
}

pub fn typescript(name: &str) -> String {
    fill(
        r##"// `__NAME__`: a devtools-mcp tool. Build it with `devtools-mcp plugin build`; test it on its
// fixture page (test/) with `devtools-mcp plugin test .`.
//
// Structured data: it answers JSON (the page's title, URL and headings) that a model or a
// program can parse. Its shape is declared (`outputSchema`), so clients that read structured
// content get it typed, and the host checks every answer against it.
import { appendLine, declareOutputSchema, setStructuredResult } from 'devtools:tool/response@__CONTRACT__';
import { url } from 'devtools:tool/pages@__CONTRACT__';
import { evaluateExpression } from 'devtools:tool/script@__CONTRACT__';
import type { ToolDefinition } from 'devtools:tool/tool@__CONTRACT__';
import type { Page } from 'devtools:tool/types@__CONTRACT__';

/// The tool's parameters, as its JSON Schema below describes them to the model.
interface Params {
  maxHeadings?: number;
}

const inputSchema = {
  type: 'object',
  properties: {
    maxHeadings: { type: 'integer', minimum: 0, description: "__MAX_HEADINGS__" },
  },
};

/// The answer, as the description tells the model.
interface Outline {
  title: string;
  url: string;
  headings: { level: number; text: string }[];
}

/// The answer's JSON Schema: declared in `definition`, checked by the host on every answer.
const outputSchema = {
  type: 'object',
  properties: {
    title: { type: 'string' },
    url: { type: 'string' },
    headings: {
      type: 'array',
      items: {
        type: 'object',
        properties: { level: { type: 'integer', minimum: 1, maximum: 6 }, text: { type: 'string' } },
        required: ['level', 'text'],
      },
    },
  },
  required: ['title', 'url', 'headings'],
};

/// Reads the title and headings in the page (JavaScript, run by the `script` capability).
const readOutline = `__JS__`;

export const tool = {
  definition(_serverFlags: string): ToolDefinition {
    declareOutputSchema(JSON.stringify(outputSchema));
    return {
      name: '__NAME__',
      description: "__DESCRIPTION__",
      annotations: { title: undefined, category: 'debugging', readOnlyHint: true, conditions: [] },
      inputSchema: JSON.stringify(inputSchema),
      pageScoped: true,
      blockedByDialog: false,
      fileParams: [],
    };
  },

  handle(params: string, page: Page | undefined): void {
    if (page === undefined) {
      throw 'This page-scoped tool was called without a page.';
    }
    const { maxHeadings }: Params = JSON.parse(params);
    const read = JSON.parse(evaluateExpression(page, `(${readOutline})(${maxHeadings ?? 20})`));
    const outline: Outline = { title: read.title, url: url(page), headings: read.headings };
    appendLine(JSON.stringify(outline));
    setStructuredResult(JSON.stringify(outline));
  },
};
"##,
        name,
        "",
    )
}

pub fn python(name: &str) -> String {
    fill(
        r##""""`__NAME__`: a devtools-mcp tool. Build it with `devtools-mcp plugin build`; test it on its
fixture page (test/) with `devtools-mcp plugin test .`.

Structured data: it answers JSON (the page's title, URL and headings) that a model or a program
can parse. Its shape is declared (OUTPUT_SCHEMA), so clients that read structured content get it
typed, and the host checks every answer against it.
"""

import json

from componentize_py_types import Err
from wit_world import exports
from wit_world.exports.tool import Annotations, Category, ToolDefinition
from wit_world.imports import pages, response, script

# The tool's parameters, as JSON Schema: the descriptions are what the model reads.
INPUT_SCHEMA = json.dumps(
    {
        "type": "object",
        "properties": {
            "maxHeadings": {"type": "integer", "minimum": 0, "description": "__MAX_HEADINGS__"},
        },
    }
)

# The answer's JSON Schema: declared in `definition`, checked by the host on every answer.
OUTPUT_SCHEMA = json.dumps(
    {
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "url": {"type": "string"},
            "headings": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "level": {"type": "integer", "minimum": 1, "maximum": 6},
                        "text": {"type": "string"},
                    },
                    "required": ["level", "text"],
                },
            },
        },
        "required": ["title", "url", "headings"],
    }
)

# Reads the title and headings in the page (JavaScript, run by the `script` capability).
READ_OUTLINE = """__JS__"""


class Tool(exports.Tool):
    def definition(self, server_flags: str) -> ToolDefinition:
        response.declare_output_schema(OUTPUT_SCHEMA)
        return ToolDefinition(
            name="__NAME__",
            description="__DESCRIPTION__",
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
        limit = json.loads(params).get("maxHeadings", 20)
        read = json.loads(script.evaluate_expression(page, f"({READ_OUTLINE})({int(limit)})"))
        outline = {"title": read["title"], "url": pages.url(page), "headings": read["headings"]}
        # Compact, as the other languages write it.
        response.append_line(json.dumps(outline, separators=(",", ":")))
        response.set_structured_result(json.dumps(outline))
"##,
        name,
        "",
    )
}

/// The template with its texts in.
fn fill(text: &str, name: &str, type_name: &str) -> String {
    fill_in(text, name, type_name)
        .replace("__DESCRIPTION__", DESCRIPTION)
        .replace("__MAX_HEADINGS__", MAX_HEADINGS)
        .replace("__JS__", READ_OUTLINE)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The texts go between double quotes in every language (a TypeScript string in single
    /// quotes broke on "link's"): none may hold a quote, a backslash or a line break.
    #[test]
    fn the_model_facing_texts_fit_any_languages_string_literal() {
        for text in [DESCRIPTION, MAX_HEADINGS] {
            assert!(!text.contains(['"', '\\', '\n']), "{text}");
        }
    }
}
