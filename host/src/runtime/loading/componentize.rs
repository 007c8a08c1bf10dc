//! Core modules made components. A plugin built as a core module carries its component type
//! in custom sections, which wit-component decodes and merges into a component. That code
//! trusts what it decodes: a module whose WIT packages depend on each other in a cycle made it
//! recurse until the stack ran out (found by the `component_loading` fuzz target), and a stack
//! overflow aborts the whole process, which no `catch_unwind` stops. So the server never runs
//! it in its own process: its binary runs again as `devtools-mcp __componentize`, alone with
//! the module, under CPU and memory limits, and whatever stops that process costs one plugin.

use super::loader::LoadError;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

/// The hidden first argument that makes the binary a componentizer (see [`child_main`]).
pub const SUBCOMMAND: &str = "__componentize";

/// CPU seconds the componentizer may use: a real module takes well under one.
const CPU_SECONDS: u64 = 30;
/// Address space the componentizer may map (its binary, the module and wit-component's work).
const ADDRESS_SPACE_BYTES: u64 = 4 << 30;
/// How much of the componentizer's error text a load error repeats.
const MAX_REASON_CHARS: usize = 2_000;

/// Where wit-component runs.
#[derive(Clone, Debug)]
pub enum Componentizer {
    /// In a child process of `exe`, the server's own binary: what the server uses.
    Isolated { exe: PathBuf },
    /// In this process: for the library's tests and benches, which run without the server's
    /// binary and load only modules we built.
    InProcess,
}

impl Componentizer {
    /// This process's binary run again: `/proc/self/exe` where it exists, so an upgrade that
    /// replaced the file still runs the code that is running.
    pub fn isolated() -> Componentizer {
        let proc_self = Path::new("/proc/self/exe");
        let exe = if proc_self.exists() {
            proc_self.to_path_buf()
        } else {
            std::env::current_exe().unwrap_or_else(|_| proc_self.to_path_buf())
        };
        Componentizer::Isolated { exe }
    }

    /// Components pass through; a core module is encoded into a component from the component
    /// type that wit-bindgen embedded in it.
    pub fn componentize(&self, file: &Path, bytes: &[u8]) -> Result<Vec<u8>, LoadError> {
        if wasmparser::Parser::is_component(bytes) {
            return Ok(bytes.to_vec());
        }
        if !wasmparser::Parser::is_core_wasm(bytes) {
            return Err(LoadError::NotWasm {
                file: file.to_path_buf(),
            });
        }
        self.encode(bytes)
            .map_err(|reason| LoadError::Componentize {
                file: file.to_path_buf(),
                reason,
            })
    }

    /// A core module's component, or why there is none. wit-component trusts a module's
    /// section sizes before it validates (a code section claiming more bytes than the file
    /// holds made it slice out of bounds), so it only ever sees a module that wasmparser's
    /// validator, which holds for hostile input, accepted with the features wit-component
    /// validates with; done here, that also answers the common malformed module without a
    /// process.
    pub fn encode(&self, bytes: &[u8]) -> Result<Vec<u8>, String> {
        validate(bytes)?;
        match self {
            Componentizer::InProcess => wit_encode(bytes),
            Componentizer::Isolated { exe } => in_child(exe, bytes),
        }
    }
}

/// wit-component's part, on a module that validated.
fn wit_encode(bytes: &[u8]) -> Result<Vec<u8>, String> {
    wit_component::ComponentEncoder::default()
        .module(bytes)
        .and_then(|encoder| encoder.validate(true).encode())
        .map_err(|error| format!("{error:#}"))
}

fn validate(bytes: &[u8]) -> Result<(), String> {
    wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all())
        .validate_all(bytes)
        .map(drop)
        .map_err(|error| format!("it is not a valid WebAssembly module: {error}"))
}

/// Runs [`child_main`] in `exe` with the module on its standard input.
fn in_child(exe: &Path, bytes: &[u8]) -> Result<Vec<u8>, String> {
    let mut child = Command::new(exe)
        .arg(SUBCOMMAND)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| format!("cannot start {} to componentize it: {error}", exe.display()))?;
    // Written from a thread while the output is read, so neither side waits on a full pipe.
    let writer = child.stdin.take().map(|mut stdin| {
        let input = bytes.to_vec();
        std::thread::spawn(move || stdin.write_all(&input))
    });
    let output = child
        .wait_with_output()
        .map_err(|error| format!("the componentizer process failed: {error}"))?;
    if let Some(writer) = writer {
        // A child that stopped early closes the pipe; its status below says why.
        let _ = writer.join();
    }
    if output.status.success() {
        return if wasmparser::Parser::is_component(&output.stdout) {
            Ok(output.stdout)
        } else {
            Err(format!(
                "{} answered something other than a component; is it the devtools-mcp binary?",
                exe.display()
            ))
        };
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let said: String = stderr.trim().chars().take(MAX_REASON_CHARS).collect();
    match output.status.code() {
        Some(1) => Err(said),
        _ => Err(format!(
            "wit-component crashed on it, in a process of its own ({}{}), so the module is malformed; nothing else was affected",
            output.status,
            last_line(&said)
        )),
    }
}

/// `; <last line>` of what a crashed child printed (Rust's "stack overflow, aborting").
fn last_line(said: &str) -> String {
    said.lines()
        .rev()
        .find(|line| !line.trim().is_empty())
        .map(|line| format!("; {}", line.trim()))
        .unwrap_or_default()
}

/// The child's side: a core module on standard input, its component on standard output, or
/// the reason on standard error and exit code 1. Limits itself first: a module that makes
/// wit-component loop or allocate without end is stopped by the kernel.
pub fn child_main() -> ExitCode {
    use rustix::process::{Resource, Rlimit, setrlimit};
    for (resource, limit) in [
        (Resource::Cpu, CPU_SECONDS),
        (Resource::As, ADDRESS_SPACE_BYTES),
    ] {
        let limit = Rlimit {
            current: Some(limit),
            maximum: Some(limit),
        };
        if let Err(error) = setrlimit(resource, limit) {
            eprintln!("cannot limit the componentizer ({resource:?}): {error}");
            return ExitCode::from(2);
        }
    }
    let mut bytes = Vec::new();
    if let Err(error) = std::io::stdin().read_to_end(&mut bytes) {
        eprintln!("cannot read the module: {error}");
        return ExitCode::from(2);
    }
    // The parent validated the module. A panic is a malformed module, said like any other
    // reason (and, unlike a panic in the server's own process, not a finding for the fuzzer).
    std::panic::set_hook(Box::new(|_| {}));
    let encoded = std::panic::catch_unwind(|| wit_encode(&bytes)).unwrap_or_else(|panic| {
        Err(format!(
            "wit-component panicked on it ({}), so it is malformed",
            super::loader::panic_text(&panic)
        ))
    });
    match encoded {
        Ok(component) => match std::io::stdout().lock().write_all(&component) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("cannot write the component: {error}");
                ExitCode::from(2)
            }
        },
        Err(reason) => {
            eprint!("{reason}");
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn garbage_is_not_wasm() {
        let error = Componentizer::InProcess.componentize(Path::new("x.wasm"), b"hello");
        assert!(matches!(error, Err(LoadError::NotWasm { .. })));
    }

    #[test]
    fn a_code_section_longer_than_the_file_is_an_error_not_a_panic() {
        // The fuzzer's find: a type, a function, then a code section claiming 100 bytes of
        // which the file holds one. wit-component sliced that section out of bounds.
        let truncated = [
            0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
            0x01, 0x04, 0x01, 0x60, 0x00, 0x00, // one type: () -> ()
            0x03, 0x02, 0x01, 0x00, // one function of that type
            0x0a, 0x64, 0x01, // a code section of 100 bytes holding one body: cut here
        ];
        let outcome = std::panic::catch_unwind(|| {
            Componentizer::InProcess.componentize(Path::new("cut.wasm"), &truncated)
        });
        let error = outcome.expect("componentize panicked").err();
        let message = error.map(|error| error.to_string()).unwrap_or_default();
        assert!(
            message.contains("cut.wasm") && message.contains("not a valid WebAssembly module"),
            "{message}"
        );
    }

    /// The load error of `(module)`, made a component in a child process of `exe`.
    fn empty_module_in(exe: PathBuf) -> String {
        let module = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
        Componentizer::Isolated { exe }
            .componentize(Path::new("m.wasm"), &module)
            .err()
            .map(|error| error.to_string())
            .unwrap_or_default()
    }

    #[test]
    fn a_child_that_is_not_the_componentizer_is_named() {
        // `true` exits 0 and prints nothing: not a component, and said so.
        let message = empty_module_in(PathBuf::from("/bin/true"));
        assert!(
            message.contains("something other than a component"),
            "{message}"
        );
    }

    #[test]
    fn a_crashed_child_costs_one_module() {
        // `sh -c 'kill -SEGV $$'` stands for a componentizer the module crashed.
        // Beside the test binary, which runs from there: a temp dir may be mounted noexec.
        let deps = std::env::current_exe().expect("test binary");
        let dir = tempfile::tempdir_in(deps.parent().expect("its folder")).expect("temp dir");
        let script = dir.path().join("crash");
        std::fs::write(&script, "#!/bin/sh\nkill -SEGV $$\n").expect("write");
        let mut permissions = std::fs::metadata(&script).expect("stat").permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
        std::fs::set_permissions(&script, permissions).expect("chmod");
        let message = empty_module_in(script);
        assert!(
            message.contains("Plugin m.wasm") && message.contains("wit-component crashed on it"),
            "{message}"
        );
    }
}
