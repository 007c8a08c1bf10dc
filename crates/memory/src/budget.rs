//! What one load may cost: a byte budget charged with what parsing and analysis really
//! allocate, as they allocate (a load past it is refused mid-parse, not after), and a flag
//! the host raises when the call that asked for the load ended.

use crate::HeapError;
use std::sync::atomic::{AtomicBool, Ordering};

/// The limits of one load.
#[derive(Clone, Copy)]
pub struct LoadBudget<'a> {
    /// The most the load may allocate, parsing and analysis together.
    pub max_bytes: usize,
    /// The file's length when known: no section can hold more numbers or strings than it
    /// has bytes, so no capacity is reserved past what the file can fill.
    pub file_len: Option<u64>,
    /// Raised when the caller stopped waiting: the load stops at its next check.
    pub cancel: Option<&'a AtomicBool>,
}

impl LoadBudget<'_> {
    /// No limit (tests, trusted files).
    pub fn unlimited() -> LoadBudget<'static> {
        LoadBudget {
            max_bytes: usize::MAX,
            file_len: None,
            cancel: None,
        }
    }
}

/// A load's running account against its budget.
pub(crate) struct Meter<'a> {
    budget: LoadBudget<'a>,
    used: usize,
}

impl<'a> Meter<'a> {
    pub(crate) fn new(budget: LoadBudget<'a>) -> Meter<'a> {
        Meter { budget, used: 0 }
    }

    /// Records `bytes` about to be allocated, or refuses them.
    pub(crate) fn charge(&mut self, bytes: usize) -> Result<(), HeapError> {
        self.fits(bytes)?;
        self.used += bytes;
        Ok(())
    }

    /// Whether `bytes` more (held for a moment, not kept) would still be within the budget.
    pub(crate) fn fits(&self, bytes: usize) -> Result<(), HeapError> {
        match self.used.checked_add(bytes) {
            Some(total) if total <= self.budget.max_bytes => Ok(()),
            _ => Err(HeapError::Budget {
                needed: self.used.saturating_add(bytes),
                max_bytes: self.budget.max_bytes,
            }),
        }
    }

    /// Gives back what was charged and freed (a temporary buffer).
    pub(crate) fn release(&mut self, bytes: usize) {
        self.used = self.used.saturating_sub(bytes);
    }

    /// Stops the load when its caller has gone.
    pub(crate) fn check(&self) -> Result<(), HeapError> {
        match self.budget.cancel {
            Some(flag) if flag.load(Ordering::Relaxed) => Err(HeapError::Cancelled),
            _ => Ok(()),
        }
    }

    /// The most elements of `size` bytes a section of the file can hold.
    pub(crate) fn file_can_hold(&self, bytes_per_element: u64) -> usize {
        self.budget
            .file_len
            .map_or(usize::MAX, |len| (len / bytes_per_element.max(1)) as usize)
    }
}

/// Pushes onto `vec`, charging the meter for the capacity a growth allocates before it
/// happens.
pub(crate) fn push<T>(vec: &mut Vec<T>, value: T, meter: &mut Meter) -> Result<(), HeapError> {
    if vec.len() == vec.capacity() {
        let more = vec.capacity().max(1024);
        meter.charge(more.saturating_mul(std::mem::size_of::<T>()))?;
        vec.reserve_exact(more);
    }
    vec.push(value);
    Ok(())
}
