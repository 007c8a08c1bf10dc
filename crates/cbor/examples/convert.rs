//! Times converting a captured message, and reading its JSON as a `serde_json::Value`:
//! `cargo run -p devtools-cbor --example convert -- FILE` (optimised in dev builds too).
fn main() {
    let path = std::env::args().nth(1).expect("usage: convert FILE");
    let bytes = std::fs::read(path).expect("read");
    for _ in 0..10 {
        let started = std::time::Instant::now();
        let json = devtools_cbor::to_json(&bytes).expect("converts");
        let converted = started.elapsed();
        let started = std::time::Instant::now();
        let value: serde_json::Value = serde_json::from_slice(&json).expect("JSON");
        let parsed = started.elapsed();
        let keys = value.as_object().map_or(0, |o| o.len());
        println!(
            "{} -> {} bytes: converted in {converted:?}, read as JSON in {parsed:?} ({keys} keys)",
            bytes.len(),
            json.len()
        );
    }
}
