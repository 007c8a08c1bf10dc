//! Times the snapshot engine on a captured `Accessibility.getFullAXTree` reply, in a fresh
//! process, so that the first run pays for fresh memory as the server's first big snapshot
//! does: `cargo run --release -p devtools-snapshot --example engine -- REPLY.json [RUNS]`.
//! The bench saves such a reply (the 4,000-element page's) with `--dump DIR`:
//! `DIR/getFullAXTree-4000.json`.

use devtools_snapshot::{AxTree, Snapshot, UidMap};
use std::time::Instant;

/// CPU time (ms, from schedstat) and minor page faults of this process so far.
fn usage() -> (f64, i64) {
    let sched = std::fs::read_to_string("/proc/self/schedstat").expect("schedstat");
    let cpu_ns: f64 = sched
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .expect("cpu");
    let stat = std::fs::read_to_string("/proc/self/stat").expect("stat");
    let after_name = stat.rsplit_once(')').expect("stat").1;
    let minflt = after_name
        .split_whitespace()
        .nth(7)
        .and_then(|n| n.parse().ok())
        .expect("minflt");
    (cpu_ns / 1e6, minflt)
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("a reply file");
    let runs: usize = args.next().map_or(5, |n| n.parse().expect("runs"));
    let text = std::fs::read_to_string(path).expect("readable reply");
    let mut uids = UidMap::default();
    for run in 0..runs {
        let (cpu0, flt0) = usage();
        let wall = Instant::now();
        let tree = AxTree::from_reply(&text).expect("reply").expect("nodes");
        let (flt1, wall1) = (usage().1, wall.elapsed());
        let root = tree.serialize(true).expect("root");
        let (flt2, wall2) = (usage().1, wall.elapsed());
        let snapshot = Snapshot::build(root, "L", run as u64 + 1, false, &mut uids);
        let out = snapshot.to_text();
        let (cpu3, flt3) = usage();
        let wall3 = wall.elapsed();
        drop(snapshot);
        println!(
            "run {run}: {:.1} ms wall (parse+link {:.1}, serialize {:.1}, build+text {:.1}), cpu {:.1} ms, faults {} ({} / {} / {}), text {} B",
            ms(wall3),
            ms(wall1),
            ms(wall2 - wall1),
            ms(wall3 - wall2),
            cpu3 - cpu0,
            flt3 - flt0,
            flt1 - flt0,
            flt2 - flt1,
            flt3 - flt2,
            out.len()
        );
    }
}
