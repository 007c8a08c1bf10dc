//! The load budget bounds what a load really allocates: a counting allocator measures the
//! peak of each load of files shaped to cost the most per byte, and each load either fits its
//! budget or is refused before passing it.

use devtools_memory::{HeapError, LoadBudget, LoadedSnapshot};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// One measuring test at a time (the harness runs tests on several threads, and the counts
/// are process-wide).
static MEASURING: Mutex<()> = Mutex::new(());

fn alone() -> std::sync::MutexGuard<'static, ()> {
    MEASURING
        .lock()
        .unwrap_or_else(|poison| poison.into_inner())
}

// A global allocator is an unsafe trait: this one only counts, and forwards every call.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = CURRENT.fetch_add(layout.size(), Ordering::SeqCst) + layout.size();
        PEAK.fetch_max(now, Ordering::SeqCst);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        CURRENT.fetch_sub(layout.size(), Ordering::SeqCst);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            let now = CURRENT.fetch_add(new_size - layout.size(), Ordering::SeqCst) + new_size
                - layout.size();
            PEAK.fetch_max(now, Ordering::SeqCst);
        } else {
            CURRENT.fetch_sub(layout.size() - new_size, Ordering::SeqCst);
        }
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const HEADER: &str = r#"{"snapshot":{"meta":{"node_fields":["type","name","id","self_size","edge_count","detachedness"],"node_types":[["hidden","array","string","object","code","closure","regexp","number","native","synthetic","concatenated string","sliced string","symbol","bigint","object shape"],"string","number","number","number","number"],"edge_fields":["type","name_or_index","to_node"],"edge_types":[["context","element","property","internal","hidden","shortcut","weak"],"string_or_number","node"]},"node_count":NODES,"edge_count":EDGES},"#;

/// A root holding `nodes - 1` objects, each with `edges_each` edges to the next, and
/// `strings` strings of `string_len` characters.
fn snapshot(nodes: usize, edges_each: usize, strings: usize, string_len: usize) -> Vec<u8> {
    let mut text = HEADER
        .replace("NODES", &nodes.to_string())
        .replace("EDGES", &(nodes * edges_each).to_string());
    text.push_str("\"nodes\":[");
    for n in 0..nodes {
        let kind = if n == 0 { 9 } else { 3 };
        let edges = if n + 1 < nodes { edges_each } else { 0 };
        text.push_str(&format!("{kind},0,{},1,{edges},0,", n * 2 + 1));
    }
    text.pop();
    text.push_str("],\"edges\":[");
    for n in 0..nodes.saturating_sub(1) {
        for _ in 0..edges_each {
            text.push_str(&format!("2,0,{},", (n + 1) * 6));
        }
    }
    if text.ends_with(',') {
        text.pop();
    }
    text.push_str("],\"strings\":[");
    let value = "x".repeat(string_len);
    for _ in 0..strings.max(1) {
        text.push_str(&format!("\"{value}\","));
    }
    text.pop();
    text.push_str("]}");
    text.into_bytes()
}

/// The peak allocation of one load under `max_bytes`, and its outcome.
fn measure(file: &[u8], max_bytes: usize) -> (usize, Result<usize, HeapError>) {
    let budget = LoadBudget {
        max_bytes,
        file_len: Some(file.len() as u64),
        cancel: None,
    };
    let before = CURRENT.load(Ordering::SeqCst);
    PEAK.store(before, Ordering::SeqCst);
    let outcome = LoadedSnapshot::load_with(file, budget).map(|loaded| loaded.memory_bytes());
    (PEAK.load(Ordering::SeqCst) - before, outcome)
}

/// Shapes that cost the most per file byte: nodes without edges, empty strings, dense edges,
/// and a header that declares far more than the file holds.
#[test]
fn every_shape_fits_its_budget_or_is_refused_before_passing_it() {
    let _alone = alone();
    let budget = 24 << 20;
    let declared = String::from_utf8(snapshot(3, 0, 1, 1))
        .expect("utf8")
        .replace("\"node_count\":3", "\"node_count\":1000000000000");
    let shapes: Vec<(&str, Vec<u8>)> = vec![
        ("nodes without edges", snapshot(400_000, 0, 1, 1)),
        ("empty strings", snapshot(2, 1, 1_500_000, 0)),
        ("dense edges", snapshot(20_000, 40, 1, 1)),
        ("declared 10^12 nodes", declared.into_bytes()),
        ("one long string", snapshot(2, 1, 1, 40 << 20)),
    ];
    for (shape, file) in &shapes {
        let (peak, outcome) = measure(file, budget);
        assert!(
            peak <= budget,
            "{shape}: a {} byte file allocated {peak} bytes under a {budget} byte budget ({:?})",
            file.len(),
            outcome.as_ref().map_err(ToString::to_string)
        );
        if let Ok(held) = outcome {
            assert!(
                held <= peak,
                "{shape}: holds {held}, more than it allocated"
            );
        }
    }
}

/// The budget does not refuse what fits: a file well inside it loads.
#[test]
fn a_file_well_inside_the_budget_loads() {
    let _alone = alone();
    let file = snapshot(20_000, 2, 100, 8);
    let (peak, outcome) = measure(&file, 64 << 20);
    assert!(
        outcome.is_ok(),
        "{:?}",
        outcome.err().map(|e| e.to_string())
    );
    assert!(peak <= 64 << 20);
    let (_, refused) = measure(&file, 2 << 20);
    assert!(
        matches!(refused, Err(HeapError::Budget { .. })),
        "a 2 MiB budget cannot hold it"
    );
}

/// A raised flag stops the load at its next check.
#[test]
fn a_cancelled_load_stops() {
    let file = snapshot(50_000, 1, 1, 1);
    let cancel = AtomicBool::new(true);
    let budget = LoadBudget {
        max_bytes: usize::MAX,
        file_len: None,
        cancel: Some(&cancel),
    };
    assert!(matches!(
        LoadedSnapshot::load_with(file.as_slice(), budget),
        Err(HeapError::Cancelled)
    ));
}

/// The charge is close to the truth: three times what a load really peaks at is enough (the
/// analysis is charged for its worst shape, nodes no edge reaches).
#[test]
fn the_charge_is_at_most_three_times_the_real_peak() {
    let _alone = alone();
    for (shape, file) in [
        ("nodes", snapshot(100_000, 0, 1, 1)),
        ("strings", snapshot(2, 1, 400_000, 0)),
        ("edges", snapshot(5_000, 40, 1, 1)),
        ("mixed", snapshot(50_000, 2, 1000, 10)),
    ] {
        let (peak, outcome) = measure(&file, usize::MAX);
        assert!(outcome.is_ok(), "{shape}");
        let (_, outcome) = measure(&file, peak * 3);
        assert!(
            outcome.is_ok(),
            "{shape}: refused under three times its real peak of {peak} bytes: {:?}",
            outcome.err().map(|error| error.to_string())
        );
    }
}
