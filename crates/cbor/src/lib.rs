//! Chromium's DevTools messages in CBOR, the form the browser keeps them in internally and
//! speaks on `--remote-debugging-pipe=cbor`, converted to and from JSON text.
//!
//! Why: on the JSON pipe or WebSocket the browser converts every reply from CBOR to JSON
//! before sending it, and for the megabytes of an `Accessibility.getFullAXTree` reply that
//! conversion is a third of the command's time (a 38,000-node page: about 850 ms as JSON,
//! 535 ms as CBOR). Converting here instead costs a few milliseconds, and everything above the
//! wire keeps reading the JSON it always read.
//!
//! Chromium's dialect of CBOR (RFC 8949), as `crdtp/cbor.cc` writes and reads it:
//! - every message, and every map or array inside one, sits in an *envelope*: tag 24 over a
//!   byte string with a 4-byte length, which holds an indefinite-length map or array;
//! - text is either UTF-8 (a text string) or UTF-16LE (a byte string);
//! - binary data is a byte string under tag 22 ("expected conversion to base64"), which the
//!   JSON form carries as base64 text;
//! - integers are 32-bit; other numbers are doubles.

mod cursor;
mod de;
mod decode;
mod encode;

pub use de::{DeError, Deserializer, from_message_seed};
pub use decode::to_json;
pub use encode::from_json;

/// Bytes before a message's content: tag 24, then the head of a byte string with a 4-byte
/// length (`d8 18 5a` and the length, big-endian).
pub const HEADER_LEN: usize = 7;

/// Nesting beyond this is refused (a protocol message is a few levels deep; JSON readers
/// downstream stop at 128).
pub const MAX_DEPTH: usize = 512;

/// Why a message could not be converted.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CborError {
    #[error("the message ends inside an item (at byte {0})")]
    Truncated(usize),
    #[error(
        "a message must start with an envelope (tag 24 over a byte string with a 4-byte length)"
    )]
    NotAnEnvelope,
    #[error("unexpected CBOR byte {byte:#04x} at byte {at}: {why}")]
    Unexpected {
        byte: u8,
        at: usize,
        why: &'static str,
    },
    #[error("an envelope's length does not match the map or array inside it (at byte {0})")]
    EnvelopeLength(usize),
    #[error("the message nests more than {MAX_DEPTH} maps and arrays")]
    TooDeep,
    #[error("{0} bytes follow the message's end")]
    Trailing(usize),
    #[error("a map or array of {0} bytes does not fit in an envelope")]
    TooLarge(usize),
}

/// The length of the content that follows a message's header, or why the header is not one.
pub fn content_len(header: &[u8; HEADER_LEN]) -> Result<usize, CborError> {
    if header[..3] != [0xd8, 0x18, 0x5a] {
        return Err(CborError::NotAnEnvelope);
    }
    let len = u32::from_be_bytes([header[3], header[4], header[5], header[6]]);
    Ok(len as usize)
}

/// The `id` of a reply, read without converting the message: Chromium writes `id` as a
/// reply's first key (an event has none), so a reply that cannot be converted can still be
/// answered with an error instead of never.
pub fn reply_id(message: &[u8]) -> Option<u64> {
    let rest = message.get(HEADER_LEN..)?.strip_prefix(b"\xbf\x62id")?;
    let (&initial, rest) = rest.split_first()?;
    let width = match initial {
        0x00..=0x17 => return Some(u64::from(initial)),
        0x18..=0x1b => 1usize << (initial - 0x18),
        _ => return None,
    };
    let bytes = rest.get(..width)?;
    Some(
        bytes
            .iter()
            .fold(0u64, |value, b| (value << 8) | u64::from(*b)),
    )
}

#[cfg(test)]
mod tests;
