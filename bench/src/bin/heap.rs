//! Loading and summarising a large heap snapshot: devtools-mcp against chrome-devtools-mcp
//! 1.11.0, side by side, on the same file.
//!
//! A fixture page (served here on 127.0.0.1) allocates a few hundred thousand objects; our
//! server snapshots it with `take_heapsnapshot`. Then, for each run and each server, a fresh
//! server process answers `get_heapsnapshot_summary` on that file (the first call parses and
//! analyses it); we time the call and read the process's peak resident set (`VmHWM`).
//!
//! `cargo run --release -p devtools-mcp-bench --bin heap -- --runs 3`

#[path = "../server.rs"]
#[allow(dead_code)]
mod server;

use clap::Parser;
use server::{Launch, Server};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Parser)]
struct Args {
    /// Measured runs per server.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Objects the fixture page allocates (about 150 bytes of snapshot each).
    #[arg(long, default_value_t = 400_000)]
    objects: usize,
    /// Use this snapshot instead of taking one.
    #[arg(long)]
    snapshot: Option<PathBuf>,
    /// The devtools-mcp binary [default: next to this one].
    #[arg(long)]
    server: Option<PathBuf>,
    /// A folder holding `node_modules/chrome-devtools-mcp` [default: the bench folder].
    #[arg(long)]
    reference: Option<PathBuf>,
    #[arg(long, default_value = "/usr/bin/chromium")]
    chromium: PathBuf,
}

/// Serves the allocating page forever on a loopback port (the thread ends with the process).
fn serve(objects: usize) -> std::io::Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let port = listener.local_addr()?.port();
    let page = format!(
        "<!doctype html><title>Allocations</title><body><div id=list></div><script>\n\
         class Item {{ constructor(i) {{ this.id = i; this.label = 'item-' + i; this.tags = [i % 7, i % 11]; this.parent = null; }} }}\n\
         window.items = [];\n\
         for (let i = 0; i < {objects}; i++) {{ const item = new Item(i); if (i > 0) item.parent = window.items[i - 1]; window.items.push(item); }}\n\
         const list = document.getElementById('list');\n\
         for (let i = 0; i < 2000; i++) {{ const li = document.createElement('li'); li.textContent = 'row ' + i; list.appendChild(li); }}\n\
         </script></body>"
    );
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let mut head = [0u8; 4096];
            let _ = stream.read(&mut head);
            let response = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
                page.len()
            );
            let _ = stream.write_all(response.as_bytes());
        }
    });
    Ok(port)
}

fn browser_flags(chromium: &Path) -> Vec<String> {
    vec![
        "--executablePath".into(),
        chromium.display().to_string(),
        "--headless".into(),
        "--isolated".into(),
        "--chromeArg=--no-sandbox".into(),
        "--no-usage-statistics".into(),
        "--memoryDebugging".into(),
    ]
}

fn our_server(args: &Args) -> Result<PathBuf, String> {
    if let Some(path) = &args.server {
        return Ok(path.clone());
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let server = exe.with_file_name("devtools-mcp");
    if !server.is_file() {
        return Err(format!(
            "{} does not exist: build it first (`cargo build --release -p devtools-mcp`) or pass --server",
            server.display()
        ));
    }
    Ok(server)
}

/// Adds the selected page's id when the server requires `pageId` (page-id routing).
async fn page_args(
    server: &mut Server,
    tool: &str,
    mut arguments: serde_json::Value,
) -> Result<serde_json::Value, String> {
    let (tools, _) = server.list_tools().await?;
    let routed = tools.iter().any(|t| {
        t.name == tool
            && t.input_schema
                .get("properties")
                .and_then(|p| p.get("pageId"))
                .is_some()
    });
    if routed {
        let (pages, _) = server.call("list_pages", serde_json::json!({})).await?;
        let id = pages
            .text
            .lines()
            .find(|line| line.ends_with("[selected]"))
            .and_then(|line| line.split(':').next()?.trim().parse::<u64>().ok())
            .ok_or_else(|| format!("no selected page in {}", pages.text))?;
        arguments["pageId"] = serde_json::json!(id);
    }
    Ok(arguments)
}

async fn take_snapshot(args: &Args, ours: &Launch, folder: &Path) -> Result<PathBuf, String> {
    let port = serve(args.objects).map_err(|e| e.to_string())?;
    let (mut server, _) = Server::start(ours, Duration::from_secs(300), 0).await?;
    let url = format!("http://127.0.0.1:{port}/");
    let (opened, _) = server
        .call("new_page", serde_json::json!({ "url": url }))
        .await?;
    if opened.is_error {
        return Err(format!("new_page failed: {}", opened.text));
    }
    let file = folder.join("large.heapsnapshot");
    let arguments = page_args(
        &mut server,
        "take_heapsnapshot",
        serde_json::json!({ "filePath": file }),
    )
    .await?;
    let (taken, elapsed) = server.call("take_heapsnapshot", arguments).await?;
    if taken.is_error {
        return Err(format!("take_heapsnapshot failed: {}", taken.text));
    }
    eprintln!("{} ({:.1} s)", taken.text, elapsed.as_secs_f64());
    server.shutdown().await;
    Ok(file)
}

/// (time of the first summary call, time of a second one, peak RSS) for one fresh server.
async fn measure(
    launch: &Launch,
    file: &Path,
    run: usize,
) -> Result<(Duration, Duration, u64), String> {
    let (mut server, _) = Server::start(launch, Duration::from_secs(600), run).await?;
    let arguments = serde_json::json!({ "filePath": file });
    let (first, load) = server
        .call("get_heapsnapshot_summary", arguments.clone())
        .await?;
    if first.is_error || !first.text.contains("### Native Contexts") {
        return Err(format!("{} answered: {}", launch.name, first.text));
    }
    let (_, again) = server.call("get_heapsnapshot_summary", arguments).await?;
    let peak = server.peak_rss().unwrap_or(0);
    server.shutdown().await;
    Ok((load, again, peak))
}

fn median<T: Copy + Ord>(values: &mut [T]) -> T {
    values.sort();
    values[values.len() / 2]
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    if let Err(error) = run(&args).await {
        eprintln!("heap bench failed: {error}");
        std::process::exit(1);
    }
}

async fn run(args: &Args) -> Result<(), String> {
    let folder = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut our_args = browser_flags(&args.chromium);
    our_args.extend([
        "--workspace".to_string(),
        folder.path().display().to_string(),
    ]);
    let ours = Launch {
        name: "devtools-mcp".into(),
        program: our_server(args)?,
        args: our_args,
    };
    let file = match &args.snapshot {
        Some(file) => file.clone(),
        None => take_snapshot(args, &ours, folder.path()).await?,
    };
    let size = std::fs::metadata(&file).map_err(|e| e.to_string())?.len();
    let mut launches = vec![ours];
    let package = args
        .reference
        .clone()
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
        .join("node_modules/chrome-devtools-mcp");
    let script = package.join("build/src/bin/chrome-devtools-mcp.js");
    if script.is_file() {
        // Its heap worker needs `Promise.withResolvers` (Node 22); older Node gets a preload.
        let preload = folder.path().join("with-resolvers.mjs");
        std::fs::write(
            &preload,
            "if (typeof Promise.withResolvers !== 'function') { Promise.withResolvers = function () { \
             let resolve, reject; const promise = new this((a, b) => { resolve = a; reject = b; }); \
             return { promise, resolve, reject }; }; }\n",
        )
        .map_err(|e| e.to_string())?;
        let mut reference_args = vec![
            format!("--import={}", preload.display()),
            script.display().to_string(),
        ];
        reference_args.extend(browser_flags(&args.chromium));
        launches.push(Launch {
            name: "chrome-devtools-mcp 1.11.0".into(),
            program: PathBuf::from("node"),
            args: reference_args,
        });
    } else {
        eprintln!(
            "chrome-devtools-mcp is not installed (`npm install --prefix bench`): measuring devtools-mcp alone"
        );
    }
    let mut results = Vec::new();
    for launch in &launches {
        let mut loads = Vec::new();
        let mut agains = Vec::new();
        let mut peaks = Vec::new();
        for run in 0..args.runs {
            let (load, again, peak) = measure(launch, &file, run).await?;
            eprintln!(
                "{} run {}: load+summary {:.0} ms, cached summary {:.1} ms, peak RSS {:.0} MiB",
                launch.name,
                run + 1,
                load.as_secs_f64() * 1000.0,
                again.as_secs_f64() * 1000.0,
                peak as f64 / 1048576.0
            );
            loads.push(load);
            agains.push(again);
            peaks.push(peak);
        }
        results.push((
            launch.name.clone(),
            median(&mut loads),
            median(&mut agains),
            median(&mut peaks),
        ));
    }
    println!(
        "Heap snapshot: {:.1} MB ({} objects allocated by the page), {} runs per server, medians\n",
        size as f64 / 1e6,
        args.objects,
        args.runs
    );
    println!(
        "| server | load + get_heapsnapshot_summary | cached summary | peak RSS (server process) |"
    );
    println!("|---|---:|---:|---:|");
    for (name, load, again, peak) in &results {
        println!(
            "| {name} | {:.0} ms | {:.1} ms | {:.0} MiB |",
            load.as_secs_f64() * 1000.0,
            again.as_secs_f64() * 1000.0,
            *peak as f64 / 1048576.0
        );
    }
    if let [(_, our_load, _, our_peak), (_, their_load, _, their_peak)] = results.as_slice() {
        println!(
            "\nRatio: {:.1}x faster, {:.2}x the reference's peak memory",
            their_load.as_secs_f64() / our_load.as_secs_f64(),
            *our_peak as f64 / *their_peak as f64
        );
    }
    Ok(())
}
