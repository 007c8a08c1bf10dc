//! Heap-snapshot files of any content: the loader must answer (a snapshot or an error) within
//! its budget, never panic, abort, recurse without bound or reserve what the file declares.

#![no_main]

use devtools_memory::{LoadBudget, LoadedSnapshot, tools};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let budget = LoadBudget {
        max_bytes: 64 << 20,
        file_len: Some(data.len() as u64),
        cancel: None,
    };
    if let Ok(loaded) = LoadedSnapshot::load_with(data, budget) {
        let _ = tools::summary(&loaded, None);
        for id in 0..64 {
            let _ = tools::retaining_paths(&loaded, f64::from(id), Some(1e9), Some(1e9), None, None);
        }
    }
});
