//! JSON value -> CBOR message, as Chromium's own JSON-to-CBOR conversion writes one (so the
//! browser reads a command sent on the CBOR pipe exactly as it would read its JSON).

use crate::CborError;
use serde_json::Value;

/// One message (a command: `{"id", "method", "params", "sessionId"}`) in its envelope.
pub fn from_json(message: &Value) -> Result<Vec<u8>, CborError> {
    let mut out = Vec::with_capacity(64);
    match message {
        Value::Object(_) | Value::Array(_) => value(&mut out, message)?,
        // Only a map or an array can sit in the envelope a message must be.
        _ => return Err(CborError::NotAnEnvelope),
    }
    Ok(out)
}

fn value(out: &mut Vec<u8>, value: &Value) -> Result<(), CborError> {
    match value {
        Value::Null => out.push(0xf6),
        Value::Bool(false) => out.push(0xf4),
        Value::Bool(true) => out.push(0xf5),
        Value::Number(number) => match number.as_i64().and_then(|n| i32::try_from(n).ok()) {
            Some(n) if n >= 0 => head(out, 0, n as u64),
            Some(n) => head(out, 1, (-1 - i64::from(n)) as u64),
            // Chromium's integers are 32-bit; like its JSON reader, anything else is a double.
            None => {
                out.push(0xfb);
                let double = number.as_f64().unwrap_or(f64::NAN);
                out.extend_from_slice(&double.to_bits().to_be_bytes());
            }
        },
        Value::String(text) => string(out, text),
        Value::Array(items) => {
            let start = open_envelope(out, 0x9f);
            for item in items {
                self::value(out, item)?;
            }
            close_envelope(out, start)?;
        }
        Value::Object(map) => {
            let start = open_envelope(out, 0xbf);
            for (key, item) in map {
                string(out, key);
                self::value(out, item)?;
            }
            close_envelope(out, start)?;
        }
    }
    Ok(())
}

/// ASCII as a text string, anything else as UTF-16LE in a byte string: Chromium's choice.
fn string(out: &mut Vec<u8>, text: &str) {
    if text.is_ascii() {
        head(out, 3, text.len() as u64);
        out.extend_from_slice(text.as_bytes());
    } else {
        let units: Vec<u16> = text.encode_utf16().collect();
        head(out, 2, units.len() as u64 * 2);
        for unit in units {
            out.extend_from_slice(&unit.to_le_bytes());
        }
    }
}

fn head(out: &mut Vec<u8>, major: u8, argument: u64) {
    let major = major << 5;
    match argument {
        0..=23 => out.push(major | argument as u8),
        24..=0xff => out.extend_from_slice(&[major | 24, argument as u8]),
        0x100..=0xffff => {
            out.push(major | 25);
            out.extend_from_slice(&(argument as u16).to_be_bytes());
        }
        0x1_0000..=0xffff_ffff => {
            out.push(major | 26);
            out.extend_from_slice(&(argument as u32).to_be_bytes());
        }
        _ => {
            out.push(major | 27);
            out.extend_from_slice(&argument.to_be_bytes());
        }
    }
}

/// Tag 24 and a byte string head whose 4-byte length is filled in by `close_envelope`, then
/// the indefinite-length container's first byte. Returns where the length goes.
fn open_envelope(out: &mut Vec<u8>, container: u8) -> usize {
    out.extend_from_slice(&[0xd8, 0x18, 0x5a, 0, 0, 0, 0]);
    let length_at = out.len() - 4;
    out.push(container);
    length_at
}

fn close_envelope(out: &mut Vec<u8>, length_at: usize) -> Result<(), CborError> {
    out.push(0xff);
    let len = out.len() - length_at - 4;
    let len32 = u32::try_from(len).map_err(|_| CborError::TooLarge(len))?;
    out[length_at..length_at + 4].copy_from_slice(&len32.to_be_bytes());
    Ok(())
}
