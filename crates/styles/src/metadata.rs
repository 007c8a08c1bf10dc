//! The little CSS knowledge the cascade needs and the protocol does not give: which properties
//! inherit (CSS specifications' "Inherited: yes"), canonical names of `-webkit-` aliases, and
//! `CSS.escape` for the element selectors DevTools prints.

/// Properties whose computed value is inherited by default, Chromium's list.
const INHERITED: &[&str] = &[
    "-webkit-border-horizontal-spacing",
    "-webkit-border-vertical-spacing",
    "-webkit-font-smoothing",
    "-webkit-locale",
    "-webkit-rtl-ordering",
    "-webkit-ruby-position",
    "-webkit-tap-highlight-color",
    "-webkit-text-combine",
    "-webkit-text-decorations-in-effect",
    "-webkit-text-fill-color",
    "-webkit-text-orientation",
    "-webkit-text-security",
    "-webkit-text-stroke",
    "-webkit-text-stroke-color",
    "-webkit-text-stroke-width",
    "-webkit-user-modify",
    "-webkit-writing-mode",
    "accent-color",
    "block-ellipsis",
    "border-collapse",
    "border-spacing",
    "caption-side",
    "caret-animation",
    "caret-color",
    "caret-shape",
    "clip-rule",
    "color",
    "color-interpolation",
    "color-interpolation-filters",
    "color-rendering",
    "color-scheme",
    "cursor",
    "direction",
    "dominant-baseline",
    "dynamic-range-limit",
    "empty-cells",
    "fill",
    "fill-opacity",
    "fill-rule",
    "font",
    "font-family",
    "font-feature-settings",
    "font-kerning",
    "font-language-override",
    "font-optical-sizing",
    "font-palette",
    "font-size",
    "font-size-adjust",
    "font-stretch",
    "font-style",
    "font-synthesis",
    "font-synthesis-small-caps",
    "font-synthesis-style",
    "font-synthesis-weight",
    "font-variant",
    "font-variant-alternates",
    "font-variant-caps",
    "font-variant-east-asian",
    "font-variant-emoji",
    "font-variant-ligatures",
    "font-variant-numeric",
    "font-variant-position",
    "font-variation-settings",
    "font-weight",
    "forced-color-adjust",
    "hanging-punctuation",
    "hyphenate-character",
    "hyphenate-limit-chars",
    "hyphens",
    "image-animation",
    "image-orientation",
    "image-rendering",
    "interactivity",
    "interpolate-size",
    "letter-spacing",
    "line-break",
    "line-height",
    "list-style",
    "list-style-image",
    "list-style-position",
    "list-style-type",
    "marker",
    "marker-end",
    "marker-mid",
    "marker-start",
    "math-depth",
    "math-shift",
    "math-style",
    "orphans",
    "overflow-wrap",
    "paint-order",
    "pointer-events",
    "print-color-adjust",
    "quotes",
    "ruby-align",
    "ruby-overhang",
    "ruby-position",
    "scrollbar-color",
    "shape-rendering",
    "speak",
    "stroke",
    "stroke-dasharray",
    "stroke-dashoffset",
    "stroke-linecap",
    "stroke-linejoin",
    "stroke-miterlimit",
    "stroke-opacity",
    "stroke-width",
    "tab-size",
    "text-align",
    "text-align-last",
    "text-anchor",
    "text-autospace",
    "text-box-edge",
    "text-combine-upright",
    "text-decoration-skip-ink",
    "text-decoration-skip-spaces",
    "text-emphasis",
    "text-emphasis-color",
    "text-emphasis-position",
    "text-emphasis-style",
    "text-fit",
    "text-indent",
    "text-justify",
    "text-orientation",
    "text-rendering",
    "text-shadow",
    "text-size-adjust",
    "text-spacing",
    "text-spacing-trim",
    "text-transform",
    "text-underline-offset",
    "text-underline-position",
    "text-wrap",
    "text-wrap-mode",
    "text-wrap-style",
    "user-select",
    "visibility",
    "white-space",
    "white-space-collapse",
    "widows",
    "window-drag",
    "word-break",
    "word-spacing",
    "writing-mode",
];

/// `-webkit-` properties that have no unprefixed twin, so they keep their own name.
const WEBKIT_ONLY: &[&str] = &[
    "border-horizontal-spacing",
    "border-vertical-spacing",
    "box-reflect",
    "font-smoothing",
    "line-clamp",
    "locale",
    "rtl-ordering",
    "tap-highlight-color",
    "text-decorations-in-effect",
    "text-fill-color",
    "text-security",
    "text-stroke",
    "text-stroke-color",
    "text-stroke-width",
    "user-drag",
    "user-modify",
];

pub fn is_custom_property(name: &str) -> bool {
    name.starts_with("--")
}

/// The name a `-webkit-` alias stands for (`-webkit-transform` -> `transform`); others as is.
pub fn canonical_name(name: &str) -> String {
    if is_custom_property(name) {
        return name.to_string();
    }
    let lower = name.to_ascii_lowercase();
    match lower.strip_prefix("-webkit-") {
        Some(rest) if !rest.is_empty() && !WEBKIT_ONLY.contains(&rest) => rest.to_string(),
        _ => lower,
    }
}

/// Whether the property inherits by default (custom properties always do).
pub fn is_inherited(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    is_custom_property(&lower)
        || INHERITED.contains(&lower.as_str())
        || INHERITED.contains(&canonical_name(&lower).as_str())
}

/// Highlight pseudo-elements inherit along the highlight tree, custom properties excepted.
pub fn is_highlight_pseudo(pseudo_type: &str) -> bool {
    matches!(
        pseudo_type,
        "highlight" | "selection" | "target-text" | "grammar-error" | "spelling-error"
    )
}

/// `CSS.escape` of the CSSOM specification.
pub fn css_escape(value: &str) -> String {
    let chars: Vec<char> = value.chars().collect();
    let mut out = String::new();
    for (index, &c) in chars.iter().enumerate() {
        let code = u32::from(c);
        if code == 0 {
            out.push('\u{FFFD}');
        } else if (0x1..=0x1f).contains(&code)
            || code == 0x7f
            || (index == 0 && c.is_ascii_digit())
            || (index == 1 && c.is_ascii_digit() && chars[0] == '-')
        {
            out.push_str(&format!("\\{code:x} "));
        } else if index == 0 && c == '-' && chars.len() == 1 {
            out.push_str("\\-");
        } else if code >= 0x80 || c == '-' || c == '_' || c.is_ascii_alphanumeric() {
            out.push(c);
        } else {
            out.push('\\');
            out.push(c);
        }
    }
    out
}

/// DevTools' `DOMNode.simpleSelector()`: `tag#id`, `tag.class.list` (`div` dropped), or
/// `input[type="..."]`.
pub fn simple_selector(local_name: &str, attributes: &[(String, String)]) -> String {
    let attribute = |name: &str| {
        attributes
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
            .filter(|value| !value.is_empty())
    };
    let name = local_name.to_ascii_lowercase();
    let (kind, id, classes) = (attribute("type"), attribute("id"), attribute("class"));
    if name == "input"
        && let Some(kind) = kind
        && id.is_none()
        && classes.is_none()
    {
        return format!("{name}[type=\"{}\"]", css_escape(kind));
    }
    if let Some(id) = id {
        return format!("{name}#{}", css_escape(id));
    }
    if let Some(classes) = classes {
        let list: Vec<String> = classes.split_whitespace().map(css_escape).collect();
        if !list.is_empty() {
            let tag = if name == "div" { "" } else { name.as_str() };
            return format!("{tag}.{}", list.join("."));
        }
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inheritance_and_aliases() {
        assert!(is_inherited("color"));
        assert!(is_inherited("--accent"));
        assert!(!is_inherited("padding"));
        assert_eq!(canonical_name("-webkit-transform"), "transform");
        assert_eq!(canonical_name("-webkit-text-stroke"), "-webkit-text-stroke");
    }

    #[test]
    fn selectors_as_devtools_prints_them() {
        let attrs = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        assert_eq!(
            simple_selector("DIV", &attrs(&[("id", "main")])),
            "div#main"
        );
        assert_eq!(
            simple_selector("div", &attrs(&[("class", " card  x ")])),
            ".card.x"
        );
        assert_eq!(
            simple_selector("h1", &attrs(&[("class", "title")])),
            "h1.title"
        );
        assert_eq!(
            simple_selector("input", &attrs(&[("type", "text")])),
            "input[type=\"text\"]"
        );
        assert_eq!(simple_selector("p", &[]), "p");
        assert_eq!(css_escape("1a b"), "\\31 a\\ b");
        assert_eq!(css_escape("-"), "\\-");
    }
}
