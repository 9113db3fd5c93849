//! `gmon man`: manual pages (roff) for `gmon` and each subcommand, rendered by clap_mangen from
//! the clap definitions the command line uses, so the pages cannot drift from `--help`.
//! `gmon-gprof.1` takes its options from the gprof engine's own help text, since that command
//! line is parsed by the engine, not by clap.
//!
//! A page has the sections man-pages(7) asks for, in its order: NAME, SYNOPSIS, DESCRIPTION,
//! OPTIONS, EXIT STATUS, ENVIRONMENT, FILES, EXAMPLES, SEE ALSO. The long help's text after
//! the options is cut at its upper-case headings (`EXAMPLES:`, `EXIT STATUS:`, ...): a heading
//! that man-pages(7) names becomes that section, any other a subsection of DESCRIPTION, and
//! untitled paragraphs join DESCRIPTION. What the help does not say (the common exit status,
//! the environment, the files, the related pages) comes from the tables below.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::bail;
use clap_mangen::Man;
use clap_mangen::roff::{Roff, bold, roman};

use crate::commands::write_output;

/// Arguments of `gmon man`.
#[derive(Debug, clap::Args)]
#[command(after_help = "EXAMPLES:\n  \
    gmon man | man -l -                        read gmon(1)\n  \
    gmon man flame | man -l -                  read gmon-flame(1)\n  \
    gmon man --dir ~/.local/share/man/man1     install every page (then `man gmon-flame`)")]
pub struct Args {
    /// The subcommand whose page to print (`gmon` or none: gmon's own page).
    #[arg(value_name = "SUBCOMMAND", conflicts_with = "dir")]
    pub subcommand: Option<String>,
    /// Write every page (gmon.1, gmon-SUBCOMMAND.1) into DIR, created if missing, instead of
    /// printing one.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// One environment variable: its name, the subcommands whose behaviour it changes (the top page
/// lists them all) and what it does.
struct EnvVar {
    name: &'static str,
    pages: &'static [&'static str],
    meaning: &'static str,
}

/// Every environment variable gmon or its runtime reads (tests/it/outputs.rs checks the sources
/// and README's "Environment" section against gmon(1)'s ENVIRONMENT).
const ENVIRONMENT: &[EnvVar] = &[
    EnvVar {
        name: "GMON_WRITE_LIB",
        pages: &["record"],
        meaning: "The runtime library to preload instead of the copy embedded in gmon \
                  (an error when it does not exist).",
    },
    EnvVar {
        name: "XDG_CACHE_HOME",
        pages: &["record"],
        meaning: "Where the embedded runtime library is cached (XDG_CACHE_HOME/gmon/HASH/), \
                  when it is an absolute path.",
    },
    EnvVar {
        name: "HOME",
        pages: &["record"],
        meaning: "Without XDG_CACHE_HOME, the library is cached in HOME/.cache/gmon/HASH/ (when \
                  HOME is unset, in the password database's home; else in XDG_RUNTIME_DIR).",
    },
    EnvVar {
        name: "TMPDIR",
        pages: &["record"],
        meaning: "Where the run's private directory is made (see spec/runtime.md §3 for the \
                  choice between TMPDIR, XDG_RUNTIME_DIR, /dev/shm and /tmp).",
    },
    EnvVar {
        name: "XDG_RUNTIME_DIR",
        pages: &["record"],
        meaning: "Used for the run's private directory when it is the user's own 0700 \
                  directory on a memory file system and TMPDIR is unset.",
    },
    EnvVar {
        name: "LD_PRELOAD",
        pages: &["record"],
        meaning: "Kept: the runtime library is put before the libraries it already names.",
    },
    EnvVar {
        name: "GMON_RECORD_UNWIND",
        pages: &["record"],
        meaning: "fp: walk frame pointers in the signal handler; dwarf (the default): unwind \
                  each stack with the objects' .eh_frame.",
    },
    EnvVar {
        name: "GMON_RECORD_CLOCK",
        pages: &["record"],
        meaning: "timer: sample with each thread's POSIX CPU timer instead of a perf task clock \
                  (which is used when the kernel allows it; the summary says which ran).",
    },
    EnvVar {
        name: "GMON_RECORD_OUT",
        pages: &["record"],
        meaning: "Set by gmon record for the runtime: the profile to write. A program started \
                  with LD_PRELOAD=libgmon_write.so and this variable set is profiled without \
                  gmon record.",
    },
    EnvVar {
        name: "GMON_RECORD_HZ",
        pages: &["record"],
        meaning: "Set by gmon record (--hz): the sampling rate, per second of each thread's \
                  CPU time.",
    },
    EnvVar {
        name: "GMON_RECORD_STACKS",
        pages: &["record"],
        meaning: "Set by gmon record: 0 (--no-stacks) records no call stacks.",
    },
    EnvVar {
        name: "GMON_RECORD_INHERIT",
        pages: &["record"],
        meaning: "Set by gmon record: 0 (--no-inherit) profiles the first process only.",
    },
    EnvVar {
        name: "GMON_RECORD_PRIVATE",
        pages: &["record"],
        meaning: "Set by gmon record: 1 says GMON_RECORD_OUT's directory is the run's private \
                  directory, checked before each write; problems go to its notes, not to the \
                  program's stderr.",
    },
    EnvVar {
        name: "GMON_RECORD_OWNER",
        pages: &["record"],
        meaning: "Set by the runtime: the pid of the process that claimed GMON_RECORD_OUT; \
                  other processes write GMON_RECORD_OUT.PID.",
    },
    EnvVar {
        name: "GMON_OUT_PREFIX",
        pages: &[],
        meaning: "A program linked with the gmon-write runtime writes PREFIX.PID instead of \
                  gmon.out, as glibc's -pg runtime does.",
    },
    EnvVar {
        name: "GMON_PROFIL_HZ",
        pages: &[],
        meaning: "The sampling rate of the runtime's gmon_profil and gmon_pcsample (default \
                  100).",
    },
    EnvVar {
        name: "GPROF_PATH",
        pages: &["gprof"],
        meaning: "Directories searched for source files by -A (annotated source), as GNU \
                  gprof searches them.",
    },
    EnvVar {
        name: "POSIXLY_CORRECT",
        pages: &["gprof"],
        meaning: "Options stop at the first operand, as in GNU gprof's getopt.",
    },
];

/// The files a subcommand reads or writes by default.
fn files(page: &str) -> &'static [(&'static str, &'static str)] {
    match page {
        "gprof" => &[
            ("a.out", "The executable when none is named."),
            ("gmon.out", "The profile when none is named."),
            ("gmon.sum", "What -s writes."),
        ],
        "merge" => &[("gmon.sum", "The output when -o is not given.")],
        "pprof" => &[("profile.pb.gz", "The output when -o is not given.")],
        "report" => &[
            ("profile.html", "The output when -o is not given."),
            (
                "GMON.gmonx",
                "The runtime's sidecar beside a profile: exact stacks, objects and build ids.",
            ),
        ],
        "flame" | "diff" | "dump" | "callgrind" => &[(
            "GMON.gmonx",
            "The runtime's sidecar beside a profile: exact stacks, objects and build ids.",
        )],
        "record" => &[
            ("gmon.out", "The profile when -o is not given."),
            (
                "OUT.gmonx",
                "Each profile's sidecar (stacks, objects, build ids).",
            ),
            (
                "OUT.NAME",
                "The profile of every other executable of the process tree.",
            ),
            (
                "~/.cache/gmon/HASH/libgmon_write.so",
                "The cached runtime library (see ENVIRONMENT).",
            ),
        ],
        _ => &[],
    }
}

/// Related pages, beyond gmon(1) and the other subcommands' pages.
fn see_also(page: &str) -> &'static [&'static str] {
    match page {
        "gprof" | "merge" | "dump" | "convert" => &["gprof(1)"],
        "record" => &["gprof(1)", "perf-record(1)", "ld.so(8)"],
        "flame" | "pprof" | "diff" | "report" => &["gprof(1)", "perf-report(1)"],
        "callgrind" => &["gprof(1)", "callgrind_annotate(1)", "kcachegrind(1)"],
        _ => &[],
    }
}

/// The exit status, unless the help text says it (`EXIT STATUS:`).
const DEFAULT_EXIT_STATUS: &str = "0 on success. 1 when an input cannot be read or an output \
    cannot be written; the message on standard error names the file and, for a malformed \
    profile, the byte offset and what was expected. 2 for a usage error.";

/// gprof's exit status, which `gmon gprof` keeps.
const GPROF_EXIT_STATUS: &str = "As GNU gprof 2.40's: 0 when the reports were printed, 1 when \
    the executable or a profile cannot be read or an option is wrong (the message is GNU's).";

/// The top-level command `cli` as the pages describe it: the built-in `help` subcommand has no
/// page.
fn command(cli: clap::Command) -> clap::Command {
    let mut cmd = cli.disable_help_subcommand(true);
    cmd.build();
    cmd
}

/// Every page: (file name, roff text).
fn pages(cli: clap::Command) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    let top = command(cli);
    let subs: Vec<String> = top
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| s.get_name().to_owned())
        .collect();
    let mut pages = vec![render(&top, None, &subs)?];
    for sub in top.get_subcommands().filter(|s| !s.is_hide_set()) {
        pages.push(render(sub, Some(sub.get_name()), &subs)?);
    }
    Ok(pages)
}

/// The help text after the options cut at its headings: (heading, paragraphs). The untitled
/// text before the first heading has the heading "".
fn help_sections(text: &str) -> Vec<(String, Vec<String>)> {
    let mut sections: Vec<(String, Vec<String>)> = vec![(String::new(), Vec::new())];
    let mut para = String::new();
    let flush = |para: &mut String, sections: &mut Vec<(String, Vec<String>)>| {
        if !para.trim().is_empty() {
            let body = std::mem::take(para);
            sections
                .last_mut()
                .unwrap()
                .1
                .push(body.trim_end().to_owned());
        }
        para.clear();
    };
    for line in text.lines() {
        if let Some(heading) = heading(line) {
            flush(&mut para, &mut sections);
            sections.push((heading.to_owned(), Vec::new()));
        } else if line.trim().is_empty() {
            flush(&mut para, &mut sections);
        } else {
            para.push_str(line);
            para.push('\n');
        }
    }
    flush(&mut para, &mut sections);
    sections.retain(|(h, body)| !h.is_empty() || !body.is_empty());
    sections
}

/// `EXIT STATUS:` → `EXIT STATUS`: a line of capitals (and spaces, digits, punctuation inside
/// parentheses) ending in a colon.
fn heading(line: &str) -> Option<&str> {
    let h = line.strip_suffix(':')?;
    let first = h.chars().next()?;
    let before_paren = h.split('(').next().unwrap_or(h);
    (first.is_ascii_uppercase()
        && before_paren
            .chars()
            .all(|c| c.is_ascii_uppercase() || c == ' ' || c.is_ascii_digit()))
    .then_some(h.trim_end())
}

/// Writes a paragraph: examples and indented lines of a list as they are laid out, prose (one
/// line, or lines that are not all indented) filled.
fn paragraph(roff: &mut Roff, text: &str, laid_out: bool) {
    let lines = text.lines().count();
    if laid_out || (lines > 1 && text.lines().all(|l| l.starts_with("  "))) {
        roff.control("PP", []).control("nf", []);
        for line in text.lines() {
            roff.text([roman(line.strip_prefix("  ").unwrap_or(line))]);
        }
        roff.control("fi", []);
    } else {
        let joined: Vec<&str> = text.lines().map(str::trim).collect();
        roff.control("PP", []).text([roman(joined.join(" "))]);
    }
}

/// One page. A subcommand's page is named `gmon-SUBCOMMAND` (clap's display name); `sub` is
/// the subcommand's name, `None` for gmon(1); `subs` every subcommand, for SEE ALSO.
fn render(
    cmd: &clap::Command,
    sub: Option<&str>,
    subs: &[String],
) -> anyhow::Result<(String, Vec<u8>)> {
    let man = Man::new(cmd.clone());
    let key = sub.unwrap_or("");
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;

    let after = cmd
        .get_after_long_help()
        .or(cmd.get_after_help())
        .map(|t| t.to_string())
        .unwrap_or_default();
    let sections = help_sections(&after);
    let find = |name: &str| {
        sections
            .iter()
            .find(|(h, _)| h == name)
            .map(|(_, b)| b.as_slice())
    };
    const STANDARD: [&str; 5] = [
        "EXIT STATUS",
        "ENVIRONMENT",
        "FILES",
        "EXAMPLES",
        "SEE ALSO",
    ];

    // DESCRIPTION goes on: untitled paragraphs, then every other heading as a subsection.
    let mut roff = Roff::new();
    for (h, body) in &sections {
        if STANDARD.contains(&h.as_str()) {
            continue;
        }
        if !h.is_empty() {
            roff.control("SS", [h.as_str()]);
        }
        for p in body {
            paragraph(&mut roff, p, false);
        }
    }
    roff.to_writer(&mut out)?;

    if sub == Some("gprof") {
        gprof_options(&mut out)?;
    } else {
        man.render_options_section(&mut out)?;
        if cmd.has_subcommands() {
            man.render_subcommands_section(&mut out)?;
        }
    }

    let mut roff = Roff::new();
    roff.control("SH", ["EXIT STATUS"]);
    match (find("EXIT STATUS"), sub) {
        (Some(body), _) => body.iter().for_each(|p| paragraph(&mut roff, p, false)),
        (None, Some("gprof")) => paragraph(&mut roff, GPROF_EXIT_STATUS, false),
        (None, _) => paragraph(&mut roff, DEFAULT_EXIT_STATUS, false),
    }

    let vars: Vec<&EnvVar> = ENVIRONMENT
        .iter()
        .filter(|v| sub.is_none() || v.pages.contains(&key))
        .collect();
    if !vars.is_empty() || find("ENVIRONMENT").is_some() {
        roff.control("SH", ["ENVIRONMENT"]);
        for p in find("ENVIRONMENT").unwrap_or_default() {
            paragraph(&mut roff, p, false);
        }
        for v in vars {
            roff.control("TP", [])
                .text([bold(v.name)])
                .text([roman(v.meaning)]);
        }
    }

    let files = files(key);
    if !files.is_empty() {
        roff.control("SH", ["FILES"]);
        for (name, what) in files {
            roff.control("TP", [])
                .text([bold(*name)])
                .text([roman(*what)]);
        }
    }

    if let Some(body) = find("EXAMPLES") {
        roff.control("SH", ["EXAMPLES"]);
        body.iter().for_each(|p| paragraph(&mut roff, p, true));
    }

    roff.control("SH", ["SEE ALSO"]);
    let mut refs: Vec<String> = match sub {
        None => subs.iter().map(|s| format!("gmon-{s}(1)")).collect(),
        Some(_) => vec!["gmon(1)".to_owned()],
    };
    refs.extend(see_also(key).iter().map(|s| s.to_string()));
    roff.text([roman(refs.join(", "))]);
    roff.to_writer(&mut out)?;

    if cmd.get_version().is_some() {
        man.render_version_section(&mut out)?;
    }
    Ok((man.get_filename(), out))
}

/// `gmon gprof`'s options: the engine's help text, kept as it is laid out.
fn gprof_options(w: &mut dyn Write) -> std::io::Result<()> {
    let mut roff = Roff::new();
    roff.control("SH", ["OPTIONS"]).control("nf", []);
    for line in crate::gprof::text::run::HELP.lines() {
        roff.text([roman(line)]);
    }
    roff.control("fi", []);
    roff.to_writer(w)
}

/// Runs `gmon man`: the pages of `cli`, the whole command line (given by the caller, which
/// defines it: this module does not import it).
pub fn run(args: Args, cli: clap::Command, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let pages = pages(cli)?;
    if let Some(dir) = &args.dir {
        std::fs::create_dir_all(dir)
            .map_err(|e| anyhow::anyhow!("{}: {}", dir.display(), crate::output::os_reason(&e)))?;
        for (name, text) in &pages {
            write_output(&dir.join(name), |w| Ok(w.write_all(text)?))?;
        }
        eprintln!("gmon man: wrote {} pages to {}", pages.len(), dir.display());
        return Ok(ExitCode::SUCCESS);
    }
    let wanted = match args.subcommand.as_deref() {
        None | Some("gmon") => "gmon.1".to_owned(),
        Some(sub) => format!("gmon-{sub}.1"),
    };
    let Some((_, text)) = pages.iter().find(|(name, _)| *name == wanted) else {
        let names: Vec<&str> = pages
            .iter()
            .filter_map(|(n, _)| n.strip_prefix("gmon-")?.strip_suffix(".1"))
            .collect();
        bail!(
            "no manual page for `{}`; the pages are: gmon, {}",
            args.subcommand.as_deref().unwrap_or_default(),
            names.join(", ")
        );
    };
    out.write_all(text)?;
    Ok(ExitCode::SUCCESS)
}
