//! Placeholder: filled in by the dump work.
