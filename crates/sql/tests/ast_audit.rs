//! The AST audit (`src/audit.rs`, with the bindings it names) covers every field of the
//! sqlparser structs the binder takes: this test reads the structs' definitions from the
//! sources of the sqlparser version the workspace builds with and checks that each field
//! is named in a destructuring without `..` in `crates/sql/src`. A field a sqlparser
//! upgrade adds fails here (and fails to compile there), so it cannot be ignored unseen.

use std::path::{Path, PathBuf};

/// The structs (and `Enum::Variant`s with fields) whose every field the binder audits.
const AUDITED: &[&str] = &[
    "Query",
    "With",
    "Cte",
    "OrderBy",
    "OrderByExpr",
    "OrderByOptions",
    "Select",
    "TableWithJoins",
    "Join",
    "TableFactor::Table",
    "TableFactor::Derived",
    "TableFunctionArgs",
    "TableAlias",
    "TableAliasColumnDef",
    "WildcardAdditionalOptions",
    "Function",
    "FunctionArgumentList",
    "Insert",
    "OnConflict",
    "CreateTable",
    "ColumnDef",
    "ColumnOptionDef",
    "CreateView",
    "ViewColumnDef",
];

/// sqlparser's source folder: the version Cargo.lock pins, unpacked in Cargo's registry.
fn sqlparser_src() -> PathBuf {
    let lock = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.lock")).unwrap();
    let version = lock
        .split("[[package]]")
        .find(|p| p.contains("name = \"sqlparser\"\n"))
        .and_then(|p| p.lines().find_map(|l| l.strip_prefix("version = \"")))
        .map(|v| v.trim_end_matches('"').to_string())
        .expect("sqlparser in Cargo.lock");
    let home = std::env::var("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(std::env::var("HOME").expect("HOME or CARGO_HOME")).join(".cargo"));
    let registry = home.join("registry/src");
    std::fs::read_dir(&registry)
        .unwrap_or_else(|e| panic!("{}: {e}", registry.display()))
        .map(|e| e.unwrap().path().join(format!("sqlparser-{version}/src")))
        .find(|p| p.is_dir())
        .unwrap_or_else(|| panic!("sqlparser {version} not unpacked under {}", registry.display()))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The text between the `{` that follows `start` in `text` and its matching `}`.
fn braced(text: &str, start: usize) -> Option<&str> {
    let open = start + text[start..].find('{')?;
    let mut depth = 0;
    for (i, c) in text[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&text[open + 1..open + i]);
                }
            }
            _ => {}
        }
    }
    None
}

/// The fields sqlparser declares for `name` (`Struct` or `Enum::Variant`).
fn declared_fields(sources: &[String], name: &str) -> Vec<String> {
    let (outer, variant) = match name.split_once("::") {
        Some((e, v)) => (format!("pub enum {e} {{"), Some(v)),
        None => (format!("pub struct {name} {{"), None),
    };
    for text in sources {
        let Some(at) = text.find(&outer) else { continue };
        let mut body = braced(text, at).expect("a braced definition");
        if let Some(v) = variant {
            let line = format!("\n    {v} {{");
            let start = body.find(&line).unwrap_or_else(|| panic!("variant {name} in sqlparser's sources"));
            body = braced(body, start).expect("a braced variant");
        }
        // Fields: `pub name: Type` (structs) or `name: Type` (variants), one indentation in.
        let indent = if variant.is_some() { "        " } else { "    " };
        return body
            .lines()
            .filter_map(|l| l.strip_prefix(indent))
            .filter(|l| !l.starts_with(' ') && !l.starts_with("//") && !l.starts_with('#'))
            .filter_map(|l| l.strip_prefix("pub ").or(Some(l)))
            .filter_map(|l| l.split_once(':').map(|(f, _)| f.trim().to_string()))
            .filter(|f| !f.is_empty() && f.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
            .collect();
    }
    panic!("{name} is not in sqlparser's sources")
}

/// The field names of every exhaustive destructuring `ast::<name> { … } =` (or a match
/// arm `ast::<name> { … } =>`) in the binder's sources.
fn audited_fields(binder: &[String], name: &str) -> Vec<Vec<String>> {
    let pattern = format!("ast::{name} {{");
    let mut found = vec![];
    for text in binder {
        let mut from = 0;
        while let Some(i) = text[from..].find(&pattern) {
            let at = from + i;
            from = at + pattern.len();
            let Some(body) = braced(text, at) else { continue };
            let after = text[at + pattern.len() - 1 + body.len() + 2..].trim_start();
            if !after.starts_with('=') || body.contains("..") {
                continue;
            }
            // Comments between the fields are not fields.
            let body: String =
                body.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n");
            found.push(
                body.split(',')
                    .map(|f| f.split(':').next().unwrap_or("").trim().to_string())
                    .filter(|f| !f.is_empty())
                    .collect(),
            );
        }
    }
    found
}

#[test]
fn the_binder_names_every_field_of_the_structs_it_takes() {
    let mut files = vec![];
    rust_files(&sqlparser_src(), &mut files);
    let sources: Vec<String> = files.iter().map(|f| std::fs::read_to_string(f).unwrap()).collect();
    let mut ours = vec![];
    rust_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut ours);
    let binder: Vec<String> = ours.iter().map(|f| std::fs::read_to_string(f).unwrap()).collect();
    let mut missing = vec![];
    for name in AUDITED {
        let declared = declared_fields(&sources, name);
        assert!(!declared.is_empty(), "no fields found for {name}");
        let candidates = audited_fields(&binder, name);
        if candidates.is_empty() {
            missing.push(format!("{name}: no destructuring without `..` in crates/sql/src"));
            continue;
        }
        for d in &declared {
            if !candidates.iter().any(|c| c.contains(d)) {
                missing.push(format!("{name}.{d}: declared by sqlparser, neither bound nor refused"));
            }
        }
    }
    assert!(missing.is_empty(), "fields of sqlparser's AST the binder does not audit:\n{}", missing.join("\n"));
}
