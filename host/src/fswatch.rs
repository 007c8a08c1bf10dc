//! Folders watched for changes, with bursts settled into one: an editor's save or a copy
//! writes in steps, and the server should react once, to the finished result. Used by the
//! plugin folders' `--watch`, the `--config` file's reload and `plugin test --watch`.

use std::path::PathBuf;
use std::time::Duration;
use tokio::sync::mpsc;

/// Settled changes in some folders; watching stops when this is dropped.
pub struct SettledChanges {
    changed: mpsc::UnboundedReceiver<()>,
    settle: Duration,
    _watcher: notify::RecommendedWatcher,
}

impl SettledChanges {
    /// Watches `folders` (not recursively) for events that `relevant` accepts; reads and
    /// other access events never count.
    pub fn watch(
        folders: &[PathBuf],
        settle: Duration,
        relevant: impl Fn(&notify::Event) -> bool + Send + 'static,
    ) -> Result<SettledChanges, String> {
        let folders: Vec<(PathBuf, notify::RecursiveMode)> = folders
            .iter()
            .map(|folder| (folder.clone(), notify::RecursiveMode::NonRecursive))
            .collect();
        SettledChanges::watch_modes(&folders, settle, relevant)
    }

    /// Watches each folder, recursively or not, for events that `relevant` accepts.
    pub fn watch_modes(
        folders: &[(PathBuf, notify::RecursiveMode)],
        settle: Duration,
        relevant: impl Fn(&notify::Event) -> bool + Send + 'static,
    ) -> Result<SettledChanges, String> {
        use notify::Watcher;
        let (events, changed) = mpsc::unbounded_channel::<()>();
        let mut watcher =
            notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                if event.is_ok_and(|event| !event.kind.is_access() && relevant(&event)) {
                    let _closed = events.send(());
                }
            })
            .map_err(|error| format!("cannot watch for changes: {error}"))?;
        for (folder, mode) in folders {
            watcher
                .watch(folder, *mode)
                .map_err(|error| format!("cannot watch {}: {error}", folder.display()))?;
        }
        Ok(SettledChanges {
            changed,
            settle,
            _watcher: watcher,
        })
    }

    /// Waits for a change and then for `settle` without one; `None` once watching ended.
    pub async fn next(&mut self) -> Option<()> {
        self.changed.recv().await?;
        loop {
            match tokio::time::timeout(self.settle, self.changed.recv()).await {
                Ok(Some(())) => continue,
                Ok(None) => return None,
                Err(_quiet) => return Some(()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_burst_of_writes_is_one_settled_change() {
        let folder = tempfile::tempdir().expect("temp dir");
        let mut changes = SettledChanges::watch(
            &[folder.path().to_path_buf()],
            Duration::from_millis(150),
            |_| true,
        )
        .expect("watch");
        for round in 0..5 {
            std::fs::write(folder.path().join("file"), format!("{round}")).expect("write");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let first = tokio::time::timeout(Duration::from_secs(5), changes.next()).await;
        assert_eq!(first.expect("a change is reported"), Some(()));
        let second = tokio::time::timeout(Duration::from_millis(400), changes.next()).await;
        assert!(second.is_err(), "the burst was reported more than once");
    }
}
