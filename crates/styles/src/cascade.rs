//! The cascade of one element as DevTools' `CSSMatchedStyles` builds it: the element's own
//! styles (transitions, animations, inline, author rules, attribute styles, user-agent rules,
//! highest precedence first), then per ancestor the styles it passes down; each property is
//! marked active or overloaded; the result is the list of rules `CssFormatter` prints.

use super::metadata::{canonical_name, is_highlight_pseudo, is_inherited};
use super::model::{Model, PropId, RuleInfo, StyleId, StyleKind};
use super::user_agent::clean_user_agent;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// Where the caller puts `CSS.getAnimatedStylesForNode`'s answer in the payload.
pub const ANIMATED: &str = "animatedStyles";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum State {
    Active,
    Overloaded,
}

/// An element named in the output: its selector and, when the snapshot has it, its uid.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeRef {
    pub selector: String,
    pub uid: Option<String>,
}

/// What the payload alone does not say: the element, its flat-tree ancestors (parent first)
/// and how to print a rule's origin and wrappers.
pub struct Input<'a> {
    pub payload: &'a Value,
    /// The element's tag, for `tag[attributes style]`.
    pub tag: String,
    pub ancestors: Vec<NodeRef>,
    pub rule_info: &'a dyn Fn(&Value) -> RuleInfo,
}

/// One printed rule.
pub struct OutRule {
    pub kind: OutKind,
    /// `selector (source)`.
    pub header: String,
    pub ancestors: Vec<(Option<String>, String)>,
    pub lines: Vec<String>,
}

pub enum OutKind {
    Plain,
    Inherited(NodeRef),
    Pseudo {
        pseudo_type: String,
        node: Option<NodeRef>,
    },
    Keyframes(Vec<(String, Vec<String>)>),
}

/// One node's styles in one cascade (`NodeCascade`).
struct NodeCascade {
    styles: Vec<StyleId>,
    inherited: bool,
    highlight: bool,
}

/// Builds the model and returns the rules in the order DevTools prints them.
pub fn collect(input: &Input) -> Vec<OutRule> {
    let mut builder = Builder {
        input,
        model: Model::default(),
        node_for_style: HashMap::new(),
        inherited_styles: HashSet::new(),
        registered: registered_properties(input.payload),
    };
    let main = builder.main_cascade();
    let pseudo = builder.pseudo_cascades();
    let main_states = builder.dom_states(&main);
    let mut rules = Vec::new();
    for cascade in &main {
        for &style in &cascade.styles {
            if let Some(rule) = builder.node_style_rule(style, &main_states) {
                rules.push(rule);
            }
        }
    }
    for (pseudo_type, cascades) in &pseudo {
        let states = builder.dom_states(cascades);
        for cascade in cascades {
            for &style in &cascade.styles {
                if let Some(rule) = builder.pseudo_rule(pseudo_type, style, &states) {
                    rules.push(rule);
                }
            }
        }
    }
    rules.extend(builder.keyframes());
    rules
}

struct Builder<'a> {
    input: &'a Input<'a>,
    model: Model,
    /// Index into `input.ancestors`; styles of the element itself are absent.
    node_for_style: HashMap<StyleId, usize>,
    inherited_styles: HashSet<StyleId>,
    /// Registered custom properties: name -> inherits.
    registered: HashMap<String, bool>,
}

impl Builder<'_> {
    fn rule_style(&mut self, rule: &Value) -> StyleId {
        let info = (self.input.rule_info)(rule);
        self.model.add_style(StyleKind::Rule(info), &rule["style"])
    }

    /// `buildMainCascade`.
    fn main_cascade(&mut self) -> Vec<NodeCascade> {
        let payload = self.input.payload;
        let mut own = Vec::new();
        let animated = &payload[ANIMATED];
        own.extend(self.animated_styles(animated, |_, _| true));
        if let Some(inline) = payload.get("inlineStyle").filter(|v| !v.is_null()) {
            own.push(self.model.add_style(StyleKind::Inline, inline));
        }
        let matched = clean_user_agent(payload["matchedCSSRules"].as_array());
        let mut attributes_added = false;
        for rule_match in matched.iter().rev() {
            let rule = &rule_match["rule"];
            let origin = rule["origin"].as_str().unwrap_or_default();
            if matches!(origin, "injected" | "user-agent") && !attributes_added {
                attributes_added = true;
                self.add_attributes_style(&mut own);
            }
            own.push(self.rule_style(rule));
        }
        if !attributes_added {
            self.add_attributes_style(&mut own);
        }
        let mut cascades = vec![NodeCascade {
            styles: own.clone(),
            inherited: false,
            highlight: false,
        }];
        let inherited = payload["inherited"].as_array().cloned().unwrap_or_default();
        for (level, entry) in inherited.iter().enumerate() {
            if level >= self.input.ancestors.len() {
                break;
            }
            let mut styles = Vec::new();
            for style in self.animated_styles(&animated["inherited"][level], |model, style| {
                model.contains_inherited(style)
            }) {
                self.mark_inherited(style, level);
                styles.push(style);
            }
            if let Some(inline) = entry.get("inlineStyle").filter(|v| !v.is_null()) {
                let style = self.model.add_style(StyleKind::Inline, inline);
                if self.model.contains_inherited(style) {
                    self.mark_inherited(style, level);
                    styles.push(style);
                }
            }
            let rules = clean_user_agent(entry["matchedCSSRules"].as_array());
            for rule_match in rules.iter().rev() {
                let style = self.rule_style(&rule_match["rule"]);
                if !self.model.contains_inherited(style) {
                    continue;
                }
                if !self.model.contains_custom_properties(style) {
                    let seen: Vec<StyleId> = self.inherited_styles.iter().copied().collect();
                    if self.model.contains_style(&own, style)
                        || self.model.contains_style(&seen, style)
                    {
                        continue;
                    }
                }
                self.mark_inherited(style, level);
                styles.push(style);
            }
            cascades.push(NodeCascade {
                styles,
                inherited: true,
                highlight: false,
            });
        }
        cascades
    }

    /// The transitions style, then the animation styles (highest precedence first); only
    /// those `keep` accepts.
    fn animated_styles(
        &mut self,
        animated: &Value,
        keep: impl Fn(&Model, StyleId) -> bool,
    ) -> Vec<StyleId> {
        let mut styles = Vec::new();
        if let Some(transitions) = animated.get("transitionsStyle").filter(|v| !v.is_null()) {
            let style = self.model.add_style(StyleKind::Transition, transitions);
            if keep(&self.model, style) {
                styles.push(style);
            }
        }
        for animation in animated["animationStyles"].as_array().into_iter().flatten() {
            let name = animation["name"].as_str().map(str::to_string);
            let style = self
                .model
                .add_style(StyleKind::Animation(name), &animation["style"]);
            if keep(&self.model, style) {
                styles.push(style);
            }
        }
        styles
    }

    fn add_attributes_style(&mut self, own: &mut Vec<StyleId>) {
        if let Some(attributes) = self
            .input
            .payload
            .get("attributesStyle")
            .filter(|v| !v.is_null())
        {
            own.push(self.model.add_style(StyleKind::Attributes, attributes));
        }
    }

    fn mark_inherited(&mut self, style: StyleId, level: usize) {
        self.node_for_style.insert(style, level);
        self.inherited_styles.insert(style);
    }

    /// `buildPseudoCascades`, without the per-name split of `::highlight()`.
    fn pseudo_cascades(&mut self) -> Vec<(String, Vec<NodeCascade>)> {
        let payload = self.input.payload;
        let mut cascades: Vec<(String, Vec<NodeCascade>)> = Vec::new();
        for entry in payload["pseudoElements"].as_array().into_iter().flatten() {
            let pseudo_type = entry["pseudoType"].as_str().unwrap_or_default().to_string();
            if pseudo_type == "highlight" {
                continue;
            }
            let mut styles = Vec::new();
            for rule_match in entry["matches"].as_array().into_iter().flatten().rev() {
                styles.push(self.rule_style(&rule_match["rule"]));
            }
            let highlight = is_highlight_pseudo(&pseudo_type);
            cascades.push((
                pseudo_type,
                vec![NodeCascade {
                    styles,
                    inherited: false,
                    highlight,
                }],
            ));
        }
        let inherited = payload["inheritedPseudoElements"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for (level, entry) in inherited.iter().enumerate() {
            if level >= self.input.ancestors.len() {
                break;
            }
            for pseudo in entry["pseudoElements"].as_array().into_iter().flatten() {
                let pseudo_type = pseudo["pseudoType"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                if pseudo_type == "highlight" {
                    continue;
                }
                let mut styles = Vec::new();
                for rule_match in pseudo["matches"].as_array().into_iter().flatten().rev() {
                    let style = self.rule_style(&rule_match["rule"]);
                    self.mark_inherited(style, level);
                    styles.push(style);
                }
                let cascade = NodeCascade {
                    styles,
                    inherited: true,
                    highlight: is_highlight_pseudo(&pseudo_type),
                };
                match cascades.iter_mut().find(|(name, _)| *name == pseudo_type) {
                    Some((_, list)) => list.push(cascade),
                    None => cascades.push((pseudo_type, vec![cascade])),
                }
            }
        }
        cascades
    }

    /// `NodeCascade.computeActiveProperties`: states in insertion order, as a JS `Map` keeps
    /// them.
    fn node_states(&self, cascade: &NodeCascade) -> Vec<(PropId, State)> {
        let mut states = OrderedStates::default();
        let mut active: HashMap<String, PropId> = HashMap::new();
        for &style in cascade.styles.iter().rev() {
            let ranged = self.model.styles[style].ranged;
            for &prop in &self.model.styles[style].all {
                let property = &self.model.props[prop];
                if cascade.inherited {
                    if cascade.highlight {
                        if property.name.starts_with("--") {
                            continue;
                        }
                    } else if !is_inherited(&property.name) {
                        continue;
                    }
                }
                if ranged && !property.ranged {
                    continue;
                }
                if !property.active_in_style {
                    states.set(prop, State::Overloaded);
                    continue;
                }
                if cascade.inherited && self.registered.get(&property.name) == Some(&false) {
                    states.set(prop, State::Overloaded);
                    continue;
                }
                self.update_state(
                    &mut states,
                    &mut active,
                    prop,
                    canonical_name(&property.name),
                );
                for &longhand in &property.longhands {
                    let name = self.model.props[longhand].name.clone();
                    self.update_state(&mut states, &mut active, longhand, name);
                }
            }
        }
        states.entries
    }

    fn update_state(
        &self,
        states: &mut OrderedStates,
        active: &mut HashMap<String, PropId>,
        prop: PropId,
        key: String,
    ) {
        if let Some(&current) = active.get(&key) {
            if self.model.props[current].important && !self.model.props[prop].important {
                states.set(prop, State::Overloaded);
                return;
            }
            states.set(current, State::Overloaded);
        }
        states.set(prop, State::Active);
        active.insert(key, prop);
    }

    /// `DOMInheritanceCascade.ensureInitialized`: the element's cascade first, then the
    /// ancestors'; a shorthand none of whose longhands is active in its own style loses.
    fn dom_states(&self, cascades: &[NodeCascade]) -> HashMap<PropId, State> {
        let mut result = HashMap::new();
        let mut active: Vec<(String, PropId)> = Vec::new();
        for cascade in cascades {
            for (prop, state) in self.node_states(cascade) {
                if state == State::Overloaded {
                    result.insert(prop, State::Overloaded);
                    continue;
                }
                let canonical = canonical_name(&self.model.props[prop].name);
                if active.iter().any(|(name, _)| *name == canonical) {
                    result.insert(prop, State::Overloaded);
                    continue;
                }
                active.push((canonical, prop));
                result.insert(prop, State::Active);
            }
        }
        let shorthands: Vec<(String, PropId)> = active.clone();
        for (name, shorthand) in shorthands {
            let longhands = &self.model.props[shorthand].longhands;
            if longhands.is_empty() {
                continue;
            }
            let owner = self.model.props[shorthand].style;
            let has_active = longhands.iter().any(|&longhand| {
                let canonical = canonical_name(&self.model.props[longhand].name);
                active
                    .iter()
                    .find(|(key, _)| *key == canonical)
                    .is_some_and(|(_, winner)| self.model.props[*winner].style == owner)
            });
            if !has_active {
                active.retain(|(key, _)| *key != name);
                result.insert(shorthand, State::Overloaded);
            }
        }
        result
    }

    fn node_of(&self, style: StyleId) -> Option<NodeRef> {
        self.node_for_style
            .get(&style)
            .and_then(|&level| self.input.ancestors.get(level))
            .cloned()
    }

    /// One style of the main cascade as `CssFormatter.#collectNodeStyles` prints it.
    fn node_style_rule(&self, style: StyleId, states: &HashMap<PropId, State>) -> Option<OutRule> {
        let leading = &self.model.styles[style].leading;
        if leading.is_empty() {
            return None;
        }
        let selector = self.style_selector(style);
        if self.inherited_styles.contains(&style) {
            let node = self.node_of(style)?;
            let props: Vec<PropId> = leading
                .iter()
                .copied()
                .filter(|&p| self.inheritable(p, false))
                .collect();
            if props.is_empty() {
                return None;
            }
            let selector = if selector.is_empty() {
                "element.style".to_string()
            } else {
                selector
            };
            return Some(self.out_rule(OutKind::Inherited(node), style, selector, &props, states));
        }
        Some(self.out_rule(OutKind::Plain, style, selector, leading, states))
    }

    fn pseudo_rule(
        &self,
        pseudo_type: &str,
        style: StyleId,
        states: &HashMap<PropId, State>,
    ) -> Option<OutRule> {
        let leading = &self.model.styles[style].leading;
        if leading.is_empty() {
            return None;
        }
        let node = self
            .inherited_styles
            .contains(&style)
            .then(|| self.node_of(style))
            .flatten();
        let props: Vec<PropId> = match node {
            Some(_) => leading
                .iter()
                .copied()
                .filter(|&p| self.inheritable(p, is_highlight_pseudo(pseudo_type)))
                .collect(),
            None => leading.clone(),
        };
        if props.is_empty() {
            return None;
        }
        let mut selector = self.style_selector(style);
        if selector.is_empty() {
            selector = format!("::{pseudo_type}");
        }
        let kind = OutKind::Pseudo {
            pseudo_type: format!("::{pseudo_type}"),
            node,
        };
        Some(self.out_rule(kind, style, selector, &props, states))
    }

    /// `getInheritableProperties`.
    fn inheritable(&self, prop: PropId, highlight: bool) -> bool {
        let name = &self.model.props[prop].name;
        if highlight {
            return !name.starts_with("--");
        }
        if name.starts_with("--")
            && let Some(&inherits) = self.registered.get(name)
        {
            return inherits;
        }
        is_inherited(name)
    }

    fn style_selector(&self, style: StyleId) -> String {
        match &self.model.styles[style].kind {
            StyleKind::Inline => "element.style".into(),
            StyleKind::Transition => "transitions style".into(),
            StyleKind::Animation(Some(name)) => format!("{name} animation"),
            StyleKind::Animation(None) => "animation style".into(),
            StyleKind::Attributes => {
                let tag = match self.node_of(style) {
                    Some(node) => node.selector,
                    None => self.input.tag.clone(),
                };
                format!("{tag}[attributes style]")
            }
            StyleKind::Rule(info) => info.selector_text.clone(),
        }
    }

    fn out_rule(
        &self,
        kind: OutKind,
        style: StyleId,
        selector: String,
        props: &[PropId],
        states: &HashMap<PropId, State>,
    ) -> OutRule {
        let (header, ancestors) = match &self.model.styles[style].kind {
            StyleKind::Rule(info) => (
                format!("{selector} ({})", info.source),
                info.ancestors.clone(),
            ),
            _ => (selector, Vec::new()),
        };
        let lines = props
            .iter()
            .map(|&p| self.property_line(p, states.get(&p).copied()))
            .collect();
        OutRule {
            kind,
            header,
            ancestors,
            lines,
        }
    }

    /// `formatPropertyLine`: `[status] name: value[ !important];`.
    fn property_line(&self, prop: PropId, state: Option<State>) -> String {
        let property = &self.model.props[prop];
        let status = if !property.parsed_ok {
            "[invalid] "
        } else if property.disabled {
            "[disabled] "
        } else if state == Some(State::Overloaded) {
            "[overloaded] "
        } else {
            ""
        };
        let mut value = property.value.clone();
        if property.important {
            value = strip_important(&value).trim_end().to_string();
        }
        let important = if property.important {
            " !important"
        } else {
            ""
        };
        format!("{status}{}: {value}{important};", property.name)
    }

    /// `#collectKeyframes`: the `@keyframes` rules the element's animations use.
    fn keyframes(&mut self) -> Vec<OutRule> {
        let mut rules = Vec::new();
        let payload = self.input.payload;
        for keyframes in payload["cssKeyframesRules"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let name = keyframes["animationName"]["text"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let mut steps = Vec::new();
            let mut source = None;
            for keyframe in keyframes["keyframes"].as_array().into_iter().flatten() {
                let style = self.model.add_style(
                    StyleKind::Rule((self.input.rule_info)(keyframe)),
                    &keyframe["style"],
                );
                let leading = self.model.styles[style].leading.clone();
                if leading.is_empty() {
                    continue;
                }
                if source.is_none()
                    && let StyleKind::Rule(info) = &self.model.styles[style].kind
                {
                    source = Some(info.source.clone());
                }
                let key = keyframe["keyText"]["text"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                let lines = leading
                    .iter()
                    .map(|&p| self.property_line(p, None))
                    .collect();
                steps.push((key, lines));
            }
            if steps.is_empty() {
                continue;
            }
            let selector = format!("@keyframes {name}");
            let header = match source {
                Some(source) => format!("{selector} ({source})"),
                None => selector,
            };
            rules.push(OutRule {
                kind: OutKind::Keyframes(steps),
                header,
                ancestors: Vec::new(),
                lines: Vec::new(),
            });
        }
        rules
    }
}

/// A JS `Map` of states: setting an existing key keeps its place.
#[derive(Default)]
struct OrderedStates {
    entries: Vec<(PropId, State)>,
    index: HashMap<PropId, usize>,
}

impl OrderedStates {
    fn set(&mut self, prop: PropId, state: State) {
        match self.index.get(&prop) {
            Some(&at) => self.entries[at].1 = state,
            None => {
                self.index.insert(prop, self.entries.len());
                self.entries.push((prop, state));
            }
        }
    }
}

fn strip_important(value: &str) -> &str {
    let trimmed = value.trim_end();
    let lower = trimmed.to_ascii_lowercase();
    if let Some(before) = lower.strip_suffix("important") {
        let before = before.trim_end();
        if let Some(rest) = before.strip_suffix('!') {
            return &trimmed[..rest.trim_end().len()];
        }
    }
    value
}

/// Registered custom properties (`@property` rules and `CSS.registerProperty`): name ->
/// whether they inherit.
fn registered_properties(payload: &Value) -> HashMap<String, bool> {
    let mut registered = HashMap::new();
    for rule in payload["cssPropertyRules"].as_array().into_iter().flatten() {
        let Some(name) = rule["propertyName"]["text"].as_str() else {
            continue;
        };
        let inherits = rule["style"]["cssProperties"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|p| p["name"] == "inherits")
            .is_some_and(|p| p["value"] == "true");
        registered.insert(name.to_string(), inherits);
    }
    for registration in payload["cssPropertyRegistrations"]
        .as_array()
        .into_iter()
        .flatten()
    {
        if let Some(name) = registration["propertyName"].as_str() {
            let inherits = registration["inherits"].as_bool().unwrap_or(false);
            registered.insert(name.to_string(), inherits);
        }
    }
    registered
}
