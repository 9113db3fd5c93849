//! The few lines `gmon record` prints at the end: files written, processes, samples, and the
//! functions with the most self samples over every file (named from each object's `.symtab`,
//! else `.dynsym`; `[object]` when neither names the address).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use gmon_format::Extension;

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

/// Function symbols of one object, sorted by start address.
struct Symbols(Vec<(u64, u64, String)>);

impl Symbols {
    fn load(path: &str) -> Option<Symbols> {
        let bytes = std::fs::read(path).ok()?;
        let elf = goblin::elf::Elf::parse(&bytes).ok()?;
        let mut syms: Vec<(u64, u64, String)> = Vec::new();
        for (table, strtab) in [(&elf.syms, &elf.strtab), (&elf.dynsyms, &elf.dynstrtab)] {
            for s in table.iter() {
                if s.st_type() != goblin::elf::sym::STT_FUNC || s.st_value == 0 {
                    continue;
                }
                if let Some(name) = strtab.get_at(s.st_name).filter(|n| !n.is_empty()) {
                    syms.push((s.st_value, s.st_size.max(1), name.to_string()));
                }
            }
            if !syms.is_empty() {
                break;
            }
        }
        syms.sort_by_key(|s| s.0);
        Some(Symbols(syms))
    }

    fn name(&self, addr: u64) -> Option<&str> {
        let i = self.0.partition_point(|s| s.0 <= addr).checked_sub(1)?;
        let (start, size, name) = self.0.get(i)?;
        (addr < start.saturating_add(*size)).then_some(name.as_str())
    }
}

/// Self samples per function name over `sidecars`, most first.
pub fn top_functions(sidecars: &[&Extension], limit: usize) -> Vec<(String, u64)> {
    let mut cache: HashMap<String, Option<Symbols>> = HashMap::new();
    let mut counts: HashMap<String, u64> = HashMap::new();
    for ext in sidecars {
        for s in &ext.pc_samples {
            let name = match ext.resolve(s.pc) {
                Some((obj, link)) => {
                    let base = Path::new(&obj.path)
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_else(|| obj.path.clone());
                    let syms = cache
                        .entry(obj.path.clone())
                        .or_insert_with(|| Symbols::load(&obj.path));
                    match syms.as_ref().and_then(|t| t.name(link)) {
                        Some(n) => demangle(n),
                        None => format!("[{base}]"),
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

fn demangle(name: &str) -> String {
    match rustc_demangle::try_demangle(name) {
        Ok(d) => format!("{d:#}"),
        Err(_) => name.to_string(),
    }
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
