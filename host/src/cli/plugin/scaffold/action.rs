//! The `action` template: a tool that follows a link by its text and says where the page
//! landed, in each language with the same parameters, handler and answer. The navigation goes
//! through the `navigate` capability, so the server checks it as it checks its own navigating
//! tools: the target against the operator's URL patterns, and the page where it landed.

use super::fill_in;
use super::template::FIND_LINK;

/// The tool's description and parameter docs, written for the model that calls it.
const DESCRIPTION: &str = "Follows a link of the selected page by its visible text and tells the URL the page landed on. Fails when no link has that text (naming the links there are) or when the page lands on a URL without `expectUrl` in it.";
const LINK_TEXT: &str = "The link's visible text, as the page shows it: an exact match is preferred, else the first link containing it.";
const EXPECT_URL: &str =
    "Part of the URL the page must land on, e.g. /checkout; leave it out to accept any landing.";

pub fn rust(name: &str, type_name: &str) -> String {
    fill(
        r##"//! `__NAME__`: a devtools-mcp tool. Build it with `devtools-mcp plugin build`; test it on its
//! fixture page (test/) with `devtools-mcp plugin test .`.
//!
//! An action: it follows a link by its text and says where the page landed. It navigates
//! through the server (capability `navigate`), which checks the target and the landing
//! against the operator's URL patterns as for the built-in navigating tools.

use devtools_tool::{
    Category, Definition, Flags, NavigateOptions, Navigation, Page, PageTool, Response,
};
use serde::Deserialize;

// The parameters. Their doc comments (`///`) become the tool's JSON Schema, which is what
// the model calling the tool reads: write them for that model; notes for people go in plain
// `//` comments like this one.
/// Which link to follow, and where it must lead.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// __LINK_TEXT__
    link_text: String,
    /// __EXPECT_URL__
    expect_url: Option<String>,
}

/// What the page says: the link's address, or the texts of the links it has.
#[derive(Deserialize)]
struct Found {
    href: Option<String>,
    #[serde(default)]
    links: Vec<String>,
}

struct __TYPE__;

impl PageTool for __TYPE__ {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new("__NAME__", Category::Navigation, "__DESCRIPTION__")
    }

    fn handle(page: &Page, params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let wanted = serde_json::to_string(&params.link_text).map_err(|error| error.to_string())?;
        let found = page.evaluate_expression(&format!("({FIND_LINK})({wanted})"))?;
        let found: Found = serde_json::from_str(&found)
            .map_err(|error| format!("The page answered unexpectedly: {error}"))?;
        let Some(href) = found.href else {
            return Err(format!(
                "No link reads {:?} on this page; its links read: {}.",
                params.link_text,
                found.links.join(", ")
            ));
        };
        let options = NavigateOptions {
            timeout_ms: None,
            accept_before_unload: false,
            init_script: None,
        };
        let landed = page.navigate(&Navigation::Url(href), &options)?;
        if let Some(expected) = &params.expect_url
            && !landed.url.contains(expected.as_str())
        {
            return Err(format!(
                "The link {:?} landed on {}, which is not {expected:?}.",
                params.link_text, landed.url
            ));
        }
        response.line(format!(
            "Followed the link {:?}: the page landed on {}.",
            params.link_text, landed.url
        ));
        Ok(())
    }
}

/// Finds the link in the page (JavaScript, run by the `script` capability).
const FIND_LINK: &str = r#"__JS__"#;

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
// An action: it follows a link by its text and says where the page landed. It navigates
// through the server (capability `navigate`), which checks the target and the landing
// against the operator's URL patterns as for the built-in navigating tools.
import { appendLine } from 'devtools:tool/response@__CONTRACT__';
import { navigate } from 'devtools:tool/navigate@__CONTRACT__';
import { evaluateExpression } from 'devtools:tool/script@__CONTRACT__';
import type { ToolDefinition } from 'devtools:tool/tool@__CONTRACT__';
import type { Page } from 'devtools:tool/types@__CONTRACT__';

/// The tool's parameters, as its JSON Schema below describes them to the model.
interface Params {
  linkText: string;
  expectUrl?: string;
}

const inputSchema = {
  type: 'object',
  properties: {
    linkText: { type: 'string', description: "__LINK_TEXT__" },
    expectUrl: { type: 'string', description: "__EXPECT_URL__" },
  },
  required: ['linkText'],
};

/// Finds the link in the page (JavaScript, run by the `script` capability).
const findLink = `__JS__`;

export const tool = {
  definition(_serverFlags: string): ToolDefinition {
    return {
      name: '__NAME__',
      description: "__DESCRIPTION__",
      annotations: { title: undefined, category: 'navigation', readOnlyHint: false, conditions: [] },
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
    const { linkText, expectUrl }: Params = JSON.parse(params);
    const found: { href?: string; links?: string[] } = JSON.parse(
      evaluateExpression(page, `(${findLink})(${JSON.stringify(linkText)})`),
    );
    if (!found.href) {
      throw `No link reads ${JSON.stringify(linkText)} on this page; its links read: ${(found.links ?? []).join(', ')}.`;
    }
    const options = { timeoutMs: undefined, acceptBeforeUnload: false, initScript: undefined };
    const landed = navigate(page, { tag: 'url', val: found.href }, options);
    if (expectUrl !== undefined && !landed.url.includes(expectUrl)) {
      throw `The link ${JSON.stringify(linkText)} landed on ${landed.url}, which is not ${JSON.stringify(expectUrl)}.`;
    }
    appendLine(`Followed the link ${JSON.stringify(linkText)}: the page landed on ${landed.url}.`);
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

An action: it follows a link by its text and says where the page landed. It navigates through
the server (capability `navigate`), which checks the target and the landing against the
operator's URL patterns as for the built-in navigating tools.
"""

import json

from componentize_py_types import Err
from wit_world import exports
from wit_world.exports.tool import Annotations, Category, ToolDefinition
from wit_world.imports import navigate, response, script

# The tool's parameters, as JSON Schema: the descriptions are what the model reads.
INPUT_SCHEMA = json.dumps(
    {
        "type": "object",
        "properties": {
            "linkText": {"type": "string", "description": "__LINK_TEXT__"},
            "expectUrl": {"type": "string", "description": "__EXPECT_URL__"},
        },
        "required": ["linkText"],
    }
)

# Finds the link in the page (JavaScript, run by the `script` capability).
FIND_LINK = """__JS__"""


class Tool(exports.Tool):
    def definition(self, server_flags: str) -> ToolDefinition:
        return ToolDefinition(
            name="__NAME__",
            description="__DESCRIPTION__",
            annotations=Annotations(
                title=None,
                category=Category.NAVIGATION,
                read_only_hint=False,
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
        args = json.loads(params)
        link_text = args["linkText"]
        expect_url = args.get("expectUrl")
        found = json.loads(
            script.evaluate_expression(page, f"({FIND_LINK})({json.dumps(link_text)})")
        )
        href = found.get("href")
        if not href:
            links = ", ".join(found.get("links", []))
            raise Err(f"No link reads {json.dumps(link_text)} on this page; its links read: {links}.")
        options = navigate.NavigateOptions(
            timeout_ms=None, accept_before_unload=False, init_script=None
        )
        landed = navigate.navigate(page, navigate.Navigation_Url(href), options)
        if expect_url is not None and expect_url not in landed.url:
            raise Err(
                f"The link {json.dumps(link_text)} landed on {landed.url}, which is not {json.dumps(expect_url)}."
            )
        response.append_line(
            f"Followed the link {json.dumps(link_text)}: the page landed on {landed.url}."
        )
"##,
        name,
        "",
    )
}

/// The template with its texts in.
fn fill(text: &str, name: &str, type_name: &str) -> String {
    fill_in(text, name, type_name)
        .replace("__DESCRIPTION__", DESCRIPTION)
        .replace("__LINK_TEXT__", LINK_TEXT)
        .replace("__EXPECT_URL__", EXPECT_URL)
        .replace("__JS__", FIND_LINK)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The texts go between double quotes in every language (a TypeScript string in single
    /// quotes broke on "link's"): none may hold a quote, a backslash or a line break.
    #[test]
    fn the_model_facing_texts_fit_any_languages_string_literal() {
        for text in [DESCRIPTION, LINK_TEXT, EXPECT_URL] {
            assert!(!text.contains(['"', '\\', '\n']), "{text}");
        }
    }
}
