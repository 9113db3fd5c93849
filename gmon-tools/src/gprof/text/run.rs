//! `gmon gprof` from arguments to output: gprof's `main` (spec/gprof.md §2), writing the
//! reports to `out` and gprof's messages to `err`, and returning the exit status.

use std::io::Write;
use std::path::Path;

use gmon_format::{Endian, ReadOptions, Variant};

use super::args::{FileFormat, GprofArgs, Parsed, style};
use super::names::PrintOptions;
use crate::gprof::analysis::blocks::BasicBlocks;
use crate::gprof::{Analysis, AnalysisBuilder, AnalysisOptions, GprofError, SymtabOptions};
use gmon_binary::Image;
use gmon_demangle::Style;

use crate::gprof::WHOAMI;

/// The teaching help of `gmon gprof --help`.
pub const HELP: &str = "\
gmon gprof: GNU gprof 2.40's reports, byte for byte (and faster)

Usage: gmon gprof [OPTIONS] [EXECUTABLE [GMON...]]

Reads the executable's symbols (default a.out) and one or more profiles
written by a program built with `gcc -pg` (default gmon.out; several files
are summed as gprof sums them) and prints the same reports as GNU gprof.

What is printed (default: flat profile, call graph and index):
  -p[SPEC], --flat-profile[=SPEC]     flat profile (only SPEC's functions)
  -P[SPEC], --no-flat-profile[=SPEC]  no flat profile (or: not SPEC's)
  -q[SPEC], --graph[=SPEC]            call graph (SPEC a/b: only that arc)
  -Q[SPEC], --no-graph[=SPEC]         no call graph (or: hide SPEC / arc a/b)
  -C[SPEC], --exec-counts[=SPEC]      execution counts    (-Z: none)
  -A[SPEC], --annotated-source[=SPEC] annotated source    (-J: none)
  -i, --file-info                     what each profile file contains
  -r, --function-ordering             suggested function order for the linker
  -R MAP, --file-ordering=MAP         suggested object file order
  -s, --sum                           write gmon.sum, the sum of the profiles

How it is printed:
  -b, --brief                         leave out the explanations
  -T, --traditional                   BSD layout (no demangling, ms/call)
  -z, --display-unused-functions      also list functions with no calls/time
  -l, --line                          line-by-line instead of per function
  -L, --print-path                    full source paths
  --inline-file-names                 append (file:line) to every name
  -w N, --width=N                     width of the index (default 80)
  --demangle[=STYLE], --no-demangle   C++/Rust names (default: demangled)
  -m N, --min-count=N  -t N, --table-length=N  -x, --all-lines
  -y, --separate-files  -I DIRS, --directory-path=DIRS   (for -A)

What is counted:
  -e F / -E F      hide F in the graph / and drop its time from its callers
  -f F / -F F      show only F in the graph / and count only F's time
  -n F / -N F      propagate only F's time / all time except F's
  -k A/B           ignore the arcs from A to B
  -a, --no-static  ignore static functions (their code joins the previous one)
  -D, --ignore-non-functions  ignore local labels that are not functions
  -c, --static-call-graph     add calls found in the machine code
  -O FMT, --file-format=FMT   auto, magic (GNU), bsd, 4.4bsd
  -S FILE, --external-symbol-table=FILE  symbols from `nm`-style lines

SPEC is a function (`main`), a file (`util.c` or `util:`), a line (`util.c:42`)
or both (`util.c:helper`). Names are matched as they are in the symbol table
(mangled for C++: use `_Z4worki`, not `work(int)`). Optional arguments must be
attached (-pmain, --flat-profile=main); `-p main` makes `main` the executable.

Differences from GNU gprof:
  * -s writes gmon.sum with gmon merge's lossless rules: histogram bins are
    summed without wrapping at 65535 and arcs are kept as recorded, while
    GNU gprof wraps bins to 16 bits and rewrites every arc to the start of
    its caller's line or function.
  * The explanations (without -b) are this project's own text; everything
    else, including the form-feed lines between sections, is identical.
  * -d[N], --debug[=N] is accepted and does nothing: GNU gprof's debugging
    trace, which it mixes into stdout, is not printed.
  * A basic-block record cut short ends with `FILE: Success`; GNU gprof
    prints a stale errno there, which depends on the locale (`Success` with
    LC_ALL=C, `No such file or directory` when a locale file is missing).
  * A write error on standard output or gmon.sum (a full disk, /dev/full)
    exits with status 1 and a message; GNU gprof exits 0.
  * -R MAP with several functions per object file: GNU gprof 2.40 reads an
    uninitialised flag for all but the first, so its output varies with
    the heap; here only each object's first function stands for it.

Examples:
  gmon gprof -b ./prog gmon.out            flat profile, call graph, index
  gmon gprof -b -p ./prog run1.out run2.out    flat profile of two runs
  gmon gprof -b -q'main' ./prog            call graph from main only
";

fn usage() -> &'static str {
    "Usage: gmon gprof [OPTIONS] [EXECUTABLE [GMON...]]\nTry 'gmon gprof --help' for more information.\n"
}

/// Runs gprof with `args` (without the program name). Returns the exit status.
pub fn run<S: AsRef<std::ffi::OsStr>>(
    args: &[S],
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> std::io::Result<i32> {
    let a = match super::args::parse(args, WHOAMI) {
        Parsed::Run(a) => a,
        Parsed::Help => {
            out.write_all(HELP.as_bytes())?;
            return Ok(0);
        }
        Parsed::Version => {
            out.write_all(
                format!(
                    "gmon gprof {} (reports of GNU gprof (GNU Binutils) 2.40)\n",
                    env!("CARGO_PKG_VERSION")
                )
                .as_bytes(),
            )?;
            return Ok(0);
        }
        Parsed::Error { message, usage: u } => {
            err.write_all(&message)?;
            if u {
                err.write_all(usage().as_bytes())?;
            }
            return Ok(1);
        }
    };
    match report(&a, out, err) {
        Ok(()) => Ok(0),
        Err(Failure::Gprof(e)) => {
            out.flush()?;
            err.write_all(e.message.as_bytes())?;
            Ok(1)
        }
        Err(Failure::Io(e)) => Err(e),
    }
}

/// Why [`run`] stopped: a gprof error (stderr, exit 1) or a failed write.
enum Failure {
    Gprof(GprofError),
    Io(std::io::Error),
}

impl From<GprofError> for Failure {
    fn from(e: GprofError) -> Self {
        Failure::Gprof(e)
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        Failure::Io(e)
    }
}

/// Reads one profile file the way gprof's `gmon_out_read` decides the layout, decoding with the
/// executable's byte order and pointer width.
///
/// `line` is `-l`: gprof warns that basic-block counts are ignored only without it.
pub fn read_profile(
    file: &Path,
    image: &Image,
    format: FileFormat,
    line: bool,
) -> Result<gmon_format::Profile, GprofError> {
    match load_profile(file, image, format, line, false)? {
        Input::Full(p) => Ok(p),
        // Not asked for: the in-place reading is never chosen.
        Input::InPlace(f) => Ok(gmon_format::read_with(
            f.bytes(),
            &ReadOptions::new()
                .with_endian(image.encoding.endian)
                .with_ptr_width(image.encoding.ptr_width)
                .with_variant(Variant::Gnu),
        )
        .map_err(|e| GprofError::new(format!("{}: {e}\n", file.display())))?),
    }
}

/// A profile as [`load_profile`] read it.
enum Input {
    /// Decoded into records by the full reader.
    Full(gmon_format::Profile),
    /// A GNU version-1 file of histogram and arc records only, left as the file's bytes: the
    /// histogram bins and arcs are decoded as they are added, with no record list in between
    /// (dense20k: a 2.8 MB file, 720,000 bins and 64,000 arcs).
    InPlace(gmon_format::read::GnuFile),
}

/// [`read_profile`]; with `in_place`, a plain GNU file is walked in place
/// ([`gmon_format::read::GnuFile`]) instead of decoded. A file it declines (basic blocks, another
/// version, anything cut short or odd) goes through the full reader, whose errors are gprof's.
fn load_profile(
    file: &Path,
    image: &Image,
    format: FileFormat,
    line: bool,
    in_place: bool,
) -> Result<Input, GprofError> {
    // Messages name the file as text; a name that is not UTF-8 is shown lossily.
    let shown = file.display().to_string();
    let path = shown.as_str();
    let mut bytes = match gmon_binary::open::read_named(file) {
        Ok(b) => b,
        // gprof's fopen of a directory succeeds and its first fread finds nothing, so a
        // directory is reported as a file too short to be a profile.
        Err(e) if e.kind() == std::io::ErrorKind::IsADirectory => Vec::new(),
        Err(e) => return Err(GprofError::perror(path, &e)),
    };
    let w = WHOAMI;
    let mut opts = ReadOptions::new()
        .with_endian(image.encoding.endian)
        .with_ptr_width(image.encoding.ptr_width);
    let is_gnu = match format {
        FileFormat::Auto | FileFormat::Magic => {
            if bytes.len() < 20 {
                return Err(GprofError::new(format!(
                    "{path}: file too short to be a gmon file\n"
                )));
            }
            let magic = bytes.starts_with(b"gmon");
            if format == FileFormat::Magic && !magic {
                return Err(GprofError::new(format!(
                    "{w}: file `{path}' has bad magic cookie\n"
                )));
            }
            magic
        }
        _ => false,
    };
    if is_gnu {
        let v = [bytes[4], bytes[5], bytes[6], bytes[7]];
        let version = match image.encoding.endian {
            Endian::Little => u32::from_le_bytes(v),
            Endian::Big => u32::from_be_bytes(v),
        };
        if version > 1 {
            // gprof prints the version with `%d`: the word as a signed int.
            let signed = version.cast_signed();
            return Err(GprofError::new(format!(
                "{w}: file `{path}' has unsupported version {signed}\n"
            )));
        }
        opts = opts.with_variant(Variant::Gnu);
        if in_place && version == 1 {
            match gmon_format::read::GnuFile::parse(bytes, image.encoding) {
                Ok(f) => return Ok(Input::InPlace(f)),
                Err(b) => bytes = b,
            }
        }
    } else {
        // gprof's BSD reader: 4.4BSD when the word after lpc, hpc and ncnt is GMONVERSION.
        let p = image.encoding.ptr_width.bytes();
        let endian = image.encoding.endian;
        let word = |b: &[u8], off: usize| {
            b.get(off..off + 4).map(|v| {
                let v = [v[0], v[1], v[2], v[3]];
                match endian {
                    Endian::Little => u32::from_le_bytes(v),
                    Endian::Big => u32::from_be_bytes(v),
                }
            })
        };
        let variant = if word(&bytes, 2 * p + 4) == Some(gmon_format::GMONVERSION) {
            Variant::Bsd44
        } else {
            Variant::BsdOld
        };
        if format == FileFormat::Bsd44 && variant != Variant::Bsd44 {
            return Err(GprofError::new(format!(
                "{w}: file `{path}' has bad magic cookie\n"
            )));
        }
        // GNU gprof assumes a 12/20-byte old BSD header (no padding) and a 40/32-byte 4.4BSD one.
        let hdr = if variant == Variant::Bsd44 {
            2 * p + 24
        } else {
            2 * p + 4
        };
        if bytes.len() < hdr {
            return Err(GprofError::new(format!(
                "{path}: file too short to be a gmon file\n"
            )));
        }
        // gprof keeps the histogram's byte count in an `int`: a negative one is not a profile.
        if word(&bytes, 2 * p).is_some_and(|ncnt| (ncnt.wrapping_sub(hdr as u32) as i32) < 0) {
            return Err(GprofError::new(format!(
                "{w}: file '{path}' does not appear to be in gmon.out format\n"
            )));
        }
        if variant == Variant::Bsd44 {
            // gprof ignores FreeBSD's histcounter_type and always reads 16-bit bins.
            if let Some(t) = bytes.get_mut(2 * p + 12..2 * p + 16) {
                t.fill(0);
            }
        } else {
            opts = opts.with_bsd_old_header_size(hdr as u32);
        }
        // gprof reads (ncnt - header) / 2 bins and the arcs right after them, so an odd byte
        // count leaves its last byte to the arcs; an even ncnt describes the same reading.
        if let Some(ncnt) = word(&bytes, 2 * p)
            && (ncnt as usize) >= hdr
            && (ncnt as usize - hdr) % 2 == 1
        {
            let v = match endian {
                Endian::Little => (ncnt - 1).to_le_bytes(),
                Endian::Big => (ncnt - 1).to_be_bytes(),
            };
            if let Some(t) = bytes.get_mut(2 * p..2 * p + 4) {
                t.copy_from_slice(&v);
            }
        }
        opts = opts.with_variant(variant);
    }
    let profile = gmon_format::read_with(&bytes, &opts).map_err(|e| {
        use gmon_format::Error as E;
        // gprof warns about basic blocks as it reads them, so a block record before the point
        // where the file breaks has already produced its warning.
        let early_bb = is_gnu
            && !line
            && !matches!(e, E::UnexpectedEof { what, .. } if what.contains("basic-block")
                || what.starts_with("version-0"))
            && e.offset().is_some_and(|off| {
                basic_block_before(
                    &bytes,
                    image.encoding.ptr_width.bytes(),
                    image.encoding.endian,
                    off,
                )
            });
        let mut err = match e {
            // A block cut short: gprof reports it with perror() and a stale errno (spec/gnu.md
            // §"gprof's error messages": 0, "Success", in the C locale), after warning (once,
            // and only without -l) about the blocks it could read.
            E::UnexpectedEof {
                what, available, ..
            } if is_gnu
                && (what == "basic-block counts"
                    || what == "basic-block record name"
                    || what.starts_with("version-0")) =>
            {
                let whole = available / (2 * image.encoding.ptr_width.bytes() as u64);
                let warn = if what == "basic-block counts" && whole >= 1 && !line {
                    format!("{w}: warning: ignoring basic-block exec counts (use -l or --line)\n")
                } else {
                    String::new()
                };
                GprofError::new(format!("{warn}{path}: Success\n"))
            }
            E::BadTag { tag, .. } if is_gnu => GprofError::new(format!(
                "{w}: {path}: found bad tag {tag} (file corrupted?)\n"
            )),
            E::HistogramTooLarge {
                bins, available, ..
            } if is_gnu => GprofError::new(format!(
                "{w}: {path}: unexpected EOF after reading {} of {bins} samples\n",
                available / 2
            )),
            _ if is_gnu => GprofError::new(format!("{w}: {path}: unexpected end of file\n")),
            E::HistogramTooLarge {
                bins, available, ..
            } => GprofError::new(format!(
                "{w}: unexpected EOF after reading {}/{bins} bins\n",
                // gprof decrements its counter before printing it.
                ((available / 2) as u32).wrapping_sub(1)
            )),
            E::UnsupportedVersion { .. } if format == FileFormat::Bsd44 => {
                GprofError::new(format!("{w}: file `{path}' has bad magic cookie\n"))
            }
            _ => GprofError::new(format!(
                "{w}: file '{path}' does not appear to be in gmon.out format\n"
            )),
        };
        if early_bb {
            err.message = format!(
                "{w}: warning: ignoring basic-block exec counts (use -l or --line)\n{}",
                err.message
            );
        }
        err
    })?;
    Ok(Input::Full(profile))
}

/// Whether a GNU (version 1) file holds a basic-block record with at least one whole block
/// before byte `limit` (walking the records as gprof reads them).
fn basic_block_before(bytes: &[u8], p: usize, endian: Endian, limit: u64) -> bool {
    let word = |off: usize| {
        bytes.get(off..off + 4).map(|v| {
            let v = [v[0], v[1], v[2], v[3]];
            match endian {
                Endian::Little => u32::from_le_bytes(v),
                Endian::Big => u32::from_be_bytes(v),
            }
        })
    };
    if word(4) != Some(1) {
        return false; // version-0 block records have another layout
    }
    let limit = usize::try_from(limit)
        .unwrap_or(usize::MAX)
        .min(bytes.len());
    let mut i = 20usize;
    while i < limit {
        let next = match bytes.get(i) {
            Some(0) => word(i + 1 + 2 * p)
                .and_then(|n| (n as usize).checked_mul(2))
                .and_then(|b| i.checked_add(1 + 2 * p + 24 + b)),
            Some(1) => Some(i + 1 + 2 * p + 4),
            Some(2) => {
                let Some(n) = word(i + 1) else { return false };
                if n >= 1 && i + 5 + 2 * p <= bytes.len() {
                    return true;
                }
                (n as usize)
                    .checked_mul(2 * p)
                    .and_then(|b| i.checked_add(5 + b))
            }
            _ => None,
        };
        match next {
            Some(n) => i = n,
            None => return false,
        }
    }
    false
}

/// The addresses of the static function symbols, when the report needs the source file of
/// those alone: the `(file)` the index shows after a static function's name. Every other use
/// of source positions (line symbols, `--inline-file-names`, `-A`, `-C`, orderings, symspecs
/// naming a file or a line) needs those of every symbol: `None` then.
fn static_addresses_if_enough(
    a: &GprofArgs,
    symtab: &crate::gprof::analysis::symtab::SymbolTable,
    line: bool,
) -> Option<Vec<u64>> {
    let others = style::EXEC_COUNTS
        | style::ANNOTATED_SOURCE
        | style::FUNCTION_ORDER
        | style::FILE_ORDER
        | style::SUMMARY_FILE;
    // A symspec is only a function name when gprof's parse (symspec.rs) finds no file and no
    // line in it: no ':', no '.', no leading digit.
    let names_only = a
        .specs
        .iter()
        .all(|s| !s.spec.contains([':', '.']) && !s.spec.starts_with(|c: char| c.is_ascii_digit()));
    if line || a.inline_file_names || a.output_style & others != 0 || !names_only {
        return None;
    }
    Some(
        symtab
            .symbols
            .iter()
            .filter(|s| s.is_static)
            .map(|s| s.addr)
            .collect(),
    )
}

/// `-i`'s lines for one file.
fn file_info(path: &str, info: &crate::gprof::FileInfo) -> String {
    let plural =
        |n: usize, one: &str, many: &str| format!("\t{n} {}\n", if n == 1 { one } else { many });
    let mut s = format!("File `{path}' (version {}) contains:\n", info.version);
    s += &plural(info.histograms, "histogram record", "histogram records");
    s += &plural(info.arcs, "call-graph record", "call-graph records");
    s += &plural(
        info.bb_records,
        "basic-block count record",
        "basic-block count records",
    );
    s
}

/// What [`read_profiles`] leaves for the reports: whether nothing was printed yet, `-s`'s
/// running sum and `-l`'s basic blocks.
struct Loaded {
    first_output: bool,
    sum: Option<gmon_format::merge::MergeResult<gmon_format::merge::Merger>>,
    blocks: BasicBlocks,
}

/// Reads every profile into `builder` in command-line order, printing `-i`'s lines and the
/// basic-block warning as gprof does while it reads.
fn read_profiles(
    a: &GprofArgs,
    image: &Image,
    line: bool,
    builder: &mut AnalysisBuilder,
    first: Option<Result<Input, GprofError>>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Loaded, Failure> {
    let w = WHOAMI;
    builder.expect_profiles(a.profiles.len());
    let output_style = a.output_style;
    let mut first_output = true;
    let mut warned_bb = false;
    // `-s`: a running sum, so memory stays one profile plus the sum whatever the number of
    // inputs; its first error is reported where gprof writes the sum, after reading them all.
    let mut sum = (output_style & style::SUMMARY_FILE != 0).then(|| {
        Ok(gmon_format::merge::Merger::new(
            gmon_format::merge::MergeOptions::new(),
        ))
    });
    let mut blocks = BasicBlocks::default();
    let mut take = |file: &Path, input: Result<Input, GprofError>| -> Result<(), Failure> {
        let path = file.display().to_string();
        let mut p = match input? {
            Input::Full(p) => p,
            Input::InPlace(f) => {
                let info = builder.add_gnu_file(&path, f)?;
                if output_style & style::GMON_INFO != 0 {
                    out.write_all(file_info(&path, &info).as_bytes())?;
                    first_output = false;
                }
                return Ok(());
            }
        };
        // Only `-s` reads the profiles again (for gmon.sum); otherwise the bins can move.
        let info = if output_style & style::SUMMARY_FILE != 0 {
            builder.add_profile(&path, &p)?
        } else {
            builder.add_profile_taking(&path, &mut p)?
        };
        if line {
            blocks.add_profile(&p, builder.symtab());
        }
        if p.basic_blocks().next().is_some() && !line && !warned_bb {
            warned_bb = true;
            err.write_all(
                format!("{w}: warning: ignoring basic-block exec counts (use -l or --line)\n")
                    .as_bytes(),
            )?;
        }
        if output_style & style::GMON_INFO != 0 {
            out.write_all(file_info(&path, &info).as_bytes())?;
            first_output = false;
        }
        if let Some(Ok(merger)) = &mut sum
            && let Err(e) = merger.add(&p)
        {
            sum = Some(Err(e));
        }
        Ok(())
    };
    let load = |file: &Path| load_profile(file, image, a.file_format, line, in_place(a, line));
    // The first profile may have been read already, while the symbol table was built.
    let skip = usize::from(first.is_some());
    if let (Some(input), Some(file)) = (first, a.profiles.first()) {
        take(file, input)?;
    }
    if a.profiles.len() < 2 + skip {
        for file in a.profiles.iter().skip(skip) {
            take(file, load(file))?;
        }
    } else {
        // Several profiles: a second thread reads (and walks) the next file while this one
        // adds the last; handed over one at a time, so at most two are in memory.
        std::thread::scope(|scope| {
            let (tx, rx) = std::sync::mpsc::sync_channel(0);
            scope.spawn(move || {
                for file in a.profiles.iter().skip(skip) {
                    let input = load(file);
                    let failed = input.is_err();
                    if tx.send(input).is_err() || failed {
                        return; // the reading stopped, or stops here with this error
                    }
                }
            });
            // Dropped before the scope waits for the reader, which then cannot stay blocked.
            let rx = rx;
            for file in a.profiles.iter().skip(skip) {
                // The reader cannot stop early but by panicking (which aborts): read here then.
                let input = rx.recv().unwrap_or_else(|_| load(file));
                take(file, input)?;
            }
            Ok::<(), Failure>(())
        })?;
    }
    Ok(Loaded {
        first_output,
        sum,
        blocks,
    })
}

/// Whether a GNU profile may be kept as its bytes ([`Input::InPlace`]): only `-s` (gmon.sum)
/// and `-l` (basic blocks) need the records themselves.
fn in_place(a: &GprofArgs, line: bool) -> bool {
    !line && a.output_style & style::SUMMARY_FILE == 0
}

fn report(a: &GprofArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<(), Failure> {
    let w = WHOAMI;
    if a.output_style & style::FUNCTION_ORDER != 0 && a.output_style & style::FILE_ORDER != 0 {
        return Err(GprofError::new(format!(
            "{w}: Only one of --function-ordering and --file-ordering may be specified.\n"
        ))
        .into());
    }
    let mut output_style = a.output_style;
    // `-s` forces line granularity.
    let line = a.line || output_style & style::SUMMARY_FILE != 0;
    let image = Image::open(&a.image).map_err(|e| GprofError::binary(&e, w))?;
    let opts = AnalysisOptions {
        symtab: SymtabOptions {
            no_static: a.no_static,
            ignore_non_functions: a.ignore_non_functions,
        },
        static_call_graph: a.static_call_graph,
        specs: a.specs.clone(),
        whoami: w.to_string(),
    };
    // EXTENSION POINT (lines): with `line`, line symbols join the function symbols here, and
    // source files are attached for the index's `(file)` suffix and file symspecs.
    // Parsed once: for the symbols, the line information's symbols and the file order.
    let elf = match a.external_symbols {
        Some(_) => None,
        None => gmon_binary::parse_elf(&image.data).ok(),
    };
    // The line information is read on a second thread from here: what it needs before
    // knowing which answers will be asked for (the debug file, its sections and unit headers,
    // the ELF code symbols) is read while this thread builds the symbol table, then the
    // request comes over `tx`. Without `-S` and a parsed ELF file there is nothing to read
    // (and without the parse, the symbol table's error ends the run).
    let mut line_info = None;
    let (analysis, mut first_output, blocks) = std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::channel::<gmon_binary::dwarf::Request>();
        let data: &[u8] = &image.data;
        let mut sources = match (&a.external_symbols, elf.as_ref()) {
            (None, Some(elf)) => Some(scope.spawn(move || {
                gmon_binary::dwarf::LineInfo::for_executable_when(
                    &a.image,
                    data,
                    Some(elf),
                    move || rx.recv().ok(),
                )
            })),
            _ => None,
        };
        let mut ask = |request: gmon_binary::dwarf::Request| match sources.take() {
            Some(thread) => {
                // The reader waits for this request unless it is gone (it cannot stop early but
                // by panicking, which aborts).
                let _ = tx.send(request);
                thread
            }
            None => scope.spawn(move || {
                gmon_binary::dwarf::LineInfo::for_executable_when(&a.image, data, None, || {
                    Some(request)
                })
            }),
        };
        // The first profile is read (and its records walked) while the symbol table is built:
        // it needs the executable's byte order and pointer width alone.
        let image_ref = &image;
        let first_profile = a
            .profiles
            .first()
            .filter(|file| std::fs::metadata(file).is_ok_and(|m| m.len() >= PRELOAD_BYTES))
            .map(|file| {
                scope.spawn(move || {
                    load_profile(file, image_ref, a.file_format, line, in_place(a, line))
                })
            });
        let joined = |thread: std::thread::ScopedJoinHandle<'_, gmon_binary::dwarf::LineInfo>| {
            thread
                .join()
                .unwrap_or_else(|e| std::panic::resume_unwind(e))
        };
        let mut symtab = match (&a.external_symbols, &elf) {
            (Some(file), _) => {
                crate::gprof::analysis::symtab::SymbolTable::from_nm_file(file, &image, w)?
            }
            (None, Some(elf)) => crate::gprof::analysis::symtab::SymbolTable::from_parsed(
                &image,
                elf,
                &opts.symtab,
                w,
            )?,
            // Not ELF after all: from_image says so as gprof does.
            (None, None) => {
                crate::gprof::analysis::symtab::SymbolTable::from_image(&image, &opts.symtab, w)?
            }
        };
        // Without `-l` and with names alone in the symspecs, the source files are needed only
        // for the static functions' `(file)` in the index: `deferred` holds their addresses,
        // and their line tables are read on the second thread while the profiles are read and
        // tallied (the tally looks at addresses and names alone). Both take about as long on a
        // dense program.
        let mut deferred = None;
        if a.external_symbols.is_none() {
            if let Some(map) = &a.function_map {
                let map = super::ordering::read_function_map(map, w)?;
                super::ordering::apply_function_map(&mut symtab, &map, image.text_end());
            }
            deferred = static_addresses_if_enough(a, &symtab, line);
            if deferred.is_none() {
                let mut info = joined(ask(gmon_binary::dwarf::Request {
                    functions: line,
                    want: None,
                }));
                say_unreadable(&info, err)?;
                crate::gprof::analysis::lines::attach_function_sources(&mut symtab, &mut info);
                if line {
                    symtab = crate::gprof::analysis::lines::line_symbol_table(
                        &symtab, &mut info, &image,
                    )?;
                }
                crate::gprof::analysis::lines::order_files_like_gprof(
                    &mut symtab,
                    elf.as_ref().map(|e| (e, &*image.data)),
                );
            }
        }
        let mut builder = AnalysisBuilder::with_symtab(symtab, &opts);
        if a.file_format == FileFormat::Prof {
            return Err(GprofError::new(format!(
                "{w}: sorry, file format `prof' is not yet supported\n"
            ))
            .into());
        }
        let first = first_profile.map(|thread| {
            thread
                .join()
                .unwrap_or_else(|e| std::panic::resume_unwind(e))
        });
        match deferred {
            None => {
                let loaded = read_profiles(a, &image, line, &mut builder, first, out, err)?;
                analyze(a, builder, loaded, &image, &mut output_style, err)
            }
            Some(want) => {
                let sources = ask(gmon_binary::dwarf::Request {
                    functions: false,
                    want: Some(want),
                });
                // Only the index needs the source files then: the line tables are read while
                // the profiles are tallied and the graph analysed (dense20k: both ~5 ms).
                let mut analyzed = read_profiles(a, &image, line, &mut builder, first, out, err)
                    .and_then(|loaded| analyze(a, builder, loaded, &image, &mut output_style, err));
                let mut info = joined(sources);
                say_unreadable(&info, err)?;
                if let Ok((analysis, ..)) = &mut analyzed {
                    let symtab = &mut analysis.symtab;
                    crate::gprof::analysis::lines::attach_function_sources(symtab, &mut info);
                    crate::gprof::analysis::lines::order_files_like_gprof(
                        symtab,
                        elf.as_ref().map(|e| (e, &*image.data)),
                    );
                }
                // Freed with the analysis, at the end: a thread freeing it now would take a
                // core from the reports' threads.
                line_info = Some(info);
                analyzed
            }
        }
    })?;
    let popts = PrintOptions {
        brief: a.brief,
        bsd: a.bsd_style,
        ignore_zeros: !a.display_unused,
        demangle: if a.demangle {
            Some(a.demangle_style)
        } else {
            None
        },
        line_granularity: line,
        inline_file_names: a.inline_file_names,
        print_path: a.print_path,
        width: a.width,
    };
    let _ = Style::Auto;
    let engine_style = engine_style(output_style, &blocks);
    print_reports(out, &analysis, &popts, engine_style, &mut first_output)?;
    print_trailing_reports_with_blocks(
        out,
        err,
        &analysis,
        a,
        output_style,
        &blocks,
        &mut first_output,
    )?;
    let symbols = analysis.symtab.len();
    free_later((analysis, line_info), symbols);
    Ok(())
}

/// After the profiles were read: the output style gprof settles on, the sum (`-s`), the
/// checks that the selected reports have their data, then the analysis and its warnings.
fn analyze(
    a: &GprofArgs,
    builder: AnalysisBuilder,
    loaded: Loaded,
    image: &Image,
    output_style: &mut u32,
    err: &mut dyn Write,
) -> Result<(Analysis, bool, BasicBlocks), Failure> {
    let w = WHOAMI;
    let Loaded {
        first_output,
        sum,
        blocks,
    } = loaded;
    let has_hist = builder.histograms().is_present();
    let has_arcs = builder.has_arcs();
    if *output_style == 0 {
        if has_hist || has_arcs {
            if has_hist {
                *output_style |= style::FLAT_PROFILE;
            }
            if has_arcs {
                *output_style |= style::CALL_GRAPH;
            }
        } else {
            *output_style = style::EXEC_COUNTS;
        }
        *output_style &= !a.user_specified;
    }
    if let Some(sum) = sum {
        write_sum(sum)?;
    }
    if *output_style & style::FLAT_PROFILE != 0 && !has_hist {
        return Err(GprofError::new(format!("{w}: gmon.out file is missing histogram\n")).into());
    }
    if *output_style & style::CALL_GRAPH != 0 && !has_arcs {
        return Err(
            GprofError::new(format!("{w}: gmon.out file is missing call-graph data\n")).into(),
        );
    }
    let analysis = builder.finish(Some(image))?;
    for m in &analysis.warnings {
        err.write_all(m.as_bytes())?;
    }
    Ok((analysis, first_output, blocks))
}

/// One line on stderr per DWARF section that was there but read as absent (spec/inputs.md §3):
/// the reports are then those of a file without it, as with a section BFD cannot decompress.
fn say_unreadable(info: &gmon_binary::dwarf::LineInfo, err: &mut dyn Write) -> std::io::Result<()> {
    for m in info.unreadable_sections() {
        writeln!(err, "{WHOAMI}: warning: {m}")?;
    }
    Ok(())
}

/// Drops `value`, the analysis of a program of `symbols` symbols or part of it: from
/// [`crate::gprof::PARALLEL_SYMBOLS`] on, on a thread of its own that nothing waits for. Freeing a
/// dense program's symbols, call graph, names and line tables took about 2 ms after its
/// reports were written (scripts/bench-gprof.sh's dense20k); when the process ends first, the
/// memory goes back with it. A small program's is freed here: a thread costs more (clone, its
/// stack, its malloc arena). Without a thread, `value` is dropped here too.
fn free_later<T: Send + 'static>(value: T, symbols: usize) {
    if symbols >= crate::gprof::PARALLEL_SYMBOLS {
        let _ = std::thread::Builder::new().spawn(move || drop(value));
    }
}

/// Profile size from which the first profile is read while the symbol table is built: a
/// thread costs about what reading 300 KB does (small2k), and dense20k's 2.8 MB took 2 ms.
const PRELOAD_BYTES: u64 = 1 << 20;

/// The reports that follow the exec counts, in gprof's order: annotated source (`-A`), then
/// function ordering (`-r`) and file ordering (`-R`).
pub fn print_trailing_reports(
    out: &mut dyn std::io::Write,
    err: &mut dyn std::io::Write,
    analysis: &crate::gprof::Analysis,
    args: &super::args::GprofArgs,
    output_style: u32,
    first_output: &mut bool,
) -> std::io::Result<()> {
    print_trailing_reports_with_blocks(
        out,
        err,
        analysis,
        args,
        output_style,
        &BasicBlocks::default(),
        first_output,
    )
}

/// The output style the engine's own printers get: with basic blocks, the exec counts are
/// printed by [`print_trailing_reports_with_blocks`] instead (they need the blocks).
pub fn engine_style(output_style: u32, blocks: &BasicBlocks) -> u32 {
    if blocks.is_empty() {
        output_style
    } else {
        output_style & !super::args::style::EXEC_COUNTS
    }
}

/// [`print_trailing_reports`] with basic-block counts (`-l` and BB records): also prints the
/// exec counts (`-C`) with the blocks' lines, which [`engine_style`] took from the engine.
pub fn print_trailing_reports_with_blocks(
    out: &mut dyn std::io::Write,
    err: &mut dyn std::io::Write,
    analysis: &crate::gprof::Analysis,
    args: &super::args::GprofArgs,
    output_style: u32,
    blocks: &BasicBlocks,
    first_output: &mut bool,
) -> std::io::Result<()> {
    use super::args::style;
    if output_style & style::EXEC_COUNTS != 0 && !blocks.is_empty() {
        super::execcount::print_exec_counts(
            out,
            analysis,
            !args.display_unused,
            Some(blocks),
            first_output,
        )?;
    }
    if output_style & style::ANNOTATED_SOURCE != 0 {
        let gprof_path = std::env::var_os("GPROF_PATH");
        let opts = super::annotate::AnnotateOptions {
            ignore_zeros: !args.display_unused,
            min_count: args.min_count,
            table_length: args.table_length,
            all_lines: args.all_lines,
            separate_files: args.separate_files,
            search_path: super::annotate::AnnotateOptions::search_path_from(
                &args.directories,
                gprof_path.as_deref(),
            ),
            whoami: WHOAMI.to_string(),
        };
        super::annotate::print_annotated_source(out, err, analysis, &opts, blocks, first_output)?;
    }
    if output_style & style::FUNCTION_ORDER != 0 {
        super::ordering::print_function_ordering(out, analysis)?;
    }
    if output_style & style::FILE_ORDER != 0
        && let Some(path) = &args.function_map
    {
        // Already read once when the symbols were made; a failure here cannot happen unless
        // the file changed meanwhile, and then nothing is printed.
        if let Ok(map) = super::ordering::read_function_map(path, WHOAMI) {
            super::ordering::print_file_ordering(out, analysis, &map)?;
        }
    }
    Ok(())
}

/// Symbols from which [`print_reports`] formats the index on a second thread.
const PARALLEL_INDEX: usize = 1000;

/// Prints the selected reports in gprof's order.
pub fn print_reports(
    out: &mut dyn Write,
    analysis: &Analysis,
    popts: &PrintOptions,
    output_style: u32,
    first_output: &mut bool,
) -> std::io::Result<()> {
    let graph = analysis.has_arcs && output_style & style::CALL_GRAPH != 0;
    std::thread::scope(|scope| {
        // On a large program the index is formatted on a second thread while the flat profile
        // and the call graph print (the flat profile alone leaves the other core idle).
        let mut index = (graph && analysis.symtab.len() >= PARALLEL_INDEX)
            .then(|| scope.spawn(|| super::index::index_bytes(analysis, popts)));
        if graph && popts.bsd {
            super::graph::print_graph(out, analysis, popts, first_output)?;
        }
        if output_style & style::FLAT_PROFILE != 0 {
            super::flat::print_flat(out, analysis, popts, first_output)?;
        }
        if graph {
            if !popts.bsd {
                super::graph::print_graph(out, analysis, popts, first_output)?;
            }
            match index.take() {
                Some(thread) => out.write_all(
                    &thread
                        .join()
                        .unwrap_or_else(|e| std::panic::resume_unwind(e)),
                )?,
                None => super::index::print_index(out, analysis, popts)?,
            }
        }
        Ok::<_, std::io::Error>(())
    })?;
    if output_style & style::EXEC_COUNTS != 0 {
        super::execcount::print_exec_counts(out, analysis, popts.ignore_zeros, None, first_output)?;
    }
    // EXTENSION POINT (lines): basic-block lines of the exec counts, annotated source (-A),
    // function ordering (-r) and file ordering (-R) are printed here, in this order.
    Ok(())
}

/// `-s`: writes `gmon.sum` in the current directory with gmon merge's lossless rules (counts
/// that do not fit a GNU field are carried in further records, as `gmon merge` writes them).
fn write_sum(
    sum: gmon_format::merge::MergeResult<gmon_format::merge::Merger>,
) -> Result<(), GprofError> {
    let cannot = |e: &dyn std::fmt::Display| {
        GprofError::new(format!("{WHOAMI}: cannot sum the profiles: {e}\n"))
    };
    let merged = sum
        .and_then(gmon_format::merge::Merger::finish)
        .map_err(|e| cannot(&e))?;
    let profile = gmon_format::merge::fit_counts_owned(merged.profile, Variant::Gnu)
        .map_err(|e| cannot(&e))?;
    crate::output::write_output(Path::new("gmon.sum"), |w| {
        gmon_format::write(&profile, w)?;
        Ok(())
    })
    .map_err(|e: crate::Error| GprofError::new(format!("{WHOAMI}: {e:#}\n")))
}
