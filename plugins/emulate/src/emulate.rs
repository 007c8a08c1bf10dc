//! `emulate`: sets the page's whole emulation state.

use devtools_tool::{Category, Definition, Emulation, Flags, Page, PageTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
enum NetworkConditions {
    Offline,
    #[serde(rename = "Slow 3G")]
    Slow3G,
    #[serde(rename = "Fast 3G")]
    Fast3G,
    #[serde(rename = "Slow 4G")]
    Slow4G,
    #[serde(rename = "Fast 4G")]
    Fast4G,
}

impl NetworkConditions {
    fn name(&self) -> &'static str {
        match self {
            NetworkConditions::Offline => "Offline",
            NetworkConditions::Slow3G => "Slow 3G",
            NetworkConditions::Fast3G => "Fast 3G",
            NetworkConditions::Slow4G => "Slow 4G",
            NetworkConditions::Fast4G => "Fast 4G",
        }
    }
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
enum ColorScheme {
    Dark,
    Light,
    Auto,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
enum ForcedColors {
    Active,
    None,
    Auto,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
enum PrefersContrast {
    More,
    Less,
    Custom,
    NoPreference,
    Auto,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
enum PrefersReducedMotion {
    Reduce,
    NoPreference,
    Auto,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// Throttle network. Omit to disable throttling.
    network_conditions: Option<NetworkConditions>,
    /// Represents the CPU slowdown factor. Omit or set the rate to 1 to disable throttling
    #[schemars(range(min = 1, max = 20))]
    cpu_throttling_rate: Option<f64>,
    /// Geolocation (`<latitude>,<longitude>`) to emulate. Latitude between -90 and 90. Longitude between -180 and 180. Omit to clear the geolocation override.
    geolocation: Option<String>,
    /// User agent to emulate. Omit or set to empty string to clear the user agent override.
    user_agent: Option<String>,
    /// Emulate the dark or the light mode. Omit or set to "auto" to reset to the default.
    color_scheme: Option<ColorScheme>,
    /// Emulate the `forced-colors` CSS media feature. Omit or set to "auto" to reset to the default.
    forced_colors: Option<ForcedColors>,
    /// Emulate the `prefers-contrast` CSS media feature. Omit or set to "auto" to reset to the default.
    prefers_contrast: Option<PrefersContrast>,
    /// Emulate the `prefers-reduced-motion` CSS media feature. Omit or set to "auto" to reset to the default.
    prefers_reduced_motion: Option<PrefersReducedMotion>,
    /// Emulate device viewports '<width>x<height>x<devicePixelRatio>[,mobile][,touch][,landscape]'. 'touch' and 'mobile' to emulate mobile devices. 'landscape' to emulate landscape mode. Omit to clear the viewport override.
    viewport: Option<String>,
    /// Extra HTTP headers as a JSON string object, e.g. {"X-Custom": "value", "Authorization": "Bearer token"}. Headers are included into every HTTP request originating from the page and persist across navigations until cleared. Pass an empty string to clear all extra headers.
    extra_http_headers: Option<String>,
}

struct Emulate;

impl PageTool for Emulate {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "emulate",
            Category::Emulation,
            "Emulates various features on the target page. Each call replaces all emulation settings (except extraHttpHeaders), so pass all desired settings in a single call.",
        )
        .blocked_by_dialog()
    }

    fn handle(page: &Page, params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let color_scheme = params.color_scheme.map(|scheme| match scheme {
            ColorScheme::Dark => "dark".to_string(),
            ColorScheme::Light => "light".to_string(),
            ColorScheme::Auto => "auto".to_string(),
        });
        page.emulate(&Emulation {
            network_conditions: params
                .network_conditions
                .map(|network| network.name().to_string()),
            cpu_throttling_rate: params.cpu_throttling_rate,
            geolocation: params.geolocation,
            user_agent: params.user_agent,
            color_scheme,
            viewport: params.viewport,
            extra_http_headers: params.extra_http_headers,
            forced_colors: params.forced_colors.map(|value| match value {
                ForcedColors::Active => devtools_tool::ForcedColors::Active,
                ForcedColors::None => devtools_tool::ForcedColors::None,
                ForcedColors::Auto => devtools_tool::ForcedColors::Auto,
            }),
            prefers_contrast: params.prefers_contrast.map(|value| match value {
                PrefersContrast::More => devtools_tool::PrefersContrast::More,
                PrefersContrast::Less => devtools_tool::PrefersContrast::Less,
                PrefersContrast::Custom => devtools_tool::PrefersContrast::Custom,
                PrefersContrast::NoPreference => devtools_tool::PrefersContrast::NoPreference,
                PrefersContrast::Auto => devtools_tool::PrefersContrast::Auto,
            }),
            prefers_reduced_motion: params.prefers_reduced_motion.map(|value| match value {
                PrefersReducedMotion::Reduce => devtools_tool::PrefersReducedMotion::Reduce,
                PrefersReducedMotion::NoPreference => {
                    devtools_tool::PrefersReducedMotion::NoPreference
                }
                PrefersReducedMotion::Auto => devtools_tool::PrefersReducedMotion::Auto,
            }),
        })?;
        response.line("Emulation configured successfully");
        Ok(())
    }
}

devtools_tool::register_page_tool!(Emulate);
