//! The `emulate` tool's per-page state. As in the reference's `McpPage.emulate`, each call sets
//! the whole state: omitted fields reset, except `extraHttpHeaders`, which `""` clears. The
//! state also gives later page-scoped responses their emulation lines and stretches timeouts.

use crate::browser::cdp::run;
use chromiumoxide::cdp::browser_protocol::page::EventLoadEventFired;
use futures::StreamExt;
use serde_json::{Map, Value, json};
use std::time::Duration;

/// The reference's `DEFAULT_TIMEOUT` for waiters, before CPU throttling stretches it.
const ACTION_TIMEOUT_MS: f64 = 5_000.0;
/// The reference's `NAVIGATION_TIMEOUT`, before throttling stretches it.
const NAVIGATION_TIMEOUT_MS: f64 = 10_000.0;
const CPU: &str = "cpuThrottlingRate";
const SCHEMES: &str = "'dark' | 'light' | 'auto'";

/// `Offline` or one of Puppeteer 25's `PredefinedNetworkConditions` (bytes/s and ms), with the
/// reference's navigation-timeout multiplier (`getNetworkMultiplierFromString`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NetworkPreset {
    pub name: &'static str,
    pub download: f64,
    pub upload: f64,
    pub latency: f64,
    pub timeout_multiplier: f64,
}

/// In the reference's enum order, which its validation message lists. The numbers are what
/// Puppeteer's expressions give, e.g. Slow 3G `((500 * 1000) / 8) * 0.8`; Slow 4G is its alias
/// of Fast 3G, and Offline keeps a multiplier of 1.
pub const NETWORK_PRESETS: [NetworkPreset; 5] = [
    preset("Offline", [0.0, 0.0, 0.0], 1.0),
    preset("Slow 3G", [50_000.0, 50_000.0, 2_000.0], 10.0),
    preset("Fast 3G", [180_000.0, 84_375.0, 562.5], 5.0),
    preset("Slow 4G", [180_000.0, 84_375.0, 562.5], 2.5),
    preset("Fast 4G", [1_012_500.0, 168_750.0, 165.0], 1.0),
];

const fn preset(name: &'static str, speeds: [f64; 3], multiplier: f64) -> NetworkPreset {
    let [download, upload, latency] = speeds;
    let timeout_multiplier = multiplier;
    NetworkPreset {
        name,
        download,
        upload,
        latency,
        timeout_multiplier,
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Geolocation {
    pub latitude: f64,
    pub longitude: f64,
}

/// Parses `"<latitude>,<longitude>"` like `Number()` would, then checks Puppeteer's ranges with
/// its messages (so `abc` reads `Invalid longitude "NaN": …`).
pub fn parse_geolocation(text: &str) -> Result<Geolocation, String> {
    let mut parts = text.split(',').map(js_to_number);
    let latitude = parts.next().unwrap_or(f64::NAN);
    let longitude = parts.next().unwrap_or(f64::NAN);
    // The reference 1.11.0's texts, latitude first.
    for (name, value, limit) in [("latitude", latitude, 90), ("longitude", longitude, 180)] {
        if !(-f64::from(limit)..=f64::from(limit)).contains(&value) {
            let shown = js_number_text(value);
            let title = if name == "latitude" {
                "Latitude"
            } else {
                "Longitude"
            };
            return Err(format!(
                "Invalid {name} \"{shown}\". {title} must be a number between -{limit} and {limit}."
            ));
        }
    }
    Ok(Geolocation {
        latitude,
        longitude,
    })
}

/// An emulated viewport. `device_scale_factor` stays `None` without a third number, because
/// the reference then prints no `deviceScaleFactor` (and applies 1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Viewport {
    pub width: u32,
    pub height: u32,
    pub device_scale_factor: Option<f64>,
    pub is_mobile: bool,
    pub has_touch: bool,
    pub is_landscape: bool,
}

/// Parses `<width>x<height>[x<dpr>][,mobile][,touch][,landscape]`. Unknown tags are ignored as
/// in the reference; sizes it would send to CDP as `null` or 0 ("no override") are refused.
pub fn parse_viewport(text: &str) -> Result<Viewport, String> {
    // The reference 1.11.0's texts; sizes CDP would take as "no override" (0, fractions,
    // absurd sizes) are refused with the same words.
    let invalid = |what: &str, value: f64| {
        let shape = "'<width>x<height>x<devicePixelRatio>[,mobile][,touch][,landscape]'";
        format!(
            "Invalid viewport {what} \"{}\". Expected format {shape} with a positive {what}.",
            js_number_text(value)
        )
    };
    let mut tags = text.split(',');
    let mut numbers = (tags.next().unwrap_or_default().split('x')).map(|part| {
        Some(part)
            .filter(|part| !part.trim().is_empty())
            .map(js_to_number)
            .unwrap_or(f64::NAN)
    });
    let mut size = |what: &str| {
        let value = numbers.next().unwrap_or(f64::NAN);
        if value.fract() == 0.0 && (1.0..=1e7).contains(&value) {
            Ok(value as u32)
        } else {
            Err(invalid(what, value))
        }
    };
    let (width, height) = (size("width")?, size("height")?);
    let device_scale_factor = match numbers.next() {
        None => None,
        Some(dpr) if dpr.is_finite() && dpr > 0.0 => Some(dpr),
        Some(dpr) => {
            return Err(format!(
                "Invalid devicePixelRatio \"{}\". Expected a positive number.",
                js_number_text(dpr)
            ));
        }
    };
    let tags: Vec<&str> = tags.collect();
    Ok(Viewport {
        width,
        height,
        device_scale_factor,
        is_mobile: tags.contains(&"mobile"),
        has_touch: tags.contains(&"touch"),
        is_landscape: tags.contains(&"landscape"),
    })
}

impl Viewport {
    /// The reference's `{...defaults, ...viewport}`, in its key order, for text and structure.
    pub fn to_json(self) -> Value {
        let mut value = json!({
            "deviceScaleFactor": self.device_scale_factor.map(js_value),
            "isMobile": self.is_mobile, "hasTouch": self.has_touch,
            "isLandscape": self.is_landscape, "width": self.width, "height": self.height,
        });
        if let (None, Some(map)) = (self.device_scale_factor, value.as_object_mut()) {
            map.shift_remove("deviceScaleFactor");
        }
        value
    }
}

/// One `emulate` call's arguments, as the strings the tool receives.
#[derive(Default, Clone, Debug)]
pub struct EmulateRequest {
    pub network_conditions: Option<String>,
    pub cpu_throttling_rate: Option<f64>,
    pub geolocation: Option<String>,
    pub user_agent: Option<String>,
    pub color_scheme: Option<String>,
    pub viewport: Option<String>,
    pub extra_http_headers: Option<String>,
    pub forced_colors: Option<String>,
    pub prefers_contrast: Option<String>,
    pub prefers_reduced_motion: Option<String>,
}

/// The values of the media features `emulate` sets besides the color scheme, as 1.11.0
/// accepts them (`auto` resets).
const FORCED_COLORS: [&str; 2] = ["active", "none"];
const PREFERS_CONTRAST: [&str; 4] = ["more", "less", "custom", "no-preference"];
const PREFERS_REDUCED_MOTION: [&str; 2] = ["reduce", "no-preference"];

/// One media feature's requested value: `None` for omitted or `auto`.
fn media_feature(
    value: Option<&str>,
    allowed: &[&'static str],
    field: &str,
) -> Result<Option<&'static str>, String> {
    match value {
        None | Some("auto") => Ok(None),
        Some(value) => allowed
            .iter()
            .find(|allowed| **allowed == value)
            .map(|allowed| Some(*allowed))
            .ok_or_else(|| {
                let mut expected: Vec<String> = allowed.iter().map(|a| format!("'{a}'")).collect();
                expected.push("'auto'".into());
                enum_error(&expected.join(" | "), value, field)
            }),
    }
}

/// A page's emulation state; `Default` emulates nothing. Build others with `next`, which
/// validates; the fields are public for reading.
#[derive(Default, Clone, Debug)]
pub struct Emulation {
    pub network: Option<NetworkPreset>,
    pub cpu_throttling_rate: Option<f64>,
    pub geolocation: Option<Geolocation>,
    pub user_agent: Option<String>,
    /// `dark` or `light`; `auto` is stored as nothing, as in the reference.
    pub color_scheme: Option<&'static str>,
    pub viewport: Option<Viewport>,
    /// Names as given; they are lower-cased on the wire only, as Puppeteer does.
    pub extra_http_headers: Option<Vec<(String, String)>>,
    pub forced_colors: Option<&'static str>,
    pub prefers_contrast: Option<&'static str>,
    pub prefers_reduced_motion: Option<&'static str>,
}

impl Emulation {
    /// Validates and computes the next whole state. Nothing is applied yet, so a refused request
    /// leaves state and page as they were (the reference may have half-applied by then).
    pub fn next(&self, request: EmulateRequest) -> Result<Emulation, String> {
        let network = request.network_conditions.as_deref().map(parse_network);
        let (low, high) = ("greater than or equal to 1", "less than or equal to 20");
        match request.cpu_throttling_rate {
            Some(rate) if rate < 1.0 => return Err(format!("Number must be {low} at {CPU}")),
            Some(rate) if rate.is_nan() || rate > 20.0 => {
                return Err(format!("Number must be {high} at {CPU}"));
            }
            _ => {}
        }
        let color_scheme = match request.color_scheme.as_deref() {
            None | Some("auto") => None,
            Some("dark") => Some("dark"),
            Some("light") => Some("light"),
            Some(other) => return Err(enum_error(SCHEMES, other, "colorScheme")),
        };
        let extra_http_headers = match request.extra_http_headers.as_deref() {
            None => self.extra_http_headers.clone(),
            Some(text) => Some(parse_headers(text)?).filter(|headers| !headers.is_empty()),
        };
        let forced_colors = media_feature(
            request.forced_colors.as_deref(),
            &FORCED_COLORS,
            "forcedColors",
        )?;
        let prefers_contrast = media_feature(
            request.prefers_contrast.as_deref(),
            &PREFERS_CONTRAST,
            "prefersContrast",
        )?;
        let prefers_reduced_motion = media_feature(
            request.prefers_reduced_motion.as_deref(),
            &PREFERS_REDUCED_MOTION,
            "prefersReducedMotion",
        )?;
        let geolocation = non_empty(request.geolocation).map(|text| parse_geolocation(&text));
        let viewport = non_empty(request.viewport).map(|text| parse_viewport(&text));
        Ok(Emulation {
            network: network.transpose()?,
            cpu_throttling_rate: request.cpu_throttling_rate,
            geolocation: geolocation.transpose()?,
            user_agent: non_empty(request.user_agent),
            color_scheme,
            viewport: viewport.transpose()?,
            extra_http_headers,
            forced_colors,
            prefers_contrast,
            prefers_reduced_motion,
        })
    }

    /// The CPU slowdown, 1 when off.
    pub fn cpu_multiplier(&self) -> f64 {
        self.cpu_throttling_rate.unwrap_or(1.0)
    }

    /// How much network throttling stretches navigations, 1 when off.
    pub fn network_multiplier(&self) -> f64 {
        self.network.map_or(1.0, |preset| preset.timeout_multiplier)
    }

    /// The default navigation timeout in ms: 10 s × network × CPU, left to right as in JS.
    pub fn navigation_timeout_ms(&self) -> f64 {
        NAVIGATION_TIMEOUT_MS * self.network_multiplier() * self.cpu_multiplier()
    }

    pub fn navigation_timeout(&self) -> Duration {
        Duration::from_secs_f64(self.navigation_timeout_ms() / 1000.0)
    }

    /// The default timeout for waiters and locators: 5 s × CPU.
    pub fn action_timeout(&self) -> Duration {
        Duration::from_secs_f64(ACTION_TIMEOUT_MS * self.cpu_multiplier() / 1000.0)
    }

    /// Lines for the response, in the reference's order, and their structuredContent keys.
    pub fn lines(&self) -> (Vec<String>, Map<String, Value>) {
        let mut entries: Vec<(String, &str, Value)> = Vec::new();
        if let Some(network) = self.network {
            let (name, ms) = (network.name, self.navigation_timeout_ms());
            let timeout = js_number_text(ms);
            let line = format!("Emulating network conditions: {name}");
            entries.push((line, "networkConditions", name.into()));
            let line = format!("Default navigation timeout set to {timeout} ms");
            entries.push((line, "navigationTimeout", js_value(ms)));
        }
        if let Some(at) = self.geolocation {
            let (lat, lon) = (js_number_text(at.latitude), js_number_text(at.longitude));
            let line = format!("Emulating geolocation: latitude={lat}, longitude={lon}");
            let value =
                json!({ "latitude": js_value(at.latitude), "longitude": js_value(at.longitude) });
            entries.push((line, "geolocation", value));
        }
        if let Some(viewport) = self.viewport.map(Viewport::to_json) {
            let line = format!("Emulating viewport: {viewport}");
            entries.push((line, "viewport", viewport));
        }
        if let Some(agent) = &self.user_agent {
            let line = format!("Emulating user agent: {agent}");
            entries.push((line, "userAgent", agent.as_str().into()));
        }
        let rate = self.cpu_multiplier();
        if rate > 1.0 {
            let line = format!(
                "Emulating CPU throttling: {}x slowdown",
                js_number_text(rate)
            );
            entries.push((line, CPU, js_value(rate)));
        }
        if let Some(scheme) = self.color_scheme {
            let line = format!("Emulating color scheme: {scheme}");
            entries.push((line, "colorScheme", scheme.into()));
        }
        for (feature, key, value) in [
            ("forced-colors", "forcedColors", self.forced_colors),
            ("prefers-contrast", "prefersContrast", self.prefers_contrast),
            (
                "prefers-reduced-motion",
                "prefersReducedMotion",
                self.prefers_reduced_motion,
            ),
        ] {
            if let Some(value) = value {
                entries.push((format!("Emulating {feature}: {value}"), key, value.into()));
            }
        }
        let mut keys = Map::new();
        let lines = entries.into_iter().map(|(line, key, value)| {
            keys.insert(key.into(), value);
            line
        });
        (lines.collect(), keys)
    }

    /// Whether going from `previous` to this state toggles mobile or touch, which Puppeteer's
    /// `setViewport` answers with a reload so the page picks up the new input model.
    pub fn reload_needed(&self, previous: &Emulation) -> bool {
        let mode = |state: &Emulation| state.viewport.map(|v| (v.is_mobile, v.has_touch));
        mode(self).unwrap_or_default() != mode(previous).unwrap_or_default()
    }

    /// Applies the whole state with CDP, resetting what is off. Idempotent, so it also restores
    /// a page's emulation after something else (e.g. Lighthouse) changed it.
    pub async fn apply(&self, page: &chromiumoxide::Page) -> Result<(), String> {
        let mut browser_agent = String::new();
        if self.user_agent.is_none() {
            let version = run(page, "Browser.getVersion", json!({})).await?;
            browser_agent = version["userAgent"].as_str().unwrap_or_default().into();
        }
        for (method, params) in self.commands(&browser_agent) {
            run(page, method, params).await?;
        }
        Ok(())
    }

    /// The commands that put a page in this state, in the reference's order. Without an
    /// emulated user agent, Puppeteer's reset overrides with the browser's own one.
    pub fn commands(&self, browser_agent: &str) -> Vec<(&'static str, Value)> {
        let mut commands = Vec::new();
        let network = match self.network {
            Some(p) => json!({ "offline": p.name == "Offline", "latency": p.latency,
                "downloadThroughput": p.download, "uploadThroughput": p.upload }),
            None => json!({ "offline": false, "latency": 0,
                "downloadThroughput": -1, "uploadThroughput": -1 }),
        };
        commands.push(("Network.emulateNetworkConditions", network));
        let rate = json!({ "rate": self.cpu_multiplier() });
        commands.push(("Emulation.setCPUThrottlingRate", rate));
        commands.push(match self.geolocation {
            Some(at) => {
                let at =
                    json!({ "latitude": at.latitude, "longitude": at.longitude, "accuracy": 0 });
                ("Emulation.setGeolocationOverride", at)
            }
            None => ("Emulation.clearGeolocationOverride", json!({})),
        });
        let agent = json!({ "userAgent": self.user_agent.as_deref().unwrap_or(browser_agent) });
        commands.push(("Network.setUserAgentOverride", agent));
        let scheme = self.color_scheme.unwrap_or_default();
        // Every feature is sent each time: the command replaces all emulated features.
        let media = json!({ "features": [
            { "name": "prefers-color-scheme", "value": scheme },
            { "name": "forced-colors", "value": self.forced_colors.unwrap_or_default() },
            { "name": "prefers-contrast", "value": self.prefers_contrast.unwrap_or_default() },
            { "name": "prefers-reduced-motion", "value": self.prefers_reduced_motion.unwrap_or_default() },
        ] });
        commands.push(("Emulation.setEmulatedMedia", media));
        let headers: Map<String, Value> = (self.extra_http_headers.iter().flatten())
            .map(|(name, value)| (name.to_lowercase(), value.as_str().into()))
            .collect();
        commands.push(("Network.setExtraHTTPHeaders", json!({ "headers": headers })));
        let touch = match self.viewport {
            Some(v) => {
                let (angle, kind) =
                    [(0, "portraitPrimary"), (90, "landscapePrimary")][usize::from(v.is_landscape)];
                let metrics = json!({ "mobile": v.is_mobile, "width": v.width, "height": v.height,
                    "deviceScaleFactor": v.device_scale_factor.unwrap_or(1.0),
                    "screenOrientation": { "angle": angle, "type": kind } });
                commands.push(("Emulation.setDeviceMetricsOverride", metrics));
                v.has_touch
            }
            None => {
                commands.push(("Emulation.clearDeviceMetricsOverride", json!({})));
                false
            }
        };
        let touch = json!({ "enabled": touch });
        commands.push(("Emulation.setTouchEmulationEnabled", touch));
        commands
    }

    /// `apply`, then the reload Puppeteer does when mobile or touch changed, bounded by this
    /// state's navigation timeout. The `emulate` tool calls this one.
    pub async fn apply_after(
        &self,
        previous: &Emulation,
        page: &chromiumoxide::Page,
    ) -> Result<(), String> {
        self.apply(page).await?;
        if !self.reload_needed(previous) {
            return Ok(());
        }
        let loads = page.event_listener::<EventLoadEventFired>().await;
        let mut loads = loads.map_err(|error| error.to_string())?;
        let timeout = self.navigation_timeout();
        let reload = async {
            run(page, "Page.reload", json!({ "ignoreCache": false })).await?;
            loads.next().await;
            Ok::<(), String>(())
        };
        let exceeded = |_| format!("Navigation timeout of {} ms exceeded", timeout.as_millis());
        tokio::time::timeout(timeout, reload)
            .await
            .map_err(exceeded)?
    }
}

fn non_empty(text: Option<String>) -> Option<String> {
    text.filter(|text| !text.is_empty())
}

/// A `networkConditions` name, or zod's message listing the valid ones.
fn parse_network(name: &str) -> Result<NetworkPreset, String> {
    let preset = NETWORK_PRESETS.into_iter().find(|p| p.name == name);
    let names: Vec<String> = NETWORK_PRESETS.map(|p| format!("'{}'", p.name)).into();
    preset.ok_or_else(|| enum_error(&names.join(" | "), name, "networkConditions"))
}

/// Zod 3's enum message, which the reference answers a value outside its schema with.
fn enum_error(expected: &str, received: &str, field: &str) -> String {
    format!("Invalid enum value. Expected {expected}, received '{received}' at {field}")
}

/// `headerStringTransform` plus Puppeteer's string check; an empty list means "clear".
fn parse_headers(text: &str) -> Result<Vec<(String, String)>, String> {
    if text.is_empty() {
        return Ok(Vec::new());
    }
    let parsed = serde_json::from_str(text);
    let parsed = parsed.map_err(|error| format!("Invalid JSON for headers: {error}"))?;
    let Value::Object(object) = parsed else {
        return Err("Invalid JSON for headers: Headers must be a JSON object".into());
    };
    let header = |(name, value): (String, Value)| {
        let kind = match &value {
            Value::String(text) => return Ok((name, text.clone())),
            Value::Number(_) => "number",
            Value::Bool(_) => "boolean",
            _ => "object",
        };
        let message =
            format!("Expected value of header \"{name}\" to be String, but \"{kind}\" is found.");
        Err(message)
    };
    object.into_iter().map(header).collect()
}

/// JavaScript's `Number(text)` for what a user types: trimmed, `""` is 0, and anything but a
/// finite decimal is NaN.
fn js_to_number(text: &str) -> f64 {
    match text.trim() {
        "" => 0.0,
        text => text
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite())
            .unwrap_or(f64::NAN),
    }
}

/// A number as JavaScript prints it in a template string: `4`, `1.5`, `NaN`, `0` for -0, and
/// exponent form below 1e-6 (the values here never reach 1e21).
pub fn js_number_text(value: f64) -> String {
    match value {
        v if v.is_nan() => "NaN".into(),
        0.0 => "0".into(),
        v if v.abs() < 1e-6 => format!("{v:e}"),
        v => format!("{v}"),
    }
}

/// A number as `JSON.stringify` writes it: integral values without a fraction.
pub fn js_value(value: f64) -> Value {
    if value.fract() == 0.0 && value.abs() < 9_007_199_254_740_992.0 {
        return (value as i64).into();
    }
    serde_json::Number::from_f64(value).map_or(Value::Null, Value::Number)
}

#[cfg(test)]
mod tests;
