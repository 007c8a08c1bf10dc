//! `--soak`: a long run of one server, judged by whether anything grows. Over stdio, one
//! client makes `--soak-calls` mixed calls (see [`walk`]); over HTTP, `--soak-tenants` tenants
//! make `--soak-tenant-calls` each at once, opening a fresh session and abandoning another
//! every tenth of the run. After each tenth (a decile), with every extra page closed, the
//! server's memory, descriptors and threads and the browser's processes are read; the report
//! sets the last decile against the first (the warm-up) with the goals of issue 26.

mod http;
mod process;
mod walk;

use std::path::Path;
use std::time::{Duration, Instant};

use crate::fixtures::FixtureServer;
use crate::server::{Launch, Server};
use process::Sample;
use walk::{CALLS_PER_ROUND, Walker};

/// Deciles of a run: samples and answer times are reported per tenth.
const DECILES: usize = 10;
/// Goals: growth of server memory and descriptors from the first decile to the last, and of
/// the last decile's p99 over the first's.
const FLAT_GOAL: f64 = 0.10;
const P99_GOAL: f64 = 0.20;

pub struct Options<'a> {
    pub server: &'a Path,
    pub browser_flags: Vec<String>,
    /// Calls over stdio (0: skip that part).
    pub stdio_calls: usize,
    /// Tenants over HTTP and calls each (0 tenants: skip that part).
    pub tenants: usize,
    pub tenant_calls: usize,
    pub timeout: Duration,
}

/// One decile: its samples and the answer times of its calls.
struct Decile {
    sample: Sample,
    latencies: Vec<Duration>,
}

/// A part's outcome, for the report.
struct Part {
    title: String,
    deciles: Vec<Decile>,
    wall: Duration,
    errors: usize,
    quoted_errors: Vec<String>,
    notes: Vec<String>,
}

/// Runs the parts asked for and returns the markdown report.
pub async fn bench(options: &Options<'_>, fixtures: &FixtureServer) -> Result<String, String> {
    let mut out = String::new();
    if options.stdio_calls > 0 {
        let part = stdio(options, fixtures).await?;
        out.push_str(&report(&part));
    }
    if options.tenants > 0 {
        let part = http::run(options, fixtures).await?;
        out.push_str(&report(&part));
    }
    Ok(out)
}

/// Rounds of a part per decile, at least one.
fn rounds_per_decile(calls: usize) -> usize {
    (calls / CALLS_PER_ROUND / DECILES).max(1)
}

async fn stdio(options: &Options<'_>, fixtures: &FixtureServer) -> Result<Part, String> {
    let mut args = options.browser_flags.clone();
    args.push("--no-page-id-routing".to_owned());
    let launch = Launch {
        name: "devtools-mcp".to_owned(),
        program: options.server.to_path_buf(),
        args,
    };
    let (server, _) = Server::start(&launch, options.timeout, 0).await?;
    let rounds = rounds_per_decile(options.stdio_calls);
    let mut walker = Walker::new("stdio");
    let mut deciles = Vec::new();
    let started = Instant::now();
    let outcome = async {
        for decile in 0..DECILES {
            let first_call = walker.latencies.len();
            for _ in 0..rounds {
                walker
                    .round(server.client()?, fixtures, options.timeout)
                    .await?;
            }
            // Rounds come in pairs (open a page, close it), so the walker is settled here.
            if !walker.is_settled() {
                walker
                    .round(server.client()?, fixtures, options.timeout)
                    .await?;
            }
            let sample = Sample::take(server.pid(), walker.latencies.len());
            eprintln!("soak stdio, decile {}: {}", decile + 1, line(&sample));
            deciles.push(Decile {
                sample,
                latencies: walker.latencies[first_call..].to_vec(),
            });
        }
        Ok::<(), String>(())
    }
    .await;
    let wall = started.elapsed();
    server.shutdown().await;
    outcome?;
    Ok(Part {
        title: format!(
            "stdio: one client, {} mixed calls ({} rounds of navigate, snapshot, click, fill, \
             evaluate + console.log, screenshot, console and network listings, and a page \
             opened in one round and closed in the next)",
            walker.latencies.len(),
            walker.latencies.len() / CALLS_PER_ROUND
        ),
        deciles,
        wall,
        errors: walker.errors,
        quoted_errors: walker.quoted_errors,
        notes: Vec::new(),
    })
}

fn line(sample: &Sample) -> String {
    format!(
        "{} calls, server {} MiB, {} fds, {} threads; browser {} processes ({}), {} MiB",
        sample.calls,
        mib(sample.server_rss),
        sample.descriptors,
        sample.threads,
        sample.browser_processes,
        sample.kinds,
        mib(sample.browser_pss)
    )
}

fn mib(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / (1024.0 * 1024.0))
}

fn percentile(latencies: &[Duration], percent: usize) -> Duration {
    let mut sorted = latencies.to_vec();
    sorted.sort();
    match sorted.len() {
        0 => Duration::ZERO,
        n => sorted[(n - 1) * percent / 100],
    }
}

fn ms(duration: Duration) -> String {
    format!("{:.1}", duration.as_secs_f64() * 1000.0)
}

/// Growth from `first` to `last`, as a fraction of `first`.
fn growth(first: f64, last: f64) -> f64 {
    if first == 0.0 {
        return 0.0;
    }
    (last - first) / first
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "**missed**" }
}

fn report(part: &Part) -> String {
    let calls: usize = part.deciles.iter().map(|d| d.latencies.len()).sum();
    let mut out = format!(
        "### Soak, {}\n\n{calls} calls in {:.0} s ({:.1} calls/s), {} error answers.\n\n\
         | decile | calls | p50 ms | p99 ms | server RSS MiB | descriptors | threads | \
         browser processes | browser PSS MiB |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
        part.title,
        part.wall.as_secs_f64(),
        calls as f64 / part.wall.as_secs_f64().max(0.001),
        part.errors
    );
    for (index, decile) in part.deciles.iter().enumerate() {
        let sample = &decile.sample;
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            index + 1,
            sample.calls,
            ms(percentile(&decile.latencies, 50)),
            ms(percentile(&decile.latencies, 99)),
            mib(sample.server_rss),
            sample.descriptors,
            sample.threads,
            sample.browser_processes,
            mib(sample.browser_pss)
        ));
    }
    if let (Some(first), Some(last)) = (part.deciles.first(), part.deciles.last()) {
        let (a, b) = (&first.sample, &last.sample);
        let rss = growth(a.server_rss as f64, b.server_rss as f64);
        let fds = growth(a.descriptors as f64, b.descriptors as f64);
        let p99 = growth(
            percentile(&first.latencies, 99).as_secs_f64(),
            percentile(&last.latencies, 99).as_secs_f64(),
        );
        out.push_str(&format!(
            "\nBrowser processes by kind, first decile: {}; last: {}.\n",
            a.kinds, b.kinds
        ));
        out.push_str(&format!(
            "\nGoals, last decile against the first (after warm-up):\n\
             - server RSS {:+.1}% (goal within ±10%): {}\n\
             - descriptors {:+.1}% (goal within ±10%): {}\n\
             - renderers {} -> {} with the extra pages closed (goal: back to their count; \
             all browser processes {} -> {}): {}\n\
             - p99 {:+.1}% (goal at most +20%): {}\n\
             - error answers: {} (goal: none): {}\n",
            rss * 100.0,
            verdict(rss.abs() <= FLAT_GOAL),
            fds * 100.0,
            verdict(fds.abs() <= FLAT_GOAL),
            a.renderers,
            b.renderers,
            a.browser_processes,
            b.browser_processes,
            verdict(b.renderers <= a.renderers),
            p99 * 100.0,
            verdict(p99 <= P99_GOAL),
            part.errors,
            verdict(part.errors == 0),
        ));
    }
    for note in &part.notes {
        out.push_str(&format!("- {note}\n"));
    }
    if !part.quoted_errors.is_empty() {
        out.push_str("\nFirst error answers:\n");
        for error in &part.quoted_errors {
            out.push_str(&format!("- `{error}`\n"));
        }
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growth_and_percentiles() {
        assert!((growth(100.0, 110.0) - 0.10).abs() < 1e-9);
        assert_eq!(growth(0.0, 5.0), 0.0);
        let times: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        assert_eq!(percentile(&times, 50), Duration::from_millis(50));
        assert_eq!(percentile(&times, 99), Duration::from_millis(99));
        assert_eq!(percentile(&[], 99), Duration::ZERO);
        assert_eq!(rounds_per_decile(20_000), 200);
        assert_eq!(rounds_per_decile(5), 1);
    }
}
