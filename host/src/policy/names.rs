//! Names in configuration (tools, categories, flags, policy sections) checked against the names
//! there are: a misspelt name must be an error that lists them, never a rule that silently
//! matches nothing (`deny_tools = ["evaluate_scirpt"]` would leave `evaluate_script` allowed).

/// The known name closest to `name`, when one is close enough to be the one meant: a few
/// edits apart (at most a third of the name's length, and at most 3).
pub fn closest<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).clamp(1, 3);
    known
        .into_iter()
        .map(|candidate| (strsim::levenshtein(name, candidate), candidate))
        .filter(|(distance, _)| *distance <= limit)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// `"x", which is not one of the <kind> (did you mean "y"?). The <kind> are: a, b, c`: the
/// tail of an error about an unknown `name` ("deny_tools names ..."), saying what there is.
pub fn unknown<'a>(name: &str, kind: &str, known: impl IntoIterator<Item = &'a str>) -> String {
    let known: Vec<&str> = known.into_iter().collect();
    let suggestion = closest(name, known.iter().copied())
        .map(|close| format!(" (did you mean {close:?}?)"))
        .unwrap_or_default();
    let listed = if known.is_empty() {
        "none".to_string()
    } else {
        known.join(", ")
    };
    format!("{name:?}, which is not one of the {kind}{suggestion}. The {kind} are: {listed}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_near_name_is_suggested_and_a_far_one_is_not() {
        let known = ["evaluate_script", "take_snapshot", "click"];
        assert_eq!(closest("evaluate_scirpt", known), Some("evaluate_script"));
        assert_eq!(closest("clik", known), Some("click"));
        assert_eq!(closest("navigate_page", known), None);
        let message = unknown("evaluate_scirpt", "tools", known);
        assert!(
            message.contains("(did you mean \"evaluate_script\"?)")
                && message.ends_with("The tools are: evaluate_script, take_snapshot, click"),
            "{message}"
        );
        assert!(!unknown("zzz", "tools", known).contains("did you mean"));
    }
}
