//! Network requests of a page, as puppeteer's `NetworkManager` builds them and the reference's
//! `NetworkCollector` keeps them (1000 per navigation), printed like its `NetworkFormatter`.

use super::Buckets;
use super::detail::{Snapshot, concise_line};
use super::http::{Response, apply_extra, merge_headers, post_data, response};
use super::pagination::{Page, paginate};
use serde_json::{Map, Value, json};
use std::collections::{HashMap, VecDeque};

const MAX_PER_NAVIGATION: usize = 1_000;
const MAX_LIVE: usize = 10_000;
const NOT_FOUND: &str = "Request not found for selected page";
pub const NOTHING_SELECTED: &str = "Nothing is currently selected in the DevTools Network panel.";

#[derive(Debug, Clone)]
pub(crate) struct Request {
    pub(crate) id: u64,
    cdp_id: String,
    frame_id: String,
    pub(crate) navigation: bool,
    pub(crate) url: String,
    pub(crate) method: String,
    pub(crate) resource_type: String,
    pub(crate) headers: Map<String, Value>,
    extra_applied: bool,
    pub(crate) memory_cache: bool,
    post_data: Option<String>,
    pub(crate) has_post_data: bool,
    pub(crate) response: Option<Response>,
    pub(crate) failure: Option<String>,
    /// The first hop of its redirects: hops share one redirect chain, as in puppeteer.
    pub(crate) first_hop: u64,
    /// When it was sent, finished, and answered (the browser's monotonic seconds), and the
    /// wall clock at sending (seconds since the Unix epoch).
    pub(crate) timing: Timing,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Timing {
    pub sent: Option<f64>,
    pub wall: Option<f64>,
    pub answered: Option<f64>,
    pub finished: Option<f64>,
    pub encoded_bytes: Option<f64>,
}

impl Request {
    fn status(&self) -> String {
        match (&self.response, &self.failure) {
            (Some(response), _) => response.status.clone(),
            (None, Some(failure)) => failure.clone(),
            (None, None) => "pending".to_string(),
        }
    }

    fn concise(&self) -> Map<String, Value> {
        let mut json = Map::new();
        json.insert("requestId".into(), json!(self.id));
        json.insert("method".into(), json!(self.method));
        json.insert("url".into(), json!(self.url));
        json.insert("status".into(), json!(self.status()));
        json
    }
}

#[derive(Debug)]
pub(crate) struct Network {
    buckets: Buckets<Request>,
    next_id: u64,
    /// CDP request id to the stable id of its latest hop, until it finishes.
    live: HashMap<String, u64>,
    request_extra: HashMap<String, VecDeque<Value>>,
    response_extra: HashMap<String, VecDeque<Value>>,
    /// Redirected hops by first hop (puppeteer's shared `_redirectChain` array).
    chains: HashMap<u64, Vec<u64>>,
    pub main_frame: String,
}

impl Default for Network {
    fn default() -> Self {
        Network {
            buckets: Buckets::new(MAX_PER_NAVIGATION),
            next_id: 1,
            live: HashMap::new(),
            request_extra: HashMap::new(),
            response_extra: HashMap::new(),
            chains: HashMap::new(),
            main_frame: String::new(),
        }
    }
}

impl Network {
    fn live_mut(&mut self, cdp_id: &str) -> Option<&mut Request> {
        let id = *self.live.get(cdp_id)?;
        self.buckets.find_mut(|request| request.id == id)
    }

    /// Dispatches one `Network.*` event.
    pub fn event(&mut self, method: &str, params: &Value) {
        let cdp_id = params["requestId"].as_str().unwrap_or_default().to_string();
        match method {
            "Network.requestWillBeSent" => self.will_be_sent(cdp_id, params),
            "Network.requestWillBeSentExtraInfo" => {
                let finished = !self.live.contains_key(&cdp_id);
                self.request_extra_info(cdp_id, finished, params);
            }
            "Network.requestServedFromCache" => {
                if let Some(request) = self.live_mut(&cdp_id) {
                    request.memory_cache = true;
                }
            }
            "Network.responseReceived" => {
                let extra = match self.live_mut(&cdp_id) {
                    Some(request) => params["hasExtraInfo"] == true && !request.memory_cache,
                    None => return,
                };
                let queued = if extra {
                    self.pop_response_extra(&cdp_id)
                } else {
                    None
                };
                let disk_cache = params["response"]["fromDiskCache"] == true;
                if let Some(request) = self.live_mut(&cdp_id) {
                    request.timing.answered = params["timestamp"].as_f64();
                    let mut response =
                        response(&params["response"], extra && queued.is_none(), false);
                    if let Some(queued) = queued.filter(|_| !disk_cache) {
                        apply_extra(&mut response, &queued);
                    }
                    request.response = Some(response);
                }
            }
            "Network.responseReceivedExtraInfo" => {
                let waiting = self.buckets.find_mut_last(|request| {
                    request.cdp_id == cdp_id
                        && request.response.as_ref().is_some_and(|r| r.awaiting_extra)
                });
                match waiting.and_then(|request| request.response.as_mut()) {
                    Some(response) => apply_extra(response, params),
                    None => self
                        .response_extra
                        .entry(cdp_id)
                        .or_default()
                        .push_back(params.clone()),
                }
            }
            "Network.loadingFinished" | "Network.loadingFailed" => {
                if let Some(request) = self.live_mut(&cdp_id) {
                    request.timing.finished = params["timestamp"].as_f64();
                    request.timing.encoded_bytes = params["encodedDataLength"].as_f64();
                    if method == "Network.loadingFailed" {
                        request.failure = params["errorText"].as_str().map(str::to_string);
                    }
                }
                self.live.remove(&cdp_id);
                self.request_extra.remove(&cdp_id);
                self.response_extra.remove(&cdp_id);
            }
            _ => {}
        }
    }

    /// The raw request headers: merged into the live request, or queued for the hop that is
    /// yet to be announced. The network service may also report them after the request
    /// finished (`loadingFinished` comes from the renderer's side): then the first finished
    /// hop of that id still without them gets them.
    fn request_extra_info(&mut self, cdp_id: String, finished: bool, params: &Value) {
        let target = if finished {
            self.buckets
                .find_mut(|request| request.cdp_id == cdp_id && !request.extra_applied)
        } else {
            self.live_mut(&cdp_id)
                .filter(|request| !request.extra_applied)
        };
        match target {
            Some(request) => {
                request.extra_applied = true;
                merge_headers(&mut request.headers, &params["headers"]);
            }
            // Not announced yet (the usual order when it comes first): queued for its hop.
            None => self
                .request_extra
                .entry(cdp_id)
                .or_default()
                .push_back(params["headers"].clone()),
        }
    }

    fn pop_response_extra(&mut self, cdp_id: &str) -> Option<Value> {
        self.response_extra.get_mut(cdp_id)?.pop_front()
    }

    fn will_be_sent(&mut self, cdp_id: String, params: &Value) {
        let id = self.next_id;
        self.next_id += 1;
        let mut first_hop = id;
        if let Some(redirect) = params.get("redirectResponse") {
            let extra = params["redirectHasExtraInfo"] == true;
            let queued = if extra {
                self.pop_response_extra(&cdp_id)
            } else {
                None
            };
            // puppeteer gives the next queued request extra-info to the hop that redirected.
            let headers = self
                .request_extra
                .get_mut(&cdp_id)
                .and_then(VecDeque::pop_front);
            if let Some(previous) = self.live_mut(&cdp_id) {
                let mut response = response(redirect, extra && queued.is_none(), true);
                if let Some(queued) = queued {
                    apply_extra(&mut response, &queued);
                }
                previous.response = Some(response);
                // A redirect hop ends where the next one starts.
                previous.timing.answered = params["timestamp"].as_f64();
                previous.timing.finished = params["timestamp"].as_f64();
                if let Some(headers) = headers {
                    merge_headers(&mut previous.headers, &headers);
                }
                first_hop = previous.first_hop;
                let previous = previous.id;
                self.chains.entry(first_hop).or_default().push(previous);
            }
        }
        if self.live.len() >= MAX_LIVE {
            self.live.clear();
        }
        let request = &params["request"];
        let kind = params["type"].as_str().unwrap_or_default();
        let mut headers = Map::new();
        merge_headers(&mut headers, &request["headers"]);
        let extra = self
            .request_extra
            .get_mut(&cdp_id)
            .and_then(VecDeque::pop_front);
        if let Some(extra) = &extra {
            merge_headers(&mut headers, extra);
        }
        self.live.insert(cdp_id.clone(), id);
        self.buckets.push(Request {
            id,
            navigation: params["loaderId"].as_str() == Some(&cdp_id) && kind == "Document",
            cdp_id,
            frame_id: params["frameId"].as_str().unwrap_or_default().to_string(),
            url: format!(
                "{}{}",
                request["url"].as_str().unwrap_or_default(),
                request["urlFragment"].as_str().unwrap_or_default()
            ),
            method: request["method"].as_str().unwrap_or("GET").to_string(),
            resource_type: if kind.is_empty() {
                "other".to_string()
            } else {
                kind.to_lowercase()
            },
            headers,
            extra_applied: extra.is_some(),
            memory_cache: false,
            post_data: post_data(request),
            has_post_data: request["hasPostData"] == true,
            response: None,
            failure: None,
            first_hop,
            timing: Timing {
                sent: params["timestamp"].as_f64(),
                wall: params["wallTime"].as_f64(),
                ..Timing::default()
            },
        });
    }

    /// Main-frame navigation: requests since its navigation request move to a new bucket.
    pub fn navigated(&mut self) {
        let main_frame = self.main_frame.clone();
        self.buckets.split(Some(&|request: &Request| {
            request.navigation && request.frame_id == main_frame
        }));
        let buckets = &self.buckets;
        self.chains.retain(|first, _| {
            buckets
                .find(|request| request.first_hop == *first)
                .is_some()
        });
    }

    /// The stable id of the first kept request with protocol id `cdp_id`.
    pub(crate) fn reqid_of(&self, cdp_id: &str) -> Option<u64> {
        self.buckets
            .find(|request| request.cdp_id == cdp_id)
            .map(|request| request.id)
    }

    /// The requests a listing considers, oldest first.
    pub(crate) fn requests(&self, preserved: bool) -> Vec<&Request> {
        self.buckets.data(preserved)
    }

    /// The `## Network requests` section and its structured keys.
    pub fn list(
        &self,
        page: Page,
        types: Option<&[String]>,
        preserved: bool,
    ) -> (Vec<String>, Value) {
        let requests: Vec<&Request> = self
            .buckets
            .data(preserved)
            .into_iter()
            .filter(|r| {
                types.is_none_or(|types| types.is_empty() || types.contains(&r.resource_type))
            })
            .collect();
        let mut lines = vec!["## Network requests".to_string()];
        if requests.is_empty() {
            lines.push("No requests found.".to_string());
            return (lines, json!({}));
        }
        let pages = paginate(requests.len(), page);
        lines.extend(pages.info.iter().cloned());
        let mut items = Vec::new();
        for request in pages.slice(&requests) {
            let mut json = request.concise();
            lines.push(concise_line(&json));
            json.insert("selectedInDevToolsUI".into(), json!(false));
            items.push(Value::Object(json));
        }
        (
            lines,
            json!({"pagination": pages.structured, "networkRequests": items}),
        )
    }

    /// What `get_network_request` prints, before the bodies are read.
    pub fn snapshot(&self, reqid: u64) -> Result<Snapshot, String> {
        let request = self
            .buckets
            .find(|request| request.id == reqid)
            .ok_or(NOT_FOUND)?;
        let chain = self
            .chains
            .get(&request.first_hop)
            .into_iter()
            .flatten()
            .rev()
            .filter_map(|id| self.buckets.find(|hop| hop.id == *id).map(Request::concise))
            .collect();
        Ok(Snapshot {
            concise: request.concise(),
            cdp_id: request.cdp_id.clone(),
            request_headers: request.headers.clone(),
            has_post_data: request.has_post_data,
            post_data: request.post_data.clone(),
            response_headers: request
                .response
                .as_ref()
                .map(|response| response.headers.clone()),
            redirect: request
                .response
                .as_ref()
                .is_some_and(|response| response.redirect),
            failure: request.failure.clone(),
            chain,
        })
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::Network;
    use crate::pagination::Page;
    use serde_json::json;

    pub(crate) fn request(network: &mut Network, id: &str, url: &str, kind: &str, frame: &str) {
        network.event(
            "Network.requestWillBeSent",
            &json!({"requestId": id, "loaderId": if kind == "Document" { id } else { "L0" },
                    "frameId": frame, "type": kind,
                    "request": {"url": url, "method": "GET", "headers": {"User-Agent": "test"}}}),
        );
    }

    pub(crate) fn respond(network: &mut Network, id: &str, status: u16) {
        let response =
            json!({"url": "", "status": status, "headers": {"Content-Type": "text/html"}});
        network.event(
            "Network.responseReceived",
            &json!({"requestId": id, "response": response}),
        );
        network.event("Network.loadingFinished", &json!({"requestId": id}));
    }

    fn listed(network: &Network) -> Vec<String> {
        network.list(Page::default(), None, false).0
    }

    #[test]
    fn raw_request_headers_reported_after_the_request_finished_still_count() {
        let mut network = Network::default();
        request(&mut network, "1", "http://h/data", "Fetch", "F");
        respond(&mut network, "1", 200);
        network.event(
            "Network.requestWillBeSentExtraInfo",
            &json!({"requestId": "1", "headers": {"Accept": "*/*", "Host": "h"}}),
        );
        // Raw headers of a request not announced yet wait for it.
        network.event(
            "Network.requestWillBeSentExtraInfo",
            &json!({"requestId": "2", "headers": {"Accept": "text/css"}}),
        );
        request(&mut network, "2", "http://h/style.css", "Stylesheet", "F");
        let early = network.snapshot(2).expect("request 2");
        let (lines, _) = early.render(None, None, (None, None), false);
        assert!(lines.join("\n").contains("- accept:text/css"), "{lines:?}");
        let snapshot = network.snapshot(1).expect("request 1");
        let (lines, _) = snapshot.render(None, None, (None, None), false);
        let text = lines.join("\n");
        assert!(
            text.contains("- user-agent:test\n- accept:*/*\n- host:h"),
            "{text}"
        );
    }

    #[test]
    fn requests_carry_their_lifecycle_into_the_list() {
        let mut network = Network::default();
        request(&mut network, "1", "http://h/", "Document", "F");
        network.event(
            "Network.requestWillBeSentExtraInfo",
            &json!({"requestId": "1", "headers": {"Accept": "*/*"}}),
        );
        network.event(
            "Network.responseReceivedExtraInfo",
            &json!({"requestId": "1", "statusCode": 203,
                                                                    "headers": {"X-Raw": "1"}}),
        );
        let response = json!({"status": 200, "headers": {"x-parsed": "1"}});
        network.event(
            "Network.responseReceived",
            &json!({"requestId": "1", "hasExtraInfo": true, "response": response}),
        );
        request(&mut network, "2", "http://h/api", "Fetch", "F");
        network.event(
            "Network.loadingFailed",
            &json!({"requestId": "2", "errorText": "net::ERR_FAILED"}),
        );
        request(&mut network, "3", "http://h/slow", "XHR", "F");
        let (lines, data) = network.list(Page::default(), None, false);
        assert_eq!(
            lines.join("\n"),
            "## Network requests\nShowing 1-3 of 3 (Page 1 of 1).\nreqid=1 GET http://h/ [203]\n\
             reqid=2 GET http://h/api [net::ERR_FAILED]\nreqid=3 GET http://h/slow [pending]"
        );
        assert_eq!(
            data["networkRequests"][0],
            json!({"requestId": 1, "method": "GET", "url": "http://h/", "status": "203", "selectedInDevToolsUI": false})
        );
        let types = ["xhr".to_string(), "fetch".to_string()];
        let (lines, _) = network.list(
            Page {
                size: Some(1),
                index: None,
            },
            Some(&types),
            false,
        );
        assert_eq!(
            lines[1..],
            [
                "Showing 1-1 of 2 (Page 1 of 2).",
                "Next page: 1",
                "reqid=2 GET http://h/api [net::ERR_FAILED]"
            ]
        );
        let snapshot = network.snapshot(1).expect("request 1");
        let (lines, _) = snapshot.render(None, Some(b"<p>hi</p>"), (None, None), false);
        assert_eq!(
            lines.join("\n"),
            "## Request http://h/\nStatus: 203\n### Request Headers\n- user-agent:test\n- accept:*/*\n\
             ### Response Headers\n- x-raw:1\n### Response Body\n<p>hi</p>"
        );
        assert_eq!(
            network.snapshot(9).err().as_deref(),
            Some("Request not found for selected page")
        );
    }

    #[test]
    fn redirects_become_separate_requests_with_a_chain() {
        let mut network = Network::default();
        request(&mut network, "7", "http://h/redirect", "Document", "F");
        let redirect = json!({"status": 302, "headers": {"Location": "/final"}});
        network.event(
            "Network.requestWillBeSent",
            &json!({"requestId": "7", "loaderId": "7", "frameId": "F",
            "type": "Document", "redirectResponse": redirect,
            "request": {"url": "http://h/final", "method": "GET", "headers": {}}}),
        );
        respond(&mut network, "7", 200);
        assert_eq!(
            listed(&network)[2..],
            [
                "reqid=1 GET http://h/redirect [302]",
                "reqid=2 GET http://h/final [200]"
            ]
        );
        let (lines, data) =
            network
                .snapshot(2)
                .expect("request 2")
                .render(None, None, (None, None), false);
        assert_eq!(
            lines[lines.len() - 2..],
            ["### Redirect chain", "reqid=1 GET http://h/redirect [302]"]
        );
        assert!(lines.contains(&"<not available anymore>".to_string()));
        assert_eq!(
            data["networkRequest"]["redirectChain"][0]["status"],
            json!("302")
        );
        // puppeteer's chain is one array shared by the hops, so the redirected hop lists itself.
        let (lines, _) =
            network
                .snapshot(1)
                .expect("request 1")
                .render(None, None, (None, None), false);
        assert_eq!(
            lines[lines.len() - 4..],
            [
                "### Response Body",
                "<not available anymore>",
                "### Redirect chain",
                "reqid=1 GET http://h/redirect [302]"
            ]
        );
    }
}
