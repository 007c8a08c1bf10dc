//! What `plugin new --template` adds around the sources, the same in every language: the
//! interfaces the tool imports (its capabilities), a fixture page and the tool's test
//! (`test/test.json`, run by `plugin test DIR`), so the three languages answer alike.

pub use crate::config::commands::Template;

/// The interfaces a template's tool imports beyond `response` and `pages` (each one a
/// capability the operator grants).
pub fn extra_imports(template: Template) -> &'static [&'static str] {
    match template {
        Template::PageReader => &[],
        Template::Action => &["script", "navigate"],
        Template::Structured => &["script"],
    }
}

/// The files of the tool's test: its fixture pages and `test/test.json` (the parameters to
/// call it with and the texts its answer must contain).
pub fn test_files(template: Template) -> Vec<(&'static str, String)> {
    let (page, test) = match template {
        Template::PageReader => (
            PAGE.to_string(),
            r#"{
  "page": "page.html",
  "params": { "prefix": "The fixture is at" },
  "expect": ["The fixture is at http://127.0.0.1:", "/page.html"]
}
"#,
        ),
        Template::Action => (
            PAGE.replace(
                "<p>A fixture",
                "<p><a href=\"landed.html\">Read the guide</a></p>\n<p>A fixture",
            ),
            r#"{
  "page": "page.html",
  "params": { "linkText": "Read the guide", "expectUrl": "/landed.html" },
  "expect": ["landed on http://127.0.0.1:", "/landed.html"]
}
"#,
        ),
        Template::Structured => (
            PAGE.to_string(),
            r#"{
  "page": "page.html",
  "params": { "maxHeadings": 5 },
  "expect": ["\"title\":\"Fixture\"", "\"text\":\"Second section\"", "\"level\":2"]
}
"#,
        ),
    };
    let mut files = vec![
        ("test/page.html", page),
        ("test/test.json", test.to_string()),
    ];
    if template == Template::Action {
        files.push(("test/landed.html", LANDED.to_string()));
    }
    files
}

/// The page the tool is tested on (served on 127.0.0.1 by `plugin test`).
const PAGE: &str = r#"<!doctype html>
<html lang="en">
<title>Fixture</title>
<h1>Fixture page</h1>
<p>A fixture for the tool's test: change it to look like the pages the tool is for.</p>
<h2>Second section</h2>
</html>
"#;

/// Where the action template's link leads.
const LANDED: &str = r#"<!doctype html>
<html lang="en">
<title>Landed</title>
<h1>The guide</h1>
</html>
"#;

/// The JavaScript the action template runs in the page (the same in every language): the
/// link whose text is `wanted` (exactly, else the first that contains it), or the texts of
/// the links there are, so the error can name them.
pub const FIND_LINK: &str = "(wanted) => { const links = [...document.querySelectorAll('a[href]')]; const text = (link) => link.textContent.trim(); const link = links.find((link) => text(link) === wanted) ?? links.find((link) => text(link).includes(wanted)); return link ? { href: link.href } : { links: links.map(text).filter(Boolean).slice(0, 20) }; }";

/// The JavaScript the structured template runs in the page: its title and its first
/// `limit` headings.
pub const READ_OUTLINE: &str = "(limit) => ({ title: document.title, headings: [...document.querySelectorAll('h1, h2, h3, h4, h5, h6')].slice(0, limit).map((heading) => ({ level: Number(heading.tagName[1]), text: heading.textContent.trim() })) })";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_test_names_its_page_and_expects_something() {
        for template in [Template::PageReader, Template::Action, Template::Structured] {
            let files = test_files(template);
            let (_, test) = files
                .iter()
                .find(|(path, _)| *path == "test/test.json")
                .expect("test.json");
            let test: serde_json::Value = serde_json::from_str(test).expect("JSON");
            assert_eq!(test["page"], "page.html");
            assert!(test["params"].is_object());
            assert!(!test["expect"].as_array().expect("expect").is_empty());
        }
        let action = test_files(Template::Action);
        assert!(action.iter().any(|(path, _)| *path == "test/landed.html"));
        assert!(action[0].1.contains("href=\"landed.html\">Read the guide"));
    }
}
