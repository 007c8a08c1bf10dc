//! Messages on the browser's CBOR pipe, of any content (the browser relays what hostile pages
//! hold): the converter and the deserializer must answer (a value or an error) without
//! panicking, recursing without bound or reserving what a length declares; what the converter
//! writes must be JSON that converts back and forth to itself, and what the deserializer reads
//! must be what that JSON says.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fn converted(message: &[u8]) -> Option<Value> {
    let text = devtools_cbor::to_json(message).ok()?;
    match serde_json::from_slice::<Value>(&text) {
        Ok(value) => Some(value),
        // Deeper than serde_json reads (128) but within the converter's bound: still JSON.
        Err(error) if error.to_string().contains("recursion limit") => None,
        Err(error) => panic!("the converter wrote invalid JSON: {error}"),
    }
}

/// Equal, but for the last bit of a double (serde_json's default float reading is not
/// always exact; the deserializer's is).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            let (x, y) = (x.as_f64().unwrap_or(f64::NAN), y.as_f64().unwrap_or(f64::NAN));
            x == y || (x - y).abs() <= x.abs().max(y.abs()) * 1e-15
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|((k, x), (l, y))| k == l && same(x, y))
        }
        _ => a == b,
    }
}

fuzz_target!(|data: &[u8]| {
    let _ = devtools_cbor::reply_id(data);
    let read = devtools_cbor::from_message_seed(data, std::marker::PhantomData::<Value>);
    let Some(first) = converted(data) else { return };
    if let Ok(read) = read {
        assert!(same(&read, &first), "deserialized {read}, converted {first}");
    }
    // Once in JSON's terms (numbers, text), a message converts back and forth unchanged.
    let Some(second) = devtools_cbor::from_json(&first).ok().and_then(|m| converted(&m)) else {
        return;
    };
    let third = devtools_cbor::from_json(&second).ok().and_then(|m| converted(&m));
    assert!(third.is_some_and(|third| same(&third, &second)), "{second} changed");
});
