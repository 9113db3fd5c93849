//! The inline chains of sampled addresses (spec/stacks.md §7, "Inline frames"): for an address
//! in code the compiler inlined, the functions it was inlined from, innermost first, each on
//! its own source line, and the line of the call in the function that holds the code, from the
//! DWARF `DW_TAG_inlined_subroutine` entries of the object (or of its separate debug file).

use std::collections::BTreeMap;
use std::path::Path;
use std::rc::Rc;

use super::place_lines::clean_file;
use super::symbolize::display_name;

/// One inlined function on the chain of an address.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct InlinedFrame {
    /// The demangled name.
    pub name: String,
    /// The name as DWARF gives it (mangled).
    pub system_name: String,
    /// Its source file, when DWARF names one.
    pub file: Option<String>,
    /// The line in it (0: unknown).
    pub line: u32,
}

/// What inlining put at one address.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct InlineChain {
    /// The inlined functions, innermost first (never empty).
    pub inlined: Vec<InlinedFrame>,
    /// The line (and file) in the function that holds the code where the outermost inlined
    /// call is, 0 when unknown.
    pub call_line: u32,
    /// The file of `call_line`.
    pub call_file: Option<String>,
}

impl InlineChain {
    /// The chain in words, innermost first, for the function `holder` that holds the code:
    /// "inlined from mix at inlined.c:11 into work at inlined.c:21". Each place is where the
    /// code is in that function: the innermost's own line, then each call's.
    pub fn describe(&self, holder: &str) -> String {
        let at = |file: &Option<String>, line: u32| match (file, line) {
            (_, 0) => String::new(),
            (Some(f), l) => format!(" at {f}:{l}"),
            (None, l) => format!(" at line {l}"),
        };
        let mut s = String::from("inlined from ");
        for (i, f) in self.inlined.iter().enumerate() {
            if i > 0 {
                s.push_str(" into ");
            }
            s.push_str(&f.name);
            s.push_str(&at(&f.file, f.line));
        }
        s.push_str(&format!(
            " into {holder}{}",
            at(&self.call_file, self.call_line)
        ));
        s
    }
}

type Reader = gimli::EndianRcSlice<gimli::RunTimeEndian>;

/// The inline chains of link-time `addresses` of the object at `path` (the executable's file
/// or a recorded object's, `build_id` as recorded; empty: not checked), for the addresses that
/// have one. `None` when the object has no DWARF this can read.
pub fn inline_chains(
    path: &Path,
    build_id: &[u8],
    addresses: &[u64],
) -> Option<BTreeMap<u64, InlineChain>> {
    // The path comes from a sidecar or the user: only a regular file is read (spec/inputs.md §1).
    let data = gmon_binary::open::map_found(path).ok()?;
    if !build_id.is_empty() {
        let file = gmon_binary::elf_file::ElfFile::parse(&data)?;
        if file.gnu_build_id().as_deref() != Some(build_id) {
            return None;
        }
    }
    let separate = gmon_binary::debuglink::separate_debug_data(path, &data);
    let dwarf_data: &[u8] = match &separate {
        Some((_, bytes)) => bytes,
        None => &data,
    };
    let ctx = context(dwarf_data)?;
    let mut out = BTreeMap::new();
    for &addr in addresses {
        if let Some(chain) = chain_at(&ctx, addr) {
            out.insert(addr, chain);
        }
    }
    Some(out)
}

/// The DWARF of an ELF file, for address lookups; `None` without `.debug_info`.
fn context(data: &[u8]) -> Option<addr2line::Context<Reader>> {
    let file = gmon_binary::elf_file::ElfFile::parse(data)?;
    if !file.has_section(".debug_info") {
        return None;
    }
    let endian = if file.is_little_endian() {
        gimli::RunTimeEndian::Little
    } else {
        gimli::RunTimeEndian::Big
    };
    let dwarf = gimli::Dwarf::load(|id| -> Result<Reader, gimli::Error> {
        // A section that cannot be read (damaged compression) is read as absent, as the line
        // tables are (spec/inputs.md §3).
        let bytes = file
            .section_data(id.name())
            .map(|c| c.into_owned())
            .unwrap_or_default();
        Ok(gimli::EndianRcSlice::new(Rc::from(bytes), endian))
    })
    .ok()?;
    addr2line::Context::from_dwarf(dwarf).ok()
}

/// The chain at `addr`, when code of another function was inlined there.
fn chain_at(ctx: &addr2line::Context<Reader>, addr: u64) -> Option<InlineChain> {
    let mut frames = ctx.find_frames(addr).skip_all_loads().ok()?;
    let mut all = Vec::new();
    while let Ok(Some(frame)) = frames.next() {
        let system_name = frame
            .function
            .as_ref()
            .and_then(|f| f.raw_name().ok().map(|n| n.into_owned()))
            .unwrap_or_default();
        let (file, line) = frame
            .location
            .as_ref()
            .map_or((None, 0), |l| (l.file.map(clean_file), l.line.unwrap_or(0)));
        all.push(InlinedFrame {
            name: display_name(&system_name),
            system_name,
            file,
            line,
        });
    }
    // The last frame is the function that holds the code: its location is the call's.
    let outer = all.pop()?;
    if all.is_empty() || all.iter().any(|f| f.system_name.is_empty()) {
        return None;
    }
    Some(InlineChain {
        inlined: all,
        call_line: outer.line,
        call_file: outer.file,
    })
}

/// The inline chains of every address the profile places samples at (the exact stacks' places,
/// the estimated leaves' histogram pieces), by (object path, link-time address), read from
/// each object's DWARF once.
pub fn profile_inline_chains(l: &super::Loaded) -> BTreeMap<(String, u64), InlineChain> {
    let main = l.objects.iter().find(|o| o.main).map(|o| o.path.clone());
    let mut wanted: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for p in l
        .stacks
        .placed
        .iter()
        .flat_map(|s| s.places.iter().flatten())
    {
        if let Some(object) = &p.object {
            wanted.entry(object.clone()).or_default().push(p.address);
        }
    }
    if let Some(main) = &main {
        let pieces = l.functions.iter().flat_map(|f| f.histogram.iter());
        let v = wanted.entry(main.clone()).or_default();
        v.extend(pieces.map(|b| b.address));
    }
    let mut out = BTreeMap::new();
    for (object, addresses) in wanted {
        let Some(o) = l.objects.iter().find(|o| o.path == object) else {
            continue;
        };
        for (addr, chain) in object_inline_chains(l, o, addresses) {
            out.insert((object.clone(), addr), chain);
        }
    }
    out
}

/// The inline chains of link-time `addresses` in the executable (the profile's main object).
pub fn executable_inline_chains(
    l: &super::Loaded,
    addresses: Vec<u64>,
) -> BTreeMap<u64, InlineChain> {
    match l.objects.iter().find(|o| o.main) {
        Some(o) => object_inline_chains(l, o, addresses),
        None => BTreeMap::new(),
    }
}

fn object_inline_chains(
    l: &super::Loaded,
    o: &super::LoadedObject,
    mut addresses: Vec<u64>,
) -> BTreeMap<u64, InlineChain> {
    addresses.sort_unstable();
    addresses.dedup();
    // The executable named by the user (a copy of the recorded one) is read where it is.
    let path = match o.main {
        true => l.executable.path.clone(),
        false => std::path::PathBuf::from(&o.path),
    };
    inline_chains(&path, &o.build_id, &addresses).unwrap_or_default()
}
