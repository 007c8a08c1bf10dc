//! Turns runs into the markdown the bench prints: the timing table and, when the reference
//! ran too, where the two servers' answers to the same calls differ.

use std::time::Duration;

use crate::floor::Floor;
use crate::scenario::{Run, STEPS};

/// Median, min and max of one step over the runs.
#[derive(Clone, Copy)]
struct Summary {
    median: f64,
    min: f64,
    max: f64,
}

impl Summary {
    fn of(mut values: Vec<f64>) -> Option<Summary> {
        values.sort_by(f64::total_cmp);
        let n = values.len();
        let median = match n {
            0 => return None,
            _ if n % 2 == 1 => values[n / 2],
            _ => (values[n / 2 - 1] + values[n / 2]) / 2.0,
        };
        Some(Summary {
            median,
            min: values[0],
            max: values[n - 1],
        })
    }

    fn render(&self, unit: fn(f64) -> String) -> String {
        format!(
            "{} ({}–{})",
            unit(self.median),
            unit(self.min),
            unit(self.max)
        )
    }
}

/// Milliseconds with three significant digits at most below 100, thousands separated above.
fn ms(value: f64) -> String {
    match value {
        v if v < 10.0 => format!("{v:.2} ms"),
        v if v < 100.0 => format!("{v:.1} ms"),
        v => format!("{} ms", thousands(v.round() as u64)),
    }
}

fn mib(value: f64) -> String {
    format!("{value:.0} MiB")
}

fn bytes(value: f64) -> String {
    format!("{} B", thousands(value.round() as u64))
}

pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// One measured quantity of every run of one server.
fn column(runs: &[Run], pick: &dyn Fn(&Run) -> Option<f64>) -> Option<Summary> {
    Summary::of(runs.iter().filter_map(pick).collect())
}

/// One row of a table: its label, how to print a value, and which value of a run it shows.
type Row<'a> = (
    String,
    fn(f64) -> String,
    Box<dyn Fn(&Run) -> Option<f64> + 'a>,
);

/// A peer server measured in the same session, and which one it is (goals name their peer).
#[derive(Clone, Copy)]
pub struct Peer<'a> {
    pub name: &'a str,
    pub runs: &'a [Run],
    pub kind: PeerKind,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum PeerKind {
    /// chrome-devtools-mcp 1.11.0.
    Reference,
    /// Playwright MCP.
    Playwright,
}

/// Whose median a goal's ratio divides by.
#[derive(Clone, Copy)]
enum Against {
    Peer(PeerKind),
    /// The faster of the peers for that row.
    FasterPeer,
}

/// The timing table: a row per step (round trip seen by the client), the scenario's sum, a
/// row per real page's full snapshot and their sum, then peak RSS and the tools/list size.
pub fn table(ours: (&str, &[Run]), peers: &[Peer], real_labels: &[&str]) -> String {
    let mut rows: Vec<Row> = Vec::new();
    for (index, label) in STEPS.iter().enumerate() {
        rows.push((
            (*label).to_owned(),
            ms,
            Box::new(move |run: &Run| Some(millis(run.times[index]))),
        ));
    }
    rows.push((
        SCENARIO_SUM.to_owned(),
        ms,
        Box::new(|run: &Run| Some(run.times.iter().copied().map(millis).sum())),
    ));
    for (index, label) in real_labels.iter().enumerate() {
        rows.push((
            format!("full snapshot: {label}"),
            ms,
            Box::new(move |run: &Run| run.real.get(index).map(|(took, _)| millis(*took))),
        ));
    }
    if !real_labels.is_empty() {
        let count = real_labels.len();
        rows.push((
            REAL_SUM.to_owned(),
            ms,
            Box::new(move |run: &Run| {
                (run.real.len() == count)
                    .then(|| run.real.iter().map(|(took, _)| millis(*took)).sum())
            }),
        ));
    }
    rows.push((
        "peak RSS, server process only (VmHWM)".to_owned(),
        mib,
        Box::new(|run: &Run| run.peak_rss.map(|b| b as f64 / (1024.0 * 1024.0))),
    ));
    rows.push((
        "peak RSS before the 4,000-node page".to_owned(),
        mib,
        Box::new(|run: &Run| {
            run.peak_rss_small_pages
                .map(|b| b as f64 / (1024.0 * 1024.0))
        }),
    ));
    rows.push((
        "tools/list result size".to_owned(),
        bytes,
        Box::new(|run: &Run| Some(run.tools_list_bytes as f64)),
    ));
    rows.push((
        "tools listed".to_owned(),
        |n| format!("{n:.0}"),
        Box::new(|run: &Run| Some(run.tool_count as f64)),
    ));
    grid_with_goals(ours, peers, &rows, true)
}

const SCENARIO_SUM: &str = "**whole scenario (sum of the steps above)**";
const REAL_SUM: &str = "**full snapshots of the real pages, sum**";

/// The text each step put into the agent's context, in bytes (the last run's; the same in
/// every run but for timings a server prints).
pub fn bytes_table(ours: (&str, &[Run]), peers: &[Peer], real_labels: &[&str]) -> String {
    let mut rows: Vec<Row> = Vec::new();
    for (index, label) in STEPS.iter().enumerate().skip(1) {
        rows.push((
            (*label).to_owned(),
            bytes,
            Box::new(move |run: &Run| Some(run.bytes[index] as f64)),
        ));
    }
    rows.push((
        "**all steps above**".to_owned(),
        bytes,
        Box::new(|run: &Run| Some(run.bytes.iter().skip(1).sum::<usize>() as f64)),
    ));
    for (index, label) in real_labels.iter().enumerate() {
        rows.push((
            format!("full snapshot: {label}"),
            bytes,
            Box::new(move |run: &Run| run.real.get(index).map(|(_, size)| *size as f64)),
        ));
    }
    let last = |runs: &[Run]| runs.len().saturating_sub(1);
    let ours = (ours.0, &ours.1[last(ours.1)..]);
    let peers: Vec<Peer> = peers
        .iter()
        .map(|peer| Peer {
            runs: &peer.runs[last(peer.runs)..],
            ..*peer
        })
        .collect();
    grid(ours, &peers, &rows)
}

/// CPU time the server process itself used during each step (all its threads, the browser
/// excluded): what is left of a step's time once this is subtracted is waiting, mostly for
/// Chromium.
pub fn cpu_table(ours: (&str, &[Run]), peers: &[Peer]) -> String {
    let rows: Vec<Row> = STEPS
        .iter()
        .enumerate()
        .map(|(index, label)| -> Row {
            (
                (*label).to_owned(),
                ms,
                Box::new(move |run: &Run| Some(millis(run.cpu[index]))),
            )
        })
        .collect();
    grid(ours, peers, &rows)
}

/// The goal of a row: issue 24's where it set one (against Playwright MCP, or the faster
/// peer), else issue 14's against 1.11.0; as devtools-mcp's median over the peer's.
fn goal(label: &str) -> Option<(f64, Against)> {
    use Against::{FasterPeer, Peer};
    use PeerKind::{Playwright, Reference};
    Some(match label {
        SCENARIO_SUM => (0.35, FasterPeer),
        REAL_SUM => (0.7, Peer(Playwright)),
        "take_snapshot (4,000 nodes)" => (0.7, Peer(Playwright)),
        "take_screenshot" | "take_screenshot (page idle)" => (0.8, Peer(Reference)),
        "fill" => (0.8, Peer(Playwright)),
        "spawn -> initialize" => (0.05, Peer(Reference)),
        "tools/list" => (0.2, Peer(Reference)),
        "first new_page (browser launch)" => (0.5, Peer(Reference)),
        "navigate_page" => (0.4, Peer(Reference)),
        "take_snapshot (small page)" => (0.5, Peer(Reference)),
        "click" => (0.4, Peer(Reference)),
        "evaluate_script" => (0.3, Peer(Reference)),
        "page fetch, then wait_for" => (0.8, Peer(Reference)),
        "peak RSS, server process only (VmHWM)" => (0.3, Peer(Reference)),
        _ => return None,
    })
}

fn grid(ours: (&str, &[Run]), peers: &[Peer], rows: &[Row]) -> String {
    grid_with_goals(ours, peers, rows, false)
}

/// A table with a row per `rows`: ours, each peer, the ratio ours / each peer (below 1 is
/// faster) and, when `goals`, the issue's goal for the row and whether it is met.
fn grid_with_goals(ours: (&str, &[Run]), peers: &[Peer], rows: &[Row], goals: bool) -> String {
    let goals = goals && !peers.is_empty();
    let mut out = format!("| step | {} median (min–max) |", ours.0);
    let mut rule = "|---|---:|".to_owned();
    for peer in peers {
        out.push_str(&format!(" {} median (min–max) |", peer.name));
        rule.push_str("---:|");
    }
    for peer in peers {
        out.push_str(&format!(" {} / {} |", ours.0, peer.name));
        rule.push_str("---:|");
    }
    if goals {
        out.push_str(" goal | met? |");
        rule.push_str("---|:---:|");
    }
    out.push('\n');
    out.push_str(&rule);
    out.push('\n');
    for (label, unit, pick) in rows {
        let mine = column(ours.1, pick);
        let cell = |s: Option<Summary>| s.map_or("n/a".to_owned(), |s| s.render(*unit));
        out.push_str(&format!("| {label} | {} |", cell(mine)));
        let theirs: Vec<Option<Summary>> = peers.iter().map(|p| column(p.runs, pick)).collect();
        for summary in &theirs {
            out.push_str(&format!(" {} |", cell(*summary)));
        }
        let ratio = |t: Option<Summary>| match (mine, t) {
            (Some(m), Some(t)) if t.median > 0.0 => Some(m.median / t.median),
            _ => None,
        };
        for summary in &theirs {
            let shown = ratio(*summary).map_or("n/a".to_owned(), |r| format!("{r:.2}"));
            out.push_str(&format!(" {shown} |"));
        }
        if goals {
            let judged = goal(label).and_then(|(g, against)| {
                let (name, r) = match against {
                    Against::Peer(kind) => {
                        let at = peers.iter().position(|p| p.kind == kind)?;
                        (peers[at].name.to_owned(), ratio(theirs[at])?)
                    }
                    Against::FasterPeer => {
                        let fastest = theirs
                            .iter()
                            .flatten()
                            .min_by(|a, b| a.median.total_cmp(&b.median))?;
                        ("the faster peer".to_owned(), ratio(Some(*fastest))?)
                    }
                };
                Some((g, name, r))
            });
            match judged {
                Some((g, name, r)) => {
                    let met = if r <= g { "yes" } else { "**no**" };
                    out.push_str(&format!(" ≤ {g} × {name} | {met} |"));
                }
                None => out.push_str(" | |"),
            }
        }
        out.push('\n');
    }
    out
}

/// Per step, whether both servers answered the same normalised text in their last run, and
/// the differing lines where they did not.
pub fn comparison(ours: (&str, &Run), reference: (&str, &Run)) -> String {
    let mut out = String::new();
    for (index, label) in STEPS.iter().enumerate().skip(1) {
        let (a, b) = (&ours.1.texts[index], &reference.1.texts[index]);
        if a == b {
            out.push_str(&format!("- {label}: identical\n"));
        } else {
            out.push_str(&format!("- {label}: **differs**\n"));
            out.push_str(&diff(ours.0, a, reference.0, b));
        }
    }
    out
}

/// Lines between the common prefix and the common suffix, at most `MAX_LINES` a side: enough
/// to name a local difference without printing 4,000 snapshot lines.
fn diff(name_a: &str, a: &str, name_b: &str, b: &str) -> String {
    const MAX_LINES: usize = 12;
    let (la, lb): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let prefix = la.iter().zip(&lb).take_while(|(x, y)| x == y).count();
    let suffix = la[prefix..]
        .iter()
        .rev()
        .zip(lb[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let mut out = format!(
        "  first difference at line {} ({} lines vs {} lines)\n",
        prefix + 1,
        la.len(),
        lb.len()
    );
    for (name, lines) in [(name_a, &la), (name_b, &lb)] {
        let middle = &lines[prefix..lines.len() - suffix];
        out.push_str(&format!("  {name}:\n  ```\n"));
        for line in middle.iter().take(MAX_LINES) {
            out.push_str(&format!("  {line}\n"));
        }
        if middle.len() > MAX_LINES {
            out.push_str(&format!("  … {} more lines\n", middle.len() - MAX_LINES));
        }
        out.push_str("  ```\n");
    }
    out
}

/// Steps whose answer was not what the scenario expected, with how many runs saw it.
pub fn surprises(name: &str, runs: &[Run]) -> String {
    let mut seen: Vec<(String, usize)> = Vec::new();
    for surprise in runs.iter().flat_map(|r| &r.surprises) {
        match seen.iter_mut().find(|(s, _)| s == surprise) {
            Some((_, count)) => *count += 1,
            None => seen.push((surprise.clone(), 1)),
        }
    }
    seen.iter()
        .map(|(s, n)| format!("- {name} ({n}/{} runs): {s}\n", runs.len()))
        .collect()
}

/// The browser-alone table: per step with a counterpart (and per real page), Chromium's own
/// time, that time over each peer's (the best ratio any server can reach) and the row's goal,
/// which is out of reach when it is below that.
pub fn floor_table(floors: &[Floor], peers: &[Peer], real_labels: &[&str]) -> String {
    type Pick<'a> = (
        String,
        Box<dyn Fn(&Floor) -> Option<f64> + 'a>,
        Box<dyn Fn(&Run) -> Option<f64> + 'a>,
    );
    let mut rows: Vec<Pick> = Vec::new();
    for (index, label) in STEPS.iter().enumerate() {
        rows.push((
            (*label).to_owned(),
            Box::new(move |f: &Floor| f.times[index].map(millis)),
            Box::new(move |run: &Run| Some(millis(run.times[index]))),
        ));
    }
    for (index, label) in real_labels.iter().enumerate() {
        rows.push((
            format!("full snapshot: {label}"),
            Box::new(move |f: &Floor| f.real.get(index).map(|d| millis(*d))),
            Box::new(move |run: &Run| run.real.get(index).map(|(took, _)| millis(*took))),
        ));
    }
    if !real_labels.is_empty() {
        let count = real_labels.len();
        rows.push((
            REAL_SUM.to_owned(),
            Box::new(move |f: &Floor| {
                (f.real.len() == count).then(|| f.real.iter().copied().map(millis).sum())
            }),
            Box::new(move |run: &Run| {
                (run.real.len() == count)
                    .then(|| run.real.iter().map(|(took, _)| millis(*took)).sum())
            }),
        ));
    }
    let mut out = "| step | Chromium alone median (min–max) |".to_owned();
    let mut rule = "|---|---:|".to_owned();
    for peer in peers {
        out.push_str(&format!(" Chromium alone / {} |", peer.name));
        rule.push_str("---:|");
    }
    if !peers.is_empty() {
        out.push_str(" goal | reachable? |");
        rule.push_str("---|:---:|");
    }
    out.push_str(&format!("\n{rule}\n"));
    for (label, floor_pick, run_pick) in &rows {
        let Some(floor) = Summary::of(floors.iter().filter_map(floor_pick).collect()) else {
            continue;
        };
        out.push_str(&format!("| {label} | {} |", floor.render(ms)));
        let ratios: Vec<Option<f64>> = peers
            .iter()
            .map(|peer| {
                let theirs = column(peer.runs, run_pick)?;
                (theirs.median > 0.0).then(|| floor.median / theirs.median)
            })
            .collect();
        for ratio in &ratios {
            let shown = ratio.map_or("n/a".to_owned(), |r| format!("{r:.2}"));
            out.push_str(&format!(" {shown} |"));
        }
        if !peers.is_empty() {
            let judged = goal(label).and_then(|(g, against)| {
                let r = match against {
                    Against::Peer(kind) => ratios[peers.iter().position(|p| p.kind == kind)?]?,
                    // Against the faster peer, the floor's ratio is the larger one.
                    Against::FasterPeer => ratios.iter().flatten().copied().reduce(f64::max)?,
                };
                Some((g, r))
            });
            match judged {
                Some((g, r)) => {
                    let reachable = if r <= g { "yes" } else { "**no**" };
                    out.push_str(&format!(" ≤ {g} | {reachable} |"));
                }
                None => out.push_str(" | |"),
            }
        }
        out.push('\n');
    }
    out
}

/// The floor run's durations, for its progress line (`-` where it has no counterpart).
pub fn floor_line(floor: &Floor) -> String {
    let parts: Vec<String> = floor
        .times
        .iter()
        .map(|d| d.map_or("-".to_owned(), |d| ms(millis(d))))
        .collect();
    parts.join(", ")
}

/// Durations of a step, for the progress line of one run.
pub fn one_line(run: &Run) -> String {
    let parts: Vec<String> = run.times.iter().map(|d| ms(millis(*d))).collect();
    parts.join(", ")
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_even_count_is_the_mean_of_the_middle_two() {
        let s = Summary::of(vec![4.0, 1.0, 3.0, 2.0]).map(|s| (s.median, s.min, s.max));
        assert_eq!(s, Some((2.5, 1.0, 4.0)));
    }

    #[test]
    fn formats_milliseconds_and_thousands() {
        assert_eq!(ms(2.4), "2.40 ms");
        assert_eq!(ms(17.25), "17.2 ms");
        assert_eq!(ms(1630.4), "1,630 ms");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn diff_names_the_first_differing_lines() {
        let d = diff("a", "x\ny\nz", "b", "x\nY\nz");
        assert!(d.contains("first difference at line 2"), "{d}");
        assert!(d.contains("  y\n") && d.contains("  Y\n"), "{d}");
    }
}
