//! Closure contexts holding "dead" captured variables: fields of a context that no live
//! closure of that context can read any more, found from the scope tables newer V8 versions
//! embed in snapshots (`scopes`, `scope_context_vars`, `scope_uses`).

use crate::snapshot::HeapSnapshot;
use std::collections::{HashMap, HashSet};

#[derive(Debug, Clone)]
pub struct DeadField {
    pub name: String,
    pub value_node_id: u32,
    pub value_name: String,
    pub retained_size: u64,
}

#[derive(Debug, Clone)]
pub struct ContextReport {
    pub context_node_index: usize,
    pub context_node_id: u32,
    pub retained_size: u64,
    pub dead_fields_retained_size_sum: u64,
    pub dead_fields: Vec<DeadField>,
}

#[derive(Debug, Clone)]
pub struct ScopeReport {
    pub scope_info_node_id: u32,
    pub script_node_id: u32,
    pub script_name: String,
    pub scope_name: Option<String>,
    pub scope_start: i64,
    pub scope_end: i64,
    pub context_field_count: usize,
    pub contexts: Vec<ContextReport>,
}

#[derive(Debug, Clone)]
pub struct ScriptWithoutScopes {
    pub script_node_index: usize,
    pub script_node_id: u32,
    pub script_name: String,
    pub context_count: usize,
}

#[derive(Debug, Clone, Default)]
pub struct ContextAnalysis {
    pub scopes: Vec<ScopeReport>,
    pub scripts_without_scopes: Vec<ScriptWithoutScopes>,
}

/// One embedded scope: its variables (by slot) and, per variable, the scopes that use it.
struct Scope {
    scope_id: i64,
    parent: Option<usize>,
    variables: Vec<String>,
    uses: Vec<Vec<usize>>,
}

const SCRIPT_ROOT_SCOPE_ID: i64 = -2;
const GENERATOR_CLOSED: i64 = -1;

impl HeapSnapshot {
    pub fn analyze_contexts(&self) -> ContextAnalysis {
        let (scopes, by_script) = self.embedded_scopes();
        let scan = self.scan_for_contexts();
        let live = self.live_functions(&scan);
        self.correlate(&scan, &scopes, &by_script, &live)
    }

    fn embedded_scopes(&self) -> (Vec<Scope>, HashMap<i64, HashMap<i64, usize>>) {
        let raw = &self.raw_scopes;
        let mut scopes: Vec<Scope> = Vec::new();
        let mut by_script: HashMap<i64, HashMap<i64, usize>> = HashMap::new();
        let stride = raw.scope_fields.len();
        if stride == 0 {
            return (scopes, by_script);
        }
        let at = |fields: &[String], name: &str| fields.iter().position(|f| f == name);
        let (Some(script_at), Some(id_at), Some(depth_at), Some(vars_at), Some(uses_at)) = (
            at(&raw.scope_fields, "script_node_index"),
            at(&raw.scope_fields, "scope_id"),
            at(&raw.scope_fields, "depth"),
            at(&raw.scope_fields, "scope_context_vars_count"),
            at(&raw.scope_fields, "scope_uses_count"),
        ) else {
            return (scopes, by_script);
        };
        let var_stride = raw.var_fields.len().max(1);
        let var_name_at = at(&raw.var_fields, "name").unwrap_or(0);
        let use_stride = raw.use_fields.len().max(1);
        let declaring_at = at(&raw.use_fields, "declaring_scope_id").unwrap_or(0);
        let slot_at = at(&raw.use_fields, "slot_index").unwrap_or(0);
        let get = |values: &[i64], i: usize| values.get(i).copied().unwrap_or(-1);
        let mut var_offset = 0usize;
        let mut current_script: Option<i64> = None;
        let mut stack: Vec<usize> = Vec::new();
        let mut order: Vec<(i64, i64, usize)> = Vec::new();
        for row in raw.scopes.chunks_exact(stride) {
            let script = row[script_at];
            let scope_id = row[id_at];
            let depth = row[depth_at].max(0) as usize;
            let count = row[vars_at].max(0) as usize;
            let variables: Vec<String> = (0..count)
                .map(|j| {
                    let index = get(&raw.vars, var_offset + j * var_stride + var_name_at);
                    self.strings
                        .get(index as usize)
                        .cloned()
                        .unwrap_or_default()
                })
                .collect();
            var_offset += count * var_stride;
            if current_script != Some(script) {
                current_script = Some(script);
                stack.clear();
            }
            let parent = if depth > 0 {
                stack.get(depth - 1).copied()
            } else {
                None
            };
            let uses = vec![Vec::new(); variables.len()];
            scopes.push(Scope {
                scope_id,
                parent,
                variables,
                uses,
            });
            let index = scopes.len() - 1;
            stack.truncate(depth);
            while stack.len() < depth {
                stack.push(index);
            }
            stack.push(index);
            by_script.entry(script).or_default().insert(scope_id, index);
            order.push((script, scope_id, row[uses_at].max(0) as usize));
        }
        let mut use_offset = 0usize;
        for (script, scope_id, count) in order {
            if let Some(&user) = by_script.get(&script).and_then(|m| m.get(&scope_id)) {
                for j in 0..count {
                    let declaring = get(&raw.uses, use_offset + j * use_stride + declaring_at);
                    let slot = get(&raw.uses, use_offset + j * use_stride + slot_at);
                    if let Some(&declaring) = by_script.get(&script).and_then(|m| m.get(&declaring))
                        && let Some(list) = scopes[declaring].uses.get_mut(slot.max(0) as usize)
                        && slot >= 0
                        && !list.contains(&user)
                    {
                        list.push(user);
                    }
                }
            }
            use_offset += count * use_stride;
        }
        (scopes, by_script)
    }

    fn scan_for_contexts(&self) -> Scan {
        let mut scan = Scan::default();
        let mut generator_maps: HashMap<usize, bool> = HashMap::new();
        for ordinal in 0..self.node_count {
            let ni = ordinal * self.nf;
            let raw_name = self.raw_name(ni);
            if raw_name.starts_with("system / Script") {
                let mut name = raw_name
                    .strip_prefix("system / Script / ")
                    .unwrap_or("")
                    .to_string();
                if name.is_empty() {
                    name = self
                        .internal_edge_target(ni, "source_url")
                        .map(|n| self.node_name(n))
                        .unwrap_or_default();
                }
                scan.scripts.insert(ni, (name, self.node_id(ni)));
                self.script_scope_infos(&mut scan.scope_info_scripts, ni);
            } else if self.is_context_object(ni) {
                if let Some(scope_info) = self.internal_edge_target(ni, "scope_info") {
                    scan.contexts.push((ni, self.node_id(ni), scope_info));
                }
            } else if self.raw_type(ni) == self.nt.closure {
                if let (Some(shared), Some(context)) = (
                    self.internal_edge_target(ni, "shared"),
                    self.internal_edge_target(ni, "context"),
                ) {
                    self.add_live_closure(&mut scan.live_closures, ni, shared, context);
                }
            } else if self.is_generator_object(&mut generator_maps, ni) {
                self.generator_object(&mut scan, ni);
            }
        }
        scan
    }

    fn script_scope_infos(&self, map: &mut HashMap<usize, Option<usize>>, script: usize) {
        let Some(infos) = self.internal_edge_target(script, "infos") else {
            return;
        };
        let stop = self
            .internal_edge_target(script, "eval_from_scope_info")
            .filter(|&n| self.raw_name(n) == "system / ScopeInfo");
        for ei in self.edge_indexes(infos) {
            let info = self.edge_to(ei);
            let name = self.raw_name(info);
            if name == "system / ScopeInfo" {
                self.attribute_scope_info_chain(map, info, stop, script);
                continue;
            }
            if !name.starts_with("system / SharedFunctionInfo") {
                continue;
            }
            if let Some(scope_info) = self
                .internal_edge_target(info, "name_or_scope_info")
                .filter(|&n| self.raw_name(n) == "system / ScopeInfo")
            {
                self.attribute_scope_info_chain(map, scope_info, stop, script);
                continue;
            }
            let scope_id = self
                .internal_edge_target(info, "scope_id")
                .and_then(|n| self.value_as_int(n));
            if scope_id.is_none_or(|id| id == SCRIPT_ROOT_SCOPE_ID) {
                continue;
            }
            if let Some(outer) = self
                .internal_edge_target(info, "raw_outer_scope_info_or_feedback_metadata")
                .filter(|&n| self.raw_name(n) == "system / ScopeInfo")
            {
                self.attribute_scope_info_chain(map, outer, stop, script);
            }
        }
    }

    fn attribute_scope_info_chain(
        &self,
        map: &mut HashMap<usize, Option<usize>>,
        start: usize,
        stop: Option<usize>,
        script: usize,
    ) {
        let mut current = start;
        loop {
            if Some(current) == stop || map.contains_key(&current) {
                return;
            }
            map.insert(current, Some(script));
            if self.is_script_root_scope_info(current) {
                return;
            }
            match self.internal_edge_target(current, "outer_scope_info") {
                Some(outer) => current = outer,
                None => return,
            }
        }
    }

    fn is_script_root_scope_info(&self, ni: usize) -> bool {
        self.internal_edge_target(ni, "scope_id")
            .and_then(|n| self.value_as_int(n))
            == Some(SCRIPT_ROOT_SCOPE_ID)
    }

    fn add_live_closure(
        &self,
        closures: &mut Vec<LiveClosure>,
        owner: usize,
        shared: usize,
        context: usize,
    ) {
        let Some(script) = self.internal_edge_target(shared, "script") else {
            return;
        };
        if let Some(scope_id) = self
            .internal_edge_target(shared, "scope_id")
            .and_then(|n| self.value_as_int(n))
        {
            closures.push(LiveClosure {
                owner,
                context,
                script,
                scope_id,
            });
        }
    }

    fn is_generator_object(&self, maps: &mut HashMap<usize, bool>, ni: usize) -> bool {
        if self.raw_type(ni) != self.nt.object {
            return false;
        }
        let Some(map) = self.internal_edge_target(ni, "map") else {
            return false;
        };
        *maps.entry(map).or_insert_with(|| {
            self.internal_edge_target(map, "instance_type_name")
                .is_some_and(|n| {
                    matches!(
                        self.raw_name(n),
                        "JS_GENERATOR_OBJECT_TYPE"
                            | "JS_ASYNC_FUNCTION_OBJECT_TYPE"
                            | "JS_ASYNC_GENERATOR_OBJECT_TYPE"
                    )
                })
        })
    }

    fn generator_object(&self, scan: &mut Scan, ni: usize) {
        let continuation = self
            .internal_edge_target(ni, "continuation")
            .and_then(|n| self.value_as_int(n));
        let function = self.internal_edge_target(ni, "function");
        let (Some(continuation), Some(function)) = (continuation, function) else {
            return;
        };
        if self.raw_type(function) != self.nt.closure {
            return;
        }
        let Some(shared) = self.internal_edge_target(function, "shared") else {
            return;
        };
        if continuation == GENERATOR_CLOSED {
            let scope_id = self
                .internal_edge_target(shared, "scope_id")
                .and_then(|n| self.value_as_int(n));
            if scope_id == Some(SCRIPT_ROOT_SCOPE_ID) {
                scan.finished_module_functions.insert(function);
            }
            return;
        }
        if let Some(context) = self.internal_edge_target(ni, "context") {
            self.add_live_closure(&mut scan.live_closures, ni, shared, context);
        }
    }

    /// Per script and scope id, the contexts (and their outer contexts) live closures use.
    fn live_functions(&self, scan: &Scan) -> HashMap<usize, HashMap<i64, HashSet<usize>>> {
        let mut live: HashMap<usize, HashMap<i64, HashSet<usize>>> = HashMap::new();
        for closure in &scan.live_closures {
            if scan.finished_module_functions.contains(&closure.owner) {
                continue;
            }
            let contexts = live
                .entry(closure.script)
                .or_default()
                .entry(closure.scope_id)
                .or_default();
            let mut context = Some(closure.context);
            while let Some(current) = context {
                if contexts.contains(&current) || !self.is_context_object(current) {
                    break;
                }
                contexts.insert(current);
                context = self.internal_edge_target(current, "previous");
            }
        }
        live
    }

    fn resolve_scope_info_script(
        &self,
        map: &mut HashMap<usize, Option<usize>>,
        start: usize,
    ) -> Option<usize> {
        if let Some(&script) = map.get(&start) {
            return script;
        }
        let mut visited = Vec::new();
        let mut seen = HashSet::new();
        let mut current = start;
        let mut script = None;
        while !seen.contains(&current) {
            if let Some(&found) = map.get(&current) {
                script = found;
                break;
            }
            seen.insert(current);
            visited.push(current);
            if self.is_script_root_scope_info(current) {
                break;
            }
            match self.internal_edge_target(current, "outer_scope_info") {
                Some(outer) => current = outer,
                None => break,
            }
        }
        for node in visited {
            map.insert(node, script);
        }
        script
    }

    fn correlate(
        &self,
        scan: &Scan,
        scopes: &[Scope],
        by_script: &HashMap<i64, HashMap<i64, usize>>,
        live: &HashMap<usize, HashMap<i64, HashSet<usize>>>,
    ) -> ContextAnalysis {
        let mut scope_infos = scan.scope_info_scripts.clone();
        let mut found: indexmap::IndexMap<usize, FoundScope> = indexmap::IndexMap::new();
        let mut without: indexmap::IndexMap<usize, ScriptWithoutScopes> = indexmap::IndexMap::new();
        let context_fields = |context: usize| -> (Vec<String>, Vec<usize>) {
            self.edge_indexes(context)
                .filter(|&ei| self.edge_type(ei) == self.et.context)
                .map(|ei| (self.edge_name(ei), self.edge_to(ei)))
                .unzip()
        };
        for &(context, context_id, scope_info) in &scan.contexts {
            if let Some(existing) = found.get_mut(&scope_info) {
                existing
                    .contexts
                    .push((context, context_id, context_fields(context).1));
                continue;
            }
            let Some(scope_id) = self
                .internal_edge_target(scope_info, "scope_id")
                .and_then(|n| self.value_as_int(n))
            else {
                continue;
            };
            let int_of = |name: &str| {
                self.internal_edge_target(scope_info, name)
                    .and_then(|n| self.value_as_int(n))
                    .unwrap_or(0)
            };
            let scope_name = self
                .internal_edge_target(scope_info, "function_name")
                .map(|n| self.node_name(n));
            let Some(script) = self.resolve_scope_info_script(&mut scope_infos, scope_info) else {
                continue;
            };
            let Some((script_name, script_id)) = scan.scripts.get(&script) else {
                continue;
            };
            if let Some(existing) = without.get_mut(&script) {
                existing.context_count += 1;
                continue;
            }
            let Some(embedded) = by_script.get(&(script as i64)) else {
                without.insert(
                    script,
                    ScriptWithoutScopes {
                        script_node_index: script,
                        script_node_id: *script_id,
                        script_name: script_name.clone(),
                        context_count: 1,
                    },
                );
                continue;
            };
            let Some(&scope) = embedded.get(&scope_id) else {
                continue;
            };
            let (names, values) = context_fields(context);
            found.insert(
                scope_info,
                FoundScope {
                    scope_info_id: self.node_id(scope_info),
                    script,
                    script_id: *script_id,
                    script_name: script_name.clone(),
                    scope_name,
                    start: int_of("start_position"),
                    end: int_of("end_position"),
                    scope,
                    field_names: names,
                    contexts: vec![(context, context_id, values)],
                },
            );
        }
        let mut reports = Vec::new();
        for found_scope in found.values() {
            let scope = &scopes[found_scope.scope];
            let mut contexts = Vec::new();
            for (context, _, values) in &found_scope.contexts {
                let mut dead = Vec::new();
                let mut sum = 0;
                for (field, &value) in values.iter().enumerate() {
                    let Some(name) = found_scope.field_names.get(field) else {
                        continue;
                    };
                    let Some(slot) = scope.variables.iter().position(|v| v == name) else {
                        continue;
                    };
                    if self.variable_used(
                        live,
                        scopes,
                        found_scope.script,
                        *context,
                        &scope.uses[slot],
                    ) {
                        continue;
                    }
                    let retained = self.retained_size(value);
                    dead.push(DeadField {
                        name: name.clone(),
                        value_node_id: self.node_id(value),
                        value_name: self.node_name(value),
                        retained_size: retained,
                    });
                    sum += retained;
                }
                if dead.is_empty() {
                    continue;
                }
                dead.sort_by_key(|field| std::cmp::Reverse(field.retained_size));
                contexts.push(ContextReport {
                    context_node_index: *context,
                    context_node_id: self.node_id(*context),
                    retained_size: self.retained_size(*context),
                    dead_fields_retained_size_sum: sum,
                    dead_fields: dead,
                });
            }
            if contexts.is_empty() {
                continue;
            }
            contexts.sort_by(compare_contexts);
            reports.push(ScopeReport {
                scope_info_node_id: found_scope.scope_info_id,
                script_node_id: found_scope.script_id,
                script_name: found_scope.script_name.clone(),
                scope_name: found_scope.scope_name.clone(),
                scope_start: found_scope.start,
                scope_end: found_scope.end,
                context_field_count: found_scope.field_names.len(),
                contexts,
            });
        }
        reports.sort_by(|a, b| compare_contexts(&a.contexts[0], &b.contexts[0]));
        let mut scripts_without_scopes: Vec<ScriptWithoutScopes> = without.into_values().collect();
        scripts_without_scopes.sort_by_key(|script| script.script_node_index);
        ContextAnalysis {
            scopes: reports,
            scripts_without_scopes,
        }
    }

    fn variable_used(
        &self,
        live: &HashMap<usize, HashMap<i64, HashSet<usize>>>,
        scopes: &[Scope],
        script: usize,
        context: usize,
        uses: &[usize],
    ) -> bool {
        let Some(by_scope) = live.get(&script) else {
            return false;
        };
        for &user in uses {
            let mut current = Some(user);
            while let Some(scope) = current {
                if by_scope
                    .get(&scopes[scope].scope_id)
                    .is_some_and(|contexts| contexts.contains(&context))
                {
                    return true;
                }
                current = scopes[scope].parent;
            }
        }
        false
    }
}

fn compare_contexts(a: &ContextReport, b: &ContextReport) -> std::cmp::Ordering {
    b.dead_fields_retained_size_sum
        .cmp(&a.dead_fields_retained_size_sum)
        .then(b.retained_size.cmp(&a.retained_size))
        .then(a.context_node_index.cmp(&b.context_node_index))
}

struct LiveClosure {
    owner: usize,
    context: usize,
    script: usize,
    scope_id: i64,
}

#[derive(Default)]
struct Scan {
    /// Script node index -> (name, node id).
    scripts: HashMap<usize, (String, u32)>,
    /// (context node index, context node id, scope info node index)
    contexts: Vec<(usize, u32, usize)>,
    live_closures: Vec<LiveClosure>,
    finished_module_functions: HashSet<usize>,
    scope_info_scripts: HashMap<usize, Option<usize>>,
}

struct FoundScope {
    scope_info_id: u32,
    script: usize,
    script_id: u32,
    script_name: String,
    scope_name: Option<String>,
    start: i64,
    end: i64,
    scope: usize,
    field_names: Vec<String>,
    contexts: Vec<(usize, u32, Vec<usize>)>,
}
