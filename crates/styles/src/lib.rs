//! The CSS cascade of one element: `CSS.getMatchedStylesForNode`'s reply in, the lines of
//! chrome-devtools-mcp 1.11.0's `get_css_styles` out (DevTools' matched styles: which
//! declarations win, which are overridden, inherited or invalid, per rule and ancestor).
//!
//! An engine: data in, text out. No I/O, no async runtime, no browser types; the host reads
//! the element, its ancestors and the style sheets over CDP and calls [`collect`] then
//! [`render`].

mod cascade;
mod format;
mod metadata;
mod model;
mod user_agent;

pub use cascade::{ANIMATED, Input, NodeRef, OutRule, collect};
pub use format::render;
pub use metadata::simple_selector;
pub use model::RuleInfo;
