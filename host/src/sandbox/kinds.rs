//! The files the host writes, and their extensions: the one list every write takes its
//! extension from, so no `.desktop`, `.sh`, `.html` or dotfile lands anywhere because a tool or
//! a page asked. A plugin chooses only among [`PLUGIN_FILE_EXTENSIONS`]; every other kind's
//! extension is the host's choice. Active content (an HTML report, which runs script when
//! opened) never goes to a folder a community plugin chose: it is written to a fresh private
//! folder of the temp dir instead (see `Call::write_file`'s callers).

/// Extensions a plugin may choose for `save-file` and `save-temp-file`: data, text and images.
pub const PLUGIN_FILE_EXTENSIONS: [&str; 12] = [
    ".png",
    ".jpeg",
    ".jpg",
    ".webp",
    ".json",
    ".txt",
    ".md",
    ".csv",
    ".heapsnapshot",
    ".network-request",
    ".network-response",
    ".gz",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageFormat {
    Png,
    Jpeg,
    Webp,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportFormat {
    Json,
    Html,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VideoFormat {
    Webm,
    Mp4,
}

/// What a written file is; its extension follows from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    Screenshot(ImageFormat),
    /// A page snapshot (`take_snapshot` with `filePath`).
    Snapshot,
    /// A performance trace, gzipped or not.
    Trace {
        gzip: bool,
    },
    HeapSnapshot,
    NetworkRequestBody,
    NetworkResponseBody,
    LighthouseReport(ReportFormat),
    Video(VideoFormat),
    /// A file a plugin asked for, with an extension of [`PLUGIN_FILE_EXTENSIONS`].
    Plugin(&'static str),
}

impl FileKind {
    pub fn extension(self) -> &'static str {
        match self {
            FileKind::Screenshot(ImageFormat::Png) => ".png",
            FileKind::Screenshot(ImageFormat::Jpeg) => ".jpeg",
            FileKind::Screenshot(ImageFormat::Webp) => ".webp",
            FileKind::Snapshot => ".txt",
            FileKind::Trace { gzip: true } => ".gz",
            FileKind::Trace { gzip: false } => ".json",
            FileKind::HeapSnapshot => ".heapsnapshot",
            FileKind::NetworkRequestBody => ".network-request",
            FileKind::NetworkResponseBody => ".network-response",
            FileKind::LighthouseReport(ReportFormat::Json) => ".json",
            FileKind::LighthouseReport(ReportFormat::Html) => ".html",
            FileKind::Video(VideoFormat::Webm) => ".webm",
            FileKind::Video(VideoFormat::Mp4) => ".mp4",
            FileKind::Plugin(extension) => extension,
        }
    }

    /// The kind for an extension a plugin chose, if it is one plugins may choose.
    pub fn chosen_by_plugin(extension: &str) -> Option<FileKind> {
        PLUGIN_FILE_EXTENSIONS
            .iter()
            .find(|allowed| **allowed == extension)
            .map(|allowed| FileKind::Plugin(allowed))
    }

    /// The kind of an image by its MIME type (PNG for anything else).
    pub fn image(mime_type: &str) -> FileKind {
        FileKind::Screenshot(match mime_type {
            "image/jpeg" => ImageFormat::Jpeg,
            "image/webp" => ImageFormat::Webp,
            _ => ImageFormat::Png,
        })
    }

    /// A file that runs script when opened (a browser opens `.html` as a page).
    pub fn is_active_content(self) -> bool {
        matches!(self, FileKind::LighthouseReport(ReportFormat::Html))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugins_choose_only_data_text_and_image_extensions() {
        assert_eq!(
            FileKind::chosen_by_plugin(".json").map(FileKind::extension),
            Some(".json")
        );
        for refused in [
            ".html", ".htm", ".mp4", ".sh", ".desktop", "", ".JSON", "json",
        ] {
            assert_eq!(FileKind::chosen_by_plugin(refused), None, "{refused}");
        }
        assert!(FileKind::LighthouseReport(ReportFormat::Html).is_active_content());
        assert!(!FileKind::Plugin(".json").is_active_content());
        assert_eq!(FileKind::image("image/webp").extension(), ".webp");
    }
}
