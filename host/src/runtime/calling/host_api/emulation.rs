//! `devtools:tool/emulation` (`emulate`): what the page believes about its device. Media and
//! resize listeners run page code, so both functions are landing-checked.

use super::function::{HostFunction as F, Marks as M};
use super::{Call, CallState, Outcome, PageHandle, or_return};
use crate::browser::EmulateRequest;
use crate::runtime::calling::bindings::v0_3::devtools::tool::emulation;
use wasmtime::component::Resource;

pub(super) const RESIZE: F = F::new("emulation", "resize", M::NAVIGATES.and(M::ON_PAGE));
pub(super) const EMULATE: F = F::new("emulation", "emulate", M::NAVIGATES.and(M::ON_PAGE));

pub(super) const FUNCTIONS: &[&F] = &[&RESIZE, &EMULATE];

/// The media features' values as the reference spells them (`emulate`'s parameters).
fn forced_colors(value: emulation::ForcedColors) -> &'static str {
    match value {
        emulation::ForcedColors::Active => "active",
        emulation::ForcedColors::None => "none",
        emulation::ForcedColors::Auto => "auto",
    }
}

fn prefers_contrast(value: emulation::PrefersContrast) -> &'static str {
    match value {
        emulation::PrefersContrast::More => "more",
        emulation::PrefersContrast::Less => "less",
        emulation::PrefersContrast::Custom => "custom",
        emulation::PrefersContrast::NoPreference => "no-preference",
        emulation::PrefersContrast::Auto => "auto",
    }
}

fn prefers_reduced_motion(value: emulation::PrefersReducedMotion) -> &'static str {
    match value {
        emulation::PrefersReducedMotion::Reduce => "reduce",
        emulation::PrefersReducedMotion::NoPreference => "no-preference",
        emulation::PrefersReducedMotion::Auto => "auto",
    }
}

/// Sets the page's whole emulation state, in every contract's terms (the media features as
/// the reference spells them). Values the reference refuses while parsing the arguments
/// answer alone.
pub(super) async fn apply(
    call: &mut Call<'_>,
    handle: &Resource<PageHandle>,
    request: EmulateRequest,
) -> Outcome<()> {
    let checked = or_return!(call.page(handle).await?)
        .emulation()
        .next(request.clone());
    if let Err(message) = checked {
        call.response().argument_error = Some(message.clone());
        return Ok(Err(message));
    }
    // The URL patterns are network conditions the browser holds; 1.11.0 refuses throttling
    // beside them.
    let restricted = or_return!(call.session())
        .browser_options()
        .url_patterns
        .is_some();
    if restricted && request.network_conditions.is_some() {
        return Ok(Err(crate::policy::url_patterns::NO_THROTTLING.to_string()));
    }
    Ok(or_return!(call.page(handle).await?).emulate(request).await)
}

impl emulation::Host for CallState {
    async fn resize(
        &mut self,
        handle: Resource<PageHandle>,
        width: u32,
        height: u32,
    ) -> Outcome<()> {
        self.dispatch(&RESIZE, async |call| {
            Ok(or_return!(call.page(&handle).await?)
                .resize(width, height)
                .await)
        })
        .await
    }

    async fn emulate(
        &mut self,
        handle: Resource<PageHandle>,
        settings: emulation::Emulation,
    ) -> Outcome<()> {
        self.dispatch(&EMULATE, async |call| {
            let request = EmulateRequest {
                network_conditions: settings.network_conditions.clone(),
                cpu_throttling_rate: settings.cpu_throttling_rate,
                geolocation: settings.geolocation.clone(),
                user_agent: settings.user_agent.clone(),
                color_scheme: settings.color_scheme.clone(),
                viewport: settings.viewport.clone(),
                extra_http_headers: settings.extra_http_headers.clone(),
                forced_colors: settings.forced_colors.map(|v| forced_colors(v).to_string()),
                prefers_contrast: settings
                    .prefers_contrast
                    .map(|v| prefers_contrast(v).to_string()),
                prefers_reduced_motion: settings
                    .prefers_reduced_motion
                    .map(|v| prefers_reduced_motion(v).to_string()),
            };
            apply(call, &handle, request).await
        })
        .await
    }
}
