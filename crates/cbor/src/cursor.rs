//! Reading Chromium's CBOR items one head at a time, with every length checked against the
//! input before it is used: what the converter (`decode`) and the deserializer (`de`) share.

use crate::CborError;

/// A position in one message.
pub(crate) struct Cursor<'a> {
    pub input: &'a [u8],
    pub pos: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(input: &'a [u8]) -> Cursor<'a> {
        Cursor { input, pos: 0 }
    }

    pub fn peek(&self) -> Result<u8, CborError> {
        self.input
            .get(self.pos)
            .copied()
            .ok_or(CborError::Truncated(self.pos))
    }

    /// The next `len` bytes, borrowed from the message.
    pub fn take(&mut self, len: u64) -> Result<&'a [u8], CborError> {
        let input: &'a [u8] = self.input;
        let end = usize::try_from(len)
            .ok()
            .and_then(|len| self.pos.checked_add(len))
            .filter(|end| *end <= input.len())
            .ok_or(CborError::Truncated(self.pos))?;
        let bytes = &input[self.pos..end];
        self.pos = end;
        Ok(bytes)
    }

    /// An error naming the byte at `at`.
    pub fn unexpected(&self, at: usize, why: &'static str) -> CborError {
        CborError::Unexpected {
            byte: self.input.get(at).copied().unwrap_or(0),
            at,
            why,
        }
    }

    /// An item's initial byte and its argument (`None` for indefinite length).
    pub fn head(&mut self) -> Result<(u8, Option<u64>), CborError> {
        let at = self.pos;
        let initial = self.peek()?;
        self.pos += 1;
        let info = initial & 0x1f;
        match info {
            0..=23 => Ok((initial, Some(u64::from(info)))),
            24..=27 => {
                let bytes = self
                    .take(1 << (info - 24))
                    .map_err(|_| CborError::Truncated(at))?;
                let value = bytes.iter().fold(0u64, |v, b| (v << 8) | u64::from(*b));
                Ok((initial, Some(value)))
            }
            31 => Ok((initial, None)),
            _ => Err(self.unexpected(at, "reserved additional information")),
        }
    }

    /// After tag 24 (at `at`): the envelope's byte string head, checked to hold a map or an
    /// array, which is left to read. Returns where the envelope ends.
    pub fn envelope(&mut self, at: usize) -> Result<usize, CborError> {
        let (inner, len) = self.head()?;
        let (2, Some(len)) = (inner >> 5, len) else {
            return Err(self.unexpected(at, "an envelope must hold a byte string"));
        };
        let end = usize::try_from(len)
            .ok()
            .and_then(|len| self.pos.checked_add(len))
            .filter(|end| *end <= self.input.len())
            .ok_or(CborError::Truncated(self.pos))?;
        if !matches!(self.peek()? >> 5, 4 | 5) {
            return Err(self.unexpected(self.pos, "an envelope must hold a map or an array"));
        }
        Ok(end)
    }

    /// After tag 22 (at `at`): the binary data's bytes.
    pub fn binary(&mut self, at: usize) -> Result<&'a [u8], CborError> {
        let (inner, len) = self.head()?;
        let (2, Some(len)) = (inner >> 5, len) else {
            return Err(self.unexpected(at, "tag 22 must hold a byte string"));
        };
        self.take(len)
    }

    /// A byte string (at `at`) read as Chromium's UTF-16LE text; unpaired surrogates become
    /// U+FFFD.
    pub fn utf16(&self, bytes: &[u8], at: usize) -> Result<String, CborError> {
        if bytes.len() % 2 == 1 {
            return Err(self.unexpected(at, "a UTF-16 string of an odd number of bytes"));
        }
        let units = bytes
            .chunks_exact(2)
            .map(|u| u16::from_le_bytes([u[0], u[1]]));
        Ok(char::decode_utf16(units)
            .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
            .collect())
    }
}
