//! The whole catalog: with every category and condition flag on, `devtools-mcp tools` enables
//! the tools chrome-devtools-mcp 1.11.0 lists with the same flags (`tests/data/
//! chrome-devtools-mcp-1.11.0-tools.json`, its `tools/list`), minus the named `NOT_YET` ones,
//! and nothing it does not list.

use std::collections::BTreeSet;

/// 1.11.0 tools this server does not provide yet, each with why (README says the same).
const NOT_YET: &[&str] = &[];

#[test]
fn every_flag_on_lists_the_reference_catalog() {
    let data: serde_json::Value = serde_json::from_str(include_str!(
        "../data/chrome-devtools-mcp-1.11.0-tools.json"
    ))
    .expect("reference tool list");
    let flags: Vec<&str> = data["all_flags"]
        .as_str()
        .expect("all_flags")
        .split_whitespace()
        .collect();
    let reference: BTreeSet<String> = data["all"]
        .as_array()
        .expect("all")
        .iter()
        .filter_map(|tool| tool["name"].as_str().map(String::from))
        .collect();
    assert_eq!(reference.len(), 64);
    for name in NOT_YET {
        assert!(reference.contains(*name), "{name} is not a 1.11.0 tool");
    }

    let binary = env!("CARGO_BIN_EXE_devtools-mcp");
    let cache = crate::support::cache_dir().to_string_lossy().into_owned();
    let output = crate::support::command(binary)
        .arg("tools")
        .args(&flags)
        .args(["--cache-dir", &cache])
        .output()
        .expect("run devtools-mcp tools");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let enabled: BTreeSet<String> = stdout
        .lines()
        .filter_map(|line| {
            let mut fields = line.split('\t');
            let name = fields.next()?;
            (fields.nth(1) == Some("enabled")).then(|| name.to_string())
        })
        .collect();

    let extra: Vec<&String> = enabled.difference(&reference).collect();
    assert!(extra.is_empty(), "not 1.11.0 tools: {extra:?}\n{stdout}");
    let missing: Vec<&String> = reference
        .iter()
        .filter(|name| !enabled.contains(*name) && !NOT_YET.contains(&name.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "1.11.0 tools missing: {missing:?}\n{stdout}"
    );
    let provided: Vec<&&str> = NOT_YET
        .iter()
        .filter(|name| enabled.contains(**name))
        .collect();
    assert!(
        provided.is_empty(),
        "listed as not yet provided, but provided: {provided:?}; remove them from NOT_YET"
    );
}
