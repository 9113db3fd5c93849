//! Per-architecture access to the interrupted registers in a signal's `ucontext_t`.
//!
//! Each architecture module exposes `registers(ctx)`; [`Native`] names the one for this target.
//! On both supported targets a frame record is two words, `[fp] = caller's fp` and
//! `[fp + 8] = return address`, so the frame walk in `unwind/framepointers.rs` is shared.

/// The registers a sample needs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Registers {
    /// The interrupted program counter.
    pub pc: u64,
    /// The frame pointer (`rbp` / `x29`).
    pub fp: u64,
    /// The stack pointer.
    pub sp: u64,
    /// The link register (`x30` on aarch64, where a leaf function's return address may live
    /// only there); 0 on x86_64, which has none.
    pub lr: u64,
}

#[cfg(target_arch = "x86_64")]
mod x86_64;
#[cfg(target_arch = "x86_64")]
pub(crate) use x86_64::Native;

#[cfg(target_arch = "aarch64")]
mod aarch64;
#[cfg(target_arch = "aarch64")]
pub(crate) use aarch64::Native;

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
compile_error!("gmon-write supports x86_64 and aarch64 Linux");
