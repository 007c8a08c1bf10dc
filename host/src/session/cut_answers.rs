//! The answers `--maxOutputTokens` cut, kept for the session that got them: a cursor names one
//! and where its rest starts; `resources/read` gets one whole. Only this session's store is
//! ever searched, so another session's (or tenant's) cursor is simply unknown here; ids are
//! random, so one cannot be guessed either.

use std::collections::VecDeque;

/// Cut answers a session keeps; an older one is dropped when a new one is cut.
pub const KEPT: usize = 8;
/// The scheme and path of the resources that serve whole answers.
pub const URI_PREFIX: &str = "devtools-mcp://answers/";

/// What the page was when an answer was cut: its rest is valid while it stays so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageState {
    pub page_id: u32,
    /// The main frame's URL and document (loaderId): a navigation or a reload changes them.
    pub url: String,
    pub document: String,
}

#[derive(Debug, Clone)]
pub struct CutAnswer {
    pub id: String,
    pub tool: String,
    pub text: String,
    /// `None`: the answer was about no page (e.g. with no page open).
    pub page: Option<PageState>,
    /// An image the budget moved out of an answer (then `text` is empty): read whole only.
    pub image: Option<KeptImage>,
}

/// An image kept as it was in the answer.
#[derive(Debug, Clone)]
pub struct KeptImage {
    pub mime_type: String,
    /// Base64, as the answer carried it.
    pub data: String,
}

/// Why a cursor gets no rest.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CursorError {
    #[error(
        "The cursor \"{cursor}\" is not one of this session's: it comes from another session, or its answer was dropped (a session keeps its last {KEPT} cut answers). Call {tool} again without `cursor` for a fresh answer."
    )]
    Unknown { cursor: String, tool: String },
    #[error(
        "The cursor \"{cursor}\" belongs to an answer of {owner}, not of {tool}: call {owner} with it."
    )]
    OtherTool {
        cursor: String,
        owner: String,
        tool: String,
    },
}

#[derive(Default)]
pub struct CutAnswers {
    answers: VecDeque<CutAnswer>,
}

impl CutAnswers {
    /// Keeps `text`, cut from an answer of `tool`; returns its id.
    pub fn keep(&mut self, tool: &str, text: String, page: Option<PageState>) -> String {
        let mut bytes = [0u8; 12];
        // The OS's generator; without it a counter still keeps ids unique in the session.
        if getrandom::fill(&mut bytes).is_err() {
            bytes[..8].copy_from_slice(&(self.answers.len() as u64).to_le_bytes());
        }
        let id: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
        if self.answers.len() >= KEPT {
            self.answers.pop_front();
        }
        self.answers.push_back(CutAnswer {
            id: id.clone(),
            tool: tool.to_string(),
            text,
            page,
            image: None,
        });
        id
    }

    /// Keeps an image the budget moved out of an answer of `tool`; returns its id.
    pub fn keep_image(&mut self, tool: &str, image: KeptImage) -> String {
        let id = self.keep(tool, String::new(), None);
        if let Some(kept) = self.answers.back_mut() {
            kept.image = Some(image);
        }
        id
    }

    /// The answer a cursor (`id:offset`) names for `tool`, and where its rest starts.
    pub fn resume(&self, cursor: &str, tool: &str) -> Result<(&CutAnswer, usize), CursorError> {
        let unknown = || CursorError::Unknown {
            cursor: cursor.to_string(),
            tool: tool.to_string(),
        };
        let (id, offset) = cursor.split_once(':').ok_or_else(unknown)?;
        let offset: usize = offset.parse().map_err(|_| unknown())?;
        let answer = self
            .get(id)
            .filter(|answer| answer.image.is_none())
            .ok_or_else(unknown)?;
        if answer.tool != tool {
            return Err(CursorError::OtherTool {
                cursor: cursor.to_string(),
                owner: answer.tool.clone(),
                tool: tool.to_string(),
            });
        }
        if offset > answer.text.len() || !answer.text.is_char_boundary(offset) {
            return Err(unknown());
        }
        Ok((answer, offset))
    }

    /// The answer behind a resource URI of this session.
    pub fn by_uri(&self, uri: &str) -> Option<&CutAnswer> {
        self.get(uri.strip_prefix(URI_PREFIX)?)
    }

    /// Forgets an answer whose page changed: its rest is gone for good.
    pub fn forget(&mut self, id: &str) {
        self.answers.retain(|answer| answer.id != id);
    }

    fn get(&self, id: &str) -> Option<&CutAnswer> {
        self.answers.iter().find(|answer| answer.id == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_names_its_answer_and_offset_for_its_tool_only() {
        let mut store = CutAnswers::default();
        let id = store.keep("take_snapshot", "abc\ndef".into(), None);
        assert_eq!(id.len(), 24);
        let (answer, offset) = store
            .resume(&format!("{id}:4"), "take_snapshot")
            .expect("present");
        assert_eq!((&answer.text[offset..], offset), ("def", 4));
        assert!(matches!(
            store.resume(&format!("{id}:4"), "list_pages"),
            Err(CursorError::OtherTool { .. })
        ));
        for bad in [format!("{id}:99"), id.clone(), "nope:1".into()] {
            let error = store.resume(&bad, "take_snapshot").expect_err("an error");
            assert!(
                error
                    .to_string()
                    .contains("Call take_snapshot again without `cursor`"),
                "{error}"
            );
        }
        assert!(store.by_uri(&format!("{URI_PREFIX}{id}")).is_some());
        assert!(store.by_uri("devtools-mcp://answers/other").is_none());
        // Another session's store knows none of them.
        assert!(
            CutAnswers::default()
                .by_uri(&format!("{URI_PREFIX}{id}"))
                .is_none()
        );
    }

    #[test]
    fn only_the_last_answers_are_kept() {
        let mut store = CutAnswers::default();
        let first = store.keep("t", "x".into(), None);
        for _ in 0..KEPT {
            store.keep("t", "y".into(), None);
        }
        assert!(store.resume(&format!("{first}:0"), "t").is_err());
        store.forget(&first);
    }
}
