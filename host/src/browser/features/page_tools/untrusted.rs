//! Text a page supplied (tool names, descriptions, schemas, results), made safe to print in a
//! response an agent reads: one line, no control characters, no invisible or bidirectional
//! formatting that could make it read differently from what it is, bounded in length.

/// At most this many characters of one page-supplied string are printed.
const MAX_CHARS: usize = 2_000;

/// A page-supplied string as a quoted JSON string literal (`"..."`) with every control, format
/// and line-separator character escaped as `\uXXXX`, cut at `MAX_CHARS` characters.
pub fn quoted(text: &str) -> String {
    let mut cut: String = text.chars().take(MAX_CHARS).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    escape_invisible(&serde_json::Value::String(cut).to_string(), false)
}

/// JSON text (already valid) with the characters JSON leaves raw but a reader should see escaped:
/// bidi controls, zero-width characters, line and paragraph separators. Inside JSON strings
/// `\uXXXX` means the same character, so the value does not change.
pub fn json(value: &serde_json::Value) -> String {
    escape_invisible(&value.to_string(), false)
}

/// Pretty JSON (two-space indent, as `JSON.stringify(value, null, 2)`), escaped like `json`;
/// its own line breaks stay (newlines inside strings are escaped by JSON itself).
pub fn json_pretty(value: &serde_json::Value) -> String {
    let text = serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string());
    escape_invisible(&text, true)
}

fn escape_invisible(text: &str, keep_newlines: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for character in text.chars() {
        if is_invisible(character) && !(keep_newlines && character == '\n') {
            out.push_str(&format!("\\u{:04x}", u32::from(character)));
        } else {
            out.push(character);
        }
    }
    out
}

/// Controls (C0, DEL, C1) and the Unicode format characters that reorder or hide text.
fn is_invisible(character: char) -> bool {
    let code = u32::from(character);
    character.is_control()
        || matches!(code,
            0x00AD | 0x061C | 0x180E | 0x200B..=0x200F | 0x2028..=0x202E | 0x2060..=0x206F
            | 0xFEFF | 0xFFF9..=0xFFFB | 0xE0000..=0xE007F)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newlines_quotes_and_controls_stay_on_one_line() {
        assert_eq!(quoted("a\nb\"c\u{7}"), r#""a\nb\"c\u0007""#);
    }

    #[test]
    fn bidi_and_zero_width_characters_are_visible() {
        let printed = quoted("safe\u{202E}txt.exe\u{200B}\u{2066}\u{2028}");
        assert_eq!(printed, r#""safe\u202etxt.exe\u200b\u2066\u2028""#);
        assert!(printed.chars().all(|c| !is_invisible(c)));
    }

    #[test]
    fn schemas_keep_their_meaning() {
        let value = serde_json::json!({ "description": "x\u{202E}y", "type": "object" });
        let printed = json(&value);
        assert!(printed.contains(r"x\u202ey"));
        let parsed: serde_json::Value = serde_json::from_str(&printed).expect("still JSON");
        assert_eq!(parsed, value);
    }

    #[test]
    fn pretty_json_keeps_its_layout_only() {
        let value = serde_json::json!({ "text": "a\nb\u{202E}" });
        assert_eq!(json_pretty(&value), "{\n  \"text\": \"a\\nb\\u202e\"\n}");
    }

    #[test]
    fn long_strings_are_cut() {
        let printed = quoted(&"a".repeat(MAX_CHARS * 2));
        assert!(printed.chars().count() < MAX_CHARS + 5);
        assert!(printed.ends_with("…\""));
    }
}
