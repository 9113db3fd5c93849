//! Merging profile files: the file side of `gmon merge` (reading inputs while the previous one is
//! being added, naming the file of every error, checking that inputs belong to one executable)
//! over the in-memory sum of [`gmon_format::merge::Merger`].
//!
//! Two stages run side by side: a reading thread reads each file into a reused buffer, while
//! the calling thread checks the previous file ([`GnuFile::parse`], the executable's code
//! ranges) and adds it, in input order, to one running sum. (Copying a file out of the page
//! cache takes longer than adding it: the checks run on the adding side, which has time left.)
//! The hand-over is a rendezvous, so at most two files are in memory besides the sum, whatever
//! the number of inputs; the result is that of a sequential merge.

use std::fs;
use std::io::{self, BufRead, IsTerminal};
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use gmon_format::merge::{ExecutableId, MergeOptions, Merged, Merger};
use gmon_format::read::GnuFile;
use gmon_format::sidecar::SidecarSum;
use gmon_format::{Profile, ReadOptions, Sidecar, Variant};

use crate::error::Context;
use crate::model::{Executable, sidecar_beside};
use crate::{Error, Result};

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
}

/// What [`merge_files`] made: the sum of the profiles, and of the runtime's sidecars beside them.
#[derive(Debug)]
#[non_exhaustive]
pub struct MergedFiles {
    /// The sum of the gmon.out files.
    pub merged: Merged,
    /// The sum of the sidecars (`FILE.gmonx`, spec/runtime.md §5.12), when every input has one
    /// that belongs to it; its link to a gmon.out is unset (the caller writes that file).
    pub sidecar: Option<Sidecar>,
    /// When some inputs have a sidecar and others do not, those without one and why; the sum of
    /// sidecars is then not made, since it would hold only part of the samples.
    pub without_sidecar: Vec<(PathBuf, &'static str)>,
}

/// Why an input's sidecar is not summed: there is none.
const NO_SIDECAR: &str = "no sidecar";
/// Why an input's sidecar is not summed: it records another gmon.out (a stale one).
const STALE_SIDECAR: &str = "its sidecar belongs to another gmon.out";

/// The sidecars seen so far: their running sum and the inputs that had none.
#[derive(Default)]
struct Sidecars {
    sum: SidecarSum,
    with: usize,
    without: Vec<(PathBuf, &'static str)>,
}

impl Sidecars {
    fn add(&mut self, path: &Path, sidecar: Result<Sidecar, &'static str>) {
        match sidecar {
            Ok(s) => {
                self.sum.add(&s);
                self.with += 1;
            }
            Err(why) => self.without.push((path.to_path_buf(), why)),
        }
    }

    fn finish(self) -> (Option<Sidecar>, Vec<(PathBuf, &'static str)>) {
        match (self.with, self.without.is_empty()) {
            (0, _) => (None, Vec::new()),
            (_, true) => (Some(self.sum.finish()), Vec::new()),
            (_, false) => (None, self.without),
        }
    }
}

/// Sums the profile files `paths` in order, and their sidecars. An unreadable, malformed or
/// incompatible input is an error naming that file (and the byte offset, for malformed ones);
/// nothing is written here.
pub fn merge_files(paths: &[PathBuf], opts: &MergeFilesOptions) -> Result<MergedFiles> {
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
    let progress = progress_bar(opts.progress, paths.len());
    let mut merger = Merger::new(merge_opts);
    let mut sidecars = Sidecars::default();
    // The fast path (counts summed straight from the file's bytes) needs the encoding: from the
    // executable, else from the first input, which is read in full.
    let fast_allowed = matches!(read.variant, None | Some(Variant::Gnu));
    let mut fast = opts
        .executable
        .as_ref()
        .map(|e| e.encoding)
        .filter(|_| fast_allowed);
    let exe = opts.executable.as_ref();
    let mut rest = paths;
    if fast.is_none()
        && let Some((first, tail)) = paths.split_first()
    {
        let mut l = load(first, Vec::new(), &read, exe, None)?;
        sidecars.add(first, std::mem::replace(&mut l.sidecar, Err(NO_SIDECAR)));
        add_loaded(&mut merger, l, &read)?;
        progress.inc(1);
        fast = merger.encoding().filter(|_| fast_allowed);
        rest = tail;
    }
    std::thread::scope(|scope| -> Result<()> {
        // A rendezvous: the reader holds one loaded file until the adder takes it.
        let (loaded_tx, loaded_rx) = mpsc::sync_channel::<Result<Raw>>(0);
        let (spare_tx, spare_rx) = mpsc::channel::<Vec<u8>>();
        let read = &read;
        scope.spawn(move || {
            for path in rest {
                let buffer = spare_rx.try_recv().unwrap_or_default();
                let item = read_raw(path, buffer);
                let failed = item.is_err();
                // The adder has stopped (an error) when the send fails.
                if loaded_tx.send(item).is_err() || failed {
                    break;
                }
            }
        });
        // Returning early drops the receiver, which stops the reader at its next send.
        for item in loaded_rx {
            let mut loaded = check(item?, read, exe, fast)?;
            let sidecar = std::mem::replace(&mut loaded.sidecar, Err(NO_SIDECAR));
            sidecars.add(&loaded.path, sidecar);
            let buffer = add_loaded(&mut merger, loaded, read)?;
            // The reader may have finished; a buffer nobody takes is simply dropped.
            let _ = spare_tx.send(buffer);
            progress.inc(1);
        }
        Ok(())
    })?;
    progress.finish_and_clear();
    let (sidecar, without_sidecar) = sidecars.finish();
    Ok(MergedFiles {
        merged: merger.finish()?,
        sidecar,
        without_sidecar,
    })
}

/// An input as loaded: checked in place for the fast path, or parsed in full (with its bytes,
/// kept to be reused as a buffer).
enum Parsed {
    Fast(GnuFile),
    Full(Profile, Vec<u8>),
}

/// One loaded input.
struct Loaded {
    path: PathBuf,
    parsed: Parsed,
    id: Option<ExecutableId>,
    /// Its sidecar, when it has one that belongs to it.
    sidecar: Result<Sidecar, &'static str>,
}

/// Adds `l` to the sum and gives back its buffer.
fn add_loaded(merger: &mut Merger, l: Loaded, read: &ReadOptions) -> Result<Vec<u8>> {
    let name = || format!("{}", l.path.display());
    let (profile, bytes) = match l.parsed {
        Parsed::Full(p, bytes) => (p, bytes),
        Parsed::Fast(file) => {
            if merger
                .add_gnu_file(&file, l.id.as_ref())
                .with_context(name)?
            {
                return Ok(file.into_bytes());
            }
            // Not the simple case: read it in full, which handles or reports everything.
            let bytes = file.into_bytes();
            (crate::input::parse_profile(&l.path, &bytes, read)?, bytes)
        }
    };
    merger
        .add_identified(&profile, l.id.as_ref())
        .with_context(name)?;
    Ok(bytes)
}

/// An input read but not yet checked: its bytes and its sidecar.
struct Raw {
    path: PathBuf,
    bytes: Vec<u8>,
    sidecar: Option<Sidecar>,
}

/// Reads `path` into `buffer`, and its sidecar.
fn read_raw(path: &Path, mut buffer: Vec<u8>) -> Result<Raw> {
    crate::input::read_input_into(path, &mut buffer)?;
    Ok(Raw {
        path: path.to_path_buf(),
        sidecar: sidecar_beside(path)?,
        bytes: buffer,
    })
}

/// Reads `path` into `buffer` and checks it (see [`check`]).
fn load(
    path: &Path,
    buffer: Vec<u8>,
    read: &ReadOptions,
    exe: Option<&Executable>,
    fast: Option<gmon_format::Encoding>,
) -> Result<Loaded> {
    check(read_raw(path, buffer)?, read, exe, fast)
}

/// Checks an input read: in place when the fast path's encoding is known and the file is that
/// simple case, else in full.
fn check(
    raw: Raw,
    read: &ReadOptions,
    exe: Option<&Executable>,
    fast: Option<gmon_format::Encoding>,
) -> Result<Loaded> {
    let Raw {
        path,
        bytes: buffer,
        sidecar,
    } = raw;
    let path = path.as_path();
    let id = sidecar
        .as_ref()
        .and_then(Sidecar::main_object)
        .filter(|o| !o.build_id.is_empty())
        .map(|o| ExecutableId(o.build_id.clone()));
    // A sidecar that records another gmon.out (left from an earlier run) is not this input's;
    // one without the link is taken, as the views take it (spec/runtime.md §5.8).
    let sidecar = match sidecar {
        None => Err(NO_SIDECAR),
        Some(s) if s.gmon.is_some() && !s.matches_gmon(&buffer) => Err(STALE_SIDECAR),
        Some(s) => Ok(s),
    };
    let not_this_exe = |reason: String| Error::OtherExecutable {
        path: path.to_path_buf(),
        reason,
    };
    let parsed = match fast {
        Some(encoding) => GnuFile::parse(buffer, encoding),
        None => Err(buffer),
    };
    let bytes = match parsed {
        Ok(file) => {
            if let Some(exe) = exe {
                // Arcs whose addresses all lie in one code section pass without being looked
                // at one by one (the check is then the same, and takes a fraction of the time).
                let in_one_section = file.arc_address_bounds().is_none_or(|(lo, hi)| {
                    exe.code
                        .iter()
                        .any(|&(start, end)| lo >= start.saturating_sub(16) && hi < end)
                });
                let arcs = (!in_one_section).then(|| file.arcs());
                exe.check_parts(
                    file.histograms().map(|h| (h.low_pc, h.high_pc)),
                    arcs.into_iter().flatten(),
                )
                .map_err(not_this_exe)?;
            }
            return Ok(Loaded {
                path: path.to_path_buf(),
                parsed: Parsed::Fast(file),
                id,
                sidecar,
            });
        }
        Err(bytes) => bytes,
    };
    let profile = crate::input::parse_profile(path, &bytes, read)?;
    if let Some(exe) = exe {
        exe.check(&profile).map_err(not_this_exe)?;
    }
    Ok(Loaded {
        path: path.to_path_buf(),
        parsed: Parsed::Full(profile, bytes),
        id,
        sidecar,
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
pub fn expand_inputs(args: &[PathBuf], lists: &[PathBuf]) -> Result<Vec<PathBuf>> {
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
        return Err(Error::NoInputs);
    }
    Ok(out)
}

fn read_list(path: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let context = || format!("list file {}", path.display());
    // Bounded as any named input is: `-` or a path may be a pipe, or /dev/zero.
    let mut bytes = Vec::new();
    if path == Path::new("-") {
        let limit = gmon_binary::open::MAX_STREAM_BYTES;
        gmon_binary::open::read_bounded(io::stdin().lock(), limit, "standard input", &mut bytes)
    } else {
        fs::File::open(path).and_then(|f| gmon_binary::open::read_named_into(f, &mut bytes))
    }
    .with_context(context)?;
    for line in bytes.lines() {
        let line = line.with_context(context)?;
        let line = line.trim_end_matches('\r');
        if !line.trim().is_empty() {
            out.push(PathBuf::from(line));
        }
    }
    Ok(())
}
