//! `take_snapshot`: the page's accessibility tree as text, with uids to act on.

use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// Whether to include all possible information available in the full a11y tree. Default is false.
    verbose: Option<bool>,
    /// The absolute path, or a path relative to the current working directory, to save the snapshot to instead of attaching it to the response.
    file_path: Option<String>,
    /// Beyond 1.11.0 (--experimentalScopedSnapshots): snapshot only the subtree under the element with this uid; its uids stay valid.
    uid: Option<String>,
    /// Beyond 1.11.0 (--experimentalScopedSnapshots): at most this many levels below the root (or the uid).
    depth: Option<u32>,
}

struct TakeSnapshot;

/// `uid` and `depth` exist only with --experimentalScopedSnapshots: the default schema is 1.11.0's.
fn scoped(definition: Definition, flags: &Flags) -> Definition {
    match flags.enabled("experimentalScopedSnapshots") {
        true => definition,
        false => definition.hide_param("uid").hide_param("depth"),
    }
}

impl PageTool for TakeSnapshot {
    type Params = Params;

    fn definition(flags: &Flags) -> Definition {
        let definition = Definition::new(
            "take_snapshot",
            Category::Debugging,
            "Take a text snapshot of the target page based on the a11y tree. The snapshot lists page elements along with a unique\nidentifier (uid). Always use the latest snapshot. Prefer taking a snapshot over taking a screenshot. The snapshot indicates the element selected\nin the DevTools Elements panel (if any).",
        )
        .blocked_by_dialog()
        .file_param("filePath");
        scoped(definition, flags)
    }

    fn handle(_page: &Page, params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        response.include_scoped_snapshot(
            params.verbose.unwrap_or(false),
            params.file_path,
            params.uid,
            params.depth,
        );
        Ok(())
    }
}

devtools_tool::register_page_tool!(TakeSnapshot);
