//! `devtools-mcp-bench`: drives the real `devtools-mcp` binary over MCP stdio, and
//! chrome-devtools-mcp and Playwright MCP too when they are installed, through the same
//! scenario against fixture pages and real documentation pages on 127.0.0.1, and prints per
//! step the median, min and max over N runs.
//!
//! The servers run in turn in one session (run i of each back to back, the order reversed
//! every run) so that machine noise lands on every column alike and the ratios are measured,
//! not assembled from numbers taken on different days.

mod agent_tasks;
mod capacity;
mod compare;
mod dialect;
mod fixtures;
mod floor;
mod real_pages;
mod report;
mod scenario;
mod server;
mod soak;
mod tenants;
mod tokens;

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Parser;

use crate::dialect::Dialect;
use crate::report::{Peer, PeerKind};
use crate::scenario::Run;
use crate::server::Launch;

/// The reference package and version the numbers are compared with.
const REFERENCE_PACKAGE: &str = "chrome-devtools-mcp";
const REFERENCE_VERSION: &str = "1.11.0";
/// Its `bin` entry in package.json.
const REFERENCE_BIN: &str = "build/src/bin/chrome-devtools-mcp.js";
/// The other peer: the browser MCP server users most often pick instead.
const PLAYWRIGHT_PACKAGE: &str = "@playwright/mcp";
const PLAYWRIGHT_VERSION: &str = "0.0.83";
const PLAYWRIGHT_BIN: &str = "cli.js";

/// Benchmark devtools-mcp (and chrome-devtools-mcp, when installed) over MCP stdio.
#[derive(Parser, Debug)]
struct Args {
    /// Measured runs per server (each run is a fresh server process).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=100))]
    runs: u32,
    /// Unmeasured runs first, to warm the page cache and devtools-mcp's compiled-code cache.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(0..=10))]
    warmup: u32,
    /// The devtools-mcp binary [default: `devtools-mcp` next to this binary, rebuilt first
    /// when run through `cargo run`].
    #[arg(long)]
    server: Option<PathBuf>,
    /// A folder holding `node_modules/chrome-devtools-mcp` and `node_modules/@playwright/mcp`
    /// [default: the bench crate's folder].
    #[arg(long)]
    reference: Option<PathBuf>,
    /// Do not run the reference even if it is installed.
    #[arg(long)]
    no_reference: bool,
    /// Do not run Playwright MCP even if it is installed.
    #[arg(long)]
    no_playwright: bool,
    /// Do not snapshot the real documentation pages (rustup's rust-docs, Debian's
    /// python3.11-doc) nor print the token table.
    #[arg(long)]
    no_real_pages: bool,
    /// Do not rebuild the default server binary before measuring.
    #[arg(long)]
    no_build: bool,
    /// The Chromium both servers launch.
    #[arg(long, default_value = "/usr/bin/chromium")]
    chromium: PathBuf,
    /// Upper bound for each MCP round trip, in seconds.
    #[arg(long, default_value_t = 60)]
    timeout_secs: u64,
    /// Also write the markdown report to this file.
    #[arg(long)]
    output: Option<PathBuf>,
    /// Write each server's normalised answers (last run) to this folder, one file per step,
    /// to diff them in full, and Chromium's `getFullAXTree` reply for the 4,000-element page
    /// (from "Chromium alone") as `getFullAXTree-4000.json`.
    #[arg(long)]
    dump: Option<PathBuf>,
    /// Run the multi-tenant scenario instead: `serve --http` with this many tenants, measured
    /// against one tenant (`--runs` batches each).
    #[arg(long, value_parser = clap::value_parser!(u32).range(2..=64))]
    tenants: Option<u32>,
    /// Pause between tools/list and the first tool call (`new_page`), in milliseconds: the
    /// model's first turn. Both servers get it; a server that starts its browser when the
    /// client initializes uses it.
    #[arg(long, default_value_t = 1000)]
    think_ms: u64,
    /// Do not measure the browser alone (the scenario's browser work over Chromium's DevTools
    /// pipe, with no server: each step's floor).
    #[arg(long)]
    no_floor: bool,
    /// Calls each tenant fires at once in the multi-tenant scenario.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=1000))]
    calls_per_tenant: u32,
    /// Run the soak instead: a long run of one server over stdio and over HTTP, reporting
    /// its memory, descriptors, threads, browser processes and answer times per tenth.
    #[arg(long)]
    soak: bool,
    /// Soak: mixed calls over stdio (0 skips that part).
    #[arg(long, default_value_t = 20_000, value_parser = clap::value_parser!(u32).range(0..=1_000_000))]
    soak_calls: u32,
    /// Soak: tenants walking at once over HTTP (0 skips that part).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(0..=64))]
    soak_tenants: u32,
    /// A Chromium flag for the soak's server (repeatable), e.g.
    /// `--chrome-arg=--disable-features=AutofillServerCommunication`.
    #[arg(long)]
    chrome_arg: Vec<String>,
    /// Compare this run's step table with an earlier report (what `--output` wrote, e.g.
    /// bench/last-run.md) and list what got slower beyond the runs' noise; exit status 1 when
    /// something did.
    #[arg(long, value_name = "EARLIER_REPORT")]
    compare: Option<PathBuf>,
    /// Compare two saved reports without running anything (earlier first).
    #[arg(long, num_args = 2, value_names = ["EARLIER_REPORT", "LATER_REPORT"])]
    compare_reports: Vec<PathBuf>,
    /// Run the capacity ramp instead: N simulated agents (N = 1, 2, 4, ...) on every target,
    /// until each one's p95 passes twice its N = 1 value or an error appears.
    #[arg(long)]
    capacity: bool,
    /// Capacity: the largest N tried.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=1024))]
    capacity_max: u32,
    /// Capacity: seconds measured at each N.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(5..=3600))]
    capacity_step_secs: u64,
    /// Capacity: each agent's think time before a call, in seconds: `MIN-MAX` (uniform) or
    /// `exp:MEAN` (exponential, capped at five means).
    #[arg(long, default_value = "1-3")]
    capacity_think: capacity::Think,
    /// Capacity: measure idle agents instead of the ramp: at N = 1 and N = `--capacity-max`,
    /// each agent opens the form and snapshots it, then makes no call for this many seconds;
    /// the memory of every process is read then, split by kind.
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=3600))]
    capacity_idle: Option<u64>,
    /// Capacity: a flag for the `serve` target (repeat it for more), e.g.
    /// `--capacity-serve-arg=--discard-idle-secs=5`.
    #[arg(long, value_name = "FLAG", allow_hyphen_values = true)]
    capacity_serve_arg: Vec<String>,
    /// Capacity: which targets to run (comma-separated).
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "serve,stdio,reference,playwright"
    )]
    capacity_targets: Vec<capacity::Which>,
    /// Run the agent-task benchmark instead: five tasks a careful agent does on real
    /// documentation pages and the fixtures, with 1.11.0's tools, devtools-mcp's Beyond tools
    /// under a budget, and Playwright MCP's; tokens read and time per task.
    #[arg(long)]
    agent_tasks: bool,
    /// Agent tasks: runs of each task by each server (medians are printed).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=50))]
    agent_task_runs: u32,
    /// Soak: mixed calls per tenant over HTTP.
    #[arg(long, default_value_t = 2_000, value_parser = clap::value_parser!(u32).range(10..=100_000))]
    soak_tenant_calls: u32,
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    if let [earlier, later] = args.compare_reports.as_slice() {
        let (text, worse) = compared(earlier, &read_report(later));
        println!("{text}");
        std::process::exit(i32::from(worse));
    }
    let outcome = bench(&args).await;
    let outcome = match (outcome, &args.compare) {
        (Ok(report), Some(earlier)) => {
            let (text, worse) = compared(earlier, &report);
            if worse {
                println!("{report}\n{text}");
                std::process::exit(1);
            }
            Ok(format!("{report}\n{text}"))
        }
        (outcome, _) => outcome,
    };
    let _ = std::fs::remove_dir_all(playwright_output());
    match outcome {
        Ok(report) => {
            println!("{report}");
            if let Some(path) = &args.output
                && let Err(e) = std::fs::write(path, &report)
            {
                eprintln!("cannot write {}: {e}", path.display());
                std::process::exit(1);
            }
        }
        Err(message) => {
            eprintln!("devtools-mcp-bench: {message}");
            std::process::exit(1);
        }
    }
}

fn read_report(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|error| {
        eprintln!(
            "devtools-mcp-bench: cannot read the report {}: {error}",
            path.display()
        );
        std::process::exit(2);
    })
}

/// The regression section comparing `report` with the report saved at `earlier`, and whether
/// anything got worse.
fn compared(earlier: &Path, report: &str) -> (String, bool) {
    let (old, new) = (
        compare::Report::parse(&read_report(earlier)),
        compare::Report::parse(report),
    );
    if old.is_empty() || new.is_empty() {
        eprintln!(
            "devtools-mcp-bench: no step table to compare in {}: give a report the main bench wrote (--output)",
            if old.is_empty() {
                earlier.display().to_string()
            } else {
                "this run".to_owned()
            }
        );
        std::process::exit(2);
    }
    let (found, summary) = compare::regressions(&old, &new);
    let mut text = format!("### Compared with {}\n\n{summary}\n", earlier.display());
    for line in &found {
        text.push_str(line);
        text.push('\n');
    }
    (text, !found.is_empty())
}

async fn bench(args: &Args) -> Result<String, String> {
    if args.capacity || args.capacity_idle.is_some() {
        return capacity_bench(args).await;
    }
    if args.agent_tasks {
        return agent_tasks_bench(args).await;
    }
    if args.soak {
        let server = our_server(args)?;
        let fixtures = fixtures::FixtureServer::start()
            .map_err(|e| format!("cannot start the fixture server: {e}"))?;
        let mut flags = browser_flags(&args.chromium);
        flags.extend(
            args.chrome_arg
                .iter()
                .map(|arg| format!("--chromeArg={arg}")),
        );
        let options = soak::Options {
            server: &server,
            browser_flags: flags,
            stdio_calls: args.soak_calls as usize,
            tenants: args.soak_tenants as usize,
            tenant_calls: args.soak_tenant_calls as usize,
            timeout: Duration::from_secs(args.timeout_secs),
        };
        let report = soak::bench(&options, &fixtures).await?;
        return Ok(format!(
            "Machine: {}. Server: `{}`.\n\n{report}",
            machine(),
            server.display()
        ));
    }
    if let Some(tenants) = args.tenants {
        let server = our_server(args)?;
        let fixtures = fixtures::FixtureServer::start()
            .map_err(|e| format!("cannot start the fixture server: {e}"))?;
        let options = tenants::Options {
            server: &server,
            browser_flags: browser_flags(&args.chromium),
            tenants: tenants as usize,
            calls: args.calls_per_tenant as usize,
            runs: args.runs,
            timeout: Duration::from_secs(args.timeout_secs),
        };
        let report = tenants::bench(&options, &fixtures).await?;
        return Ok(format!("Machine: {}.\n\n{report}", machine()));
    }
    // Both servers default to page-id routing (1.11.0's default); the steps call without a
    // `pageId`, so both run with routing off.
    let mut our_args = browser_flags(&args.chromium);
    our_args.push("--no-page-id-routing".to_owned());
    let ours = Launch {
        name: "devtools-mcp".to_owned(),
        program: our_server(args)?,
        args: our_args,
    };
    let mut launches = vec![(ours, Dialect::DevTools)];
    let mut kinds = Vec::new();
    if let Some(reference) = reference_server(args)? {
        launches.push((reference, Dialect::DevTools));
        kinds.push(PeerKind::Reference);
    }
    if let Some(playwright) = playwright_server(args)? {
        launches.push((playwright, Dialect::Playwright));
        kinds.push(PeerKind::Playwright);
    }
    let (mounts, missing) = if args.no_real_pages {
        (Vec::new(), Vec::new())
    } else {
        real_pages::mounts()
    };
    for line in &missing {
        eprintln!("note: {line}");
    }
    let real = real_pages::available(&mounts);
    let real_labels: Vec<&str> = real.iter().map(|page| page.label).collect();
    let fixtures = fixtures::FixtureServer::start_with(mounts)
        .map_err(|e| format!("cannot start the fixture server: {e}"))?;
    let timeout = Duration::from_secs(args.timeout_secs);
    let mut runs: Vec<Vec<Run>> = launches.iter().map(|_| Vec::new()).collect();
    let mut floors = Vec::new();

    let total = args.warmup + args.runs;
    for index in 0..total {
        let warmup = index < args.warmup;
        // Reverse the order every run, so no server always follows the same one.
        let mut order: Vec<usize> = (0..launches.len()).collect();
        if index % 2 == 1 {
            order.reverse();
        }
        for which in order {
            let (launch, dialect) = &launches[which];
            let think = Duration::from_millis(args.think_ms);
            let run = scenario::run(
                launch,
                *dialect,
                &fixtures,
                timeout,
                index as usize,
                think,
                &real,
            )
            .await
            .map_err(|e| format!("{} run {}: {e}", launch.name, index + 1))?;
            let kind = if warmup { "warm-up" } else { "run" };
            eprintln!(
                "{:>14} {kind} {}/{total}: {}",
                launch.name,
                index + 1,
                report::one_line(&run)
            );
            if !warmup {
                runs[which].push(run);
            }
        }
        if !args.no_floor {
            let floor = run_floor(args, &fixtures, timeout, &real).await?;
            let kind = if warmup { "warm-up" } else { "run" };
            eprintln!(
                "{:>14} {kind} {}/{total}: {}",
                "Chromium alone",
                index + 1,
                report::floor_line(&floor)
            );
            if !warmup {
                floors.push(floor);
            }
        }
    }
    let tokens = if real.is_empty() {
        None
    } else {
        Some(token_table(&launches, &fixtures, &real, timeout).await?)
    };

    if let Some(dir) = &args.dump {
        let plain: Vec<Launch> = launches.iter().map(|(l, _)| l.clone()).collect();
        dump(dir, &plain, &runs)?;
        if let Some(tree) = floors.last().and_then(|floor| floor.big_tree.as_deref()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            let path = dir.join("getFullAXTree-4000.json");
            std::fs::write(&path, tree)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
    }
    let mut out = format!(
        "Machine: {}. Server: `{}`.\n\
         Scenario: {} measured runs per server after {} warm-up, each a fresh server process; \
         times are MCP round trips seen by the client; {} ms between tools/list and the first \
         call. Load average at the end: {}.\n\n",
        machine(),
        launches[0].0.program.display(),
        args.runs,
        args.warmup,
        args.think_ms,
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    for line in &missing {
        out.push_str(&format!("Note: {line}.\n\n"));
    }
    let ours = (launches[0].0.name.as_str(), runs[0].as_slice());
    let peers: Vec<Peer> = kinds
        .iter()
        .enumerate()
        .map(|(at, kind)| Peer {
            name: &launches[at + 1].0.name,
            runs: &runs[at + 1],
            kind: *kind,
        })
        .collect();
    let reference = peers
        .iter()
        .find(|p| p.kind == PeerKind::Reference)
        .map(|p| (p.name, p.runs));
    out.push_str(&report::table(ours, &peers, &real_labels));
    out.push_str(
        "\nServer CPU time per step (all threads of the server process, the browser excluded):\n\n",
    );
    out.push_str(&report::cpu_table(ours, &peers));
    out.push_str("\nText each answer puts into the agent's context, in bytes (last run):\n\n");
    out.push_str(&report::bytes_table(ours, &peers, &real_labels));
    if let Some(tokens) = &tokens {
        out.push_str(TOKENS_HEADING);
        out.push_str(tokens);
    }
    if !floors.is_empty() {
        out.push_str(FLOOR_HEADING);
        out.push_str(&report::floor_table(&floors, &peers, &real_labels));
    }
    if let (Some(mine), Some((name, theirs))) = (runs[0].last(), reference)
        && let Some(last) = theirs.last()
    {
        out.push_str("\nSame call, same page: the answers' text after normalising uids and ports (last run):\n\n");
        out.push_str(&report::comparison((ours.0, mine), (name, last)));
    }
    let mut surprises = report::surprises(ours.0, ours.1);
    for peer in &peers {
        surprises.push_str(&report::surprises(peer.name, peer.runs));
    }
    if !surprises.is_empty() {
        out.push_str("\nAnswers the scenario did not expect:\n\n");
        out.push_str(&surprises);
    }
    Ok(out)
}

/// `--capacity`: the targets from what is installed, then the ramp.
async fn capacity_bench(args: &Args) -> Result<String, String> {
    let ours = our_server(args)?;
    let targets = capacity::targets(
        &args.capacity_targets,
        ours.clone(),
        browser_flags(&args.chromium),
        reference_server(args)?,
        playwright_server(args)?,
        &args.capacity_serve_arg,
    );
    let fixtures = fixtures::FixtureServer::start()
        .map_err(|e| format!("cannot start the fixture server: {e}"))?;
    let options = capacity::Options {
        targets,
        max_agents: args.capacity_max as usize,
        step: Duration::from_secs(args.capacity_step_secs),
        think: args.capacity_think,
        timeout: Duration::from_secs(args.timeout_secs),
        idle: args.capacity_idle.map(Duration::from_secs),
    };
    let report = capacity::bench(&options, &fixtures).await?;
    Ok(format!(
        "Machine: {}. Server: `{}`.\n\n{report}",
        machine(),
        ours.display()
    ))
}

/// `--agent-tasks`: 1.11.0, devtools-mcp with 1.11.0's tools and with its Beyond tools, and
/// Playwright MCP, where installed; the Rust documentation is required (its pages are four of
/// the five tasks).
async fn agent_tasks_bench(args: &Args) -> Result<String, String> {
    let ours = Launch {
        name: "devtools-mcp".to_owned(),
        program: our_server(args)?,
        args: {
            let mut flags = browser_flags(&args.chromium);
            flags.push("--no-page-id-routing".to_owned());
            flags
        },
    };
    let mut beyond = ours.clone();
    beyond.args.extend(
        agent_tasks::BEYOND_FLAGS
            .iter()
            .map(|flag| flag.to_string()),
    );
    let mut columns = Vec::new();
    if let Some(reference) = reference_server(args)? {
        columns.push((reference, agent_tasks::Style::Defaults));
    }
    columns.push((ours, agent_tasks::Style::Defaults));
    columns.push((beyond, agent_tasks::Style::Beyond));
    if let Some(playwright) = playwright_server(args)? {
        columns.push((playwright, agent_tasks::Style::Playwright));
    }
    let (mounts, missing) = real_pages::mounts();
    let Some((rust_mount, _)) = mounts
        .iter()
        .find(|(mount, _)| mount.contains("rust"))
        .cloned()
    else {
        return Err(format!(
            "the agent tasks need Rust's documentation: {}",
            missing.join("; ")
        ));
    };
    let fixtures = fixtures::FixtureServer::start_with(mounts)
        .map_err(|e| format!("cannot start the fixture server: {e}"))?;
    let urls = agent_tasks::Urls::new(&fixtures, &rust_mount);
    let table = agent_tasks::table(
        &columns,
        &urls,
        &fixtures.url("/start.html"),
        args.agent_task_runs,
        Duration::from_secs(args.timeout_secs),
    )
    .await?;
    Ok(format!(
        "Machine: {}. {}\n\n{table}",
        machine(),
        agent_tasks::note()
    ))
}

const TOKENS_HEADING: &str = "\nWhat reading a real page costs the agent, in bytes of answer \
    text: the full snapshot, the snapshot of the page's main region (the first element with \
    role `main`: devtools-mcp's `take_snapshot {uid}` under `--experimentalScopedSnapshots`, \
    Playwright MCP's `browser_snapshot {target}`) and finding one element by its text \
    (`find_in_page`, `browser_find`); chrome-devtools-mcp 1.11.0 has neither:\n\n";

/// The token table: one more fresh server each, devtools-mcp with scoped snapshots on.
async fn token_table(
    launches: &[(Launch, Dialect)],
    fixtures: &fixtures::FixtureServer,
    real: &[&real_pages::RealPage],
    timeout: Duration,
) -> Result<String, String> {
    let with_scope: Vec<(Launch, Dialect, bool)> = launches
        .iter()
        .enumerate()
        .map(|(at, (launch, dialect))| {
            let mut launch = launch.clone();
            let scoped = match (at, dialect) {
                (0, _) => {
                    launch.args.push("--experimentalScopedSnapshots".to_owned());
                    true
                }
                (_, Dialect::Playwright) => true,
                (_, Dialect::DevTools) => false,
            };
            (launch, *dialect, scoped)
        })
        .collect();
    tokens::table(&with_scope, fixtures, real, timeout).await
}

const FLOOR_HEADING: &str = "\nThe browser alone: each step's browser work sent straight to \
    Chromium over its DevTools pipe, no MCP server in between (see `bench/src/floor.rs`). No \
    server can be faster than this, so where `Chromium alone / reference` is above the goal, \
    the goal is below Chromium's own time:\n\n";

/// One run of the floor scenario, on a blocking thread (it drives the pipe synchronously).
async fn run_floor(
    args: &Args,
    fixtures: &fixtures::FixtureServer,
    timeout: Duration,
    real: &[&real_pages::RealPage],
) -> Result<floor::Floor, String> {
    let real_paths: Vec<String> = real
        .iter()
        .map(|page| format!("{}{}", page.mount, page.path))
        .collect();
    let chromium = args.chromium.clone();
    let think = Duration::from_millis(args.think_ms);
    let base = format!("http://127.0.0.1:{}", fixtures.port());
    let keep_big_tree = args.dump.is_some();
    tokio::task::spawn_blocking(move || {
        floor::run(&chromium, &base, think, timeout, keep_big_tree, &real_paths)
    })
    .await
    .map_err(|e| format!("the floor run panicked: {e}"))?
    .map_err(|e| format!("Chromium alone: {e}"))
}

/// Cores, CPU model and memory, from `/proc`, so a pasted table says where it was measured.
fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name")?.split(':').nth(1))
        .map_or("unknown CPU", str::trim);
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let kib: u64 = meminfo
        .lines()
        .find_map(|l| {
            l.strip_prefix("MemTotal:")?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or(0);
    format!(
        "{cores} cores ({model}), {:.1} GiB",
        kib as f64 / (1024.0 * 1024.0)
    )
}

/// Writes `<dir>/<server>/<step>.txt` for the last run of each server.
fn dump(dir: &Path, launches: &[Launch], runs: &[Vec<Run>]) -> Result<(), String> {
    for (launch, runs) in launches.iter().zip(runs) {
        let Some(run) = runs.last() else { continue };
        let folder = dir.join(launch.name.replace(' ', "-"));
        std::fs::create_dir_all(&folder)
            .map_err(|e| format!("cannot create {}: {e}", folder.display()))?;
        for (step, text) in scenario::STEPS.iter().zip(&run.texts) {
            let name: String = step
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect();
            let path = folder.join(format!("{name}.txt"));
            std::fs::write(&path, text)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
    }
    Ok(())
}

/// The flags both servers get: the reference's documented way to run headless as root.
fn browser_flags(chromium: &Path) -> Vec<String> {
    vec![
        "--executablePath".to_owned(),
        chromium.display().to_string(),
        "--headless".to_owned(),
        "--isolated".to_owned(),
        "--chromeArg=--no-sandbox".to_owned(),
        "--no-usage-statistics".to_owned(),
    ]
}

/// `--server`, else `devtools-mcp` in this binary's own target directory. Under `cargo run`
/// (which sets `$CARGO`) that binary is rebuilt in the same profile first, so the one command
/// never measures a stale server.
fn our_server(args: &Args) -> Result<PathBuf, String> {
    if let Some(path) = &args.server {
        return Ok(path.clone());
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?;
    let dir = exe.parent().ok_or("this binary has no parent folder")?;
    let server = dir.join("devtools-mcp");
    if let (false, Some(cargo)) = (args.no_build, std::env::var_os("CARGO")) {
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut build = std::process::Command::new(cargo);
        build
            .current_dir(&workspace)
            .args(["build", "-p", "devtools-mcp"]);
        if dir.ends_with("release") {
            build.arg("--release");
        }
        eprintln!("building the server: {build:?}");
        let status = build
            .status()
            .map_err(|e| format!("cannot run cargo: {e}"))?;
        if !status.success() {
            return Err(format!("building the server failed: {status}"));
        }
    }
    if !server.is_file() {
        return Err(format!(
            "{} does not exist: build it with `cargo build`, or pass --server",
            server.display()
        ));
    }
    Ok(server)
}

/// Playwright MCP from the bench folder's `node_modules`, run by `node` directly (its pid is
/// the server's own), headless in a temporary profile with the same Chromium, as its README
/// says to run it, writing its files to a temporary folder.
fn playwright_server(args: &Args) -> Result<Option<Launch>, String> {
    if args.no_playwright {
        return Ok(None);
    }
    let package = peer_package(args, PLAYWRIGHT_PACKAGE);
    let script = package.join(PLAYWRIGHT_BIN);
    if !script.is_file() {
        eprintln!(
            "{PLAYWRIGHT_PACKAGE} is not installed (`npm install --prefix bench`): \
             measuring without it"
        );
        return Ok(None);
    }
    let version = installed_version(&package);
    if version != PLAYWRIGHT_VERSION {
        eprintln!(
            "note: {PLAYWRIGHT_PACKAGE} {version} installed, the numbers quoted are for {PLAYWRIGHT_VERSION}"
        );
    }
    let output = playwright_output();
    Ok(Some(Launch {
        name: format!("Playwright MCP {version}"),
        program: PathBuf::from("node"),
        args: vec![
            script.display().to_string(),
            "--headless".to_owned(),
            "--isolated".to_owned(),
            // Root cannot run Chromium's sandbox; the other two servers get `--no-sandbox` too.
            "--no-sandbox".to_owned(),
            "--executable-path".to_owned(),
            args.chromium.display().to_string(),
            "--output-dir".to_owned(),
            output.display().to_string(),
        ],
    }))
}

/// Where Playwright MCP writes its snapshots and screenshots; removed when the bench ends.
fn playwright_output() -> PathBuf {
    std::env::temp_dir().join(format!(
        "devtools-mcp-bench-{}-playwright",
        std::process::id()
    ))
}

/// A peer's npm package folder: `node_modules/<name>` under `--reference`, else the bench's.
fn peer_package(args: &Args, name: &str) -> PathBuf {
    let dir = args
        .reference
        .clone()
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    dir.join("node_modules").join(name)
}

/// `version` of an installed package's package.json.
fn installed_version(package: &Path) -> String {
    let manifest = std::fs::read_to_string(package.join("package.json")).unwrap_or_default();
    serde_json::from_str::<serde_json::Value>(&manifest)
        .ok()
        .and_then(|v| v["version"].as_str().map(str::to_owned))
        .unwrap_or_else(|| "unknown".to_owned())
}

/// chrome-devtools-mcp under `--reference` (or the bench folder), run by `node` directly so
/// that the pid we read VmHWM from is the server's own.
fn reference_server(args: &Args) -> Result<Option<Launch>, String> {
    if args.no_reference {
        return Ok(None);
    }
    let package = peer_package(args, REFERENCE_PACKAGE);
    let script = package.join(REFERENCE_BIN);
    if !script.is_file() {
        if args.reference.is_some() {
            return Err(format!("{} does not exist", script.display()));
        }
        eprintln!(
            "{REFERENCE_PACKAGE} is not installed (`npm install --prefix bench`): \
             measuring devtools-mcp alone"
        );
        return Ok(None);
    }
    let version = installed_version(&package);
    if version != REFERENCE_VERSION {
        eprintln!(
            "note: {REFERENCE_PACKAGE} {version} installed, the numbers quoted are for {REFERENCE_VERSION}"
        );
    }
    let mut launch_args = vec![script.display().to_string()];
    launch_args.extend(browser_flags(&args.chromium));
    // 1.11.0 requires a `pageId` on every page-scoped tool by default, as devtools-mcp does
    // now. Same calls for both: routing off.
    launch_args.push("--no-page-id-routing".to_owned());
    Ok(Some(Launch {
        name: format!("{REFERENCE_PACKAGE} {version}"),
        program: PathBuf::from("node"),
        args: launch_args,
    }))
}
