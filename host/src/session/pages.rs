//! The pages a session tracks: adopting the browser's pages (oldest first at attach, popups
//! as they come), numbering them, selecting, opening and closing them, and listing them as
//! 1.11.0 lists them.

use super::scope::{TargetInfo, adoptable, create_browser_context};
use super::watch::Watched;
use super::{
    ATTACH_WAIT, Adoption, CLOSED_SELECTED_PAGE, NEXT_PAGE_ID, PageEntry, SessionState, Worker,
    tab_order,
};
use crate::browser::{McpPage, cdp};
use crate::sandbox::Sandbox;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

impl SessionState {
    /// Adopts the pages the browser already has, oldest first (the first is selected, as
    /// 1.11.0 selects the first of the browser's pages); opens one only if it has none. A
    /// running browser's tabs are attached by the CDP client one by one, so this waits (up to
    /// a bound) until every page target the browser lists is adopted rather than opening a tab
    /// of its own meanwhile: a user's tabs must not pile up process after process. A fresh
    /// context of a shared browser, and a browser we launched (`--no-startup-window`), have no
    /// pages to wait for.
    pub(super) async fn discover_initial_pages(&mut self, kept_contexts: bool) {
        let launched = self
            .browser
            .as_ref()
            .is_some_and(|browser| browser.connection().launched);
        // Contexts taken back after a reconnection hold pages the client is attaching.
        let deadline = tokio::time::Instant::now()
            + if (launched || self.scope.is_some()) && !kept_contexts {
                Duration::ZERO
            } else {
                ATTACH_WAIT
            };
        // No `fetch_targets` here: `Target.setDiscoverTargets` at connect already reports
        // every tab, and chromiumoxide's fetch attaches each a second time, unflattened, which
        // can leave a page holding a session the browser does not know (every command to it
        // then fails). Adopted all at once when every listed page is attached, so that they
        // are numbered by when they were opened, not by when the client attached them.
        loop {
            let own_contexts = self.own_contexts();
            let targets = self.targets().await;
            let listed = targets
                .values()
                .filter(|info| {
                    adoptable(Some(info), own_contexts.as_deref(), self.options.devtools)
                })
                .count();
            let attached = match self.browser() {
                Ok(browser) => browser.pages().await.map_or(0, |pages| {
                    adoptable_pages(
                        pages,
                        &targets,
                        own_contexts.as_deref(),
                        self.options.devtools,
                    )
                    .len()
                }),
                Err(_) => 0,
            };
            // Nothing listed means the listing failed (a busy browser): the pages attached
            // cannot be all there is, so keep waiting, up to the bound.
            let all_attached = listed > 0 && attached >= listed;
            let out_of_time = tokio::time::Instant::now() >= deadline;
            if all_attached || out_of_time {
                let _targets = self.sync_pages_in(Adoption::InOrder).await;
                // A page that could not be tracked yet is tried again.
                if self.pages.len() >= listed || out_of_time {
                    break;
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        if self.pages.is_empty()
            && let Err(error) = self.new_page("about:blank", false, None, None).await
        {
            tracing::warn!(%error, "could not open a first page");
        }
    }

    /// Brings the page table in line with the browser: pages opened by the page itself
    /// (popups) get ids, pages closed elsewhere disappear. Browser-internal pages (`chrome://`
    /// and the like) are left out, as the reference's target filter does.
    pub async fn sync_pages(&mut self) {
        let _targets = self.sync_pages_with_targets().await;
    }

    /// [`Session::sync_pages`], returning the browser's target list it worked from (`None`
    /// when the browser could not be asked).
    async fn sync_pages_with_targets(&mut self) -> Option<Targets> {
        self.sync_pages_in(Adoption::AsTheyCome).await
    }

    /// [`Session::sync_pages_with_targets`], adopting new pages as `adoption` says.
    async fn sync_pages_in(&mut self, adoption: Adoption) -> Option<Targets> {
        let Ok(browser) = self.browser() else {
            return None;
        };
        let Ok(live) = browser.pages().await else {
            return None;
        };
        let targets = self.targets().await;
        let own_contexts = self.own_contexts();
        // A closed target leaves the list once the browser has torn it down.
        let listed: HashSet<String> = live.iter().map(target_key).collect();
        self.closing.retain(|id| listed.contains(id));
        let hidden = |page: &chromiumoxide::Page| {
            self.browser
                .as_ref()
                .is_some_and(|browser| browser.connection().hides_target(&target_key(page)))
        };
        let live: Vec<chromiumoxide::Page> = adoptable_pages(
            live,
            &targets,
            own_contexts.as_deref(),
            self.options.devtools,
        )
        .into_iter()
        .filter(|page| !self.closing.contains(&target_key(page)))
        .filter(|page| !hidden(page))
        .collect();
        let live_ids: Vec<String> = live.iter().map(target_key).collect();
        self.unready
            .retain(|id| live_ids.iter().any(|live| live == id));
        self.pages
            .retain(|_, page| live_ids.contains(&target_key(page.cdp())));
        let known: Vec<String> = self
            .pages
            .values()
            .map(|page| target_key(page.cdp()))
            .collect();
        let now = Instant::now();
        let new = live
            .into_iter()
            .filter(|page| !known.contains(&target_key(page)))
            .filter(|page| self.unready.may_try(&target_key(page), now))
            .collect();
        // `Target.getTargets` tends to list the newest target first: its reversed rank breaks
        // ties among tabs whose history cannot be read.
        let listed_rank = |page: &chromiumoxide::Page| {
            targets
                .keys_in_order
                .iter()
                .position(|id| *id == target_key(page))
                .map_or(i64::MAX, |position| -(position as i64))
        };
        let new = tab_order::oldest_first(new, listed_rank).await;
        let mut adopted = Vec::new();
        for page in new {
            let Some(raw) = self.raw_link() else { break };
            let target = target_key(&page);
            let started = Instant::now();
            match crate::browser::track(page, None, self.options.redact_network_headers, raw).await
            {
                // The id is taken only once the page is tracked: a page tried again later
                // must not leave a hole in the numbering (1.11.0's ids have none).
                Ok(mut page) => {
                    let id = NEXT_PAGE_ID.fetch_add(1, Ordering::Relaxed);
                    page.id = id;
                    page.url_policy = self.url_policy();
                    page.url_patterns = self.options.url_patterns.clone();
                    self.pages.insert(id, page);
                    adopted.push(id);
                }
                Err(error) => {
                    tracing::debug!(%error, "could not track a page");
                    self.unready.failed(target, started, Instant::now());
                    if adoption == Adoption::InOrder {
                        break;
                    }
                }
            }
        }
        self.close_pages_over_quota(adopted).await;
        if self.selected.is_none() {
            self.selected = self.pages.keys().next().copied();
        }
        self.publish_pages();
        Some(targets)
    }

    /// Pages the session's pages opened themselves count against `max_pages` too: the newest
    /// of those just adopted are closed until the session is within it.
    async fn close_pages_over_quota(&mut self, mut adopted: Vec<u32>) {
        let Some(limit) = self.max_pages else { return };
        while self.pages.len() > limit {
            let Some(id) = adopted.pop() else { break };
            if let Some(page) = self.pages.remove(&id) {
                let url = page.url().await;
                self.closing.insert(target_key(page.cdp()));
                let _closed = page.cdp().clone().close().await;
                self.watch.note(format!(
                    "A page opened by a page ({url}) was closed: this tenant may have at most {limit} open pages."
                ));
            }
            if self.selected == Some(id) {
                self.selected = None;
            }
        }
    }

    /// Tells the watch which pages the session has now.
    pub(super) fn publish_pages(&self) {
        let connection = self.browser.as_ref().map(|handle| handle.connection());
        self.watch.publish(Watched {
            pages: self
                .pages
                .iter()
                .map(|(id, page)| (*id, page.cdp().clone()))
                .collect(),
            raw: connection.map(|connection| connection.raw.clone()),
            local_renderers: connection.is_some_and(|connection| connection.launched),
            contexts: self.own_contexts(),
        });
    }

    /// The browser's targets: id -> what `Target.getTargets` says of it.
    async fn targets(&self) -> Targets {
        let mut targets = Targets::default();
        let Ok(browser) = self.browser() else {
            return targets;
        };
        let Ok(answer) = browser
            .execute(cdp("Target.getTargets", serde_json::json!({})))
            .await
        else {
            return targets;
        };
        for info in answer.result["targetInfos"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let text = |key: &str| info[key].as_str().unwrap_or_default().to_string();
            targets.keys_in_order.push(text("targetId"));
            targets.by_id.insert(
                text("targetId"),
                TargetInfo {
                    kind: text("type"),
                    title: text("title"),
                    url: text("url"),
                    context: text("browserContextId"),
                },
            );
        }
        targets
    }

    /// The page page-scoped tools act on.
    pub fn selected_page(&self) -> Result<&McpPage, String> {
        let id = self.selected.ok_or("No page selected")?;
        self.pages
            .get(&id)
            .ok_or_else(|| CLOSED_SELECTED_PAGE.to_string())
    }

    /// The extension service workers of the browser (`## Extension Service Workers`), with
    /// the ids tools name them by. Only a session with a browser of its own sees them: an
    /// extension belongs to the whole browser.
    pub async fn extension_service_workers(&mut self) -> Vec<Worker> {
        if self.scope.is_some() {
            return Vec::new();
        }
        let targets = self.targets().await;
        // Oldest first, as the reference meets them (`Target.getTargets` lists newest first).
        self.workers
            .refresh(targets.keys_in_order.iter().rev().filter_map(|id| {
                targets
                    .get(id)
                    .map(|info| (id.as_str(), info.kind.as_str(), info.url.as_str()))
            }));
        self.workers.list().to_vec()
    }

    /// A worker listed by [`SessionState::extension_service_workers`], by its id.
    pub async fn extension_service_worker(&mut self, id: &str) -> Option<Worker> {
        self.extension_service_workers().await;
        self.workers.by_id(id).cloned()
    }

    /// The ids of the pages the session knows, in id order.
    pub fn page_ids(&self) -> Vec<u32> {
        self.pages.keys().copied().collect()
    }

    pub fn selected_id(&self) -> Result<u32, String> {
        self.selected_page().map(|page| page.id)
    }

    pub fn page(&self, id: u32) -> Result<&McpPage, String> {
        self.pages
            .get(&id)
            .ok_or_else(|| "No page found".to_string())
    }

    /// Refuses an effect on the whole browser (`what` does it: a trace records every tab, an
    /// extension sees every tab) when this session is one browser context of a browser other
    /// tenants use too.
    pub fn require_own_browser(&self, what: &str) -> Result<(), String> {
        match self.scope {
            Some(_) => Err(format!(
                "{what}, and this session shares its browser with other tenants; the tenants file must give it browser = \"dedicated\"."
            )),
            None => Ok(()),
        }
    }

    pub fn page_mut(&mut self, id: u32) -> Result<&mut McpPage, String> {
        self.pages
            .get_mut(&id)
            .ok_or_else(|| "No page found".to_string())
    }

    /// A page and the sandbox together, for actions that write files.
    pub fn page_and_sandbox(&mut self, id: u32) -> Result<(&mut McpPage, &Sandbox), String> {
        let page = self
            .pages
            .get_mut(&id)
            .ok_or_else(|| "No page found".to_string())?;
        Ok((page, &self.sandbox))
    }

    pub async fn select_page(&mut self, id: u32, bring_to_front: bool) -> Result<(), String> {
        let page = self.page(id)?;
        if bring_to_front {
            page.cdp()
                .bring_to_front()
                .await
                .map_err(|error| error.to_string())?;
        }
        self.selected = Some(id);
        Ok(())
    }

    /// Opens a page (in a named isolated context if asked), loads `url`, selects it unless
    /// `background`.
    pub async fn new_page(
        &mut self,
        url: &str,
        background: bool,
        isolated_context: Option<&str>,
        timeout: Option<Duration>,
    ) -> Result<u32, String> {
        let url = match self.url_policy() {
            Some(policy) => policy
                .check(url)
                .map_err(|refusal| refusal.to_string())?
                .to_string(),
            None => url.to_string(),
        };
        let url = url.as_str();
        if let Some(limit) = self.max_pages {
            self.sync_pages().await;
            if self.pages.len() >= limit {
                return Err(format!(
                    "This tenant may have at most {limit} open pages. Close one with close_page first."
                ));
            }
        }
        let context_id = match isolated_context {
            Some(name) => Some(self.browser_context(name).await?),
            None => self.scope.as_ref().and_then(|scope| scope.context.clone()),
        };
        let mut params =
            chromiumoxide::cdp::browser_protocol::target::CreateTargetParams::new("about:blank");
        params.background = Some(background);
        params.browser_context_id = context_id.map(Into::into);
        let page = open_target(self.browser()?, params).await?;
        let mut page = crate::browser::track(
            page,
            isolated_context.map(String::from),
            self.options.redact_network_headers,
            self.raw_link().ok_or("The browser is not running.")?,
        )
        .await?;
        let id = NEXT_PAGE_ID.fetch_add(1, Ordering::Relaxed);
        page.id = id;
        page.url_policy = self.url_policy();
        page.url_patterns = self.options.url_patterns.clone();
        self.pages.insert(id, page);
        self.publish_pages();
        if !background {
            self.selected = Some(id);
            let _front = self.page(id)?.cdp().bring_to_front().await;
        }
        if url != "about:blank" {
            let page = self.page(id)?;
            page.navigate(
                crate::browser::Target::Url(url.to_string()),
                timeout,
                true,
                None,
            )
            .await?;
        }
        Ok(id)
    }

    async fn browser_context(&mut self, name: &str) -> Result<String, String> {
        if let Some(id) = self.contexts.get(name) {
            return Ok(id.clone());
        }
        let id = create_browser_context(self.browser()?, self.proxy_server()).await?;
        self.allow_downloads_in(&id).await?;
        if let Some(scope) = &self.scope {
            scope.shared.own_context(&id);
        }
        self.contexts.insert(name.to_string(), id.clone());
        Ok(id)
    }

    /// Closes a page; `false` when it is the last one (which stays open).
    pub async fn close_page(&mut self, id: u32) -> Result<bool, String> {
        self.sync_pages().await;
        self.page(id)?;
        if self.pages.len() <= 1 {
            return Ok(false);
        }
        if let Some(page) = self.pages.remove(&id) {
            self.closing.insert(target_key(page.cdp()));
            page.cdp()
                .clone()
                .close()
                .await
                .map_err(|error| error.to_string())?;
        }
        if self.selected == Some(id) {
            self.selected = self.pages.keys().next().copied();
        }
        self.publish_pages();
        Ok(true)
    }

    /// The rows of `## Pages`. Titles are the browser's own (`Target.getTargets`, fresh for
    /// each listing), without the placeholder it shows for untitled pages, as 1.11.0 prints
    /// them; only a page missing from the listing has its document asked (at most 1 s).
    pub async fn page_list(&mut self) -> Vec<PageEntry> {
        let targets = match self.sync_pages_with_targets().await {
            Some(targets) => targets,
            None => self.targets().await,
        };
        let selected = self.selected;
        let rows = self.pages.iter().map(|(id, page)| {
            let known = targets.get(&target_key(page.cdp()));
            async move {
                let url = match known {
                    Some(info) => info.url.clone(),
                    None => page.url().await,
                };
                let title = match known {
                    Some(info) => shown_title(&info.title, &info.url),
                    None if page.dialog().is_some() => String::new(),
                    None => page.title(Duration::from_secs(1)).await,
                };
                PageEntry {
                    id: *id,
                    title,
                    url,
                    selected: selected == Some(*id),
                    isolated_context: page.isolated_context.clone(),
                }
            }
        });
        futures::future::join_all(rows).await
    }
}

/// A target's title as 1.11.0 shows it: empty when it is the placeholder Chromium gives an
/// untitled page (its URL, or the URL without `http(s)://`, with or without the last `/`).
/// A navigation within the document (`#x`) changes the target's URL but not, for a while,
/// its placeholder title (the URL before, with its own fragment), so both are also compared
/// without their fragments.
fn shown_title(title: &str, url: &str) -> String {
    let placeholder_of = |title: &str, url: &str| {
        let without_scheme = url
            .strip_prefix("https://")
            .or_else(|| url.strip_prefix("http://"))
            .unwrap_or(url);
        title == url || title == without_scheme || without_scheme.strip_suffix('/') == Some(title)
    };
    let document = |text: &str| -> String {
        text.split_once('#')
            .map_or(text, |(before, _)| before)
            .to_owned()
    };
    let placeholder = placeholder_of(title, url)
        || placeholder_of(title, &document(url))
        || placeholder_of(&document(title), &document(url));
    if placeholder {
        String::new()
    } else {
        title.to_owned()
    }
}

/// What `Target.getTargets` said, by target id, and the ids in the order it listed them (no
/// stable order: `tab_order` numbers tabs by when they were opened).
#[derive(Default)]
struct Targets {
    by_id: HashMap<String, TargetInfo>,
    keys_in_order: Vec<String>,
}

impl Targets {
    fn get(&self, id: &str) -> Option<&TargetInfo> {
        self.by_id.get(id)
    }

    fn values(&self) -> impl Iterator<Item = &TargetInfo> {
        self.by_id.values()
    }
}

/// The attached pages this session may adopt (see `adoptable`).
fn adoptable_pages(
    pages: Vec<chromiumoxide::Page>,
    targets: &Targets,
    own_contexts: Option<&[String]>,
    devtools: bool,
) -> Vec<chromiumoxide::Page> {
    pages
        .into_iter()
        .filter(|page| adoptable(targets.get(&target_key(page)), own_contexts, devtools))
        .collect()
}

pub(super) fn target_key(page: &chromiumoxide::Page) -> String {
    page.target_id().as_ref().to_string()
}

/// How long the browser library gets to attach to a page it was asked to open and set it up
/// (a page opens in about 100 ms). chromiumoxide waits for that attach without a deadline (a
/// target without a session is not polled further), so a page whose renderer died, or whose
/// session was detached, while it opened would hold the call, and the session, for good.
const OPEN_PAGE_TIMEOUT: Duration = Duration::from_secs(10);

/// `Target.createTarget` through chromiumoxide, bounded by [`OPEN_PAGE_TIMEOUT`] and asked
/// once more when the first page never got ready (seen after every renderer of the browser
/// was killed during a click). chromiumoxide may go on listing the page given up on, never set
/// up: the session's adoption gives up on it within `browser::track`'s bound and leaves it
/// alone for a while (`unready`).
async fn open_target(
    browser: &chromiumoxide::Browser,
    params: chromiumoxide::cdp::browser_protocol::target::CreateTargetParams,
) -> Result<chromiumoxide::Page, String> {
    open_within(OPEN_PAGE_TIMEOUT, || async {
        browser
            .new_page(params.clone())
            .await
            .map_err(|error| error.to_string())
    })
    .await
}

/// Runs `open` at most twice, each run bounded by `limit`: an answer (a page or the browser's
/// error) is returned at once, a run that ran out of time is given up on and asked again.
async fn open_within<T, F, Fut>(limit: Duration, mut open: F) -> Result<T, String>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, String>>,
{
    for attempt in 1..=2 {
        match tokio::time::timeout(limit, open()).await {
            Ok(opened) => return opened,
            Err(_) => tracing::warn!(attempt, "the browser did not finish opening a page"),
        }
    }
    Err(format!(
        "The browser did not finish opening the page, twice in {} s each (its renderer may have crashed while it opened). Call new_page again; list_pages shows what is open.",
        limit.as_secs_f64()
    ))
}

#[cfg(test)]
mod tests {
    use super::{open_within, shown_title};
    use std::future::pending;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    const LIMIT: Duration = Duration::from_millis(20);

    #[tokio::test]
    async fn a_page_that_never_gets_ready_is_asked_for_once_more() {
        let asked = AtomicUsize::new(0);
        let opened = open_within(LIMIT, || {
            let attempt = asked.fetch_add(1, Ordering::SeqCst);
            async move {
                if attempt == 0 {
                    pending::<()>().await;
                }
                Ok::<_, String>("page")
            }
        })
        .await;
        assert_eq!(opened, Ok("page"));
        assert_eq!(asked.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn twice_not_ready_is_an_error_that_says_what_to_do() {
        let asked = AtomicUsize::new(0);
        let opened = open_within(LIMIT, || {
            asked.fetch_add(1, Ordering::SeqCst);
            pending::<Result<(), String>>()
        })
        .await;
        let error = opened.expect_err("a page that never gets ready is an error");
        assert!(error.contains("twice in 0.02 s each"), "{error}");
        assert!(error.contains("Call new_page again"), "{error}");
        assert_eq!(asked.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn the_browsers_own_error_is_answered_without_asking_again() {
        let asked = AtomicUsize::new(0);
        let opened = open_within(LIMIT, || {
            asked.fetch_add(1, Ordering::SeqCst);
            async { Err::<(), _>("Target.createTarget: no such browser context".to_string()) }
        })
        .await;
        assert_eq!(
            opened,
            Err("Target.createTarget: no such browser context".into())
        );
        assert_eq!(asked.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn untitled_pages_show_no_title_as_in_1_11() {
        assert_eq!(shown_title("about:blank", "about:blank"), "");
        let url = "http://127.0.0.1:8080/start.html";
        assert_eq!(shown_title("127.0.0.1:8080/start.html", url), "");
        assert_eq!(shown_title("example.com", "https://example.com/"), "");
        assert_eq!(shown_title("example.com/", "https://example.com/"), "");
        assert_eq!(shown_title("Start", url), "Start");
        // Only http(s) loses its scheme.
        assert_eq!(shown_title("x.test/a", "ftp://x.test/a"), "x.test/a");
        // Right after a navigation within the document, the title is the old URL's.
        assert_eq!(shown_title("about:blank", "about:blank#x"), "");
        assert_eq!(
            shown_title(
                "127.0.0.1:8080/start.html",
                "http://127.0.0.1:8080/start.html#b"
            ),
            ""
        );
        assert_eq!(
            shown_title("Start", "http://127.0.0.1:8080/start.html#b"),
            "Start"
        );
        // ...the old URL with its own fragment, when the page had one already.
        assert_eq!(shown_title("about:blank#second", "about:blank#third"), "");
        assert_eq!(
            shown_title(
                "127.0.0.1:8080/start.html#a",
                "http://127.0.0.1:8080/start.html#b"
            ),
            ""
        );
        assert_eq!(shown_title("Issue #42", url), "Issue #42");
    }
}
