//! Reading raw trace events: typed accessors over the JSON, and the trace's frame of reference
//! (bounds, main frame, its renderer main thread, navigations), found the way DevTools' meta
//! handler finds them.

use serde_json::Value;

/// One raw trace event, borrowed from the trace.
#[derive(Debug, Clone, Copy)]
pub(super) struct Event<'a>(pub &'a Value);

impl<'a> Event<'a> {
    pub fn name(self) -> &'a str {
        self.0.get("name").and_then(Value::as_str).unwrap_or("")
    }
    /// Timestamp in microseconds of the browser's monotonic clock.
    pub fn ts(self) -> f64 {
        self.0.get("ts").and_then(Value::as_f64).unwrap_or(0.0)
    }
    /// Duration in microseconds (complete `X` events); zero for instants.
    pub fn dur(self) -> f64 {
        self.0.get("dur").and_then(Value::as_f64).unwrap_or(0.0)
    }
    pub fn end(self) -> f64 {
        self.ts() + self.dur()
    }
    pub fn pid(self) -> i64 {
        self.0.get("pid").and_then(Value::as_i64).unwrap_or(-1)
    }
    pub fn tid(self) -> i64 {
        self.0.get("tid").and_then(Value::as_i64).unwrap_or(-1)
    }
    pub fn phase(self) -> &'a str {
        self.0.get("ph").and_then(Value::as_str).unwrap_or("")
    }
    pub fn args(self) -> &'a Value {
        self.0.get("args").unwrap_or(&Value::Null)
    }
    /// `args.data`, where most DevTools timeline events keep their payload.
    pub fn data(self) -> &'a Value {
        self.args().get("data").unwrap_or(&Value::Null)
    }
    /// The frame the event belongs to: `args.frame`, or `args.data.frame` for older events.
    pub fn frame(self) -> Option<&'a str> {
        self.args()
            .get("frame")
            .or_else(|| self.data().get("frame"))
            .and_then(Value::as_str)
    }
    pub fn data_str(self, key: &str) -> Option<&'a str> {
        self.data().get(key).and_then(Value::as_str)
    }
    pub fn data_f64(self, key: &str) -> Option<f64> {
        self.data().get(key).and_then(Value::as_f64)
    }
    pub fn data_bool(self, key: &str) -> Option<bool> {
        self.data().get(key).and_then(Value::as_bool)
    }
}

/// A main-frame navigation: the start of an insight set.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Navigation {
    pub ts: f64,
    /// The navigation id, which is also the document request's request id.
    pub id: String,
    pub url: String,
}

/// What the rest of the analysis needs to know about the trace as a whole.
#[derive(Debug, Clone, Default)]
pub(super) struct Meta {
    /// Earliest and latest timestamps of any timed event.
    pub min: f64,
    pub max: f64,
    pub main_frame: Option<String>,
    /// The main frame's URL at the end of the trace.
    pub main_frame_url: Option<String>,
    /// `CrRendererMain` threads of the processes that hosted the main frame, as (pid, tid).
    pub main_threads: Vec<(i64, i64)>,
    /// Main-frame navigations to a real document, in time order.
    pub navigations: Vec<Navigation>,
}

impl Meta {
    pub fn read(events: &[Value]) -> Meta {
        let mut meta = Meta {
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            ..Meta::default()
        };
        let mut main_pids = Vec::new();
        let mut renderer_mains = Vec::new();
        for event in events.iter().map(Event) {
            if event.phase() == "M" {
                if event.name() == "thread_name"
                    && event.args().get("name").and_then(Value::as_str) == Some("CrRendererMain")
                {
                    renderer_mains.push((event.pid(), event.tid()));
                }
                continue;
            }
            if event.ts() > 0.0 {
                meta.min = meta.min.min(event.ts());
                meta.max = meta.max.max(event.end());
            }
            match event.name() {
                "TracingStartedInBrowser" => {
                    let frames = event.data().get("frames").and_then(Value::as_array);
                    let main = frames.into_iter().flatten().find(|frame| {
                        frame.get("isOutermostMainFrame").and_then(Value::as_bool) == Some(true)
                            || frame.get("parent").is_none()
                    });
                    if let Some(frame) = main {
                        meta.main_frame = frame
                            .get("frame")
                            .and_then(Value::as_str)
                            .map(str::to_string);
                        meta.main_frame_url =
                            frame.get("url").and_then(Value::as_str).map(str::to_string);
                        main_pids.extend(frame.get("processId").and_then(Value::as_i64));
                    }
                }
                "FrameCommittedInBrowser"
                    if meta.main_frame.is_some()
                        && event.data_str("frame") == meta.main_frame.as_deref() =>
                {
                    meta.main_frame_url = event.data_str("url").map(str::to_string);
                    main_pids.extend(event.data().get("processId").and_then(Value::as_i64));
                }
                _ => {}
            }
        }
        if !meta.min.is_finite() {
            (meta.min, meta.max) = (0.0, 0.0);
        }
        // Navigations need the main frame, which the browser may report after them.
        meta.navigations = events
            .iter()
            .map(Event)
            .filter(|event| event.name() == "navigationStart")
            .filter(|event| {
                meta.main_frame.is_none() || event.frame() == meta.main_frame.as_deref()
            })
            .filter(|event| event.data_bool("isLoadingMainFrame") == Some(true))
            .filter_map(|event| {
                let url = event.data_str("documentLoaderURL")?;
                let id = event.data_str("navigationId")?;
                // The initial empty document and about:blank are not page loads.
                (!url.is_empty() && !url.starts_with("about:")).then(|| Navigation {
                    ts: event.ts(),
                    id: id.to_string(),
                    url: url.to_string(),
                })
            })
            .collect();
        meta.navigations.sort_by(|a, b| a.ts.total_cmp(&b.ts));
        meta.main_threads = renderer_mains
            .into_iter()
            .filter(|(pid, _)| main_pids.contains(pid))
            .collect();
        meta
    }

    /// Whether `event` ran on a main-frame renderer main thread.
    pub fn on_main_thread(&self, event: Event) -> bool {
        self.main_threads.contains(&(event.pid(), event.tid()))
    }

    /// Whether `event` belongs to the main frame (or, lacking frame data, its renderer).
    pub fn in_main_frame(&self, event: Event) -> bool {
        match (event.frame(), self.main_frame.as_deref()) {
            (Some(frame), Some(main)) => frame == main,
            _ => self.main_threads.iter().any(|(pid, _)| *pid == event.pid()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sample() -> Vec<Value> {
        vec![
            json!({"name": "thread_name", "ph": "M", "pid": 2, "tid": 7, "ts": 0, "args": {"name": "CrRendererMain"}}),
            json!({"name": "thread_name", "ph": "M", "pid": 3, "tid": 9, "ts": 0, "args": {"name": "CrRendererMain"}}),
            json!({"name": "TracingStartedInBrowser", "ph": "I", "pid": 1, "tid": 1, "ts": 1000,
                   "args": {"data": {"frames": [{"frame": "F", "isOutermostMainFrame": true, "processId": 2, "url": "about:blank"}]}}}),
            json!({"name": "navigationStart", "ph": "R", "pid": 2, "tid": 7, "ts": 1100,
                   "args": {"frame": "F", "data": {"documentLoaderURL": "", "isLoadingMainFrame": true, "navigationId": "BLANK"}}}),
            json!({"name": "navigationStart", "ph": "R", "pid": 3, "tid": 9, "ts": 1150,
                   "args": {"frame": "OTHER", "data": {"documentLoaderURL": "http://other/", "isLoadingMainFrame": true, "navigationId": "X"}}}),
            json!({"name": "navigationStart", "ph": "R", "pid": 2, "tid": 7, "ts": 1200,
                   "args": {"frame": "F", "data": {"documentLoaderURL": "http://a/", "isLoadingMainFrame": true, "navigationId": "N1"}}}),
            json!({"name": "FrameCommittedInBrowser", "ph": "I", "pid": 1, "tid": 1, "ts": 1300,
                   "args": {"data": {"frame": "F", "processId": 2, "url": "http://a/"}}}),
            json!({"name": "RunTask", "ph": "X", "pid": 2, "tid": 7, "ts": 900, "dur": 5000}),
        ]
    }

    #[test]
    fn finds_the_main_frame_its_thread_and_real_navigations() {
        let events = sample();
        let meta = Meta::read(&events);
        assert_eq!(meta.main_frame.as_deref(), Some("F"));
        assert_eq!(meta.main_frame_url.as_deref(), Some("http://a/"));
        assert_eq!(meta.main_threads, vec![(2, 7)]);
        assert_eq!(meta.navigations.len(), 1);
        assert_eq!(meta.navigations[0].id, "N1");
        assert_eq!((meta.min, meta.max), (900.0, 5900.0));
        assert!(meta.on_main_thread(Event(&events[7])));
        assert!(!meta.in_main_frame(Event(&events[4])));
    }
}
