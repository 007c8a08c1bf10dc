//! Compresses the built-in tools for embedding: each tool's module and precompiled code with
//! zstd against a dictionary that is one of the tools itself (its raw bytes, zstd's "raw
//! content" dictionary). The 63 tools are near copies of each other (the SDK, serde_json and
//! the standard library make up most of each), which gzip cannot see across files (its window
//! is 32 KiB) but a whole tool as the dictionary can: they take about 5 MB instead of 41 MB in
//! the binary and 17 MB in a gzip-packed download (BENCHMARKS.md, "From nothing"). Each tool
//! stays a frame of its own, so a start decompresses only the tool it links.

use std::path::Path;

/// One kind of bytes (modules, or precompiled code) of every tool, packed.
pub struct Packed {
    /// The dictionary, compressed on its own, and its length unpacked.
    pub dictionary: Vec<u8>,
    pub dictionary_len: usize,
    /// Each tool's bytes, compressed against the dictionary, in the order given.
    pub frames: Vec<Vec<u8>>,
}

/// Packs `items` (one per tool, same order back): the median-sized one is the dictionary, so
/// the choice does not depend on which tools exist. A release build spends the highest level
/// (about 10 s on two cores); other builds a quick one, a little larger.
pub fn pack(items: &[&[u8]]) -> Packed {
    let level = if std::env::var("PROFILE").as_deref() == Ok("release") {
        19
    } else {
        9
    };
    let mut by_size: Vec<&[u8]> = items.to_vec();
    by_size.sort_by(|a, b| (a.len(), a).cmp(&(b.len(), b)));
    let dictionary: Vec<u8> = by_size
        .get(by_size.len() / 2)
        .map_or(Vec::new(), |item| item.to_vec());
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let chunk = items.len().div_ceil(threads).max(1);
    let frames = std::thread::scope(|scope| {
        let workers: Vec<_> = items
            .chunks(chunk)
            .map(|part| {
                let dictionary = &dictionary;
                scope.spawn(move || {
                    let mut compressor = zstd::bulk::Compressor::with_dictionary(level, dictionary)
                        .unwrap_or_else(|error| panic!("zstd cannot load the dictionary: {error}"));
                    // A checksum of what each frame unpacks to: the runtime trusts the code.
                    compressor
                        .include_checksum(true)
                        .unwrap_or_else(|error| panic!("zstd: {error}"));
                    part.iter()
                        .map(|item| {
                            compressor
                                .compress(item)
                                .unwrap_or_else(|error| panic!("zstd cannot compress: {error}"))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|worker| {
                worker
                    .join()
                    .unwrap_or_else(|_| panic!("a zstd worker panicked"))
            })
            .collect()
    });
    let dictionary_len = dictionary.len();
    let dictionary = zstd::bulk::compress(&dictionary, level)
        .unwrap_or_else(|error| panic!("zstd cannot compress the dictionary: {error}"));
    Packed {
        dictionary,
        dictionary_len,
        frames,
    }
}

/// The Rust expression of one packed item for the generated table: its frame, written to
/// `path` and `include_bytes!`-ed, and the length it unpacks to.
pub fn expression(path: &Path, frame: &[u8], unpacked_len: usize) -> String {
    crate::build_common::write(path, frame);
    format!(
        "Packed::zstd(include_bytes!({:?}), {unpacked_len})",
        path.display().to_string()
    )
}
