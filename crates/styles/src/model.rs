//! The matched-styles payload of `CSS.getMatchedStylesForNode` turned into styles and
//! properties with identity, as the DevTools front-end models them (`CSSStyleDeclaration`,
//! `CSSProperty`): a ranged style keeps its declared properties and appends their parsed
//! longhands; a property is inactive in its own style when a later (or `!important`)
//! declaration of the same property wins.

use super::metadata::{canonical_name, is_custom_property, is_inherited};
use serde_json::Value;
use std::collections::HashMap;

pub type PropId = usize;
pub type StyleId = usize;

pub struct Prop {
    pub name: String,
    pub value: String,
    pub important: bool,
    pub disabled: bool,
    pub parsed_ok: bool,
    pub ranged: bool,
    pub longhands: Vec<PropId>,
    pub style: StyleId,
    pub active_in_style: bool,
}

/// Where a rule comes from and what wraps it, resolved for printing.
pub struct RuleInfo {
    pub selector_text: String,
    /// `user agent stylesheet`, `css.html:22`, ...
    pub source: String,
    /// Enclosing at-rules, outermost first: (comment, header).
    pub ancestors: Vec<(Option<String>, String)>,
}

pub enum StyleKind {
    Inline,
    Attributes,
    Transition,
    Animation(Option<String>),
    Rule(RuleInfo),
}

pub struct Style {
    pub kind: StyleKind,
    /// The style sheet and source range, when the style has one (`containsStyle`).
    pub location: Option<(String, Value)>,
    pub ranged: bool,
    pub all: Vec<PropId>,
    pub leading: Vec<PropId>,
}

#[derive(Default)]
pub struct Model {
    pub props: Vec<Prop>,
    pub styles: Vec<Style>,
}

impl Model {
    /// Adds one `CSSStyle` payload.
    pub fn add_style(&mut self, kind: StyleKind, payload: &Value) -> StyleId {
        let id = self.styles.len();
        let ranged = !payload["range"].is_null()
            && payload["cssText"]
                .as_str()
                .is_some_and(|text| !text.is_empty());
        let location = match (payload["styleSheetId"].as_str(), payload.get("range")) {
            (Some(sheet), Some(range)) if !range.is_null() => {
                Some((sheet.to_string(), range.clone()))
            }
            _ => None,
        };
        let mut all = Vec::new();
        let mut longhands = Vec::new();
        for property in payload["cssProperties"].as_array().into_iter().flatten() {
            if ranged && property["range"].is_null() {
                continue;
            }
            let parent = self.add_property(id, property);
            if ranged {
                longhands.extend(self.props[parent].longhands.iter().copied());
            }
            all.push(parent);
        }
        all.extend(longhands);
        // A range-less style (user-agent rules, attribute styles) leads with every entry.
        let leading = if ranged {
            all.iter()
                .copied()
                .filter(|&p| self.props[p].ranged)
                .collect()
        } else {
            all.clone()
        };
        self.styles.push(Style {
            kind,
            location,
            ranged,
            all,
            leading,
        });
        self.compute_inactive(id);
        id
    }

    fn add_property(&mut self, style: StyleId, payload: &Value) -> PropId {
        let important = payload["important"].as_bool().unwrap_or(false);
        let disabled = payload["disabled"].as_bool().unwrap_or(false);
        let parsed_ok = payload["parsedOk"].as_bool().unwrap_or(true);
        let id = self.props.len();
        self.props.push(Prop {
            name: payload["name"].as_str().unwrap_or_default().to_string(),
            value: payload["value"].as_str().unwrap_or_default().to_string(),
            important,
            disabled,
            parsed_ok,
            ranged: !payload["range"].is_null(),
            longhands: Vec::new(),
            style,
            active_in_style: true,
        });
        let mut longhands = Vec::new();
        for longhand in payload["longhandProperties"]
            .as_array()
            .into_iter()
            .flatten()
        {
            longhands.push(self.props.len());
            self.props.push(Prop {
                name: longhand["name"].as_str().unwrap_or_default().to_string(),
                value: longhand["value"].as_str().unwrap_or_default().to_string(),
                important,
                disabled,
                parsed_ok,
                ranged: false,
                longhands: Vec::new(),
                style,
                active_in_style: true,
            });
        }
        self.props[id].longhands = longhands;
        id
    }

    /// `CSSStyleDeclaration#computeInactiveProperties`.
    fn compute_inactive(&mut self, style: StyleId) {
        let all = self.styles[style].all.clone();
        let mut active: HashMap<String, PropId> = HashMap::new();
        let mut processed: Vec<PropId> = Vec::new();
        for prop in all {
            let canonical = canonical_name(&self.props[prop].name);
            if self.props[prop].disabled || !self.props[prop].parsed_ok {
                if !self.props[prop].disabled
                    && is_custom_property(&self.props[prop].name)
                    && let Some(previous) = active.remove(&canonical)
                {
                    self.props[previous].active_in_style = false;
                }
                self.props[prop].active_in_style = false;
                continue;
            }
            if processed.contains(&prop) {
                continue;
            }
            for longhand in self.props[prop].longhands.clone() {
                let name = self.props[longhand].name.clone();
                self.settle(&mut active, name, longhand);
                processed.push(longhand);
            }
            self.settle(&mut active, canonical, prop);
        }
    }

    /// The later declaration wins unless the earlier one is `!important` and it is not.
    fn settle(&mut self, active: &mut HashMap<String, PropId>, key: String, prop: PropId) {
        match active.get(&key).copied() {
            None => {
                active.insert(key, prop);
            }
            Some(previous) if !self.props[previous].important || self.props[prop].important => {
                self.props[previous].active_in_style = false;
                active.insert(key, prop);
            }
            Some(_) => self.props[prop].active_in_style = false,
        }
    }

    /// `containsInherited`: an active property that inherits.
    pub fn contains_inherited(&self, style: StyleId) -> bool {
        self.styles[style].all.iter().any(|&p| {
            let prop = &self.props[p];
            prop.active_in_style && is_inherited(&prop.name)
        })
    }

    pub fn contains_custom_properties(&self, style: StyleId) -> bool {
        self.styles[style]
            .all
            .iter()
            .any(|&p| is_custom_property(&self.props[p].name))
    }

    /// `containsStyle`: the same sheet and source range as one of `styles`.
    pub fn contains_style(&self, styles: &[StyleId], query: StyleId) -> bool {
        let Some(location) = &self.styles[query].location else {
            return false;
        };
        styles
            .iter()
            .any(|&s| self.styles[s].location.as_ref() == Some(location))
    }
}
