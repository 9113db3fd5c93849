//! gmon-tools' integration tests as one binary (one link instead of twelve), one module per
//! subject. The golden comparison with GNU gprof, `tests/gprof_golden.rs`, stays a binary of its
//! own: it has its own harness (`harness = false`) that lists thousands of cases.
//!
//! Run one subject with a filter: `cargo test -p gmon-tools --test it record_programs::`.

mod common;
// The runtime's test helpers (building libgmon_write.so, reading sidecars, `skip`), shared
// with gmon-write's own tests.
#[path = "../../../gmon-write/tests/common/mod.rs"]
mod runtime_common;

mod callgrind;
mod cli_dump_convert;
mod cross_tools;
mod diff_cli;
mod diff_recordings;
mod diff_tree;
mod flame;
mod flame_inline;
mod gprof_cli;
mod merge_cli;
mod outputs;
mod pprof;
mod pprof_addresses;
mod qa_regressions;
mod record;
mod record_files;
mod record_mappings;
mod record_private;
mod record_programs;
mod record_sparse;
mod record_threads;
mod report;
mod report_diff;
mod report_tree;
mod security_readers;
