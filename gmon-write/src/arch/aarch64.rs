//! aarch64 Linux: `uc_mcontext.pc`, `regs[29]` (frame pointer), `regs[30]` (link register) and
//! `sp`.

use super::Registers;

/// Register access for aarch64.
pub(crate) struct Native;

impl Native {
    /// Reads the interrupted registers.
    ///
    /// # Safety
    /// `ctx` must be the third argument of an `SA_SIGINFO` handler (or null).
    #[inline(always)]
    pub(crate) unsafe fn registers(ctx: *const libc::c_void) -> Option<Registers> {
        let uc = ctx.cast::<libc::ucontext_t>();
        if uc.is_null() {
            return None;
        }
        // SAFETY: the kernel passes a valid ucontext_t to an SA_SIGINFO handler.
        let m = unsafe { &(*uc).uc_mcontext };
        Some(Registers {
            pc: m.pc,
            fp: m.regs[29],
            sp: m.sp,
            lr: m.regs[30],
        })
    }
}
