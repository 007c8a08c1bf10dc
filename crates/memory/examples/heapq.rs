//! Runs one heap tool on a snapshot file and prints the text, for side-by-side checks:
//! `cargo run --release -p devtools-memory --example heapq -- FILE TOOL '{"nodeId":1}' [BASE]`
use devtools_memory::tools::{self, ListOptions};
use devtools_memory::{EdgeSort, LoadedSnapshot, NodeFilter, ObjectQuery, QuerySort};
use serde_json::Value;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let started = std::time::Instant::now();
    let load = |path: &str| -> Result<LoadedSnapshot, Box<dyn std::error::Error>> {
        Ok(LoadedSnapshot::load(std::fs::File::open(path)?)?)
    };
    let loaded = load(&args[1])?;
    eprintln!("loaded in {:?}", started.elapsed());
    let p: Value = serde_json::from_str(args.get(3).map_or("{}", String::as_str))?;
    let u = |k: &str| p.get(k).and_then(Value::as_u64);
    let f = |k: &str| p.get(k).and_then(Value::as_f64);
    let s = |k: &str| p.get(k).and_then(Value::as_str).map(str::to_string);
    let options = ListOptions {
        page_idx: u("pageIdx"),
        page_size: u("pageSize"),
        max_name_length: u("maxNameLength"),
    };
    let filter =
        NodeFilter::from_params(&loaded.snapshot, s("filterName").as_deref(), f("objectId"))?;
    let lines = match args[2].as_str() {
        "summary" => tools::summary(&loaded, u("maxNameLength")),
        "details" => tools::details(&loaded, filter.as_ref(), options),
        "class_nodes" => {
            tools::class_nodes(&loaded, f("id").unwrap_or(0.0), filter.as_ref(), options)
        }
        "retainers" => tools::retainers(&loaded, f("nodeId").unwrap_or(0.0), options),
        "paths" => tools::retaining_paths(
            &loaded,
            f("nodeId").unwrap_or(0.0),
            f("maxDepth"),
            f("maxNodes"),
            f("maxSiblings"),
            u("maxNameLength"),
        ),
        "edges" => {
            let sort = match s("sortBy").as_deref() {
                Some("selfSize") => EdgeSort::SelfSize,
                Some("name") => EdgeSort::Name,
                _ => EdgeSort::RetainedSize,
            };
            tools::edges(
                &loaded,
                f("nodeId").unwrap_or(0.0),
                sort,
                u("minRetained"),
                p.get("excludePrimitives")
                    .and_then(Value::as_bool)
                    .unwrap_or(true),
                options,
            )
        }
        "dominators" => tools::dominators(&loaded, f("nodeId").unwrap_or(0.0), u("maxNameLength")),
        "object" => tools::object_details(&loaded, f("nodeId").unwrap_or(0.0), u("maxNameLength")),
        "strings" => tools::duplicate_strings(&loaded, options),
        "contexts" => tools::contexts(&loaded, None, None, options),
        "query" => {
            let q = ObjectQuery {
                class_name: s("className"),
                property_name: s("propertyName"),
                node_type: s("nodeType"),
                is_detached: p.get("isDetached").and_then(Value::as_bool),
                sort_by: match s("sortBy").as_deref() {
                    Some("id") => Some(QuerySort::Id),
                    Some("selfSize") => Some(QuerySort::SelfSize),
                    _ => None,
                },
                ..Default::default()
            };
            tools::query(&loaded, &q, options)
        }
        "compare" => {
            let base = load(&args[4])?;
            tools::compare(&base, &loaded, f("classIndex"), options)
        }
        other => return Err(format!("unknown tool {other}").into()),
    }?;
    println!("{}", lines.join("\n"));
    eprintln!("total {:?}", started.elapsed());
    Ok(())
}
