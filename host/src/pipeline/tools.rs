//! The tools a server offers, under one name: a [`ToolSet`] (the loaded components with their
//! schemas, validators and listings, immutable), the [`CurrentToolSet`] calls take theirs from
//! (swapped whole on a reload, never under a running call), and the [`ToolFolders`] they are
//! loaded from (embedded built-ins and plugin folders, watched with `--watch`), and the
//! [`known_names::KnownNames`] configuration is checked against.

pub mod current;
pub mod folders;
pub mod known_names;
pub mod set;

pub use current::CurrentToolSet;
pub use folders::ToolFolders;
pub use set::{ToolEntry, ToolSet};
