//! Integration tests of gmon-format: one binary, one module per concern.

mod fuzz_corpus;
mod malformed;
mod props;
mod testdata;
