use super::*;

fn table(text: &str) -> Result<TenantTable, TenantsError> {
    TenantTable::parse(text, Path::new("tenants.toml"))
}

/// A temporary folder for the tenants' sandbox roots, which parsing creates; removed on drop.
fn scratch() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary folder")
}

fn entry(scratch: &tempfile::TempDir, name: &str, token: &str, extra: &str) -> String {
    let root = scratch.path().join(name);
    format!(
        "[[tenant]]\nname = {name:?}\ntoken_sha256 = {:?}\nsandbox_root = {:?}\n{extra}\n",
        token_hash_hex(token),
        root.display().to_string()
    )
}

#[test]
fn authenticates_by_token_and_refuses_unknown_and_revoked_ones() {
    let scratch = scratch();
    let text = entry(&scratch, "alice", "secret-a", "")
        + &entry(&scratch, "bob", "secret-b", "revoked = true");
    let table = table(&text).expect("valid file");
    assert_eq!(
        table.authenticate("secret-a").map(|t| t.name.clone()),
        Some("alice".to_string())
    );
    assert!(table.authenticate("secret-b").is_none(), "revoked");
    assert!(table.authenticate("secret-c").is_none(), "unknown");
    assert!(table.authenticate("").is_none(), "empty");
}

#[test]
fn rejects_unknown_keys_bad_hashes_and_duplicates() {
    let scratch = scratch();
    let unknown = entry(&scratch, "alice", "a", "max_page = 3");
    assert!(matches!(table(&unknown), Err(TenantsError::Parse { .. })));
    let bad_hash = "[[tenant]]\nname = \"a\"\ntoken_sha256 = \"abc\"\nsandbox_root = \"/tmp\"\n";
    let error = table(bad_hash).expect_err("bad hash");
    assert!(error.to_string().contains("hash-token"), "{error}");
    let twice = entry(&scratch, "alice", "a", "") + &entry(&scratch, "alice", "b", "");
    assert!(matches!(
        table(&twice),
        Err(TenantsError::DuplicateName { .. })
    ));
    let same_token = entry(&scratch, "alice", "a", "") + &entry(&scratch, "bob", "a", "");
    assert!(matches!(
        table(&same_token),
        Err(TenantsError::DuplicateToken { .. })
    ));
    let bad_name = entry(&scratch, "Alice!", "a", "");
    assert!(matches!(
        table(&bad_name),
        Err(TenantsError::BadName { .. })
    ));
}

#[test]
fn policy_allows_by_name_or_category_minus_denied() {
    let scratch = scratch();
    let text = entry(
        &scratch,
        "alice",
        "a",
        "tools = [\"list_pages\"]\ncategories = [\"navigation\"]\ndeny_tools = [\"close_page\"]",
    );
    let table = table(&text).expect("valid file");
    let policy = &table.get("alice").expect("alice").policy;
    assert!(policy.allows("list_pages", "other"));
    assert!(policy.allows("navigate_page", "navigation"));
    assert!(!policy.allows("close_page", "navigation"));
    assert!(!policy.allows("take_screenshot", "debugging"));
    assert!(ToolPolicy::default().allows("anything", "any"));
}

#[test]
fn the_documented_example_file_parses() {
    let scratch = scratch();
    let root = scratch.path();
    let text = include_str!("../../../../docs/tenants.example.toml")
        .replace("/srv/devtools-mcp", &root.display().to_string());
    let table = table(&text).expect("docs/tenants.example.toml is valid");
    let alice = table
        .authenticate("alice-example-token")
        .expect("alice's example token");
    assert_eq!(alice.quotas.max_pages, DEFAULT_MAX_PAGES);
    let ci = table.authenticate("ci-example-token").expect("ci's token");
    assert_eq!(ci.quotas.max_pages, 4);
    assert_eq!(ci.quotas.plugin_memory_bytes, Some(32 << 20));
    let cap = ci.quotas.plugin_cap();
    assert_eq!(cap.memory_bytes, 32 << 20);
    assert_eq!(cap.wall_clock, Duration::from_secs(30));
    assert_eq!(Limits::default().min(cap).fuel, Limits::default().fuel);
    assert!(!ci.policy.allows("evaluate_script", "debugging"));
    assert!(ci.policy.allows("take_screenshot", "debugging"));
    assert!(!ci.urls.script, "no evaluate_script, no script URLs");
    assert!(alice.urls.script);
    assert_eq!(ci.quotas.requests_per_minute, 120);
    assert_eq!(ci.egress.allow.len(), 1);
    assert!(alice.egress.public && alice.egress.allow.is_empty());
    assert_eq!(
        table.authenticate_metrics("metrics-example-token"),
        Some(true)
    );
    assert_eq!(
        table.authenticate_metrics("alice-example-token"),
        Some(false)
    );
}

#[test]
fn egress_lists_are_validated_and_the_metrics_token_is_optional() {
    let scratch = scratch();
    let bad = entry(
        &scratch,
        "alice",
        "a",
        "egress_allow = [\"http://10.0.0.1/\"]",
    );
    let error = table(&bad).expect_err("a URL is not a rule");
    assert!(error.to_string().contains("egress_allow"), "{error}");
    let good = entry(
        &scratch,
        "alice",
        "a",
        "egress_deny = [\"10.0.0.0/8\", \"*.ads.example\"]\negress_public = false",
    );
    let parsed = table(&good).expect("valid");
    let alice = parsed.get("alice").expect("alice");
    assert_eq!(alice.egress.deny.len(), 2);
    assert!(!alice.egress.public);
    assert_eq!(
        parsed.authenticate_metrics("x"),
        None,
        "no metrics token: off"
    );
    let same = format!(
        "metrics_token_sha256 = {:?}\n{}",
        token_hash_hex("a"),
        entry(&scratch, "alice", "a", "")
    );
    assert!(matches!(
        table(&same),
        Err(TenantsError::DuplicateToken { .. })
    ));
}

#[test]
fn token_hash_ignores_surrounding_whitespace() {
    assert_eq!(token_hash_hex("abc\n"), token_hash_hex("abc"));
    assert_eq!(
        token_hash_hex("abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}

#[test]
fn an_output_budget_is_a_tenants_own_and_too_small_a_one_is_refused() {
    let scratch = scratch();
    let text = entry(&scratch, "alice", "a", "max_output_tokens = 4000")
        + &entry(&scratch, "bob", "b", "");
    let table = table(&text).expect("valid file");
    assert!(table.any_output_budget());
    let budget = |name: &str| table.get(name).and_then(|t| t.quotas.output_tokens);
    assert_eq!((budget("alice"), budget("bob")), (Some(4000), None));
    let small = entry(&scratch, "carol", "c", "max_output_tokens = 50");
    let refused = table_error(&small);
    assert!(
        refused.contains("max_output_tokens = 50 leaves no room")
            && refused.contains("at least 200"),
        "{refused}"
    );
}

fn table_error(text: &str) -> String {
    match table(text) {
        Ok(_) => panic!("accepted: {text}"),
        Err(error) => error.to_string(),
    }
}
