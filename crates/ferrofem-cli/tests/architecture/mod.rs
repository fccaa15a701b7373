//! The workspace's shape, read from its sources: no import circle between
//! the files of a crate (`../shared/DESIGN.md` §6, "a lower module never
//! reaches back up for a type").
//!
//! A file imports another when one of its private `use` declarations, or a
//! path written inline (`crate::a::B`, `super::b`), names an item that the
//! other file defines. Paths are resolved through re-exports: a `pub use`
//! is a facade that forwards a name, not a dependency of the file that
//! writes it, so `crate::constraint::Group` leads to the file that defines
//! `Group`, unless the file also uses the name in its own code. Test modules (`#[cfg(test)] mod tests`) are left out.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// A module path inside a crate, `[]` being the crate root.
type Module = Vec<String>;

/// One parsed source file.
#[derive(Default)]
struct File {
    /// Names of the items the file defines (any visibility).
    items: BTreeSet<String>,
    /// Names bound by its `use` declarations: name → (path, re-exported).
    uses: BTreeMap<String, (Vec<String>, bool)>,
    /// Glob imports (`use a::*`), their paths.
    globs: Vec<Vec<String>>,
    /// Every path it imports by a private `use` or names inline.
    imports: Vec<Vec<String>>,
}

/// The files of one crate by module path.
struct Crate {
    files: BTreeMap<Module, File>,
}

/// Removes comments, string literals and `#[cfg(test)] mod … { … }` blocks.
fn strip(source: &str) -> String {
    let b = source.as_bytes();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    while i < b.len() {
        if source[i..].starts_with("//") {
            i += source[i..].find('\n').unwrap_or(b.len() - i);
        } else if source[i..].starts_with("/*") {
            i += source[i..].find("*/").map_or(b.len() - i, |k| k + 2);
        } else if b[i] == b'"' && !(i > 0 && b[i - 1] == b'\'') {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else {
            let c = source[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    cut_test_modules(&out)
}

fn cut_test_modules(source: &str) -> String {
    let mut out = source.to_string();
    while let Some(at) = out.find("#[cfg(test)]") {
        let rest = &out[at..];
        let Some(open) = rest.find('{') else { break };
        let semi = rest.find(';').unwrap_or(usize::MAX);
        let end = if semi < open {
            at + semi + 1
        } else {
            let mut depth = 0;
            let mut end = out.len();
            for (k, c) in rest.char_indices().skip(open) {
                depth += match c {
                    '{' => 1,
                    '}' => -1,
                    _ => 0,
                };
                if depth == 0 {
                    end = at + k + 1;
                    break;
                }
            }
            end
        };
        out.replace_range(at..end, "");
    }
    out
}

/// `a::{b, c::{d as e}}` → `[(a::b, b), (a::c::d, e)]`.
fn expand_use(tree: &str, prefix: &str, out: &mut Vec<(String, String)>) {
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let head = format!("{prefix}{}", &tree[..open]);
        let body = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let mut depth = 0;
        let mut start = 0;
        for (k, c) in body.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand_use(&body[start..k], &head, out);
                    start = k + 1;
                }
                _ => {}
            }
        }
        expand_use(&body[start..], &head, out);
    } else if !tree.is_empty() {
        let (path, alias) = match tree.split_once(" as ") {
            Some((p, a)) => (format!("{prefix}{}", p.trim()), a.trim().to_string()),
            None => {
                let path = format!("{prefix}{tree}");
                let last = path.rsplit("::").next().unwrap_or("").to_string();
                (path, last)
            }
        };
        out.push((path.trim_end_matches("::self").to_string(), alias));
    }
}

fn words(path: &str) -> Vec<String> {
    path.split("::").map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn parse(source: &str) -> File {
    let text = strip(source);
    let mut file = File::default();
    let tokens: Vec<&str> =
        text.split(|c: char| !is_ident(c) && c != '!').filter(|t| !t.is_empty()).collect();
    for pair in tokens.windows(2) {
        let kinds =
            ["struct", "enum", "fn", "trait", "type", "const", "static", "union", "mod", "macro_rules!"];
        if kinds.contains(&pair[0]) {
            file.items.insert(pair[1].to_string());
        }
    }
    let mut rest = text.as_str();
    let mut uses_text = String::new();
    while let Some(at) = find_word(rest, "use") {
        let before = rest[..at].trim_end();
        let public = before.ends_with("pub") || before.ends_with(')') && before.contains("pub(");
        let Some(end) = rest[at..].find(';') else { break };
        let tree: String = rest[at + 3..at + end].split_whitespace().collect::<Vec<_>>().join(" ");
        let tree = tree.replace(" ::", "::").replace(":: ", "::");
        let mut bound = Vec::new();
        expand_use(&tree, "", &mut bound);
        for (path, alias) in bound {
            let path = words(&path);
            if alias == "*" {
                file.globs.push(path[..path.len() - 1].to_vec());
            } else if alias != "_" {
                if !public {
                    file.imports.push(path.clone());
                }
                file.uses.insert(alias, (path, public));
            }
        }
        uses_text.push_str(&rest[..at]);
        rest = &rest[at + end + 1..];
    }
    uses_text.push_str(rest);
    // A re-exported name the file also uses in its own code is an import.
    let own: BTreeSet<&str> = uses_text.split(|c: char| !is_ident(c)).collect();
    for (alias, (path, public)) in &file.uses {
        if *public && own.contains(alias.as_str()) {
            file.imports.push(path.clone());
        }
    }
    for head in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(k) = uses_text[from..].find(head) {
            let at = from + k;
            from = at + head.len();
            if at > 0
                && (is_ident(uses_text[..at].chars().last().unwrap()) || uses_text[..at].ends_with("::"))
            {
                continue;
            }
            let len =
                uses_text[at..].find(|c: char| !is_ident(c) && c != ':').unwrap_or(uses_text.len() - at);
            file.imports.push(words(&uses_text[at..at + len]));
        }
    }
    file
}

/// The byte offset of `word` standing alone in `text`.
fn find_word(text: &str, word: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(k) = text[from..].find(word) {
        let at = from + k;
        let before = text[..at].chars().last().is_none_or(|c| !is_ident(c));
        let after = text[at + word.len()..].chars().next().is_none_or(|c| c.is_whitespace());
        if before && after {
            return Some(at);
        }
        from = at + word.len();
    }
    None
}

impl Crate {
    fn read(src: &Path) -> Crate {
        let mut files = BTreeMap::new();
        let mut stack = vec![src.to_path_buf()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let rel = path.strip_prefix(src).unwrap().with_extension("");
                    let mut module: Module = rel.iter().map(|s| s.to_string_lossy().into_owned()).collect();
                    if matches!(module.last().map(String::as_str), Some("mod" | "lib" | "main")) {
                        module.pop();
                    }
                    files.insert(module, parse(&std::fs::read_to_string(&path).unwrap()));
                }
            }
        }
        Crate { files }
    }

    /// The file that defines what `path`, written in `module`, names (`None`: another crate).
    fn resolve(&self, module: &Module, path: &[String], depth: usize) -> Option<Module> {
        let (mut at, rest): (Module, &[String]) = match path.first()?.as_str() {
            "crate" => (Vec::new(), &path[1..]),
            "self" => (module.clone(), &path[1..]),
            "super" => (module[..module.len().saturating_sub(1)].to_vec(), &path[1..]),
            first => {
                let child = [module.clone(), vec![first.to_string()]].concat();
                if self.files.contains_key(&child) {
                    (child, &path[1..])
                } else {
                    let (target, _) = self.files.get(module)?.uses.get(first)?;
                    let full = [target.clone(), path[1..].to_vec()].concat();
                    return if depth < 16 { self.resolve(module, &full, depth + 1) } else { None };
                }
            }
        };
        for (k, segment) in rest.iter().enumerate() {
            if segment == "super" {
                at.pop();
                continue;
            }
            let child = [at.clone(), vec![segment.clone()]].concat();
            if self.files.contains_key(&child) {
                at = child;
                continue;
            }
            let file = self.files.get(&at)?;
            if file.items.contains(segment) || depth >= 16 {
                return Some(at);
            }
            if let Some((target, _)) = file.uses.get(segment) {
                let full = [target.clone(), rest[k + 1..].to_vec()].concat();
                return self.resolve(&at, &full, depth + 1);
            }
            for glob in &file.globs {
                let full = [glob.clone(), rest[k..].to_vec()].concat();
                if let Some(found) = self.resolve(&at, &full, depth + 1) {
                    return Some(found);
                }
            }
            return Some(at);
        }
        Some(at)
    }

    /// Each file's imports of other files of the crate.
    fn edges(&self) -> BTreeMap<Module, BTreeSet<Module>> {
        let mut edges = BTreeMap::new();
        for (module, file) in &self.files {
            let targets = file.imports.iter().filter_map(|p| self.resolve(module, p, 0));
            let targets: BTreeSet<Module> = targets.filter(|t| t != module).collect();
            edges.insert(module.clone(), targets);
        }
        edges
    }
}

/// Strongly connected components of more than one file (Tarjan).
fn circles(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    struct Walk<'a> {
        edges: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: HashMap<&'a Module, (usize, usize)>,
        stack: Vec<&'a Module>,
        found: Vec<Vec<Module>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a Module) {
            let n = self.index.len();
            self.index.insert(v, (n, n));
            self.stack.push(v);
            for w in self.edges.get(v).into_iter().flatten() {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.index[w].1.min(self.index[v].1);
                    self.index.get_mut(v).unwrap().1 = low;
                } else if self.stack.contains(&w) {
                    let low = self.index[w].0.min(self.index[v].1);
                    self.index.get_mut(v).unwrap().1 = low;
                }
            }
            if self.index[v].0 == self.index[v].1 {
                let at = self.stack.iter().rposition(|m| *m == v).unwrap();
                let component: Vec<Module> = self.stack.drain(at..).cloned().collect();
                if component.len() > 1 {
                    self.found.push(component);
                }
            }
        }
    }
    let mut walk = Walk { edges, index: HashMap::new(), stack: Vec::new(), found: Vec::new() };
    for v in edges.keys() {
        if !walk.index.contains_key(v) {
            walk.visit(v);
        }
    }
    walk.found
}

fn crates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn name(module: &Module) -> String {
    if module.is_empty() {
        "lib".into()
    } else {
        module.join("/")
    }
}

#[test]
fn no_import_circle_between_the_files_of_a_crate() {
    let mut report = Vec::new();
    let mut crates = 0;
    for entry in std::fs::read_dir(crates_dir()).unwrap() {
        let src = entry.unwrap().path().join("src");
        if !src.is_dir() {
            continue;
        }
        crates += 1;
        let krate = Crate::read(&src);
        let edges = krate.edges();
        for circle in circles(&edges) {
            let mut lines = vec![format!("{}: {} files", src.parent().unwrap().display(), circle.len())];
            for a in &circle {
                let inside: Vec<String> = edges[a].iter().filter(|b| circle.contains(b)).map(name).collect();
                lines.push(format!("  {} -> {}", name(a), inside.join(", ")));
            }
            report.push(lines.join("\n"));
        }
    }
    assert!(crates >= 8, "read {crates} crates");
    assert!(report.is_empty(), "import circles:\n{}", report.join("\n"));
}

#[test]
fn the_circle_finder_sees_a_circle_through_a_facade_and_not_through_one() {
    let mut files = BTreeMap::new();
    files.insert(vec![], parse("mod a; mod b; pub use a::A; pub use b::B;"));
    files.insert(vec!["a".to_string()], parse("use crate::B; pub struct A;"));
    files.insert(
        vec!["b".to_string()],
        parse("pub struct B(crate::A);\n#[cfg(test)]\nmod tests { use crate::b; }"),
    );
    let krate = Crate { files };
    let found = circles(&krate.edges());
    assert_eq!(found.len(), 1, "a -> b -> a through the root's re-exports");
    assert_eq!(found[0].len(), 2);
    // The same files without b's use of A: no circle, and the root's
    // re-exports are no import of their own.
    let mut files = krate.files;
    files.insert(vec!["b".to_string()], parse("pub struct B; // crate::A"));
    let krate = Crate { files };
    assert!(circles(&krate.edges()).is_empty());
    assert!(krate.edges()[&vec![]].is_empty());
    // A re-export the root also uses itself is an import of its own.
    let mut files = krate.files;
    files.insert(vec![], parse("mod a; mod b; pub use a::A; pub use b::B; pub struct C; fn f(_: A) {}"));
    files.insert(vec!["a".to_string()], parse("pub struct A(crate::C);"));
    let krate = Crate { files };
    assert_eq!(circles(&krate.edges()).len(), 1, "lib -> a -> lib");
}
