//! Which browser binary is launched: `--executablePath`; else the `--channel`'s Chrome where
//! its installer puts it (Puppeteer's locations, which 1.11.0 launches from); else Chrome
//! stable, then Chromium, where installers and distributions put them. The macOS and Windows
//! locations are written down too and used on those systems. Nothing found is an answer that
//! says what to install, not a failed launch.

use crate::browser::BrowserError;
use std::path::{Path, PathBuf};

/// A Chrome release channel (`--channel`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Channel {
    Stable,
    Beta,
    Dev,
    Canary,
}

impl Channel {
    pub fn parse(name: &str) -> Option<Channel> {
        match name {
            "stable" => Some(Channel::Stable),
            "beta" => Some(Channel::Beta),
            "dev" => Some(Channel::Dev),
            "canary" => Some(Channel::Canary),
            _ => None,
        }
    }

    fn product(self) -> &'static str {
        match self {
            Channel::Stable => "Google Chrome",
            Channel::Beta => "Google Chrome Beta",
            Channel::Dev => "Google Chrome Dev",
            Channel::Canary => "Google Chrome Canary",
        }
    }

    fn download_page(self) -> &'static str {
        match self {
            Channel::Stable => "https://www.google.com/chrome/",
            Channel::Beta => "https://www.google.com/chrome/beta/",
            Channel::Dev => "https://www.google.com/chrome/dev/",
            Channel::Canary => "https://www.google.com/chrome/canary/",
        }
    }

    /// Where the channel's installer puts the binary on this system.
    pub fn locations(self) -> Vec<PathBuf> {
        chrome_locations(self)
    }
}

#[cfg(all(unix, not(target_os = "macos")))]
fn chrome_locations(channel: Channel) -> Vec<PathBuf> {
    let folder = match channel {
        Channel::Stable => "chrome",
        Channel::Beta => "chrome-beta",
        Channel::Dev => "chrome-unstable",
        Channel::Canary => "chrome-canary",
    };
    vec![PathBuf::from(format!("/opt/google/{folder}/chrome"))]
}

#[cfg(target_os = "macos")]
fn chrome_locations(channel: Channel) -> Vec<PathBuf> {
    let app = channel.product();
    vec![PathBuf::from(format!(
        "/Applications/{app}.app/Contents/MacOS/{app}"
    ))]
}

#[cfg(windows)]
fn chrome_locations(channel: Channel) -> Vec<PathBuf> {
    let suffix = match channel {
        Channel::Stable => r"Google\Chrome\Application\chrome.exe",
        Channel::Beta => r"Google\Chrome Beta\Application\chrome.exe",
        Channel::Dev => r"Google\Chrome Dev\Application\chrome.exe",
        Channel::Canary => r"Google\Chrome SxS\Application\chrome.exe",
    };
    let mut prefixes: Vec<PathBuf> = [
        "PROGRAMFILES",
        "ProgramW6432",
        "ProgramFiles(x86)",
        "LOCALAPPDATA",
    ]
    .iter()
    .filter_map(std::env::var_os)
    .map(PathBuf::from)
    .collect();
    prefixes.extend(
        [r"C:\Program Files", r"C:\Program Files (x86)"]
            .iter()
            .map(PathBuf::from),
    );
    prefixes.dedup();
    prefixes
        .into_iter()
        .map(|prefix| prefix.join(suffix))
        .collect()
}

/// The profile folder the channel's Chrome uses by default: where `--autoConnect` finds its
/// `DevToolsActivePort` (Puppeteer's locations, as 1.11.0 reads them).
#[cfg(all(unix, not(target_os = "macos")))]
fn default_user_data_dir(channel: Channel) -> PathBuf {
    let config = std::env::var_os("CHROME_CONFIG_HOME")
        .or_else(|| std::env::var_os("XDG_CONFIG_HOME"))
        .map(PathBuf::from)
        .or_else(|| dirs::home_dir().map(|home| home.join(".config")))
        .unwrap_or_default();
    config.join(match channel {
        Channel::Stable => "google-chrome",
        Channel::Beta => "google-chrome-beta",
        Channel::Dev => "google-chrome-unstable",
        Channel::Canary => "google-chrome-canary",
    })
}

#[cfg(target_os = "macos")]
fn default_user_data_dir(channel: Channel) -> PathBuf {
    let base = dirs::home_dir()
        .unwrap_or_default()
        .join("Library/Application Support/Google");
    base.join(match channel {
        Channel::Stable => "Chrome",
        Channel::Beta => "Chrome Beta",
        Channel::Dev => "Chrome Dev",
        Channel::Canary => "Chrome Canary",
    })
}

#[cfg(windows)]
fn default_user_data_dir(channel: Channel) -> PathBuf {
    let local = std::env::var_os("LOCALAPPDATA")
        .map(PathBuf::from)
        .or_else(|| dirs::home_dir().map(|home| home.join("AppData").join("Local")))
        .unwrap_or_default();
    let folder = match channel {
        Channel::Stable => "Chrome",
        Channel::Beta => "Chrome Beta",
        Channel::Dev => "Chrome Dev",
        Channel::Canary => "Chrome SxS",
    };
    local.join("Google").join(folder).join("User Data")
}

/// The profile `--autoConnect` reads: `--userDataDir`, else the channel's (stable by default).
pub fn endpoint_dir(user_data_dir: Option<&Path>, channel: Option<Channel>) -> String {
    let dir = match user_data_dir {
        Some(dir) => dir.to_path_buf(),
        None => default_user_data_dir(channel.unwrap_or(Channel::Stable)),
    };
    dir.display().to_string()
}

/// `--autoConnect`: the WebSocket endpoint the user's running Chrome wrote into its profile's
/// `DevToolsActivePort` (a port, then a path) once remote debugging was turned on.
pub fn auto_connect_endpoint(
    user_data_dir: Option<&Path>,
    channel: Option<Channel>,
) -> Result<String, BrowserError> {
    let dir = endpoint_dir(user_data_dir, channel);
    let failed = || BrowserError::AutoConnect(dir.clone());
    let text = std::fs::read_to_string(Path::new(&dir).join("DevToolsActivePort"))
        .map_err(|_| failed())?;
    let mut lines = text.lines().map(str::trim).filter(|line| !line.is_empty());
    let (Some(port), Some(path)) = (lines.next(), lines.next()) else {
        return Err(failed());
    };
    match port.parse::<u16>() {
        Ok(port) if port > 0 && path.starts_with('/') => Ok(format!("ws://127.0.0.1:{port}{path}")),
        _ => Err(failed()),
    }
}

/// Chromium where distributions put it, after Chrome stable when no channel is named.
#[cfg(all(unix, not(target_os = "macos")))]
const CHROMIUM_LOCATIONS: &[&str] = &[
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/snap/bin/chromium",
    "/usr/bin/google-chrome-stable",
    "/usr/bin/google-chrome",
];
#[cfg(target_os = "macos")]
const CHROMIUM_LOCATIONS: &[&str] = &["/Applications/Chromium.app/Contents/MacOS/Chromium"];
#[cfg(windows)]
const CHROMIUM_LOCATIONS: &[&str] = &[];

/// Names looked up on `PATH` last (a browser installed elsewhere, e.g. by Nix or Homebrew).
#[cfg(not(windows))]
const PATH_NAMES: &[&str] = &[
    "google-chrome-stable",
    "google-chrome",
    "chromium",
    "chromium-browser",
];
#[cfg(windows)]
const PATH_NAMES: &[&str] = &["chrome.exe"];

/// The binary to launch, or an error naming what to install and `--executablePath`.
pub fn find_browser(
    executable: Option<&Path>,
    channel: Option<Channel>,
) -> Result<PathBuf, BrowserError> {
    if let Some(executable) = executable {
        return match executable.is_file() {
            true => Ok(executable.to_path_buf()),
            false => Err(BrowserError::ExecutableMissing(
                executable.display().to_string(),
            )),
        };
    }
    if let Some(channel) = channel {
        let locations = channel.locations();
        return locations
            .iter()
            .find(|path| path.is_file())
            .cloned()
            .ok_or_else(|| BrowserError::ChannelMissing {
                product: channel.product(),
                searched: listed(&locations),
                download: channel.download_page(),
            });
    }
    let mut locations = Channel::Stable.locations();
    locations.extend(CHROMIUM_LOCATIONS.iter().map(PathBuf::from));
    locations
        .iter()
        .find(|path| path.is_file())
        .cloned()
        .or_else(|| PATH_NAMES.iter().find_map(|name| on_path(name)))
        .ok_or_else(|| BrowserError::NoExecutable {
            searched: listed(&locations),
        })
}

fn listed(locations: &[PathBuf]) -> String {
    let names: Vec<String> = locations
        .iter()
        .map(|path| path.display().to_string())
        .collect();
    names.join(", ")
}

/// The first file called `name` in a folder of `PATH`.
fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|folder| !folder.as_os_str().is_empty())
        .map(|folder| folder.join(name))
        .find(|candidate| candidate.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_executable_path_is_named_with_the_way_out() {
        let missing = Path::new("/nonexistent/devtools-mcp-test/chrome");
        let error = find_browser(Some(missing), None).expect_err("missing");
        let message = error.to_string();
        assert!(
            message.contains("/nonexistent/devtools-mcp-test/chrome"),
            "{message}"
        );
        assert!(message.contains("--executablePath"), "{message}");
    }

    #[test]
    fn auto_connect_reads_the_profiles_devtools_active_port() {
        let profile = tempfile::tempdir().expect("profile");
        let missing = auto_connect_endpoint(Some(profile.path()), None).expect_err("no file");
        let message = missing.to_string();
        assert!(
            message.contains(&profile.path().display().to_string()),
            "{message}"
        );
        assert!(
            message.contains("chrome://inspect/#remote-debugging"),
            "{message}"
        );
        let file = profile.path().join("DevToolsActivePort");
        std::fs::write(&file, "9222\n/devtools/browser/abc\n").expect("write");
        assert_eq!(
            auto_connect_endpoint(Some(profile.path()), Some(Channel::Beta))
                .ok()
                .as_deref(),
            Some("ws://127.0.0.1:9222/devtools/browser/abc")
        );
        std::fs::write(&file, "0\n/devtools/browser/abc\n").expect("write");
        assert!(auto_connect_endpoint(Some(profile.path()), None).is_err());
        #[cfg(all(unix, not(target_os = "macos")))]
        assert!(endpoint_dir(None, Some(Channel::Dev)).ends_with("/google-chrome-unstable"));
    }

    #[test]
    fn a_channel_is_looked_for_where_its_installer_puts_it() {
        #[cfg(all(unix, not(target_os = "macos")))]
        {
            assert_eq!(
                Channel::Beta.locations(),
                [PathBuf::from("/opt/google/chrome-beta/chrome")]
            );
            assert_eq!(
                Channel::Dev.locations(),
                [PathBuf::from("/opt/google/chrome-unstable/chrome")]
            );
        }
        for channel in [
            Channel::Stable,
            Channel::Beta,
            Channel::Dev,
            Channel::Canary,
        ] {
            let installed = channel.locations().iter().any(|path| path.is_file());
            match find_browser(None, Some(channel)) {
                Ok(found) => assert!(installed && channel.locations().contains(&found)),
                Err(error) => {
                    assert!(!installed);
                    let message = error.to_string();
                    assert!(message.contains(channel.product()), "{message}");
                    assert!(message.contains(channel.download_page()), "{message}");
                    assert!(message.contains("--executablePath"), "{message}");
                }
            }
        }
    }
}
