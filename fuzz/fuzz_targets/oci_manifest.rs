//! A registry's manifest, of any content (the registry is hostile): `plugin install` reads it
//! (oci-client's manifest and index types through serde, then our checks) before fetching any
//! blob. It must answer a plugin's layers or a reason, without panicking; what it accepts has
//! well-formed digests (they go into URLs) and sizes that are not negative, and its reasons stay
//! short whatever the registry wrote.

#![no_main]

use devtools_mcp::cli::plugin::read_oci_manifest;
use libfuzzer_sys::fuzz_target;

fn well_formed(digest: &str) -> bool {
    digest
        .strip_prefix("sha256:")
        .is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

fuzz_target!(|data: &[u8]| {
    match read_oci_manifest(data) {
        Ok(manifest) => {
            for layer in std::iter::once(&manifest.component).chain(&manifest.signature) {
                assert!(
                    well_formed(&layer.digest),
                    "accepted digest {:?}",
                    layer.digest
                );
                assert!(layer.size >= 0, "accepted size {}", layer.size);
            }
        }
        Err(reason) => assert!(reason.len() <= 512, "a reason of {} bytes", reason.len()),
    }
});
