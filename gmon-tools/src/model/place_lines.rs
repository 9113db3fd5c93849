//! The source lines of the exact stacks' places (spec/stacks.md §8): each object's own DWARF
//! line table (or its separate debug file's), read once per object that has places, as
//! `addr2line` would answer for the address.

use std::collections::BTreeMap;
use std::path::Path;

use gmon_binary::dwarf::LineInfo;

use super::Stacks;
use super::addresses::PlacedStack;
use super::function::FunctionInfo;

/// The source file and line of `addr` in `info` by BFD's rule (the executable's, as gprof
/// reads it), the file without leading `./` segments.
pub(super) fn line_at(info: &mut LineInfo, addr: u64) -> Option<(u32, String)> {
    let loc = info.locate(addr)?;
    Some((loc.line, clean_file(info.string(loc.file))))
}

/// The source file and line of `addr` in a recorded object's `info`, as `addr2line` answers:
/// from the line table alone, since a stripped library names its internal functions only in
/// its debug file, whose symbols BFD's rule does not consult (spec/stacks.md §7).
fn object_line_at(info: &LineInfo, addr: u64) -> Option<(u32, String)> {
    let (file, line) = info.source_line(addr)?;
    Some((line, clean_file(info.string(file))))
}

/// A file name as the views print it: without leading `./` segments.
pub(super) fn clean_file(mut name: &str) -> String {
    while let Some(rest) = name.strip_prefix("./") {
        name = rest;
    }
    name.to_owned()
}

/// Fills in the line and file of every place of `placed`: in the executable (the object named
/// `main`) from `main_lines`, in another object from its own file when it is there and has the
/// recorded build id (`build_id_of`). Returns the paths of the objects whose lines were found.
pub(super) fn locate_places(
    placed: &mut [PlacedStack],
    main: Option<&str>,
    main_lines: &mut LineInfo,
    build_id_of: &dyn Fn(&str) -> Vec<u8>,
) -> Vec<String> {
    let mut tables: BTreeMap<String, Option<LineInfo>> = BTreeMap::new();
    let mut cache: BTreeMap<(String, u64), Option<(u32, String)>> = BTreeMap::new();
    for s in placed.iter_mut() {
        for place in s.places.iter_mut().flatten() {
            let Some(object) = &place.object else {
                continue;
            };
            let key = (object.clone(), place.address);
            let found = cache.entry(key).or_insert_with(|| {
                if Some(object.as_str()) == main {
                    return line_at(main_lines, place.address);
                }
                let table = tables
                    .entry(object.clone())
                    .or_insert_with(|| object_lines(Path::new(object), &build_id_of(object)));
                table
                    .as_ref()
                    .and_then(|t| object_line_at(t, place.address))
            });
            if let Some((line, file)) = found {
                place.line = *line;
                place.file = Some(file.clone());
            }
        }
    }
    let mut with_lines: Vec<String> = cache
        .iter()
        .filter(|(_, v)| v.is_some())
        .map(|((o, _), _)| o.clone())
        .collect();
    with_lines.dedup();
    with_lines
}

/// The line table of a recorded object, when its file is there, is the recorded build and has
/// DWARF (its own or a separate debug file's).
fn object_lines(path: &Path, build_id: &[u8]) -> Option<LineInfo> {
    // The path comes from a sidecar: only a regular file is read (spec/inputs.md §1).
    let data = gmon_binary::open::map_found(path).ok()?;
    let elf = gmon_binary::parse_elf(&data).ok()?;
    if !build_id.is_empty()
        && gmon_binary::elf_file::gnu_build_id(&elf, &data).as_deref() != Some(build_id)
    {
        return None;
    }
    let info = LineInfo::for_executable(path, &data, Some(&elf), false);
    info.has_dwarf().then_some(info)
}

/// Gives the sampled addresses and call sites in shared objects the source lines their places
/// got ([`locate_places`]): the same (object, address) pairs, so that views placing samples at
/// instructions (callgrind) have the lines pprof has. Those of the executable have theirs
/// already.
pub(super) fn share_place_lines(stacks: &mut Stacks, functions: &[FunctionInfo]) {
    let mut lines: BTreeMap<(&str, u64), (u32, &str)> = BTreeMap::new();
    for place in stacks.placed.iter().flat_map(|s| s.places.iter().flatten()) {
        if let (Some(object), Some(file)) = (&place.object, &place.file) {
            lines.insert(
                (object.as_str(), place.address),
                (place.line, file.as_str()),
            );
        }
    }
    let found = |object: &str, address: u64| {
        lines
            .get(&(object, address))
            .map(|&(line, file)| (line, Some(file.to_owned())))
    };
    for a in stacks.sampled.iter_mut().filter(|a| a.line == 0) {
        if let Some(l) = a.object.as_deref().and_then(|o| found(o, a.address)) {
            (a.line, a.file) = l;
        }
    }
    for c in stacks.call_sites.iter_mut().filter(|c| c.line == 0) {
        let object = functions.get(c.caller.0).and_then(|f| f.object.as_ref());
        if let Some(l) = object.and_then(|(o, _)| found(o, c.address)) {
            (c.line, c.file) = l;
        }
    }
}
