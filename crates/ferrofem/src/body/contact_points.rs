//! A body's contact points: the surface vertices that meet obstacles and
//! other bodies' triangles. All of them by default; with a spacing, a
//! subset at least that far apart in the rest shape (a coarser collision
//! model on the same mechanics, as SOFA maps one onto its FE mesh), so that
//! a contact patch holds a number of contacts set by its area and the
//! spacing rather than by the mesh's resolution.

use std::collections::HashMap;

/// A candidate contact point: vertex, rest position and outward normal.
pub type Candidate = (usize, [f64; 3], [f64; 3]);

/// Greedy Poisson-disk sampling of `candidates` (in order): a vertex is
/// kept when no kept vertex facing the same side (normals less than 90°
/// apart) lies closer than `spacing`, so the two faces of a thin body are
/// sampled apart. Every candidate then lies within `spacing` of a kept one
/// facing its side, and those are at least `spacing` apart. Returns a flag
/// per vertex of a body of `vertices`.
pub fn sample(vertices: usize, candidates: &[Candidate], spacing: f64) -> Vec<bool> {
    let mut kept = vec![false; vertices];
    let cell = |p: &[f64; 3]| p.map(|x| (x / spacing).floor() as i64);
    let mut grid: HashMap<[i64; 3], Vec<usize>> = HashMap::new();
    for (k, (v, p, n)) in candidates.iter().enumerate() {
        let [i, j, l] = cell(p);
        let near =
            (-1..=1).flat_map(|a| (-1..=1).flat_map(move |b| (-1..=1).map(move |c| [i + a, j + b, l + c])));
        let conflicts = |u: &usize| {
            let (_, q, m) = &candidates[*u];
            let d: f64 = (0..3).map(|d| (q[d] - p[d]).powi(2)).sum();
            d < spacing * spacing && (0..3).map(|d| m[d] * n[d]).sum::<f64>() > 0.0
        };
        if !near.into_iter().any(|c| grid.get(&c).is_some_and(|us| us.iter().any(conflicts))) {
            kept[*v] = true;
            grid.entry([i, j, l]).or_default().push(k);
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_pack_and_cover_the_candidates() {
        // A 21×21 grid of 1 cm spacing facing +z, sampled at 2.5 cm.
        let up: Vec<Candidate> = (0..441)
            .map(|i| (i, [(i % 21) as f64 * 0.01, (i / 21) as f64 * 0.01, 0.0], [0.0, 0.0, 1.0]))
            .collect();
        let kept = sample(441, &up, 0.025);
        let dist = |a: usize, b: usize| (0..3).map(|d| (up[a].1[d] - up[b].1[d]).powi(2)).sum::<f64>().sqrt();
        let samples: Vec<usize> = (0..441).filter(|&v| kept[v]).collect();
        assert!(samples.len() > 40 && samples.len() < 120, "{}", samples.len());
        for (i, &a) in samples.iter().enumerate() {
            assert!(samples[i + 1..].iter().all(|&b| dist(a, b) >= 0.025));
        }
        assert!((0..441).all(|v| samples.iter().any(|&s| dist(v, s) < 0.025)));
        // The same grid 1 cm below, facing −z (a thin plate's other face), is
        // sampled as if alone; non-candidates are never kept.
        let mut both = up.clone();
        both.extend(up.iter().map(|&(v, [x, y, _], _)| (v + 441, [x, y, -0.01], [0.0, 0.0, -1.0])));
        let kept = sample(1000, &both, 0.025);
        assert_eq!(kept.iter().filter(|k| **k).count(), 2 * samples.len());
        assert!(kept[882..].iter().all(|k| !k));
    }
}
