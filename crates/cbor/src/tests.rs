use crate::{CborError, HEADER_LEN, MAX_DEPTH, content_len, from_json, reply_id, to_json};
use serde_json::{Value, json};

fn as_json(message: &[u8]) -> Value {
    let text = to_json(message).expect("converts");
    serde_json::from_slice(&text).expect("valid JSON")
}

/// What Chromium 142 wrote on its CBOR pipe for a command without an envelope around its
/// `params`, byte for byte.
const CHROMIUM_ERROR: &[u8] = b"\xd8\x18\x5a\x00\x00\x00\x50\xbf\x62id\x01\x65error\xd8\x18\x5a\x00\x00\x00\x3d\xbf\x64code\x39\x7f\x57\x67message\x78\x29Message may have object 'params' property\xff\xff";

#[test]
fn a_message_chromium_wrote_reads_as_its_json() {
    let text = to_json(CHROMIUM_ERROR).expect("converts");
    assert_eq!(
        std::str::from_utf8(&text).expect("UTF-8"),
        r#"{"id":1,"error":{"code":-32600,"message":"Message may have object 'params' property"}}"#
    );
    let header: [u8; HEADER_LEN] = CHROMIUM_ERROR[..HEADER_LEN].try_into().expect("header");
    assert_eq!(content_len(&header), Ok(CHROMIUM_ERROR.len() - HEADER_LEN));
}

#[test]
fn commands_round_trip_through_the_browser_form() {
    let command = json!({
        "id": 7,
        "method": "Accessibility.getFullAXTree",
        "sessionId": "5A1B",
        "params": {
            "depth": -3, "big": 4_000_000_000u64, "half": 0.5, "flag": true, "none": null,
            "text": "naïve \"quoted\" \\ \n\t\u{1}", "emoji": "👋🏽", "empty": {}, "list": [1, [2, []], {"a": "b"}],
        },
    });
    let cbor = from_json(&command).expect("encodes");
    assert_eq!(as_json(&cbor), command);
}

#[test]
fn chromium_s_encoding_choices_are_kept() {
    let cbor = from_json(&json!({ "a": "ascii", "b": "é", "n": 70000, "m": -1 })).expect("encodes");
    // The whole message in one envelope, whose length is the rest.
    assert_eq!(&cbor[..3], &[0xd8, 0x18, 0x5a]);
    let header: [u8; HEADER_LEN] = cbor[..HEADER_LEN].try_into().expect("header");
    assert_eq!(content_len(&header), Ok(cbor.len() - HEADER_LEN));
    assert_eq!(cbor[HEADER_LEN], 0xbf);
    assert_eq!(*cbor.last().expect("bytes"), 0xff);
    // ASCII is a text string; anything else UTF-16LE in a byte string.
    assert!(cbor.windows(6).any(|w| w == b"\x65ascii"));
    assert!(cbor.windows(3).any(|w| w == b"\x42\xe9\x00"));
    // 32-bit integers are integers; a number beyond them a double.
    assert!(cbor.windows(5).any(|w| w == b"\x1a\x00\x01\x11\x70"));
    assert!(cbor.windows(3).any(|w| w == b"\x61m\x20"));
    let big = from_json(&json!({ "n": 1u64 << 40 })).expect("encodes");
    assert!(big.contains(&0xfb));
}

/// An envelope holding one map, around `content` (the map's entries).
fn message(content: &[u8]) -> Vec<u8> {
    let mut inner = vec![0xbf];
    inner.extend_from_slice(content);
    inner.push(0xff);
    let mut out = vec![0xd8, 0x18, 0x5a];
    out.extend_from_slice(&(inner.len() as u32).to_be_bytes());
    out.extend(inner);
    out
}

#[test]
fn numbers_print_as_chromium_s_json_prints_them() {
    let mut content = Vec::new();
    for (key, double) in [
        ("a", 1.0f64),
        ("b", 1.5),
        ("c", -0.0),
        ("d", 1e21),
        ("e", f64::NAN),
    ] {
        content.extend_from_slice(&[0x61, key.as_bytes()[0], 0xfb]);
        content.extend_from_slice(&double.to_bits().to_be_bytes());
    }
    // Half and single precision, and the largest negative integer CBOR has.
    content.extend_from_slice(
        b"\x61f\xf9\x3e\x00\x61g\xfa\x3f\xc0\x00\x00\x61h\x3b\xff\xff\xff\xff\xff\xff\xff\xff",
    );
    let text = String::from_utf8(to_json(&message(&content)).expect("converts")).expect("UTF-8");
    assert_eq!(
        text,
        r#"{"a":1,"b":1.5,"c":0,"d":1e21,"e":null,"f":1.5,"g":1.5,"h":-18446744073709551616}"#
    );
}

#[test]
fn binary_data_reads_as_base64_and_utf16_as_text() {
    let mut content = b"\x64data\xd6\x43\x89PN".to_vec();
    // "a😀" in UTF-16LE, then a lone surrogate, which becomes U+FFFD.
    content.extend_from_slice(b"\x61s\x46\x61\x00\x3d\xd8\x00\xde\x61l\x42\x00\xd8");
    content.extend_from_slice(b"\x61c\x62\x01\x7f");
    let value = as_json(&message(&content));
    assert_eq!(
        value,
        json!({ "data": "iVBO", "s": "a😀", "l": "\u{fffd}", "c": "\u{1}\u{7f}" })
    );
    let text = to_json(&message(&content)).expect("converts");
    assert!(
        text.windows(6).any(|w| w == b"\\u0001"),
        "control characters are escaped"
    );
}

#[test]
fn definite_lengths_read_too() {
    // {"a": [1, 2], "b": {"c": true}} with definite-length containers, no inner envelopes.
    let content = b"\x61a\x82\x01\x02\x61b\xa1\x61c\xf5";
    assert_eq!(
        as_json(&message(content)),
        json!({ "a": [1, 2], "b": { "c": true } })
    );
}

#[test]
fn broken_messages_are_refused_with_a_reason() {
    let whole =
        from_json(&json!({ "id": 1, "result": { "nodes": [{ "name": "x" }] } })).expect("encodes");
    // Every truncation is an error, never a panic.
    for len in 0..whole.len() {
        assert!(to_json(&whole[..len]).is_err(), "truncated at {len}");
    }
    let mut trailing = whole.clone();
    trailing.push(0xf6);
    assert_eq!(to_json(&trailing), Err(CborError::Trailing(1)));
    assert_eq!(to_json(b"\xbf\xff"), Err(CborError::NotAnEnvelope));
    // A key that is not a string; a map ending after a key; a reserved byte.
    assert!(matches!(
        to_json(&message(b"\x01\x02")),
        Err(CborError::Unexpected { .. })
    ));
    assert!(matches!(
        to_json(&message(b"\x61a")),
        Err(CborError::Unexpected { .. })
    ));
    assert!(matches!(
        to_json(&message(b"\x61a\x1c")),
        Err(CborError::Unexpected { .. })
    ));
    assert!(matches!(
        to_json(&message(b"\x61a\xc1\x00")),
        Err(CborError::Unexpected { .. })
    ));
    // An envelope longer than what it holds.
    let mut long = message(b"\x61a\x01");
    long[6] += 1;
    long.push(0xf6);
    assert!(matches!(to_json(&long), Err(CborError::EnvelopeLength(_))));
    // Nesting beyond the bound.
    let mut deep = b"\x61a".to_vec();
    deep.extend(std::iter::repeat_n(0x9f, MAX_DEPTH + 1));
    deep.extend(std::iter::repeat_n(0xff, MAX_DEPTH + 1));
    assert_eq!(to_json(&message(&deep)), Err(CborError::TooDeep));
    // A length the input does not have.
    assert!(matches!(
        to_json(&message(b"\x61a\x7b\xff\xff\xff\xff\xff\xff\xff\xff")),
        Err(CborError::Truncated(_))
    ));
}

#[test]
fn no_corruption_of_a_real_message_panics() {
    let whole = from_json(&json!({
        "id": 3, "result": { "nodes": [
            { "nodeId": "1", "ignored": false, "role": { "type": "role", "value": "RootWebArea" },
              "name": { "type": "computedString", "value": "Tïtle", "sources": [] },
              "properties": [{ "name": "focusable", "value": { "type": "booleanOrUndefined", "value": true } }],
              "childIds": ["2", "3"], "backendDOMNodeId": 4, "scale": 1.25 }
        ] },
    }))
    .expect("encodes");
    // A small xorshift: every single-byte corruption at every position, with several values.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for at in 0..whole.len() {
        for _ in 0..16 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let mut broken = whole.clone();
            broken[at] = state as u8;
            if let Ok(text) = to_json(&broken) {
                serde_json::from_slice::<Value>(&text).expect("whatever converts is valid JSON");
            }
        }
    }
}

#[test]
fn a_reply_s_id_is_read_without_converting_it() {
    assert_eq!(reply_id(CHROMIUM_ERROR), Some(1));
    for id in [0u64, 23, 24, 255, 256, 70_000, (1 << 31) - 1] {
        let message = from_json(&json!({ "id": id, "result": {} })).expect("encodes");
        assert_eq!(reply_id(&message), Some(id));
    }
    let event = from_json(&json!({ "method": "Target.detachedFromTarget", "params": {} }))
        .expect("encodes");
    assert_eq!(reply_id(&event), None);
    assert_eq!(reply_id(&CHROMIUM_ERROR[..HEADER_LEN + 4]), None);
}

/// The real messages the fuzz target starts from (Chromium 142: events, replies, a small
/// accessibility tree, a screenshot, an evaluation with a lone surrogate).
fn captured() -> Vec<Vec<u8>> {
    // The checkout being tested (cargo test sets it when it runs the binary), not the one that
    // compiled it: a shared target directory reuses a test binary across checkouts.
    let manifest_dir =
        std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into());
    let folder = std::path::Path::new(&manifest_dir).join("../../fuzz/corpus/cdp_cbor");
    let mut messages: Vec<Vec<u8>> = std::fs::read_dir(&folder)
        .expect("the fuzz corpus")
        .map(|entry| std::fs::read(entry.expect("entry").path()).expect("read"))
        .collect();
    assert!(messages.len() >= 10, "{}", folder.display());
    messages.push(CHROMIUM_ERROR.to_vec());
    messages
}

fn deserialized(message: &[u8]) -> Result<Value, crate::DeError> {
    crate::from_message_seed(message, std::marker::PhantomData::<Value>)
}

#[test]
fn deserializing_gives_what_reading_the_converted_json_gives() {
    for message in captured() {
        assert_eq!(
            deserialized(&message).expect("deserializes"),
            as_json(&message)
        );
    }
    let mut numbers = Vec::new();
    for (key, double) in [
        ("a", 1.0f64),
        ("b", -2.0),
        ("c", 1.5),
        ("d", 1e20),
        ("e", f64::INFINITY),
    ] {
        numbers.extend_from_slice(&[0x61, key.as_bytes()[0], 0xfb]);
        numbers.extend_from_slice(&double.to_bits().to_be_bytes());
    }
    numbers.extend_from_slice(b"\x61f\x3b\xff\xff\xff\xff\xff\xff\xff\xff\x61g\xd6\x43\x89PN");
    let message = message(&numbers);
    assert_eq!(
        deserialized(&message).expect("deserializes"),
        as_json(&message)
    );
}

#[test]
fn fields_a_reader_does_not_want_are_skipped_whole() {
    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Reply<'a> {
        id: u32,
        #[serde(borrow)]
        result: Wanted<'a>,
    }
    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Wanted<'a> {
        name: &'a str,
        count: Option<u8>,
    }
    let big: Vec<Value> = (0..1000)
        .map(|i| json!({ "n": i, "s": ["x", { "deep": [i] }] }))
        .collect();
    let command = json!({ "id": 9, "result": { "skip": big, "name": "kept", "more": { "a": [1.5] }, "count": null } });
    let cbor = from_json(&command).expect("encodes");
    let reply: Reply = crate::from_message_seed(&cbor, std::marker::PhantomData).expect("reads");
    assert_eq!(
        reply,
        Reply {
            id: 9,
            result: Wanted {
                name: "kept",
                count: None
            }
        }
    );
}

#[test]
fn corrupted_messages_deserialize_as_their_json_or_not_at_all() {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for whole in captured().into_iter().filter(|m| m.len() < 2000) {
        for at in 0..whole.len() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let mut broken = whole.clone();
            broken[at] = state as u8;
            let json = to_json(&broken)
                .ok()
                .and_then(|text| serde_json::from_slice::<Value>(&text).ok());
            if let (Ok(read), Some(json)) = (deserialized(&broken), json) {
                assert!(
                    same(&read, &json),
                    "corrupted at {at}: {read} against {json}"
                );
            }
        }
    }
}

/// Equal, but for the last bit of a double: serde_json's default float reading is not
/// always exact (its `float_roundtrip` feature is off), the deserializer's is.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            let (x, y) = (
                x.as_f64().unwrap_or(f64::NAN),
                y.as_f64().unwrap_or(f64::NAN),
            );
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

#[test]
fn binary_data_reads_as_its_bytes_where_bytes_are_asked_for() {
    #[derive(serde::Deserialize)]
    struct Reply<'a> {
        #[serde(borrow)]
        data: &'a [u8],
        #[serde(borrow)]
        text: &'a [u8],
    }
    let message = message(b"\x64data\xd6\x43\x89PN\x64text\x62ok");
    let reply: Reply = crate::from_message_seed(&message, std::marker::PhantomData).expect("reads");
    assert_eq!(reply.data, b"\x89PN");
    assert_eq!(reply.text, b"ok");
}
