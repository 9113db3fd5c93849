//! `gmon flame`: a flame graph (SVG) or folded stacks from gmon.out files.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

use crate::commands::write_output;
use crate::flame::{self, DiffColours, SvgOptions, folded_lines};
use crate::model;

use super::diff::print_notes;

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
are read with them). --diff colours each frame by the change in its share of \
the samples (BASE scaled to NEW's total, as inferno-diff-folded -n and gmon diff), --raw-counts by \
the change in raw counts; the subtitle says which.\n\nEXAMPLES:\n  gmon flame gmon.out > out.svg                 ./a.out, or the executable the runtime recorded\n  gmon flame ./prog gmon.out gmon.2.out > out.svg\n  gmon flame --folded --exe ./prog gmon.out     folded stacks (root;...;leaf N)\n  gmon flame --inverted --minwidth 0.5 --colors mem ./prog gmon.out > icicle.svg\n  gmon flame --diff --exe ./prog before.out after.out > diff.svg\n  gmon flame build.out build.out.* > tree.svg   a recorded `make`: a root per executable\n  gmon flame --diff --exe ./prog-v1 --new-exe ./prog-v2 v1.out v2.out > diff.svg"
)]
pub struct Args {
    /// The profiled executable (default: the one the runtime's sidecar names, else ./a.out).
    #[arg(long, value_name = "EXECUTABLE")]
    pub exe: Option<PathBuf>,
    /// gmon.out files; several are summed (with --diff: exactly BASE and NEW). gprof's order,
    /// an executable first, is accepted too.
    #[arg(value_name = "GMON", required = true)]
    pub gmon: Vec<PathBuf>,
    /// With --diff: the executable of NEW, when it is another build than --exe's. Without it,
    /// NEW is read with --exe's executable and refused when it cannot belong to it.
    #[arg(long, value_name = "EXECUTABLE", requires = "diff")]
    pub new_exe: Option<PathBuf>,
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
    /// Differential flame graph of two profiles: GMON... must be BASE NEW.
    #[arg(long)]
    pub diff: bool,
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
    if let Some(ne) = &args.new_exe {
        model::check_executable_operand(ne)?;
    }
    let load = model::LoadOptions::STACKS_ONLY.with_force(args.force);
    let render = |w: &mut dyn Write| -> anyhow::Result<()> {
        if args.diff {
            let [base, new] = gmon.as_slice() else {
                // Several runs a side, or recorded process trees (OUT OUT.*), are compared
                // run by run (spec/diff.md §3, §11): gmon report --diff draws that graph.
                anyhow::bail!(
                    "--diff needs exactly two profiles: BASE NEW; for several runs a side or \
                     recorded process trees, gmon report --diff --base BASE... --new NEW... \
                     draws the differential flame graph of their comparison"
                );
            };
            let b = model::load_with(exe.as_deref(), std::slice::from_ref(base), &load)?;
            let n = match (&args.new_exe, &exe) {
                (Some(ne), _) => super::diff::load_new(ne, new, true, &load)?,
                (None, Some(e)) => super::diff::load_new(e, new, false, &load)?,
                (None, None) => model::load_with(None, std::slice::from_ref(new), &load)?,
            };
            print_notes("flame", b.notes.iter().chain(&n.notes));
            let (bl, nl) = (lines_of(&b, &args), lines_of(&n, &args));
            if args.folded {
                anyhow::bail!("--folded and --diff cannot be combined");
            }
            if bl.is_empty() && nl.is_empty() {
                return Ok(flame::write_no_samples_svg(w, &opts, n.stacks.source, 0)?);
            }
            flame::write_diff_svg(w, &bl, &nl, &opts, n.stacks.source)
                .with_context(|| format!("{}", new.display()))
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
