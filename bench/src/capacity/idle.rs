//! `--capacity-idle`: what an agent costs while it thinks. N agents each open the small form
//! and snapshot it once, then make no call for `--capacity-idle-secs`; the memory of the whole
//! tree is read at the end and split by process kind (the servers, Chromium's browser, GPU
//! and renderer processes, the rest), at N = 1 and at `--capacity-max`. An agent past the first
//! costs the difference divided by N - 1: what one more idle agent adds to a running machine.

use std::sync::Arc;
use std::time::Duration;

use super::agent::Pages;
use super::targets::Target;
use super::{MIB, Options, new_agent, warm_up};
use crate::server::descendants;

/// What one kind of process holds: how many, and their PSS in bytes.
#[derive(Clone, Copy, Debug, Default)]
pub struct Held {
    pub processes: usize,
    pub pss: u64,
}

/// The kinds a reading is split into, in the report's order.
pub const KINDS: [&str; 5] = ["server", "browser", "gpu", "renderers", "other"];

/// One reading of a target's tree, split by [`KINDS`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Split {
    pub kinds: [Held; 5],
}

impl Split {
    pub fn total(&self) -> u64 {
        self.kinds.iter().map(|held| held.pss).sum()
    }
}

/// Which of [`KINDS`] a process of the tree is, from its command line (Chromium rewrites its
/// title, so the flags it passes each child are what tell them apart).
fn kind_of(pid: u32, servers: &[u32]) -> usize {
    if servers.contains(&pid) {
        return 0;
    }
    let command = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let command = String::from_utf8_lossy(&command);
    if command.contains("--type=renderer") || command.contains("--renderer-client-id") {
        3
    } else if command.contains("--type=gpu-process") || command.contains("--gpu-preferences") {
        2
    } else if command.contains("--type=") || command.contains("--shared-files") {
        4
    } else if command.contains("chrom") {
        1
    } else {
        4
    }
}

fn pss(pid: u32) -> u64 {
    let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap_or_default();
    rollup
        .lines()
        .find(|line| line.starts_with("Pss:"))
        .and_then(|line| line.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |kib| kib * 1024)
}

/// Reads the servers `pids` and everything under them now.
pub fn split(pids: &[u32]) -> Split {
    let mut split = Split::default();
    let mut all = pids.to_vec();
    for &pid in pids {
        all.extend(descendants(pid));
    }
    for pid in all {
        let held = &mut split.kinds[kind_of(pid, pids)];
        held.processes += 1;
        held.pss += pss(pid);
    }
    split
}

/// One target's readings at each N.
pub struct Idle {
    pub label: String,
    pub readings: Vec<(usize, Result<Split, String>)>,
}

/// Runs the idle measure on every target and returns the markdown report.
pub async fn bench(
    options: &Options,
    pages: &Arc<Pages>,
    idle: Duration,
) -> Result<String, String> {
    let counts: Vec<usize> = if options.max_agents > 1 {
        vec![1, options.max_agents]
    } else {
        vec![1]
    };
    let mut all = Vec::new();
    for target in &options.targets {
        warm_up(target, options, pages).await;
        let mut readings = Vec::new();
        for &count in &counts {
            eprintln!("capacity-idle: {} with {count} idle agents", target.label());
            let reading = measure(target, count, options, pages, idle).await;
            if let Ok(split) = &reading {
                eprintln!(
                    "capacity-idle: {} x {count}: {:.0} MiB PSS",
                    target.label(),
                    split.total() as f64 / MIB
                );
            }
            readings.push((count, reading));
        }
        all.push(Idle {
            label: target.label(),
            readings,
        });
    }
    Ok(render(&all, idle))
}

/// Starts `count` agents, has each open the form and snapshot it, waits `idle` and reads.
async fn measure(
    target: &Target,
    count: usize,
    options: &Options,
    pages: &Arc<Pages>,
    idle: Duration,
) -> Result<Split, String> {
    let mut running = target.start(count, options.timeout).await?;
    let mut tasks = Vec::new();
    for (index, client) in std::mem::take(&mut running.clients).into_iter().enumerate() {
        let mut agent = new_agent(client, target, options, index as u64);
        let pages = pages.clone();
        tasks.push(tokio::spawn(async move {
            let opened = agent.open_form(&pages).await;
            (agent, opened)
        }));
    }
    let mut clients = Vec::new();
    let mut failed = None;
    for task in tasks {
        let (agent, opened) = task.await.map_err(|e| format!("an agent failed: {e}"))?;
        if let Err(error) = opened {
            failed.get_or_insert(error);
        }
        clients.push(agent.client);
    }
    tokio::time::sleep(idle).await;
    let pids = running.pids.clone();
    let reading = tokio::task::spawn_blocking(move || split(&pids))
        .await
        .map_err(|e| format!("the reading failed: {e}"))?;
    futures::future::join_all(clients.into_iter().map(super::agent::Client::close)).await;
    running.stop().await;
    match failed {
        Some(error) => Err(error),
        None => Ok(reading),
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.0} MiB", bytes as f64 / MIB)
}

fn render(all: &[Idle], idle: Duration) -> String {
    let mut out = format!(
        "Idle agents: each opened the small form and took a snapshot, then made no call for {} s. \
         PSS of the whole tree, split by process kind.\n\n",
        idle.as_secs()
    );
    out.push_str("| server (deployment) | N | total | per agent | ");
    out.push_str(&KINDS.join(" | "));
    out.push_str(" |\n|---|---:|---:|---:|");
    out.push_str(&"---:|".repeat(KINDS.len()));
    out.push('\n');
    for target in all {
        for (count, reading) in &target.readings {
            match reading {
                Ok(split) => {
                    let kinds: Vec<String> = split
                        .kinds
                        .iter()
                        .map(|held| format!("{} ({})", mib(held.pss), held.processes))
                        .collect();
                    out.push_str(&format!(
                        "| {} | {count} | {} | {} | {} |\n",
                        target.label,
                        mib(split.total()),
                        mib(split.total() / *count as u64),
                        kinds.join(" | ")
                    ));
                }
                Err(error) => out.push_str(&format!(
                    "| {} | {count} | failed: {error} |\n",
                    target.label
                )),
            }
        }
    }
    out.push_str("\nEach idle agent past the first (the difference between the largest N and N = 1, over N - 1):\n\n");
    out.push_str("| server (deployment) | per agent | ");
    out.push_str(&KINDS.join(" | "));
    out.push_str(" |\n|---|---:|");
    out.push_str(&"---:|".repeat(KINDS.len()));
    out.push('\n');
    for target in all {
        let (Some((1, Ok(one))), Some((many, Ok(most)))) =
            (target.readings.first(), target.readings.last())
        else {
            continue;
        };
        if *many < 2 {
            continue;
        }
        let more = (*many - 1) as f64;
        let each = |a: u64, b: u64| format!("{:.1} MiB", (b as f64 - a as f64) / more / MIB);
        let kinds: Vec<String> = one
            .kinds
            .iter()
            .zip(most.kinds.iter())
            .map(|(a, b)| each(a.pss, b.pss))
            .collect();
        out.push_str(&format!(
            "| {} | {} | {} |\n",
            target.label,
            each(one.total(), most.total()),
            kinds.join(" | ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_read_as_the_server() {
        let me = std::process::id();
        let split = split(&[me]);
        assert_eq!(split.kinds[0].processes, 1);
        assert!(split.kinds[0].pss > 0, "{split:?}");
        assert_eq!(
            split.total(),
            split.kinds[0].pss + split.kinds[1..].iter().map(|h| h.pss).sum::<u64>()
        );
    }
}
