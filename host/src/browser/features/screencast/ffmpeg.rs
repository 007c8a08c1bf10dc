//! The legacy recorder behind `--experimentalScreencast`: `Page.startScreencast` frames piped
//! as PNG images into ffmpeg, as Puppeteer's `page.screencast()`. ffmpeg writes into a private
//! temp folder; the caller moves the video to the checked path. The child is killed if the
//! recording is dropped (page closed, server stopped).

use crate::browser::cdp::{cdp, send, timeouts};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use chromiumoxide::cdp::browser_protocol::page::{EventScreencastFrame, ScreencastFrameAckParams};
use futures::StreamExt;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Frames per second when `--screencastFps` is not given (Puppeteer's default).
const DEFAULT_FPS: u32 = 30;
/// How long ffmpeg may take to finish the file once its input ends.
const FINISH_TIMEOUT: Duration = Duration::from_secs(60);
const MISSING_FFMPEG: &str = "ffmpeg is required for screencast recording but was not found. Install ffmpeg (https://ffmpeg.org/) and ensure it is available in your PATH.";

/// `--experimentalFfmpegPath` when given (it must exist), else `ffmpeg` on `PATH`.
pub fn find_ffmpeg(explicit: Option<&Path>) -> Result<PathBuf, String> {
    match explicit {
        Some(path) if path.is_file() => Ok(path.to_path_buf()),
        Some(_) => Err(MISSING_FFMPEG.to_string()),
        None => crate::lighthouse::find_on_path("ffmpeg").ok_or_else(|| MISSING_FFMPEG.to_string()),
    }
}

/// ffmpeg as found, vetted as code the server runs (see `policy::code_folders::vet`).
pub fn vetted_ffmpeg(explicit: Option<&Path>) -> Result<PathBuf, String> {
    let ffmpeg = find_ffmpeg(explicit)?;
    crate::policy::code_folders::vet("ffmpeg (for screencasts)", &ffmpeg)?;
    Ok(ffmpeg)
}

pub struct FfmpegRecorder {
    child: Child,
    pump: JoinHandle<Option<ChildStdin>>,
    stop: oneshot::Sender<()>,
    /// Holds ffmpeg's output until it is read; removed when dropped.
    folder: tempfile::TempDir,
    output: PathBuf,
}

impl FfmpegRecorder {
    pub async fn start(
        page: &chromiumoxide::Page,
        ffmpeg: &Path,
        extension: &str,
        fps: Option<u32>,
        (max_width, max_height): (u64, u64),
    ) -> Result<FfmpegRecorder, String> {
        let folder = tempfile::Builder::new()
            .prefix("devtools-mcp-screencast-")
            .tempdir()
            .map_err(|error| format!("Could not create a temporary directory: {error}"))?;
        let output = folder.path().join(format!("screencast{extension}"));
        let log = std::fs::File::create(folder.path().join("ffmpeg.log"))
            .map_err(|error| format!("Could not create the ffmpeg log: {error}"))?;
        let fps = fps.unwrap_or(DEFAULT_FPS).to_string();
        let mut command = Command::new(ffmpeg);
        command
            .args(["-loglevel", "error", "-f", "image2pipe", "-framerate", &fps])
            .args(["-c:v", "png", "-i", "pipe:0", "-an"])
            // Even dimensions, which yuv420p needs.
            .args(["-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2"]);
        if extension == ".webm" {
            command.args([
                "-c:v",
                "libvpx-vp9",
                "-deadline",
                "realtime",
                "-cpu-used",
                "8",
            ]);
            command.args(["-b:v", "0", "-crf", "30"]);
        } else {
            command.args([
                "-c:v",
                "libx264",
                "-preset",
                "ultrafast",
                "-pix_fmt",
                "yuv420p",
            ]);
        }
        command
            .arg("-y")
            .arg(&output)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::from(log))
            .kill_on_drop(true);
        let mut child = command.spawn().map_err(|error| {
            if error.kind() == std::io::ErrorKind::NotFound {
                MISSING_FFMPEG.to_string()
            } else {
                format!("Could not start ffmpeg ({}): {error}", ffmpeg.display())
            }
        })?;
        let stdin = child.stdin.take().ok_or("ffmpeg has no standard input")?;
        let frames = page
            .event_listener::<EventScreencastFrame>()
            .await
            .map_err(|error| error.to_string())?;
        send(
            page,
            cdp(
                "Page.startScreencast",
                json!({
                    "format": "png",
                    "everyNthFrame": 1,
                    "maxWidth": max_width,
                    "maxHeight": max_height,
                }),
            ),
            timeouts::COMMAND,
        )
        .await
        .map_err(|error| error.to_string())?;
        let (stop, stopped) = oneshot::channel();
        let pump = tokio::spawn(pump_frames(page.clone(), frames, stdin, stopped));
        Ok(FfmpegRecorder {
            child,
            pump,
            stop,
            folder,
            output,
        })
    }

    /// Stops the frames, lets ffmpeg finish the file and returns it.
    pub async fn stop(mut self, page: &chromiumoxide::Page) -> Result<Vec<u8>, String> {
        if let Err(error) = send(
            page,
            cdp("Page.stopScreencast", json!({})),
            timeouts::COMMAND,
        )
        .await
        {
            tracing::debug!(%error, "Page.stopScreencast failed");
        }
        let _signalled = self.stop.send(());
        // Dropping the pipe ends ffmpeg's input.
        drop(self.pump.await.ok().flatten());
        let status = match tokio::time::timeout(FINISH_TIMEOUT, self.child.wait()).await {
            Ok(status) => status.map_err(|error| error.to_string())?,
            Err(_) => {
                let _killed = self.child.kill().await;
                return Err("ffmpeg did not finish the screencast in time.".into());
            }
        };
        if !status.success() {
            let log =
                std::fs::read_to_string(self.folder.path().join("ffmpeg.log")).unwrap_or_default();
            return Err(format!(
                "ffmpeg failed to write the screencast ({status}): {}",
                log.trim()
            ));
        }
        std::fs::read(&self.output)
            .map_err(|error| format!("Could not read the screencast: {error}"))
    }
}

/// Writes each frame to ffmpeg and acknowledges it (Chrome sends the next one only then);
/// hands the pipe back when told to stop.
async fn pump_frames(
    page: chromiumoxide::Page,
    mut frames: chromiumoxide::listeners::EventStream<EventScreencastFrame>,
    mut stdin: ChildStdin,
    mut stopped: oneshot::Receiver<()>,
) -> Option<ChildStdin> {
    loop {
        tokio::select! {
            _ = &mut stopped => return Some(stdin),
            frame = frames.next() => {
                let frame = frame?;
                let _acked = page.execute(ScreencastFrameAckParams::new(frame.session_id)).await;
                let data: &str = frame.data.as_ref();
                let Ok(image) = STANDARD.decode(data) else { continue };
                if stdin.write_all(&image).await.is_err() {
                    return None;
                }
            }
        }
    }
}
