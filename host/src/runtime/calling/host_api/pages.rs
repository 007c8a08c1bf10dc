//! `devtools:tool/pages` (`pages.read`) and `pages-manage` (`pages.manage`): which pages the
//! session has, where they are and what they show; selecting, opening and closing them.

use super::function::{HostFunction as F, Marks as M};
use super::{Call, CallState, Outcome, PageHandle, or_return, timeout};
use crate::browser::page::actions::wait_for_text;
use crate::policy::capability::Capability::{Navigate, Script};
use crate::runtime::calling::bindings::v0_3::devtools::tool::{pages, pages_manage};
use wasmtime::component::Resource;

pub(super) mod collected;

const SELECTED: F = F::new("pages", "selected", M::NONE);
const GET: F = F::new("pages", "get", M::ON_PAGE);
const ALL: F = F::new("pages", "all", M::PAGE_CONTENT);
const URL: F = F::new("pages", "url", M::PAGE_CONTENT.and(M::ON_PAGE));
const DIALOG: F = F::new("pages", "open-dialog", M::PAGE_CONTENT.and(M::ON_PAGE));
const WAIT_FOR: F = F::new("pages", "wait-for", M::PAGE_CONTENT.and(M::ON_PAGE));
/// A full-page capture resizes the viewport for a moment (resize listeners run).
pub(super) const SCREENSHOT: F = F::new("pages", "take-screenshot", M::NAVIGATES.and(M::ON_PAGE));
const TAB_ID: F = F::new("pages", "tab-id", M::ON_PAGE);
const SELECT: F = F::new("pages-manage", "select", M::ON_PAGE);
/// Opening at a URL other than about:blank needs `navigate` (and `script` for a URL that runs
/// script); the page is new, so it is landing-checked.
const NEW_PAGE: F = F::new("pages-manage", "new-page", M::NAVIGATES).depending(&[Navigate, Script]);
const CLOSE: F = F::new("pages-manage", "close", M::ON_PAGE);
/// A DevTools window: a browser window of its own, not one of the session's pages.
const OPEN_DEVTOOLS: F = F::new("pages-manage", "open-devtools", M::ON_PAGE);
const DEVTOOLS_OPEN: F = F::new("pages", "devtools-open", M::ON_PAGE);

pub(super) const FUNCTIONS: &[&F] = &[
    &SELECTED,
    &GET,
    &ALL,
    &URL,
    &DIALOG,
    &WAIT_FOR,
    &SCREENSHOT,
    &TAB_ID,
    &SELECT,
    &NEW_PAGE,
    &CLOSE,
    &OPEN_DEVTOOLS,
    &DEVTOOLS_OPEN,
];

/// A capture, in every contract's terms (the format as the flags spell it).
pub(super) async fn capture(
    call: &mut Call<'_>,
    handle: &Resource<PageHandle>,
    format: Option<String>,
    quality: Option<u32>,
    uid: Option<&str>,
    full_page: bool,
) -> Outcome<crate::browser::page::screenshot::Screenshot> {
    let flags = or_return!(call.session()).screenshot_flags();
    let page = or_return!(call.page(handle).await?);
    let request = or_return!(
        page.screenshot_request(format, quality, uid, full_page)
            .await
    );
    let (cdp, raw) = (page.cdp().clone(), page.raw().clone());
    // Chromium may take long to answer (a busy renderer): other pages' calls go on meanwhile.
    let captured = async move {
        crate::browser::page::screenshot::capture(&cdp, &raw, &request, &flags).await
    };
    Ok(call.unlocked(captured).await)
}

impl pages::Host for CallState {
    async fn devtools_open(&mut self, handle: Resource<PageHandle>) -> wasmtime::Result<bool> {
        self.dispatch(&DEVTOOLS_OPEN, async |call| {
            let id = call.page_id(&handle).await?;
            Ok(match call.session() {
                Ok(session) => session.devtools_open(id).await,
                Err(_) => false,
            })
        })
        .await
    }

    async fn network_requests(
        &mut self,
        handle: Resource<PageHandle>,
        include_preserved: bool,
    ) -> wasmtime::Result<Vec<pages::NetworkRequest>> {
        self.request_records(handle, include_preserved).await
    }

    async fn console_messages(
        &mut self,
        handle: Resource<PageHandle>,
        include_preserved: bool,
    ) -> wasmtime::Result<Vec<pages::ConsoleMessage>> {
        self.message_records(handle, include_preserved).await
    }

    async fn selected(&mut self) -> Outcome<Resource<PageHandle>> {
        self.dispatch(&SELECTED, async |call| {
            let id = or_return!(call.session().and_then(|session| session.selected_id()));
            Ok(Ok(call.handle(id)?))
        })
        .await
    }

    async fn get(&mut self, id: u32) -> Outcome<Resource<PageHandle>> {
        self.dispatch(&GET, async |call| {
            call.page_by_id(id).await?;
            or_return!(
                call.session()
                    .and_then(|session| session.page(id).map(|_| ()))
            );
            Ok(Ok(call.handle(id)?))
        })
        .await
    }

    async fn all(&mut self) -> wasmtime::Result<Vec<pages::PageInfo>> {
        self.dispatch(&ALL, async |call| {
            let Ok(session) = call.session() else {
                return Ok(Vec::new());
            };
            Ok(session
                .page_list()
                .await
                .into_iter()
                .map(|entry| pages::PageInfo {
                    id: entry.id,
                    url: entry.url,
                    title: entry.title,
                    selected: entry.selected,
                    isolated_context: entry.isolated_context,
                })
                .collect())
        })
        .await
    }

    async fn url(&mut self, handle: Resource<PageHandle>) -> wasmtime::Result<String> {
        self.dispatch(&URL, async |call| {
            Ok(match call.page(&handle).await? {
                Ok(page) => page.url().await,
                Err(_) => String::new(),
            })
        })
        .await
    }

    async fn open_dialog(
        &mut self,
        handle: Resource<PageHandle>,
    ) -> wasmtime::Result<Option<pages::Dialog>> {
        self.dispatch(&DIALOG, async |call| {
            let dialog = call
                .page(&handle)
                .await?
                .ok()
                .and_then(|page| page.dialog());
            Ok(dialog.and_then(|dialog| {
                let kind = match dialog.kind.as_str() {
                    "alert" => pages::DialogKind::Alert,
                    "confirm" => pages::DialogKind::Confirm,
                    "prompt" => pages::DialogKind::Prompt,
                    "beforeunload" => pages::DialogKind::Beforeunload,
                    _ => return None,
                };
                Some(pages::Dialog {
                    kind,
                    message: dialog.message,
                    default_value: dialog.default_value,
                })
            }))
        })
        .await
    }

    async fn wait_for(
        &mut self,
        handle: Resource<PageHandle>,
        texts: Vec<String>,
        timeout_ms: Option<u32>,
    ) -> Outcome<()> {
        self.dispatch(&WAIT_FOR, async |call| {
            let page = or_return!(call.page(&handle).await?);
            let limit = timeout(timeout_ms).unwrap_or_else(|| page.action_timeout());
            let cdp = page.cdp().clone();
            // The longest wait there is: other pages' calls go on meanwhile (parallel pages).
            let waited = wait_for_text(&cdp, &texts, limit);
            Ok(call.unlocked(waited).await)
        })
        .await
    }

    async fn take_screenshot(
        &mut self,
        handle: Resource<PageHandle>,
        options: pages::ScreenshotOptions,
    ) -> Outcome<pages::Screenshot> {
        self.dispatch(&SCREENSHOT, async |call| {
            let format = options.format.map(|format| {
                match format {
                    pages::ImageFormat::Png => "png",
                    pages::ImageFormat::Jpeg => "jpeg",
                    pages::ImageFormat::Webp => "webp",
                }
                .to_string()
            });
            let shot = capture(
                call,
                &handle,
                format,
                options.quality,
                options.uid.as_deref(),
                options.full_page,
            )
            .await?;
            Ok(shot.map(|shot| pages::Screenshot {
                data: shot.bytes,
                mime_type: shot.mime_type,
                extension: shot.extension.to_string(),
            }))
        })
        .await
    }

    async fn tab_id(&mut self, handle: Resource<PageHandle>) -> Outcome<String> {
        self.dispatch(&TAB_ID, async |call| {
            let id = call.page_id(&handle).await?;
            let session = or_return!(call.session());
            let Some(endpoint) = session.browser_ws_endpoint() else {
                return Ok(Err("The browser is not connected.".into()));
            };
            let target = or_return!(session.page(id))
                .cdp()
                .target_id()
                .inner()
                .clone();
            let tab = crate::browser::page::tab::tab_id(&endpoint, &target).await;
            if let Ok(tab) = &tab {
                call.response().tab_id = Some(tab.clone());
            }
            Ok(tab)
        })
        .await
    }
}

impl pages_manage::Host for CallState {
    async fn select(&mut self, id: u32, bring_to_front: bool) -> Outcome<()> {
        self.dispatch(&SELECT, async |call| {
            call.page_by_id(id).await?;
            let session = or_return!(call.session());
            Ok(session.select_page(id, bring_to_front).await)
        })
        .await
    }

    async fn new_page(
        &mut self,
        url: String,
        background: bool,
        isolated_context: Option<String>,
        timeout_ms: Option<u32>,
    ) -> Outcome<Resource<PageHandle>> {
        self.dispatch(&NEW_PAGE, async |call| {
            let url = if url == "about:blank" {
                url.clone()
            } else {
                call.require_url(&url)?
            };
            let session = or_return!(call.session());
            // Checked before a page is created, as the reference does.
            or_return!(session.navigation_policy().check(&url));
            let created = session
                .new_page(
                    &url,
                    background,
                    isolated_context.as_deref(),
                    timeout(timeout_ms),
                )
                .await;
            Ok(Ok(call.handle(or_return!(created))?))
        })
        .await
    }

    async fn close(&mut self, id: u32) -> Outcome<bool> {
        self.dispatch(&CLOSE, async |call| {
            call.page_by_id(id).await?;
            let session = or_return!(call.session());
            Ok(session.close_page(id).await)
        })
        .await
    }

    async fn open_devtools(&mut self, handle: Resource<PageHandle>) -> Outcome<()> {
        self.dispatch(&OPEN_DEVTOOLS, async |call| {
            let id = call.page_id(&handle).await?;
            let session = or_return!(call.session());
            Ok(session.open_devtools(id).await)
        })
        .await
    }
}
