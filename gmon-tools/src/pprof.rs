//! Placeholder: filled in by the pprof work.
