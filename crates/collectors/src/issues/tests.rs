use super::descriptions::DESCRIPTIONS;
use super::kinds::kind;
use super::{Added, Issues, text, title};
use crate::Collected;
use crate::pagination::Page;
use serde_json::{Value, json};

fn autocomplete(node: i64) -> Value {
    json!({"code": "GenericIssue", "details": {"genericIssueDetails": {
        "errorType": "FormInputAssignedAutocompleteValueToIdOrNameAttributeError",
        "frameId": "F", "violatingNodeId": node, "violatingNodeAttribute": "name"}}})
}

fn issue(state: &mut Collected, issue: Value) {
    state.dispatch("Audits.issueAdded", &json!({ "issue": issue }));
}

fn log(state: &mut Collected, text: &str) {
    state.dispatch(
        "Runtime.consoleAPICalled",
        &json!({"type": "log", "executionContextId": 1, "args": [{"type": "string", "value": text}]}),
    );
}

fn listed(state: &Collected, types: Option<&[String]>) -> Vec<String> {
    state.console_list(Page::default(), types, false, false).0
}

#[test]
fn issues_are_messages_that_aggregate_by_code_until_the_document_changes() {
    let mut state = Collected::default();
    log(&mut state, "one");
    issue(&mut state, autocomplete(7));
    issue(&mut state, autocomplete(7)); // a repeat: dropped
    log(&mut state, "two");
    issue(&mut state, autocomplete(8)); // another instance: counted in message 2
    // DevTools has no description for this one: it takes id 4 and is never shown.
    issue(
        &mut state,
        json!({"code": "GenericIssue", "details": {"genericIssueDetails": {
            "errorType": "AutofillPolicyControlledFeatureInfo"}}}),
    );
    issue(&mut state, json!({"code": "NoSuchIssue", "details": {}}));
    log(&mut state, "two");
    assert_eq!(
        listed(&state, None),
        [
            "## Console messages",
            "Showing 1-4 of 4 (Page 1 of 1).",
            "msgid=1 [log] one (1 args)",
            "msgid=2 [issue] An element doesn’t have an autocomplete attribute (count: 2)",
            "msgid=3 [log] two (1 args)",
            "msgid=5 [log] two (1 args)",
        ]
    );
    let (_, data) = state.console_list(Page::default(), Some(&["issue".into()]), false, false);
    assert_eq!(
        data["consoleMessages"],
        json!([{"type": "issue", "title": "An element doesn’t have an autocomplete attribute",
                "count": 2, "id": 2}])
    );
    assert_eq!(
        state.console_detail(4, None),
        Err("Can't provide details for the msgid 4".to_string())
    );
    assert_eq!(state.console_records(false).len(), 4);

    // A same-document navigation keeps the aggregate (its new instance counts in message 2);
    // a new document starts over with a new message.
    state.dispatch(
        "Page.frameNavigated",
        &json!({"frame": {"id": "F", "url": "http://h/"}}),
    );
    state.dispatch(
        "Page.navigatedWithinDocument",
        &json!({"frameId": "F", "url": "http://h/#a"}),
    );
    issue(&mut state, autocomplete(9));
    assert_eq!(
        listed(&state, None)[2],
        "msgid=6 [issue] An element doesn’t have an autocomplete attribute (count: 1)"
    );
    state.dispatch(
        "Page.navigatedWithinDocument",
        &json!({"frameId": "F", "url": "http://h/#b"}),
    );
    issue(&mut state, autocomplete(10));
    assert_eq!(listed(&state, None)[1], "<no console messages found>");
    let preserved = state.console_list(Page::default(), None, true, false).0;
    assert!(
        preserved
            .iter()
            .any(|line| line.ends_with("attribute (count: 2)"))
    );
}

#[test]
fn an_issue_detail_prints_its_description_links_and_affected_resources() {
    let mut state = Collected::default();
    state.dispatch(
        "Network.requestWillBeSent",
        &json!({"requestId": "R1", "loaderId": "L", "frameId": "F", "type": "Fetch",
                "request": {"url": "http://h/data", "method": "GET", "headers": {}}}),
    );
    issue(
        &mut state,
        json!({"code": "GenericIssue", "details": {"genericIssueDetails": {
            "errorType": "ResponseWasBlockedByORB", "frameId": "F",
            "request": {"requestId": "R1", "url": "http://h/data"}}}}),
    );
    issue(&mut state, autocomplete(7));
    let (lines, data) = state.console_detail(1, None).expect("issue 1");
    assert_eq!(lines[0], "ID: 1");
    assert!(lines[1].starts_with("Message: issue> "), "{lines:?}");
    assert!(
        lines.ends_with(&[
            "Learn more:".to_string(),
            "[CORB explainer](https://www.chromium.org/Home/chromium-security/corb-for-developers/)"
                .to_string(),
            "### Affected resources".to_string(),
            r#"reqid=1 data={"request":{"url":"http://h/data"}}"#.to_string(),
        ]),
        "{lines:?}"
    );
    assert_eq!(data["consoleMessage"]["affectedResources"][0]["request"], 1);
    assert!(
        data["consoleMessage"]["description"]
            .as_str()
            .is_some_and(|text| text.starts_with("# "))
    );
    // With a snapshot, the violating node is its uid; without one, the node id stays in data.
    let uid = |node: i64| (node == 7).then(|| "1_4".to_string());
    let (lines, _) = state.console_detail(2, Some(&uid)).expect("issue 2");
    assert_eq!(
        lines.last().map(String::as_str),
        Some(r#"uid=1_4 data={"violatingNodeAttribute":"name"}"#)
    );
    let (lines, _) = state.console_detail(2, None).expect("issue 2");
    assert_eq!(
        lines.last().map(String::as_str),
        Some(r#"data={"violatingNodeId":7,"violatingNodeAttribute":"name"}"#)
    );
}

#[test]
fn kinds_build_devtools_codes_keys_and_descriptions() {
    let generic = kind(
        &json!({"code": "GenericIssue", "details": {"genericIssueDetails": {
        "errorType": "FormInputWithNoLabelError"}}}),
    )
    .expect("generic");
    assert_eq!(generic.code, "GenericIssue::FormInputWithNoLabelError");
    assert_eq!(
        generic.primary_key,
        "GenericIssue::FormInputWithNoLabelError-(undefined)-(undefined)-(undefined)-(no-request)"
    );
    let cookie = kind(
        &json!({"code": "CookieIssue", "details": {"cookieIssueDetails": {
        "rawCookieLine": "a=b", "cookieWarningReasons": ["WarnDomainNonASCII"],
        "cookieExclusionReasons": [], "operation": "SetCookie"}}}),
    )
    .expect("cookie");
    assert_eq!(
        cookie.primary_key,
        "CookieIssue::WarnDomainNonASCII::SetCookie-(a=b)-(no-request)"
    );
    // Only SameSite Strict/Lax exclusions: DevTools makes no issue.
    assert!(
        kind(
            &json!({"code": "CookieIssue", "details": {"cookieIssueDetails": {
            "cookieExclusionReasons": ["ExcludeSameSiteStrict"], "cookieWarningReasons": []}}})
        )
        .is_none()
    );
    let csp = kind(&json!({"code": "ContentSecurityPolicyIssue", "details": {
        "contentSecurityPolicyIssueDetails": {"violatedDirective": "script-src",
        "blockedURL": "b", "isReportOnly": true, "contentSecurityPolicyViolationType": "kWasmEvalViolation",
        "sourceCodeLocation": {"scriptId": "9", "url": "https://x/a.js", "lineNumber": 1, "columnNumber": 2},
        "violatingNodeId": 3}}}))
    .expect("csp");
    assert_eq!(
        csp.primary_key,
        r#"{"blockedURL":"b","contentSecurityPolicyViolationType":"kWasmEvalViolation","violatedDirective":"script-src","isReportOnly":true,"sourceCodeLocation":{"url":"https://x/a.js","lineNumber":1,"columnNumber":2},"violatingNodeId":3}"#
    );
    assert!(csp.description.is_none());
    let deprecation = kind(&json!({"code": "DeprecationIssue", "details": {
        "deprecationIssueDetails": {"type": "XSLT"}}}))
    .expect("deprecation");
    let (title, markdown) =
        text(deprecation.description.as_ref().expect("described")).expect("text");
    assert_eq!(title, "Deprecated feature used");
    assert!(markdown.contains("XSLTProcessor and XSLT Processing Instructions"));
    assert_eq!(
        deprecation.description.expect("described").links[1].1,
        "This change will go into effect with milestone 143"
    );
    let sri = kind(&json!({"code": "SRIMessageSignatureIssue", "details": {
        "sriMessageSignatureIssueDetails": {"error": "ValidationFailedIntegrityMismatch",
        "integrityAssertions": ["a", "b"]}}}))
    .expect("sri");
    assert_eq!(
        sri.code,
        "SRIMessageSignatureIssue::ValidationFailedIntegrityMismatcha,b"
    );
    // An unknown CORS error throws in DevTools: no issue.
    assert!(
        kind(
            &json!({"code": "CorsIssue", "details": {"corsIssueDetails": {
            "corsErrorStatus": {"corsError": "Nope"}}}})
        )
        .is_none()
    );
}

#[test]
fn every_description_file_named_by_a_kind_exists_and_has_a_title() {
    assert!(DESCRIPTIONS.windows(2).all(|pair| pair[0].0 < pair[1].0));
    for (file, markdown) in DESCRIPTIONS {
        assert!(title(markdown).is_some(), "{file} has no title");
    }
    // The checkout being tested (cargo test sets it when it runs the binary), not the one that
    // compiled it: a shared target directory reuses a test binary across checkouts.
    let manifest_dir =
        std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into());
    let folder = std::path::Path::new(&manifest_dir).join("issue-descriptions");
    let on_disk = std::fs::read_dir(folder)
        .expect("the descriptions folder")
        .filter(|entry| {
            entry
                .as_ref()
                .is_ok_and(|entry| entry.file_name().to_string_lossy().ends_with(".md"))
        })
        .count();
    assert_eq!(
        on_disk,
        DESCRIPTIONS.len(),
        "regenerate issues/descriptions.rs"
    );
    let described = [
        (
            "CorsIssue",
            "corsIssueDetails",
            json!({"corsErrorStatus": {"corsError": "CorsDisabledScheme"}}),
        ),
        (
            "BlockedByResponseIssue",
            "blockedByResponseIssueDetails",
            json!({"reason": "CoepFrameResourceNeedsCoepHeader", "request": {"requestId": "1"}}),
        ),
        (
            "PermissionElementIssue",
            "permissionElementIssueDetails",
            json!({"issueType": "ActivationDisabled", "type": "camera", "disableReason": "r",
                "occluderNodeInfo": "o"}),
        ),
        (
            "PropertyRuleIssue",
            "propertyRuleIssueDetails",
            json!({"propertyRuleIssueReason": "InvalidSyntax", "propertyValue": "<x>"}),
        ),
        (
            "CookieDeprecationMetadataIssue",
            "cookieDeprecationMetadataIssueDetails",
            json!({"operation": "SetCookie", "isOptOutTopLevel": true, "optOutPercentage": 2.5}),
        ),
        (
            "ElementAccessibilityIssue",
            "elementAccessibilityIssueDetails",
            json!({"elementAccessibilityIssueReason": "InteractiveContentSummaryDescendant"}),
        ),
        (
            "SharedDictionaryIssue",
            "sharedDictionaryIssueDetails",
            json!({"sharedDictionaryError": "WriteErrorNoMatchField"}),
        ),
        (
            "QuirksModeIssue",
            "quirksModeIssueDetails",
            json!({"documentNodeId": 3, "url": "u"}),
        ),
    ];
    for (code, field, details) in described {
        let protocol = json!({"code": code, "details": { field: details }});
        let made = kind(&protocol).unwrap_or_else(|| panic!("{code}: no issue"));
        let description = made
            .description
            .unwrap_or_else(|| panic!("{code}: no description"));
        assert!(
            text(&description).is_some(),
            "{code}: {description:?} has no text"
        );
    }
}

#[test]
fn hostile_pages_cannot_grow_the_aggregation_without_bound() {
    let mut issues = Issues::default();
    let mut new = 0;
    for node in 0..20_000 {
        match issues.add(&autocomplete(node)) {
            Added::New { code, .. } => {
                new += 1;
                issues.shown_as(code, 1);
            }
            Added::Instance { .. } | Added::Nothing => {}
        }
    }
    assert_eq!(new, 1);
    assert!(issues.seen.len() <= super::MAX_SEEN);
}
