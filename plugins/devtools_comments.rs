//! What the three DevTools-comment tools answer (included with `#[path]`: a file, not a crate).
//! They are 1.11.0's texts: without a DevTools window, and with one whose comment bridge is
//! missing (the bridge is a DevTools frontend feature this server does not drive).

use devtools_tool::{Page, Response};

const NOT_OPEN: &str =
    "DevTools window is not open for this page. Call open_devtools first to open DevTools.";
const UNAVAILABLE: &str = "DevTools comments are not working right now. Possible reasons: the connected Chrome version does not support DevTools comments, the feature is disabled, or the DevTools window has not finished loading. Try again later, or continue without DevTools comments.";

pub fn answer(page: &Page, response: &mut Response) {
    response.line(match page.devtools_open() {
        true => UNAVAILABLE,
        false => NOT_OPEN,
    });
}
