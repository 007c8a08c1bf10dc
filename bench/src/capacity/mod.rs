//! `--capacity`: how many agents one machine holds. N simulated agents, each a client of its
//! own running a model's loop with think time between calls (see `agent.rs`), on every
//! target at once per N, ramped N = 1, 2, 4, 8, ... A target leaves the ramp at the first N
//! whose p95 (over all its calls) is above twice its own p95 at N = 1, or that has an error;
//! its capacity is the largest N before that, and its memory per agent is read there.
//!
//! The targets take turns at each N (N = 1 for all, then N = 2 for all, ...), so a burst of
//! other work on the machine lands on every target near the same ramp step. Each target is
//! started once unmeasured first (see [`warm_up`]).

mod agent;
pub mod idle;
mod measure;
mod report;
mod targets;

use std::sync::Arc;
use std::time::{Duration, Instant};

pub use agent::Think;
pub use targets::{Target, Which, all as targets};

use agent::{Agent, AgentRun, Pages, Record, Rng};
use measure::Sample;

use crate::fixtures::FixtureServer;

/// How often the processes' memory and CPU are read during a step.
const SAMPLE_EVERY: Duration = Duration::from_secs(5);
/// The latency bound: a step's p95 may be at most this many times the p95 at N = 1.
pub const BOUND: f64 = 2.0;

pub struct Options {
    pub targets: Vec<Target>,
    /// The largest N tried.
    pub max_agents: usize,
    /// The measured window of each step (after every agent has connected and made its
    /// first, untimed, call).
    pub step: Duration,
    pub think: Think,
    pub timeout: Duration,
    /// `--capacity-idle`: measure idle agents (this long without a call) instead of the ramp.
    pub idle: Option<Duration>,
}

/// One target at one N.
pub struct Step {
    pub agents: usize,
    pub records: Vec<Record>,
    pub errors: Vec<String>,
    /// The peak of each reading over the step.
    pub peak: Sample,
    /// Average cores busy (servers and their browsers) over the window.
    pub cores: f64,
    /// Time to start the servers, connect every agent and make its first call.
    pub ready: Duration,
    /// The machine's 1-minute load average at the end of the step.
    pub load: String,
}

impl Step {
    pub fn sorted_times(&self) -> Vec<Duration> {
        let mut times: Vec<Duration> = self.records.iter().map(|r| r.took).collect();
        times.sort();
        times
    }

    pub fn p95(&self) -> Duration {
        measure::percentile(&self.sorted_times(), 95)
    }

    pub fn failed_calls(&self) -> usize {
        self.records.iter().filter(|r| r.failed).count()
    }

    pub fn has_errors(&self) -> bool {
        !self.errors.is_empty()
    }
}

/// Why a target left the ramp.
pub enum Stop {
    /// It held every N up to `--capacity-max`.
    Ceiling,
    Slower {
        agents: usize,
        ratio: f64,
    },
    Errors {
        agents: usize,
    },
    /// It could not start N agents at all.
    Start {
        agents: usize,
        error: String,
    },
}

/// A target's whole ramp.
pub struct Ramp {
    pub label: String,
    pub steps: Vec<Step>,
    pub stop: Stop,
}

impl Ramp {
    /// The largest N within the bound and without error, and its step.
    pub fn held(&self) -> Option<&Step> {
        let baseline = self.steps.first()?.p95();
        self.steps
            .iter()
            .take_while(|step| !step.has_errors() && within(step.p95(), baseline))
            .last()
    }
}

fn within(p95: Duration, baseline: Duration) -> bool {
    p95.as_secs_f64() <= baseline.as_secs_f64() * BOUND
}

/// Runs the ramp on every target and returns the markdown report.
pub async fn bench(options: &Options, fixtures: &FixtureServer) -> Result<String, String> {
    let pages = pages(fixtures);
    if let Some(idle) = options.idle {
        return idle::bench(options, &pages, idle).await;
    }
    let mut ramps: Vec<Ramp> = options
        .targets
        .iter()
        .map(|target| Ramp {
            label: target.label(),
            steps: Vec::new(),
            stop: Stop::Ceiling,
        })
        .collect();
    for target in &options.targets {
        warm_up(target, options, &pages).await;
    }
    let mut going: Vec<bool> = vec![true; ramps.len()];
    let mut agents = 1;
    while agents <= options.max_agents && going.contains(&true) {
        for (index, target) in options.targets.iter().enumerate() {
            if !going[index] {
                continue;
            }
            let ramp = &mut ramps[index];
            eprintln!("capacity: {} with {agents} agents", ramp.label);
            let step = match run_step(target, agents, options, &pages).await {
                Ok(step) => step,
                Err(error) => {
                    eprintln!("capacity: {}: {error}", ramp.label);
                    ramp.stop = Stop::Start { agents, error };
                    going[index] = false;
                    continue;
                }
            };
            let baseline = ramp.steps.first().map_or(step.p95(), Step::p95);
            eprintln!(
                "capacity: {} x {agents}: {} calls, {} errors, p95 {} ms (N=1: {} ms), {:.0} MiB PSS",
                ramp.label,
                step.records.len(),
                step.errors.len(),
                step.p95().as_millis(),
                baseline.as_millis(),
                step.peak.total_pss() as f64 / MIB
            );
            if step.has_errors() {
                ramp.stop = Stop::Errors { agents };
                going[index] = false;
            } else if !within(step.p95(), baseline) {
                let ratio = step.p95().as_secs_f64() / baseline.as_secs_f64().max(1e-9);
                ramp.stop = Stop::Slower { agents, ratio };
                going[index] = false;
            }
            ramp.steps.push(step);
        }
        agents *= 2;
    }
    Ok(report::render(options, &ramps))
}

pub const MIB: f64 = 1024.0 * 1024.0;

/// An agent of `target` on `client`, its think times drawn from `seed`.
fn new_agent(client: agent::Client, target: &Target, options: &Options, seed: u64) -> Agent {
    Agent {
        client,
        dialect: target.dialect,
        think: options.think,
        rng: Rng::new(seed),
        timeout: options.timeout,
        run: AgentRun::default(),
    }
}

fn pages(fixtures: &FixtureServer) -> Arc<Pages> {
    Arc::new(Pages {
        start: fixtures.url("/start.html"),
        form: fixtures.url("/small.html"),
    })
}

/// One agent's start and first call, not measured: the first start after a build fills
/// devtools-mcp's compiled-code cache (and the page cache for every server), which costs
/// the N = 1 step memory and time no later start pays (the main bench's `--warmup`).
pub(crate) async fn warm_up(target: &Target, options: &Options, pages: &Pages) {
    eprintln!("capacity: {} warm-up", target.label());
    match target.start(1, options.timeout).await {
        Ok(mut running) => {
            for client in std::mem::take(&mut running.clients) {
                let mut agent = new_agent(client, target, options, 0);
                if let Err(error) = agent.prepare(pages).await {
                    eprintln!("capacity: {} warm-up: {error}", target.label());
                }
                agent.client.close().await;
            }
            running.stop().await;
        }
        Err(error) => eprintln!("capacity: {} warm-up: {error}", target.label()),
    }
}

/// Starts `target` for `count` agents, lets them work for the step's window while the
/// processes are read, then stops everything.
async fn run_step(
    target: &Target,
    count: usize,
    options: &Options,
    pages: &Arc<Pages>,
) -> Result<Step, String> {
    let started = Instant::now();
    let mut running = target.start(count, options.timeout).await?;
    let pids = running.pids.clone();
    let mut tasks = Vec::new();
    for (index, client) in std::mem::take(&mut running.clients).into_iter().enumerate() {
        let mut agent = new_agent(client, target, options, (count * 1000 + index) as u64);
        let pages = pages.clone();
        tasks.push(tokio::spawn(async move {
            let prepared = agent.prepare(&pages).await;
            (agent, prepared)
        }));
    }
    let mut agents = Vec::new();
    let mut errors = Vec::new();
    for task in tasks {
        let (agent, prepared) = task
            .await
            .map_err(|e| format!("an agent's task failed: {e}"))?;
        if let Err(error) = prepared {
            errors.push(error);
        }
        agents.push(agent);
    }
    let ready = started.elapsed();

    let deadline = Instant::now() + options.step;
    let sampler = {
        let pids = pids.clone();
        tokio::task::spawn_blocking(move || {
            let mut clock = measure::CpuClock::start(&pids);
            let mut samples = Vec::new();
            loop {
                samples.push(measure::sample(&pids));
                clock.update(&pids);
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                std::thread::sleep(left.min(SAMPLE_EVERY));
            }
            (measure::peak(&samples), clock.cores())
        })
    };
    let mut tasks = Vec::new();
    for mut agent in agents {
        let pages = pages.clone();
        tasks.push(tokio::spawn(async move {
            agent.work(&pages, deadline).await;
            agent
        }));
    }
    let mut records = Vec::new();
    let mut clients = Vec::new();
    for task in tasks {
        let agent = task
            .await
            .map_err(|e| format!("an agent's task failed: {e}"))?;
        records.extend(agent.run.records);
        errors.extend(agent.run.errors);
        clients.push(agent.client);
    }
    let (peak, cores) = sampler
        .await
        .map_err(|e| format!("the sampler failed: {e}"))?;
    let load = measure::load_average();
    futures::future::join_all(clients.into_iter().map(agent::Client::close)).await;
    running.stop().await;
    Ok(Step {
        agents: count,
        records,
        errors,
        peak,
        cores,
        ready,
        load,
    })
}
