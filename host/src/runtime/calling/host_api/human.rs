//! `devtools:tool/human`: a person in the loop. The host opens the live view, hands its URL
//! to the client (never to the plugin), waits for Done within the call's wall clock, and
//! answers with what changed. Only with `--experimentalHumanInTheLoop` (on stdio), or for a
//! tenant that opted in under `serve` (its calls run with a [`tenant::Endpoint`]).

use super::function::{HostFunction as F, Marks as M};
use super::{CallState, PageHandle, or_return};
use crate::activity::{self, HumanWanted};
use crate::browser::features::human::{Ended, LiveView, tenant};
use crate::browser::features::screencast::Screencast;
use crate::runtime::calling::bindings::v0_3::devtools::tool::human;
use std::time::Duration;
use wasmtime::component::Resource;

/// The person may move the page anywhere, and the answer carries the page's URLs.
const REQUEST: F = F::new(
    "human",
    "request",
    M::NAVIGATES.and(M::PAGE_CONTENT).and(M::ON_PAGE),
);

pub(super) const FUNCTIONS: &[&F] = &[&REQUEST];

/// How long a person gets when the tool names no time.
const DEFAULT_WAIT: Duration = Duration::from_secs(300);
/// What the call keeps of its wall clock to answer after the wait.
const ANSWER_MARGIN: Duration = Duration::from_secs(5);
/// The longest reason shown to the person.
const MAX_REASON: usize = 500;

type Lines = wasmtime::Result<Result<Vec<String>, String>>;

impl human::Host for CallState {
    async fn request(
        &mut self,
        handle: Resource<PageHandle>,
        reason: String,
        timeout_seconds: Option<u32>,
    ) -> Lines {
        self.dispatch(&REQUEST, async |call| {
            let session = or_return!(call.session());
            if !session.browser_options().human_in_the_loop && tenant::current().is_none() {
                return Ok(Err(
                    "The live view is off: start the server (stdio) with --experimentalHumanInTheLoop to let a person act on a page."
                        .to_string(),
                ));
            }
            let budget = call.wall_clock().saturating_sub(ANSWER_MARGIN);
            let asked = timeout_seconds
                .filter(|seconds| *seconds > 0)
                .map_or(DEFAULT_WAIT, |seconds| Duration::from_secs(u64::from(seconds)));
            let limit = asked.min(budget);
            let id = call.page_id(&handle).await?;
            let session = or_return!(call.session());
            let before_ids = session.page_ids();
            let legacy_recorder = session.browser_options().screencast.legacy;
            let page = or_return!(session.page_mut(id));
            if legacy_recorder && Screencast::is_recording(page) {
                // Both would use the page's one screencast; ending the view would end the video.
                return Ok(Err(
                    "A screencast recording runs on this page with --experimentalScreencast: stop it with screencast_stop before asking for a person.".to_string(),
                ));
            }
            let link = page.link();
            let before_url = link.url().await;
            let reason: String = reason.trim().chars().take(MAX_REASON).collect();
            let reason = if reason.is_empty() {
                "the agent needs a person on this page".to_string()
            } else {
                reason
            };
            let view = or_return!(LiveView::open(link.clone(), &reason).await);
            let url = view.url().to_string();
            let told = activity::want_human(Some(HumanWanted {
                url: url.clone(),
                reason: reason.clone(),
            }));
            tracing::info!(%url, "request_human: a live view waits for a person");
            if !told {
                // No face follows this call (a one-shot run): stderr is the only way out.
                eprintln!("devtools-mcp: a person is needed ({reason}): open {url}");
            }
            activity::set(|| format!("human.request: waiting for a person at {url}"));
            let ended = call.unlocked(view.wait(limit)).await;
            activity::want_human(None);
            view.close().await;
            let mut lines = vec![match ended {
                Ended::Done(took) => format!(
                    "The person pressed Done after {} s.",
                    took.as_secs()
                ),
                Ended::TimedOut(limit) if limit < asked => format!(
                    "No one pressed Done within {} s (the call's time budget, --pluginTimeout, allows no more); the live view has ended.",
                    limit.as_secs()
                ),
                Ended::TimedOut(limit) => format!(
                    "No one pressed Done within {} s; the live view has ended.",
                    limit.as_secs()
                ),
            }];
            let after_url = link.url().await;
            if after_url == before_url {
                lines.push(format!("The page stayed at {after_url}."));
            } else {
                lines.push(format!("The page was at {before_url} and is now at {after_url}."));
            }
            let session = or_return!(call.session());
            session.sync_pages().await;
            let opened: Vec<u32> = session
                .page_ids()
                .into_iter()
                .filter(|id| !before_ids.contains(id))
                .collect();
            for opened in opened {
                if let Ok(page) = session.page(opened) {
                    let url = page.url().await;
                    lines.push(format!("The person opened page {opened}: {url}."));
                }
            }
            lines.push(format!("The live view ({url}) no longer opens."));
            Ok(Ok(lines))
        })
        .await
    }
}
