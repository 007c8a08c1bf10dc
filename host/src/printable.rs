//! Text safe to show a person: the characters that change how surrounding text is displayed
//! or read (controls, bidi overrides, zero-width) found or made visible. Tool names, plugin
//! texts and file names pass through here before a terminal, a log or an answer shows them.

/// Characters that change how the surrounding text is displayed or read: C0/C1 controls
/// (newlines and tabs aside), bidi embeddings, overrides and isolates, zero-width characters.
pub fn is_deceptive(c: char, allow_newlines: bool) -> bool {
    if allow_newlines && matches!(c, '\n' | '\t') {
        return false;
    }
    c.is_control()
        || matches!(c,
            '\u{061C}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2069}' | '\u{FEFF}')
}

/// Text safe to print on a terminal or put in a log line: control, escape and bidi
/// characters become `\u{..}` escapes; everything else is kept.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if is_deceptive(c, false) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// Like [`escape`], keeping newlines and tabs (multi-line descriptions).
pub fn escape_keeping_lines(text: &str) -> String {
    text.split('\n')
        .map(|line| escape(line).replace("\\u{9}", "\t"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_makes_terminal_controls_visible() {
        assert_eq!(escape("a\u{1b}[31mb\u{202E}"), "a\\u{1b}[31mb\\u{202e}");
        assert_eq!(escape_keeping_lines("a\n\tb\u{7}"), "a\n\tb\\u{7}");
    }
}
