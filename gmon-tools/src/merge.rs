//! Merging profile files: the file side of `gmon merge` (reading many inputs in parallel with a
//! bounded number in flight, naming the file of every error, checking that inputs belong to one
//! executable) over the in-memory sum of [`gmon_format::Merger`].
//!
//! Files are read and parsed in batches over rayon's threads while the previous batch is being
//! added, in input order, to one running sum; so memory stays at two batches of profiles plus the
//! sum, whatever the number of inputs, and the result is the same as a sequential merge.

use std::fs;
use std::io::{self, BufRead, IsTerminal};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use gmon_format::{
    Arc, ExecutableId, GnuView, HistogramView, MergeOptions, Merged, Merger, Profile, ReadOptions,
    Variant,
};
use rayon::prelude::*;

use crate::stacks::{Executable, sidecar_build_id};

/// How to merge files.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct MergeFilesOptions {
    /// The in-memory merge options (rebin, expected executable identity).
    pub merge: MergeOptions,
    /// How to read each input (variant, byte order, pointer width; default: detect).
    pub read: ReadOptions,
    /// The executable the inputs must belong to (`--exe`).
    pub executable: Option<Executable>,
    /// Show a progress bar on stderr when it is a terminal.
    pub progress: bool,
    /// Profiles read ahead per batch (0: four per thread).
    pub batch: usize,
}

/// Sums the profile files `paths` in order. An unreadable, malformed or incompatible input is an
/// error naming that file (and the byte offset, for malformed ones); nothing is written here.
pub fn merge_files(paths: &[PathBuf], opts: &MergeFilesOptions) -> anyhow::Result<Merged> {
    let mut merge_opts = opts.merge.clone();
    if merge_opts.executable.is_none()
        && let Some(exe) = &opts.executable
    {
        merge_opts.executable = exe.build_id.clone();
    }
    let mut read = opts.read;
    if let Some(exe) = &opts.executable {
        // As gprof does: the executable decides byte order and pointer width.
        read = read
            .with_endian(exe.encoding.endian)
            .with_ptr_width(exe.encoding.ptr_width);
    }
    let batch = if opts.batch == 0 {
        4 * rayon::current_num_threads().max(1)
    } else {
        opts.batch
    };
    let progress = progress_bar(opts.progress, paths.len());
    let mut merger = Merger::new(merge_opts);
    // The fast path (bins summed straight from the file's bytes) needs the encoding: from the
    // executable, else from the first input, which is read in full.
    let fast_allowed = matches!(read.variant, None | Some(Variant::Gnu));
    let mut fast = opts
        .executable
        .as_ref()
        .map(|e| e.encoding)
        .filter(|_| fast_allowed);
    let mut rest = paths;
    if fast.is_none()
        && let Some((first, tail)) = paths.split_first()
    {
        let l = load(first, &read, opts.executable.as_ref(), None)?;
        add_loaded(&mut merger, l, &read)?;
        progress.inc(1);
        fast = merger.encoding().filter(|_| fast_allowed);
        rest = tail;
    }
    let exe = opts.executable.as_ref();
    let load = |chunk: &[PathBuf]| -> Vec<anyhow::Result<Loaded>> {
        chunk
            .par_iter()
            .map(|p| load(p, &read, exe, fast))
            .collect()
    };
    let mut chunks = rest.chunks(batch);
    let mut pending = chunks.next().map(load);
    while let Some(current) = pending.take() {
        let next = chunks.next();
        let (loaded_next, added) = rayon::join(
            || next.map(load),
            || -> anyhow::Result<()> {
                for item in current {
                    add_loaded(&mut merger, item?, &read)?;
                    progress.inc(1);
                }
                Ok(())
            },
        );
        added?;
        pending = loaded_next;
    }
    progress.finish_and_clear();
    Ok(merger.finish()?)
}

/// An input as loaded: parsed in full, or kept as bytes for the fast path.
enum Parsed {
    Full(Profile),
    /// A GNU file that [`GnuView::parse`] accepted: its bytes, and the view's parts with the
    /// bins as offsets into the bytes (so the walk is done once, on the reading threads).
    Raw(Vec<u8>, RawParts),
}

/// A [`GnuView`] without its borrow of the file's bytes.
struct RawParts {
    encoding: gmon_format::Encoding,
    histograms: Vec<(HistogramView<'static>, usize)>,
    arcs: Vec<Arc>,
}

impl RawParts {
    fn of(view: GnuView<'_>) -> RawParts {
        let histograms = view
            .histograms
            .into_iter()
            .map(|h| (HistogramView { bins: &[], ..h }, h.bins.len()))
            .collect();
        RawParts {
            encoding: view.encoding,
            histograms,
            arcs: view.arcs,
        }
    }

    /// The view again, over `bytes` (`None` if they do not hold the recorded ranges).
    fn view(self, bytes: &[u8]) -> Option<GnuView<'_>> {
        let mut histograms = Vec::with_capacity(self.histograms.len());
        for (h, len) in self.histograms {
            let bins = bytes.get(h.offset..h.offset.checked_add(len)?)?;
            histograms.push(HistogramView { bins, ..h });
        }
        Some(GnuView {
            encoding: self.encoding,
            histograms,
            arcs: self.arcs,
        })
    }
}

/// One loaded input.
struct Loaded {
    path: PathBuf,
    parsed: Parsed,
    id: Option<ExecutableId>,
}

fn add_loaded(merger: &mut Merger, l: Loaded, read: &ReadOptions) -> anyhow::Result<()> {
    let name = || format!("{}", l.path.display());
    let profile = match l.parsed {
        Parsed::Full(p) => p,
        Parsed::Raw(bytes, parts) => {
            if let Some(view) = parts.view(&bytes)
                && merger.add_view(&view, l.id.as_ref()).with_context(name)?
            {
                return Ok(());
            }
            // Not the simple case: read it in full, which handles or reports everything.
            crate::input::parse_profile(&l.path, &bytes, read)?
        }
    };
    merger
        .add_identified(&profile, l.id.as_ref())
        .with_context(name)?;
    Ok(())
}

fn load(
    path: &Path,
    read: &ReadOptions,
    exe: Option<&Executable>,
    fast: Option<gmon_format::Encoding>,
) -> anyhow::Result<Loaded> {
    let bytes = crate::input::read_input(path)?;
    let id = sidecar_build_id(path)?;
    let not_this_exe = |e: String| anyhow::anyhow!("{}: {e}", path.display());
    if let Some(encoding) = fast
        && let Some(view) = GnuView::parse(&bytes, encoding)
    {
        if let Some(exe) = exe {
            exe.check_parts(
                view.histograms.iter().map(|h| (h.low_pc, h.high_pc)),
                view.arcs.iter(),
            )
            .map_err(not_this_exe)?;
        }
        let parts = RawParts::of(view);
        return Ok(Loaded {
            path: path.to_path_buf(),
            parsed: Parsed::Raw(bytes, parts),
            id,
        });
    }
    let profile = crate::input::parse_profile(path, &bytes, read)?;
    if let Some(exe) = exe {
        exe.check(&profile).map_err(not_this_exe)?;
    }
    Ok(Loaded {
        path: path.to_path_buf(),
        parsed: Parsed::Full(profile),
        id,
    })
}

fn progress_bar(wanted: bool, len: usize) -> indicatif::ProgressBar {
    if !wanted || !io::stderr().is_terminal() || len < 2 {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(len as u64);
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{prefix} [{bar:40}] {pos}/{len} profiles, {per_sec}, eta {eta}",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_prefix("merging");
    bar
}

/// Expands the input list: `@FILE` arguments and `--from-list FILE` name files with one path per
/// line (blank lines skipped; `-` is standard input), so lists longer than the command line
/// allows can be merged. A literal path starting with `@` can be given as `./@name`.
pub fn expand_inputs(args: &[PathBuf], lists: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for a in args {
        match a.to_str().and_then(|s| s.strip_prefix('@')) {
            Some(list) => read_list(Path::new(list), &mut out)?,
            None => out.push(a.clone()),
        }
    }
    for l in lists {
        read_list(l, &mut out)?;
    }
    if out.is_empty() {
        bail!("no input profiles (give files, @LISTFILE or --from-list LISTFILE)");
    }
    Ok(out)
}

fn read_list(path: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    let reader: Box<dyn BufRead> = if path == Path::new("-") {
        Box::new(io::BufReader::new(io::stdin()))
    } else {
        let f = fs::File::open(path).with_context(|| format!("list file {}", path.display()))?;
        Box::new(io::BufReader::new(f))
    };
    for line in reader.lines() {
        let line = line.with_context(|| format!("list file {}", path.display()))?;
        let line = line.trim_end_matches('\r');
        if !line.trim().is_empty() {
            out.push(PathBuf::from(line));
        }
    }
    Ok(())
}
