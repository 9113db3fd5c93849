//! Placeholder: filled in by the flame work.
