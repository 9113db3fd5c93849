//! What `gmon gprof` adds on stderr for a profile the gmon-write runtime wrote (one with a
//! sidecar): its standard output stays GNU gprof's byte for byte, but where that output is
//! misleading for a recorded run, and the views know better, one line says so
//! (spec/stacks.md §11):
//!
//! * the sidecar records another build id than the executable's: the report is probably of the
//!   wrong program (GNU gprof cannot know; the views refuse such a pair);
//! * sampled code lies in local functions whose names contain `$` (every legacy-mangled Rust
//!   generic), which gprof's symbol rules leave out, crediting their samples to the function
//!   before them; the views name them;
//! * the profile has no arcs (the runtime samples stacks, it does not count calls), so gprof has
//!   no call graph; the views draw the sampled stacks.
//!
//! Profiles without a sidecar (`gcc -pg`'s) get nothing: there, gmon gprof's stderr is GNU's.

use std::path::{Path, PathBuf};

use gmon_format::Record;

use super::executable::{Executable, sidecar_beside};
use super::symbolize::ObjectSymbols;

/// The notes for the executable `exe` and the `profiles` gprof read (see the module doc). Reading
/// problems give no note: gprof has said what it could not read.
pub fn recorded_profile_notes(exe: &Path, profiles: &[PathBuf]) -> Vec<String> {
    let recorded: Vec<(&PathBuf, gmon_format::Sidecar)> = profiles
        .iter()
        .filter_map(|p| Some((p, sidecar_beside(p).ok()??)))
        .collect();
    if recorded.is_empty() {
        return Vec::new();
    }
    let Ok(data) = gmon_binary::open::read_named(exe) else {
        return Vec::new();
    };
    let Ok(elf) = gmon_binary::parse_elf(&data) else {
        return Vec::new();
    };
    let executable = Executable::from_elf(exe, &elf, &data);
    let symbols = ObjectSymbols::from_elf(exe, &elf, &data);
    let mut notes = Vec::new();
    let mut dollar_samples = 0u64;
    let mut dollar_names: Vec<String> = Vec::new();
    let mut without_arcs = Vec::new();
    for (path, sidecar) in &recorded {
        if let (Some(main), Some(id)) = (sidecar.main_object(), &executable.build_id)
            && !main.build_id.is_empty()
            && main.build_id != id.0
        {
            notes.push(format!(
                "warning: {}: its sidecar records build id {} ({}), {} has {}: this report is \
                 probably not of that program",
                path.display(),
                main.build_id_hex(),
                main.path,
                exe.display(),
                id
            ));
            continue;
        }
        let Ok(bytes) = gmon_binary::open::read_named(path) else {
            continue;
        };
        let Ok(profile) = gmon_format::read(&bytes) else {
            continue;
        };
        if !profile
            .records
            .iter()
            .any(|r| matches!(r, Record::CallArc(_)))
        {
            without_arcs.push(path.display().to_string());
        }
        for h in profile.records.iter().filter_map(|r| match r {
            Record::Histogram(h) => Some(h),
            _ => None,
        }) {
            for (i, &count) in h.bins.iter().enumerate().filter(|(_, c)| **c > 0) {
                let pc = crate::dump::bin_pc(h, i);
                if let Some(f) = symbols.function_at(pc)
                    && f.from_symbol
                    && f.name.contains('$')
                {
                    dollar_samples += count;
                    if !dollar_names.contains(&f.name) {
                        dollar_names.push(f.name.clone());
                    }
                }
            }
        }
    }
    if dollar_samples > 0 {
        let shown: Vec<&str> = dollar_names.iter().take(3).map(String::as_str).collect();
        notes.push(format!(
            "note: {dollar_samples} samples lie in {} whose name{} '$' ({}{}), which GNU \
             gprof's rules leave out: this report credits them to the function before each, as \
             GNU gprof does; `gmon flame` and `gmon pprof` name them",
            match dollar_names.len() {
                1 => "1 local function".to_owned(),
                n => format!("{n} local functions"),
            },
            if dollar_names.len() == 1 {
                " contains"
            } else {
                "s contain"
            },
            shown.join(", "),
            if dollar_names.len() > shown.len() {
                ", ..."
            } else {
                ""
            }
        ));
    }
    if !without_arcs.is_empty() {
        notes.push(format!(
            "note: {} recorded by the gmon-write runtime, which samples call stacks instead of \
             counting calls: there is no call graph for gprof to print; `gmon flame {}` draws \
             the sampled stacks (`gmon pprof` writes them for pprof)",
            match without_arcs.as_slice() {
                [one] => format!("{one} was"),
                many => format!("{} were", many.join(", ")),
            },
            without_arcs[0]
        ));
    }
    notes
}
