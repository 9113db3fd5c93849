//! The checks Go's `pprof` makes when it reads a profile (its `CheckValid` and decoder), so that
//! we refuse to write a profile it would refuse to read.

use std::collections::BTreeSet;

use super::proto::Profile;

/// Returns the first rule of Go's profile reader that `p` breaks, or `Ok`.
pub fn check_valid(p: &Profile) -> Result<(), String> {
    if p.string_table.first().map(String::as_str) != Some("") {
        return Err("string_table[0] must be \"\"".to_owned());
    }
    let n_strings = p.string_table.len();
    let str_ok = |i: i64, what: &str| -> Result<(), String> {
        match usize::try_from(i) {
            Ok(u) if u < n_strings => Ok(()),
            _ => Err(format!(
                "{what}: string index {i} outside the table of {n_strings}"
            )),
        }
    };
    if !p.sample.is_empty() && p.sample_type.is_empty() {
        return Err("samples but no sample_type".to_owned());
    }
    for vt in &p.sample_type {
        str_ok(vt.r#type, "sample_type.type")?;
        str_ok(vt.unit, "sample_type.unit")?;
    }
    if let Some(vt) = &p.period_type {
        str_ok(vt.r#type, "period_type.type")?;
        str_ok(vt.unit, "period_type.unit")?;
    }
    for &c in &p.comment {
        str_ok(c, "comment")?;
    }
    str_ok(p.default_sample_type, "default_sample_type")?;
    str_ok(p.drop_frames, "drop_frames")?;
    str_ok(p.keep_frames, "keep_frames")?;
    str_ok(p.doc_url, "doc_url")?;
    let unique =
        |ids: &mut dyn Iterator<Item = u64>, what: &str| -> Result<BTreeSet<u64>, String> {
            let mut seen = BTreeSet::new();
            for id in ids {
                if id == 0 {
                    return Err(format!("{what} id is 0"));
                }
                if !seen.insert(id) {
                    return Err(format!("{what} id {id} is used twice"));
                }
            }
            Ok(seen)
        };
    unique(&mut p.mapping.iter().map(|m| m.id), "mapping")?;
    let functions = unique(&mut p.function.iter().map(|f| f.id), "function")?;
    let locations = unique(&mut p.location.iter().map(|l| l.id), "location")?;
    for m in &p.mapping {
        str_ok(m.filename, "mapping.filename")?;
        str_ok(m.build_id, "mapping.build_id")?;
    }
    for f in &p.function {
        str_ok(f.name, "function.name")?;
        str_ok(f.system_name, "function.system_name")?;
        str_ok(f.filename, "function.filename")?;
    }
    for l in &p.location {
        for line in &l.line {
            if !functions.contains(&line.function_id) {
                return Err(format!("location id {} has a line with nil function", l.id));
            }
        }
    }
    for (i, s) in p.sample.iter().enumerate() {
        if s.value.len() != p.sample_type.len() {
            return Err(format!(
                "sample {i} has {} values, expected {}",
                s.value.len(),
                p.sample_type.len()
            ));
        }
        if let Some(bad) = s.location_id.iter().find(|id| !locations.contains(id)) {
            return Err(format!("sample {i} has nil location {bad}"));
        }
        for l in &s.label {
            str_ok(l.key, "label.key")?;
            str_ok(l.str, "label.str")?;
            str_ok(l.num_unit, "label.num_unit")?;
        }
    }
    Ok(())
}
