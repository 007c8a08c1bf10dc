//! `devtools:tool/sessions`: named sessions (beyond 1.11.0, `--sessionStore`). Every function
//! needs `sessions`, granted to the built-in tools and to no plugin by default: restoring signs
//! the browser in as a saved login. The session does the work over its own browser context and
//! its owner's folder; the answers carry names, sites, origins and counts, never values (the
//! sites and origins are what pages showed, so they are marked page content).

use super::function::{HostFunction as F, Marks as M};
use super::{CallState, or_return};
use crate::runtime::calling::bindings::v0_3::devtools::tool::sessions as wit;

const SAVE: F = F::new("sessions", "save", M::PAGE_CONTENT);
const RESTORE: F = F::new("sessions", "restore", M::PAGE_CONTENT);
const LIST_SAVED: F = F::new("sessions", "list-saved", M::PAGE_CONTENT);
const DELETE: F = F::new("sessions", "delete", M::PAGE_CONTENT);

pub(super) const FUNCTIONS: &[&F] = &[&SAVE, &RESTORE, &LIST_SAVED, &DELETE];

type Lines = wasmtime::Result<Result<Vec<String>, String>>;

impl wit::Host for CallState {
    async fn save(&mut self, name: String) -> Lines {
        self.dispatch(&SAVE, async |call| {
            Ok(or_return!(call.session()).save_named(&name).await)
        })
        .await
    }

    async fn restore(&mut self, name: String) -> Lines {
        self.dispatch(&RESTORE, async |call| {
            Ok(or_return!(call.session()).restore_named(&name).await)
        })
        .await
    }

    async fn list_saved(&mut self) -> Lines {
        self.dispatch(&LIST_SAVED, async |call| {
            Ok(or_return!(call.session()).list_named())
        })
        .await
    }

    async fn delete(&mut self, name: String) -> Lines {
        self.dispatch(&DELETE, async |call| {
            Ok(or_return!(call.session()).delete_named(&name))
        })
        .await
    }
}
