//! `take_screenshot`: the capture as Puppeteer's `page.screenshot`/`element.screenshot` issue
//! it for the reference (same `Page.captureScreenshot` parameters, `optimizeForSpeed: true`),
//! with the server-wide format, quality and max-size flags.

use crate::browser::cdp::raw::{RawLink, RawReply};
use crate::browser::cdp::{run_within, timeouts};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

/// Format names with the reference's extensions (`SupportedExtensions`, dot included).
const FORMATS: [(&str, &str); 3] = [("png", ".png"), ("jpeg", ".jpeg"), ("webp", ".webp")];

/// Server flags: `--screenshotFormat`, `--screenshotQuality`, `--screenshotMaxWidth/Height`.
#[derive(Default, Clone, Debug)]
pub struct ScreenshotFlags {
    pub format: Option<String>,
    pub quality: Option<u32>,
    pub max_width: Option<u32>,
    pub max_height: Option<u32>,
}

/// One call. `uid` feeds the description and the uid/fullPage check; the element itself comes
/// as the remote object id the caller resolved the uid to.
#[derive(Default, Clone, Debug)]
pub struct ScreenshotRequest {
    pub format: Option<String>,
    pub quality: Option<u32>,
    pub element_object_id: Option<String>,
    pub full_page: bool,
    pub uid: Option<String>,
}

impl ScreenshotRequest {
    /// The reference's first check, made before the uid is resolved; callers should call it
    /// before resolving too, so the same error wins.
    pub fn validate(&self) -> Result<(), String> {
        if (self.uid.is_some() || self.element_object_id.is_some()) && self.full_page {
            return Err("Providing both \"uid\" and \"fullPage\" is not allowed.".into());
        }
        Ok(())
    }
}

pub struct Screenshot {
    pub bytes: Vec<u8>,
    pub mime_type: String,
    /// With its dot, as the reference's: `.png`, `.jpeg`, `.webp`.
    pub extension: &'static str,
}

/// The format (request, else flag, else png) with its extension, and the quality CDP gets:
/// none for png, where the reference drops it; else the request's, else the flag's.
pub fn resolve_format(
    request: &ScreenshotRequest,
    flags: &ScreenshotFlags,
) -> Result<(&'static str, &'static str, Option<u32>), String> {
    if [request.quality, flags.quality]
        .into_iter()
        .flatten()
        .any(|q| q > 100)
    {
        return Err("Number must be less than or equal to 100 at quality".into());
    }
    let name = request
        .format
        .as_deref()
        .or(flags.format.as_deref())
        .unwrap_or("png");
    let Some(&(format, extension)) = FORMATS.iter().find(|(known, _)| *known == name) else {
        let expected = "'png' | 'jpeg' | 'webp'";
        return Err(format!(
            "Invalid enum value. Expected {expected}, received '{name}' at format"
        ));
    };
    let quality = request
        .quality
        .or(flags.quality)
        .filter(|_| format != "png");
    Ok((format, extension, quality))
}

/// A `Page.captureScreenshot` clip, in CSS pixels of the document.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Clip {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
    pub scale: f64,
}

/// `computeDownscaleClip`: the scale that fits `source`'s device pixels in both bounds (the
/// smaller wins, so the aspect ratio holds), or none when nothing needs shrinking or the image
/// would be under a pixel.
pub fn downscale_clip(
    source: Clip,
    pixel_ratio: f64,
    max: (Option<u32>, Option<u32>),
) -> Option<Clip> {
    let fit = |max: Option<u32>, size: f64| {
        max.map_or(1.0, |max| (f64::from(max) / (size * pixel_ratio)).min(1.0))
    };
    let scale = fit(max.0, source.width).min(fit(max.1, source.height));
    let pixels = |size: f64| (size * pixel_ratio * scale).round();
    if scale.is_nan() || scale >= 1.0 || pixels(source.width) < 1.0 || pixels(source.height) < 1.0 {
        return None;
    }
    Some(Clip { scale, ..source })
}

/// Puppeteer's `roundRectangle`: a whole-pixel origin, the far edges kept where they were.
fn round_clip(clip: Clip) -> Clip {
    let round = |value: f64| (value + 0.5).floor(); // `Math.round`: halves go up.
    let (x, y) = (round(clip.x), round(clip.y));
    let (width, height) = (
        round(clip.width + clip.x - x),
        round(clip.height + clip.y - y),
    );
    Clip {
        x,
        y,
        width,
        height,
        scale: clip.scale,
    }
}

/// Captures the viewport, the full page or one element, as the reference's `take_screenshot`.
pub async fn capture(
    page: &chromiumoxide::Page,
    raw: &RawLink,
    request: &ScreenshotRequest,
    flags: &ScreenshotFlags,
) -> Result<Screenshot, String> {
    request.validate()?;
    let (format, extension, quality) = resolve_format(request, flags)?;
    let element = request.element_object_id.as_deref();
    let mut clip = None;
    if flags.max_width.is_some() || flags.max_height.is_some() {
        let max = (flags.max_width, flags.max_height);
        let source = source_box(page, element, request.full_page).await?;
        clip = source.and_then(|(source, ratio)| downscale_clip(source, ratio, max));
    }
    if let (None, Some(object_id)) = (clip, element) {
        clip = Some(element_clip(page, object_id).await?);
    }
    let mut params = json!({ "format": format, "optimizeForSpeed": true, "fromSurface": true,
        "captureBeyondViewport": clip.is_some() || request.full_page });
    if let Some(quality) = quality {
        params["quality"] = quality.into();
    }
    if let Some(clip) = clip {
        if clip.width <= 0.0 || clip.height <= 0.0 {
            let side = if clip.width <= 0.0 { "width" } else { "height" };
            return Err(format!("'{side}' in 'clip' must be positive."));
        }
        params["clip"] = json!(round_clip(clip));
    }
    let target = page.target_id().as_ref().to_string();
    let bytes = capture_image(raw, &target, params).await?;
    let mime_type = format!("image/{format}");
    Ok(Screenshot {
        bytes,
        mime_type,
        extension,
    })
}

/// `Page.captureScreenshot` on the thin connection: the reply (a base64 image, often
/// megabytes) is kept as text and its `data` decoded where it lies, instead of going through
/// chromiumoxide's message types (an untagged enum that buffers the whole reply) first.
async fn capture_image(raw: &RawLink, target: &str, params: Value) -> Result<Vec<u8>, String> {
    let client = raw.client().await.map_err(|error| error.to_string())?;
    let mut session = client
        .session(target, timeouts::CAPTURE)
        .await
        .map_err(|error| error.to_string())?;
    let call = |session: String| {
        let (client, params) = (client.clone(), params.clone());
        async move {
            client
                .call(
                    Some(&session),
                    "Page.captureScreenshot",
                    params,
                    timeouts::CAPTURE,
                )
                .await
        }
    };
    let mut reply = call(session.clone())
        .await
        .map_err(|error| error.to_string())?;
    let stale = |reply: &RawReply| {
        read_image(reply).is_ok_and(|shot| {
            shot.is_err_and(|error| error.contains("Session with given id not found"))
        })
    };
    if stale(&reply) {
        // A stale session (its target was swapped or detached): attach afresh once.
        client.forget_session(target);
        session = client
            .session(target, timeouts::CAPTURE)
            .await
            .map_err(|error| error.to_string())?;
        reply = call(session).await.map_err(|error| error.to_string())?;
    }
    read_image(&reply)?
}

/// A screenshot reply's image (or the browser's error), read where it lies: from the CBOR
/// pipe the image is the bytes themselves; from a WebSocket, base64 text decoded in place.
fn read_image(reply: &RawReply) -> Result<Result<Vec<u8>, String>, String> {
    #[derive(serde::Deserialize)]
    struct Reply<Image> {
        result: Option<Shot<Image>>,
        error: Option<ProtocolError>,
    }
    #[derive(serde::Deserialize)]
    struct Shot<Image> {
        data: Image,
    }
    #[derive(serde::Deserialize)]
    struct ProtocolError {
        message: String,
    }
    let unreadable = |error: &dyn std::fmt::Display| {
        format!("The browser sent an unreadable screenshot reply: {error}")
    };
    let (result, error) = match reply.cbor() {
        Some(message) => {
            let parsed: Reply<&[u8]> =
                devtools_cbor::from_message_seed(message, std::marker::PhantomData)
                    .map_err(|error| unreadable(&error))?;
            let image = parsed.result.map(|shot| shot.data.to_vec());
            (image, parsed.error)
        }
        None => {
            let text = reply.text().map_err(|error| error.to_string())?;
            let parsed: Reply<&str> =
                serde_json::from_str(text).map_err(|error| unreadable(&error))?;
            let image =
                match parsed.result {
                    Some(shot) => Some(STANDARD.decode(shot.data).map_err(|error| {
                        format!("The browser sent an undecodable image: {error}")
                    })?),
                    None => None,
                };
            (image, parsed.error)
        }
    };
    Ok(match error {
        Some(error) => Err(error.message),
        None => Ok(result.unwrap_or_default()),
    })
}

/// `getSourceBox`: what a downscale has to fit, with the device pixel ratio. Boxes are in
/// document coordinates because clips are; the reference passes viewport coordinates for the
/// viewport and an element, which only agree at scroll 0.
async fn source_box(
    page: &chromiumoxide::Page,
    element: Option<&str>,
    full_page: bool,
) -> Result<Option<(Clip, f64)>, String> {
    const DIMENSIONS: &str = r#"(full) => {
      const root = document.documentElement, body = document.body;
      const box = full
        ? [0, 0, Math.max(root.scrollWidth, body?.scrollWidth ?? 0),
           Math.max(root.scrollHeight, body?.scrollHeight ?? 0)]
        : [visualViewport?.pageLeft ?? scrollX, visualViewport?.pageTop ?? scrollY,
           innerWidth, innerHeight];
      return [...box, devicePixelRatio];
    }"#;
    let expression = format!("({DIMENSIONS})({full_page})");
    let evaluate = json!({ "expression": expression, "returnByValue": true });
    let dims = run_within(page, "Runtime.evaluate", evaluate, timeouts::CAPTURE).await?;
    let number = |at: usize| dims["result"]["value"][at].as_f64().unwrap_or(0.0);
    let (mut x, mut y, mut width, mut height) = (number(0), number(1), number(2), number(3));
    if let Some(object_id) = element {
        let Some(border) = border_box(page, object_id).await else {
            return Ok(None);
        };
        let (left, top) = page_offset(page).await?;
        (x, y, width, height) = (border.0 + left, border.1 + top, border.2, border.3);
    }
    if width <= 0.0 || height <= 0.0 {
        return Ok(None);
    }
    Ok(Some((
        Clip {
            x,
            y,
            width,
            height,
            scale: 1.0,
        },
        number(4),
    )))
}

/// `ElementHandle.screenshot`'s clip: scrolls the element into view unless it is fully
/// visible, then takes its box in document coordinates, with Puppeteer's checks and messages.
async fn element_clip(page: &chromiumoxide::Page, object_id: &str) -> Result<Clip, String> {
    const VISIBILITY: &str = r#"async function () {
      if (!this.isConnected) return 'Node is detached from document';
      if (this.nodeType !== Node.ELEMENT_NODE) return 'Node is not of type HTMLElement';
      const svg = this instanceof SVGElement
        ? (this instanceof SVGSVGElement ? this : this.ownerSVGElement) : null;
      const ratio = await new Promise(resolve => {
        const observer = new IntersectionObserver(entries => {
          resolve(entries[0].intersectionRatio);
          observer.disconnect();
        });
        observer.observe(svg ?? this);
      });
      return ratio === 1 ? 'visible' : 'hidden';
    }"#;
    const SCROLL: &str = "function () { this.scrollIntoView({block: 'center', inline: 'center', behavior: 'instant'}); }";
    let call = |declaration: &str| {
        json!({ "objectId": object_id, "functionDeclaration": declaration,
            "awaitPromise": true, "returnByValue": true })
    };
    let state = run_within(
        page,
        "Runtime.callFunctionOn",
        call(VISIBILITY),
        timeouts::CAPTURE,
    )
    .await?;
    match state["result"]["value"].as_str() {
        Some("visible") => {}
        Some("hidden") => {
            let scroll = json!({ "objectId": object_id });
            if run_within(
                page,
                "DOM.scrollIntoViewIfNeeded",
                scroll,
                timeouts::CAPTURE,
            )
            .await
            .is_err()
            {
                run_within(
                    page,
                    "Runtime.callFunctionOn",
                    call(SCROLL),
                    timeouts::CAPTURE,
                )
                .await?;
            }
        }
        Some(error) => return Err(error.into()),
        None => {
            let details = &state["exceptionDetails"];
            let thrown = details["exception"]["description"].as_str();
            return Err(thrown
                .or(details["text"].as_str())
                .unwrap_or("Node is unusable")
                .into());
        }
    }
    let missing = "Node is either not visible or not an HTMLElement";
    let (x, y, width, height) = border_box(page, object_id).await.ok_or(missing)?;
    if width == 0.0 || height == 0.0 {
        let side = if width == 0.0 { "width" } else { "height" };
        return Err(format!("Node has 0 {side}."));
    }
    let (left, top) = page_offset(page).await?;
    Ok(Clip {
        x: x + left,
        y: y + top,
        width,
        height,
        scale: 1.0,
    })
}

/// The element's border box in main-frame viewport coordinates (iframes included), as
/// Puppeteer's `boundingBox()`; none when it has no layout box.
async fn border_box(page: &chromiumoxide::Page, object_id: &str) -> Option<(f64, f64, f64, f64)> {
    let model = run_within(
        page,
        "DOM.getBoxModel",
        json!({ "objectId": object_id }),
        timeouts::CAPTURE,
    )
    .await;
    let model = model.ok()?;
    let quad = model["model"]["border"].as_array()?;
    let points: Vec<f64> = quad.iter().filter_map(Value::as_f64).collect();
    let extent = |start: usize| {
        let values = points.iter().skip(start).step_by(2);
        values.fold((f64::MAX, f64::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)))
    };
    let ((left, right), (top, bottom)) = (extent(0), extent(1));
    (points.len() == 8).then_some((left, top, right - left, bottom - top))
}

/// The visual viewport's position in the document (`visualViewport.pageLeft/pageTop`), which
/// turns viewport coordinates into the document coordinates clips use.
async fn page_offset(page: &chromiumoxide::Page) -> Result<(f64, f64), String> {
    let metrics = run_within(page, "Page.getLayoutMetrics", json!({}), timeouts::CAPTURE).await?;
    let viewport = &metrics["cssVisualViewport"];
    let offset = |key: &str| viewport[key].as_f64().unwrap_or(0.0);
    Ok((offset("pageX"), offset("pageY")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clip(width: f64, height: f64) -> Clip {
        Clip {
            x: 3.0,
            y: 4.0,
            width,
            height,
            scale: 1.0,
        }
    }

    #[test]
    fn downscale_keeps_the_aspect_ratio_and_the_smaller_scale() {
        let shrunk = downscale_clip(clip(800.0, 600.0), 1.0, (Some(100), None));
        assert_eq!(
            shrunk,
            Some(Clip {
                scale: 0.125,
                ..clip(800.0, 600.0)
            })
        );
        let both = downscale_clip(clip(800.0, 600.0), 1.0, (Some(400), Some(60)));
        assert_eq!(both.map(|c| c.scale), Some(0.1));
        let hidpi = downscale_clip(clip(800.0, 600.0), 2.0, (Some(100), None));
        assert_eq!(hidpi.map(|c| c.scale), Some(0.0625));
        assert_eq!(
            downscale_clip(clip(800.0, 600.0), 1.0, (Some(4000), Some(4000))),
            None
        );
        assert_eq!(downscale_clip(clip(800.0, 600.0), 1.0, (None, None)), None);
        assert_eq!(
            downscale_clip(clip(800.0, 1.0), 1.0, (Some(100), None)),
            None
        );
    }

    #[test]
    fn clips_round_like_puppeteer() {
        let rounded = round_clip(Clip {
            x: 10.4,
            y: 20.5,
            width: 100.3,
            height: 40.2,
            scale: 1.0,
        });
        let sides = (rounded.x, rounded.y, rounded.width, rounded.height);
        assert_eq!(sides, (10.0, 21.0, 101.0, 40.0));
    }

    #[test]
    fn format_and_quality_follow_request_then_flags() {
        let resolve = |format: Option<&str>, quality, flags: &ScreenshotFlags| {
            let format = format.map(String::from);
            let request = ScreenshotRequest {
                format,
                quality,
                ..Default::default()
            };
            resolve_format(&request, flags)
        };
        let jpeg = ScreenshotFlags {
            format: Some("jpeg".into()),
            quality: Some(70),
            ..Default::default()
        };
        let none = ScreenshotFlags::default();
        assert_eq!(resolve(None, None, &none), Ok(("png", ".png", None)));
        assert_eq!(
            resolve(Some("png"), Some(10), &none),
            Ok(("png", ".png", None))
        );
        assert_eq!(resolve(None, None, &jpeg), Ok(("jpeg", ".jpeg", Some(70))));
        assert_eq!(
            resolve(Some("webp"), Some(5), &jpeg),
            Ok(("webp", ".webp", Some(5)))
        );
        assert_eq!(resolve(Some("png"), None, &jpeg), Ok(("png", ".png", None)));
        let gif = "Invalid enum value. Expected 'png' | 'jpeg' | 'webp', received 'gif' at format";
        assert_eq!(resolve(Some("gif"), None, &none), Err(gif.into()));
        assert!(resolve(Some("jpeg"), Some(101), &none).is_err());
        let both = ScreenshotRequest {
            uid: Some("1_1".into()),
            full_page: true,
            ..Default::default()
        };
        let error = "Providing both \"uid\" and \"fullPage\" is not allowed.";
        assert_eq!(both.validate(), Err(error.into()));
    }
}
