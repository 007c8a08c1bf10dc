//! Source maps of tools written in a compiled language (TypeScript): `plugin build` carries
//! the compiler's map in the component (a custom section), and a crash's JavaScript stack is
//! told in the author's own file and lines (`handle@src/tool.ts:12:5`), not in the generated
//! `build/tool.js`. Only the mappings are kept (no source text), and both the section and
//! the decoded map are bounded. A hand-written decoder: the format's VLQ mappings are forty
//! lines, against a crate with a dozen dependencies for the same.

use std::collections::HashMap;

/// The custom section `plugin build` appends to a TypeScript tool's component.
pub const SECTION: &str = "devtools-mcp:source-map";
/// The largest map the loader reads (a tool's map is a few KiB).
pub const MAX_BYTES: usize = 1 << 20;

/// One mapping: from a generated column to a place in a source (all 0-based).
#[derive(Clone, Copy, Debug)]
struct Segment {
    column: u32,
    source: u32,
    line: u32,
    original_column: u32,
}

/// A decoded map: per generated line, its segments by column.
#[derive(Debug)]
pub struct SourceMap {
    /// The generated file's name as stacks print it (`tool.js`).
    file: String,
    sources: Vec<String>,
    lines: Vec<Vec<Segment>>,
}

impl SourceMap {
    /// Decodes a source map (version 3); an error says what is wrong with it.
    pub fn parse(json: &str) -> Result<SourceMap, String> {
        if json.len() > MAX_BYTES {
            return Err(format!("the source map has more than {MAX_BYTES} bytes"));
        }
        let map: serde_json::Value =
            serde_json::from_str(json).map_err(|error| format!("not JSON: {error}"))?;
        if map["version"] != 3 {
            return Err("only version 3 source maps are read".into());
        }
        let sources: Vec<String> = map["sources"]
            .as_array()
            .ok_or("it has no `sources`")?
            .iter()
            .map(|source| {
                source
                    .as_str()
                    .unwrap_or_default()
                    .trim_start_matches("../")
                    .to_string()
            })
            .collect();
        let mappings = map["mappings"].as_str().ok_or("it has no `mappings`")?;
        let file = map["file"].as_str().unwrap_or("tool.js").to_string();
        let lines = decode(mappings, sources.len())?;
        Ok(SourceMap {
            file,
            sources,
            lines,
        })
    }

    /// Where a generated place (1-based line and column, as stacks print them) came from:
    /// the source file and its 1-based line and column.
    pub fn original(&self, line: u32, column: u32) -> Option<(&str, u32, u32)> {
        let segments = self.lines.get(line.checked_sub(1)? as usize)?;
        let column = column.saturating_sub(1);
        let at = segments.partition_point(|segment| segment.column <= column);
        let segment = segments.get(at.checked_sub(1)?)?;
        let source = self.sources.get(segment.source as usize)?;
        Some((source, segment.line + 1, segment.original_column + 1))
    }

    /// The text with every JavaScript frame of the generated file (`name@tool.js:31:19`)
    /// told in the source instead (`name@src/tool.ts:12:5`); other lines as they were.
    pub fn rewrite_frames(&self, text: &str) -> String {
        let marker = format!("@{}:", self.file);
        text.split('\n')
            .map(|line| {
                let Some(at) = line.find(&marker) else {
                    return line.to_string();
                };
                let place = &line[at + marker.len()..];
                let mut numbers = place.split(':').map(|n| n.trim().parse::<u32>().ok());
                match (numbers.next().flatten(), numbers.next().flatten()) {
                    (Some(l), Some(c)) => match self.original(l, c) {
                        Some((source, l, c)) => format!("{}@{source}:{l}:{c}", &line[..at]),
                        None => line.to_string(),
                    },
                    _ => line.to_string(),
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// What `plugin build` keeps of a compiler's map: the mappings, not the source text.
pub fn slim(json: &str) -> Result<String, String> {
    let map: serde_json::Value =
        serde_json::from_str(json).map_err(|error| format!("not JSON: {error}"))?;
    let slim = serde_json::json!({
        "version": map["version"],
        "file": map["file"],
        "sources": map["sources"],
        "mappings": map["mappings"],
    });
    let text = slim.to_string();
    SourceMap::parse(&text)?;
    Ok(text)
}

/// Appends `payload` to a component (or module) as the custom section [`SECTION`].
pub fn append_section(wasm: &mut Vec<u8>, payload: &[u8]) {
    let mut content = Vec::new();
    leb128(&mut content, SECTION.len());
    content.extend_from_slice(SECTION.as_bytes());
    content.extend_from_slice(payload);
    wasm.push(0);
    leb128(wasm, content.len());
    wasm.extend_from_slice(&content);
}

/// The map a component carries in its own (outermost) [`SECTION`], decoded; `None` when it
/// carries none, or one too large or malformed (the stack is then told as the engine says it).
pub fn carried(wasm: &[u8]) -> Option<SourceMap> {
    let mut depth = 0usize;
    for payload in wasmparser::Parser::new(0).parse_all(wasm) {
        match payload.ok()? {
            wasmparser::Payload::ModuleSection { .. }
            | wasmparser::Payload::ComponentSection { .. } => depth += 1,
            wasmparser::Payload::End(_) => depth = depth.saturating_sub(1),
            wasmparser::Payload::CustomSection(section)
                if depth == 0 && section.name() == SECTION =>
            {
                let text = std::str::from_utf8(section.data()).ok()?;
                return SourceMap::parse(text).ok();
            }
            _ => {}
        }
    }
    None
}

fn leb128(out: &mut Vec<u8>, mut value: usize) {
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// Decodes the `mappings` string: lines split by `;`, segments by `,`, each a run of base64
/// VLQ numbers relative to the previous segment (the column relative within a line only).
fn decode(mappings: &str, sources: usize) -> Result<Vec<Vec<Segment>>, String> {
    let digits: HashMap<u8, i64> = (b'A'..=b'Z')
        .chain(b'a'..=b'z')
        .chain(b'0'..=b'9')
        .chain([b'+', b'/'])
        .zip(0..)
        .collect();
    let (mut source, mut line, mut original_column) = (0i64, 0i64, 0i64);
    let mut lines = Vec::new();
    for text in mappings.split(';') {
        let mut column = 0i64;
        let mut segments = Vec::new();
        for segment in text.split(',').filter(|segment| !segment.is_empty()) {
            let mut fields = Vec::with_capacity(5);
            let (mut value, mut shift) = (0i64, 0u32);
            for byte in segment.bytes() {
                let digit = *digits
                    .get(&byte)
                    .ok_or("a mapping has a character outside base64")?;
                value += (digit & 31) << shift;
                if digit & 32 != 0 {
                    shift += 5;
                    if shift > 30 {
                        return Err("a mapping's number is too large".into());
                    }
                    continue;
                }
                fields.push(if value & 1 == 1 {
                    -(value >> 1)
                } else {
                    value >> 1
                });
                (value, shift) = (0, 0);
            }
            column += fields.first().copied().ok_or("an empty mapping")?;
            if fields.len() < 4 {
                continue;
            }
            source += fields[1];
            line += fields[2];
            original_column += fields[3];
            let valid = |n: i64| u32::try_from(n).ok();
            match (
                valid(column),
                valid(source),
                valid(line),
                valid(original_column),
            ) {
                (Some(column), Some(s), Some(line), Some(original_column))
                    if (s as usize) < sources =>
                {
                    segments.push(Segment {
                        column,
                        source: s,
                        line,
                        original_column,
                    })
                }
                _ => return Err("a mapping points outside the sources".into()),
            }
        }
        segments.sort_by_key(|segment| segment.column);
        lines.push(segments);
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What tsc 5.9 wrote for a three-line `src/tool.ts` (`export function handle(): void {`,
    /// `  throw new Error("boom");`, `}`) compiled to `build/tool.js` (`--sourceMap`; the
    /// source text added as `--inlineSources` would).
    const MAP: &str = r#"{"version":3,"file":"tool.js","sourceRoot":"","sources":["../src/tool.ts"],"names":[],"mappings":"AAAA,MAAM,UAAU,MAAM;IACpB,MAAM,IAAI,KAAK,CAAC,MAAM,CAAC,CAAC;AAC1B,CAAC","sourcesContent":["secret"]}"#;

    #[test]
    fn a_generated_place_is_found_in_the_source() {
        let map = SourceMap::parse(MAP).expect("a map");
        // `throw` on line 2, column 5 of tool.js is line 2, column 5 of src/tool.ts.
        assert_eq!(map.original(2, 5), Some(("src/tool.ts", 2, 3)));
        assert_eq!(map.original(1, 1), Some(("src/tool.ts", 1, 1)));
        assert_eq!(map.original(40, 1), None);
    }

    #[test]
    fn frames_of_the_generated_file_are_told_in_the_source() {
        let map = SourceMap::parse(MAP).expect("a map");
        let stack = "boom\nStack:\n  handle@tool.js:2:11\n  other@lib.js:1:1";
        assert_eq!(
            map.rewrite_frames(stack),
            "boom\nStack:\n  handle@src/tool.ts:2:9\n  other@lib.js:1:1"
        );
    }

    #[test]
    fn a_slim_map_in_a_section_is_found_again_and_keeps_no_source_text() {
        let slim = slim(MAP).expect("slim");
        assert!(!slim.contains("secret"), "{slim}");
        // A minimal component: the preamble, then the section.
        let mut wasm = b"\0asm\x0d\0\x01\0".to_vec();
        append_section(&mut wasm, slim.as_bytes());
        let map = carried(&wasm).expect("carried");
        assert_eq!(map.original(2, 5), Some(("src/tool.ts", 2, 3)));
    }

    #[test]
    fn malformed_maps_are_refused_not_trusted() {
        for bad in [
            "{}",
            r#"{"version":3,"sources":[],"mappings":"AAAA"}"#,
            r#"{"version":3,"sources":["a"],"mappings":"A!AA"}"#,
            r#"{"version":3,"sources":["a"],"mappings":"gggggggggggA"}"#,
        ] {
            assert!(SourceMap::parse(bad).is_err(), "{bad}");
        }
    }
}
