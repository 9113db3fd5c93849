//! `gmon report`: the whole profile in one self-contained HTML file (spec/report.md). The
//! data comes from the one view model ([`crate::model::Loaded`]) every other view prints; it
//! is written as compact JSON (`data.rs`) into a page whose script and style are ours and inline
//! (`page.rs`), allowed by a content security policy that forbids every request.

mod collect;
mod csp;
mod data;
mod diff;
mod diff_tree;
mod flame;
mod page;
mod tree;
mod when;

pub use collect::{ReportOptions, build_report};
pub use csp::{base64, sha256};
pub use data::{
    Arcs, DiffColumns, DiffData, DiffExecutable, DiffHead, FlameNodes, Functions, HotLines, Meta,
    RecordedExecutable, ReportData, TreeExecutable,
};
pub use diff::build_diff_report;
pub use diff_tree::build_tree_diff_report;
pub use page::write_page;
pub use tree::build_tree_report;
pub use when::utc_timestamp;
