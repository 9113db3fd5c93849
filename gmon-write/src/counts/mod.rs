//! What the signal handler counts into, all allocated before sampling starts and updated with
//! atomics only: the lock-free tables of a session, the `profil(2)`-style histogram and the
//! `pcsample(2)`-style buffer (spec/runtime.md §4).

pub mod pcsample;
pub mod profil;
pub(crate) mod tables;
