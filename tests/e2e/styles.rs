//! `get_css_styles` on a fixture page with an external and an inline style sheet, at-rule
//! wrappers, inheritance, overloaded and `!important` declarations and a pseudo-element. The
//! expected texts are chrome-devtools-mcp 1.11.0's output on the same page (uids aside).

use crate::support::{FixtureServer, McpServer, Route};
use serde_json::json;

const PAGE: &str = r#"<!doctype html>
<html>
<head>
<title>CSS fixture</title>
<link rel="stylesheet" href="/styles/main.css">
<style>
  body { color: rgb(10, 20, 30); font-family: serif; margin: 8px; }
  .card { --accent: teal; padding: 4px; border: 1px solid black; container-type: inline-size; container-name: card; }
  @media (min-width: 100px) {
    .title { color: red; font-size: 20px; }
  }
  @layer base {
    .title { letter-spacing: 1px; color: blue; }
  }
  @supports (display: grid) {
    .title { display: block; }
  }
  @container card (min-width: 10px) {
    .title { text-decoration: underline; }
  }
  .title, .other { margin-top: 2px !important; }
  #main .title { margin-top: 5px; font-weight: bold; }
  .title::before { content: "> "; color: green; }
</style>
</head>
<body>
<div class="card" id="main" style="line-height: 1.5; padding: 2px">
  <h1 class="title" style="color: purple">Hello styles</h1>
  <p>Para</p>
</div>
</body>
</html>
"#;

const STYLESHEET: &str = r#"/* external */
h1 {
  color: orange;
  margin: 0 0 10px 0;
}

.title {
  font-size: 18px;
}
"#;

/// 1.11.0: the heading, first page (10 rules of 14).
const HEADING: &str = r#"Showing 1-10 of 14 (Page 1 of 2).
Next page: 1
Styles for h1.title (uid: "{H1}"):

  element.style {
    color: purple;
  }

  #main .title (css.html:22) {
    [overloaded] margin-top: 5px;
    font-weight: bold;
  }

  .title, .other (css.html:21) {
    margin-top: 2px !important;
  }

  /* container: div#main */
  @container card (min-width: 10px) {
    .title (css.html:19) {
      text-decoration: underline;
    }
  }

  @supports (display: grid) {
    .title (css.html:16) {
      display: block;
    }
  }

  @media (min-width: 100px) {
    .title (css.html:10) {
      [overloaded] color: red;
      font-size: 20px;
    }
  }

  .title (main.css:7) {
    [overloaded] font-size: 18px;
  }

  h1 (main.css:2) {
    [overloaded] color: orange;
    margin: 0 0 10px 0;
  }

  @layer base {
    .title (css.html:13) {
      letter-spacing: 1px;
      [overloaded] color: blue;
    }
  }

  h1 (user agent stylesheet) {
    [overloaded] display: block;
    [overloaded] font-size: 2em;
    margin-block-start: 0.67em;
    margin-block-end: 0.67em;
    margin-inline-start: 0px;
    margin-inline-end: 0px;
    [overloaded] font-weight: bold;
    unicode-bidi: isolate;
  }"#;

/// 1.11.0: `pageSize: 3, pageIdx: 1`.
const HEADING_PAGE_1_OF_3: &str = r#"Showing 4-6 of 14 (Page 2 of 5).
Next page: 2
Previous page: 0
Styles for h1.title (uid: "{H1}"):

  /* container: div#main */
  @container card (min-width: 10px) {
    .title (css.html:19) {
      text-decoration: underline;
    }
  }

  @supports (display: grid) {
    .title (css.html:16) {
      display: block;
    }
  }

  @media (min-width: 100px) {
    .title (css.html:10) {
      [overloaded] color: red;
      font-size: 20px;
    }
  }"#;

/// 1.11.0: the second page of 10 (inherited styles and the `::before` rule).
const HEADING_SECOND_PAGE: &str = r#"Showing 11-14 of 14 (Page 2 of 2).
Previous page: 0
Styles for h1.title (uid: "{H1}"):

  Inherited from div#main:
    element.style {
      line-height: 1.5;
    }

  Inherited from div#main:
    .card (css.html:8) {
      --accent: teal;
    }

  Inherited from body:
    body (css.html:7) {
      [overloaded] color: rgb(10, 20, 30);
      font-family: serif;
    }

  /* Pseudo ::before element */
  .title::before (css.html:23) {
    content: "> ";
    color: green;
  }"#;

/// 1.11.0: the paragraph, with user-agent rules merged and inherited styles.
const PARAGRAPH: &str = r#"Showing 1-4 of 4 (Page 1 of 1).
Styles for p (uid: "{P}"):

  p (user agent stylesheet) {
    display: block;
    margin-block-start: 1em;
    margin-block-end: 1em;
    margin-inline-start: 0px;
    margin-inline-end: 0px;
    unicode-bidi: isolate;
  }

  Inherited from div#main:
    element.style {
      line-height: 1.5;
    }

  Inherited from div#main:
    .card (css.html:8) {
      --accent: teal;
    }

  Inherited from body:
    body (css.html:7) {
      color: rgb(10, 20, 30);
      font-family: serif;
    }"#;

fn fill(template: &str, heading: &str, paragraph: &str) -> String {
    template.replace("{H1}", heading).replace("{P}", paragraph)
}

/// The id of the `[selected]` page in a `## Pages` section.
pub fn selected_page_id(text: &str) -> u64 {
    text.lines()
        .find(|line| line.ends_with("[selected]"))
        .and_then(|line| line.split(':').next())
        .and_then(|id| id.trim().parse().ok())
        .unwrap_or_else(|| panic!("no selected page in:\n{text}"))
}

#[tokio::test]
async fn css_styles_match_the_reference_text() {
    let pages = FixtureServer::start(vec![
        Route::html("/css.html", PAGE),
        Route::new("/styles/main.css", "text/css", STYLESHEET),
    ]);
    // Page-id routing on (1.11.0's default, and what `--experimentalPageIdRouting` turns on
    // before it), with `pageId` passed explicitly.
    let server = McpServer::start(&["--experimentalPageIdRouting"]).await;
    let opened = server
        .call("new_page", json!({ "url": pages.url("/css.html") }))
        .await;
    let page = selected_page_id(&opened.text);

    let before = server
        .call("get_css_styles", json!({ "pageId": page, "uid": "1_1" }))
        .await;
    assert!(before.is_error);
    assert!(
        before.text.ends_with(&format!(
            "No snapshot found for page {page}. Use take_snapshot to capture one."
        )),
        "{}",
        before.text
    );

    let snapshot = server
        .call("take_snapshot", json!({ "pageId": page }))
        .await
        .text;
    let heading = crate::fixtures::uid_of(&snapshot, "heading \"> Hello styles\"");
    let paragraph = crate::fixtures::uid_of(&snapshot, "\"Para\"");
    let root = crate::fixtures::uid_of(&snapshot, "RootWebArea");

    let styles = |uid: &str, extra: serde_json::Value| {
        let mut arguments = json!({ "pageId": page, "uid": uid });
        if let (Some(target), Some(more)) = (arguments.as_object_mut(), extra.as_object()) {
            target.extend(more.clone());
        }
        server.call("get_css_styles", arguments)
    };
    let first = styles(&heading, json!({})).await;
    assert!(!first.is_error, "{}", first.text);
    assert_eq!(first.text, fill(HEADING, &heading, &paragraph));

    let second = styles(&heading, json!({ "pageIdx": 1 })).await;
    assert_eq!(second.text, fill(HEADING_SECOND_PAGE, &heading, &paragraph));

    let small = styles(&heading, json!({ "pageSize": 3, "pageIdx": 1 })).await;
    assert_eq!(small.text, fill(HEADING_PAGE_1_OF_3, &heading, &paragraph));

    let invalid = styles(&heading, json!({ "pageIdx": 9 })).await;
    assert_eq!(
        invalid.text,
        format!(
            "Invalid page number provided. Showing first page.\n{}",
            fill(HEADING, &heading, &paragraph)
        )
    );

    let para = styles(&paragraph, json!({})).await;
    assert_eq!(para.text, fill(PARAGRAPH, &heading, &paragraph));

    let document = styles(&root, json!({})).await;
    assert!(document.is_error);
    assert!(
        document.text.ends_with(&format!(
            "Element with uid \"{root}\" is not an element node and has no parent element."
        )),
        "{}",
        document.text
    );
    let missing = styles("9_99", json!({})).await;
    assert!(missing.is_error);
    assert!(
        missing
            .text
            .ends_with(&format!("Element uid \"9_99\" not found on page {page}.")),
        "{}",
        missing.text
    );
    let zero = styles(&heading, json!({ "pageSize": 0 })).await;
    assert!(zero.is_error, "pageSize must be positive: {}", zero.text);
    server.shutdown().await;
}
