//! `--maxOutputTokens`: the one place an answer's text is held to a budget. What does not fit
//! is cut at a line boundary (a uid line is never split), and the piece ends with lines that
//! say how much was left out and which call gets the rest.
//!
//! Tokens are estimated, not counted: one token per [`BYTES_PER_TOKEN`] bytes of UTF-8,
//! rounded up. Tokenizers such as o200k or cl100k give about one token per 4 bytes of English
//! or code and about one per 3 of snapshot lines (uids, quotes) or CJK text, so the estimate
//! errs on the side of shorter answers; a tokenizer crate would add megabytes of vocabulary
//! for a count the model's own tokenizer would still not match exactly.

/// The longest edge a model sees of an image: larger ones are scaled down before they are
/// read (Anthropic's documented limit; OpenAI's high-detail mode scales to 2048 then 768 on
/// the short side, fewer tokens than this estimate gives).
const IMAGE_EDGE: f64 = 1568.0;
/// Pixels per token of an image (Anthropic's documented estimate, `width * height / 750`).
const PIXELS_PER_TOKEN: f64 = 750.0;

/// The tokens an image of `width` x `height` pixels costs a model, estimated as its provider
/// documents it: scaled to [`IMAGE_EDGE`] on its longer edge, then one token per
/// [`PIXELS_PER_TOKEN`] pixels, rounded up.
pub fn image_tokens(width: usize, height: usize) -> usize {
    let (width, height) = (width as f64, height as f64);
    let scale = (IMAGE_EDGE / width.max(height).max(1.0)).min(1.0);
    ((width * scale) * (height * scale) / PIXELS_PER_TOKEN).ceil() as usize
}

/// Bytes per estimated token.
pub const BYTES_PER_TOKEN: usize = 3;
/// The smallest budget accepted: room for a few lines and the lines that point to the rest.
pub const MIN_TOKENS: u32 = 200;
/// Every line the budget adds starts with this, so a reader (or a test) tells them apart.
pub const NOTE_PREFIX: &str = "[Output budget]";
/// Under a cut, at most this share of the budget lists focused and interactive elements the
/// cut left out (a snapshot's), so the agent can act on them without paging.
const INDEX_SHARE: usize = 5;
/// Roles an agent acts on (a non-verbose snapshot does not say `focusable`).
const INTERACTIVE_ROLES: [&str; 16] = [
    "link",
    "button",
    "textbox",
    "searchbox",
    "combobox",
    "checkbox",
    "radio",
    "switch",
    "slider",
    "spinbutton",
    "listbox",
    "option",
    "menuitem",
    "tab",
    "treeitem",
    "textarea",
];
/// An index entry is cut to this many bytes.
const INDEX_ENTRY_BYTES: usize = 96;

/// The estimated tokens of `text`.
pub fn estimate_tokens(text: &str) -> usize {
    text.len().div_ceil(BYTES_PER_TOKEN)
}

/// Bytes that fit in `tokens`.
pub fn bytes_for(tokens: u32) -> usize {
    (tokens as usize).saturating_mul(BYTES_PER_TOKEN)
}

/// Where a text is cut: it shows `text[..end]`; the rest starts at `resume`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut {
    pub end: usize,
    pub resume: usize,
}

/// Where to cut `text` so that what is shown holds at most `limit` bytes; `None` when it all
/// fits. At the last line boundary that fits; when not even the first line fits, inside it at
/// a character boundary, but never before the end of a snapshot line's `uid=...` token (so a
/// uid is never split).
pub fn cut_point(text: &str, limit: usize) -> Option<Cut> {
    if text.len() <= limit {
        return None;
    }
    // A newline byte is always a character boundary; `limit` < the length here.
    if let Some(newline) = text.as_bytes()[..=limit]
        .iter()
        .rposition(|byte| *byte == b'\n')
        && newline > 0
    {
        return Some(Cut {
            end: newline,
            resume: newline + 1,
        });
    }
    // One line longer than the budget: cut inside it, after its uid if it has one.
    let mut end = floor_char(text, limit.max(1));
    if let Some(uid_end) = uid_token_end(text) {
        end = end.max(uid_end);
    }
    if end == 0 {
        end = text.chars().next().map_or(0, char::len_utf8);
    }
    Some(Cut { end, resume: end })
}

/// The end of the `uid=...` token a snapshot line starts with (after its indentation).
fn uid_token_end(line: &str) -> Option<usize> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    let rest = line[indent..].strip_prefix("uid=")?;
    let token = rest.find([' ', '\n']).unwrap_or(rest.len());
    Some(indent + "uid=".len() + token)
}

/// The largest character boundary at or before `at`.
fn floor_char(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// What one piece of a cut answer shows, and what its notes say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    /// The shown text, then the budget's lines.
    pub text: String,
    /// Where the next piece starts in the whole text; `None`: this piece ends it.
    pub next: Option<usize>,
    pub left_out_bytes: usize,
    pub left_out_lines: usize,
}

/// How to name the call that gets the rest and the whole answer, given where the rest starts.
pub trait Pointers {
    /// The note's call, e.g. `take_snapshot with {"cursor": "..."}`.
    fn rest_call(&self, resume: usize) -> String;
    /// The whole answer as a resource, when the client can read one.
    fn whole(&self) -> Option<String>;
}

/// The piece of `whole` from byte `start` that fits in `tokens`, with its notes.
pub fn piece(whole: &str, start: usize, tokens: u32, pointers: &dyn Pointers) -> Piece {
    let text = &whole[start.min(whole.len())..];
    let budget = bytes_for(tokens);
    if text.len() <= budget {
        return Piece {
            text: text.to_string(),
            next: None,
            left_out_bytes: 0,
            left_out_lines: 0,
        };
    }
    // The last line's longest form: the largest numbers it can hold.
    let longest_note = last_line(text.len(), text.len(), start + text.len(), pointers).len();
    let reserve = longest_note + 1;
    let mut limit = budget.saturating_sub(reserve);
    let has_index = index_line(&text[cut_or_all(text, limit)..], budget / INDEX_SHARE).is_some();
    if has_index {
        limit = limit.saturating_sub(budget / INDEX_SHARE + 1);
    }
    let cut = cut_point(text, limit).unwrap_or(Cut {
        end: text.len(),
        resume: text.len(),
    });
    let rest = &text[cut.resume..];
    let mut shown = text[..cut.end].to_string();
    if has_index && let Some(index) = index_line(rest, budget / INDEX_SHARE) {
        shown.push('\n');
        shown.push_str(&index);
    }
    let left_out_lines = rest.lines().count();
    shown.push('\n');
    shown.push_str(&last_line(
        rest.len(),
        left_out_lines,
        start + cut.resume,
        pointers,
    ));
    Piece {
        text: shown,
        next: Some(start + cut.resume),
        left_out_bytes: rest.len(),
        left_out_lines,
    }
}

fn cut_or_all(text: &str, limit: usize) -> usize {
    cut_point(text, limit).map_or(text.len(), |cut| cut.resume)
}

/// The piece's last line: how much was left out and the call that gets it.
fn last_line(bytes: usize, lines: usize, resume: usize, pointers: &dyn Pointers) -> String {
    let whole = match pointers.whole() {
        Some(uri) => format!(" The whole answer: resources/read {uri}."),
        None => String::new(),
    };
    format!(
        "{NOTE_PREFIX} Left out: {lines} lines (~{} tokens). The rest: call {}.{whole}",
        bytes.div_ceil(BYTES_PER_TOKEN),
        pointers.rest_call(resume)
    )
}

/// The focused, then the interactive (focusable) elements of the left-out snapshot lines, in
/// at most `room` bytes; `None` when there are none.
fn index_line(rest: &str, room: usize) -> Option<String> {
    let uid_lines = || {
        rest.lines()
            .map(str::trim_start)
            .filter(|line| line.starts_with("uid="))
    };
    // Focused first; then fields and buttons, which are few, before links, which may be
    // thousands.
    let focused = uid_lines().filter(|line| has_word(line, "focused"));
    let interactive = |links: bool| {
        uid_lines().filter(move |line| {
            let role = line.split(' ').nth(1).unwrap_or_default();
            !has_word(line, "focused")
                && (INTERACTIVE_ROLES.contains(&role) || has_word(line, "focusable"))
                && (role == "link") == links
        })
    };
    let mut line = format!("{NOTE_PREFIX} Further down, focused and interactive:");
    let header = line.len();
    for entry in focused.chain(interactive(false)).chain(interactive(true)) {
        let suffix = if has_word(entry, "focused") {
            " focused"
        } else {
            ""
        };
        let entry = short_entry(entry);
        if line.len() + entry.len() + suffix.len() + 2 > room {
            break;
        }
        line.push_str(if line.len() == header { " " } else { "; " });
        line.push_str(entry);
        line.push_str(suffix);
    }
    (line.len() > header).then_some(line)
}

/// An index entry: the line's uid, role and name (its attributes left out, a URL most often),
/// at most [`INDEX_ENTRY_BYTES`].
fn short_entry(line: &str) -> &str {
    let name_end = line.find(" \"").and_then(|open| {
        let close = line[open + 2..].find('"')?;
        Some(open + 2 + close + 1)
    });
    let end = name_end.unwrap_or(line.len()).min(INDEX_ENTRY_BYTES);
    &line[..floor_char(line, end)]
}

fn has_word(line: &str, word: &str) -> bool {
    line.split(' ').any(|part| part == word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_image_costs_what_its_pixels_cost_after_scaling() {
        assert_eq!(image_tokens(750, 1), 1);
        assert_eq!(image_tokens(800, 600), 640);
        // 3136 x 1568 is scaled to 1568 x 784 first.
        assert_eq!(image_tokens(3136, 1568), image_tokens(1568, 784));
        assert_eq!(image_tokens(0, 0), 0);
    }

    struct Named;
    impl Pointers for Named {
        fn rest_call(&self, resume: usize) -> String {
            format!("take_snapshot with {{\"cursor\": \"c:{resume}\"}}")
        }
        fn whole(&self) -> Option<String> {
            Some("devtools-mcp://answers/c".into())
        }
    }

    fn snapshot(lines: usize) -> String {
        (0..lines)
            .map(|i| format!("  uid=1_{i} link \"Item number {i} of the list\" focusable"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn a_text_that_fits_is_whole() {
        let piece = piece("a\nb", 0, MIN_TOKENS, &Named);
        assert_eq!(piece.text, "a\nb");
        assert_eq!(piece.next, None);
    }

    #[test]
    fn cuts_at_a_line_boundary_within_the_budget_and_says_how_to_get_the_rest() {
        let whole = snapshot(400);
        let piece = piece(&whole, 0, MIN_TOKENS, &Named);
        assert!(
            estimate_tokens(&piece.text) <= MIN_TOKENS as usize,
            "{}",
            piece.text
        );
        let last = piece.text.lines().last().expect("present");
        let resume = piece.next.expect("present");
        assert_eq!(
            last,
            format!(
                "[Output budget] Left out: {} lines (~{} tokens). The rest: call take_snapshot with {{\"cursor\": \"c:{resume}\"}}. The whole answer: resources/read devtools-mcp://answers/c.",
                piece.left_out_lines,
                (whole.len() - resume).div_ceil(3)
            )
        );
        let shown: Vec<&str> = piece
            .text
            .lines()
            .filter(|line| !line.starts_with(NOTE_PREFIX))
            .collect();
        // Whole lines only, the first ones, and the rest starts at the next.
        assert_eq!(shown.join("\n"), whole[..resume - 1]);
        assert!(whole[resume..].starts_with("  uid=1_"));
        assert_eq!(
            shown.len() + piece.left_out_lines,
            400,
            "every line shown or left out"
        );
    }

    #[test]
    fn pieces_joined_give_the_whole_text() {
        let whole = snapshot(1000);
        let (mut start, mut shown) = (0, Vec::new());
        loop {
            let piece = piece(&whole, start, 500, &Named);
            assert!(estimate_tokens(&piece.text) <= 500);
            shown.extend(
                piece
                    .text
                    .lines()
                    .filter(|line| !line.starts_with(NOTE_PREFIX))
                    .map(str::to_string),
            );
            match piece.next {
                Some(next) => start = next,
                None => break,
            }
        }
        assert_eq!(shown.join("\n"), whole);
    }

    #[test]
    fn a_uid_line_longer_than_the_budget_keeps_its_uid_whole() {
        let line = format!("  uid=12_345 StaticText \"{}\"", "x".repeat(2000));
        let cut = cut_point(&line, 5).expect("present");
        assert_eq!(&line[..cut.end], "  uid=12_345");
        let cut = cut_point(&line, 100).expect("present");
        assert_eq!(cut.end, 100);
        // Multibyte text is cut at a character boundary.
        let text = "é".repeat(100);
        let cut = cut_point(&text, 51).expect("present");
        assert_eq!(cut.end, 50);
    }

    #[test]
    fn focused_and_interactive_elements_left_out_are_listed_first() {
        let mut whole = snapshot(300);
        whole.push_str("\n  uid=1_900 button \"Send\" focusable");
        whole.push_str("\n  uid=1_901 textbox \"Search\" focusable focused value=\"q\"");
        let piece = piece(&whole, 0, 400, &Named);
        let index = piece
            .text
            .lines()
            .find(|line| line.contains("Further down"))
            .expect("an index line");
        assert!(
            index.starts_with("[Output budget] Further down, focused and interactive: uid=1_901 textbox \"Search\" focused; uid=1_900 button \"Send\"; uid=1_"),
            "{index}"
        );
        assert!(estimate_tokens(&piece.text) <= 400);
    }
}
