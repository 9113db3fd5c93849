//! Integration tests of gmon-format: one binary, one module per concern.

mod fuzz_corpus;
// The fuzz targets' checks, so the corpus replay asserts exactly what the fuzzer does.
#[path = "../../../fuzz/fuzz_targets/common.rs"]
mod fuzz_common;
mod malformed;
mod props;
mod testdata;
