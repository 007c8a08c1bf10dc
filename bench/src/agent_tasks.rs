//! The agent-task benchmark (issue 48): five tasks as a careful agent does them, on the real
//! documentation pages and the fixtures the bench serves, each as the calls that agent makes
//! with the tools it has: chrome-devtools-mcp 1.11.0's (also devtools-mcp with its defaults),
//! devtools-mcp's "Beyond 1.11.0" ones (`find_in_page`, scoped snapshots, an output budget),
//! and Playwright MCP's. What it pays: the tokens of every answer it reads (estimated as the
//! server's budget estimates them, one per 3 bytes, the same for every server) and the time
//! the calls take. Every task checks that the agent got what it was after: a run that did not
//! is reported as failed, not counted.

use std::time::{Duration, Instant};

use crate::dialect::{Call, Dialect};
use crate::fixtures::{FixtureServer, package_row};
use crate::report::thousands;
use crate::server::{Launch, Server};
use serde_json::json;

/// How the agent calls: which tools it has.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// 1.11.0's tools: snapshots of the whole page.
    Defaults,
    /// devtools-mcp's "Beyond 1.11.0" tools: find, then act or read the part that matters.
    Beyond,
    /// Playwright MCP's tools (its navigation and actions answer with a snapshot).
    Playwright,
}

impl Style {
    fn dialect(self) -> Dialect {
        match self {
            Style::Playwright => Dialect::Playwright,
            _ => Dialect::DevTools,
        }
    }
}

/// The budget devtools-mcp runs under in the Beyond column, and its flags.
pub const BEYOND_FLAGS: [&str; 3] = ["--experimentalScopedSnapshots", "--maxOutputTokens", "2000"];

/// The five tasks, by name, in the table's order.
const TASKS: [&str; 5] = [
    "find a method's signature",
    "follow a link and read a section",
    "fill and submit a form",
    "find a table row",
    "compare two pages",
];

/// One server's agent: what it read and how long its calls took.
struct Agent<'a> {
    server: &'a mut Server,
    style: Style,
    bytes: usize,
    calls: usize,
    took: Duration,
    /// The last answer, for a failure's report.
    last: String,
}

impl Agent<'_> {
    /// One call; its answer's text, or the failure.
    async fn call(&mut self, (tool, arguments): Call) -> Result<String, String> {
        let (out, took) = self.server.call(tool, arguments).await?;
        self.bytes += out.text.len();
        self.calls += 1;
        self.took += took;
        self.last = out.text.clone();
        if out.is_error {
            return Err(format!("{tool}: {}", first_line(&out.text)));
        }
        Ok(out.text)
    }

    /// Loads `url` and returns what the agent reads of it: with 1.11.0's tools, the page's
    /// snapshot (the only way to see it); with tools that find, the navigation's own answer
    /// (Playwright MCP 0.0.83 writes its snapshot to a file and links it).
    async fn open(&mut self, url: &str) -> Result<String, String> {
        let dialect = self.style.dialect();
        let loaded = self.call(dialect.navigate(url)).await?;
        match self.style {
            Style::Defaults => self.call(dialect.snapshot()).await,
            Style::Beyond | Style::Playwright => Ok(loaded),
        }
    }

    /// Where `text` is on the page: a line of `seen` (1.11.0's agent has the whole snapshot),
    /// or the answer of the server's find tool (`find_in_page`, `browser_find`).
    async fn locate(&mut self, seen: &str, text: &str) -> Result<String, String> {
        match self.style {
            Style::Defaults => Ok(seen.to_owned()),
            _ => self.call(self.style.dialect().find(text)).await,
        }
    }

    /// The page's main region, found by its role, then its snapshot (tools that find).
    async fn main_region(&mut self) -> Result<String, String> {
        let found = match self.style {
            Style::Playwright => {
                self.call(("browser_find", json!({ "regex": "- main( \\[|:)" })))
                    .await?
            }
            _ => {
                self.call(("find_in_page", json!({ "query": "^main$", "regex": true })))
                    .await?
            }
        };
        let dialect = self.style.dialect();
        let main = found
            .lines()
            .find_map(|line| dialect.main_target(line.trim_start_matches(['>', ' '])))
            .ok_or_else(|| "no element with role main".to_owned())?;
        self.call(dialect.scoped_snapshot(&main)).await
    }
}

/// A task's checks: `needle` must be in what the agent read.
fn expect(read: &str, needle: &str) -> Result<(), String> {
    if read.contains(needle) {
        Ok(())
    } else {
        Err(format!("{needle:?} is not in what the agent read"))
    }
}

/// The row the agent looks for in `/packages.html`.
const TABLE_ROW: usize = 437;

fn target(style: Style, read: &str, needle: &str) -> Result<String, String> {
    style
        .dialect()
        .target(read, needle)
        .ok_or_else(|| format!("no element {needle:?} in what the agent read"))
}

/// Runs task `index`; the URLs are the fixture server's.
async fn run_task(agent: &mut Agent<'_>, index: usize, urls: &Urls) -> Result<(), String> {
    let style = agent.style;
    let dialect = style.dialect();
    match index {
        // The signature of `HashMap::get_key_value`.
        0 => {
            let seen = agent.open(&urls.hash_map).await?;
            let found = agent.locate(&seen, "get_key_value").await?;
            // Its parameters (Playwright's snapshot splits the heading into text and links).
            expect(&found, "get_key_value")?;
            expect(&found, "&self, k:")
        }
        // The book's next chapter, then its first section.
        1 => {
            let seen = agent.open(&urls.strings).await?;
            let found = agent.locate(&seen, "Next chapter").await?;
            let next = target(style, &found, "link \"Next chapter\"")?;
            agent.call(dialect.click(&next)).await?;
            let read = match style {
                Style::Defaults => agent.call(dialect.snapshot()).await?,
                // The section is the chapter's first: the start of its main region (under
                // devtools-mcp's budget, the top of it).
                _ => agent.main_region().await?,
            };
            expect(&read, "Creating a New Hash Map")?;
            expect(&read, "HashMap::new")
        }
        // The fixture form: a name typed, the button pressed, the page's answer read.
        2 => {
            let seen = agent.open(&urls.form).await?;
            let seen = match style {
                // A small page: its snapshot is the cheapest way to see both targets.
                Style::Defaults => seen,
                _ => agent.call(dialect.snapshot()).await?,
            };
            let name = target(style, &seen, "textbox \"Name\"")?;
            let go = target(style, &seen, "button \"Go\"")?;
            agent.call(dialect.fill(&name, "Ada")).await?;
            agent.call(dialect.click(&go)).await?;
            let waited = agent.call(dialect.wait_for("Clicked")).await?;
            expect(&waited, "Clicked")
        }
        // One package's row of a 500-row data table: its version.
        3 => {
            let [name, version, ..] = package_row(TABLE_ROW);
            let seen = agent.open(&urls.table).await?;
            // A match comes with what follows it (the row's other cells): Playwright's three
            // lines of context, `find_in_page`'s next siblings.
            let read = agent.locate(&seen, &name).await?;
            expect(&read, &name)?;
            expect(&read, &version)
        }
        // Whether `String` and `HashMap` both have `with_capacity`, and its signatures.
        _ => {
            for url in [&urls.string, &urls.hash_map] {
                let seen = agent.open(url).await?;
                let found = agent.locate(&seen, "with_capacity").await?;
                expect(&found, "capacity:")?;
            }
            Ok(())
        }
    }
}

/// The pages the tasks use.
pub struct Urls {
    hash_map: String,
    string: String,
    strings: String,
    form: String,
    table: String,
}

impl Urls {
    pub fn new(fixtures: &FixtureServer, rust_docs_mount: &str) -> Urls {
        let doc = |path: &str| fixtures.url(&format!("{rust_docs_mount}{path}"));
        Urls {
            hash_map: doc("std/collections/struct.HashMap.html"),
            string: doc("std/string/struct.String.html"),
            strings: doc("book/ch08-02-strings.html"),
            form: fixtures.url("/small.html"),
            table: fixtures.url("/packages.html"),
        }
    }
}

/// What one column measured for one task over the runs.
#[derive(Default)]
struct Cell {
    tokens: Vec<usize>,
    calls: Vec<usize>,
    took: Vec<Duration>,
    failure: Option<String>,
}

/// Every task, `runs` times, by every column (a fresh server per task and run, its browser
/// launched by a first navigation that is not counted); the Markdown table.
pub async fn table(
    columns: &[(Launch, Style)],
    urls: &Urls,
    start_url: &str,
    runs: u32,
    timeout: Duration,
) -> Result<String, String> {
    let mut cells: Vec<Vec<Cell>> = columns
        .iter()
        .map(|_| TASKS.iter().map(|_| Cell::default()).collect())
        .collect();
    let started = Instant::now();
    // Round-robin over columns within each task and run, so noise falls on all alike.
    for _ in 0..runs {
        for (task, _) in TASKS.iter().enumerate() {
            for (column, (launch, style)) in columns.iter().enumerate() {
                let (mut server, _) = Server::start(launch, timeout, 1000).await?;
                let (tool, arguments) = style.dialect().navigate(start_url);
                let warm = server.call(tool, arguments).await;
                let mut agent = Agent {
                    server: &mut server,
                    style: *style,
                    bytes: 0,
                    calls: 0,
                    took: Duration::ZERO,
                    last: String::new(),
                };
                let outcome = match warm {
                    Ok((out, _)) if !out.is_error => run_task(&mut agent, task, urls).await,
                    Ok((out, _)) => Err(format!(
                        "the first page did not load: {}",
                        first_line(&out.text)
                    )),
                    Err(error) => Err(error),
                }
                .map_err(|error| {
                    let start: String = agent.last.chars().take(600).collect();
                    format!("{error} (the last answer began: {start:?})")
                });
                let (bytes, calls, took) = (agent.bytes, agent.calls, agent.took);
                server.shutdown().await;
                let cell = &mut cells[column][task];
                match outcome {
                    Ok(()) => {
                        cell.tokens.push(bytes.div_ceil(3));
                        cell.calls.push(calls);
                        cell.took.push(took);
                    }
                    Err(error) => cell.failure = Some(error),
                }
            }
        }
    }
    eprintln!("agent tasks measured in {:?}", started.elapsed());
    Ok(render(columns, &cells))
}

fn median<T: Copy + Ord>(values: &[T]) -> Option<T> {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    sorted.get(sorted.len() / 2).copied()
}

fn render(columns: &[(Launch, Style)], cells: &[Vec<Cell>]) -> String {
    let mut out = String::from("| task |");
    let mut rule = String::from("|---|");
    for (launch, style) in columns {
        let name = match style {
            Style::Beyond => format!("{} (Beyond, budget {})", launch.name, BEYOND_FLAGS[2]),
            _ => launch.name.clone(),
        };
        out.push_str(&format!(" {name}: tokens, calls, time |"));
        rule.push_str("---:|");
    }
    out.push('\n');
    out.push_str(&rule);
    out.push('\n');
    let mut totals = vec![(0usize, Duration::ZERO, true); columns.len()];
    for (task, name) in TASKS.iter().enumerate() {
        out.push_str(&format!("| {name} |"));
        for (column, total) in totals.iter_mut().enumerate() {
            let cell = &cells[column][task];
            match (
                &cell.failure,
                median(&cell.tokens),
                median(&cell.calls),
                median(&cell.took),
            ) {
                (None, Some(tokens), Some(calls), Some(took)) => {
                    total.0 += tokens;
                    total.1 += took;
                    out.push_str(&format!(
                        " {}, {calls}, {:.2} s |",
                        thousands(tokens as u64),
                        took.as_secs_f64()
                    ));
                }
                (failure, ..) => {
                    total.2 = false;
                    out.push_str(&format!(
                        " failed: {} |",
                        failure.as_deref().unwrap_or("no run").replace('|', "/")
                    ));
                }
            }
        }
        out.push('\n');
    }
    out.push_str("| **all five** |");
    for (tokens, took, complete) in &totals {
        let mark = if *complete { "" } else { " (incomplete)" };
        out.push_str(&format!(
            " **{}**, {:.2} s{mark} |",
            thousands(*tokens as u64),
            took.as_secs_f64()
        ));
    }
    out.push('\n');
    if let Some(reference) = totals.first().filter(|total| total.2 && total.0 > 0) {
        out.push_str(&format!(
            "| share of {}'s tokens, time |",
            columns[0].0.name
        ));
        for (tokens, took, _) in &totals {
            out.push_str(&format!(
                " {:.2}, {:.2} |",
                *tokens as f64 / reference.0 as f64,
                took.as_secs_f64() / reference.1.as_secs_f64().max(f64::MIN_POSITIVE)
            ));
        }
        out.push('\n');
    }
    out
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

/// What the table counts, printed above it.
pub fn note() -> String {
    format!(
        "Tokens: every answer's text, estimated as devtools-mcp's budget does (one token per 3 \
         bytes of UTF-8), the same for every server; the tools' definitions and what the agent \
         sends are not counted. Time: the sum of the task's calls (the agent's thinking is not \
         counted); a first navigation that launches the browser is not counted. Beyond: \
         devtools-mcp with `{}`. Medians of the runs.",
        BEYOND_FLAGS.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_task_marks_its_column_incomplete() {
        let launch = Launch {
            name: "x".into(),
            program: "x".into(),
            args: vec![],
        };
        let mut cells: Vec<Vec<Cell>> = vec![TASKS.iter().map(|_| Cell::default()).collect()];
        for cell in cells[0].iter_mut() {
            cell.tokens.push(10);
            cell.calls.push(2);
            cell.took.push(Duration::from_millis(100));
        }
        cells[0][2].failure = Some("\"Clicked\" is not in what the agent read".into());
        let table = render(&[(launch, Style::Defaults)], &cells);
        assert!(
            table.contains("| fill and submit a form | failed:"),
            "{table}"
        );
        assert!(table.contains("(incomplete)"), "{table}");
        assert!(!table.contains("share of"), "{table}");
    }
}
