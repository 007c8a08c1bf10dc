//! `screencast_start` / `screencast_stop` as chrome-devtools-mcp 1.11.0 records: by default
//! Chrome's own recorder (`Page.startScreenRecording`, an MP4 stream read back with `IO.read`
//! when stopped, as Puppeteer's `page.record()`), or with `--experimentalScreencast` the legacy
//! recorder that pipes `Page.startScreencast` frames into ffmpeg (`page.screencast()`).
//! The video always reaches the user's path through the sandbox.

mod ffmpeg;

use crate::browser::cdp::{cdp, send, timeouts};
use crate::browser::page::McpPage;
use crate::sandbox::{FileKind, Sandbox, VideoFormat, ensure_extension};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::json;
use std::path::{Path, PathBuf};

pub use ffmpeg::find_ffmpeg;

/// A recording larger than this is refused rather than held in memory.
const MAX_VIDEO_BYTES: usize = 1 << 30;

/// `--experimentalScreencast`, `--experimentalFfmpegPath` and `--screencastFps`.
#[derive(Debug, Clone, Default)]
pub struct ScreencastOptions {
    /// The legacy ffmpeg recorder instead of Chrome's.
    pub legacy: bool,
    pub ffmpeg_path: Option<PathBuf>,
    pub fps: Option<u32>,
}

/// A running recording of one page.
pub struct Recording {
    /// The checked path the video goes to.
    path: String,
    recorder: Recorder,
}

enum Recorder {
    /// Chrome's recorder: the IO stream handle to read when stopped.
    Chrome { stream: String },
    /// Boxed: the legacy recorder holds the ffmpeg child and its pipes.
    Ffmpeg(Box<ffmpeg::FfmpegRecorder>),
}

const SUPPORTED_LEGACY: [&str; 2] = [".webm", ".mp4"];

/// A page's screencast state: the running recording, if any.
#[derive(Default)]
pub struct Screencast {
    recording: Option<Recording>,
}

impl Screencast {
    /// Whether a recording runs on `page`.
    pub fn is_recording(page: &McpPage) -> bool {
        page.features()
            .get::<Screencast>()
            .is_some_and(|state| state.recording.is_some())
    }

    fn take(page: &mut McpPage) -> Option<Recording> {
        page.features_mut().get_mut::<Screencast>().recording.take()
    }

    /// Stops the running recording and drops the video (a long-lived effect ended).
    pub async fn abandon(page: &mut McpPage) -> Result<(), String> {
        match Self::take(page) {
            Some(recording) => finish_recording(page.cdp(), recording).await.map(drop),
            None => Ok(()),
        }
    }

    pub async fn start(
        page: &mut McpPage,
        file_path: Option<&str>,
        sandbox: &Sandbox,
        options: &ScreencastOptions,
    ) -> Result<Vec<String>, String> {
        if Self::is_recording(page) {
            return Ok(vec![
                "Error: a screencast recording is already in progress. Use screencast_stop to stop it before starting a new one.".into(),
            ]);
        }
        let (requested, temp_dir) = match file_path {
            Some(path) => (path.to_string(), None),
            None => {
                let dir = tempfile::Builder::new()
                    .prefix("chrome-devtools-mcp-")
                    .rand_bytes(6)
                    .tempdir()
                    .map_err(|error| format!("Could not create a temporary directory: {error}"))?
                    .keep();
                (dir.join("screencast.mp4").display().to_string(), Some(dir))
            }
        };
        let started = begin_recording(page.cdp(), &requested, sandbox, options).await;
        match started {
            Ok(recording) => {
                let line = format!(
                    "Screencast recording started. The recording will be saved to {}. Use screencast_stop to stop recording.",
                    recording.path
                );
                page.features_mut().get_mut::<Screencast>().recording = Some(recording);
                Ok(vec![line])
            }
            Err(error) => {
                // A failed start leaves no empty folder behind.
                if let Some(dir) = temp_dir {
                    let _removed = std::fs::remove_dir_all(dir);
                }
                Err(error)
            }
        }
    }

    pub async fn stop(page: &mut McpPage, sandbox: &Sandbox) -> Result<Vec<String>, String> {
        let Some(recording) = Self::take(page) else {
            return Ok(vec![
                "Error: no active screencast recording to stop.".into(),
            ]);
        };
        let path = recording.path.clone();
        let bytes = finish_recording(page.cdp(), recording).await?;
        sandbox
            .write(Path::new(&path), &bytes)
            .map_err(|error| error.to_string())?;
        Ok(vec![format!(
            "The screencast recording has been stopped and saved to {path}."
        )])
    }
}

async fn begin_recording(
    page: &chromiumoxide::Page,
    requested: &str,
    sandbox: &Sandbox,
    options: &ScreencastOptions,
) -> Result<Recording, String> {
    let kind = FileKind::Video(if options.legacy {
        legacy_format(requested)?
    } else {
        VideoFormat::Mp4
    });
    let extension = kind.extension();
    let path = sandbox
        .resolve(&ensure_extension(requested, extension))
        .map_err(|error| error.to_string())?;
    let (max_width, max_height) = device_pixel_size(page).await?;
    let recorder = if options.legacy {
        let ffmpeg = ffmpeg::vetted_ffmpeg(options.ffmpeg_path.as_deref())?;
        Recorder::Ffmpeg(Box::new(
            ffmpeg::FfmpegRecorder::start(
                page,
                &ffmpeg,
                extension,
                options.fps,
                (max_width, max_height),
            )
            .await?,
        ))
    } else {
        let mut params = json!({ "maxWidth": max_width, "maxHeight": max_height });
        if let Some(fps) = options.fps {
            params["frameRate"] = json!(fps);
        }
        let started = send(
            page,
            cdp("Page.startScreenRecording", params),
            timeouts::COMMAND,
        )
        .await
        .map_err(|error| {
            let message = error.to_string();
            if message.contains("Page.startScreenRecording") {
                "The connected Chrome does not support screen recording. Update Chrome to a newer version.".to_string()
            } else {
                message
            }
        })?;
        let stream = started["stream"]
            .as_str()
            .ok_or("Screen recording stream handle is missing.")?
            .to_string();
        Recorder::Chrome { stream }
    };
    // Like Puppeteer, the file exists from the start (and the path is proven writable).
    if let Err(error) = sandbox.write(Path::new(&path), &[]) {
        let recording = Recording { path, recorder };
        let _stopped = finish_recording(page, recording).await;
        return Err(error.to_string());
    }
    Ok(Recording { path, recorder })
}

/// Stops the recorder and returns the video's bytes.
async fn finish_recording(
    page: &chromiumoxide::Page,
    recording: Recording,
) -> Result<Vec<u8>, String> {
    match recording.recorder {
        Recorder::Chrome { stream } => {
            if let Err(error) = send(
                page,
                cdp("Page.stopScreenRecording", json!({})),
                timeouts::COMMAND,
            )
            .await
            {
                tracing::debug!(%error, "Page.stopScreenRecording failed");
            }
            let bytes = read_stream(page, &stream).await;
            let _closed = send(
                page,
                cdp("IO.close", json!({ "handle": stream })),
                timeouts::COMMAND,
            )
            .await;
            bytes
        }
        Recorder::Ffmpeg(recorder) => recorder.stop(page).await,
    }
}

/// The viewport in device pixels: without limits Chrome downscales frames.
async fn device_pixel_size(page: &chromiumoxide::Page) -> Result<(u64, u64), String> {
    let answer = send(
        page,
        cdp(
            "Runtime.evaluate",
            json!({
                "expression": "({ width: window.innerWidth, height: window.innerHeight, dpr: window.devicePixelRatio })",
                "returnByValue": true,
            }),
        ),
        timeouts::COMMAND,
    )
    .await
    .map_err(|error| error.to_string())?;
    let value = &answer["result"]["value"];
    let dpr = value["dpr"].as_f64().unwrap_or(1.0);
    let scaled = |key: &str| -> u64 {
        let pixels = (value[key].as_f64().unwrap_or(1.0) * dpr).round().max(1.0);
        // Viewports are far below 2^53.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let pixels = pixels as u64;
        pixels
    };
    Ok((scaled("width"), scaled("height")))
}

/// `getLegacyExtension`: `.webm` or `.mp4` (any case), `.mp4` when there is none.
/// The video format ffmpeg records for the requested file name.
fn legacy_format(path: &str) -> Result<VideoFormat, String> {
    match legacy_extension(path)? {
        ".webm" => Ok(VideoFormat::Webm),
        _ => Ok(VideoFormat::Mp4),
    }
}

fn legacy_extension(path: &str) -> Result<&'static str, String> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let extension = match name.rfind('.') {
        Some(at) if at > 0 => &name[at..],
        _ => "",
    };
    if extension.is_empty() {
        return Ok(".mp4");
    }
    SUPPORTED_LEGACY
        .iter()
        .find(|supported| supported.eq_ignore_ascii_case(extension))
        .copied()
        .ok_or_else(|| {
            format!(
                "Unsupported screencast file extension \"{extension}\". Supported formats: {} (case-insensitive).",
                SUPPORTED_LEGACY.join(", ")
            )
        })
}

/// Reads an `IO` stream to its end.
async fn read_stream(page: &chromiumoxide::Page, handle: &str) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    loop {
        let chunk = send(
            page,
            cdp("IO.read", json!({ "handle": handle })),
            timeouts::COMMAND,
        )
        .await
        .map_err(|error| error.to_string())?;
        if let Some(data) = chunk["data"].as_str() {
            if chunk["base64Encoded"].as_bool().unwrap_or(false) {
                let decoded = STANDARD
                    .decode(data)
                    .map_err(|error| format!("Invalid screen recording data: {error}"))?;
                bytes.extend_from_slice(&decoded);
            } else {
                bytes.extend_from_slice(data.as_bytes());
            }
        }
        if bytes.len() > MAX_VIDEO_BYTES {
            return Err("The screen recording is larger than 1 GiB; record a shorter one.".into());
        }
        if chunk["eof"].as_bool().unwrap_or(true) {
            return Ok(bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::legacy_extension;

    #[test]
    fn legacy_extensions_as_the_reference() {
        assert_eq!(legacy_extension("/tmp/a.WEBM"), Ok(".webm"));
        assert_eq!(legacy_extension("/tmp/a"), Ok(".mp4"));
        assert_eq!(
            legacy_extension("/tmp/a.gif"),
            Err("Unsupported screencast file extension \".gif\". Supported formats: .webm, .mp4 (case-insensitive).".to_string())
        );
    }
}
