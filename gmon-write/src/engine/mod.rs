//! The sampling engine (spec/runtime.md §4): the clocks (a perf task clock or a CPU-time timer
//! per thread), the reserved signal and its handler, the thread watcher, and the session the
//! handler counts into and that turns into a profile. Uses `save/`, `unwind/` and `counts/`;
//! `interpose/` and the public API call into it, never the reverse.

pub(crate) mod lastthread;
pub(crate) mod perfclock;
pub(crate) mod sampler;
pub(crate) mod session;
pub(crate) mod signal;
pub(crate) mod threadclocks;
