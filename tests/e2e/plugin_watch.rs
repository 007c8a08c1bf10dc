//! `plugin test --watch`: the author's loop. A TypeScript project made by `plugin new` is
//! tested, then tested again after each saved edit, rebuilt by the resident builder and loaded
//! again in the browser kept from the last run; a build that fails says why (the compiler's
//! message) and the loop goes on; Ctrl-C ends it cleanly.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// A running `plugin test --watch`, its output lines (stdout and stderr) in a channel.
struct Watching {
    child: Child,
    lines: Receiver<String>,
    seen: Vec<String>,
}

impl Watching {
    fn start(project: &Path) -> Watching {
        let page = project.join("test/page.html");
        let mut child = crate::support::command(env!("CARGO_BIN_EXE_devtools-mcp"))
            .args(["plugin", "test", "--watch", "--page"])
            .arg(&page)
            .arg(project)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("devtools-mcp plugin test --watch");
        let (sender, lines) = std::sync::mpsc::channel();
        let stdout = child.stdout.take().expect("stdout");
        let stderr = child.stderr.take().expect("stderr");
        for stream in [
            Box::new(stdout) as Box<dyn std::io::Read + Send>,
            Box::new(stderr),
        ] {
            let sender = sender.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    if sender.send(line).is_err() {
                        break;
                    }
                }
            });
        }
        Watching {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Waits for a line containing `text`; panics with everything seen after `within`.
    fn wait_for(&mut self, text: &str, within: Duration) -> String {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if line.contains(text) {
                        return line;
                    }
                }
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => panic!(
                    "no line with {text:?} within {within:?}; seen:\n{}",
                    self.seen.join("\n")
                ),
            }
        }
    }
}

impl Drop for Watching {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn edit(file: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(file).expect("read the source");
    assert!(text.contains(from), "{from:?} is not in {}", file.display());
    std::fs::write(file, text.replacen(from, to, 1)).expect("write the source");
}

#[test]
fn a_typescript_edit_is_rebuilt_loaded_and_answered_until_ctrl_c() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let made = crate::support::command(env!("CARGO_BIN_EXE_devtools-mcp"))
        .args(["plugin", "new", "watched_tool", "--lang", "ts"])
        .current_dir(scratch.path())
        .output()
        .expect("plugin new");
    assert!(made.status.success(), "{made:?}");
    let project = scratch.path().join("watched_tool");
    let source = project.join("src/tool.ts");
    let mut watching = Watching::start(&project);
    // The first run installs, builds, compiles and answers; then the builder is warmed up.
    watching.wait_for("The page is at http://127.0.0.1:", Duration::from_secs(300));
    watching.wait_for("Watching ", Duration::from_secs(120));

    edit(&source, "'The page is at'", "'The page is now at'");
    watching.wait_for(
        "The page is now at http://127.0.0.1:",
        Duration::from_secs(120),
    );
    let done = watching.wait_for("Done in ", Duration::from_secs(10));
    assert!(
        done.contains("built in ") && done.contains("by the resident TypeScript builder"),
        "{done}"
    );

    // A type error: the compiler's message, then the loop waits for the next change.
    edit(&source, "url(page)}", "url(page, 42)}");
    let failed = watching.wait_for("FAIL: ", Duration::from_secs(120));
    assert!(
        failed.contains("src/tool.ts(") && failed.contains("error TS2554"),
        "{failed}"
    );

    edit(&source, "url(page, 42)}", "url(page)}");
    edit(&source, "'The page is now at'", "'The page is at last at'");
    watching.wait_for(
        "The page is at last at http://127.0.0.1:",
        Duration::from_secs(120),
    );
    // The builder outlived the compile error.
    let done = watching.wait_for("Done in ", Duration::from_secs(10));
    assert!(
        done.contains("by the resident TypeScript builder"),
        "{done}"
    );
    watching.wait_for("Watching ", Duration::from_secs(10));

    // Ctrl-C: the browser closed, exit status 0.
    let interrupted = crate::support::command("kill")
        .args(["-INT", &watching.child.id().to_string()])
        .status()
        .expect("kill -INT");
    assert!(interrupted.success());
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = watching.child.try_wait().expect("wait") {
            break status;
        }
        assert!(Instant::now() < deadline, "still running after Ctrl-C");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(status.success(), "{status}");
}
