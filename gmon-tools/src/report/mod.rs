//! `gmon report`: the whole profile in one self-contained HTML file (spec/report.md). The
//! data comes from the one view model ([`crate::model::Loaded`]) every other view prints; it
//! is written as compact JSON (`data.rs`) into a page whose script and style are ours and inline
//! (`page.rs`), allowed by a content security policy that forbids every request.

mod collect;
mod csp;
mod data;
mod page;
mod when;

pub use collect::{ReportOptions, build_report};
pub use csp::{base64, sha256};
pub use data::{Arcs, FlameNodes, Functions, HotLines, Meta, RecordedExecutable, ReportData};
pub use page::write_page;
pub use when::utc_timestamp;
