//! CBOR message -> JSON text, in one pass without recursion: a reply of megabytes is read
//! once and written once, and no input (the browser's, or a corrupted one) can overflow the
//! stack or make it panic.

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
        input: message,
        pos: 0,
        out: Vec::with_capacity(message.len() + message.len() / 8),
        stack: Vec::new(),
    };
    decoder.item()?;
    while let Some(top) = decoder.stack.last() {
        let at_break = top.remaining.is_none() && decoder.peek()? == 0xff;
        if at_break || top.remaining == Some(0) {
            if at_break {
                if top.kind == Kind::Map && top.count % 2 == 1 {
                    return Err(decoder.unexpected("a map ends after a key"));
                }
                decoder.pos += 1;
            }
            decoder.close()?;
            continue;
        }
        decoder.separator();
        decoder.item()?;
    }
    match message.len() - decoder.pos {
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
    input: &'a [u8],
    pos: usize,
    out: Vec<u8>,
    stack: Vec<Container>,
}

impl<'a> Decoder<'a> {
    fn peek(&self) -> Result<u8, CborError> {
        self.input
            .get(self.pos)
            .copied()
            .ok_or(CborError::Truncated(self.pos))
    }

    fn take(&mut self, len: usize) -> Result<&'a [u8], CborError> {
        let end = self
            .pos
            .checked_add(len)
            .filter(|end| *end <= self.input.len())
            .ok_or(CborError::Truncated(self.pos))?;
        let input: &'a [u8] = self.input;
        self.pos = end;
        Ok(&input[end - len..end])
    }

    fn unexpected(&self, why: &'static str) -> CborError {
        CborError::Unexpected {
            byte: self.input.get(self.pos).copied().unwrap_or(0),
            at: self.pos,
            why,
        }
    }

    /// An item's initial byte and its argument (`None` for indefinite length).
    fn head(&mut self) -> Result<(u8, Option<u64>), CborError> {
        let initial = self.peek()?;
        let info = initial & 0x1f;
        let argument = match info {
            0..=23 => {
                self.pos += 1;
                return Ok((initial, Some(u64::from(info))));
            }
            24..=27 => {
                let at = self.pos;
                self.pos += 1;
                let width = 1usize << (info - 24);
                let bytes = self.take(width).map_err(|_| CborError::Truncated(at))?;
                bytes
                    .iter()
                    .fold(0u64, |value, b| (value << 8) | u64::from(*b))
            }
            31 => {
                self.pos += 1;
                return Ok((initial, None));
            }
            _ => return Err(self.unexpected("reserved additional information")),
        };
        Ok((initial, Some(argument)))
    }

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
        let start = self.pos;
        let wants_key = self
            .stack
            .last()
            .is_some_and(|top| top.kind == Kind::Map && top.count % 2 == 0);
        let (initial, argument) = self.head()?;
        let major = initial >> 5;
        if wants_key && major != 2 && major != 3 {
            self.pos = start;
            return Err(self.unexpected("a map key must be a string"));
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
                let bytes = self.take(usize::try_from(len).unwrap_or(usize::MAX))?;
                if bytes.len() % 2 == 1 {
                    self.pos = start;
                    return Err(self.unexpected("a UTF-16 string of an odd number of bytes"));
                }
                let units = bytes
                    .chunks_exact(2)
                    .map(|u| u16::from_le_bytes([u[0], u[1]]));
                let text: String = char::decode_utf16(units)
                    .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
                    .collect();
                write_string(&mut self.out, &text);
            }
            (3, Some(len)) => {
                let bytes = self.take(usize::try_from(len).unwrap_or(usize::MAX))?;
                match std::str::from_utf8(bytes) {
                    Ok(text) => write_string(&mut self.out, text),
                    Err(_) => write_string(&mut self.out, &String::from_utf8_lossy(bytes)),
                }
            }
            (4 | 5, _) => self.open(initial, argument, None)?,
            (6, Some(24)) => self.envelope(start)?,
            (6, Some(22)) => {
                let (inner, len) = self.head()?;
                let (2, Some(len)) = (inner >> 5, len) else {
                    self.pos = start;
                    return Err(self.unexpected("tag 22 must hold a byte string"));
                };
                let bytes = self.take(usize::try_from(len).unwrap_or(usize::MAX))?;
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
            _ => {
                self.pos = start;
                return Err(self.unexpected("not an item Chromium writes"));
            }
        }
        if !matches!(major, 4..=6) || (major == 6 && argument == Some(22)) {
            self.completed();
        }
        Ok(())
    }

    /// Tag 24 over a byte string that holds exactly one map or array.
    fn envelope(&mut self, start: usize) -> Result<(), CborError> {
        let (inner, len) = self.head()?;
        let (2, Some(len)) = (inner >> 5, len) else {
            self.pos = start;
            return Err(self.unexpected("an envelope must hold a byte string"));
        };
        let end = self
            .pos
            .checked_add(usize::try_from(len).unwrap_or(usize::MAX))
            .filter(|end| *end <= self.input.len())
            .ok_or(CborError::Truncated(self.pos))?;
        let (initial, argument) = self.head()?;
        if !matches!(initial >> 5, 4 | 5) {
            self.pos -= 1;
            return Err(self.unexpected("an envelope must hold a map or an array"));
        }
        self.open(initial, argument, Some(end))
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
            (Kind::Map, Some(n)) => Some(n.checked_mul(2).ok_or(CborError::Truncated(self.pos))?),
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
        if done.envelope_end.is_some_and(|end| end != self.pos) {
            return Err(CborError::EnvelopeLength(self.pos));
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
