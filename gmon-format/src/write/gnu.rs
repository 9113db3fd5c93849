//! Writer for the GNU tagged format; the layout is in [`crate::read`]'s `gnu` module doc.

use super::Emitter;
use crate::error::{Error, Result};
use crate::model::{
    BasicBlockRecord, GMON_MAGIC, GMON_TAG_BB_COUNT, GMON_TAG_CG_ARC, GMON_TAG_TIME_HIST,
    GnuHeader, Histogram, Profile, Record, Variant,
};

pub(crate) fn write(e: &mut Emitter, h: &GnuHeader, p: &Profile) -> Result<()> {
    if h.version > 1 {
        return Err(Error::BadHeader {
            variant: Variant::Gnu,
            problem: "the GNU version must be 0 or 1",
        });
    }
    if !p.trailing.is_empty() {
        return Err(Error::Unrepresentable {
            record: p.records.len(),
            variant: Variant::Gnu,
            problem: "GNU files end on a record boundary: trailing bytes have no place",
        });
    }
    e.bytes(&GMON_MAGIC);
    e.u32(h.version);
    e.bytes(&h.spare);
    for (i, r) in p.records.iter().enumerate() {
        e.mark(e.len());
        match r {
            Record::Histogram(hist) => histogram(e, i, hist)?,
            Record::CallArc(a) => {
                e.bytes(&[GMON_TAG_CG_ARC]);
                e.ptr(a.from_pc, i, "arc from_pc")?;
                e.ptr(a.self_pc, i, "arc self_pc")?;
                e.uint(a.count, 4, i, "arc count (u32 in GNU files)")?;
            }
            Record::BasicBlocks(b) if h.version == 0 => blocks_v0(e, i, b)?,
            Record::BasicBlocks(b) => blocks_v1(e, i, b)?,
        }
    }
    Ok(())
}

fn histogram(e: &mut Emitter, i: usize, h: &Histogram) -> Result<()> {
    e.bytes(&[GMON_TAG_TIME_HIST]);
    e.ptr(h.low_pc, i, "histogram low_pc")?;
    e.ptr(h.high_pc, i, "histogram high_pc")?;
    e.uint(h.bins.len() as u64, 4, i, "histogram bin count")?;
    e.u32(h.prof_rate.0);
    e.bytes(&h.dimension.name);
    e.bytes(&[h.dimension.abbrev]);
    for &b in &h.bins {
        e.uint(b, 2, i, "histogram bin (u16 in GNU files)")?;
    }
    Ok(())
}

fn blocks_v1(e: &mut Emitter, i: usize, b: &BasicBlockRecord) -> Result<()> {
    if b.legacy_name.is_some() || b.blocks.iter().any(|bb| bb.legacy.is_some()) {
        return Err(Error::Unrepresentable {
            record: i,
            variant: Variant::Gnu,
            problem: "version-0 basic-block details in a version-1 file",
        });
    }
    e.bytes(&[GMON_TAG_BB_COUNT]);
    e.uint(b.blocks.len() as u64, 4, i, "basic-block count")?;
    for bb in &b.blocks {
        e.ptr(bb.address, i, "basic-block address")?;
        e.ptr(bb.count, i, "basic-block execution count")?;
    }
    Ok(())
}

fn blocks_v0(e: &mut Emitter, i: usize, b: &BasicBlockRecord) -> Result<()> {
    let unrepresentable = |problem| Error::Unrepresentable {
        record: i,
        variant: Variant::Gnu,
        problem,
    };
    let name = b
        .legacy_name
        .as_deref()
        .ok_or_else(|| unrepresentable("a version-0 basic-block record needs its name"))?;
    e.bytes(&[GMON_TAG_BB_COUNT]);
    e.uint(b.blocks.len() as u64, 4, i, "basic-block count")?;
    cstr(e, name).map_err(|()| unrepresentable("a name contains a NUL byte"))?;
    for bb in &b.blocks {
        let legacy = bb.legacy.as_ref().ok_or_else(|| {
            unrepresentable("a version-0 basic block needs its function, file and line")
        })?;
        e.ptr(bb.count, i, "basic-block execution count")?;
        e.ptr(bb.address, i, "basic-block address")?;
        cstr(e, &legacy.function).map_err(|()| unrepresentable("a name contains a NUL byte"))?;
        cstr(e, &legacy.file).map_err(|()| unrepresentable("a name contains a NUL byte"))?;
        e.u32(legacy.line as u32);
    }
    Ok(())
}

/// Appends a NUL-terminated string; one with a NUL inside would not read back.
fn cstr(e: &mut Emitter, s: &[u8]) -> std::result::Result<(), ()> {
    if s.contains(&0) {
        return Err(());
    }
    e.bytes(s);
    e.bytes(&[0]);
    Ok(())
}
