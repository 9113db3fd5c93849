//! The further executable mappings of the loaded objects' files (spec/runtime.md §5.13): a
//! program that maps part of an object's file again, at another address (V8 maps its builtins
//! from the node binary a second time), runs code that the loader's list does not place.
//!
//! Only `/proc/self/maps` knows them. It is read when the profile is written, which may happen
//! in a signal handler (spec §1): so with system calls into buffers allocated when the session
//! started, one piece at a time, nothing allocated. Such a mapping may be gone by then (node
//! unmaps its builtins' copy while it shuts V8 down, before `exit`), so the watcher thread
//! reads the maps too as the program runs and remembers what it saw ([`ExecMaps::read_keeping`]),
//! as long as no later mapping took its place.

use std::ffi::CStr;

use gmon_format::sidecar::AddressRange;

use crate::unwind::objects::ObjectView;
use crate::zeroed::Zeroed;

/// Executable file mappings kept from one reading (a process has a few hundred; further ones
/// are left out, and their addresses are named `[unknown]`).
const MAX_MAPPINGS: usize = 4096;

/// Bytes read from the maps file at a time; a line longer than this (a path near `PATH_MAX`)
/// is skipped.
const READ_BUFFER: usize = 1 << 16;

/// One executable mapping of a file (a line of `/proc/self/maps` with `x` and an inode).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct FileMapping {
    pub start: u64,
    pub end: u64,
    /// Offset in the file of the byte at `start`.
    pub offset: u64,
    /// The file's device (`major << 32 | minor`) and inode: which file it maps.
    pub dev: u64,
    pub inode: u64,
}

/// A further mapping of one object's file, ready for the sidecar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FurtherMapping {
    pub range: AddressRange,
    pub file_offset: u64,
    /// Runtime − link-time address inside it.
    pub load_bias: u64,
}

/// The executable file mappings of the process, as last read.
#[derive(Debug)]
pub(crate) struct ExecMaps {
    table: Zeroed<FileMapping>,
    len: usize,
    buf: Zeroed<u8>,
    /// Per entry of the earlier table given to [`ExecMaps::read_keeping`]: 1 when a mapping
    /// read now overlaps it and is not the same (the address was reused).
    replaced: Zeroed<u8>,
}

impl ExecMaps {
    pub(crate) fn new() -> ExecMaps {
        ExecMaps {
            table: Zeroed::new(MAX_MAPPINGS),
            len: 0,
            buf: Zeroed::new(READ_BUFFER),
            replaced: Zeroed::new(MAX_MAPPINGS),
        }
    }

    /// Reads the calling thread's view of the maps (`/proc/thread-self`: the process's entry
    /// is empty once the main thread has called `pthread_exit`), then adds the entries of
    /// `earlier` (an older reading, with what it kept) that no mapping read now overlaps: mappings unmapped since,
    /// whose samples are still to be named. One whose addresses were mapped again since, by
    /// anything (generated code included), is dropped: its samples cannot be told apart.
    pub(crate) fn read_keeping(&mut self, earlier: Option<&ExecMaps>) -> bool {
        let before = earlier.map_or(&[][..], ExecMaps::entries);
        if let Some(r) = self.replaced.get_mut(..before.len()) {
            r.fill(0);
        }
        if !self.read_lines(before) {
            return false;
        }
        for (i, e) in before.iter().enumerate() {
            let gone = self.replaced.get(i).is_some_and(|&r| r != 0);
            let have = self.entries().contains(e);
            if !gone
                && !have
                && let Some(slot) = self.table.get_mut(self.len)
            {
                *slot = *e;
                self.len += 1;
            }
        }
        true
    }

    /// Reads the maps into the table, marking in `replaced` the entries of `before` that a
    /// different mapping now overlaps.
    fn read_lines(&mut self, before: &[FileMapping]) -> bool {
        self.len = 0;
        let path: &CStr = c"/proc/thread-self/maps";
        let Ok(fd) = crate::sys::open_at(libc::AT_FDCWD, path, libc::O_RDONLY | libc::O_CLOEXEC, 0)
        else {
            return false;
        };
        let (mut have, mut skipping) = (0usize, false);
        while let Some(room) = self.buf.get_mut(have..) {
            let n = match crate::sys::read(fd, room) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            have += n;
            let mut used = 0;
            while let Some(nl) = self
                .buf
                .get(used..have)
                .and_then(|b| b.iter().position(|&c| c == b'\n'))
            {
                if !skipping && let Some(line) = self.buf.get(used..used + nl) {
                    let m = parse_line(line);
                    if let Some((start, end)) = parse_range(line) {
                        for (e, r) in before.iter().zip(self.replaced.iter_mut()) {
                            if e.start < end && start < e.end && m.as_ref() != Some(e) {
                                *r = 1;
                            }
                        }
                    }
                    if let (Some(m), Some(slot)) = (m, self.table.get_mut(self.len)) {
                        *slot = m;
                        self.len += 1;
                    }
                }
                skipping = false;
                used += nl + 1;
            }
            if used == 0 && have == self.buf.len() {
                // A line longer than the buffer: drop what was read of it.
                skipping = true;
                have = 0;
            } else {
                self.buf.copy_within(used..have, 0);
                have -= used;
            }
        }
        crate::sys::close(fd);
        true
    }

    fn entries(&self) -> &[FileMapping] {
        self.table.get(..self.len).unwrap_or(&[])
    }

    /// The executable mappings of `o`'s file other than its own segments, each with the load
    /// bias that names its addresses from the object. The file is the one mapped at the
    /// object's first executable segment; a mapping of a byte no segment loads is left out
    /// (no link-time address names it).
    pub(crate) fn further<'a>(
        &'a self,
        o: &'a ObjectView<'_>,
    ) -> impl Iterator<Item = FurtherMapping> + 'a {
        further_in(self.entries(), o)
    }
}

/// [`ExecMaps::further`] over the entries of a reading.
pub(crate) fn further_in<'a>(
    entries: &'a [FileMapping],
    o: &'a ObjectView<'_>,
) -> impl Iterator<Item = FurtherMapping> + 'a {
    let file = o.exec_ranges().next().and_then(|r| {
        entries
            .iter()
            .find(|m| m.start <= r.start && r.start < m.end)
            .map(|m| (m.dev, m.inode))
    });
    entries
        .iter()
        .filter(move |m| file == Some((m.dev, m.inode)))
        .filter(move |m| !o.exec_ranges().any(|r| r.start < m.end && m.start < r.end))
        .filter_map(move |m| {
            let link = o.link_address_of(m.offset)?;
            Some(FurtherMapping {
                range: AddressRange {
                    start: m.start,
                    end: m.end,
                },
                file_offset: m.offset,
                load_bias: m.start.wrapping_sub(link),
            })
        })
}

/// The `start-end` of any maps line.
fn parse_range(line: &[u8]) -> Option<(u64, u64)> {
    let range = line.split(|&c| c == b' ').next()?;
    let dash = range.iter().position(|&c| c == b'-')?;
    Some((hex(range.get(..dash)?)?, hex(range.get(dash + 1..)?)?))
}

/// What the watcher saw of the maps so far ([`ExecMaps::read_keeping`]), and the table its
/// next reading goes into.
#[derive(Debug)]
pub(crate) struct SeenMaps {
    kept: ExecMaps,
    next: ExecMaps,
    /// Changes when `kept` does (the unwinder rebuilds its further modules then).
    generation: u64,
}

impl SeenMaps {
    pub(crate) fn new() -> SeenMaps {
        SeenMaps {
            kept: ExecMaps::new(),
            next: ExecMaps::new(),
            generation: 0,
        }
    }

    /// Reads the maps again, keeping what earlier readings saw and nothing has replaced.
    pub(crate) fn refresh(&mut self) {
        if self.next.read_keeping(Some(&self.kept)) {
            if self.next.entries() != self.kept.entries() {
                self.generation += 1;
            }
            std::mem::swap(&mut self.kept, &mut self.next);
        }
    }

    /// What was seen, as a number that changes with it, and a copy (for the unwinder thread,
    /// which may allocate, and should not hold the table while it walks the loader's list).
    pub(crate) fn snapshot(&self) -> (u64, Vec<FileMapping>) {
        (self.generation, self.kept.entries().to_vec())
    }

    /// The number [`SeenMaps::snapshot`] gives now.
    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }

    /// Everything seen so far.
    pub(crate) fn kept(&self) -> &ExecMaps {
        &self.kept
    }
}

/// A maps line `start-end perms offset major:minor inode path` with `x` and an inode.
fn parse_line(line: &[u8]) -> Option<FileMapping> {
    let (start, end) = parse_range(line)?;
    let mut f = line.split(|&c| c == b' ').filter(|w| !w.is_empty()).skip(1);
    let perms = f.next()?;
    let offset = hex(f.next()?)?;
    let dev = f.next()?;
    let inode = decimal(f.next()?)?;
    if perms.get(2) != Some(&b'x') || inode == 0 {
        return None;
    }
    let colon = dev.iter().position(|&c| c == b':')?;
    Some(FileMapping {
        start,
        end,
        offset,
        dev: hex(dev.get(..colon)?)? << 32 | hex(dev.get(colon + 1..)?)?,
        inode,
    })
}

fn hex(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || digits.len() > 16 {
        return None;
    }
    digits.iter().try_fold(0u64, |v, &c| {
        let d = (c as char).to_digit(16)?;
        Some(v << 4 | u64::from(d))
    })
}

fn decimal(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u64, |v, &c| {
        let d = (c as char).to_digit(10)?;
        v.checked_mul(10)?.checked_add(u64::from(d))
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn maps_lines_are_parsed() {
        let line = b"7f12a0000000-7f12a0021000 r-xp 00002000 fd:01 1234567    /usr/lib/x.so";
        assert_eq!(
            parse_line(line),
            Some(FileMapping {
                start: 0x7f12_a000_0000,
                end: 0x7f12_a002_1000,
                offset: 0x2000,
                dev: 0xfd << 32 | 1,
                inode: 1_234_567,
            })
        );
        // Not executable, or anonymous: not a file's code.
        assert_eq!(parse_line(b"1000-2000 rw-p 00000000 fd:01 5 /x"), None);
        assert_eq!(parse_line(b"1000-2000 r-xp 00000000 00:00 0 "), None);
        assert_eq!(parse_line(b"garbage"), None);
    }

    #[test]
    fn an_unmapped_mapping_is_remembered_until_its_addresses_are_reused() {
        let _one = MAPS_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let here =
            an_unmapped_mapping_is_remembered_until_its_addresses_are_reused as *const () as u64;
        let copy = SecondCopy::of(here);
        let at = copy.at;
        // Allocated first: a new table could take the copy's place once it is unmapped.
        let (mut seen, mut now, mut later) = (ExecMaps::new(), ExecMaps::new(), ExecMaps::new());
        assert!(seen.read_keeping(None));
        assert!(seen.entries().iter().any(|m| m.start == at));
        drop(copy);
        // Gone from the maps, still known from the earlier reading.
        assert!(now.read_keeping(Some(&seen)));
        assert!(now.entries().iter().any(|m| m.start == at));
        // Its addresses mapped again (anonymous memory, as generated code is): forgotten.
        // SAFETY: a fixed anonymous mapping over the page the copy held, which nothing uses.
        let anon = unsafe {
            libc::mmap(
                at as *mut libc::c_void,
                0x1000,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE,
                -1,
                0,
            )
        };
        assert_eq!(anon as u64, at);
        assert!(later.read_keeping(Some(&now)));
        // SAFETY: unmapping the mapping made above.
        unsafe { libc::munmap(anon, 0x1000) };
        assert!(!later.entries().iter().any(|m| m.start == at));
    }

    /// Tests that map a copy of the test executable's code take this first, so that tests
    /// comparing two readings of the maps do not see one of them half-way.
    pub(crate) static MAPS_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// A second, read-only executable mapping of the page of the test executable that holds
    /// `code`, unmapped on drop (as V8 maps node's builtins a second time).
    pub(crate) struct SecondCopy {
        pub at: u64,
        /// The file offset of the page.
        pub offset: u64,
        /// The page in the first mapping.
        pub page: u64,
    }

    impl SecondCopy {
        pub(crate) fn of(code: u64) -> SecondCopy {
            let mut maps = ExecMaps::new();
            assert!(maps.read_keeping(None));
            let text = *maps
                .entries()
                .iter()
                .find(|m| m.start <= code && code < m.end)
                .expect("the test's own text is mapped from its file");
            let page = code & !0xfff;
            let offset = text.offset + (page - text.start);
            let exe = std::fs::File::open("/proc/self/exe").expect("exe");
            // SAFETY: a new private read-only mapping of a file the test holds open.
            let at = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    0x1000,
                    libc::PROT_READ | libc::PROT_EXEC,
                    libc::MAP_PRIVATE,
                    std::os::fd::AsRawFd::as_raw_fd(&exe),
                    offset as libc::off_t,
                )
            };
            assert_ne!(at, libc::MAP_FAILED);
            SecondCopy {
                at: at as u64,
                offset,
                page,
            }
        }
    }

    impl Drop for SecondCopy {
        fn drop(&mut self) {
            // SAFETY: unmapping the mapping made in `of`, which nothing else uses.
            unsafe { libc::munmap(self.at as *mut libc::c_void, 0x1000) };
        }
    }

    #[test]
    fn a_second_mapping_of_the_executable_is_found() {
        let _one = MAPS_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let here = a_second_mapping_of_the_executable_is_found as *const () as u64;
        let copy = SecondCopy::of(here);
        let mut maps = ExecMaps::new();
        assert!(maps.read_keeping(None));
        let mut found = Vec::new();
        crate::unwind::objects::for_each_object(|o| {
            if o.first {
                found.extend(maps.further(o));
            }
        });
        let f = found
            .iter()
            .find(|f| f.range.start == copy.at)
            .unwrap_or_else(|| panic!("no mapping at {:#x} in {found:x?}", copy.at));
        assert_eq!(f.range.end, copy.at + 0x1000);
        assert_eq!(f.file_offset, copy.offset);
        // The copy of `here` names the same link-time address as `here`.
        let (_, _, bias) = crate::unwind::objects::main_text().expect("main text");
        assert_eq!(
            (copy.at + (here - copy.page)).wrapping_sub(f.load_bias),
            here.wrapping_sub(bias)
        );
    }
}
