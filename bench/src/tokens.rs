//! The token table: what reading a large real page costs an agent, in bytes of answer text,
//! for the whole page, for its main region and for finding one element, on every server that
//! can answer each (chrome-devtools-mcp 1.11.0 has only the full snapshot).

use std::time::Duration;

use crate::dialect::Dialect;
use crate::fixtures::FixtureServer;
use crate::real_pages::RealPage;
use crate::report::thousands;
use crate::scenario::first_line;
use crate::server::{Launch, Server};

/// Bytes of the three answers on one page (`None` where the server has no such call or it
/// failed; the failure is in `notes`).
#[derive(Default)]
struct Costs {
    full: Option<usize>,
    main: Option<usize>,
    find: Option<usize>,
}

/// Every real page read the three ways by each launch; the markdown table.
/// `scoped` says which launches can scope and find (devtools-mcp must be given
/// `--experimentalScopedSnapshots` by the caller).
pub async fn table(
    launches: &[(Launch, Dialect, bool)],
    fixtures: &FixtureServer,
    pages: &[&RealPage],
    timeout: Duration,
) -> Result<String, String> {
    let mut columns = Vec::new();
    let mut notes = Vec::new();
    for (launch, dialect, scoped) in launches {
        let mut costs = Vec::new();
        // A fresh server per page: uids carry the snapshot's number, so a server that took
        // more snapshots before would print longer lines.
        for page in pages {
            let (mut server, _) = Server::start(launch, timeout, 1000).await?;
            let url = fixtures.url(&format!("{}{}", page.mount, page.path));
            let measured = measure(&mut server, *dialect, *scoped, &url, page.find).await;
            server.shutdown().await;
            let (page_costs, page_notes) =
                measured.map_err(|e| format!("{} on {}: {e}", launch.name, page.label))?;
            notes.extend(
                page_notes
                    .into_iter()
                    .map(|n| format!("{}, {}: {n}", launch.name, page.label)),
            );
            costs.push(page_costs);
        }
        columns.push((launch.name.clone(), *scoped, costs));
    }
    Ok(render(&columns, pages, &notes))
}

async fn measure(
    server: &mut Server,
    dialect: Dialect,
    scoped: bool,
    url: &str,
    find: &str,
) -> Result<(Costs, Vec<String>), String> {
    let mut notes = Vec::new();
    let mut answer = async |(tool, args): (&'static str, serde_json::Value)| {
        let (out, _) = server.call(tool, args).await?;
        Ok::<_, String>(out)
    };
    let loaded = answer(dialect.navigate(url)).await?;
    if loaded.is_error {
        notes.push(format!("loading failed: {}", first_line(&loaded.text)));
    }
    let full = answer(dialect.snapshot()).await?;
    let mut costs = Costs {
        full: (!full.is_error).then_some(full.text.len()),
        ..Costs::default()
    };
    if !scoped {
        return Ok((costs, notes));
    }
    match dialect.main_target(&full.text) {
        Some(target) => {
            let main = answer(dialect.scoped_snapshot(&target)).await?;
            if main.is_error {
                notes.push(format!("main region: {}", first_line(&main.text)));
            } else {
                costs.main = Some(main.text.len());
            }
        }
        None => notes.push("no element with role main in the full snapshot".to_owned()),
    }
    let found = answer(dialect.find(find)).await?;
    if found.is_error {
        notes.push(format!("find {find:?}: {}", first_line(&found.text)));
    } else {
        costs.find = Some(found.text.len());
    }
    Ok((costs, notes))
}

/// A column group of the token table: its heading, its value, and whether it needs scoping.
type Head = (&'static str, fn(&Costs) -> Option<usize>, bool);

fn render(columns: &[(String, bool, Vec<Costs>)], pages: &[&RealPage], notes: &[String]) -> String {
    let mut out = "| page (text found) |".to_owned();
    let mut rule = "|---|".to_owned();
    let heads: [Head; 3] = [
        ("full snapshot", |c| c.full, false),
        ("main region", |c| c.main, true),
        ("find one element", |c| c.find, true),
    ];
    for (head, _, needs_scope) in heads {
        for (name, scoped, _) in columns {
            if !needs_scope || *scoped {
                out.push_str(&format!(" {head}: {name} |"));
                rule.push_str("---:|");
            }
        }
    }
    out.push_str(" find / full snapshot, each |\n");
    rule.push_str("---|\n");
    out.push_str(&rule);
    for (index, page) in pages.iter().enumerate() {
        out.push_str(&format!("| {} ({:?}) |", page.label, page.find));
        for (_, pick, needs_scope) in heads {
            for (_, scoped, costs) in columns {
                if !needs_scope || *scoped {
                    let cell = costs.get(index).and_then(pick);
                    out.push_str(&format!(
                        " {} |",
                        cell.map_or("n/a".to_owned(), |n| thousands(n as u64))
                    ));
                }
            }
        }
        let shares: Vec<String> = columns
            .iter()
            .filter(|(_, scoped, _)| *scoped)
            .filter_map(|(name, _, costs)| {
                let c = costs.get(index)?;
                let share = c.find? as f64 / c.full? as f64;
                Some(format!("{name} 1/{:.0}", 1.0 / share))
            })
            .collect();
        out.push_str(&format!(" {} |\n", shares.join(", ")));
    }
    for note in notes {
        out.push_str(&format!("\n- {note}"));
    }
    out.push('\n');
    out
}
