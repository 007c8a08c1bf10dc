//! `devtools:tool/navigate` (`navigate`): moving a page. The URL is checked as the browser
//! parses it, against the server's navigation policy and the plugin's patterns; an init script
//! or a URL that runs script also needs `script`.

use super::function::{HostFunction as F, Marks as M};
use super::{CallState, Outcome, PageHandle, or_return, timeout};
use crate::browser::Target;
use crate::policy::capability::Capability::Script;
use crate::runtime::calling::bindings::v0_3::devtools::tool::navigate;
use wasmtime::component::Resource;

/// An init script or a `javascript:`/`data:` URL runs script.
const NAVIGATE: F = F::new(
    "navigate",
    "navigate",
    M::NAVIGATES.and(M::PAGE_CONTENT).and(M::ON_PAGE),
)
.depending(&[Script]);

pub(super) const FUNCTIONS: &[&F] = &[&NAVIGATE];

impl navigate::Host for CallState {
    async fn navigate(
        &mut self,
        handle: Resource<PageHandle>,
        target: navigate::Navigation,
        options: navigate::NavigateOptions,
    ) -> Outcome<navigate::Navigated> {
        self.dispatch(&NAVIGATE, async |call| {
            let target = match &target {
                navigate::Navigation::Url(url) => Target::Url(call.require_url(url)?),
                navigate::Navigation::Back => Target::Back,
                navigate::Navigation::Forward => Target::Forward,
                navigate::Navigation::Reload(ignore_cache) => Target::Reload {
                    ignore_cache: *ignore_cache,
                },
            };
            let page_id = call.page_id(&handle).await?;
            // The server's navigation policy (--blockedUrlPatterns, JavaScript evaluation) is
            // checked before anything is installed in the page.
            let policy = or_return!(call.session()).navigation_policy();
            if let Target::Url(url) = &target {
                or_return!(policy.check(url));
            }
            if options.init_script.is_some() && !policy.javascript_evaluation {
                return Ok(Err(
                    "initScript is not allowed when JavaScript evaluation is disabled.".into(),
                ));
            }
            // An init script is JavaScript in the page: it needs `script`, and it is removed
            // when the navigation ends (or, if the call is stopped first, when the call ends).
            if let Some(source) = options.init_script.as_deref() {
                or_return!(call.add_init_script(page_id, source).await?);
            }
            let link = or_return!(call.page(&handle).await?).link();
            // A load can take long: other pages' calls go on meanwhile (parallel pages).
            let navigated = async move {
                link.navigate(
                    target,
                    timeout(options.timeout_ms),
                    options.accept_before_unload,
                    None,
                )
                .await
            };
            let outcome = call.unlocked(navigated).await;
            call.remove_init_scripts(page_id).await;
            Ok(outcome.map(|done| navigate::Navigated {
                url: done.url,
                before_unload_handled: done.before_unload_handled,
            }))
        })
        .await
    }
}
