//! gprof's command line, parsed with GNU `getopt_long` semantics.
//!
//! Short options come from gprof's option string
//! `aA::bBcC::d::De:E:f:F:hiI:J::k:lLm:n:N:O:p::P::q::Q::rR:sS:t:Tvw:xyzZ::`: letters combine
//! (`-bp`), a required argument is the rest of the word or the next word (`-e f`, `-ef`), an
//! optional argument must be attached (`-pmain`; `-p main` makes `main` the executable). Long
//! options may be abbreviated to any unambiguous prefix and take `=value` (or the next word when
//! the argument is required). Non-options may appear anywhere (getopt permutes them to the end)
//! unless `--` ends the options; `@file` words are replaced by the file's words.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;

use crate::gprof::analysis::symspec::{SymSpec, TableId};
use gmon_demangle::Style;

/// Output style bits (gprof's `STYLE_*`).
pub mod style {
    /// Flat profile.
    pub const FLAT_PROFILE: u32 = 1 << 0;
    /// Call graph (and index).
    pub const CALL_GRAPH: u32 = 1 << 1;
    /// `-s`: write gmon.sum.
    pub const SUMMARY_FILE: u32 = 1 << 2;
    /// `-C`: exec counts.
    pub const EXEC_COUNTS: u32 = 1 << 3;
    /// `-A`: annotated source.
    pub const ANNOTATED_SOURCE: u32 = 1 << 4;
    /// `-i`: file information.
    pub const GMON_INFO: u32 = 1 << 5;
    /// `-r`: function ordering.
    pub const FUNCTION_ORDER: u32 = 1 << 6;
    /// `-R`: file ordering.
    pub const FILE_ORDER: u32 = 1 << 7;
}

/// `-O`: how profile files are read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FileFormat {
    /// `auto` (default): GNU if the file starts with `gmon`, else BSD.
    #[default]
    Auto,
    /// `magic`: GNU only.
    Magic,
    /// `bsd`: BSD (4.4 if the version word matches, else old).
    Bsd,
    /// `4.4bsd`: 4.4BSD only.
    Bsd44,
    /// `prof`: accepted, then refused ("not yet supported").
    Prof,
}

/// Everything gprof's command line says.
#[derive(Clone, Debug, PartialEq)]
pub struct GprofArgs {
    /// The executable (`a.out` by default); file names are bytes, not necessarily UTF-8.
    pub image: PathBuf,
    /// Profile files (`gmon.out` by default).
    pub profiles: Vec<PathBuf>,
    /// Requested output styles ([`style`] bits); 0 = gprof's default choice.
    pub output_style: u32,
    /// Styles the user mentioned, even to turn them off.
    pub user_specified: u32,
    /// Symspecs in command-line order.
    pub specs: Vec<SymSpec>,
    /// `-b`: no explanations.
    pub brief: bool,
    /// `-T`: BSD layout.
    pub bsd_style: bool,
    /// `-z`: also show functions that were never called and have no time.
    pub display_unused: bool,
    /// `-a`.
    pub no_static: bool,
    /// `-D`.
    pub ignore_non_functions: bool,
    /// `-c`.
    pub static_call_graph: bool,
    /// `-l`.
    pub line: bool,
    /// `-L`.
    pub print_path: bool,
    /// `--inline-file-names`.
    pub inline_file_names: bool,
    /// `--demangle` / `--no-demangle` (default on).
    pub demangle: bool,
    /// `--demangle=STYLE`.
    pub demangle_style: Style,
    /// `-w N` (at least 1; default 80).
    pub width: i32,
    /// `-m N` (default 1).
    pub min_count: u64,
    /// `-t N` (at least 0; default 10).
    pub table_length: i32,
    /// `-x`.
    pub all_lines: bool,
    /// `-y`.
    pub separate_files: bool,
    /// `-I dirs`, in order; bytes, like every file name here.
    pub directories: Vec<OsString>,
    /// `-O`.
    pub file_format: FileFormat,
    /// `-S file`; bytes, like every file name here.
    pub external_symbols: Option<PathBuf>,
    /// `-R map_file`; bytes, like every file name here.
    pub function_map: Option<PathBuf>,
    /// `-d[N]`: accepted and otherwise ignored (gprof's debug trace is not reproduced; `--help`
    /// says so).
    pub debug: Option<String>,
}

impl Default for GprofArgs {
    fn default() -> Self {
        GprofArgs {
            image: "a.out".into(),
            profiles: Vec::new(),
            output_style: 0,
            user_specified: 0,
            specs: Vec::new(),
            brief: false,
            bsd_style: false,
            display_unused: false,
            no_static: false,
            ignore_non_functions: false,
            static_call_graph: false,
            line: false,
            print_path: false,
            inline_file_names: false,
            demangle: true,
            demangle_style: Style::Auto,
            width: 80,
            min_count: 1,
            table_length: 10,
            all_lines: false,
            separate_files: false,
            directories: Vec::new(),
            file_format: FileFormat::Auto,
            external_symbols: None,
            function_map: None,
            debug: None,
        }
    }
}

/// What the command line asks for.
#[derive(Clone, Debug, PartialEq)]
pub enum Parsed {
    /// Produce reports.
    Run(Box<GprofArgs>),
    /// `-h` / `--help`.
    Help,
    /// `-v` / `--version`.
    Version,
    /// A command-line error: the message for stderr, and whether the usage follows it.
    Error {
        /// gprof's message: bytes, since getopt echoes the offending bytes as they are.
        message: Vec<u8>,
        /// getopt errors are followed by the usage text.
        usage: bool,
    },
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum HasArg {
    No,
    Required,
    Optional,
}

/// Pseudo option codes for long-only options.
const OPT_DEMANGLE: char = '\u{1}';
const OPT_NO_DEMANGLE: char = '\u{2}';
const OPT_INLINE_FILE_NAMES: char = '\u{3}';

/// gprof's long options, in its table order (which is also the order of "possibilities").
const LONG: &[(&str, HasArg, char)] = &[
    ("line", HasArg::No, 'l'),
    ("no-static", HasArg::No, 'a'),
    ("ignore-non-functions", HasArg::No, 'D'),
    ("external-symbol-table", HasArg::Required, 'S'),
    ("annotated-source", HasArg::Optional, 'A'),
    ("no-annotated-source", HasArg::Optional, 'J'),
    ("flat-profile", HasArg::Optional, 'p'),
    ("no-flat-profile", HasArg::Optional, 'P'),
    ("graph", HasArg::Optional, 'q'),
    ("no-graph", HasArg::Optional, 'Q'),
    ("exec-counts", HasArg::Optional, 'C'),
    ("no-exec-counts", HasArg::Optional, 'Z'),
    ("function-ordering", HasArg::No, 'r'),
    ("file-ordering", HasArg::Required, 'R'),
    ("file-info", HasArg::No, 'i'),
    ("sum", HasArg::No, 's'),
    ("all-lines", HasArg::No, 'x'),
    ("demangle", HasArg::Optional, OPT_DEMANGLE),
    ("no-demangle", HasArg::No, OPT_NO_DEMANGLE),
    ("directory-path", HasArg::Required, 'I'),
    ("display-unused-functions", HasArg::No, 'z'),
    ("inline-file-names", HasArg::No, OPT_INLINE_FILE_NAMES),
    ("min-count", HasArg::Required, 'm'),
    ("print-path", HasArg::No, 'L'),
    ("separate-files", HasArg::No, 'y'),
    ("static-call-graph", HasArg::No, 'c'),
    ("table-length", HasArg::Required, 't'),
    ("time", HasArg::Required, 'n'),
    ("no-time", HasArg::Required, 'N'),
    ("width", HasArg::Required, 'w'),
    ("brief", HasArg::No, 'b'),
    ("debug", HasArg::Optional, 'd'),
    ("help", HasArg::No, 'h'),
    ("file-format", HasArg::Required, 'O'),
    ("traditional", HasArg::No, 'T'),
    ("version", HasArg::No, 'v'),
];

const SHORT: &str = "aA::bBcC::d::De:E:f:F:hiI:J::k:lLm:n:N:O:p::P::q::Q::rR:sS:t:Tvw:xyzZ::";

fn short_has_arg(c: char) -> Option<HasArg> {
    let b = SHORT.as_bytes();
    let i = SHORT.find(c)?;
    if c == ':' {
        return None;
    }
    Some(match (b.get(i + 1), b.get(i + 2)) {
        (Some(b':'), Some(b':')) => HasArg::Optional,
        (Some(b':'), _) => HasArg::Required,
        _ => HasArg::No,
    })
}

/// C's `atoi`: optional blanks and sign, then digits; 0 when there are none.
pub fn atoi(s: &str) -> i64 {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let mut v: i64 = 0;
    for b in digits.bytes().take_while(|b| b.is_ascii_digit()) {
        v = v.saturating_mul(10).saturating_add(i64::from(b - b'0'));
    }
    if neg { -v } else { v }
}

/// How many `@file` words libiberty's `expandargv` expands before it gives up (a response
/// file that names itself would loop forever).
const RESPONSE_FILE_LIMIT: usize = 2000;

/// Expands `@file` words like libiberty's `expandargv`: the file's words (separated by C's
/// `isspace` bytes, with single/double quotes and backslash escapes) replace the word, and are
/// looked at again, so a response file may name further response files. A word whose file does
/// not exist or cannot be read stays as it is. Words are bytes: Linux file names need not be
/// UTF-8. Errors (exit 1, no usage) are libiberty's: a directory, or too many expansions.
pub fn expand_response_files<S: AsRef<OsStr>>(
    args: &[S],
    whoami: &str,
) -> Result<Vec<OsString>, String> {
    let mut words: Vec<OsString> = args.iter().map(|a| a.as_ref().to_os_string()).collect();
    let mut budget = RESPONSE_FILE_LIMIT;
    let mut i = 0;
    while let Some(word) = words.get(i) {
        let Some(path) = word.as_bytes().strip_prefix(b"@").map(OsStr::from_bytes) else {
            i += 1;
            continue;
        };
        budget -= 1;
        if budget == 0 {
            return Err(format!("{whoami}: error: too many @-files encountered\n"));
        }
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => {
                return Err(format!("{whoami}: error: @-file refers to a directory\n"));
            }
            Ok(_) => {}
            Err(_) => {
                i += 1;
                continue;
            }
        }
        let Ok(bytes) = gmon_binary::open::read_named(std::path::Path::new(path)) else {
            i += 1;
            continue;
        };
        // The file's words take the @file's place and are examined in turn (nested @files).
        words.splice(i..=i, split_words(&bytes));
    }
    Ok(words)
}

/// libiberty's `buildargv` on bytes: C `isspace` separates words; a backslash takes the next
/// byte literally (inside quotes too); quotes group and vanish.
fn split_words(text: &[u8]) -> Vec<OsString> {
    let mut words = Vec::new();
    let mut cur: Vec<u8> = Vec::new();
    let mut in_word = false;
    let mut quote: Option<u8> = None;
    let mut bytes = text.iter().copied();
    while let Some(c) = bytes.next() {
        match (quote, c) {
            (_, b'\\') => {
                if let Some(n) = bytes.next() {
                    cur.push(n);
                }
                in_word = true;
            }
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, b'\'' | b'"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') => {
                if in_word {
                    words.push(OsString::from_vec(std::mem::take(&mut cur)));
                    in_word = false;
                }
            }
            (None, c) => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(OsString::from_vec(cur));
    }
    words
}

/// Parses gprof's arguments (without the program name). `whoami` prefixes messages.
///
/// Words are bytes, as getopt sees them: operands (the executable and the profiles) and the file
/// arguments of `-I`, `-R` and `-S` keep their bytes (Linux file names need not be UTF-8); other
/// option arguments are text (symspecs, numbers), read lossily if they are not UTF-8.
///
/// With `POSIXLY_CORRECT` in the environment (any value), glibc's getopt stops at the first
/// operand, and every later word is an operand too ([`parse_with`]).
pub fn parse<S: AsRef<OsStr>>(args: &[S], whoami: &str) -> Parsed {
    parse_with(args, whoami, std::env::var_os("POSIXLY_CORRECT").is_some())
}

/// [`parse`] with glibc's ordering chosen by the caller: `posixly_correct` stops option
/// parsing at the first operand (REQUIRE_ORDER) instead of permuting operands to the end.
pub fn parse_with<S: AsRef<OsStr>>(args: &[S], whoami: &str, posixly_correct: bool) -> Parsed {
    let args = match expand_response_files(args, whoami) {
        Ok(a) => a,
        Err(message) => {
            return Parsed::Error {
                message: message.into_bytes(),
                usage: false,
            };
        }
    };
    let mut a = GprofArgs::default();
    let mut positional: Vec<PathBuf> = Vec::new();
    let mut i = 0;
    let err = |message: String| Parsed::Error {
        message: message.into_bytes(),
        usage: true,
    };
    while i < args.len() {
        let Some(word_os) = args.get(i) else { break };
        let word = word_os.as_bytes();
        i += 1;
        if word == b"--" {
            positional.extend(args.iter().skip(i).map(PathBuf::from));
            break;
        }
        if let Some(body) = word.strip_prefix(b"--") {
            let (name_bytes, value) = match body.iter().position(|&b| b == b'=') {
                Some(e) => (
                    body.get(..e).unwrap_or_default(),
                    body.get(e + 1..)
                        .map(|v| OsStr::from_bytes(v).to_os_string()),
                ),
                None => (body, None),
            };
            let name = &*String::from_utf8_lossy(name_bytes);
            let exact = LONG.iter().find(|(n, _, _)| *n == name);
            let opt = match exact {
                Some(o) => *o,
                None => {
                    let cands: Vec<_> = LONG
                        .iter()
                        .filter(|(n, _, _)| n.starts_with(name))
                        .collect();
                    match cands.as_slice() {
                        [] => {
                            // getopt echoes the word's bytes as they are.
                            return Parsed::Error {
                                message: [
                                    whoami.as_bytes(),
                                    b": unrecognized option '",
                                    word,
                                    b"'\n",
                                ]
                                .concat(),
                                usage: true,
                            };
                        }
                        [one] => **one,
                        many => {
                            let first = many[0];
                            if many.iter().all(|c| c.1 == first.1 && c.2 == first.2) {
                                *first
                            } else {
                                let mut m = format!(
                                    "{whoami}: option '--{name}' is ambiguous; possibilities:"
                                );
                                for c in many {
                                    m.push_str(&format!(" '--{}'", c.0));
                                }
                                m.push('\n');
                                return err(m);
                            }
                        }
                    }
                }
            };
            let (lname, has, code) = opt;
            let value = match has {
                HasArg::No => {
                    if value.is_some() {
                        return err(format!(
                            "{whoami}: option '--{lname}' doesn't allow an argument\n"
                        ));
                    }
                    None
                }
                HasArg::Optional => value,
                HasArg::Required => match value {
                    Some(v) => Some(v),
                    None => match args.get(i) {
                        Some(v) => {
                            i += 1;
                            Some(v.clone())
                        }
                        None => {
                            return err(format!(
                                "{whoami}: option '--{lname}' requires an argument\n"
                            ));
                        }
                    },
                },
            };
            if let Some(p) = apply(&mut a, code, value, whoami) {
                return p;
            }
            continue;
        }
        if let Some(letters) = word.strip_prefix(b"-").filter(|l| !l.is_empty()) {
            let mut k = 0;
            while let Some(&byte) = letters.get(k) {
                k += 1;
                // getopt works on bytes; a non-ASCII byte is never one of gprof's letters.
                let c = if byte.is_ascii() {
                    char::from(byte)
                } else {
                    '\u{fffd}'
                };
                let Some(has) = short_has_arg(c) else {
                    return Parsed::Error {
                        message: [whoami.as_bytes(), b": invalid option -- '", &[byte], b"'\n"]
                            .concat(),
                        usage: true,
                    };
                };
                let rest = letters.get(k..).unwrap_or_default();
                let value = match has {
                    HasArg::No => None,
                    HasArg::Optional => {
                        k = letters.len();
                        (!rest.is_empty()).then(|| OsStr::from_bytes(rest).to_os_string())
                    }
                    HasArg::Required => {
                        k = letters.len();
                        if !rest.is_empty() {
                            Some(OsStr::from_bytes(rest).to_os_string())
                        } else if let Some(v) = args.get(i) {
                            i += 1;
                            Some(v.clone())
                        } else {
                            return err(format!(
                                "{whoami}: option requires an argument -- '{c}'\n"
                            ));
                        }
                    }
                };
                if let Some(p) = apply(&mut a, c, value, whoami) {
                    return p;
                }
            }
            continue;
        }
        positional.push(PathBuf::from(word_os));
        if posixly_correct {
            positional.extend(args.iter().skip(i).map(PathBuf::from));
            break;
        }
    }
    let mut pos = positional.into_iter();
    if let Some(img) = pos.next() {
        a.image = img;
    }
    a.profiles = pos.collect();
    if a.profiles.is_empty() {
        a.profiles.push("gmon.out".into());
    }
    Parsed::Run(Box::new(a))
}

fn spec(a: &mut GprofArgs, s: &str, table: TableId) {
    a.specs.push(SymSpec {
        spec: s.to_string(),
        table,
    });
}

/// Applies one option; returns `Some` when parsing must stop (help, version, error).
fn apply(a: &mut GprofArgs, c: char, raw: Option<OsString>, whoami: &str) -> Option<Parsed> {
    use style::*;
    // Symspecs and numbers are text; file names (`-I`, `-R`) keep `raw`'s bytes.
    let v = raw.as_ref().map(|r| r.to_string_lossy().into_owned());
    let arg = v.clone().unwrap_or_default();
    match c {
        'a' => a.no_static = true,
        'A' => {
            if let Some(s) = &v {
                spec(a, s, TableId::InclAnno);
            }
            a.output_style |= ANNOTATED_SOURCE;
            a.user_specified |= ANNOTATED_SOURCE;
        }
        'b' => a.brief = true,
        'B' => {
            a.output_style |= CALL_GRAPH;
            a.user_specified |= CALL_GRAPH;
        }
        'c' => a.static_call_graph = true,
        'C' => {
            if let Some(s) = &v {
                spec(a, s, TableId::InclExec);
            }
            a.output_style |= EXEC_COUNTS;
            a.user_specified |= EXEC_COUNTS;
        }
        'd' => a.debug = Some(arg),
        'D' => a.ignore_non_functions = true,
        'e' => spec(a, &arg, TableId::ExclGraph),
        'E' => {
            spec(a, &arg, TableId::ExclGraph);
            spec(a, &arg, TableId::ExclTime);
        }
        'f' => spec(a, &arg, TableId::InclGraph),
        'F' => {
            spec(a, &arg, TableId::InclGraph);
            spec(a, &arg, TableId::InclTime);
        }
        'h' => return Some(Parsed::Help),
        'i' => {
            a.output_style |= GMON_INFO;
            a.user_specified |= GMON_INFO;
        }
        'I' => a.directories.extend(
            raw.as_ref()
                .map_or(&[][..], |r| r.as_bytes())
                .split(|&b| b == b':')
                .filter(|d| !d.is_empty())
                .map(|d| OsStr::from_bytes(d).to_os_string()),
        ),
        'J' => {
            if let Some(s) = &v {
                spec(a, s, TableId::ExclAnno);
                a.output_style |= ANNOTATED_SOURCE;
            } else {
                a.output_style &= !ANNOTATED_SOURCE;
            }
            a.user_specified |= ANNOTATED_SOURCE;
        }
        'k' => spec(a, &arg, TableId::ExclArcs),
        'l' => a.line = true,
        'L' => a.print_path = true,
        'm' => a.min_count = strtoul(&arg),
        'n' => spec(a, &arg, TableId::InclTime),
        'N' => spec(a, &arg, TableId::ExclTime),
        'O' => {
            a.file_format = match arg.as_bytes().first() {
                Some(b'a') => FileFormat::Auto,
                Some(b'm') => FileFormat::Magic,
                Some(b'b') => FileFormat::Bsd,
                Some(b'4') => FileFormat::Bsd44,
                Some(b'p') => FileFormat::Prof,
                // gprof swaps the two arguments of this message.
                _ => {
                    return Some(Parsed::Error {
                        message: format!("{arg}: unknown file format {whoami}\n").into_bytes(),
                        usage: false,
                    });
                }
            }
        }
        'p' => {
            if let Some(s) = &v {
                spec(a, s, TableId::InclFlat);
            }
            a.output_style |= FLAT_PROFILE;
            a.user_specified |= FLAT_PROFILE;
        }
        'P' => {
            if let Some(s) = &v {
                spec(a, s, TableId::ExclFlat);
                a.output_style |= FLAT_PROFILE;
            } else {
                a.output_style &= !FLAT_PROFILE;
            }
            a.user_specified |= FLAT_PROFILE;
        }
        'q' => {
            if let Some(s) = &v {
                let t = if s.contains('/') {
                    TableId::InclArcs
                } else {
                    TableId::InclGraph
                };
                spec(a, s, t);
            }
            a.output_style |= CALL_GRAPH;
            a.user_specified |= CALL_GRAPH;
        }
        'Q' => {
            if let Some(s) = &v {
                let t = if s.contains('/') {
                    TableId::ExclArcs
                } else {
                    TableId::ExclGraph
                };
                spec(a, s, t);
                a.output_style |= CALL_GRAPH;
            } else {
                a.output_style &= !CALL_GRAPH;
            }
            a.user_specified |= CALL_GRAPH;
        }
        'r' => {
            a.output_style |= FUNCTION_ORDER;
            a.user_specified |= FUNCTION_ORDER;
        }
        'R' => {
            a.output_style |= FILE_ORDER;
            a.user_specified |= FILE_ORDER;
            a.function_map = Some(PathBuf::from(raw.unwrap_or_default()));
        }
        's' => {
            a.output_style |= SUMMARY_FILE;
            a.user_specified |= SUMMARY_FILE;
        }
        'S' => a.external_symbols = Some(PathBuf::from(raw.unwrap_or_default())),
        't' => a.table_length = atoi(&arg).clamp(0, i64::from(i32::MAX)) as i32,
        'T' => a.bsd_style = true,
        'v' => return Some(Parsed::Version),
        'w' => a.width = atoi(&arg).clamp(1, i64::from(i32::MAX)) as i32,
        'x' => a.all_lines = true,
        'y' => a.separate_files = true,
        'z' => a.display_unused = true,
        'Z' => {
            if let Some(s) = &v {
                spec(a, s, TableId::ExclExec);
                a.output_style |= EXEC_COUNTS;
            } else {
                a.output_style &= !EXEC_COUNTS;
            }
            a.user_specified |= EXEC_COUNTS;
        }
        OPT_DEMANGLE => {
            a.demangle = true;
            if let Some(s) = &v {
                match Style::from_name(s) {
                    Some(st) => a.demangle_style = st,
                    None => {
                        return Some(Parsed::Error {
                            message: format!("{whoami}: unknown demangling style `{s}'\n")
                                .into_bytes(),
                            usage: false,
                        });
                    }
                }
            }
        }
        OPT_NO_DEMANGLE => a.demangle = false,
        OPT_INLINE_FILE_NAMES => a.inline_file_names = true,
        _ => {
            return Some(Parsed::Error {
                message: format!("{whoami}: invalid option -- '{c}'\n").into_bytes(),
                usage: true,
            });
        }
    }
    None
}

/// C's `strtoul(s, NULL, 10)` (negative values wrap like C's).
fn strtoul(s: &str) -> u64 {
    atoi(s) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(v: &[&str]) -> GprofArgs {
        match parse(
            &v.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            "gprof",
        ) {
            Parsed::Run(a) => *a,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn optional_args_attach_and_clusters() {
        let a = run(&["-bpmain", "prog", "g1", "g2"]);
        assert!(a.brief);
        assert_eq!(
            a.specs,
            vec![SymSpec {
                spec: "main".into(),
                table: TableId::InclFlat
            }]
        );
        assert_eq!(a.image, PathBuf::from("prog"));
        assert_eq!(a.profiles, vec![PathBuf::from("g1"), PathBuf::from("g2")]);
        let a = run(&["-p", "main"]);
        assert_eq!(a.image, PathBuf::from("main"));
        assert!(a.specs.is_empty());
        let a = run(&["prog", "-e", "f", "--flat-profile=g", "--gr"]);
        assert_eq!(a.specs.len(), 2);
        assert_eq!(a.output_style, style::FLAT_PROFILE | style::CALL_GRAPH);
        assert_eq!(a.profiles, vec![PathBuf::from("gmon.out")]);
    }

    #[test]
    fn response_files_nest_and_keep_bytes() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let inner = dir.path().join("inner");
        let outer = dir.path().join("outer");
        std::fs::write(&inner, b"-p 'my prog' \"g\\\"x\" caf\xe9\xa0.out\x0b\n")
            .unwrap_or_else(|e| panic!("{e}"));
        let mut o = b"-b\t@".to_vec();
        o.extend_from_slice(inner.as_os_str().as_bytes());
        std::fs::write(&outer, o).unwrap_or_else(|e| panic!("{e}"));
        let arg = |b: &[u8]| OsStr::from_bytes(b).to_os_string();
        let mut at_outer = b"@".to_vec();
        at_outer.extend_from_slice(outer.as_os_str().as_bytes());
        let got = expand_response_files(&[arg(&at_outer), arg(b"@/nonexistent/x")], "gprof");
        assert_eq!(
            got,
            Ok(vec![
                arg(b"-b"),
                arg(b"-p"),
                arg(b"my prog"),
                arg(b"g\"x"),
                // 0xa0 is not a C-locale space: it stays in the word; \v separates.
                arg(b"caf\xe9\xa0.out"),
                arg(b"@/nonexistent/x"),
            ])
        );
        let looping = dir.path().join("loop");
        let mut l = b"@".to_vec();
        l.extend_from_slice(looping.as_os_str().as_bytes());
        std::fs::write(&looping, &l).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            expand_response_files(&[arg(&l)], "gprof"),
            Err("gprof: error: too many @-files encountered\n".to_string())
        );
        let mut d = b"@".to_vec();
        d.extend_from_slice(dir.path().as_os_str().as_bytes());
        assert_eq!(
            expand_response_files(&[arg(&d)], "gprof"),
            Err("gprof: error: @-file refers to a directory\n".to_string())
        );
        // getopt echoes an unknown option byte as it is.
        let p = parse(&[arg(b"-b\xa0")], "gprof");
        assert!(
            matches!(p, Parsed::Error { ref message, usage: true } if message == b"gprof: invalid option -- '\xa0'\n")
        );
    }

    #[test]
    fn posixly_correct_stops_at_the_first_operand() {
        let p = parse_with(&["prog", "-b", "gmon.out"], "gprof", true);
        let Parsed::Run(a) = p else { panic!("{p:?}") };
        assert!(!a.brief);
        assert_eq!(a.image, PathBuf::from("prog"));
        assert_eq!(
            a.profiles,
            vec![PathBuf::from("-b"), PathBuf::from("gmon.out")]
        );
        let p = parse_with(&["prog", "-b", "gmon.out"], "gprof", false);
        assert!(
            matches!(p, Parsed::Run(ref a) if a.brief && a.profiles == vec![PathBuf::from("gmon.out")])
        );
    }

    #[test]
    fn errors() {
        let p = parse(&["--no".to_string()], "gprof");
        assert!(
            matches!(p, Parsed::Error { ref message, .. } if message.starts_with(b"gprof: option '--no' is ambiguous"))
        );
        let p = parse(&["-e".to_string()], "gprof");
        assert_eq!(
            p,
            Parsed::Error {
                message: "gprof: option requires an argument -- 'e'\n".into(),
                usage: true
            }
        );
        let p = parse(&["-Ox".to_string()], "gprof");
        assert_eq!(
            p,
            Parsed::Error {
                message: "x: unknown file format gprof\n".into(),
                usage: false
            }
        );
    }
}
