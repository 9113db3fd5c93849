//! The runtime's environment inputs, all read through [`var`], which ignores every one of them
//! in a secure-execution process (set-uid, set-gid or file capabilities:
//! `getauxval(AT_SECURE) != 0`), as glibc ignores `GMON_OUT_PREFIX` there. An unprivileged
//! user must not steer a privileged program's profile (where it is written, how often it is
//! sampled) through variables it inherits. The list is in spec/runtime.md §3.

use std::ffi::OsString;

/// `gmon record`'s output path: the preload constructor starts profiling when it is set.
pub(crate) const RECORD_OUT: &str = "GMON_RECORD_OUT";
/// `gmon record`'s sampling rate (Hz).
pub(crate) const RECORD_HZ: &str = "GMON_RECORD_HZ";
/// `gmon record`'s stack switch (`0` turns stacks off).
pub(crate) const RECORD_STACKS: &str = "GMON_RECORD_STACKS";
/// `gmon record`'s stack walk: `dwarf` (default) or `fp` (spec/runtime.md §4.4).
pub(crate) const RECORD_UNWIND: &str = "GMON_RECORD_UNWIND";
/// `timer`: sample with the per-thread CPU-time timers, not the perf task clock
/// (spec/runtime.md §4.1, "Clock").
pub(crate) const RECORD_CLOCK: &str = "GMON_RECORD_CLOCK";
/// The pid of the process that claimed `GMON_RECORD_OUT` (descendants append `.<pid>`).
pub(crate) const RECORD_OWNER: &str = "GMON_RECORD_OWNER";
/// `0` (`gmon record --no-inherit`): only the process that claimed `GMON_RECORD_OUT` profiles.
pub(crate) const RECORD_INHERIT: &str = "GMON_RECORD_INHERIT";
/// `1`: the directory of `GMON_RECORD_OUT` is `gmon record`'s private run directory (checked
/// before each write, problems noted in it instead of on stderr: save/record.rs).
pub(crate) const RECORD_PRIVATE: &str = "GMON_RECORD_PRIVATE";
/// glibc's output prefix: `$GMON_OUT_PREFIX.<pid>`.
pub(crate) const OUT_PREFIX: &str = "GMON_OUT_PREFIX";
/// The rate of `gmon_profil` and `gmon_pcsample` (Hz).
pub(crate) const PROFIL_HZ: &str = "GMON_PROFIL_HZ";

/// Every input, for the documentation test.
#[cfg(test)]
pub(crate) const ALL: [&str; 10] = [
    RECORD_OUT,
    RECORD_CLOCK,
    RECORD_HZ,
    RECORD_STACKS,
    RECORD_UNWIND,
    RECORD_OWNER,
    RECORD_INHERIT,
    RECORD_PRIVATE,
    OUT_PREFIX,
    PROFIL_HZ,
];

/// The value of the runtime's environment input `name`: `None` when unset, empty, or when the
/// process runs in secure-execution mode.
pub(crate) fn var(name: &str) -> Option<OsString> {
    if crate::sys::is_secure() {
        return None;
    }
    std::env::var_os(name).filter(|v| !v.is_empty())
}

/// [`var`] parsed as a number.
pub(crate) fn number<T: std::str::FromStr>(name: &str) -> Option<T> {
    var(name)?.to_str()?.parse().ok()
}

#[cfg(test)]
mod tests {
    /// spec/runtime.md lists every input the runtime reads.
    #[test]
    fn every_input_is_documented() {
        let spec = include_str!("../../spec/runtime.md");
        for name in super::ALL {
            assert!(
                spec.contains(&format!("`{name}`")),
                "{name} missing from spec"
            );
        }
    }
}
