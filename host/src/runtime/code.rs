//! A tool's linked code, ready to instantiate: linked when the tool was loaded, or on its
//! first call. Built-in tools described from the remembered definitions (`remembered`) start
//! without their code: deserialising 63 tools' native code at every start cost most of the
//! start-up time and a quarter of the server's memory, for tools a session mostly never calls.

use super::bindings::ToolPre;
use std::sync::{Arc, OnceLock};

type Link = dyn Fn() -> Result<ToolPre, String> + Send + Sync;

/// Cheap to clone: clones share the linked code (and link it once).
#[derive(Clone)]
pub struct ToolCode {
    linked: Arc<OnceLock<Result<ToolPre, String>>>,
    link: Option<Arc<Link>>,
}

impl ToolCode {
    /// Code linked already.
    pub fn ready(pre: ToolPre) -> ToolCode {
        ToolCode {
            linked: Arc::new(OnceLock::from(Ok(pre))),
            link: None,
        }
    }

    /// Code linked by `link` on first use; its error (kept, not retried: the code is part of
    /// the binary and will not change) is the call's error.
    pub fn on_first_use(
        link: impl Fn() -> Result<ToolPre, String> + Send + Sync + 'static,
    ) -> ToolCode {
        ToolCode {
            linked: Arc::new(OnceLock::new()),
            link: Some(Arc::new(link)),
        }
    }

    /// The linked code, linking it now if this is its first use.
    pub fn linked(&self) -> Result<&ToolPre, String> {
        self.linked
            .get_or_init(|| match &self.link {
                Some(link) => link(),
                None => Err("the tool's code is missing".into()),
            })
            .as_ref()
            .map_err(|error| format!("The tool's code could not be loaded: {error}"))
    }
}
