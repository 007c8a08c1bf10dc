//! Test inputs. Hand-written CDP trees, and real captures: `testdata/*.json` hold the raw
//! `getFullAXTree` nodes that Chromium 156 returned, next to the text and JSON that
//! chrome-devtools-mcp 1.11.0 (Puppeteer 25.14) prints for them: `rerun-reference.mjs`
//! recomputes those with the reference's own code.

use serde_json::{Value, json};

use super::*;

/// One CDP `AXNode` as Chromium sends it.
pub(super) fn ax(
    id: &str,
    role: &str,
    name: &str,
    props: Value,
    children: &[&str],
    backend: Option<i64>,
) -> Value {
    let props: Vec<Value> = props
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| json!({"name": k, "value": {"type": "booleanOrUndefined", "value": v}}))
        .collect();
    let mut node = json!({
        "nodeId": id, "ignored": role == "none", "role": {"type": "role", "value": role},
        "name": {"type": "computedString", "value": name}, "properties": props, "childIds": children,
    });
    if let Some(b) = backend {
        node["backendDOMNodeId"] = json!(b);
    }
    node
}

/// A small page: headings, text, a form, a select, a link, and an ignored wrapper.
pub(super) fn sample_nodes() -> Vec<Value> {
    let t = json!(true);
    let mut textbox = ax(
        "9",
        "textbox",
        "Name",
        json!({"invalid": "false", "focusable": t, "focused": t, "editable": "plaintext"}),
        &["10"],
        Some(9),
    );
    textbox["value"] = json!({"type": "string", "value": "abc"});
    let mut combobox = ax(
        "11",
        "combobox",
        "",
        json!({"invalid": "false", "focusable": t, "hasPopup": "menu", "expanded": false}),
        &["12"],
        Some(11),
    );
    combobox["value"] = json!({"type": "string", "value": "One"});
    vec![
        ax(
            "1",
            "RootWebArea",
            "Demo",
            json!({"focusable": t, "focused": t, "url": "about:blank"}),
            &["2"],
            Some(1),
        ),
        ax(
            "2",
            "none",
            "",
            json!({}),
            &["3", "5", "7", "9", "11", "14", "17", "19"],
            Some(2),
        ),
        ax(
            "3",
            "heading",
            "Title",
            json!({"level": 1}),
            &["4"],
            Some(3),
        ),
        ax("4", "StaticText", "Title", json!({}), &["-1"], Some(4)),
        ax("-1", "InlineTextBox", "Title", json!({}), &[], None),
        ax("5", "StaticText", "Hello world", json!({}), &[], Some(5)),
        ax(
            "7",
            "button",
            "OK",
            json!({"invalid": "false", "focusable": t}),
            &["8"],
            Some(7),
        ),
        ax("8", "StaticText", "OK", json!({}), &[], Some(8)),
        textbox,
        ax("10", "generic", "", json!({}), &[], Some(10)),
        combobox,
        ax(
            "12",
            "MenuListPopup",
            "",
            json!({}),
            &["13", "130"],
            Some(12),
        ),
        ax(
            "13",
            "option",
            "One",
            json!({"focusable": t, "selected": t}),
            &[],
            Some(13),
        ),
        ax(
            "130",
            "option",
            "Two",
            json!({"focusable": t, "selected": false}),
            &[],
            Some(130),
        ),
        ax(
            "14",
            "link",
            "More",
            json!({"focusable": t, "url": "https://example.com/"}),
            &["15"],
            Some(14),
        ),
        ax("15", "StaticText", "More", json!({}), &[], Some(15)),
        ax(
            "17",
            "checkbox",
            "Agree",
            json!({"invalid": "false", "focusable": t, "checked": "true"}),
            &[],
            Some(17),
        ),
        ax("19", "generic", "", json!({}), &["20"], Some(19)),
        ax("20", "StaticText", "Nested", json!({}), &[], Some(20)),
    ]
}

fn fixture(text: &str) -> Value {
    serde_json::from_str(text).expect("fixture is valid JSON")
}

fn nodes(v: &Value) -> &[Value] {
    v["nodes"].as_array().map(Vec::as_slice).unwrap_or_default()
}

/// The main frame's tree with its one iframe attached, as `includeIframes: true` does.
fn form_snapshot(form: &Value, verbose: bool, id: u64, uids: &mut UidMap) -> Snapshot {
    let text = serde_json::to_string(nodes(form)).expect("nodes");
    let parsed = super::cdp::parse_nodes(&text).expect("parsed");
    let mut tree = AxTree::from_nodes(parsed).expect("tree");
    let frame = &form["frames"][0];
    let frame_root = serialize_ax_tree(nodes(frame), !verbose).map(|mut root| {
        root.loader_id = frame["loaderId"].as_str().map(str::to_owned);
        root
    });
    let iframes = tree.iframe_backend_node_ids();
    assert_eq!(iframes.len(), 1);
    assert!(tree.attach_iframe(iframes[0], frame_root.expect("frame root")));
    let root = tree.serialize(!verbose).expect("root");
    Snapshot::build(
        root,
        form["loaderId"].as_str().unwrap_or_default(),
        id,
        verbose,
        uids,
    )
}

fn assert_lines(got: &str, want: &str) {
    for (i, (g, w)) in got.lines().zip(want.lines()).enumerate() {
        assert_eq!(g, w, "line {i}");
    }
    assert_eq!(got, want);
}

#[test]
fn form_page_matches_chrome_devtools_mcp() {
    let form = fixture(include_str!("testdata/form.json"));
    let snapshot = form_snapshot(&form, false, 1, &mut UidMap::default());
    assert_lines(
        &snapshot.to_text(),
        form["default"]["text"].as_str().unwrap_or_default(),
    );
    assert_eq!(snapshot.to_json(), form["default"]["json"]);
}

#[test]
fn verbose_form_page_matches_chrome_devtools_mcp() {
    let form = fixture(include_str!("testdata/form.json"));
    let snapshot = form_snapshot(&form, true, 2, &mut UidMap::default());
    assert_lines(
        &snapshot.to_text(),
        form["verbose"]["text"].as_str().unwrap_or_default(),
    );
}

#[test]
fn uids_survive_mutation_and_renew_on_reload() {
    let steps = fixture(include_str!("testdata/sequence.json"));
    let mut uids = UidMap::default();
    for step in steps.as_array().into_iter().flatten() {
        let root = serialize_ax_tree(nodes(step), true).expect("root");
        let id = step["id"].as_u64().unwrap_or_default();
        let snapshot = Snapshot::build(
            root,
            step["loaderId"].as_str().unwrap_or_default(),
            id,
            false,
            &mut uids,
        );
        assert_lines(
            &snapshot.to_text(),
            step["text"].as_str().unwrap_or_default(),
        );
        assert_eq!(uids.len(), 3);
    }
}
