//! The lowering modules import each other without a circle: what several conversion classes
//! share lives in modules beneath them (`values`, `lanes`, `half`, `block`), never in another
//! class file. Reads the `use` and path references of `src/lower/*.rs` (the parent `mod.rs`,
//! which dispatches to every class, is not an edge).

use std::collections::{BTreeMap, BTreeSet};

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/lower");
    let files: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .map(|p| {
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    let modules: BTreeSet<String> = files.iter().map(|(n, _)| n.clone()).collect();
    let mut graph = BTreeMap::new();
    for (name, text) in &files {
        let mut deps = BTreeSet::new();
        if name != "mod" {
            // Code only: a doc link is not an import.
            let code: String = text
                .lines()
                .map(|l| l.split("//").next().unwrap())
                .collect::<Vec<_>>()
                .join("\n");
            for prefix in ["super::", "crate::lower::"] {
                for (i, _) in code.match_indices(prefix) {
                    let rest = &code[i + prefix.len()..];
                    let names: Vec<&str> = if let Some(group) = rest.strip_prefix('{') {
                        group[..group.find('}').unwrap_or(0)]
                            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                            .collect()
                    } else {
                        rest.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                            .take(1)
                            .collect()
                    };
                    for n in names {
                        if modules.contains(n) && n != name && n != "mod" {
                            deps.insert(n.to_string());
                        }
                    }
                }
            }
        }
        graph.insert(name.clone(), deps);
    }
    graph
}

/// A circle through `start`, if there is one.
fn circle_through(
    graph: &BTreeMap<String, BTreeSet<String>>,
    start: &str,
    at: &str,
    path: &mut Vec<String>,
) -> Option<Vec<String>> {
    for next in &graph[at] {
        if next == start {
            let mut c = path.clone();
            c.push(start.to_string());
            return Some(c);
        }
        if !path.contains(next) {
            path.push(next.clone());
            if let Some(c) = circle_through(graph, start, next, path) {
                return Some(c);
            }
            path.pop();
        }
    }
    None
}

#[test]
fn the_lowering_modules_import_each_other_without_a_circle() {
    let graph = graph();
    // The reader sees the edges it should: the classes use the shared leaves.
    assert!(graph["float_to_int"].contains("small_float"), "{graph:?}");
    assert!(graph["int_to_float"].contains("values"), "{graph:?}");
    assert!(graph["recipes"].contains("int_to_int"), "{graph:?}");
    for name in graph.keys() {
        let mut path = vec![name.clone()];
        if let Some(circle) = circle_through(&graph, name, name, &mut path) {
            panic!("import circle in src/lower: {}", circle.join(" -> "));
        }
    }
}
