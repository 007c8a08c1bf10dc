//! CBOR message -> JSON text, in one pass without recursion: a reply of megabytes is read
//! once and written once, and no input (the browser's, or a corrupted one) can overflow the
//! stack or make it panic.

use crate::cursor::Cursor;
use crate::{CborError, MAX_DEPTH};
use base64::Engine;

/// The JSON text of one whole message (its envelope included), as Chromium's JSON pipe
/// would send it: keys in the same order, integers as integers, doubles as JavaScript prints
/// them, binary data as base64, and non-finite numbers as `null`.
pub fn to_json(message: &[u8]) -> Result<Vec<u8>, CborError> {
    if !message.starts_with(&[0xd8, 0x18]) {
        return Err(CborError::NotAnEnvelope);
    }
    // Keys and quotes make the JSON form a little larger than the CBOR one.
    let mut decoder = Decoder {
        cursor: Cursor::new(message),
        out: Vec::with_capacity(message.len() + message.len() / 8),
        stack: Vec::new(),
    };
    decoder.item()?;
    while let Some(top) = decoder.stack.last() {
        let cursor = &mut decoder.cursor;
        let at_break = top.remaining.is_none() && cursor.peek()? == 0xff;
        if at_break || top.remaining == Some(0) {
            if at_break {
                if top.kind == Kind::Map && top.count % 2 == 1 {
                    return Err(cursor.unexpected(cursor.pos, "a map ends after a key"));
                }
                cursor.pos += 1;
            }
            decoder.close()?;
            continue;
        }
        decoder.separator();
        decoder.item()?;
    }
    match message.len() - decoder.cursor.pos {
        0 => Ok(decoder.out),
        extra => Err(CborError::Trailing(extra)),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Map,
    Array,
}

/// An open map or array.
struct Container {
    kind: Kind,
    /// Items still to come in a definite-length one (a map counts keys and values).
    remaining: Option<u64>,
    /// Items read so far.
    count: u64,
    /// Where the envelope around it ends.
    envelope_end: Option<usize>,
}

struct Decoder<'a> {
    cursor: Cursor<'a>,
    out: Vec<u8>,
    stack: Vec<Container>,
}

impl Decoder<'_> {
    /// `,` or `:` before the next item of the open container.
    fn separator(&mut self) {
        if let Some(top) = self.stack.last()
            && top.count > 0
        {
            let mark = match (top.kind, top.count % 2) {
                (Kind::Map, 1) => b':',
                _ => b',',
            };
            self.out.push(mark);
        }
    }

    /// One item: a scalar is written whole, a map or array is opened.
    fn item(&mut self) -> Result<(), CborError> {
        let start = self.cursor.pos;
        let wants_key = self
            .stack
            .last()
            .is_some_and(|top| top.kind == Kind::Map && top.count % 2 == 0);
        let (initial, argument) = self.cursor.head()?;
        let major = initial >> 5;
        if wants_key && major != 2 && major != 3 {
            return Err(self.cursor.unexpected(start, "a map key must be a string"));
        }
        match (major, argument) {
            (0, Some(n)) => self
                .out
                .extend_from_slice(itoa::Buffer::new().format(n).as_bytes()),
            (1, Some(n)) => {
                let value = -1 - i128::from(n);
                self.out
                    .extend_from_slice(itoa::Buffer::new().format(value).as_bytes());
            }
            (2, Some(len)) => {
                let bytes = self.cursor.take(len)?;
                let text = self.cursor.utf16(bytes, start)?;
                write_string(&mut self.out, &text);
            }
            (3, Some(len)) => {
                // Borrowed when valid (as Chromium writes it), repaired otherwise.
                let text = String::from_utf8_lossy(self.cursor.take(len)?);
                write_string(&mut self.out, &text);
            }
            (4 | 5, _) => self.open(initial, argument, None)?,
            (6, Some(24)) => {
                let end = self.cursor.envelope(start)?;
                let (initial, argument) = self.cursor.head()?;
                self.open(initial, argument, Some(end))?;
            }
            (6, Some(22)) => {
                let bytes = self.cursor.binary(start)?;
                let encoded = base64::engine::general_purpose::STANDARD.encode(bytes);
                write_string(&mut self.out, &encoded);
            }
            (7, Some(20)) if initial == 0xf4 => self.out.extend_from_slice(b"false"),
            (7, Some(21)) if initial == 0xf5 => self.out.extend_from_slice(b"true"),
            (7, Some(22 | 23)) if initial <= 0xf7 => self.out.extend_from_slice(b"null"),
            (7, Some(bits)) if initial == 0xf9 => write_f64(&mut self.out, half(bits as u16)),
            (7, Some(bits)) if initial == 0xfa => {
                write_f64(&mut self.out, f64::from(f32::from_bits(bits as u32)));
            }
            (7, Some(bits)) if initial == 0xfb => write_f64(&mut self.out, f64::from_bits(bits)),
            _ => return Err(self.cursor.unexpected(start, "not an item Chromium writes")),
        }
        if !matches!(major, 4..=6) || (major == 6 && argument == Some(22)) {
            self.completed();
        }
        Ok(())
    }

    fn open(
        &mut self,
        initial: u8,
        argument: Option<u64>,
        envelope_end: Option<usize>,
    ) -> Result<(), CborError> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(CborError::TooDeep);
        }
        let kind = if initial >> 5 == 5 {
            Kind::Map
        } else {
            Kind::Array
        };
        let remaining = match (kind, argument) {
            (_, None) => None,
            (Kind::Array, Some(n)) => Some(n),
            (Kind::Map, Some(n)) => Some(
                n.checked_mul(2)
                    .ok_or(CborError::Truncated(self.cursor.pos))?,
            ),
        };
        self.out.push(if kind == Kind::Map { b'{' } else { b'[' });
        self.stack.push(Container {
            kind,
            remaining,
            count: 0,
            envelope_end,
        });
        Ok(())
    }

    /// Ends the open container, which completes an item of the one around it.
    fn close(&mut self) -> Result<(), CborError> {
        let Some(done) = self.stack.pop() else {
            return Ok(());
        };
        if done.envelope_end.is_some_and(|end| end != self.cursor.pos) {
            return Err(CborError::EnvelopeLength(self.cursor.pos));
        }
        self.out
            .push(if done.kind == Kind::Map { b'}' } else { b']' });
        self.completed();
        Ok(())
    }

    fn completed(&mut self) {
        if let Some(top) = self.stack.last_mut() {
            top.count += 1;
            if let Some(remaining) = &mut top.remaining {
                *remaining = remaining.saturating_sub(1);
            }
        }
    }
}

/// A JSON string: quotes, and escapes for what JSON requires escaped. Runs without an
/// escape (nearly all of a reply) are copied whole.
fn write_string(out: &mut Vec<u8>, text: &str) {
    out.reserve(text.len() + 2);
    out.push(b'"');
    let bytes = text.as_bytes();
    let mut copied = 0;
    for (at, byte) in bytes.iter().enumerate() {
        if !NEEDS_ESCAPE[usize::from(*byte)] {
            continue;
        }
        out.extend_from_slice(&bytes[copied..at]);
        let escape: &[u8] = match byte {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            _ => b"",
        };
        if escape.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(byte >> 4)]);
            out.push(HEX[usize::from(byte & 0xf)]);
        } else {
            out.extend_from_slice(escape);
        }
        copied = at + 1;
    }
    out.extend_from_slice(&bytes[copied..]);
    out.push(b'"');
}

/// The bytes JSON wants escaped in a string: controls, the quote and the backslash.
const NEEDS_ESCAPE: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 0x20 {
        table[byte] = true;
        byte += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

/// A double as Chromium's JSON writer prints it (JavaScript's rules): whole numbers below
/// 10^21 without a fraction, so they read back as integers; `null` for NaN and infinities.
fn write_f64(out: &mut Vec<u8>, value: f64) {
    if !value.is_finite() {
        out.extend_from_slice(b"null");
    } else if value.fract() == 0.0 && value.abs() < 1e21 {
        // Exact: a whole double below 10^21 fits an i128.
        let whole = value as i128;
        out.extend_from_slice(itoa::Buffer::new().format(whole).as_bytes());
    } else {
        out.extend_from_slice(ryu::Buffer::new().format_finite(value).as_bytes());
    }
}

/// An IEEE 754 half-precision float (RFC 8949, appendix D).
pub(crate) fn half(bits: u16) -> f64 {
    let exponent = i32::from((bits >> 10) & 0x1f);
    let mantissa = f64::from(bits & 0x3ff);
    let magnitude = match exponent {
        0 => mantissa * 2f64.powi(-24),
        31 if mantissa == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        _ => (mantissa + 1024.0) * 2f64.powi(exponent - 25),
    };
    if bits & 0x8000 != 0 {
        -magnitude
    } else {
        magnitude
    }
}
