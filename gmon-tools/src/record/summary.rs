//! The few lines `gmon record` prints at the end: files written, processes, samples, and the
//! functions with the most self samples over every file (named as the views name them;
//! `[object]` when the object cannot be read).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use gmon_format::Extension;

use crate::stacks::ObjectSymbols;

/// One written profile, as the summary shows it.
#[derive(Debug, Clone)]
pub struct WrittenFile {
    /// The gmon.out path.
    pub path: std::path::PathBuf,
    /// The executable's path as recorded.
    pub executable: String,
    /// Processes summed into it.
    pub processes: usize,
    /// Ticks counted.
    pub samples: u64,
}

/// Self samples per function name over `sidecars`, most first. Names come from the views'
/// symbolizer ([`ObjectSymbols`]: `.symtab`, a separate debug file, `.dynsym`, then the unwind
/// table's `OBJECT+0xSTART`), so the summary names what `gmon flame` and `gmon pprof` draw.
pub fn top_functions(sidecars: &[&Extension], limit: usize) -> Vec<(String, u64)> {
    let mut cache: HashMap<String, Option<ObjectSymbols>> = HashMap::new();
    let mut counts: HashMap<String, u64> = HashMap::new();
    for ext in sidecars {
        for s in &ext.pc_samples {
            let name = match ext.resolve(s.pc) {
                Some((obj, link)) => {
                    let syms = cache
                        .entry(obj.path.clone())
                        .or_insert_with(|| ObjectSymbols::open(Path::new(&obj.path)));
                    match syms {
                        Some(t) => t.name_at(link).0,
                        None => {
                            let base = Path::new(&obj.path)
                                .file_name()
                                .map(|n| n.to_string_lossy().into_owned())
                                .unwrap_or_else(|| obj.path.clone());
                            format!("[{base}]")
                        }
                    }
                }
                None => "[unknown]".to_string(),
            };
            *counts.entry(name).or_default() += s.count;
        }
    }
    let mut v: Vec<(String, u64)> = counts.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v.truncate(limit);
    v
}

/// The summary text (each line starts with `gmon record:` or two spaces).
pub fn render(
    files: &[WrittenFile],
    idle: (usize, usize),
    hz: u32,
    top: &[(String, u64)],
) -> String {
    let processes: usize = files.iter().map(|f| f.processes).sum::<usize>() + idle.1;
    let samples: u64 = files.iter().map(|f| f.samples).sum();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "gmon record: {samples} samples at {hz} Hz from {processes} process{} in {} file{} (+ .gmonx):",
        if processes == 1 { "" } else { "es" },
        files.len(),
        if files.len() == 1 { "" } else { "s" },
    );
    for f in files {
        let exe = Path::new(&f.executable)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "?".into());
        let _ = writeln!(
            s,
            "  {}  {exe}, {} process{}, {} samples",
            f.path.display(),
            f.processes,
            if f.processes == 1 { "" } else { "es" },
            f.samples
        );
    }
    if idle.0 > 0 {
        let _ = writeln!(
            s,
            "  ({} process{} of {} other executable{} had no samples: no file)",
            idle.1,
            if idle.1 == 1 { "" } else { "es" },
            idle.0,
            if idle.0 == 1 { "" } else { "s" },
        );
    }
    if samples > 0 && !top.is_empty() {
        let _ = writeln!(s, "  top functions (self):");
        for (name, n) in top {
            let pct = *n as f64 * 100.0 / samples as f64;
            let _ = writeln!(s, "    {pct:5.1}%  {n:>8}  {name}");
        }
    }
    s
}
