//! A component's copy-on-write memory images, made when it is linked, with the kernel's
//! transient refusals tried again.
//!
//! On Linux wasmtime copies each module's initial memory into a memfd the first time the module
//! is instantiated, and seals it against writes so no instance can change what the next one
//! starts from. The kernel refuses that seal (EBUSY) while any page of the file holds a reference
//! besides the file's own, and waits only about 150 ms for one to go: on a loaded machine page
//! reclaim or compaction can hold a page longer, and CI saw the TypeScript plugin (a JavaScript
//! engine in its initial memory) refused with "cannot add seals to the memfd". wasmtime keeps no failed image, so trying again makes a
//! fresh memfd; only refusals that say "busy" are tried again, anything else is the error.

use std::io::ErrorKind;
use std::time::Duration;
use wasmtime::component::Component;

/// Pauses before each new try: about 1.6 s in all, on top of the kernel's own waits.
const BACKOFF: [Duration; 6] = [
    Duration::from_millis(25),
    Duration::from_millis(50),
    Duration::from_millis(100),
    Duration::from_millis(200),
    Duration::from_millis(400),
    Duration::from_millis(800),
];

/// Makes every memory image of `component` now, so a refusal is met while it is linked (and
/// tried again), not by a call.
pub fn initialize(component: &Component) -> wasmtime::Result<()> {
    retry_while_busy(&BACKOFF, || component.initialize_copy_on_write_image())
}

/// Runs `make` until it succeeds, fails for a reason other than a busy resource, or `backoff`
/// runs out; the last error says how many times it was tried.
fn retry_while_busy(
    backoff: &[Duration],
    mut make: impl FnMut() -> wasmtime::Result<()>,
) -> wasmtime::Result<()> {
    let mut pauses = backoff.iter();
    loop {
        let error = match make() {
            Ok(()) => return Ok(()),
            Err(error) if is_busy(&error) => error,
            Err(error) => return Err(error),
        };
        match pauses.next() {
            Some(pause) => {
                tracing::warn!(%error, ?pause, "the kernel refused a memory image; trying again");
                std::thread::sleep(*pause);
            }
            None => {
                return Err(error.context(format!(
                    "the kernel refused the plugin's memory image {} times as busy (EBUSY: pages \
                     of it were held by the kernel, as under memory pressure); try again when \
                     the machine is less loaded",
                    backoff.len() + 1
                )));
            }
        }
    }
}

/// Whether the error is an OS error saying a resource was busy, anywhere in its causes.
fn is_busy(error: &wasmtime::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == ErrorKind::ResourceBusy)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    /// A memfd sealed the way wasmtime seals its images (the same crate, so the same error),
    /// while `mapped_for_writing` holds a writable shared mapping of it: the kernel's real EBUSY.
    #[allow(unsafe_code)]
    fn seal_memfd(mapped_for_writing: bool) -> wasmtime::Result<()> {
        let memfd = memfd::MemfdOptions::new()
            .allow_sealing(true)
            .create("memory-image-test")?;
        memfd.as_file().set_len(4096)?;
        let mapping = mapped_for_writing.then(|| {
            // SAFETY: a fresh shared mapping of a file this function owns, unmapped below.
            let address = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    4096,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED,
                    memfd.as_file().as_raw_fd(),
                    0,
                )
            };
            assert_ne!(address, libc::MAP_FAILED, "mmap of the memfd");
            address
        });
        let sealed = memfd.add_seals(&[
            memfd::FileSeal::SealGrow,
            memfd::FileSeal::SealShrink,
            memfd::FileSeal::SealWrite,
            memfd::FileSeal::SealSeal,
        ]);
        if let Some(address) = mapping {
            // SAFETY: the mapping made above, not used after this.
            unsafe { libc::munmap(address, 4096) };
        }
        Ok(sealed?)
    }

    #[test]
    fn the_kernels_busy_refusal_of_a_seal_is_recognised() {
        let error = seal_memfd(true).expect_err("a mapped memfd cannot be sealed against writes");
        assert!(is_busy(&error), "{error:#}");
        assert!(
            error.to_string().contains("cannot add seals to the memfd"),
            "{error:#}"
        );
        seal_memfd(false).expect("an unmapped memfd can be sealed");
    }

    #[test]
    fn a_busy_refusal_is_tried_again_until_the_seal_lands() {
        let mut tries = 0;
        let pauses = [Duration::ZERO; 3];
        retry_while_busy(&pauses, || {
            tries += 1;
            seal_memfd(tries < 3)
        })
        .expect("the third try has nothing mapped");
        assert_eq!(tries, 3);
    }

    #[test]
    fn a_refusal_that_lasts_is_named_after_the_last_try() {
        let mut tries = 0;
        let error = retry_while_busy(&[Duration::ZERO; 2], || {
            tries += 1;
            seal_memfd(true)
        })
        .expect_err("every try is busy");
        assert_eq!(tries, 3);
        let message = format!("{error:#}");
        assert!(message.contains("3 times as busy"), "{message}");
        assert!(
            message.contains("cannot add seals to the memfd"),
            "{message}"
        );
    }

    #[test]
    fn other_errors_are_not_tried_again() {
        let mut tries = 0;
        let error = retry_while_busy(&[Duration::ZERO; 3], || {
            tries += 1;
            Err(wasmtime::Error::new(std::io::Error::from(
                ErrorKind::PermissionDenied,
            )))
        })
        .expect_err("a refusal that is not busy");
        assert_eq!(tries, 1);
        assert!(!format!("{error:#}").contains("times as busy"));
    }

    /// Whether an open memfd of wasmtime's memory images in this process begins with `data`.
    fn an_image_begins_with(data: &[u8]) -> bool {
        let Ok(fds) = std::fs::read_dir("/proc/self/fd") else {
            return false;
        };
        fds.flatten().any(|fd| {
            let is_image = std::fs::read_link(fd.path())
                .is_ok_and(|target| target.to_string_lossy().contains("wasm-memory-image"));
            is_image && std::fs::read(fd.path()).is_ok_and(|contents| contents.starts_with(data))
        })
    }

    #[test]
    fn a_components_images_are_made_when_it_is_linked() {
        let mut config = wasmtime::Config::new();
        config.wasm_component_model(true);
        let engine = wasmtime::Engine::new(&config).expect("an engine with the component model");
        // (component (core module (memory 1) (data (i32.const 0) "<marker>"))): a marker no
        // other test's image holds, since the tests share this process's descriptors.
        let marker = format!("memory-image-test-{}", std::process::id());
        let data_len = u8::try_from(marker.len()).expect("a short marker");
        let mut module = vec![0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
        module.extend([0x05, 0x03, 0x01, 0x00, 0x01]); // one memory of one page
        // One active segment at offset 0 of memory 0: count, flags, `i32.const 0; end`, bytes.
        module.extend([0x0b, 6 + data_len, 0x01, 0x00, 0x41, 0x00, 0x0b, data_len]);
        module.extend(marker.as_bytes());
        let mut bytes = vec![0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00, 0x01];
        bytes.push(u8::try_from(module.len()).expect("a module shorter than 128 bytes"));
        bytes.extend_from_slice(&module);
        let component = Component::new(&engine, &bytes).expect("a valid component");
        assert!(
            !an_image_begins_with(marker.as_bytes()),
            "no image before linking"
        );
        initialize(&component).expect("an idle machine seals at once");
        assert!(
            an_image_begins_with(marker.as_bytes()),
            "the image is made when the component is linked, not at its first call"
        );
    }
}
