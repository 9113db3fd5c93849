//! The call-frame information of every loaded object, for the unwinder.
//!
//! Read from memory through `dl_iterate_phdr`: an object's `PT_GNU_EH_FRAME` segment is its
//! `.eh_frame_hdr` (a sorted table of the FDEs), whose `eh_frame_ptr` locates `.eh_frame`. For
//! shared libraries both are copied (inside the `dl_iterate_phdr` callback, while the loader
//! keeps the object mapped), so a later `dlclose` cannot leave the unwinder reading unmapped
//! memory. The main executable and the vDSO are never unmapped: their tables are read in place,
//! which saves copying (and faulting in) the largest table, the program's own.
//! Memory rather than the file: it also covers the vDSO, deleted or replaced files and objects
//! loaded from memory. An object without `PT_GNU_EH_FRAME` is known without CFI: framehop then
//! walks frame pointers through its code.
//!
//! glibc counts every load and unload (`dlpi_adds`, `dlpi_subs`); the list is rebuilt when the
//! counts change, so objects `dlopen`ed after sampling started are picked up at the next drain.
//! A further mapping of an object's file that the watcher saw (spec/runtime.md §5.13: V8's
//! copy of node's builtins) is a module of its own, at its addresses, with its object's CFI:
//! code run there unwinds as in the object.

use std::ops::Range;

use std::sync::Mutex;

use framehop::{ExplicitModuleSectionInfo, Module, Unwinder};

use crate::unwind::mappings::{FileMapping, SeenMaps, further_in};

/// `PT_GNU_EH_FRAME`.
const PT_GNU_EH_FRAME: u32 = 0x6474_e550;

/// `.eh_frame` / `.eh_frame_hdr` bytes: in place for objects that stay mapped until exit,
/// copied for the others.
#[derive(Clone, Debug)]
pub(crate) enum Data {
    Mapped(&'static [u8]),
    Copied(Vec<u8>),
}

impl Default for Data {
    fn default() -> Data {
        Data::Mapped(&[])
    }
}

impl std::ops::Deref for Data {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Data::Mapped(b) => b,
            Data::Copied(v) => v,
        }
    }
}

/// framehop's unwinder for this machine. Unwinding itself never allocates (fixed-size evaluation
/// storage), so the final drain can run on the at-exit path, which must not allocate.
pub(crate) type NativeUnwinder =
    framehop::UnwinderNative<Data, framehop::MustNotAllocateDuringUnwind>;

/// One loaded object as the unwinder sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Loaded {
    /// Lowest to highest executable address.
    text: Range<u64>,
    /// Whether its `.eh_frame` was found.
    has_cfi: bool,
    /// A further mapping of an object's file, not the object's own text.
    further: bool,
}

/// The loaded objects known to the unwinder.
#[derive(Default)]
pub(crate) struct Modules {
    /// `dlpi_adds + dlpi_subs` when the list was last read (None: never read).
    generation: Option<(u64, u64)>,
    /// Sorted by text start.
    loaded: Vec<Loaded>,
    /// [`SeenMaps::generation`] when the further mappings' modules were last made.
    seen_generation: Option<u64>,
}

/// What the `dl_iterate_phdr` callback collects.
struct Scan {
    generation: (u64, u64),
    /// Objects not in `known`: their text range, CFI and framehop module.
    found: Vec<(Loaded, Option<Module<Data>>)>,
    /// Text starts of every object seen (to remove the unloaded ones).
    seen: Vec<u64>,
    /// Text starts already in the unwinder (no need to copy their CFI again).
    known: Vec<u64>,
}

impl Modules {
    /// Reads the loaded objects again if any was loaded or unloaded since the last call, and
    /// the further mappings of their files when those or the watcher's reading changed; updates
    /// `unwinder` to match.
    pub(crate) fn refresh(&mut self, unwinder: &mut NativeUnwinder, seen: &Mutex<SeenMaps>) {
        let objects_changed = self.refresh_objects(unwinder);
        // The watcher's table is held only to copy it (try: never wait for the watcher).
        let snapshot = match seen.try_lock() {
            Ok(g) if objects_changed || self.seen_generation != Some(g.generation()) => {
                Some(g.snapshot())
            }
            _ => None,
        };
        if let Some((generation, entries)) = snapshot {
            self.refresh_further(unwinder, &entries);
            self.seen_generation = Some(generation);
        }
    }

    /// Replaces the further mappings' modules with those of `entries`.
    fn refresh_further(&mut self, unwinder: &mut NativeUnwinder, entries: &[FileMapping]) {
        self.loaded.retain(|l| {
            if l.further {
                unwinder.remove_module(l.text.start);
            }
            !l.further
        });
        let mut found = Vec::new();
        crate::unwind::objects::for_each_object(|o| {
            for f in further_in(entries, o) {
                let text = f.range.start..f.range.end;
                // SAFETY: the object's segments are mapped during the callback, and until the
                // process ends for the main executable (the first object).
                let module =
                    unsafe { module(o.bias, o.phdrs(), (text.clone(), f.load_bias), o.first) };
                let has_cfi = module.is_some();
                found.push((
                    Loaded {
                        text,
                        has_cfi,
                        further: true,
                    },
                    module,
                ));
            }
        });
        for (loaded, module) in found {
            if let Some(m) = module {
                unwinder.add_module(m);
            }
            self.loaded.push(loaded);
        }
        self.loaded.sort_by_key(|l| l.text.start);
    }

    /// The objects part of [`Modules::refresh`]; whether the list was read again.
    fn refresh_objects(&mut self, unwinder: &mut NativeUnwinder) -> bool {
        let mut scan = Scan {
            generation: (0, 0),
            found: Vec::new(),
            seen: Vec::new(),
            known: self.loaded.iter().map(|l| l.text.start).collect(),
        };
        if let Some(g) = self.generation {
            // Cheap check first: one callback that only reads the counters.
            let mut now = (0u64, 0u64);
            // SAFETY: the callback reads the info it is given and writes into `now`.
            unsafe {
                crate::sys::dl_iterate_phdr(generation, (&mut now as *mut (u64, u64)).cast());
            }
            if now == g {
                return false;
            }
        }
        // SAFETY: the callback only reads the `dl_phdr_info` and the memory of the object it
        // describes (mapped while the callback runs), and writes into `scan`.
        unsafe {
            crate::sys::dl_iterate_phdr(collect, (&mut scan as *mut Scan).cast());
        }
        self.loaded.retain(|l| {
            let keep = l.further || scan.seen.contains(&l.text.start);
            if !keep {
                unwinder.remove_module(l.text.start);
            }
            keep
        });
        for (loaded, module) in scan.found {
            if let Some(m) = module {
                unwinder.add_module(m);
            }
            self.loaded.push(loaded);
        }
        self.loaded.sort_by_key(|l| l.text.start);
        self.generation = Some(scan.generation);
        true
    }

    /// Whether `addr` lies in an object whose CFI the unwinder has.
    pub(crate) fn has_cfi(&self, addr: u64) -> bool {
        let i = self.loaded.partition_point(|l| l.text.start <= addr);
        i.checked_sub(1)
            .and_then(|i| self.loaded.get(i))
            .is_some_and(|l| l.text.contains(&addr) && l.has_cfi)
    }
}

unsafe extern "C" fn generation(
    info: *mut libc::dl_phdr_info,
    size: libc::size_t,
    data: *mut libc::c_void,
) -> libc::c_int {
    // SAFETY: dl_iterate_phdr passes a valid info of `size` bytes and our pointer.
    let (info, out) = unsafe { (&*info, &mut *data.cast::<(u64, u64)>()) };
    *out = counters(info, size);
    1 // the counters are the same in every entry: stop after the first
}

/// `(dlpi_adds, dlpi_subs)`, or zeros from a libc whose `dl_phdr_info` lacks them.
fn counters(info: &libc::dl_phdr_info, size: usize) -> (u64, u64) {
    if size >= std::mem::offset_of!(libc::dl_phdr_info, dlpi_tls_modid) {
        (info.dlpi_adds, info.dlpi_subs)
    } else {
        (0, 0)
    }
}

unsafe extern "C" fn collect(
    info: *mut libc::dl_phdr_info,
    size: libc::size_t,
    data: *mut libc::c_void,
) -> libc::c_int {
    // SAFETY: dl_iterate_phdr passes a valid info of `size` bytes and our pointer.
    let (info, scan) = unsafe { (&*info, &mut *data.cast::<Scan>()) };
    scan.generation = counters(info, size);
    let phdrs: &[libc::Elf64_Phdr] = if info.dlpi_phdr.is_null() {
        &[]
    } else {
        // SAFETY: the loader's program header table has dlpi_phnum entries.
        unsafe { std::slice::from_raw_parts(info.dlpi_phdr, usize::from(info.dlpi_phnum)) }
    };
    let bias = info.dlpi_addr;
    let text = phdrs
        .iter()
        .filter(|p| p.p_type == libc::PT_LOAD && p.p_flags & libc::PF_X != 0)
        .map(|p| bias.wrapping_add(p.p_vaddr)..bias.wrapping_add(p.p_vaddr + p.p_memsz))
        .reduce(|a, b| a.start.min(b.start)..a.end.max(b.end));
    let Some(text) = text else {
        return 0;
    };
    scan.seen.push(text.start);
    if scan.known.contains(&text.start) {
        return 0;
    }
    // The first object is the main executable; the vDSO has no file name. Neither is ever
    // unmapped.
    let permanent = scan.seen.len() == 1
        || info.dlpi_name.is_null()
        // SAFETY: a NUL-terminated string owned by the loader.
        || unsafe { *info.dlpi_name } == 0
        // SAFETY: as above.
        || unsafe { std::ffi::CStr::from_ptr(info.dlpi_name) }
            .to_bytes()
            .starts_with(b"linux-vdso");
    // SAFETY: as above; the segments described by `phdrs` are mapped during the callback, and
    // for the rest of the process when `permanent`.
    let module = unsafe { module(bias, phdrs, (text.clone(), bias), permanent) };
    scan.found.push((
        Loaded {
            text,
            has_cfi: module.is_some(),
            further: false,
        },
        module,
    ));
    0
}

/// A framehop module with the object's `.eh_frame_hdr` and `.eh_frame` (in place when
/// `permanent`, else copied), or None when it has none. `place` is the code's runtime range
/// and its load bias: the object's text and `bias`, or a further mapping of its file and that
/// mapping's bias (the tables are still read from the object, at `bias`).
///
/// # Safety
/// `phdrs` must be the program headers of an object loaded at `bias` and still mapped, and
/// mapped until the process ends when `permanent`.
unsafe fn module(
    bias: u64,
    phdrs: &[libc::Elf64_Phdr],
    place: (Range<u64>, u64),
    permanent: bool,
) -> Option<Module<Data>> {
    let (text, base) = place;
    let hdr_ph = phdrs.iter().find(|p| p.p_type == PT_GNU_EH_FRAME)?;
    let hdr_svma = hdr_ph.p_vaddr;
    // Every byte read must lie in a loaded segment (PT_GNU_EH_FRAME and .eh_frame are in one).
    let segment_end = |svma: u64| {
        phdrs
            .iter()
            .filter(|p| p.p_type == libc::PT_LOAD)
            .find(|p| (p.p_vaddr..p.p_vaddr + p.p_memsz).contains(&svma))
            .map(|p| p.p_vaddr + p.p_memsz)
    };
    let hdr_end = segment_end(hdr_svma)?.min(hdr_svma.checked_add(hdr_ph.p_memsz)?);
    // SAFETY: [hdr_svma, hdr_end) is inside a loaded segment of this mapped object.
    let hdr = unsafe { mapped(bias, hdr_svma..hdr_end) };
    let eh_svma = eh_frame_address(hdr, hdr_svma)?;
    let seg_end = segment_end(eh_svma)?;
    // SAFETY: [eh_svma, seg_end) is inside a loaded segment of this mapped object.
    let rest = unsafe { mapped(bias, eh_svma..seg_end) };
    let eh_frame = rest.get(..eh_frame_len(rest))?;
    let data = |b: &'static [u8]| {
        if permanent {
            Data::Mapped(b)
        } else {
            Data::Copied(b.to_vec())
        }
    };
    let info = ExplicitModuleSectionInfo {
        base_svma: 0,
        text_svma: Some(text.start.wrapping_sub(base)..text.end.wrapping_sub(base)),
        eh_frame_svma: Some(eh_svma..eh_svma + eh_frame.len() as u64),
        eh_frame: Some(data(eh_frame)),
        eh_frame_hdr_svma: Some(hdr_svma..hdr_end),
        eh_frame_hdr: Some(data(hdr)),
        ..Default::default()
    };
    Some(Module::new(String::new(), text, base, info))
}

/// The bytes of a loaded object at link-time addresses `svma`.
///
/// # Safety
/// The range, moved by `bias`, must be mapped and readable for as long as the slice is used
/// (copied before the `dl_iterate_phdr` callback returns, unless the object is permanent).
unsafe fn mapped(bias: u64, svma: Range<u64>) -> &'static [u8] {
    let len = usize::try_from(svma.end.saturating_sub(svma.start)).unwrap_or(0);
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts(bias.wrapping_add(svma.start) as *const u8, len) }
}

/// The link-time address of `.eh_frame`, from `.eh_frame_hdr`'s `eh_frame_ptr` (version 1).
fn eh_frame_address(hdr: &[u8], hdr_svma: u64) -> Option<u64> {
    let (&version, &enc) = (hdr.first()?, hdr.get(1)?);
    if version != 1 {
        return None;
    }
    let field = hdr_svma + 4;
    let raw = hdr.get(4..)?;
    let word = |n: usize| -> Option<[u8; 8]> {
        let mut b = [0u8; 8];
        b.get_mut(..n)?.copy_from_slice(raw.get(..n)?);
        Some(b)
    };
    // DW_EH_PE_* value formats.
    let value: i64 = match enc & 0x0f {
        0x00 | 0x04 | 0x0c => i64::from_le_bytes(word(8)?),
        0x03 => i64::from(u32::from_le_bytes(word(4)?[..4].try_into().ok()?)),
        0x0b => i64::from(i32::from_le_bytes(word(4)?[..4].try_into().ok()?)),
        _ => return None,
    };
    // DW_EH_PE_* application: absolute or relative to the field itself.
    match enc & 0x70 {
        0x00 => Some(value as u64),
        0x10 => Some(field.wrapping_add_signed(value)),
        0x30 => Some(hdr_svma.wrapping_add_signed(value)),
        _ => None,
    }
}

/// Length of the `.eh_frame` at the start of `bytes`: its entries up to the zero terminator, or
/// all of `bytes` when there is none.
fn eh_frame_len(bytes: &[u8]) -> usize {
    let mut at = 0usize;
    loop {
        let Some(len) = bytes
            .get(at..at + 4)
            .and_then(|b| b.try_into().ok())
            .map(u32::from_le_bytes)
        else {
            return bytes.len();
        };
        let body = match len {
            0 => return at + 4,
            0xffff_ffff => match bytes
                .get(at + 4..at + 12)
                .and_then(|b| b.try_into().ok())
                .map(u64::from_le_bytes)
                .and_then(|l| usize::try_from(l).ok())
                .and_then(|l| l.checked_add(8))
            {
                Some(l) => l,
                None => return bytes.len(),
            },
            n => n as usize,
        };
        match at.checked_add(4 + body) {
            Some(next) if next <= bytes.len() => at = next,
            _ => return bytes.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eh_frame_entries_end_at_the_terminator() {
        let mut b = Vec::new();
        b.extend_from_slice(&4u32.to_le_bytes());
        b.extend_from_slice(&[1, 2, 3, 4]);
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&[9; 7]);
        assert_eq!(eh_frame_len(&b), 12);
        // An entry running past the end: all of it.
        assert_eq!(eh_frame_len(&b[..6]), 6);
    }

    #[test]
    fn eh_frame_ptr_pcrel_sdata4() {
        // version 1, DW_EH_PE_pcrel|sdata4, then -0x100 relative to the field at hdr + 4.
        let mut h = vec![1, 0x1b, 0x03, 0x3b];
        h.extend_from_slice(&(-0x100i32).to_le_bytes());
        assert_eq!(eh_frame_address(&h, 0x2000), Some(0x2004 - 0x100));
        h[0] = 2;
        assert_eq!(eh_frame_address(&h, 0x2000), None);
    }

    #[test]
    fn this_process_has_cfi() {
        let mut m = Modules::default();
        let mut u = NativeUnwinder::new();
        let seen = Mutex::new(SeenMaps::new());
        m.refresh(&mut u, &seen);
        let here = this_process_has_cfi as *const () as u64;
        assert!(m.has_cfi(here), "no CFI found for the test binary");
        assert!(
            m.has_cfi(libc::getpid as *const () as u64),
            "libc without CFI"
        );
        assert!(!m.has_cfi(8));
        let before = m.loaded.clone();
        m.refresh(&mut u, &seen);
        assert_eq!(m.loaded, before);
    }

    #[test]
    fn a_second_mapping_of_the_executable_has_its_cfi() {
        use crate::unwind::mappings::tests::{MAPS_LOCK, SecondCopy};
        let _one = MAPS_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let here = a_second_mapping_of_the_executable_has_its_cfi as *const () as u64;
        let copy = SecondCopy::of(here);
        let in_copy = copy.at + (here - copy.page);
        let (mut m, mut u) = (Modules::default(), NativeUnwinder::new());
        let seen = Mutex::new(SeenMaps::new());
        m.refresh(&mut u, &seen);
        assert!(!m.has_cfi(in_copy), "before the watcher saw it");
        seen.lock().unwrap_or_else(|e| e.into_inner()).refresh();
        m.refresh(&mut u, &seen);
        assert!(m.has_cfi(in_copy), "the copy has the executable's CFI");
        assert!(m.has_cfi(here));
        drop(copy);
        // Unmapped and its place taken: the module goes at the next reading.
        seen.lock().unwrap_or_else(|e| e.into_inner()).refresh();
        m.refresh(&mut u, &seen);
        assert!(
            m.loaded
                .windows(2)
                .all(|w| w[0].text.start <= w[1].text.start)
        );
    }
}
