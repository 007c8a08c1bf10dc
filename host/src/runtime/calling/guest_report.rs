//! What a plugin's code said as it crashed, for the caller and the author: a trap alone reads
//! "unreachable instruction executed", while the language's runtime wrote the reason just
//! before (componentize-py prints the Python traceback to stderr, StarlingMonkey the uncaught
//! exception and its stack; the Rust SDK's panic hook hands the panic's message and location
//! to the host). The report keeps the author's frames and drops the runtime's and the
//! bindings', and is bounded: the last [`MAX_LINES`] lines, at most [`MAX_BYTES`] bytes.

/// Marks a line the Rust SDK's panic hook appends (`devtools_tool::report_panics`): the host
/// keeps it out of the answer's lines and puts it in the crash report.
pub const PANIC_MARK: &str = "\u{1}devtools-tool:panic\u{1}";

/// The most of a report: a traceback's last lines say where it failed and why.
const MAX_LINES: usize = 40;
const MAX_BYTES: usize = 4 << 10;

/// The report of a crashed call, from the panic the SDK reported and the guest's stderr;
/// `None` when neither says anything.
pub fn crash_report(panic: Option<&str>, stderr: &str) -> Option<String> {
    let mut lines: Vec<String> = Vec::new();
    if let Some(panic) = panic {
        lines.extend(panic.lines().map(String::from));
    }
    lines.extend(trimmed(stderr));
    while lines.last().is_some_and(|line| line.trim().is_empty()) {
        lines.pop();
    }
    let blank_head = lines
        .iter()
        .take_while(|line| line.trim().is_empty())
        .count();
    lines.drain(..blank_head);
    if lines.is_empty() {
        return None;
    }
    let kept = lines.split_off(lines.len().saturating_sub(MAX_LINES));
    let mut text = kept.join("\n");
    if text.len() > MAX_BYTES {
        let mut cut = text.len() - MAX_BYTES;
        while !text.is_char_boundary(cut) {
            cut += 1;
        }
        text = format!("...{}", &text[cut..]);
    }
    Some(text)
}

/// The stderr's lines without what the runtimes add around the author's error.
fn trimmed(stderr: &str) -> Vec<String> {
    // The last Python traceback, when there is one: what came before is older output.
    let all: Vec<&str> = stderr.lines().collect();
    let start = all
        .iter()
        .rposition(|line| line.starts_with("Traceback (most recent call last):"))
        .unwrap_or(0);
    let python = all
        .get(start)
        .is_some_and(|line| line.starts_with("Traceback (most recent call last):"));
    let mut lines = Vec::new();
    let mut skipping_frame = false;
    let mut in_runtime_panic = false;
    for line in &all[start..] {
        // componentize-py's runtime panics after the traceback ("thread '<unnamed>' panicked
        // at runtime/src/lib.rs ... Python function threw an unexpected exception"); a Rust
        // guest's own panic (no traceback) is the author's and stays.
        if python && line.starts_with("thread '") && line.contains("panicked at") {
            in_runtime_panic = true;
            continue;
        }
        if in_runtime_panic {
            in_runtime_panic = !line.trim().is_empty();
            continue;
        }
        if line.starts_with("note: run with `RUST_BACKTRACE=1`")
            || line.starts_with("Redirecting call to abort() to mozalloc_abort")
        {
            continue;
        }
        if let Some(path) = python_frame_path(line) {
            skipping_frame = !is_authors_python(path);
            if !skipping_frame {
                lines.push(without_mount(line));
            }
            continue;
        }
        // A frame's source line and its carets are indented deeper than the frame.
        if skipping_frame && line.starts_with("    ") {
            continue;
        }
        skipping_frame = false;
        if is_bindings_js_frame(line) {
            continue;
        }
        lines.push((*line).to_string());
    }
    lines
}

/// The file of a Python traceback frame: `  File "/0/app.py", line 47, in handle`.
fn python_frame_path(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("  File \"")?;
    rest.split_once('"').map(|(path, _)| path)
}

/// The author's files: not the bindings componentize-py generates, its runtime's modules, or
/// the frozen standard library.
fn is_authors_python(path: &str) -> bool {
    !(path.starts_with('<')
        || path.contains("/wit_world/")
        || path.contains("componentize_py")
        || path.contains("/lib/python3"))
}

/// componentize-py mounts each `-p` folder at `/0`, `/1`...: the path the author knows is
/// relative to their folder.
fn without_mount(line: &str) -> String {
    let Some(rest) = line.strip_prefix("  File \"/") else {
        return line.to_string();
    };
    match rest.split_once('/') {
        Some((mount, path)) if !mount.is_empty() && mount.bytes().all(|b| b.is_ascii_digit()) => {
            format!("  File \"{path}")
        }
        _ => line.to_string(),
    }
}

/// A StarlingMonkey stack frame of the bindings componentize-js generated
/// (`  export_tool_0_3_0$handle@tool.bindings.js:1181:35`).
fn is_bindings_js_frame(line: &str) -> bool {
    line.starts_with("  ") && line.contains(".bindings.js:")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_python_traceback_keeps_the_authors_frames_and_drops_the_runtime_panic() {
        let stderr = "noise before\nTraceback (most recent call last):\n  File \"/1/wit_world/__init__.py\", line 9, in call\n    return handle()\n  File \"/0/app.py\", line 47, in handle\n    print(1 / 0)\n          ~~^~~\nZeroDivisionError: division by zero\n\nthread '<unnamed>' (1) panicked at runtime/src/lib.rs:1293:29:\nPython function threw an unexpected exception\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n\n";
        let report = crash_report(None, stderr).expect("a report");
        assert_eq!(
            report,
            "Traceback (most recent call last):\n  File \"app.py\", line 47, in handle\n    print(1 / 0)\n          ~~^~~\nZeroDivisionError: division by zero"
        );
    }

    #[test]
    fn a_javascript_stack_drops_the_bindings_frames() {
        let stderr = "boom\nStack:\n  handle@tool.js:31:19\n  export_tool_0_3_0$handle@tool.bindings.js:1181:35\n\nRedirecting call to abort() to mozalloc_abort\n\n";
        assert_eq!(
            crash_report(None, stderr).as_deref(),
            Some("boom\nStack:\n  handle@tool.js:31:19")
        );
    }

    #[test]
    fn a_wasi_rust_guests_own_panic_stays() {
        let stderr = "\nthread '<unnamed>' panicked at src/lib.rs:7:5:\nboom\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n";
        assert_eq!(
            crash_report(None, stderr).as_deref(),
            Some("thread '<unnamed>' panicked at src/lib.rs:7:5:\nboom")
        );
    }

    #[test]
    fn a_rust_panic_comes_first_and_silence_gives_no_report() {
        assert_eq!(
            crash_report(Some("panicked at src/lib.rs:20:9:\nboom"), "").as_deref(),
            Some("panicked at src/lib.rs:20:9:\nboom")
        );
        assert_eq!(crash_report(None, "\n\n"), None);
    }

    #[test]
    fn a_long_report_keeps_its_last_lines_within_the_bound() {
        let stderr: String = (0..1000)
            .map(|i| format!("line {i} {}\n", "é".repeat(100)))
            .collect();
        let report = crash_report(None, &stderr).expect("a report");
        assert!(report.len() <= MAX_BYTES + 3, "{}", report.len());
        assert!(report.ends_with(&format!("line 999 {}", "é".repeat(100))));
        assert!(report.lines().count() <= MAX_LINES);
    }
}
