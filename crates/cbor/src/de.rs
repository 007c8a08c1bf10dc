//! A serde deserializer over a CBOR message, for readers that want a few fields of a large
//! reply (the snapshot engine): UTF-8 text is borrowed from the message, and a map or array
//! the reader does not want is skipped in one step, by its envelope's length, where JSON
//! text has to be scanned to its end. Values reach the visitor as they would from
//! `serde_json` reading [`crate::to_json`]'s text: whole doubles as integers, binary data as
//! base64, non-finite numbers as null.

use crate::CborError;
use crate::cursor::Cursor;
use base64::Engine;
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::fmt;

/// Nesting a reader may descend into (serde_json's own bound: visitors recurse).
const MAX_NESTING: usize = 128;

/// Why a message did not deserialize.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeError(String);

impl fmt::Display for DeError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DeError {}

impl de::Error for DeError {
    fn custom<T: fmt::Display>(message: T) -> Self {
        DeError(message.to_string())
    }
}

impl From<CborError> for DeError {
    fn from(error: CborError) -> Self {
        DeError(error.to_string())
    }
}

/// Deserializes one whole message (its envelope included) with `seed`.
pub fn from_message_seed<'de, S: DeserializeSeed<'de>>(
    message: &'de [u8],
    seed: S,
) -> Result<S::Value, DeError> {
    if !message.starts_with(&[0xd8, 0x18]) {
        return Err(CborError::NotAnEnvelope.into());
    }
    let mut deserializer = Deserializer {
        cursor: Cursor::new(message),
        depth: 0,
    };
    let value = seed.deserialize(&mut deserializer)?;
    match message.len() - deserializer.cursor.pos {
        0 => Ok(value),
        extra => Err(CborError::Trailing(extra).into()),
    }
}

/// Reads the items of one message.
pub struct Deserializer<'de> {
    cursor: Cursor<'de>,
    /// Maps and arrays open around the item being read.
    depth: usize,
}

impl<'de> Deserializer<'de> {
    /// Skips one item: an enveloped map or array in one step.
    fn skip(&mut self) -> Result<(), DeError> {
        let mut open: Vec<Option<u64>> = Vec::new();
        loop {
            if let Some(top) = open.last_mut() {
                let ended = match top {
                    None if self.cursor.peek()? == 0xff => {
                        self.cursor.pos += 1;
                        true
                    }
                    Some(0) => true,
                    _ => false,
                };
                if ended {
                    open.pop();
                    if open.is_empty() {
                        return Ok(());
                    }
                    continue;
                }
                if let Some(remaining) = top {
                    *remaining -= 1;
                }
            }
            let at = self.cursor.pos;
            let (initial, argument) = self.cursor.head()?;
            match (initial >> 5, argument) {
                (0 | 1, Some(_)) | (7, Some(20..=23)) if initial < 0xf8 => {}
                (7, Some(_)) if matches!(initial, 0xf9..=0xfb) => {}
                (2 | 3, Some(len)) => {
                    self.cursor.take(len)?;
                }
                (6, Some(24)) => {
                    self.cursor.pos = self.cursor.envelope(at)?;
                }
                (6, Some(22)) => {
                    self.cursor.binary(at)?;
                }
                (4, count) => {
                    if open.len() >= MAX_NESTING {
                        return Err(CborError::TooDeep.into());
                    }
                    open.push(count);
                    continue;
                }
                (5, count) => {
                    if open.len() >= MAX_NESTING {
                        return Err(CborError::TooDeep.into());
                    }
                    let items = count
                        .map(|n| n.checked_mul(2))
                        .map(|n| n.unwrap_or(u64::MAX));
                    open.push(items);
                    continue;
                }
                _ => {
                    return Err(self
                        .cursor
                        .unexpected(at, "not an item Chromium writes")
                        .into());
                }
            }
            if open.is_empty() {
                return Ok(());
            }
        }
    }

    fn nest(&mut self) -> Result<(), DeError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(CborError::TooDeep.into());
        }
        Ok(())
    }
}

/// A double as `serde_json` would read the text `to_json` writes for it.
fn visit_double<'de, V: Visitor<'de>>(value: f64, visitor: V) -> Result<V::Value, DeError> {
    if !value.is_finite() {
        visitor.visit_unit()
    } else if value.fract() == 0.0 && (0.0..18_446_744_073_709_551_616.0).contains(&value) {
        visitor.visit_u64(value as u64)
    } else if value.fract() == 0.0 && (-9_223_372_036_854_775_808.0..0.0).contains(&value) {
        visitor.visit_i64(value as i64)
    } else {
        visitor.visit_f64(value)
    }
}

impl<'de> de::Deserializer<'de> for &mut Deserializer<'de> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        let at = self.cursor.pos;
        let (initial, argument) = self.cursor.head()?;
        match (initial >> 5, argument) {
            (0, Some(n)) => visitor.visit_u64(n),
            (1, Some(n)) => match i64::try_from(n) {
                Ok(n) => visitor.visit_i64(-1 - n),
                Err(_) => visitor.visit_f64(-1.0 - n as f64),
            },
            (2, Some(len)) => {
                let bytes = self.cursor.take(len)?;
                visitor.visit_string(self.cursor.utf16(bytes, at)?)
            }
            (3, Some(len)) => match String::from_utf8_lossy(self.cursor.take(len)?) {
                Cow::Borrowed(text) => visitor.visit_borrowed_str(text),
                Cow::Owned(repaired) => visitor.visit_string(repaired),
            },
            (4 | 5, _) => {
                self.cursor.pos = at;
                self.container(None, visitor)
            }
            (6, Some(24)) => {
                let end = self.cursor.envelope(at)?;
                self.container(Some(end), visitor)
            }
            (6, Some(22)) => {
                let bytes = self.cursor.binary(at)?;
                visitor.visit_string(base64::engine::general_purpose::STANDARD.encode(bytes))
            }
            (7, _) => match initial {
                0xf4 => visitor.visit_bool(false),
                0xf5 => visitor.visit_bool(true),
                0xf6 | 0xf7 => visitor.visit_unit(),
                0xf9 => visit_double(crate::decode::half(argument.unwrap_or(0) as u16), visitor),
                0xfa => visit_double(
                    f64::from(f32::from_bits(argument.unwrap_or(0) as u32)),
                    visitor,
                ),
                0xfb => visit_double(f64::from_bits(argument.unwrap_or(0)), visitor),
                _ => Err(self
                    .cursor
                    .unexpected(at, "not an item Chromium writes")
                    .into()),
            },
            _ => Err(self
                .cursor
                .unexpected(at, "not an item Chromium writes")
                .into()),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        if matches!(self.cursor.peek()?, 0xf6 | 0xf7) {
            self.cursor.pos += 1;
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    /// Binary data (tag 22) as the bytes themselves, borrowed from the message; anything
    /// else as [`deserialize_any`](de::Deserializer::deserialize_any) gives it.
    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        if self.cursor.peek()? != 0xd6 {
            return self.deserialize_any(visitor);
        }
        let at = self.cursor.pos;
        self.cursor.pos += 1;
        visitor.visit_borrowed_bytes(self.cursor.binary(at)?)
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.skip()?;
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier
    }
}

impl<'de> Deserializer<'de> {
    /// A map or array starting at `pos`, inside an envelope ending at `end` when given.
    fn container<V: Visitor<'de>>(
        &mut self,
        end: Option<usize>,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        self.nest()?;
        let (initial, argument) = self.cursor.head()?;
        let is_map = initial >> 5 == 5;
        let remaining = match (is_map, argument) {
            (_, None) => None,
            (false, Some(n)) => Some(n),
            (true, Some(n)) => Some(
                n.checked_mul(2)
                    .ok_or(CborError::Truncated(self.cursor.pos))?,
            ),
        };
        let mut access = Access {
            de: self,
            remaining,
        };
        let value = if is_map {
            visitor.visit_map(&mut access)?
        } else {
            visitor.visit_seq(&mut access)?
        };
        // What the visitor left unread, up to the container's end.
        while access.more()? {
            access.take_one();
            access.de.skip()?;
        }
        if end.is_some_and(|end| end != self.cursor.pos) {
            return Err(CborError::EnvelopeLength(self.cursor.pos).into());
        }
        self.depth -= 1;
        Ok(value)
    }
}

/// The entries of one open map or array.
struct Access<'a, 'de> {
    de: &'a mut Deserializer<'de>,
    /// Items left in a definite-length one (a map counts keys and values).
    remaining: Option<u64>,
}

impl Access<'_, '_> {
    /// Whether another item follows; consumes the break that ends an indefinite one.
    fn more(&mut self) -> Result<bool, DeError> {
        match self.remaining {
            Some(left) => Ok(left > 0),
            None if self.de.cursor.peek()? == 0xff => {
                self.de.cursor.pos += 1;
                self.remaining = Some(0);
                Ok(false)
            }
            None => Ok(true),
        }
    }

    /// Counts the item about to be read against a definite length.
    fn take_one(&mut self) {
        if let Some(remaining) = &mut self.remaining {
            *remaining = remaining.saturating_sub(1);
        }
    }
}

impl<'de> MapAccess<'de> for Access<'_, 'de> {
    type Error = DeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeError> {
        if !self.more()? {
            return Ok(None);
        }
        if !matches!(self.de.cursor.peek()? >> 5, 2 | 3) {
            let cursor = &self.de.cursor;
            return Err(cursor
                .unexpected(cursor.pos, "a map key must be a string")
                .into());
        }
        self.take_one();
        seed.deserialize(&mut *self.de).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, DeError> {
        if !self.more()? {
            let cursor = &self.de.cursor;
            return Err(cursor
                .unexpected(cursor.pos, "a map ends after a key")
                .into());
        }
        self.take_one();
        seed.deserialize(&mut *self.de)
    }
}

impl<'de> SeqAccess<'de> for Access<'_, 'de> {
    type Error = DeError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, DeError> {
        if !self.more()? {
            return Ok(None);
        }
        self.take_one();
        seed.deserialize(&mut *self.de).map(Some)
    }
}
