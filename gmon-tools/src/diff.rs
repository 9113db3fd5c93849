//! Placeholder: filled in by the diff work.
