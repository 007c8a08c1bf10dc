//! A streaming reader of the `.heapsnapshot` JSON document.
//!
//! Snapshots run to hundreds of megabytes, almost all of it two flat integer arrays (`nodes`
//! and `edges`) and one string table. Building a `serde_json::Value` tree would cost several
//! times the file in memory, so the top-level object is walked by hand: the small `snapshot`
//! header goes through serde, the integer arrays straight into `Vec<u32>`/`Vec<i64>`, the
//! strings into one `Vec<String>`, and anything unknown is skipped without being kept.

use crate::HeapError;
use crate::budget::{self, Meter};
use serde::Deserialize;
use std::io::{BufRead, BufReader, Read};

/// The `snapshot` header: field layouts and counts.
#[derive(Debug, Clone, Deserialize, Default)]
pub struct Header {
    pub meta: Meta,
    #[serde(default)]
    pub node_count: usize,
    #[serde(default)]
    pub edge_count: usize,
    #[serde(default)]
    pub trace_function_count: u64,
    #[serde(default)]
    pub root_index: Option<u64>,
    #[serde(default)]
    pub extra_native_bytes: Option<f64>,
}

#[derive(Debug, Clone, Deserialize, Default)]
pub struct Meta {
    pub node_fields: Vec<String>,
    /// `node_types[i]` is the list of type names for field `i` when that field is an enum.
    pub node_types: Vec<serde_json::Value>,
    pub edge_fields: Vec<String>,
    pub edge_types: Vec<serde_json::Value>,
    #[serde(default)]
    pub location_fields: Option<Vec<String>>,
    #[serde(default)]
    pub sample_fields: Option<Vec<String>>,
    #[serde(default)]
    pub scope_fields: Option<Vec<String>>,
    #[serde(default)]
    pub scope_context_var_fields: Option<Vec<String>>,
    #[serde(default)]
    pub scope_use_fields: Option<Vec<String>>,
}

/// The parsed document, before any analysis.
#[derive(Debug, Default)]
pub struct RawSnapshot {
    pub header: Header,
    pub nodes: Vec<u32>,
    pub edges: Vec<u32>,
    pub locations: Vec<i64>,
    pub samples: Vec<i64>,
    pub scopes: Vec<i64>,
    pub scope_context_vars: Vec<i64>,
    pub scope_uses: Vec<i64>,
    pub strings: Vec<String>,
}

/// The read buffer.
pub(crate) const BUFFER_BYTES: usize = 1 << 20;
/// The `snapshot` header is field layouts and counts, a few KiB in V8's files.
const MAX_HEADER_BYTES: usize = 1 << 20;
/// What parsing the header into serde values may cost per byte of it.
const HEADER_COST: usize = 16;

/// Reads a whole snapshot from `reader` (buffered internally), charging `meter` with what it
/// allocates as it allocates.
pub(crate) fn parse<R: Read>(reader: R, meter: &mut Meter) -> Result<RawSnapshot, HeapError> {
    meter.charge(BUFFER_BYTES)?;
    let mut input = Input {
        reader: BufReader::with_capacity(BUFFER_BYTES, reader),
        offset: 0,
        meter,
    };
    let mut raw = RawSnapshot::default();
    let mut have_header = false;
    input.expect(b'{')?;
    loop {
        match input.next_token()? {
            b'}' => break,
            b',' => continue,
            b'"' => {}
            other => return Err(input.unexpected(other)),
        }
        let key = input.string_body()?;
        input.expect(b':')?;
        match key.as_str() {
            "snapshot" => {
                let bytes = input.balanced_value()?;
                let cost = bytes.len().saturating_mul(HEADER_COST);
                input.meter.fits(cost)?;
                raw.header = serde_json::from_slice(&bytes)
                    .map_err(|e| HeapError::Format(format!("invalid snapshot header: {e}")))?;
                have_header = true;
                let header = &raw.header;
                input.reserve(
                    &mut raw.nodes,
                    header.meta.node_fields.len(),
                    header.node_count,
                );
                input.reserve(
                    &mut raw.edges,
                    header.meta.edge_fields.len(),
                    header.edge_count,
                );
            }
            "nodes" => input.u32_array(&mut raw.nodes)?,
            "edges" => input.u32_array(&mut raw.edges)?,
            "locations" => input.i64_array(&mut raw.locations)?,
            "samples" => input.i64_array(&mut raw.samples)?,
            "scopes" => input.i64_array(&mut raw.scopes)?,
            "scope_context_vars" => input.i64_array(&mut raw.scope_context_vars)?,
            "scope_uses" => input.i64_array(&mut raw.scope_uses)?,
            "strings" => input.string_array(&mut raw.strings)?,
            _ => {
                input.skip_value()?;
            }
        }
    }
    if !have_header {
        return Err(HeapError::Format(
            "the file has no \"snapshot\" header; is it a .heapsnapshot file?".into(),
        ));
    }
    Ok(raw)
}

struct Input<'m, 'b, R: Read> {
    reader: BufReader<R>,
    offset: u64,
    meter: &'m mut Meter<'b>,
}

impl<R: Read> Input<'_, '_, R> {
    /// Reserves what the header declares (`fields` per item), but never past what the file
    /// can hold (a number takes two bytes at least) nor past the budget: a 300-byte file that
    /// declares 10^12 nodes reserves nothing, and its arrays grow as they are read.
    fn reserve(&mut self, out: &mut Vec<u32>, fields: usize, count: usize) {
        let wanted = fields
            .saturating_mul(count)
            .min(self.meter.file_can_hold(2))
            .min(1 << 31);
        if self.meter.charge(wanted.saturating_mul(4)).is_ok() {
            out.reserve_exact(wanted);
        }
    }

    fn peek(&mut self) -> Result<Option<u8>, HeapError> {
        let buf = self.reader.fill_buf().map_err(HeapError::Io)?;
        Ok(buf.first().copied())
    }

    fn bump(&mut self) {
        self.reader.consume(1);
        self.offset += 1;
    }

    fn byte(&mut self) -> Result<u8, HeapError> {
        match self.peek()? {
            Some(b) => {
                self.bump();
                Ok(b)
            }
            None => Err(HeapError::Format(format!(
                "unexpected end of file at byte {}",
                self.offset
            ))),
        }
    }

    /// The next non-whitespace byte, consumed.
    fn next_token(&mut self) -> Result<u8, HeapError> {
        loop {
            let b = self.byte()?;
            if !b.is_ascii_whitespace() {
                return Ok(b);
            }
        }
    }

    fn expect(&mut self, wanted: u8) -> Result<(), HeapError> {
        let b = self.next_token()?;
        if b == wanted {
            Ok(())
        } else {
            Err(self.unexpected(b))
        }
    }

    fn unexpected(&self, b: u8) -> HeapError {
        HeapError::Format(format!(
            "unexpected {:?} at byte {}",
            char::from(b),
            self.offset.saturating_sub(1)
        ))
    }

    /// Integers (possibly negative) into `out`, wrapping like a `Uint32Array` store.
    fn u32_array(&mut self, out: &mut Vec<u32>) -> Result<(), HeapError> {
        self.numbers(|n, meter| budget::push(out, n as u32, meter))
    }

    fn i64_array(&mut self, out: &mut Vec<i64>) -> Result<(), HeapError> {
        self.numbers(|n, meter| budget::push(out, n, meter))
    }

    /// A `[n, n, ...]` array of integers, read a buffer at a time.
    fn numbers(
        &mut self,
        mut push: impl FnMut(i64, &mut Meter) -> Result<(), HeapError>,
    ) -> Result<(), HeapError> {
        self.expect(b'[')?;
        let mut value: i64 = 0;
        let mut negative = false;
        let mut in_number = false;
        loop {
            self.meter.check()?;
            let buf = self.reader.fill_buf().map_err(HeapError::Io)?;
            if buf.is_empty() {
                return Err(HeapError::Format(
                    "unexpected end of file in an array".into(),
                ));
            }
            let mut used = 0;
            let mut done = false;
            for &b in buf {
                used += 1;
                match b {
                    b'0'..=b'9' => {
                        value = value.wrapping_mul(10).wrapping_add(i64::from(b - b'0'));
                        in_number = true;
                    }
                    b'-' => negative = true,
                    b',' | b' ' | b'\n' | b'\r' | b'\t' | b']' => {
                        if in_number {
                            push(if negative { -value } else { value }, self.meter)?;
                        }
                        value = 0;
                        negative = false;
                        in_number = false;
                        if b == b']' {
                            done = true;
                            break;
                        }
                    }
                    // Fractions and exponents do not occur in V8's output; refuse rather
                    // than misread.
                    other => {
                        return Err(HeapError::Format(format!(
                            "unexpected {:?} in an integer array at byte {}",
                            char::from(other),
                            self.offset + used as u64 - 1
                        )));
                    }
                }
            }
            self.reader.consume(used);
            self.offset += used as u64;
            if done {
                return Ok(());
            }
        }
    }

    /// The rest of a string whose opening quote was consumed, unescaped. Lone surrogates
    /// (which V8 writes as `\uD800`) become U+FFFD.
    fn string_body(&mut self) -> Result<String, HeapError> {
        let mut bytes: Vec<u8> = Vec::new();
        loop {
            let buf = self.reader.fill_buf().map_err(HeapError::Io)?;
            if buf.is_empty() {
                return Err(HeapError::Format(
                    "unexpected end of file in a string".into(),
                ));
            }
            let special = buf.iter().position(|&b| b == b'"' || b == b'\\');
            // A string is held whole while it is read: it must fit, kept or not, and so must
            // the capacity its growth allocates (an escape adds four bytes at most).
            let needed = bytes.len() + special.unwrap_or(buf.len()) + 4;
            if needed > bytes.capacity() {
                let grown = needed.max(bytes.capacity().saturating_mul(2));
                self.meter.fits(grown)?;
                bytes.reserve_exact(grown - bytes.len());
            }
            match special {
                Some(i) => {
                    bytes.extend_from_slice(&buf[..i]);
                    let special = buf[i];
                    self.reader.consume(i + 1);
                    self.offset += i as u64 + 1;
                    if special == b'"' {
                        break;
                    }
                    self.escape(&mut bytes)?;
                }
                None => {
                    let n = buf.len();
                    bytes.extend_from_slice(buf);
                    self.reader.consume(n);
                    self.offset += n as u64;
                }
            }
        }
        Ok(match String::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        })
    }

    fn escape(&mut self, out: &mut Vec<u8>) -> Result<(), HeapError> {
        let b = self.byte()?;
        let c = match b {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let first = self.hex4()?;
                if (0xD800..0xDC00).contains(&first) {
                    // A high surrogate: a low one must follow as `\uXXXX`.
                    if self.peek()? == Some(b'\\') {
                        self.bump();
                        if self.byte()? != b'u' {
                            return Err(HeapError::Format("invalid escape in a string".into()));
                        }
                        let second = self.hex4()?;
                        if (0xDC00..0xE000).contains(&second) {
                            let code = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
                            char::from_u32(code).unwrap_or('\u{FFFD}')
                        } else {
                            out.extend_from_slice("\u{FFFD}".as_bytes());
                            char::from_u32(second).unwrap_or('\u{FFFD}')
                        }
                    } else {
                        '\u{FFFD}'
                    }
                } else {
                    char::from_u32(first).unwrap_or('\u{FFFD}')
                }
            }
            other => return Err(self.unexpected(other)),
        };
        let mut tmp = [0u8; 4];
        out.extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
        Ok(())
    }

    fn hex4(&mut self) -> Result<u32, HeapError> {
        let mut value = 0u32;
        for _ in 0..4 {
            let b = self.byte()?;
            let digit = char::from(b)
                .to_digit(16)
                .ok_or_else(|| HeapError::Format("invalid \\u escape in a string".into()))?;
            value = value * 16 + digit;
        }
        Ok(value)
    }

    fn string_array(&mut self, out: &mut Vec<String>) -> Result<(), HeapError> {
        self.expect(b'[')?;
        loop {
            match self.next_token()? {
                b']' => return Ok(()),
                b',' => {}
                b'"' => {
                    if out.len().is_multiple_of(4096) {
                        self.meter.check()?;
                    }
                    let text = self.string_body()?;
                    self.meter.charge(text.capacity())?;
                    budget::push(out, text, self.meter)?;
                }
                other => return Err(self.unexpected(other)),
            }
        }
    }

    /// The bytes of one JSON value (object or array), for the small header.
    fn balanced_value(&mut self) -> Result<Vec<u8>, HeapError> {
        let mut out = Vec::new();
        self.copy_value(Some(&mut out))?;
        Ok(out)
    }

    fn skip_value(&mut self) -> Result<(), HeapError> {
        self.copy_value(None)
    }

    /// Walks one value, tracking strings and nesting; copies its bytes when asked.
    fn copy_value(&mut self, mut out: Option<&mut Vec<u8>>) -> Result<(), HeapError> {
        let first = self.next_token()?;
        if let Some(out) = out.as_deref_mut() {
            out.push(first);
        }
        let too_long = || {
            HeapError::Format(format!(
                "the snapshot header is larger than {MAX_HEADER_BYTES} bytes"
            ))
        };
        let mut depth: usize = match first {
            b'{' | b'[' => 1,
            b'"' => {
                let s = self.string_body()?;
                if let Some(out) = out {
                    out.extend_from_slice(
                        &serde_json::to_string(&s).unwrap_or_default().as_bytes()[1..],
                    );
                }
                return Ok(());
            }
            _ => {
                // A scalar: read up to the next delimiter.
                loop {
                    match self.peek()? {
                        Some(b',' | b'}' | b']') | None => return Ok(()),
                        Some(b) => {
                            self.bump();
                            if let Some(out) = out.as_deref_mut() {
                                if out.len() >= MAX_HEADER_BYTES {
                                    return Err(too_long());
                                }
                                out.push(b);
                            }
                        }
                    }
                }
            }
        };
        let mut in_string = false;
        let mut escaped = false;
        while depth > 0 {
            let b = self.byte()?;
            if let Some(out) = out.as_deref_mut() {
                if out.len() >= MAX_HEADER_BYTES {
                    return Err(too_long());
                }
                out.push(b);
            }
            if in_string {
                if escaped {
                    escaped = false;
                } else if b == b'\\' {
                    escaped = true;
                } else if b == b'"' {
                    in_string = false;
                }
                continue;
            }
            match b {
                b'"' => in_string = true,
                b'{' | b'[' => depth += 1,
                b'}' | b']' => depth -= 1,
                _ => {}
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::LoadBudget;

    fn unlimited() -> Meter<'static> {
        Meter::new(LoadBudget::unlimited())
    }

    #[test]
    fn reads_sections_and_skips_unknown_ones() {
        let text = r#"{"snapshot":{"meta":{"node_fields":["type","name"],"node_types":[["hidden"],"string"],"edge_fields":["type","name_or_index","to_node"],"edge_types":[["context"],"string_or_number","node"]},"node_count":2,"edge_count":0},
"nodes":[0,0,
0,1],"edges":[],"trace_tree":[[1,[2,3]],"x]"],"strings":["a\"b","\ud83d\ude00 \u00e9","lone \ud800 end"]}"#;
        let raw = parse(text.as_bytes(), &mut unlimited()).expect("parses");
        assert_eq!(raw.nodes, vec![0, 0, 0, 1]);
        assert_eq!(raw.header.node_count, 2);
        assert_eq!(raw.strings[0], "a\"b");
        assert_eq!(raw.strings[1], "\u{1F600} é");
        assert_eq!(raw.strings[2], "lone \u{FFFD} end");
    }

    #[test]
    fn refuses_a_file_without_header() {
        let parse = |text: &str| parse(text.as_bytes(), &mut unlimited());
        let error = parse(r#"{"nodes":[1,2]}"#).expect_err("no header");
        assert!(error.to_string().contains("snapshot"), "{error}");
        let error = parse("not json").expect_err("not json");
        assert!(error.to_string().contains("unexpected"), "{error}");
        let error = parse(r#"{"snapshot":{"meta":{}},"nodes":[1,2"#).expect_err("cut");
        assert!(
            error.to_string().contains("end of file") || error.to_string().contains("header"),
            "{error}"
        );
    }
}
