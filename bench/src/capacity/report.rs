//! The capacity report: agents held per target side by side, then every step with its
//! latency, memory and CPU, then the per-call percentiles, then the errors seen.

use std::collections::BTreeSet;
use std::fmt::Write;
use std::time::Duration;

use super::agent::{Kind, Think};
use super::measure::percentile;
use super::{BOUND, MIB, Options, Ramp, Step, Stop};

pub fn render(options: &Options, ramps: &[Ramp]) -> String {
    let think = match options.think {
        Think::Uniform { min, max } => format!(
            "uniform {:.1}-{:.1} s",
            min.as_secs_f64(),
            max.as_secs_f64()
        ),
        Think::Exponential { mean } => format!("exponential, mean {:.1} s", mean.as_secs_f64()),
    };
    let mut out = format!(
        "Capacity: N agents, each its own MCP client, looping navigate, take_snapshot, click or \
         fill, evaluate_script, take_screenshot every third round and list_pages on the fixture \
         form, thinking {think} before every call; N = 1, 2, 4, ... up to {}, {} s measured per \
         step after every agent's first (untimed) call. A target stops at the first N whose p95 \
         over all its calls exceeds {BOUND}x its p95 at N = 1, or that has an error. Memory is \
         the peak over the step: the servers' PSS plus the PSS of every process under them (the \
         browsers).\n\n",
        options.max_agents,
        options.step.as_secs()
    );
    out.push_str(
        "| server (deployment) | agents held | stopped | memory per agent at that N | each agent past the first | servers' RSS at that N |\n\
         |---|---:|---|---:|---:|---:|\n",
    );
    for ramp in ramps {
        let first = ramp.steps.first().map_or(0, |step| step.peak.total_pss());
        let (held, memory, marginal, rss) = match ramp.held() {
            Some(step) => (
                step.agents.to_string(),
                format!(
                    "{:.0} MiB",
                    step.peak.total_pss() as f64 / MIB / step.agents as f64
                ),
                marginal_text(step, first),
                format!("{:.0} MiB", step.peak.server_rss as f64 / MIB),
            ),
            None => (
                "0".to_owned(),
                "-".to_owned(),
                "-".to_owned(),
                "-".to_owned(),
            ),
        };
        let _ = writeln!(
            out,
            "| {} | {held} | {} | {memory} | {marginal} | {rss} |",
            ramp.label,
            stop_text(&ramp.stop)
        );
    }

    out.push_str(
        "\nEvery step (latency over all calls of all agents; CPU: cores busy, servers and \
         browsers together, over the window):\n\n\
         | server (deployment) | N | calls | failed | p50 / p95 / p99 ms | p95 vs N=1 | servers' RSS | server PSS | browser PSS (processes) | PSS per agent | CPU | ready in | load |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for ramp in ramps {
        let baseline = ramp.steps.first().map(Step::p95);
        for step in &ramp.steps {
            let times = step.sorted_times();
            let ratio = baseline.map_or(0.0, |base| {
                step.p95().as_secs_f64() / base.as_secs_f64().max(1e-9)
            });
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {ratio:.2}x | {:.0} MiB | {:.0} MiB | {:.0} MiB ({}) | {:.0} MiB | {:.2} | {:.1} s | {} |",
                ramp.label,
                step.agents,
                step.records.len(),
                step.failed_calls(),
                triple(&times),
                step.peak.server_rss as f64 / MIB,
                step.peak.server_pss as f64 / MIB,
                step.peak.browser_pss as f64 / MIB,
                step.peak.browser_processes,
                step.peak.total_pss() as f64 / MIB / step.agents as f64,
                step.cores,
                step.ready.as_secs_f64(),
                step.load,
            );
        }
    }

    out.push_str("\nEach call, p50 / p95 / p99 in ms:\n\n| server (deployment) | N |");
    for kind in Kind::ALL {
        let _ = write!(out, " {} |", kind.label());
    }
    out.push_str("\n|---|---:|");
    for _ in Kind::ALL {
        out.push_str("---:|");
    }
    out.push('\n');
    for ramp in ramps {
        for step in &ramp.steps {
            let _ = write!(out, "| {} | {} |", ramp.label, step.agents);
            for kind in Kind::ALL {
                let mut times: Vec<Duration> = step
                    .records
                    .iter()
                    .filter(|r| r.kind == kind)
                    .map(|r| r.took)
                    .collect();
                times.sort();
                let cell = if times.is_empty() {
                    "-".to_owned()
                } else {
                    format!("{} ({})", triple(&times), times.len())
                };
                let _ = write!(out, " {cell} |");
            }
            out.push('\n');
        }
    }

    let mut errors = String::new();
    for ramp in ramps {
        for step in &ramp.steps {
            let distinct: BTreeSet<&str> = step.errors.iter().map(String::as_str).collect();
            for error in distinct.iter().take(5) {
                let short: String = error.chars().take(200).collect();
                let _ = writeln!(errors, "- {} x {}: {short}", ramp.label, step.agents);
            }
        }
        if let Stop::Start { agents, error } = &ramp.stop {
            let short: String = error.chars().take(300).collect();
            let _ = writeln!(
                errors,
                "- {} x {agents}: could not start: {short}",
                ramp.label
            );
        }
    }
    if !errors.is_empty() {
        out.push_str("\nErrors (distinct, at most five per step):\n\n");
        out.push_str(&errors);
    }
    out
}

/// What each agent past the first adds: (PSS at N - PSS at 1) / (N - 1), the slope an
/// operator multiplies by the agents a machine is to hold.
fn marginal_text(step: &Step, first: u64) -> String {
    if step.agents < 2 {
        return "-".to_owned();
    }
    let added = step.peak.total_pss().saturating_sub(first) as f64;
    format!("{:.0} MiB", added / MIB / (step.agents - 1) as f64)
}

fn stop_text(stop: &Stop) -> String {
    match stop {
        Stop::Ceiling => "never (reached --capacity-max)".to_owned(),
        Stop::Slower { agents, ratio } => format!("at {agents}: p95 {ratio:.1}x of N=1"),
        Stop::Errors { agents } => format!("at {agents}: errors"),
        Stop::Start { agents, .. } => format!("at {agents}: could not start"),
    }
}

/// `p50 / p95 / p99` in ms of sorted times.
fn triple(sorted: &[Duration]) -> String {
    format!(
        "{} / {} / {}",
        percentile(sorted, 50).as_millis(),
        percentile(sorted, 95).as_millis(),
        percentile(sorted, 99).as_millis()
    )
}
