//! A user-space `profil()` / `pcsample()` runtime that writes gmon.out without `-pg`.
//!
//! This crate is filled in by the runtime work: the safe `profil`-style histogram API, the
//! `pcsample`-style raw sample buffer, the `Profiler` that writes a GNU gmon.out, and the C ABI.

#![deny(missing_docs)]
