//! x86_64 Linux: `uc_mcontext.gregs[REG_RIP / REG_RBP / REG_RSP]`.

use super::Registers;

/// Register access for x86_64.
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
        let g = unsafe { &(*uc).uc_mcontext.gregs };
        Some(Registers {
            pc: g[libc::REG_RIP as usize] as u64,
            fp: g[libc::REG_RBP as usize] as u64,
            sp: g[libc::REG_RSP as usize] as u64,
            lr: 0,
        })
    }
}
