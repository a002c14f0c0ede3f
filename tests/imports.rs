//! The crate's modules import each other without a circle, at two scales:
//!
//! - `src/`: the request model (`types`, `rules`, `conversion`, `chain`, `request`,
//!   `element_conversion`) imports no spelling (`names`, `languages`, `spirv`) and no lowering;
//!   the spellings build requests; the lowering takes them. Every top-level module (a file of
//!   `src/` or a folder) is a node; an edge is a `crate::` path in its code, a name the crate
//!   root re-exports counting as its module's.
//! - `src/lower/`: what several conversion classes share lives in modules beneath them
//!   (`values`, `lanes`, `half`, `block`), never in another class file. The parent `mod.rs`,
//!   which dispatches to every class, is not an edge.
//!
//! Doc comments and comments are not imports: only code is read.

use std::collections::{BTreeMap, BTreeSet};

fn lower_graph() -> BTreeMap<String, BTreeSet<String>> {
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
            let code = code_of(text);
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
    let graph = lower_graph();
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

/// `text` without its comments (a doc link is not an import).
fn code_of(text: &str) -> String {
    text.lines()
        .map(|l| l.split("//").next().unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The `.rs` files under `dir`, recursively.
fn rust_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The identifiers a `crate::` path at `rest` names first: `a` of `crate::a::b`, every name
/// of `crate::{a, b::c}` at the top of the group.
fn first_segments(rest: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let Some(group) = rest.strip_prefix('{') else {
        return vec![ident(rest)];
    };
    let (mut out, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                out.push(ident(group[start..i].trim_start()));
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(ident(group[start..i].trim_start()));
                start = i + 1;
            }
            _ => {}
        }
    }
    out
}

/// The top-level modules of `src/` and the modules each one's code imports.
fn src_graph() -> BTreeMap<String, BTreeSet<String>> {
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src"));
    let mut files = Vec::new();
    rust_files(root, &mut files);
    let module_of = |p: &std::path::Path| -> String {
        let rel = p.strip_prefix(root).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        first.trim_end_matches(".rs").to_string()
    };
    let modules: BTreeSet<String> = files
        .iter()
        .map(|p| module_of(p))
        .filter(|m| m != "lib")
        .collect();
    // The names the crate root re-exports (`pub use request::{Request, ...}`), by module.
    let lib = code_of(&std::fs::read_to_string(root.join("lib.rs")).unwrap());
    let mut reexported: BTreeMap<String, String> = BTreeMap::new();
    for line in lib.lines() {
        if let Some(path) = line.trim().strip_prefix("pub use ") {
            if let Some((module, names)) = path.split_once("::") {
                if modules.contains(module) {
                    for n in first_segments(names) {
                        reexported.insert(n, module.to_string());
                    }
                }
            }
        }
    }
    let mut graph: BTreeMap<String, BTreeSet<String>> = modules
        .iter()
        .map(|m| (m.clone(), BTreeSet::new()))
        .collect();
    for p in &files {
        let from = module_of(p);
        if from == "lib" {
            continue;
        }
        let code = code_of(&std::fs::read_to_string(p).unwrap());
        for (i, _) in code.match_indices("crate::") {
            for n in first_segments(&code[i + "crate::".len()..]) {
                let to = if modules.contains(&n) {
                    Some(n)
                } else {
                    reexported.get(&n).cloned()
                };
                if let Some(to) = to.filter(|t| *t != from) {
                    graph.get_mut(&from).unwrap().insert(to);
                }
            }
        }
    }
    graph
}

#[test]
fn the_modules_of_src_import_each_other_without_a_circle() {
    let graph = src_graph();
    // The reader sees the edges it should: the spellings build requests, the lowering takes
    // them, the chain is made of conversions.
    assert!(graph["names"].contains("request"), "{graph:?}");
    assert!(graph["languages"].contains("chain"), "{graph:?}");
    assert!(graph["lower"].contains("request"), "{graph:?}");
    assert!(graph["chain"].contains("conversion"), "{graph:?}");
    assert!(graph["request"].contains("chain"), "{graph:?}");
    for name in graph.keys() {
        let mut path = vec![name.clone()];
        if let Some(circle) = circle_through(&graph, name, name, &mut path) {
            panic!("import circle in src: {}", circle.join(" -> "));
        }
    }
}

#[test]
fn the_request_model_imports_no_spelling_and_no_lowering() {
    let graph = src_graph();
    let model = [
        "types",
        "rules",
        "conversion",
        "chain",
        "request",
        "element_conversion",
    ];
    let allowed: BTreeSet<&str> = model.into_iter().collect();
    for m in model {
        let outside: Vec<&String> = graph[m]
            .iter()
            .filter(|d| !allowed.contains(d.as_str()))
            .collect();
        assert!(
            outside.is_empty(),
            "the model's module {m} imports {outside:?}: the model imports only the model"
        );
    }
}

/// Features only add code: no item or expression is compiled only when a feature is off. CI
/// relies on it (`.ci/run`): the tests run once, with every feature, and the feature sets
/// without some are compiled (clippy) but not run again. Lint attributes (`cfg_attr(not(...),
/// allow(...))`) change no code and are allowed.
#[test]
fn features_only_add_code() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["src", "tests", "examples", "benches"] {
        rust_files(&root.join(dir), &mut files);
    }
    // Built with concat! so that this file does not match itself.
    let (attribute, inner, expression) = (
        concat!("#[", "cfg("),
        concat!("#![", "cfg("),
        concat!("cfg", "!("),
    );
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in code_of(&text).lines().enumerate() {
            let compact: String = line.chars().filter(|c| !c.is_whitespace()).collect();
            let negated_feature = compact.contains("not(") && compact.contains("feature");
            let conditional = compact.contains(attribute) || compact.contains(inner);
            if (conditional && negated_feature)
                || (compact.contains(expression) && compact.contains("feature"))
            {
                found.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(files.len() > 50, "the walk found the crate's files");
    assert!(
        found.is_empty(),
        "code compiled only without a feature (CI runs the tests with every feature only):\n{}",
        found.join("\n")
    );
}
