//! Placeholder: filled in by the gprof work.
