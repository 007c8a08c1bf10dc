//! A tool's linked code, ready to instantiate: linked when the tool was loaded, or on its
//! first call. Built-in tools described from the remembered definitions (`remembered`) start
//! without their code: deserialising 63 tools' native code at every start cost most of the
//! start-up time and a quarter of the server's memory, for tools a session mostly never calls.

use crate::runtime::calling::ToolPre;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

type Link = dyn Fn() -> Result<ToolPre, String> + Send + Sync;

/// Cheap to clone: clones share the linked code (and link it once).
#[derive(Clone)]
pub struct ToolCode {
    linked: Arc<OnceLock<ToolPre>>,
    /// Held while linking, so concurrent first calls link once.
    linking: Arc<Mutex<()>>,
    link: Option<Arc<Link>>,
}

impl ToolCode {
    /// Code linked already.
    pub fn ready(pre: ToolPre) -> ToolCode {
        ToolCode {
            linked: Arc::new(OnceLock::from(pre)),
            linking: Arc::default(),
            link: None,
        }
    }

    /// Code linked by `link` on first use. Its error is the call's error and is not kept: a
    /// refusal can pass (the kernel refusing a memory image under load), so the next call
    /// links again.
    pub fn on_first_use(
        link: impl Fn() -> Result<ToolPre, String> + Send + Sync + 'static,
    ) -> ToolCode {
        ToolCode {
            linked: Arc::new(OnceLock::new()),
            linking: Arc::default(),
            link: Some(Arc::new(link)),
        }
    }

    /// The linked code, linking it now if this is its first use.
    pub fn linked(&self) -> Result<&ToolPre, String> {
        if let Some(pre) = self.linked.get() {
            return Ok(pre);
        }
        let _linking = self.linking.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(pre) = self.linked.get() {
            return Ok(pre);
        }
        let pre = match &self.link {
            Some(link) => link(),
            None => Err("the tool's code is missing".into()),
        }
        .map_err(|error| format!("The tool's code could not be loaded: {error}"))?;
        Ok(self.linked.get_or_init(|| pre))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn a_failed_link_is_tried_again_on_the_next_call() {
        let tries = Arc::new(AtomicUsize::new(0));
        let counted = tries.clone();
        let code = ToolCode::on_first_use(move || {
            counted.fetch_add(1, Ordering::SeqCst);
            Err("the kernel refused a memory image".into())
        });
        let error = code.linked().err().expect("the link fails");
        assert_eq!(
            error,
            "The tool's code could not be loaded: the kernel refused a memory image"
        );
        assert!(code.clone().linked().is_err());
        assert_eq!(tries.load(Ordering::SeqCst), 2, "each call links again");
    }
}
