//! The in-memory model of a gmon.out file, named after the format's own words.
//!
//! A [`Profile`] is a [`Header`] (which variant, byte order, pointer width and the header's own
//! fields) followed by [`Record`]s in file order. Nothing is normalised: duplicate records,
//! zero-count arcs, spare bytes and record order are all kept, so that writing a profile that was
//! read gives back the same bytes. See `spec/gmon-out.md` for the byte layouts.

use serde::{Deserialize, Serialize};

/// Byte order of every multi-byte integer in a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Endian {
    /// Least significant byte first (x86, most ARM and RISC-V).
    Little,
    /// Most significant byte first (SPARC, s390x, PowerPC BE, m68k).
    Big,
}

/// Width of an address (`bfd_vma` on the target) in the file: 4 or 8 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "u8", try_from = "u8")]
pub enum PtrWidth {
    /// 32-bit targets (ILP32, including x32).
    Four,
    /// 64-bit targets (LP64).
    Eight,
}

impl PtrWidth {
    /// Number of bytes an address takes in the file.
    pub const fn bytes(self) -> usize {
        match self {
            PtrWidth::Four => 4,
            PtrWidth::Eight => 8,
        }
    }

    /// The largest address this width can hold.
    pub const fn max_address(self) -> u64 {
        match self {
            PtrWidth::Four => u32::MAX as u64,
            PtrWidth::Eight => u64::MAX,
        }
    }
}

impl From<PtrWidth> for u8 {
    fn from(w: PtrWidth) -> u8 {
        w.bytes() as u8
    }
}

impl TryFrom<u8> for PtrWidth {
    type Error = String;
    fn try_from(v: u8) -> Result<Self, String> {
        match v {
            4 => Ok(PtrWidth::Four),
            8 => Ok(PtrWidth::Eight),
            _ => Err(format!("pointer width must be 4 or 8, not {v}")),
        }
    }
}

/// Byte order and pointer width together: everything a file does not say about itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Encoding {
    /// Byte order of integers.
    pub endian: Endian,
    /// Width of addresses (and of BSD arc counts).
    pub ptr_width: PtrWidth,
}

impl Encoding {
    /// x86-64 Linux: little-endian, 8-byte addresses.
    pub const LITTLE_64: Encoding = Encoding {
        endian: Endian::Little,
        ptr_width: PtrWidth::Eight,
    };
    /// i386 / ARM32 Linux: little-endian, 4-byte addresses.
    pub const LITTLE_32: Encoding = Encoding {
        endian: Endian::Little,
        ptr_width: PtrWidth::Four,
    };
    /// s390x, SPARC64, PowerPC64 BE: big-endian, 8-byte addresses.
    pub const BIG_64: Encoding = Encoding {
        endian: Endian::Big,
        ptr_width: PtrWidth::Eight,
    };
    /// m68k, PowerPC32, SPARC32: big-endian, 4-byte addresses.
    pub const BIG_32: Encoding = Encoding {
        endian: Endian::Big,
        ptr_width: PtrWidth::Four,
    };
}

/// Which of the gmon.out layouts a file uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    /// GNU tagged format: `"gmon"` cookie, version, then tagged records (glibc, binutils gprof).
    Gnu,
    /// 4.4BSD `struct gmonhdr` with `GMONVERSION` and the profiling rate (Free/Net/OpenBSD).
    Bsd44,
    /// Old BSD `struct phdr`: lpc, hpc, ncnt, then bins and arcs (4.2BSD and descendants).
    BsdOld,
}

/// `GMON_MAGIC`: the four bytes that open a GNU tagged file.
pub const GMON_MAGIC: [u8; 4] = *b"gmon";
/// `GMON_VERSION`: the version word glibc writes in the GNU header.
pub const GMON_VERSION: u32 = 1;
/// `GMON_SHOBJ_VERSION`: version of ld.so `LD_PROFILE` files (read by sprof, refused by gprof).
pub const GMON_SHOBJ_VERSION: u32 = 0x1ffff;
/// `GMON_TAG_TIME_HIST`: tag byte of a histogram record.
pub const GMON_TAG_TIME_HIST: u8 = 0;
/// `GMON_TAG_CG_ARC`: tag byte of a call-graph arc record.
pub const GMON_TAG_CG_ARC: u8 = 1;
/// `GMON_TAG_BB_COUNT`: tag byte of a basic-block count record.
pub const GMON_TAG_BB_COUNT: u8 = 2;
/// `GMONVERSION`: the version constant in a 4.4BSD `struct gmonhdr`.
pub const GMONVERSION: u32 = 0x0005_1879;

/// Ticks per second of the clock that drove the histogram (`prof_rate`, `profrate`, `hz`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ProfRate(pub u32);

impl ProfRate {
    /// What gprof assumes when a file carries no rate (`hertz()` on Linux: 100).
    pub const DEFAULT: ProfRate = ProfRate(100);
}

/// The unit of histogram samples: `dimen` (15 bytes, NUL-padded) and `dimen_abbrev`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Dimension {
    /// The 15 raw bytes of `dimen`, normally `"seconds"` followed by NULs.
    pub name: [u8; 15],
    /// `dimen_abbrev`, normally `b's'`.
    pub abbrev: u8,
}

impl Dimension {
    /// `"seconds"` / `'s'`, what every known runtime writes.
    pub const SECONDS: Dimension = Dimension {
        name: *b"seconds\0\0\0\0\0\0\0\0",
        abbrev: b's',
    };

    /// The name up to its first NUL, as gprof prints it.
    pub fn name_str(&self) -> String {
        let end = self
            .name
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(self.name.len());
        String::from_utf8_lossy(&self.name[..end]).into_owned()
    }
}

impl Default for Dimension {
    fn default() -> Self {
        Dimension::SECONDS
    }
}

/// A PC-sampling histogram (`struct gmon_hist_hdr` + bins, or the BSD header's histogram).
///
/// Bin `i` covers the addresses gprof assigns to it from `low_pc`, `high_pc` and the bin count
/// (see [`Histogram::scale`]). Counts are `u64` so that sums and wide FreeBSD counters fit; a
/// writer refuses a count that does not fit the target layout's counter.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Histogram {
    /// `low_pc`: first address covered (link-time address; PIE runtimes subtract the load bias).
    pub low_pc: u64,
    /// `high_pc`: end of the covered range (exclusive).
    pub high_pc: u64,
    /// Sampling rate. For old BSD files, which store none, readers put [`ProfRate::DEFAULT`]
    /// here and say so in [`BsdOldHeader`].
    pub prof_rate: ProfRate,
    /// Unit of the samples (GNU only; BSD files are always seconds).
    pub dimension: Dimension,
    /// Sample counts, one per bin.
    pub bins: Vec<u64>,
}

impl Histogram {
    /// gprof's `hist_scale`: 2-byte units of text per bin, `((high - low) / 2) / bins`.
    pub fn scale(&self) -> f64 {
        if self.bins.is_empty() {
            return 0.0;
        }
        (self.high_pc.saturating_sub(self.low_pc) / 2) as f64 / self.bins.len() as f64
    }

    /// Sum of all bins.
    pub fn total(&self) -> u64 {
        self.bins.iter().fold(0u64, |a, &b| a.saturating_add(b))
    }
}

/// One call-graph arc (`struct gmon_cg_arc_record`, BSD `struct rawarc`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CallArc {
    /// `from_pc`: an address inside the caller (glibc rounds it down to a 16-byte bucket).
    pub from_pc: u64,
    /// `self_pc`: an address inside the callee (just after its `mcount` call).
    pub self_pc: u64,
    /// Number of traversals: `u32` in GNU files, pointer-sized in BSD files.
    pub count: u64,
}

/// One basic block's execution count (an entry of a tag-2 record).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct BasicBlockCount {
    /// Address of the basic block.
    pub address: u64,
    /// Number of times it was executed.
    pub count: u64,
    /// Version-0 files only: the strings and line number stored with each block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub legacy: Option<LegacyBlockInfo>,
}

/// Per-block extras of a version-0 GNU file (read for completeness; gprof skips them).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LegacyBlockInfo {
    /// First NUL-terminated string (the function name), without its NUL.
    pub function: Vec<u8>,
    /// Second NUL-terminated string (the file name), without its NUL.
    pub file: Vec<u8>,
    /// The `int` line number.
    pub line: i32,
}

/// A tag-2 record: a group of basic-block counts.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct BasicBlockRecord {
    /// Version-0 files only: the NUL-terminated string after `nblocks`, without its NUL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub legacy_name: Option<Vec<u8>>,
    /// The blocks, in file order.
    pub blocks: Vec<BasicBlockCount>,
}

/// One record of a profile, in file order.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Record {
    /// Tag 0, or the histogram part of a BSD file.
    Histogram(Histogram),
    /// Tag 1, or one BSD `rawarc`. Its JSON kind stays `"arc"` (spec/json.md).
    #[serde(rename = "arc")]
    CallArc(CallArc),
    /// Tag 2.
    BasicBlocks(BasicBlockRecord),
}

/// The GNU header (`struct gmon_hdr`): cookie, version and 12 spare bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GnuHeader {
    /// `version`: 1 (or 0 for the historic basic-block layout).
    pub version: u32,
    /// `spare`: glibc writes zeros; `gprof -s` leaves stack residue here.
    pub spare: [u8; 12],
}

/// The 4.4BSD header (`struct gmonhdr`) fields that are not part of the histogram.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Bsd44Header {
    /// `version`: [`GMONVERSION`].
    pub version: u32,
    /// `profrate`: the clock rate (also copied into the histogram's `prof_rate`).
    pub prof_rate: u32,
    /// FreeBSD `histcounter_type` (first spare word): 0 = `u16` bins, else the counter size in
    /// bits, negative when signed. NetBSD/OpenBSD leave it 0.
    pub histcounter_type: i32,
    /// The remaining two spare words, raw.
    pub spare: [u8; 8],
}

/// The old BSD header (`struct phdr`): only its size varies between systems.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct BsdOldHeader {
    /// Size of the header in bytes: `2P + 4` (GNU gprof's view: 12 or 20), or 24 on LP64 systems
    /// whose C compiler pads `struct phdr` (FreeBSD's `struct ophdr`).
    pub header_size: u32,
}

/// Header of a profile: the variant and its own fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "variant", rename_all = "kebab-case")]
pub enum Header {
    /// GNU tagged format.
    Gnu(GnuHeader),
    /// 4.4BSD format.
    Bsd44(Bsd44Header),
    /// Old BSD format.
    BsdOld(BsdOldHeader),
}

impl Header {
    /// Which layout this header belongs to.
    pub fn variant(&self) -> Variant {
        match self {
            Header::Gnu(_) => Variant::Gnu,
            Header::Bsd44(_) => Variant::Bsd44,
            Header::BsdOld(_) => Variant::BsdOld,
        }
    }
}

/// A whole gmon.out file.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Profile {
    /// Byte order and pointer width the file was read with (or is to be written with).
    pub encoding: Encoding,
    /// The variant's header.
    pub header: Header,
    /// Records in file order. BSD files hold exactly one histogram followed by arcs.
    pub records: Vec<Record>,
    /// Bytes after the last whole record that a reader skipped (BSD files may end in a partial
    /// arc, which gprof ignores). Empty for GNU files, which must end on a record boundary.
    #[serde(
        default,
        with = "serde_bytes_as_vec",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub trailing: Vec<u8>,
}

impl Profile {
    /// An empty GNU profile (version 1, zero spare bytes).
    pub fn new_gnu(encoding: Encoding) -> Profile {
        Profile {
            encoding,
            header: Header::Gnu(GnuHeader {
                version: GMON_VERSION,
                spare: [0; 12],
            }),
            records: Vec::new(),
            trailing: Vec::new(),
        }
    }

    /// The histogram records, in file order.
    pub fn histograms(&self) -> impl Iterator<Item = &Histogram> {
        self.records.iter().filter_map(|r| match r {
            Record::Histogram(h) => Some(h),
            _ => None,
        })
    }

    /// The arc records, in file order.
    pub fn arcs(&self) -> impl Iterator<Item = &CallArc> {
        self.records.iter().filter_map(|r| match r {
            Record::CallArc(a) => Some(a),
            _ => None,
        })
    }

    /// Every basic-block count of every tag-2 record, in file order.
    pub fn basic_blocks(&self) -> impl Iterator<Item = &BasicBlockCount> {
        self.records.iter().flat_map(|r| match r {
            Record::BasicBlocks(b) => b.blocks.as_slice(),
            _ => &[],
        })
    }
}

mod serde_bytes_as_vec {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(v.iter())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        Vec::<u8>::deserialize(d)
    }
}

impl std::fmt::Display for Dimension {
    /// `"NAME" 'A'`, faithful to the bytes: the name up to its last non-NUL byte (gprof stops at
    /// the first NUL, but a byte after it still makes two dimensions differ, and two names that
    /// print alike must not look equal), every byte that is not printable ASCII as `\xNN`, and
    /// `"`, `'` and `\` behind a backslash.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        fn escaped(f: &mut std::fmt::Formatter<'_>, b: u8) -> std::fmt::Result {
            match b {
                b'"' | b'\'' | b'\\' => write!(f, "\\{}", char::from(b)),
                0x20..=0x7e => write!(f, "{}", char::from(b)),
                _ => write!(f, "\\x{b:02x}"),
            }
        }
        let end = self
            .name
            .iter()
            .rposition(|&b| b != 0)
            .map_or(0, |last| last + 1);
        f.write_str("\"")?;
        for &b in self.name.iter().take(end) {
            escaped(f, b)?;
        }
        f.write_str("\" '")?;
        escaped(f, self.abbrev)?;
        f.write_str("'")
    }
}

impl std::fmt::Display for Variant {
    /// The names the `gmon` command uses: `gnu`, `bsd44`, `bsd-old`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Variant::Gnu => "gnu",
            Variant::Bsd44 => "bsd44",
            Variant::BsdOld => "bsd-old",
        })
    }
}

impl std::fmt::Display for Endian {
    /// `little` or `big`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Endian::Little => "little",
            Endian::Big => "big",
        })
    }
}

impl std::fmt::Display for PtrWidth {
    /// `4` or `8`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.bytes())
    }
}

#[cfg(test)]
mod display_tests {
    use super::Dimension;

    #[test]
    fn dimension_shows_bytes_after_the_first_nul_and_escapes_control_bytes() {
        assert_eq!(Dimension::SECONDS.to_string(), r#""seconds" 's'"#);
        let mut d = Dimension::SECONDS;
        d.name[8] = 2;
        assert_eq!(d.to_string(), r#""seconds\x00\x02" 's'"#);
        d.name[7] = 0x7f;
        d.abbrev = b'\'';
        assert_eq!(d.to_string(), r#""seconds\x7f\x02" '\''"#);
        let quote = Dimension {
            name: *b"a\"b\\c\xe9\0\0\0\0\0\0\0\0\0",
            abbrev: 0,
        };
        assert_eq!(quote.to_string(), r#""a\"b\\c\xe9" '\x00'"#);
    }
}
