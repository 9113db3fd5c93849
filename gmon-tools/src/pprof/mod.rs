//! pprof output: the `profile.proto` messages ([`proto`], hand-written prost structs, no
//! `protoc`) and the builder that turns stacks and call counts into a profile
//! ([`build_profile`]), specified in `spec/stacks.md` §7.

mod builder;
pub mod proto;
mod validate;

pub use builder::{
    PprofError, PprofOptions, SAMPLE_TYPES, build_profile, encode_gzip, period_nanos,
};
pub use validate::check_valid;
