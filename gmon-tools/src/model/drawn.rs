//! The sentence every view writes about the samples it holds: all of the profile's, or how many
//! it left out and why, and the runtime's own losses.

use super::load::Loaded;

/// What a view holds against what the profile has (spec/stacks.md §7, §13): every sample, or how many are left out
/// and why; for exact stacks also the runtime's own losses (ticks dropped, stacks cut short).
pub fn drawn_samples(l: &Loaded, drawn: u64) -> String {
    let mut said = match l.stacks.outside_samples {
        0 => format!("samples: {drawn}, every sample of the profile"),
        n => format!(
            "samples: {drawn} placed; {n} more fell outside every function and are left out"
        ),
    };
    if let Some(c) = &l.runtime_counters {
        if c.samples > drawn {
            said.push_str(&format!(
                "; the runtime counted {} ticks, {} of them not in any stored stack",
                c.samples,
                c.samples - drawn
            ));
        }
        if c.dropped > 0 {
            said.push_str(&format!(
                "; {} ticks dropped while sampling (a table full or the handler busy)",
                c.dropped
            ));
        }
        if c.truncated_stacks > 0 {
            said.push_str(&format!(
                "; {} stacks cut short, their callers unknown (placed from where they end)",
                c.truncated_stacks
            ));
        }
    }
    said
}
