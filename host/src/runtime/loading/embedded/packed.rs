//! How the build packs the built-in tools (`server/packing.rs`): each tool's module and code is
//! a zstd frame against a dictionary that is one of the tools itself. The tools are near copies
//! of each other, so this keeps them at about 5 MB of the binary instead of 41 MB, and a
//! packed download small (gzip cannot see across files). A tool is unpacked only when it is
//! described (a first start, with no remembered definitions) or linked (its first call).

use std::sync::OnceLock;

/// Bytes as the build embedded them: a zstd frame, or stored as they are.
pub struct Packed {
    bytes: &'static [u8],
    /// The length unpacked; `None`: stored.
    unpacked_len: Option<usize>,
    /// Whether `bytes` lie in the binary's read-only data (their pages may be dropped).
    in_binary: bool,
}

impl Packed {
    /// A zstd frame of the binary that unpacks to `unpacked_len` bytes.
    ///
    /// # Safety
    ///
    /// `bytes` must lie in the binary's read-only data (`include_bytes!`): its pages are
    /// dropped once it is unpacked ([`release_pages`]), which is harmless for a file mapping
    /// and would zero memory of the heap.
    #[allow(unsafe_code)]
    pub const unsafe fn zstd(bytes: &'static [u8], unpacked_len: usize) -> Packed {
        Packed {
            bytes,
            unpacked_len: Some(unpacked_len),
            in_binary: true,
        }
    }

    /// Bytes stored as they are (the library's stand-ins, an absent dictionary).
    pub const fn stored(bytes: &'static [u8]) -> Packed {
        Packed {
            bytes,
            unpacked_len: None,
            in_binary: false,
        }
    }

    /// The length the bytes unpack to.
    pub fn unpacked_len(&self) -> usize {
        self.unpacked_len.unwrap_or(self.bytes.len())
    }

    /// The bytes, unpacked against `dictionary` (empty: a frame packed alone). The frames are
    /// part of the binary, so one that does not unpack means a damaged binary, and the error
    /// says so; the loader then refuses the tool like any broken plugin.
    pub fn unpack(&self, dictionary: &[u8]) -> Result<Vec<u8>, String> {
        let Some(len) = self.unpacked_len else {
            return Ok(self.bytes.to_vec());
        };
        let unpacked = zstd::bulk::Decompressor::with_dictionary(dictionary)
            .and_then(|mut decompressor| decompressor.decompress(self.bytes, len))
            .map_err(|error| {
                format!(
                    "its packed copy in the binary is damaged ({error}): reinstall devtools-mcp"
                )
            })?;
        // The frame was read once; its pages are clean copies of the file.
        if self.in_binary {
            release_pages(self.bytes);
        }
        if unpacked.len() != len {
            return Err(format!(
                "its packed copy in the binary unpacks to {} bytes, not {len}: reinstall devtools-mcp",
                unpacked.len()
            ));
        }
        Ok(unpacked)
    }
}

/// The two dictionaries the tools were packed against (one tool's module, one tool's code),
/// each a frame packed alone, unpacked once and kept: 0.6 MB, against unpacking a dictionary
/// for every tool a first start describes.
pub struct Dictionaries {
    wasm: Packed,
    code: Packed,
    unpacked: [OnceLock<Result<Vec<u8>, String>>; 2],
}

impl Dictionaries {
    pub const fn new(wasm: Packed, code: Packed) -> Dictionaries {
        Dictionaries {
            wasm,
            code,
            unpacked: [OnceLock::new(), OnceLock::new()],
        }
    }

    /// The dictionary of the tools' modules.
    pub fn wasm(&self) -> Result<&[u8], String> {
        Self::get(&self.unpacked[0], &self.wasm)
    }

    /// The dictionary of the tools' precompiled code.
    pub fn code(&self) -> Result<&[u8], String> {
        Self::get(&self.unpacked[1], &self.code)
    }

    fn get<'a>(
        slot: &'a OnceLock<Result<Vec<u8>, String>>,
        packed: &Packed,
    ) -> Result<&'a [u8], String> {
        slot.get_or_init(|| packed.unpack(&[]))
            .as_deref()
            .map_err(|error| format!("the dictionary of the built-in tools: {error}"))
    }
}

/// Drops the pages of `bytes`, part of the binary's read-only data, from this process's
/// memory: they are clean copies of the file, read again from it if ever touched. Without
/// this, the packed tools a first start reads to describe them all would stay counted in the
/// server's resident memory for its whole life.
#[allow(unsafe_code)]
fn release_pages(bytes: &'static [u8]) {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let start = (bytes.as_ptr() as usize).next_multiple_of(PAGE);
        let end = (bytes.as_ptr() as usize + bytes.len()) / PAGE * PAGE;
        if end > start {
            // SAFETY: the range lies inside `bytes`, a `'static` slice of the binary's
            // read-only data (`Packed::zstd`'s contract; a private, never-written file
            // mapping): MADV_DONTNEED only drops page-table entries, and the next read faults
            // the same bytes in from the file. Nothing is freed or unmapped, so every
            // reference to the slice stays valid.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_unpacks_against_its_dictionary_and_a_damaged_one_says_reinstall() {
        let dictionary =
            b"the shared part of every tool, repeated: serde_json, std, the SDK".repeat(8);
        let mut tool = dictionary.clone();
        tool.extend_from_slice(b" and a little of its own");
        let frame = zstd::bulk::Compressor::with_dictionary(9, &dictionary)
            .and_then(|mut compressor| compressor.compress(&tool))
            .map(|frame| &*Vec::leak(frame))
            .unwrap_or_default();
        assert!(
            frame.len() < tool.len() / 4,
            "{} of {}",
            frame.len(),
            tool.len()
        );
        // Frames on the heap, not in the binary: `Packed::zstd`'s contract does not hold.
        let on_heap = |bytes: &'static [u8]| Packed {
            bytes,
            unpacked_len: Some(tool.len()),
            in_binary: false,
        };
        let packed = on_heap(frame);
        assert_eq!(packed.unpacked_len(), tool.len());
        assert_eq!(packed.unpack(&dictionary), Ok(tool.clone()));
        let damaged = on_heap(&frame[..frame.len() / 2]);
        let error = damaged.unpack(&dictionary).err().unwrap_or_default();
        assert!(error.contains("reinstall devtools-mcp"), "{error}");
        assert_eq!(Packed::stored(b"as is").unpack(&[]), Ok(b"as is".to_vec()));
    }
}
