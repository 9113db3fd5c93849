//! `gmon flame`: a flame graph (SVG) or folded stacks from gmon.out files.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

use crate::commands::write_output;
use crate::diff::FramePart;
use crate::flame::{self, DiffColours, SvgOptions, folded_lines};
use crate::model;

use super::diff::{DiffSides, load_new, print_notes};

/// Arguments of `gmon flame`.
#[derive(Debug, clap::Args)]
#[command(
    about = "Draw a flame graph (SVG) or print folded stacks",
    // The subcommand's doc comment in cli.rs sets `about` and `long_about`, so the long
    // description goes into `after_help`, which is shown with both -h and --help.
    after_help = "Draw a flame graph (SVG on stdout) from one or more gmon.out files, summed.\n\n\
gmon.out holds a PC histogram and call counts, not stacks: each function's self samples are \
spread over its callers in proportion to call counts, up to the roots, with cycles collapsed as \
gprof collapses them (spec/stacks.md). The subtitle says \"stacks estimated from call counts\". \
When the gmon-write runtime stored sampled stacks next to the profile (GMON.gmonx), those exact \
stacks are drawn instead and the subtitle says so. Samples outside every function are not drawn; \
the subtitle gives their number. Functions the compiler inlined are frames above the function \
holding their code, named \"NAME [inlined]\" (from the DWARF inline entries at the sampled \
addresses; --no-inline leaves them out).\n\nThe executable comes first (as gprof takes it) or with --exe. A \
profile that cannot belong to it is refused, naming the failed check (build id, histogram range, \
arc addresses, arc callees, samples in functions; spec/stacks.md §10); --force reads it anyway.\n\nOptions have inferno's names and meanings. Changed: --reverse used to \
draw an icicle graph; that is --inverted now, and --reverse reverses each stack as inferno's does. \
--min-width still works for --minwidth.\n\nProfiles of several executables, as `gmon record` writes them for a \
process tree (OUT for the command, OUT.NAME for each other executable it ran), are drawn in one \
graph with a root frame per executable, each read with its own executable; the subtitle gives \
each one's samples. Pass them all: `gmon flame OUT OUT.*` (sidecars named beside their profiles \
are read with them).\n\n--diff draws NEW's shape and colours each frame by the change in its share of \
the samples (BASE scaled to NEW's total, as inferno-diff-folded -n and gmon diff), --raw-counts by \
the change in raw counts; the subtitle says which. Each frame's stack is tested as gmon diff \
tests a function, with its options (--level, --min-samples, --dispersion): red or blue only \
where the change is more than noise, grey where it is noise or too few samples; the subtitle \
counts the changes and its tooltip names the noise model. One profile a side (BASE NEW) is tested against sampling \
noise; several runs a side (--base A1 A2 A3 --new B1 B2 B3) against the spread the runs \
themselves show, which is usually larger. Two recorded process trees (--base OUT_a OUT_a.* \
--new OUT_b OUT_b.*, or several recordings a side: --base a1/OUT a1/OUT.* a2/OUT a2/OUT.* \
...) are drawn with a root frame per executable, each compared with its counterpart as gmon \
diff compares them.\n\nEXAMPLES:\n  gmon flame gmon.out > out.svg                 ./a.out, or the executable the runtime recorded\n  gmon flame ./prog gmon.out gmon.2.out > out.svg\n  gmon flame --folded --exe ./prog gmon.out     folded stacks (root;...;leaf N)\n  gmon flame --inverted --minwidth 0.5 --colors mem ./prog gmon.out > icicle.svg\n  gmon flame --diff --exe ./prog before.out after.out > diff.svg\n  gmon flame build.out build.out.* > tree.svg   a recorded `make`: a root per executable\n  gmon flame --diff --exe ./prog-v1 --new-exe ./prog-v2 v1.out v2.out > diff.svg\n  \
gmon flame --diff --exe ./prog --base a1.out a2.out a3.out --new b1.out b2.out b3.out > diff.svg\n  \
gmon flame --diff --base a?/OUT a?/OUT.* --new b?/OUT b?/OUT.* > tree.svg"
)]
pub struct Args {
    /// The profiled executable (default: the one the runtime's sidecar names, else ./a.out).
    #[arg(long, value_name = "EXECUTABLE")]
    pub exe: Option<PathBuf>,
    /// gmon.out files; several are summed (with --diff: exactly BASE and NEW, unless --base and
    /// --new give them). gprof's order, an executable first, is accepted too.
    #[arg(value_name = "GMON", required_unless_present = "base")]
    pub gmon: Vec<PathBuf>,
    /// Read a profile that fails the checks that it belongs to the executable (build id,
    /// histogram range, arc addresses, samples in functions).
    #[arg(long)]
    pub force: bool,
    /// Print folded stacks (`root;caller;leaf N`) instead of SVG.
    #[arg(long)]
    pub folded: bool,
    /// Leave out the frames of inlined functions. By default, where a sample fell in code the
    /// compiler inlined, the inlined functions are frames above the function holding the code
    /// (innermost on top), named `NAME [inlined]`, from the DWARF inline entries.
    #[arg(long)]
    pub no_inline: bool,
    /// Differential flame graph: GMON... must be BASE NEW, or give the sides with --base and
    /// --new (several runs a side, or recorded process trees).
    #[arg(long)]
    pub diff: bool,
    /// With --diff: the runs of each side (--base/--new), NEW's executable (--new-exe) and the
    /// noise options, as `gmon diff` takes them.
    #[command(flatten)]
    pub sides: DiffSides,
    /// Title at the top of the graph.
    #[arg(long, default_value = "Flame Graph")]
    pub title: String,
    /// Text before the subtitle (which always says where the stacks came from).
    #[arg(long, value_name = "TEXT")]
    pub subtitle: Option<String>,
    /// Icicle graph: roots at the top, growing down (gmon's old --reverse).
    #[arg(long)]
    pub inverted: bool,
    /// Reverse each stack (leaf first) before drawing, as inferno's --reverse. (It used to draw
    /// an icicle graph: that is --inverted.)
    #[arg(long)]
    pub reverse: bool,
    /// Leave out frames narrower than this percentage of the width (--min-width still works).
    #[arg(
        long,
        visible_alias = "min-width",
        value_name = "PERCENT",
        default_value_t = 0.1
    )]
    pub minwidth: f64,
    /// Width of the image in pixels (default: inferno's fluid width).
    #[arg(long, value_name = "PIXELS")]
    pub width: Option<usize>,
    /// Font size.
    #[arg(long, value_name = "SIZE", default_value_t = 12)]
    pub fontsize: usize,
    /// What a sample is called in the tooltips.
    #[arg(long, value_name = "NAME", default_value = "samples")]
    pub countname: String,
    /// Notes stored in the SVG's notes element.
    #[arg(long, value_name = "TEXT", default_value = "")]
    pub notes: String,
    /// Colour palette: hot, mem, io, red, green, blue, aqua, yellow, purple, orange, java, js,
    /// perl, python, rust, wakeup.
    #[arg(long, value_name = "PALETTE", default_value = "hot")]
    pub colors: inferno::flamegraph::Palette,
    /// Colours by a hash of the function name, so the same input gives the same bytes (the
    /// default here; inferno's default is random).
    #[arg(long, conflicts_with = "random_colors")]
    pub hash: bool,
    /// Random colours instead of hashed ones.
    #[arg(long)]
    pub random_colors: bool,
    /// With --diff: colour by the change in raw sample counts instead of the change in each
    /// frame's share of the samples (the default, like inferno-diff-folded -n and gmon diff).
    #[arg(long, requires = "diff")]
    pub raw_counts: bool,
    /// Write to this file instead of stdout.
    #[arg(short = 'o', long, value_name = "FILE",
          long_help = super::output_help!("Write to this file instead of stdout."))]
    pub output: Option<PathBuf>,
}

impl Args {
    fn svg_options(&self) -> SvgOptions {
        let mut o = SvgOptions::default();
        o.title = self.title.clone();
        o.subtitle = self.subtitle.clone();
        o.inverted = self.inverted;
        o.reverse_stacks = self.reverse;
        o.min_width = self.minwidth;
        o.width = self.width;
        o.font_size = self.fontsize;
        o.colors = self.colors;
        o.deterministic = !self.random_colors;
        o.count_name = self.countname.clone();
        o.notes = self.notes.clone();
        o.diff_colours = if self.raw_counts {
            DiffColours::Counts
        } else {
            DiffColours::Share
        };
        o
    }
}

/// Runs `gmon flame`.
pub fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    if !(args.minwidth >= 0.0 && args.minwidth <= 100.0) {
        anyhow::bail!("--minwidth must be a percentage between 0 and 100");
    }
    let opts = args.svg_options();
    let (exe, gmon) = model::executable_and_profiles(args.exe.as_deref(), &args.gmon)?;
    if let Some(ne) = &args.sides.new_exe {
        if !(args.diff || args.sides.given()) {
            anyhow::bail!("--new-exe is for --diff: the executable of NEW");
        }
        model::check_executable_operand(ne)?;
    }
    let load = model::LoadOptions::STACKS_ONLY.with_force(args.force);
    let render = |w: &mut dyn Write| -> anyhow::Result<()> {
        if args.diff || args.sides.given() {
            if args.folded {
                anyhow::bail!("--folded and --diff cannot be combined");
            }
            let mut opts = opts.clone();
            opts.noise = args.sides.noise()?;
            differential(w, &args, &load, opts)
        } else if let Some(groups) = exe
            .is_none()
            .then(|| flame::group_by_executable(&gmon))
            .flatten()
        {
            process_tree(w, &groups, &load, &args, opts.clone())
        } else {
            let l = model::load_with(exe.as_deref(), &gmon, &load)?;
            print_notes("flame", l.notes.iter());
            let lines = lines_of(&l, &args);
            if args.folded {
                for line in &lines {
                    writeln!(w, "{line}")?;
                }
                return Ok(());
            }
            if lines.is_empty() {
                // Same as --folded (empty) and pprof (an empty profile): not an error.
                return Ok(flame::write_no_samples_svg(
                    w,
                    &opts,
                    l.stacks.source,
                    l.stacks.outside_samples,
                )?);
            }
            let names = args
                .gmon
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>();
            flame::write_svg(w, &lines, &opts, l.stacks.source, l.stacks.outside_samples)
                .with_context(|| names.join(", "))
        }
    };
    match &args.output {
        Some(path) => write_output(path, render)?,
        None => render(out)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// The differential graph of `gmon flame --diff`: BASE against NEW, one profile a side or
/// several runs (`--base A1 A2 A3 --new B1 B2 B3`), or two recorded process trees executable by
/// executable, each frame tested as `gmon diff` tests a function of those runs (spec/diff.md
/// §10, §11).
fn differential(
    w: &mut dyn Write,
    args: &Args,
    load: &model::LoadOptions,
    mut opts: SvgOptions,
) -> anyhow::Result<()> {
    let command = "flame --diff";
    let runs = |ls: &[model::Loaded]| -> Vec<Vec<String>> {
        ls.iter().map(|l| lines_of(l, args)).collect()
    };
    let (parts, source) = if let Some(t) =
        args.sides
            .compare_tree(command, args.exe.as_deref(), &args.gmon, args.force)?
    {
        let mut parts: Vec<FramePart> = t
            .tree
            .executables
            .iter()
            .zip(&t.models)
            .map(|(e, (b, n))| FramePart {
                root: e.root.clone(),
                base: runs(b),
                new: runs(n),
            })
            .collect();
        for (o, l) in t.tree.only_new.iter().zip(&t.only_new) {
            parts.push(FramePart {
                root: o.root.clone(),
                base: Vec::new(),
                new: runs(l),
            });
        }
        // NEW's shape has no room for what only BASE ran: said, with its samples.
        let gone: Vec<String> = t
            .tree
            .only_base
            .iter()
            .map(|o| format!("{} ({} samples)", o.root, o.samples))
            .collect();
        if !gone.is_empty() {
            let words = format!("only in BASE, not drawn: {}", gone.join(", "));
            opts.subtitle = Some(match opts.subtitle.take() {
                Some(user) => format!("{user}; {words}"),
                None => words,
            });
        }
        let source = t.models.iter().flat_map(|(_, n)| n).next();
        (
            parts,
            source.map_or(model::StackSource::Exact, |l| l.stacks.source),
        )
    } else {
        let (exe, base, new) = args.sides.split(command, args.exe.as_deref(), &args.gmon)?;
        let new_exe = args.sides.new_exe.as_deref();
        let b = base
            .iter()
            .map(|p| model::load_with(exe.as_deref(), std::slice::from_ref(p), load))
            .collect::<crate::Result<Vec<_>>>()?;
        let n = new
            .iter()
            .map(|p| match (new_exe, &exe) {
                (Some(ne), _) => load_new(ne, p, true, load),
                (None, Some(e)) => load_new(e, p, false, load),
                (None, None) => Ok(model::load_with(None, std::slice::from_ref(p), load)?),
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        print_notes("flame", b.iter().chain(&n).flat_map(|l| &l.notes));
        let source = n
            .first()
            .map_or(model::StackSource::Exact, |l| l.stacks.source);
        let part = FramePart {
            root: String::new(),
            base: runs(&b),
            new: runs(&n),
        };
        (vec![part], source)
    };
    let empty = |p: &FramePart| p.base.iter().chain(&p.new).all(Vec::is_empty);
    if parts.iter().all(empty) {
        return Ok(flame::write_no_samples_svg(w, &opts, source, 0)?);
    }
    let names: Vec<String> = args
        .sides
        .new
        .iter()
        .chain(&args.gmon)
        .map(|p| p.display().to_string())
        .collect();
    flame::write_diff_parts_svg(w, &parts, &opts, source).with_context(|| names.join(", "))
}

/// The folded lines to draw: with the frames of inlined functions unless `--no-inline`.
fn lines_of(l: &model::Loaded, args: &Args) -> Vec<String> {
    if args.no_inline {
        return folded_lines(&l.stacks, &l.graph);
    }
    flame::folded_lines_inlined(l, &model::profile_inline_chains(l))
}

/// One graph of the profiles of several executables (a recorded process tree), each under a
/// root frame named after its executable: each group is loaded with its own executable.
fn process_tree(
    w: &mut dyn Write,
    groups: &[flame::ExecutableGroup],
    load: &model::LoadOptions,
    args: &Args,
    mut opts: SvgOptions,
) -> anyhow::Result<()> {
    let mut lines = Vec::new();
    let mut samples = Vec::new();
    let mut outside = 0;
    let mut source = None;
    for g in groups {
        let l = model::load_with(Some(&g.executable), &g.profiles, load)?;
        print_notes("flame", l.notes.iter());
        let own = lines_of(&l, args);
        samples.push(flame::folded_samples(&own));
        lines.extend(flame::under_root(&g.root, &own));
        outside += l.stacks.outside_samples;
        // Recorded profiles all have exact stacks; a group without them says so in its notes.
        source.get_or_insert(l.stacks.source);
    }
    let Some(source) = source else {
        anyhow::bail!("no profiles to draw");
    };
    if args.folded {
        for l in &lines {
            writeln!(w, "{l}")?;
        }
        return Ok(());
    }
    let tree = flame::tree_subtitle(groups, &samples);
    opts.subtitle = Some(match opts.subtitle.take() {
        Some(user) => format!("{user}; {tree}"),
        None => tree,
    });
    if lines.is_empty() {
        return Ok(flame::write_no_samples_svg(w, &opts, source, outside)?);
    }
    flame::write_svg(w, &lines, &opts, source, outside).context("the process tree")
}
