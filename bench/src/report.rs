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

fn thousands(n: u64) -> String {
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
    &'a str,
    fn(f64) -> String,
    Box<dyn Fn(&Run) -> Option<f64> + 'a>,
);

/// The timing table: a row per step (round trip seen by the client), then peak RSS and the
/// tools/list size. `reference` is `(name, runs)` when the reference ran in the same session.
pub fn table(ours: (&str, &[Run]), reference: Option<(&str, &[Run])>) -> String {
    let mut rows: Vec<Row> = Vec::new();
    for (index, label) in STEPS.iter().enumerate() {
        rows.push((
            label,
            ms,
            Box::new(move |run: &Run| Some(millis(run.times[index]))),
        ));
    }
    rows.push((
        "peak RSS, server process only (VmHWM)",
        mib,
        Box::new(|run: &Run| run.peak_rss.map(|b| b as f64 / (1024.0 * 1024.0))),
    ));
    rows.push((
        "peak RSS before the 4,000-node page",
        mib,
        Box::new(|run: &Run| {
            run.peak_rss_small_pages
                .map(|b| b as f64 / (1024.0 * 1024.0))
        }),
    ));
    rows.push((
        "tools/list result size",
        bytes,
        Box::new(|run: &Run| Some(run.tools_list_bytes as f64)),
    ));
    rows.push((
        "tools listed",
        |n| format!("{n:.0}"),
        Box::new(|run: &Run| Some(run.tool_count as f64)),
    ));
    grid_with_goals(ours, reference, &rows, true)
}

/// CPU time the server process itself used during each step (all its threads, the browser
/// excluded): what is left of a step's time once this is subtracted is waiting, mostly for
/// Chromium.
pub fn cpu_table(ours: (&str, &[Run]), reference: Option<(&str, &[Run])>) -> String {
    let rows: Vec<Row> = STEPS
        .iter()
        .enumerate()
        .map(|(index, label)| -> Row {
            (
                label,
                ms,
                Box::new(move |run: &Run| Some(millis(run.cpu[index]))),
            )
        })
        .collect();
    grid(ours, reference, &rows)
}

/// The issue-14 goal of a row, as devtools-mcp's median over the reference's.
fn goal(label: &str) -> Option<f64> {
    Some(match label {
        "spawn -> initialize" => 0.05,
        "tools/list" => 0.2,
        "first new_page (browser launch)" => 0.5,
        "navigate_page" => 0.4,
        "take_snapshot (small page)" => 0.5,
        "take_snapshot (4,000 nodes)" => 0.6,
        "click" | "fill" => 0.4,
        "evaluate_script" => 0.3,
        "take_screenshot" => 0.7,
        "page fetch, then wait_for" => 0.8,
        "peak RSS, server process only (VmHWM)" => 0.3,
        _ => return None,
    })
}

fn grid(ours: (&str, &[Run]), reference: Option<(&str, &[Run])>, rows: &[Row]) -> String {
    grid_with_goals(ours, reference, rows, false)
}

/// A table with a row per `rows`; with a reference, the ratio ours / reference (below 1 is
/// faster) and, when `goals`, the issue's goal for it.
fn grid_with_goals(
    ours: (&str, &[Run]),
    reference: Option<(&str, &[Run])>,
    rows: &[Row],
    goals: bool,
) -> String {
    let mut out = String::new();
    match reference {
        Some((name, _)) => {
            let (goal_head, goal_rule) = if goals {
                (" goal | met? |", "---:|:---:|")
            } else {
                ("", "")
            };
            out.push_str(&format!(
                "| step | {} median (min–max) | {name} median (min–max) | {} / {name} |{goal_head}\n",
                ours.0, ours.0
            ));
            out.push_str(&format!("|---|---:|---:|---:|{goal_rule}\n"));
        }
        None => {
            out.push_str(&format!("| step | {} median (min–max) |\n", ours.0));
            out.push_str("|---|---:|\n");
        }
    }
    for (label, unit, pick) in rows {
        let mine = column(ours.1, pick);
        let cell = |s: Option<Summary>| s.map_or("n/a".to_owned(), |s| s.render(*unit));
        out.push_str(&format!("| {label} | {} |", cell(mine)));
        if let Some((_, runs)) = reference {
            let theirs = column(runs, pick);
            let ratio = match (mine, theirs) {
                (Some(m), Some(t)) if t.median > 0.0 => Some(m.median / t.median),
                _ => None,
            };
            let shown = ratio.map_or("n/a".to_owned(), |r| format!("{r:.2}"));
            out.push_str(&format!(" {} | {shown} |", cell(theirs)));
            if goals {
                match (goal(label), ratio) {
                    (Some(g), Some(r)) => {
                        let met = if r <= g { "yes" } else { "**no**" };
                        out.push_str(&format!(" ≤ {g} | {met} |"));
                    }
                    _ => out.push_str(" | |"),
                }
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

/// The browser-alone table: per step with a counterpart, Chromium's own time, that time over
/// the reference's (the best ratio any server can reach) and the goal, which is out of reach
/// when it is below that.
pub fn floor_table(floors: &[Floor], reference: Option<(&str, &[Run])>) -> String {
    let mut out = String::new();
    match reference {
        Some((name, _)) => {
            out.push_str(&format!(
                "| step | Chromium alone median (min–max) | Chromium alone / {name} | goal | reachable? |\n"
            ));
            out.push_str("|---|---:|---:|---:|:---:|\n");
        }
        None => {
            out.push_str("| step | Chromium alone median (min–max) |\n|---|---:|\n");
        }
    }
    for (index, label) in STEPS.iter().enumerate() {
        let values: Vec<f64> = floors
            .iter()
            .filter_map(|floor| floor.times[index].map(millis))
            .collect();
        let Some(floor) = Summary::of(values) else {
            continue;
        };
        out.push_str(&format!("| {label} | {} |", floor.render(ms)));
        if let Some((_, runs)) = reference {
            let theirs = column(runs, &|run: &Run| Some(millis(run.times[index])));
            let ratio = theirs
                .filter(|t| t.median > 0.0)
                .map(|t| floor.median / t.median);
            let shown = ratio.map_or("n/a".to_owned(), |r| format!("{r:.2}"));
            match (goal(label), ratio) {
                (Some(g), Some(r)) => {
                    let reachable = if r <= g { "yes" } else { "**no**" };
                    out.push_str(&format!(" {shown} | ≤ {g} | {reachable} |"));
                }
                _ => out.push_str(&format!(" {shown} | | |")),
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
