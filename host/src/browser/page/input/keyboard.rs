//! The keyboard the reference types with: Puppeteer's US layout, its key events, and the
//! reference's key-combination parser.
//!
//! The reference presses keys through Puppeteer, so the `key`, `code`, key code and text of
//! every `Input.dispatchKeyEvent` come from Puppeteer's `USKeyboardLayout.ts`. The table below is
//! that layout in its order; the reference's `keyboard.ts` accepts exactly these names in the
//! same order, so its error message lists them from here too.

use crate::browser::cdp::raw::RawLink;
use crate::browser::cdp::timeouts;
use serde_json::{Value, json};
use std::collections::HashSet;

/// The Shift bit of the event `modifiers` (Alt=1, Control=2, Meta=4, Shift=8).
const SHIFT: u32 = 8;

/// One key of Puppeteer's `_keyDefinitions`. Empty strings and zeroes mean "not given", as the
/// JavaScript's truthiness checks treat them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyDefinition {
    /// The name callers use (`"Enter"`, `"KeyA"`, `"a"`, `"+"`).
    pub name: &'static str,
    pub key_code: u32,
    pub shift_key_code: u32,
    pub key: &'static str,
    pub shift_key: &'static str,
    pub code: &'static str,
    pub text: &'static str,
    /// 0 standard, 1 left, 2 right, 3 numpad, 4 mobile.
    pub location: u32,
}

/// Keeps the constructors' signatures on one line each.
type Str = &'static str;

/// A plain key. The other constructors cover the rarer shapes, so each entry stays short.
const fn k(name: Str, key_code: u32, key: Str, code: Str) -> KeyDefinition {
    let (shift_key_code, shift_key, text, location) = (0, "", "", 0);
    KeyDefinition {
        name,
        key_code,
        shift_key_code,
        key,
        shift_key,
        code,
        text,
        location,
    }
}

/// A key with a location: left/right modifiers, the numpad, mobile keys.
const fn at(name: Str, key_code: u32, key: Str, code: Str, location: u32) -> KeyDefinition {
    KeyDefinition {
        location,
        ..k(name, key_code, key, code)
    }
}

/// A key that types something else with Shift held (letters, digits, punctuation).
const fn shift(name: Str, key_code: u32, key: Str, code: Str, shift_key: Str) -> KeyDefinition {
    KeyDefinition {
        shift_key,
        ..k(name, key_code, key, code)
    }
}

/// A numpad key (its code is its name) whose Shift variant is a digit with its own key code.
const fn numpad(name: Str, code: u32, shifted_code: u32, key: Str, digit: Str) -> KeyDefinition {
    let (shift_key_code, shift_key) = (shifted_code, digit);
    KeyDefinition {
        shift_key_code,
        shift_key,
        ..at(name, code, key, name, 3)
    }
}

/// The Enter keys, which type a carriage return.
const fn enter(name: Str, code: Str, location: u32) -> KeyDefinition {
    KeyDefinition {
        text: "\r",
        ..at(name, 13, "Enter", code, location)
    }
}

/// Puppeteer's `_keyDefinitions`, in source order; packed, since it is data.
#[rustfmt::skip]
pub static KEYS: [KeyDefinition; 255] = [
    k("0", 48, "0", "Digit0"), k("1", 49, "1", "Digit1"), k("2", 50, "2", "Digit2"),
    k("3", 51, "3", "Digit3"), k("4", 52, "4", "Digit4"), k("5", 53, "5", "Digit5"),
    k("6", 54, "6", "Digit6"), k("7", 55, "7", "Digit7"), k("8", 56, "8", "Digit8"),
    k("9", 57, "9", "Digit9"), k("Power", 0, "Power", "Power"), k("Eject", 0, "Eject", "Eject"),
    k("Abort", 3, "Cancel", "Abort"), k("Help", 6, "Help", "Help"),
    k("Backspace", 8, "Backspace", "Backspace"), k("Tab", 9, "Tab", "Tab"),
    numpad("Numpad5", 12, 101, "Clear", "5"), enter("NumpadEnter", "NumpadEnter", 3),
    enter("Enter", "Enter", 0), enter("\r", "Enter", 0), enter("\n", "Enter", 0),
    at("ShiftLeft", 16, "Shift", "ShiftLeft", 1), at("ShiftRight", 16, "Shift", "ShiftRight", 2),
    at("ControlLeft", 17, "Control", "ControlLeft", 1),
    at("ControlRight", 17, "Control", "ControlRight", 2), at("AltLeft", 18, "Alt", "AltLeft", 1),
    at("AltRight", 18, "Alt", "AltRight", 2), k("Pause", 19, "Pause", "Pause"),
    k("CapsLock", 20, "CapsLock", "CapsLock"), k("Escape", 27, "Escape", "Escape"),
    k("Convert", 28, "Convert", "Convert"), k("NonConvert", 29, "NonConvert", "NonConvert"),
    k("Space", 32, " ", "Space"), numpad("Numpad9", 33, 105, "PageUp", "9"),
    k("PageUp", 33, "PageUp", "PageUp"), numpad("Numpad3", 34, 99, "PageDown", "3"),
    k("PageDown", 34, "PageDown", "PageDown"), k("End", 35, "End", "End"),
    numpad("Numpad1", 35, 97, "End", "1"), k("Home", 36, "Home", "Home"),
    numpad("Numpad7", 36, 103, "Home", "7"), k("ArrowLeft", 37, "ArrowLeft", "ArrowLeft"),
    numpad("Numpad4", 37, 100, "ArrowLeft", "4"), numpad("Numpad8", 38, 104, "ArrowUp", "8"),
    k("ArrowUp", 38, "ArrowUp", "ArrowUp"), k("ArrowRight", 39, "ArrowRight", "ArrowRight"),
    numpad("Numpad6", 39, 102, "ArrowRight", "6"), numpad("Numpad2", 40, 98, "ArrowDown", "2"),
    k("ArrowDown", 40, "ArrowDown", "ArrowDown"), k("Select", 41, "Select", "Select"),
    k("Open", 43, "Execute", "Open"), k("PrintScreen", 44, "PrintScreen", "PrintScreen"),
    k("Insert", 45, "Insert", "Insert"), numpad("Numpad0", 45, 96, "Insert", "0"),
    k("Delete", 46, "Delete", "Delete"), numpad("NumpadDecimal", 46, 110, "\0", "."),
    shift("Digit0", 48, "0", "Digit0", ")"), shift("Digit1", 49, "1", "Digit1", "!"),
    shift("Digit2", 50, "2", "Digit2", "@"), shift("Digit3", 51, "3", "Digit3", "#"),
    shift("Digit4", 52, "4", "Digit4", "$"), shift("Digit5", 53, "5", "Digit5", "%"),
    shift("Digit6", 54, "6", "Digit6", "^"), shift("Digit7", 55, "7", "Digit7", "&"),
    shift("Digit8", 56, "8", "Digit8", "*"), shift("Digit9", 57, "9", "Digit9", "("),
    shift("KeyA", 65, "a", "KeyA", "A"), shift("KeyB", 66, "b", "KeyB", "B"),
    shift("KeyC", 67, "c", "KeyC", "C"), shift("KeyD", 68, "d", "KeyD", "D"),
    shift("KeyE", 69, "e", "KeyE", "E"), shift("KeyF", 70, "f", "KeyF", "F"),
    shift("KeyG", 71, "g", "KeyG", "G"), shift("KeyH", 72, "h", "KeyH", "H"),
    shift("KeyI", 73, "i", "KeyI", "I"), shift("KeyJ", 74, "j", "KeyJ", "J"),
    shift("KeyK", 75, "k", "KeyK", "K"), shift("KeyL", 76, "l", "KeyL", "L"),
    shift("KeyM", 77, "m", "KeyM", "M"), shift("KeyN", 78, "n", "KeyN", "N"),
    shift("KeyO", 79, "o", "KeyO", "O"), shift("KeyP", 80, "p", "KeyP", "P"),
    shift("KeyQ", 81, "q", "KeyQ", "Q"), shift("KeyR", 82, "r", "KeyR", "R"),
    shift("KeyS", 83, "s", "KeyS", "S"), shift("KeyT", 84, "t", "KeyT", "T"),
    shift("KeyU", 85, "u", "KeyU", "U"), shift("KeyV", 86, "v", "KeyV", "V"),
    shift("KeyW", 87, "w", "KeyW", "W"), shift("KeyX", 88, "x", "KeyX", "X"),
    shift("KeyY", 89, "y", "KeyY", "Y"), shift("KeyZ", 90, "z", "KeyZ", "Z"),
    at("MetaLeft", 91, "Meta", "MetaLeft", 1), at("MetaRight", 92, "Meta", "MetaRight", 2),
    k("ContextMenu", 93, "ContextMenu", "ContextMenu"),
    at("NumpadMultiply", 106, "*", "NumpadMultiply", 3), at("NumpadAdd", 107, "+", "NumpadAdd", 3),
    at("NumpadSubtract", 109, "-", "NumpadSubtract", 3),
    at("NumpadDivide", 111, "/", "NumpadDivide", 3), k("F1", 112, "F1", "F1"),
    k("F2", 113, "F2", "F2"), k("F3", 114, "F3", "F3"), k("F4", 115, "F4", "F4"),
    k("F5", 116, "F5", "F5"), k("F6", 117, "F6", "F6"), k("F7", 118, "F7", "F7"),
    k("F8", 119, "F8", "F8"), k("F9", 120, "F9", "F9"), k("F10", 121, "F10", "F10"),
    k("F11", 122, "F11", "F11"), k("F12", 123, "F12", "F12"), k("F13", 124, "F13", "F13"),
    k("F14", 125, "F14", "F14"), k("F15", 126, "F15", "F15"), k("F16", 127, "F16", "F16"),
    k("F17", 128, "F17", "F17"), k("F18", 129, "F18", "F18"), k("F19", 130, "F19", "F19"),
    k("F20", 131, "F20", "F20"), k("F21", 132, "F21", "F21"), k("F22", 133, "F22", "F22"),
    k("F23", 134, "F23", "F23"), k("F24", 135, "F24", "F24"),
    k("NumLock", 144, "NumLock", "NumLock"), k("ScrollLock", 145, "ScrollLock", "ScrollLock"),
    k("AudioVolumeMute", 173, "AudioVolumeMute", "AudioVolumeMute"),
    k("AudioVolumeDown", 174, "AudioVolumeDown", "AudioVolumeDown"),
    k("AudioVolumeUp", 175, "AudioVolumeUp", "AudioVolumeUp"),
    k("MediaTrackNext", 176, "MediaTrackNext", "MediaTrackNext"),
    k("MediaTrackPrevious", 177, "MediaTrackPrevious", "MediaTrackPrevious"),
    k("MediaStop", 178, "MediaStop", "MediaStop"),
    k("MediaPlayPause", 179, "MediaPlayPause", "MediaPlayPause"),
    shift("Semicolon", 186, ";", "Semicolon", ":"), shift("Equal", 187, "=", "Equal", "+"),
    at("NumpadEqual", 187, "=", "NumpadEqual", 3), shift("Comma", 188, ",", "Comma", "<"),
    shift("Minus", 189, "-", "Minus", "_"), shift("Period", 190, ".", "Period", ">"),
    shift("Slash", 191, "/", "Slash", "?"), shift("Backquote", 192, "`", "Backquote", "~"),
    shift("BracketLeft", 219, "[", "BracketLeft", "{"),
    shift("Backslash", 220, "\\", "Backslash", "|"),
    shift("BracketRight", 221, "]", "BracketRight", "}"), shift("Quote", 222, "'", "Quote", "\""),
    k("AltGraph", 225, "AltGraph", "AltGraph"), k("Props", 247, "CrSel", "Props"),
    k("Cancel", 3, "Cancel", "Abort"), at("Clear", 12, "Clear", "Numpad5", 3),
    at("Shift", 16, "Shift", "ShiftLeft", 1), at("Control", 17, "Control", "ControlLeft", 1),
    at("Alt", 18, "Alt", "AltLeft", 1), k("Accept", 30, "Accept", ""),
    k("ModeChange", 31, "ModeChange", ""), k(" ", 32, " ", "Space"), k("Print", 42, "Print", ""),
    k("Execute", 43, "Execute", "Open"), at("\0", 46, "\0", "NumpadDecimal", 3),
    k("a", 65, "a", "KeyA"), k("b", 66, "b", "KeyB"), k("c", 67, "c", "KeyC"),
    k("d", 68, "d", "KeyD"), k("e", 69, "e", "KeyE"), k("f", 70, "f", "KeyF"),
    k("g", 71, "g", "KeyG"), k("h", 72, "h", "KeyH"), k("i", 73, "i", "KeyI"),
    k("j", 74, "j", "KeyJ"), k("k", 75, "k", "KeyK"), k("l", 76, "l", "KeyL"),
    k("m", 77, "m", "KeyM"), k("n", 78, "n", "KeyN"), k("o", 79, "o", "KeyO"),
    k("p", 80, "p", "KeyP"), k("q", 81, "q", "KeyQ"), k("r", 82, "r", "KeyR"),
    k("s", 83, "s", "KeyS"), k("t", 84, "t", "KeyT"), k("u", 85, "u", "KeyU"),
    k("v", 86, "v", "KeyV"), k("w", 87, "w", "KeyW"), k("x", 88, "x", "KeyX"),
    k("y", 89, "y", "KeyY"), k("z", 90, "z", "KeyZ"), at("Meta", 91, "Meta", "MetaLeft", 1),
    at("*", 106, "*", "NumpadMultiply", 3), at("+", 107, "+", "NumpadAdd", 3),
    at("-", 109, "-", "NumpadSubtract", 3), at("/", 111, "/", "NumpadDivide", 3),
    k(";", 186, ";", "Semicolon"), k("=", 187, "=", "Equal"), k(",", 188, ",", "Comma"),
    k(".", 190, ".", "Period"), k("`", 192, "`", "Backquote"), k("[", 219, "[", "BracketLeft"),
    k("\\", 220, "\\", "Backslash"), k("]", 221, "]", "BracketRight"), k("'", 222, "'", "Quote"),
    k("Attn", 246, "Attn", ""), k("CrSel", 247, "CrSel", "Props"), k("ExSel", 248, "ExSel", ""),
    k("EraseEof", 249, "EraseEof", ""), k("Play", 250, "Play", ""),
    k("ZoomOut", 251, "ZoomOut", ""), k(")", 48, ")", "Digit0"), k("!", 49, "!", "Digit1"),
    k("@", 50, "@", "Digit2"), k("#", 51, "#", "Digit3"), k("$", 52, "$", "Digit4"),
    k("%", 53, "%", "Digit5"), k("^", 54, "^", "Digit6"), k("&", 55, "&", "Digit7"),
    k("(", 57, "(", "Digit9"), k("A", 65, "A", "KeyA"), k("B", 66, "B", "KeyB"),
    k("C", 67, "C", "KeyC"), k("D", 68, "D", "KeyD"), k("E", 69, "E", "KeyE"),
    k("F", 70, "F", "KeyF"), k("G", 71, "G", "KeyG"), k("H", 72, "H", "KeyH"),
    k("I", 73, "I", "KeyI"), k("J", 74, "J", "KeyJ"), k("K", 75, "K", "KeyK"),
    k("L", 76, "L", "KeyL"), k("M", 77, "M", "KeyM"), k("N", 78, "N", "KeyN"),
    k("O", 79, "O", "KeyO"), k("P", 80, "P", "KeyP"), k("Q", 81, "Q", "KeyQ"),
    k("R", 82, "R", "KeyR"), k("S", 83, "S", "KeyS"), k("T", 84, "T", "KeyT"),
    k("U", 85, "U", "KeyU"), k("V", 86, "V", "KeyV"), k("W", 87, "W", "KeyW"),
    k("X", 88, "X", "KeyX"), k("Y", 89, "Y", "KeyY"), k("Z", 90, "Z", "KeyZ"),
    k(":", 186, ":", "Semicolon"), k("<", 188, "<", "Comma"), k("_", 189, "_", "Minus"),
    k(">", 190, ">", "Period"), k("?", 191, "?", "Slash"), k("~", 192, "~", "Backquote"),
    k("{", 219, "{", "BracketLeft"), k("|", 220, "|", "Backslash"),
    k("}", 221, "}", "BracketRight"), k("\"", 222, "\"", "Quote"),
    at("SoftLeft", 0, "SoftLeft", "SoftLeft", 4), at("SoftRight", 0, "SoftRight", "SoftRight", 4),
    at("Camera", 44, "Camera", "Camera", 4), at("Call", 0, "Call", "Call", 4),
    at("EndCall", 95, "EndCall", "EndCall", 4),
    at("VolumeDown", 182, "VolumeDown", "VolumeDown", 4),
    at("VolumeUp", 183, "VolumeUp", "VolumeUp", 4),
];

/// The layout entry for a key name, as Puppeteer looks it up before pressing.
pub fn definition(name: &str) -> Option<&'static KeyDefinition> {
    KEYS.iter().find(|definition| definition.name == name)
}

/// Puppeteer's keyboard for one call: the modifiers held and the keys down, so key events carry
/// the same `modifiers`, `text` and `autoRepeat` as the reference's. The events go to the page
/// over the thin connection (`RawLink::run_in_order`): input goes to the page whichever of its
/// sessions sends it, and there each answer comes back sooner.
pub struct Keyboard<'a> {
    raw: &'a RawLink,
    target: &'a str,
    modifiers: u32,
    pressed: HashSet<&'static str>,
}

impl<'a> Keyboard<'a> {
    /// The keyboard of the page whose target id is `target`.
    pub fn new(raw: &'a RawLink, target: &'a str) -> Self {
        let (modifiers, pressed) = (0, HashSet::new());
        Keyboard {
            raw,
            target,
            modifiers,
            pressed,
        }
    }

    /// Puppeteer's `keyboard.down`: a key with text is a `keyDown`, one without a `rawKeyDown`.
    pub async fn down(&mut self, name: &str) -> Result<(), String> {
        let event = self.down_event(name)?;
        self.send(&[("Input.dispatchKeyEvent", event)]).await
    }

    pub async fn up(&mut self, name: &str) -> Result<(), String> {
        let event = self.up_event(name)?;
        self.send(&[("Input.dispatchKeyEvent", event)]).await
    }

    /// Sends the events in order, all at once, and waits until the page has handled each.
    async fn send(&self, events: &[(&'static str, Value)]) -> Result<(), String> {
        self.raw
            .run_in_order(self.target, events, timeouts::COMMAND)
            .await
            .map(drop)
            .map_err(|error| error.to_string())
    }

    fn down_event(&mut self, name: &str) -> Result<Value, String> {
        let key = describe(lookup(name)?, self.modifiers);
        let auto_repeat = !self.pressed.insert(key.code);
        self.modifiers |= modifier_bit(key.key);
        let kind = if key.text.is_empty() {
            "rawKeyDown"
        } else {
            "keyDown"
        };
        Ok(json!({
            "type": kind, "modifiers": self.modifiers, "windowsVirtualKeyCode": key.key_code,
            "code": key.code, "key": key.key, "text": key.text, "unmodifiedText": key.text,
            "autoRepeat": auto_repeat, "location": key.location, "isKeypad": key.location == 3,
        }))
    }

    fn up_event(&mut self, name: &str) -> Result<Value, String> {
        let key = describe(lookup(name)?, self.modifiers);
        self.modifiers &= !modifier_bit(key.key);
        self.pressed.remove(key.code);
        Ok(json!({
            "type": "keyUp", "modifiers": self.modifiers, "key": key.key,
            "windowsVirtualKeyCode": key.key_code, "code": key.code, "location": key.location,
        }))
    }

    pub async fn press(&mut self, name: &str) -> Result<(), String> {
        self.down(name).await?;
        self.up(name).await
    }

    /// Puppeteer's `keyboard.type`: layout characters are pressed as keys (so `\n` is Enter),
    /// anything else is inserted with `Input.insertText`. The same events as Puppeteer's, in
    /// the same order, but sent together: the browser queues a page's input and handles each
    /// event to the end before the next, so waiting for every answer before sending the next
    /// event (two round trips a character, most of a `fill`) changed nothing but the time.
    pub async fn type_text(&mut self, text: &str) -> Result<(), String> {
        let mut events = Vec::new();
        let mut buffer = [0; 4];
        for ch in text.chars() {
            let ch: &str = ch.encode_utf8(&mut buffer);
            if definition(ch).is_some() {
                events.push(("Input.dispatchKeyEvent", self.down_event(ch)?));
                events.push(("Input.dispatchKeyEvent", self.up_event(ch)?));
            } else {
                events.push(("Input.insertText", json!({ "text": ch })));
            }
        }
        self.send(&events).await
    }
}

/// Puppeteer's check before pressing, with its message.
fn lookup(name: &str) -> Result<&'static KeyDefinition, String> {
    definition(name).ok_or_else(|| format!("Unknown key: \"{name}\""))
}

/// Puppeteer's `#keyDescriptionForString`, as the definition an event sends: Shift picks the
/// shifted key, a one-character key types itself, and any modifier but Shift suppresses the text
/// (so `Control+A` selects rather than types).
fn describe(definition: &KeyDefinition, modifiers: u32) -> KeyDefinition {
    let mut key = *definition;
    if modifiers & SHIFT != 0 && !definition.shift_key.is_empty() {
        key.key = definition.shift_key;
    }
    if modifiers & SHIFT != 0 && definition.shift_key_code != 0 {
        key.key_code = definition.shift_key_code;
    }
    if definition.text.is_empty() && key.key.encode_utf16().count() == 1 {
        key.text = key.key;
    }
    if modifiers & !SHIFT != 0 {
        key.text = "";
    }
    key
}

/// The modifier a key holds, by its `key` value (so `ShiftLeft` counts as Shift).
fn modifier_bit(key: &str) -> u32 {
    match key {
        "Alt" => 1,
        "Control" => 2,
        "Meta" => 4,
        "Shift" => SHIFT,
        _ => 0,
    }
}

/// The reference's `parseKey`: splits `"Control+Shift+R"` on `+` (a `+` that starts a part is
/// the key itself) and returns `(modifiers, key)`: every part but the last, in order, then the
/// last. Parts are case-sensitive and never trimmed; each must be a layout name.
pub fn parse_key(input: &str) -> Result<(Vec<String>, String), String> {
    let mut parts: Vec<String> = Vec::new();
    let mut current = String::new();
    for ch in input.chars() {
        if ch == '+' && !current.is_empty() {
            parts.push(valid_key(std::mem::take(&mut current))?);
        } else {
            current.push(ch);
        }
    }
    if !current.is_empty() {
        parts.push(valid_key(current)?);
    }
    let Some(key) = parts.pop() else {
        return Err(format!("Key {input} could not be parsed."));
    };
    let repeated = |(index, part): (usize, &String)| *part == key || parts[..index].contains(part);
    if parts.iter().enumerate().any(repeated) {
        return Err(format!("Key {input} contains duplicate keys."));
    }
    Ok((parts, key))
}

/// The reference's `throwIfInvalidKey`, with its list of every valid name.
fn valid_key(part: String) -> Result<String, String> {
    if definition(&part).is_some() {
        return Ok(part);
    }
    let names: Vec<&str> = KEYS.iter().map(|definition| definition.name).collect();
    Err(format!(
        "{part} is invalid. Valid keys are: {}.",
        names.join(",")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// keyboard.test.ts expects `[key, ...modifiers]`.
    fn check(input: &str, expected: &[&str]) {
        let parsed = parse_key(input)
            .map(|(modifiers, key)| std::iter::once(key).chain(modifiers).collect::<Vec<_>>());
        assert_eq!(
            parsed,
            Ok(expected.iter().map(|s| s.to_string()).collect()),
            "{input:?}"
        );
    }

    fn error(input: &str) -> String {
        parse_key(input).err().unwrap_or_default()
    }

    #[test]
    fn parses_single_keys_and_lone_modifiers() {
        let keys = [
            "Enter", "Escape", "F5", "5", "Numpad5", "KeyA", "a", "A", " ", "\r", "\n",
        ];
        for key in keys.into_iter().chain(["Shift", "Control", "Meta"]) {
            check(key, &[key]);
        }
    }

    #[test]
    fn returns_the_primary_key_first_then_modifiers_in_order() {
        check("Shift+Enter", &["Enter", "Shift"]);
        check("Shift+A", &["A", "Shift"]);
        check("Control+Shift+P", &["P", "Control", "Shift"]);
        check("Control+Alt+Delete", &["Delete", "Control", "Alt"]);
        check("Alt+Control+Delete", &["Delete", "Alt", "Control"]);
        check("Control+Shift", &["Shift", "Control"]);
    }

    #[test]
    fn parses_a_literal_plus_and_ignores_a_trailing_separator() {
        check("+", &["+"]);
        check("Shift++", &["+", "Shift"]);
        check("Control+Shift++", &["+", "Control", "Shift"]);
        check("Control++", &["+", "Control"]);
        check("Shift+", &["Shift"]);
        check("++", &["+"]);
    }

    #[test]
    fn is_case_sensitive_and_does_not_trim() {
        check("Shift+a", &["a", "Shift"]);
        assert!(error("shift+a").starts_with("shift is invalid. Valid keys are: "));
        assert!(error("ENTER").starts_with("ENTER is invalid. Valid keys are: "));
        assert!(error("Shift + a").starts_with("Shift  is invalid. Valid keys are: "));
        assert!(error("Enter ").starts_with("Enter  is invalid. Valid keys are: "));
    }

    #[test]
    fn rejects_invalid_names_with_the_full_list() {
        assert!(error("aaaaa").starts_with("aaaaa is invalid. Valid keys are: 0,1,2,3,"));
        assert!(error("NotAKey+Enter").starts_with("NotAKey is invalid. Valid keys are: "));
        assert!(error("+a").starts_with("+a is invalid. Valid keys are: "));
        assert!(error("x1").ends_with(",Call,EndCall,VolumeDown,VolumeUp."));
    }

    #[test]
    fn rejects_empty_input_and_duplicates() {
        assert_eq!(error(""), "Key  could not be parsed.");
        assert_eq!(
            error("Shift+Shift"),
            "Key Shift+Shift contains duplicate keys."
        );
        let message = error("Control+a+Control");
        assert_eq!(message, "Key Control+a+Control contains duplicate keys.");
        assert_eq!(error("a+a"), "Key a+a contains duplicate keys.");
    }

    #[test]
    fn key_table_matches_puppeteer() {
        let mut names: Vec<&str> = KEYS.iter().map(|definition| definition.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), KEYS.len(), "names are unique");
        let enter = definition("NumpadEnter").map(|d| (d.key_code, d.key, d.text, d.location));
        assert_eq!(enter, Some((13, "Enter", "\r", 3)));
        assert_eq!(
            definition("\n").map(|d| (d.key, d.code)),
            Some(("Enter", "Enter"))
        );
        assert_eq!(definition("Abort").map(|d| d.key), Some("Cancel"));
        assert_eq!(
            definition("+").map(|d| (d.code, d.location)),
            Some(("NumpadAdd", 3))
        );
        assert_eq!(definition("ControlRight").map(|d| d.location), Some(2));
        assert_eq!(definition("Power").map(|d| d.key_code), Some(0));
        assert_eq!(lookup("Ctrl"), Err("Unknown key: \"Ctrl\"".to_string()));
    }

    #[test]
    fn describes_keys_like_puppeteer() {
        let key = |name: &str, modifiers| definition(name).map(|d| describe(d, modifiers));
        let a = key("KeyA", 0).map(|d| (d.key, d.key_code, d.code, d.text));
        assert_eq!(a, Some(("a", 65, "KeyA", "a")));
        assert_eq!(
            key("KeyA", SHIFT).map(|d| (d.key, d.text)),
            Some(("A", "A"))
        );
        assert_eq!(key("A", 2).map(|d| (d.key, d.text)), Some(("A", "")));
        assert_eq!(key("Control", 0).map(|d| d.text), Some(""));
        assert_eq!(key("Enter", SHIFT).map(|d| d.text), Some("\r"));
        assert_eq!(key("Space", 0).map(|d| d.text), Some(" "));
        let numpad = key("Numpad5", SHIFT).map(|d| (d.key, d.key_code, d.text));
        assert_eq!(numpad, Some(("5", 101, "5")));
        assert_eq!(
            key("Numpad5", 0).map(|d| (d.key, d.key_code, d.text)),
            Some(("Clear", 12, ""))
        );
        assert_eq!(key("Tab", 0).map(|d| (d.key_code, d.text)), Some((9, "")));
        assert_eq!(
            modifier_bit("Shift") | modifier_bit("Meta") | modifier_bit("a"),
            SHIFT | 4
        );
    }
}
