//! gmsh `.msh` ASCII, versions 2.2 and 4.1: 4-node tetrahedra (type 4) and
//! 3-node triangles (type 2); second-order ones (types 11 and 9) by their
//! corner vertices; other element types are skipped and counted. Node tags may
//! be sparse; they are renumbered densely in file order.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use super::{Elements, Skipped};
use crate::MeshError;

/// Parses a gmsh ASCII file (2.2 or 4.1).
pub fn parse(text: &str, path: &Path) -> Result<Elements, MeshError> {
    let mut lines = Lines { it: text.lines().enumerate(), path, line: 0 };
    let mut version = None;
    let mut out = Elements::default();
    let mut tags: HashMap<u64, usize> = HashMap::new();
    let mut skipped = Skipped::default();
    while let Some(header) = lines.next_line() {
        match header.trim() {
            "$MeshFormat" => {
                let l = lines.expect_line()?;
                let mut f = l.split_whitespace();
                let v = f.next().unwrap_or("");
                let file_type = f.next().unwrap_or("");
                if file_type != "0" {
                    return Err(lines.err("binary .msh files are not supported (file-type must be 0)"));
                }
                version = Some(match v {
                    "2.2" | "2.1" | "2" | "2.0" => 2,
                    "4.1" => 4,
                    _ => return Err(lines.err(format!("unsupported .msh version {v:?} (2.2 or 4.1)"))),
                });
                lines.expect_end("$EndMeshFormat")?;
            }
            "$Nodes" => match version {
                Some(2) => nodes_v2(&mut lines, &mut out, &mut tags)?,
                Some(_) => nodes_v4(&mut lines, &mut out, &mut tags)?,
                None => return Err(lines.err("$Nodes before $MeshFormat")),
            },
            "$Elements" => match version {
                Some(2) => elements_v2(&mut lines, &mut out, &tags, &mut skipped)?,
                Some(_) => elements_v4(&mut lines, &mut out, &tags, &mut skipped)?,
                None => return Err(lines.err("$Elements before $MeshFormat")),
            },
            s if s.starts_with("$End") || s.is_empty() => {}
            "$NOD" | "$ELM" => {
                return Err(lines.err(
                    "gmsh 1.0 format ($NOD/$ELM) is not supported: save the mesh from gmsh as version 2.2 or 4.1 ASCII",
                ))
            }
            s if s.starts_with('$') => {
                let end = format!("$End{}", &s[1..]);
                while lines.expect_line()?.trim() != end {}
            }
            _ => return Err(lines.err(format!("unexpected line {:?}", header.trim()))),
        }
    }
    if version.is_none() {
        return Err(lines.err("no $MeshFormat section: not a gmsh file"));
    }
    out.note(skipped);
    Ok(out)
}

struct Lines<'a> {
    it: std::iter::Enumerate<std::str::Lines<'a>>,
    path: &'a Path,
    line: usize,
}

impl<'a> Lines<'a> {
    fn next_line(&mut self) -> Option<&'a str> {
        self.it.next().map(|(i, l)| {
            self.line = i + 1;
            l
        })
    }

    fn expect_line(&mut self) -> Result<&'a str, MeshError> {
        self.next_line().ok_or_else(|| self.err("unexpected end of file"))
    }

    fn expect_end(&mut self, end: &str) -> Result<(), MeshError> {
        let l = self.expect_line()?;
        if l.trim() == end {
            Ok(())
        } else {
            Err(self.err(format!("expected {end}, found {:?}", l.trim())))
        }
    }

    fn numbers<T: std::str::FromStr>(&mut self, count: Option<usize>) -> Result<Vec<T>, MeshError> {
        let l = self.expect_line()?;
        let v: Result<Vec<T>, _> = l.split_whitespace().map(str::parse).collect();
        let v = v.map_err(|_| self.err(format!("malformed numbers in {:?}", l.trim())))?;
        match count {
            Some(n) if v.len() < n => Err(self.err(format!("expected {n} numbers, found {}", v.len()))),
            _ => Ok(v),
        }
    }

    /// Entry `read` of the block whose header at line `block.0` announced
    /// `block.1` entries of kind `block.2`: a section's end met early is
    /// blamed on that header, the count it announced.
    fn entry<T: std::str::FromStr>(
        &mut self,
        count: usize,
        block: (usize, usize, &str),
        read: usize,
    ) -> Result<Vec<T>, MeshError> {
        let (line, announced, what) = block;
        if self.it.clone().next().is_some_and(|(_, l)| l.trim_start().starts_with('$')) {
            return Err(MeshError::parse(
                self.path,
                line,
                format!(
                    "the block announces {announced} {what}, its section ends at line {} after {read}",
                    self.line + 1
                ),
            ));
        }
        self.numbers(Some(count))
    }

    fn err(&self, message: impl Into<String>) -> MeshError {
        MeshError::parse(self.path, self.line, message)
    }

    fn err_at(&self, line: usize, message: impl Into<String>) -> MeshError {
        MeshError::parse(self.path, line, message)
    }
}

type L<'a> = Lines<'a>;

fn add_node(
    lines: &L,
    out: &mut Elements,
    tags: &mut HashMap<u64, usize>,
    tag: u64,
    xyz: [f64; 3],
) -> Result<(), MeshError> {
    if xyz.iter().any(|x| !x.is_finite()) {
        return Err(lines.err(format!("node {tag} has a non-finite coordinate {xyz:?}")));
    }
    if tags.insert(tag, out.vertices.len()).is_some() {
        return Err(lines.err(format!("node tag {tag} defined twice")));
    }
    out.vertices.push(xyz);
    Ok(())
}

fn count_line(lines: &mut L) -> Result<usize, MeshError> {
    let n = lines.numbers::<usize>(Some(1))?[0];
    if n > 100_000_000 {
        return Err(lines.err(format!("implausible count {n}")));
    }
    Ok(n)
}

fn nodes_v2(lines: &mut L, out: &mut Elements, tags: &mut HashMap<u64, usize>) -> Result<(), MeshError> {
    let n = count_line(lines)?;
    let block = (lines.line, n, "nodes");
    for k in 0..n {
        let v = lines.entry::<f64>(4, block, k)?;
        add_node(lines, out, tags, v[0] as u64, [v[1], v[2], v[3]])?;
    }
    lines.expect_end("$EndNodes")
}

fn nodes_v4(lines: &mut L, out: &mut Elements, tags: &mut HashMap<u64, usize>) -> Result<(), MeshError> {
    let h = lines.numbers::<usize>(Some(4))?;
    let header = lines.line;
    for _ in 0..h[0] {
        let b = lines.numbers::<usize>(Some(4))?;
        let (parametric, count) = (b[2] != 0, b[3]);
        if parametric {
            return Err(lines.err("parametric node coordinates are not supported"));
        }
        let block = (lines.line, count, "nodes");
        let mut block_tags = Vec::with_capacity(count.min(1 << 20));
        for k in 0..count {
            block_tags.push(lines.entry::<u64>(1, block, k)?[0]);
        }
        for (k, tag) in block_tags.into_iter().enumerate() {
            let v = lines.entry::<f64>(3, (block.0, count, "node coordinates"), k)?;
            add_node(lines, out, tags, tag, [v[0], v[1], v[2]])?;
        }
    }
    if out.vertices.len() != h[1] {
        let held = out.vertices.len();
        return Err(lines
            .err_at(header, format!("the $Nodes header announces {} nodes, its blocks hold {held}", h[1])));
    }
    lines.expect_end("$EndNodes")
}

fn push_element(
    lines: &L,
    out: &mut Elements,
    kind: u64,
    nodes: &[u64],
    tags: &HashMap<u64, usize>,
    skipped: &mut Skipped,
) -> Result<(), MeshError> {
    let idx = |k: usize| -> Result<usize, MeshError> {
        let t = *nodes.get(k).ok_or_else(|| lines.err("element has too few nodes"))?;
        tags.get(&t).copied().ok_or_else(|| lines.err(format!("element refers to unknown node {t}")))
    };
    match kind {
        4 | 11 => out.tets.push([idx(0)?, idx(1)?, idx(2)?, idx(3)?]),
        2 | 9 => out.triangles.push([idx(0)?, idx(1)?, idx(2)?]),
        _ => skipped.add(format!("gmsh type {kind}")),
    }
    out.second_order += usize::from(kind == 11 || kind == 9);
    Ok(())
}

fn elements_v2(
    lines: &mut L,
    out: &mut Elements,
    tags: &HashMap<u64, usize>,
    skipped: &mut Skipped,
) -> Result<(), MeshError> {
    let n = count_line(lines)?;
    let block = (lines.line, n, "elements");
    for k in 0..n {
        let v = lines.entry::<u64>(3, block, k)?;
        let skip = 3 + v[2] as usize;
        if v.len() < skip {
            return Err(lines.err("element line shorter than its tag count"));
        }
        push_element(lines, out, v[1], &v[skip..], tags, skipped)?;
    }
    lines.expect_end("$EndElements")
}

fn elements_v4(
    lines: &mut L,
    out: &mut Elements,
    tags: &HashMap<u64, usize>,
    skipped: &mut Skipped,
) -> Result<(), MeshError> {
    let h = lines.numbers::<usize>(Some(4))?;
    let header = lines.line;
    let mut total = 0;
    for _ in 0..h[0] {
        let b = lines.numbers::<u64>(Some(4))?;
        let block = (lines.line, b[3] as usize, "elements");
        for k in 0..block.1 {
            let v = lines.entry::<u64>(2, block, k)?;
            push_element(lines, out, b[2], &v[1..], tags, skipped)?;
            total += 1;
        }
    }
    if total != h[1] {
        let announced = h[1];
        return Err(lines.err_at(
            header,
            format!("the $Elements header announces {announced} elements, its blocks hold {total}"),
        ));
    }
    lines.expect_end("$EndElements")
}

/// Writes tets and triangles as gmsh 2.2 ASCII.
pub fn write_v2(e: &Elements) -> String {
    let mut s = String::from("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n");
    let _ = writeln!(s, "{}", e.vertices.len());
    for (i, p) in e.vertices.iter().enumerate() {
        let _ = writeln!(s, "{} {:e} {:e} {:e}", i + 1, p[0], p[1], p[2]);
    }
    let _ = writeln!(s, "$EndNodes\n$Elements\n{}", e.tets.len() + e.triangles.len());
    let mut id = 0;
    for (kind, el) in e.element_lists() {
        for nodes in el {
            id += 1;
            let _ = write!(s, "{id} {kind} 2 1 1");
            nodes.iter().for_each(|n| {
                let _ = write!(s, " {}", n + 1);
            });
            s.push('\n');
        }
    }
    s.push_str("$EndElements\n");
    s
}

/// Writes tets and triangles as gmsh 4.1 ASCII (one entity per element kind).
pub fn write_v4(e: &Elements) -> String {
    let n = e.vertices.len();
    let mut s = String::from("$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n");
    let _ = writeln!(s, "1 {n} 1 {n}\n3 1 0 {n}");
    (1..=n).for_each(|i| {
        let _ = writeln!(s, "{i}");
    });
    for p in &e.vertices {
        let _ = writeln!(s, "{:e} {:e} {:e}", p[0], p[1], p[2]);
    }
    let lists: Vec<_> = e.element_lists().into_iter().filter(|(_, l)| !l.is_empty()).collect();
    let total: usize = lists.iter().map(|(_, l)| l.len()).sum();
    let _ = writeln!(s, "$EndNodes\n$Elements\n{} {total} 1 {total}", lists.len());
    let mut id = 0;
    for (kind, list) in lists {
        let dim = if kind == 4 { 3 } else { 2 };
        let _ = writeln!(s, "{dim} 1 {kind} {}", list.len());
        for nodes in list {
            id += 1;
            let _ = write!(s, "{id}");
            nodes.iter().for_each(|n| {
                let _ = write!(s, " {}", n + 1);
            });
            s.push('\n');
        }
    }
    s.push_str("$EndElements\n");
    s
}
