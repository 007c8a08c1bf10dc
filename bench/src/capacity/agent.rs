//! One simulated agent: a client of its own running the loop a model drives on a page, with
//! a model's think time before every call, until the step's deadline.
//!
//! Each round: navigate to the small form, snapshot it, click its button or fill its text box
//! (in turn), evaluate a script reading the result, take a screenshot every third round, and
//! list the pages.

use std::str::FromStr;
use std::time::{Duration, Instant};

use rmcp::RoleClient;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RunningService, ServiceError};

use crate::dialect::{Call, Dialect};
use crate::server::{Output, Server, flatten};

/// What one call was, for the per-kind percentiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Navigate,
    Snapshot,
    Click,
    Fill,
    Evaluate,
    Screenshot,
    List,
}

impl Kind {
    pub const ALL: [Kind; 7] = [
        Kind::Navigate,
        Kind::Snapshot,
        Kind::Click,
        Kind::Fill,
        Kind::Evaluate,
        Kind::Screenshot,
        Kind::List,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Kind::Navigate => "navigate",
            Kind::Snapshot => "snapshot",
            Kind::Click => "click",
            Kind::Fill => "fill",
            Kind::Evaluate => "evaluate",
            Kind::Screenshot => "screenshot",
            Kind::List => "list pages",
        }
    }
}

/// One timed call.
pub struct Record {
    pub kind: Kind,
    pub took: Duration,
    pub failed: bool,
}

/// What an agent did in the step: its calls and the first lines of its errors.
#[derive(Default)]
pub struct AgentRun {
    pub records: Vec<Record>,
    pub errors: Vec<String>,
}

/// The think time before each call, drawn like a model's turn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Think {
    /// Uniform between two bounds.
    Uniform { min: Duration, max: Duration },
    /// Exponential around a mean (capped at five means): mostly quick turns, a few long ones.
    Exponential { mean: Duration },
}

impl FromStr for Think {
    type Err = String;

    /// `MIN-MAX` or `uniform:MIN-MAX` (seconds, e.g. `1-3`, `0.5-2`), or `exp:MEAN`.
    fn from_str(text: &str) -> Result<Think, String> {
        let seconds = |s: &str| {
            s.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && (0.0..=600.0).contains(v))
                .map(Duration::from_secs_f64)
                .ok_or_else(|| {
                    format!("{s:?} is not a number of seconds from 0 to 600 (think time {text:?})")
                })
        };
        if let Some(mean) = text.strip_prefix("exp:") {
            return Ok(Think::Exponential {
                mean: seconds(mean)?,
            });
        }
        let range = text.strip_prefix("uniform:").unwrap_or(text);
        let (min, max) = range.split_once('-').ok_or_else(|| {
            format!(
                "think time {text:?}: write MIN-MAX seconds (e.g. 1-3) or exp:MEAN (e.g. exp:2)"
            )
        })?;
        let (min, max) = (seconds(min)?, seconds(max)?);
        if min > max {
            return Err(format!(
                "think time {text:?}: the minimum is above the maximum"
            ));
        }
        Ok(Think::Uniform { min, max })
    }
}

impl Think {
    pub fn draw(self, rng: &mut Rng) -> Duration {
        match self {
            Think::Uniform { min, max } => min + (max - min).mul_f64(rng.unit()),
            Think::Exponential { mean } => {
                let draw = -(1.0 - rng.unit()).ln();
                mean.mul_f64(draw.min(5.0))
            }
        }
    }
}

/// A small deterministic generator (xorshift64*): each agent's seed gives it its own, and
/// a rerun the same, sequence of think times. No crate needed for uniform draws.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// A number in [0, 1).
    pub fn unit(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The agent's connection: its own stdio server process, or an HTTP session.
pub enum Client {
    Stdio(Box<Server>),
    Http(RunningService<RoleClient, ()>),
}

impl Client {
    async fn call(&mut self, (tool, arguments): Call, timeout: Duration) -> Result<Output, String> {
        match self {
            Client::Stdio(server) => server.call(tool, arguments).await.map(|(out, _)| out),
            Client::Http(client) => {
                let mut params = CallToolRequestParams::new(tool.to_owned());
                if let serde_json::Value::Object(map) = arguments {
                    params = params.with_arguments(map);
                }
                match tokio::time::timeout(timeout, client.call_tool(params)).await {
                    Ok(Ok(result)) => Ok(flatten(result)),
                    Ok(Err(ServiceError::McpError(e))) => Ok(Output {
                        text: format!("<protocol error> {}: {}", e.code.0, e.message),
                        is_error: true,
                        images: 0,
                    }),
                    Ok(Err(e)) => Err(format!("tools/call {tool} failed: {e}")),
                    Err(_) => Err(format!("tools/call {tool} timed out after {timeout:?}")),
                }
            }
        }
    }

    pub async fn close(self) {
        match self {
            Client::Stdio(server) => server.shutdown().await,
            Client::Http(client) => {
                let _closed = client.cancel().await;
            }
        }
    }
}

/// The URLs the loop visits.
pub struct Pages {
    pub start: String,
    pub form: String,
}

/// An agent between its calls.
pub struct Agent {
    pub client: Client,
    pub dialect: Dialect,
    pub think: Think,
    pub rng: Rng,
    pub timeout: Duration,
    pub run: AgentRun,
}

impl Agent {
    /// The untimed first call (it may launch the agent's browser or make its context).
    pub async fn prepare(&mut self, pages: &Pages) -> Result<(), String> {
        let out = self
            .client
            .call(self.dialect.navigate(&pages.start), self.timeout)
            .await?;
        if out.is_error {
            return Err(format!(
                "the first navigation failed: {}",
                first_line(&out.text)
            ));
        }
        Ok(())
    }

    /// The first navigation, then the small form opened and snapshotted once: what an agent
    /// leaves behind when it stops to think (`--capacity-idle`).
    pub async fn open_form(&mut self, pages: &Pages) -> Result<(), String> {
        self.prepare(pages).await?;
        for call in [self.dialect.navigate(&pages.form), self.dialect.snapshot()] {
            let out = self.client.call(call, self.timeout).await?;
            if out.is_error {
                return Err(format!(
                    "opening the form failed: {}",
                    first_line(&out.text)
                ));
            }
        }
        Ok(())
    }

    /// Rounds of the loop until `deadline` (no call starts after it).
    pub async fn work(&mut self, pages: &Pages, deadline: Instant) {
        let d = self.dialect;
        let mut round: u64 = 0;
        loop {
            if self
                .step(Kind::Navigate, d.navigate(&pages.form), deadline)
                .await
                .is_none()
            {
                return;
            }
            let Some(snapshot) = self.step(Kind::Snapshot, d.snapshot(), deadline).await else {
                return;
            };
            let act = if round.is_multiple_of(2) {
                d.target(&snapshot.text, "button \"Go\"")
                    .map(|button| (Kind::Click, d.click(&button)))
            } else {
                d.target(&snapshot.text, "textbox \"Name\"")
                    .map(|textbox| (Kind::Fill, d.fill(&textbox, &format!("Round {round}"))))
            };
            let acted = match act {
                Some((kind, call)) => self.step(kind, call, deadline).await.is_some(),
                None => {
                    if !snapshot.is_error {
                        self.run.errors.push(format!(
                            "no button or text box in the snapshot: {}",
                            first_line(&snapshot.text)
                        ));
                    }
                    true
                }
            };
            if !acted {
                return;
            }
            let read = "() => document.getElementById('out').textContent + ' / ' + \
                        document.getElementById('name').value";
            if self
                .step(Kind::Evaluate, d.evaluate(read), deadline)
                .await
                .is_none()
            {
                return;
            }
            if round % 3 == 2
                && self
                    .step(Kind::Screenshot, d.screenshot(), deadline)
                    .await
                    .is_none()
            {
                return;
            }
            if self
                .step(Kind::List, d.list_pages(), deadline)
                .await
                .is_none()
            {
                return;
            }
            round += 1;
        }
    }

    /// Thinks, then calls and records; `None` once the deadline has passed or the connection
    /// is gone (the agent stops).
    async fn step(&mut self, kind: Kind, call: Call, deadline: Instant) -> Option<Output> {
        tokio::time::sleep(self.think.draw(&mut self.rng)).await;
        if Instant::now() >= deadline {
            return None;
        }
        let tool = call.0;
        let started = Instant::now();
        let answer = self.client.call(call, self.timeout).await;
        let took = started.elapsed();
        match answer {
            Ok(out) => {
                if out.is_error {
                    self.run
                        .errors
                        .push(format!("{tool}: {}", first_line(&out.text)));
                }
                self.run.records.push(Record {
                    kind,
                    took,
                    failed: out.is_error,
                });
                Some(out)
            }
            Err(error) => {
                self.run.records.push(Record {
                    kind,
                    took,
                    failed: true,
                });
                self.run.errors.push(first_line(&error).to_owned());
                None
            }
        }
    }
}

fn first_line(text: &str) -> &str {
    crate::scenario::first_line(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn think_times_parse_and_stay_in_their_bounds() {
        let think: Think = "1-3".parse().expect("a range");
        assert_eq!(
            think,
            Think::Uniform {
                min: Duration::from_secs(1),
                max: Duration::from_secs(3)
            }
        );
        let mut rng = Rng::new(7);
        for _ in 0..1000 {
            let drawn = think.draw(&mut rng);
            assert!(drawn >= Duration::from_secs(1) && drawn <= Duration::from_secs(3));
        }
        let exp: Think = "exp:2".parse().expect("a mean");
        let mean: f64 = (0..4000)
            .map(|_| exp.draw(&mut rng).as_secs_f64())
            .sum::<f64>()
            / 4000.0;
        assert!((1.7..2.2).contains(&mean), "mean {mean}");
        for bad in ["3", "3-1", "a-b", "exp:", "1-9999"] {
            assert!(bad.parse::<Think>().is_err(), "{bad} was accepted");
        }
    }
}
