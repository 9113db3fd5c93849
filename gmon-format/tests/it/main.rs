//! Integration tests of gmon-format: one binary, one module per concern.

mod testdata;
