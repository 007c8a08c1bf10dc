//! Catches drifts between two runs of the main bench: reads the step table and the "Chromium
//! alone" table of two reports (what `--output` writes) and prints each step that got slower
//! by more than the runs' own noise — our median, our ratio to each peer, our ratio to
//! Chromium alone — and each size that grew (peak RSS by more than its noise, bytes and counts
//! at all). A step is judged against the wider of the two runs' spreads, so a noisy run does
//! not cry wolf, and against a floor of 5% (medians of a few runs move that much on their own).

use std::collections::BTreeMap;

/// The least change taken as more than noise.
const MIN_NOISE: f64 = 0.05;

/// One cell: a median and, where the report gives them, min and max.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Cell {
    median: f64,
    min: f64,
    max: f64,
}

impl Cell {
    /// Half the relative range: how far one run's median may move by chance.
    fn noise(&self) -> f64 {
        if self.median <= 0.0 {
            return 0.0;
        }
        (self.max - self.min) / (2.0 * self.median)
    }
}

/// What kind of quantity a row holds, from its unit.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Unit {
    Millis,
    Mib,
    Exact,
}

/// One row of a report's step table.
#[derive(Clone, Debug, Default)]
struct Row {
    ours: Option<(Cell, Unit)>,
    /// `ours / peer` by peer name.
    ratios: BTreeMap<String, f64>,
    floor: Option<Cell>,
}

/// The rows of a report, by step label.
#[derive(Debug, Default)]
pub struct Report {
    rows: BTreeMap<String, Row>,
}

/// Parses "158 ms (150–170 ms)", "1,919 ms (…)", "61 MiB (60 MiB–62 MiB)", "4,100 B (…)".
fn cell(text: &str) -> Option<(Cell, Unit)> {
    let unit = if text.contains(" ms") {
        Unit::Millis
    } else if text.contains("MiB") {
        Unit::Mib
    } else {
        Unit::Exact
    };
    let number = |s: &str| -> Option<f64> {
        let digits: String = s
            .chars()
            .skip_while(|c| !c.is_ascii_digit())
            .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == ',')
            .filter(|c| *c != ',')
            .collect();
        digits.parse().ok()
    };
    let (head, range) = match text.split_once('(') {
        Some((head, range)) => (head, Some(range.trim_end_matches(')'))),
        None => (text, None),
    };
    let median = number(head)?;
    let (min, max) = match range.and_then(|range| range.split_once('–')) {
        Some((low, high)) => (number(low)?, number(high)?),
        None => (median, median),
    };
    Some((Cell { median, min, max }, unit))
}

fn cells(line: &str) -> Vec<String> {
    line.trim()
        .trim_matches('|')
        .split('|')
        .map(|cell| cell.trim().to_owned())
        .collect()
}

impl Report {
    /// Reads every markdown table of `text` whose first header cell is `step`.
    pub fn parse(text: &str) -> Report {
        let mut report = Report::default();
        let mut header: Option<Vec<String>> = None;
        for line in text.lines() {
            if !line.trim_start().starts_with('|') {
                header = None;
                continue;
            }
            let row = cells(line);
            if row.first().is_some_and(|first| first == "step") {
                header = Some(row);
                continue;
            }
            let Some(columns) = &header else { continue };
            if row
                .iter()
                .all(|cell| cell.chars().all(|c| "-:".contains(c)))
            {
                continue;
            }
            let label = row[0].trim_matches('*').to_owned();
            let entry = report.rows.entry(label).or_default();
            for (name, value) in columns.iter().zip(&row).skip(1) {
                if name.starts_with("Chromium alone median") {
                    entry.floor = cell(value).map(|(cell, _)| cell);
                } else if name.ends_with("median (min–max)") && entry.ours.is_none() {
                    entry.ours = cell(value);
                } else if let Some((_, peer)) = name.split_once(" / ")
                    && !name.starts_with("Chromium alone")
                    && let Ok(ratio) = value.parse::<f64>()
                {
                    entry.ratios.insert(peer.to_owned(), ratio);
                }
            }
        }
        report
    }

    pub fn is_empty(&self) -> bool {
        self.rows.values().all(|row| row.ours.is_none())
    }
}

/// What got worse from `old` to `new`, as a markdown list (empty when nothing did), and a
/// one-line summary.
pub fn regressions(old: &Report, new: &Report) -> (Vec<String>, String) {
    let mut found = Vec::new();
    let mut compared = 0;
    for (label, now) in &new.rows {
        let (Some(before), Some((cell_now, unit))) = (old.rows.get(label), now.ours) else {
            continue;
        };
        let Some((cell_before, _)) = before.ours else {
            continue;
        };
        compared += 1;
        let noise = cell_now.noise().max(cell_before.noise()).max(MIN_NOISE);
        let grew = |was: f64, is: f64| is > was * (1.0 + noise);
        match unit {
            Unit::Exact if cell_now.median > cell_before.median => found.push(format!(
                "- {label}: {} -> {} (any growth counts)",
                cell_before.median, cell_now.median
            )),
            Unit::Exact => {}
            Unit::Millis | Unit::Mib if grew(cell_before.median, cell_now.median) => {
                found.push(format!(
                    "- {label}: {:.1} -> {:.1} {} (+{:.0}%, noise ±{:.0}%)",
                    cell_before.median,
                    cell_now.median,
                    if unit == Unit::Mib { "MiB" } else { "ms" },
                    (cell_now.median / cell_before.median - 1.0) * 100.0,
                    noise * 100.0
                ))
            }
            _ => {}
        }
        if unit != Unit::Millis {
            continue;
        }
        for (peer, ratio) in &now.ratios {
            if let Some(was) = before.ratios.get(peer)
                && grew(*was, *ratio)
            {
                found.push(format!(
                    "- {label}: ratio to {peer} {was:.2} -> {ratio:.2} (noise ±{:.0}%)",
                    noise * 100.0
                ));
            }
        }
        if let (Some(floor_now), Some(floor_before)) = (now.floor, before.floor)
            && floor_now.median > 0.0
            && floor_before.median > 0.0
        {
            let (was, is) = (
                cell_before.median / floor_before.median,
                cell_now.median / floor_now.median,
            );
            let noise = noise.max(floor_now.noise()).max(floor_before.noise());
            if is > was * (1.0 + noise) {
                found.push(format!(
                    "- {label}: ratio to Chromium alone {was:.2} -> {is:.2} (noise ±{:.0}%)",
                    noise * 100.0
                ));
            }
        }
    }
    let summary = match found.len() {
        0 => format!("{compared} rows compared: nothing got worse beyond its noise."),
        n => format!("{compared} rows compared: {n} got worse beyond their noise."),
    };
    (found, summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLD: &str = "\
| step | devtools-mcp median (min–max) | chrome-devtools-mcp median (min–max) | devtools-mcp / chrome-devtools-mcp |
|---|---:|---:|---:|
| click | 50.0 ms (48.0 ms–52.0 ms) | 300 ms (290 ms–310 ms) | 0.17 |
| fill | 30.0 ms (29.0 ms–31.0 ms) | 280 ms (270 ms–290 ms) | 0.11 |
| peak RSS, server process only (VmHWM) | 61 MiB (60 MiB–62 MiB) | 120 MiB (118 MiB–121 MiB) | 0.51 |
| tools/list result size | 21,000 B (21,000 B–21,000 B) | 22,000 B (22,000 B–22,000 B) | 0.95 |

| step | Chromium alone median (min–max) | Chromium alone / chrome-devtools-mcp |
|---|---:|---:|
| click | 20.0 ms (19.0 ms–21.0 ms) | 0.07 |
";

    #[test]
    fn reads_medians_ranges_ratios_and_floors() {
        let report = Report::parse(OLD);
        let click = &report.rows["click"];
        let (cell, unit) = click.ours.expect("ours");
        assert_eq!(
            (cell.median, cell.min, cell.max, unit),
            (50.0, 48.0, 52.0, Unit::Millis)
        );
        assert_eq!(click.ratios["chrome-devtools-mcp"], 0.17);
        assert_eq!(click.floor.expect("floor").median, 20.0);
        assert_eq!(
            report.rows["tools/list result size"]
                .ours
                .expect("size")
                .0
                .median,
            21_000.0
        );
        assert!(!report.is_empty());
    }

    #[test]
    fn the_same_run_has_no_regression_and_a_slower_step_is_named() {
        let old = Report::parse(OLD);
        let (found, summary) = regressions(&old, &old);
        assert!(found.is_empty(), "{found:?}");
        assert!(summary.contains("nothing got worse"), "{summary}");

        // click 50 -> 60 ms (beyond its ±4% spread and the 5% floor); fill 30 -> 31 ms (noise);
        // RSS 61 -> 80 MiB; tools/list grew by 10 bytes.
        let new = OLD
            .replace(
                "| click | 50.0 ms (48.0 ms–52.0 ms) | 300 ms (290 ms–310 ms) | 0.17 |",
                "| click | 60.0 ms (59.0 ms–61.0 ms) | 300 ms (290 ms–310 ms) | 0.20 |",
            )
            .replace("| fill | 30.0 ms", "| fill | 31.0 ms")
            .replace("| 61 MiB (60 MiB–62 MiB)", "| 80 MiB (79 MiB–81 MiB)")
            .replace(
                "| 21,000 B (21,000 B–21,000 B)",
                "| 21,010 B (21,010 B–21,010 B)",
            );
        let (found, _) = regressions(&old, &Report::parse(&new));
        let text = found.join("\n");
        assert!(text.contains("- click: 50.0 -> 60.0 ms"), "{text}");
        assert!(
            text.contains("click: ratio to chrome-devtools-mcp 0.17 -> 0.20"),
            "{text}"
        );
        assert!(
            text.contains("click: ratio to Chromium alone 2.50 -> 3.00"),
            "{text}"
        );
        assert!(
            text.contains("peak RSS, server process only (VmHWM): 61.0 -> 80.0 MiB"),
            "{text}"
        );
        assert!(
            text.contains("tools/list result size: 21000 -> 21010"),
            "{text}"
        );
        assert!(!text.contains("fill"), "{text}");
    }

    #[test]
    fn a_noisy_run_widens_the_band() {
        let old = Report::parse(OLD);
        let noisy = OLD.replace(
            "| click | 50.0 ms (48.0 ms–52.0 ms)",
            "| click | 56.0 ms (40.0 ms–80.0 ms)",
        );
        let (found, _) = regressions(&old, &Report::parse(&noisy));
        assert!(
            !found.iter().any(|line| line.starts_with("- click: 50.0")),
            "{found:?}"
        );
    }
}
