//! `--maxOutputTokens` (a tenant's `max_output_tokens`) over every answer, built-in or plugin:
//! applied once, after assembly. A cut answer is kept for the session; its piece ends with the
//! `cursor` the same tool accepts for the rest (valid while the page stays the same document)
//! and, for clients that read resources, a `resource_link` to the whole text.

use crate::response::budget::{self, Pointers, estimate_tokens};
use crate::session::Session;
use crate::session::cut_answers::{KEPT, KeptImage, PageState, URI_PREFIX};
use base64::Engine as _;
use rmcp::ErrorData;
use rmcp::model::{
    CallToolResult, ContentBlock, JsonObject, ReadResourceResult, Resource, ResourceContents, Tool,
};
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// The argument that asks for the rest of a cut answer.
pub const CURSOR: &str = "cursor";

/// How one call's answer is held to the budget.
#[derive(Debug, Clone, Copy)]
pub struct AnswerBudget {
    pub tokens: u32,
    /// The client reads `resource_link` content (protocol 2025-06-18 and later).
    pub resource_links: bool,
    pub structured: bool,
    /// `--slim`: structured content is the text item itself.
    pub slim: bool,
}

struct Named<'a> {
    tool: &'a str,
    id: &'a str,
    links: bool,
}

impl Pointers for Named<'_> {
    fn rest_call(&self, resume: usize) -> String {
        format!(
            "{} with {{\"{CURSOR}\": \"{}:{resume}\"}}",
            self.tool, self.id
        )
    }

    fn whole(&self) -> Option<String> {
        self.links.then(|| format!("{URI_PREFIX}{}", self.id))
    }
}

/// `tools` with the optional `cursor` parameter, listed only when a budget is on (the default
/// list stays 1.11.0's).
pub fn with_cursor(tools: Vec<Tool>) -> Vec<Tool> {
    tools
        .into_iter()
        .map(|mut tool| {
            let mut schema: JsonObject = (*tool.input_schema).clone();
            let properties = schema
                .entry("properties")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(properties) = properties {
                properties.insert(
                    CURSOR.into(),
                    json!({
                        "type": "string",
                        "description": "The rest of an answer cut by the output budget: the cursor its last line gives. Valid until the page navigates or reloads; give no other argument with it."
                    }),
                );
            }
            tool.input_schema = Arc::new(schema);
            tool
        })
        .collect()
}

/// The page an answer is about (the routed `pageId`, or the selected page), as it is now.
async fn page_state(session: &Session, page_id: Option<u32>) -> Option<PageState> {
    let link = {
        let state = session.lock().await;
        let id = page_id.or_else(|| state.selected_id().ok())?;
        state.page(id).ok().map(|page| (id, page.link()))
    };
    let (page_id, link) = link?;
    let (url, document) = link.document().await.ok()?;
    Some(PageState {
        page_id,
        url,
        document,
    })
}

fn page_argument(arguments: &Map<String, Value>) -> Option<u32> {
    arguments
        .get("pageId")
        .and_then(Value::as_u64)
        .and_then(|id| u32::try_from(id).ok())
}

/// The answer held to the budget: within it, unchanged; otherwise its first piece.
pub async fn held_to(
    session: &Session,
    tool: &str,
    arguments: &Map<String, Value>,
    mut answer: CallToolResult,
    budget: AnswerBudget,
) -> CallToolResult {
    let text = match answer.content.first() {
        Some(ContentBlock::Text(text)) => text.text.clone(),
        _ => String::new(),
    };
    let mut note = Map::new();
    if estimate_tokens(&text) > budget.tokens as usize {
        let page = page_state(session, page_argument(arguments)).await;
        let id = session.cut_answers().keep(tool, text.clone(), page);
        let named = Named {
            tool,
            id: &id,
            links: budget.resource_links,
        };
        let piece = budget::piece(&text, 0, budget.tokens, &named);
        answer.content[0] = ContentBlock::text(piece.text.clone());
        if budget.resource_links {
            answer.content.push(resource_link(&id, tool, text.len()));
        }
        note = piece_note(&piece, &named);
    }
    move_images_over(session, tool, &mut answer, budget);
    if let Some(Value::Object(structured)) = &mut answer.structured_content {
        match budget.slim {
            // A slim answer's structured content is its text item: the piece, as the text.
            true => {
                if let Some(ContentBlock::Text(shown)) = answer.content.first() {
                    structured.insert("text".into(), Value::from(shown.text.clone()));
                }
            }
            false => within(structured, budget.tokens, note),
        }
    }
    answer
}

/// Images count in the budget as a model pays for them (`budget::image_tokens`): those that
/// do not fit beside the text leave the answer, kept for the session as a resource (linked for
/// clients that read links), and a line says so, what they were and how to get them.
fn move_images_over(
    session: &Session,
    tool: &str,
    answer: &mut CallToolResult,
    budget: AnswerBudget,
) {
    let text_tokens = match answer.content.first() {
        Some(ContentBlock::Text(text)) => estimate_tokens(&text.text),
        _ => 0,
    };
    let mut room = (budget.tokens as usize).saturating_sub(text_tokens);
    let mut lines = Vec::new();
    let mut links = Vec::new();
    answer.content.retain(|block| {
        let ContentBlock::Image(image) = block else {
            return true;
        };
        let size = base64::engine::general_purpose::STANDARD
            .decode(image.data.as_bytes())
            .ok()
            .and_then(|bytes| imagesize::blob_size(&bytes).ok());
        let Some(size) = size else {
            return true;
        };
        let tokens = budget::image_tokens(size.width, size.height);
        if tokens <= room {
            room -= tokens;
            return true;
        }
        let id = session.cut_answers().keep_image(
            tool,
            KeptImage {
                mime_type: image.mime_type.clone(),
                data: image.data.clone(),
            },
        );
        let uri = format!("{URI_PREFIX}{id}");
        let (width, height) = (size.width, size.height);
        let left = budget.tokens;
        lines.push(match budget.resource_links {
            true => format!(
                "{} An image of {width}x{height} pixels (about {tokens} tokens) did not fit the budget of {left} tokens beside this text: it is the resource {uri} (read it for the image).",
                budget::NOTE_PREFIX
            ),
            false => format!(
                "{} An image of {width}x{height} pixels (about {tokens} tokens) did not fit the budget of {left} tokens beside this text: take it again with `filePath` to save it to a file, or smaller (an element's screenshot, or a smaller viewport).",
                budget::NOTE_PREFIX
            ),
        });
        if budget.resource_links {
            let resource = Resource::new(uri, format!("{tool} image"))
                .with_mime_type(image.mime_type.clone())
                .with_description("An image the output budget moved out of an answer, for this session while it lasts.");
            links.push(ContentBlock::resource_link(resource));
        }
        false
    });
    if lines.is_empty() {
        return;
    }
    match answer.content.first_mut() {
        Some(ContentBlock::Text(text)) => {
            text.text = format!("{}\n{}", text.text, lines.join("\n"));
        }
        _ => answer
            .content
            .insert(0, ContentBlock::text(lines.join("\n"))),
    }
    answer.content.extend(links);
}

fn resource_link(id: &str, tool: &str, bytes: usize) -> ContentBlock {
    let resource = Resource::new(format!("{URI_PREFIX}{id}"), format!("{tool} answer"))
        .with_mime_type("text/plain")
        .with_size(bytes as u64)
        .with_description(
            "The whole answer the output budget cut, for this session while it lasts.",
        );
    ContentBlock::resource_link(resource)
}

/// What structured content says of a cut: `outputBudget`.
fn piece_note(piece: &budget::Piece, named: &Named) -> Map<String, Value> {
    let mut note = Map::new();
    note.insert("leftOutLines".into(), json!(piece.left_out_lines));
    note.insert(
        "leftOutTokens".into(),
        json!(piece.left_out_bytes.div_ceil(budget::BYTES_PER_TOKEN)),
    );
    if let Some(next) = piece.next {
        note.insert(CURSOR.into(), json!(format!("{}:{next}", named.id)));
    }
    if let Some(uri) = named.whole() {
        note.insert("resource".into(), json!(uri));
    }
    note
}

/// Keeps structured content within the budget too: its largest keys are left out (and named
/// in `outputBudget.omitted`) until the rest fits in half of it.
fn within(structured: &mut Map<String, Value>, tokens: u32, mut note: Map<String, Value>) {
    let room = budget::bytes_for(tokens) / 2;
    let mut sizes: Vec<(String, usize)> = structured
        .iter()
        .map(|(key, value)| (key.clone(), value.to_string().len()))
        .collect();
    sizes.sort_by_key(|(_, size)| std::cmp::Reverse(*size));
    let mut total: usize = sizes.iter().map(|(key, size)| key.len() + size).sum();
    let mut omitted = Vec::new();
    for (key, size) in sizes {
        if total <= room {
            break;
        }
        structured.remove(&key);
        total -= key.len() + size;
        omitted.push(Value::String(key));
    }
    if !omitted.is_empty() {
        note.insert("omitted".into(), Value::Array(omitted));
    }
    if !note.is_empty() {
        structured.insert("outputBudget".into(), Value::Object(note));
    }
}

/// The next piece of a cut answer: `cursor` (and at most the `pageId` it was about).
pub async fn rest(
    session: &Session,
    tool: &str,
    arguments: &Map<String, Value>,
    budget: AnswerBudget,
) -> CallToolResult {
    let Some(Value::String(cursor)) = arguments.get(CURSOR) else {
        return refused(format!(
            "`{CURSOR}` must be the string an answer's last line gives."
        ));
    };
    if let Some(other) = arguments
        .keys()
        .find(|key| *key != CURSOR && *key != "pageId")
    {
        return refused(format!(
            "With `{CURSOR}`, {tool} takes no other argument (got `{other}`): the cursor gets the rest of the answer it was given with. Call {tool} without `{CURSOR}` for a new answer."
        ));
    }
    let found = session
        .cut_answers()
        .resume(cursor, tool)
        .map(|(answer, offset)| (answer.clone(), offset));
    let (answer, offset) = match found {
        Ok(found) => found,
        Err(error) => return refused(error.to_string()),
    };
    if let Some(then) = &answer.page {
        if page_argument(arguments).is_some_and(|id| id != then.page_id) {
            return refused(format!(
                "The cursor belongs to an answer about page {}, not page {}. Call {tool} with it and pageId {}, or without `{CURSOR}`.",
                then.page_id,
                page_argument(arguments).unwrap_or_default(),
                then.page_id
            ));
        }
        let now = page_state(session, Some(then.page_id)).await;
        if now.as_ref() != Some(then) {
            session.cut_answers().forget(&answer.id);
            let what = match now {
                None => "was closed",
                Some(_) => "changed (it navigated or reloaded)",
            };
            return refused(format!(
                "The page {what} since this answer was given, so its rest no longer describes it and was dropped. Call {tool} again without `{CURSOR}` for a fresh answer."
            ));
        }
    }
    let named = Named {
        tool,
        id: &answer.id,
        links: budget.resource_links,
    };
    let piece = budget::piece(&answer.text, offset, budget.tokens, &named);
    let mut result = CallToolResult::success(vec![ContentBlock::text(piece.text.clone())]);
    if budget.structured {
        let mut note = piece_note(&piece, &named);
        note.insert("continued".into(), json!(true));
        result.structured_content = Some(match budget.slim {
            true => json!({ "type": "text", "text": piece.text }),
            false => json!({ "outputBudget": note }),
        });
    }
    result
}

/// `resources/read` of a cut answer: only one of `session`'s own, so another session's (or
/// tenant's) link is refused.
pub fn read_whole(session: &Session, uri: &str) -> Result<ReadResourceResult, ErrorData> {
    match session.cut_answers().by_uri(uri) {
        Some(answer) => Ok(ReadResourceResult::new(vec![match &answer.image {
            Some(image) => ResourceContents::blob(image.data.clone(), uri)
                .with_mime_type(image.mime_type.clone()),
            None => ResourceContents::text(answer.text.clone(), uri).with_mime_type("text/plain"),
        }])),
        None => Err(ErrorData::resource_not_found(
            format!(
                "{uri} is not an answer of this session: a session reads only the answers cut for it, and keeps its last {KEPT}. Call the tool again for a fresh answer."
            ),
            None,
        )),
    }
}

fn refused(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structured_content_keeps_its_small_keys_and_names_the_others() {
        let mut structured = json!({
            "message": "ok",
            "snapshot": {"children": "x".repeat(10_000)},
            "pages": [{"id": 1}]
        });
        let Value::Object(map) = &mut structured else {
            unreachable!()
        };
        within(map, 500, Map::new());
        assert_eq!(
            structured,
            json!({"message": "ok", "pages": [{"id": 1}], "outputBudget": {"omitted": ["snapshot"]}})
        );
    }

    #[test]
    fn the_cursor_parameter_is_added_to_every_schema() {
        let tool = Tool::new(
            "list_pages",
            "Lists pages",
            Arc::new(
                json!({"type": "object"})
                    .as_object()
                    .expect("present")
                    .clone(),
            ),
        );
        let listed = with_cursor(vec![tool]);
        assert_eq!(
            listed[0].input_schema["properties"]["cursor"]["type"],
            "string"
        );
    }
}
