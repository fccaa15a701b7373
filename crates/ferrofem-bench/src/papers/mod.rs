//! `ferrofem bench papers`: every table of the four papers regenerated at
//! the papers' sizes, each figure beside the paper's with the ratio, the
//! hardware of both sides and the sizes and contact counts of both
//! (zeng2022 Tables 1–3, zeng2025 Tables 1–3, zeng-implicit Table 1,
//! dahl2019 Table 1). A row the paper has and we cannot run yet (a scene
//! we lack) is kept with the paper's figure and a note, so the page shows
//! the gap. `--markdown` writes `docs/papers.md` from the records; `--from`
//! renders it from saved records without running anything.

mod dahl2019;
mod markdown;
mod row;
mod zeng2022;
mod zeng2025;
mod zeng_implicit;

use std::path::PathBuf;

use clap::Args;

pub use row::{PaperRow, Provenance};

use crate::records::write_json;
use crate::BenchError;

/// Arguments of `bench papers`.
#[derive(Debug, Args)]
pub struct PapersArgs {
    /// The smallest row of each table (about 80 s on 2 cores).
    #[arg(long)]
    pub quick: bool,
    /// One paper only: zeng2022, zeng2025, zeng-implicit or dahl2019 (with
    /// `--json` naming an existing file, the other papers' rows in it are kept).
    #[arg(long, value_parser = PAPERS)]
    pub only: Option<String>,
    /// Write the records as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write the page (docs/papers.md) from the records.
    #[arg(long)]
    pub markdown: Option<PathBuf>,
    /// Render `--markdown` from this JSON file of records instead of running.
    #[arg(long, conflicts_with_all = ["quick", "only", "frames"])]
    pub from: Option<PathBuf>,
    /// Folder of external meshes (raptor); rows that need an absent mesh say so.
    #[arg(long, default_value = "../shared/meshes")]
    pub meshes: PathBuf,
    /// Timed frames or steps per row (medians are reported).
    #[arg(long, default_value_t = 10)]
    pub frames: usize,
}

/// The papers, in the page's order.
pub const PAPERS: [&str; 4] = ["zeng2022", "zeng2025", "zeng-implicit", "dahl2019"];

/// Runs the tables (or reads them with `--from`) and writes the records and the page.
pub fn bench_papers(a: PapersArgs) -> Result<(), BenchError> {
    let rows = match &a.from {
        Some(path) => read_rows(path)?,
        None => run(&a)?,
    };
    if let Some(p) = &a.json {
        write_json(p, &rows)?;
    }
    if let Some(p) = &a.markdown {
        let page = markdown::page(&rows);
        std::fs::write(p, page).map_err(|e| BenchError::Io(p.clone(), e))?;
    }
    if a.json.is_none() && a.markdown.is_none() {
        print!("{}", markdown::page(&rows));
    }
    Ok(())
}

/// The rows of the papers `a` asks for, after the kept rows of the others.
fn run(a: &PapersArgs) -> Result<Vec<PaperRow>, BenchError> {
    let mut rows = match (&a.only, &a.json) {
        (Some(only), Some(p)) if p.exists() => {
            read_rows(p)?.into_iter().filter(|r| &r.paper != only).collect()
        }
        _ => Vec::new(),
    };
    type Tables = fn(&PapersArgs) -> Result<Vec<PaperRow>, BenchError>;
    let papers: [Tables; 4] = [zeng2022::rows, zeng2025::rows, zeng_implicit::rows, dahl2019::rows];
    for (name, tables) in PAPERS.into_iter().zip(papers) {
        if a.only.as_deref().is_none_or(|o| o == name) {
            let mut fresh = tables(a)?;
            // Stamped when the paper's rows are done: the load is that sitting's.
            let provenance = Provenance::now(a.quick);
            fresh.iter_mut().for_each(|r| r.provenance = Some(provenance.clone()));
            rows.extend(fresh);
        }
    }
    rows.sort_by_key(|r| PAPERS.iter().position(|p| *p == r.paper));
    Ok(rows)
}

fn read_rows(path: &std::path::Path) -> Result<Vec<PaperRow>, BenchError> {
    let text = std::fs::read_to_string(path).map_err(|e| BenchError::Io(path.to_path_buf(), e))?;
    serde_json::from_str(&text).map_err(|e| {
        BenchError::Other(format!("{}: not records of `bench papers --json`: {e}", path.display()))
    })
}
