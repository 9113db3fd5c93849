//! The callgrind file itself (spec/stacks.md §13): what one profile holds ([`Profile`]) and its
//! text ([`write_callgrind`]), with names compressed as `(id) name` the first time and `(id)`
//! after, absolute positions `0xADDRESS LINE` (`positions: instr line`), and one event.

use std::collections::HashMap;
use std::io::{self, Write};

/// One callgrind profile: header facts and the functions with their costs and calls.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Profile {
    /// The `cmd:` line: what was profiled.
    pub command: String,
    /// Comment lines of the header (`# ...`): where costs and calls come from, what was left
    /// out and why.
    pub comments: Vec<String>,
    /// The event's short name (`events:`).
    pub event: String,
    /// What one unit of the event is (`event: NAME : LONG`).
    pub event_long: String,
    /// The functions; [`Call::callee`] indexes this.
    pub functions: Vec<Function>,
}

/// One function: where it is, its self costs and its calls.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Function {
    /// The name shown (demangled).
    pub name: String,
    /// The object file it is in (`ob=`), a path.
    pub object: String,
    /// Its source file (`fl=`); empty when unknown.
    pub file: String,
    /// Its first instruction and source line: where calls to it go.
    pub entry: Position,
    /// Self costs, one per sampled instruction.
    pub costs: Vec<Cost>,
    /// Calls it makes.
    pub calls: Vec<Call>,
}

/// An instruction address (link-time, or the offset in the object for shared objects) and its
/// source line (0: unknown).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Position {
    /// The instruction's address.
    pub address: u64,
    /// Its source line, 0 when unknown.
    pub line: u32,
}

/// Samples at one instruction.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cost {
    /// Where.
    pub position: Position,
    /// The source file of the line when it is not the function's own (code inlined from
    /// another file: written with `fi=`).
    pub file: Option<String>,
    /// How many samples.
    pub samples: u64,
}

/// One caller → callee pair of a function's calls.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Call {
    /// Index of the called function in [`Profile::functions`].
    pub callee: usize,
    /// How many times it was called (never 0: callgrind readers take `calls=0` for no call).
    pub count: u64,
    /// The call site in the caller.
    pub site: Position,
    /// The samples spent in the callee and below while called from here.
    pub inclusive: u64,
}

impl Profile {
    /// The sum of every self cost: the `totals:` line.
    pub fn total(&self) -> u64 {
        self.functions
            .iter()
            .flat_map(|f| &f.costs)
            .fold(0u64, |a, c| a.saturating_add(c.samples))
    }
}

/// Names already written, per kind (`ob`, `fl`, `fn`), with their ids.
#[derive(Default)]
struct Names {
    ids: HashMap<(&'static str, String), usize>,
    next: HashMap<&'static str, usize>,
}

impl Names {
    /// `(id) name` the first time, `(id)` after.
    fn get(&mut self, kind: &'static str, name: &str) -> String {
        let name = clean(name);
        if let Some(id) = self.ids.get(&(kind, name.clone())) {
            return format!("({id})");
        }
        let next = self.next.entry(kind).or_insert(0);
        *next += 1;
        self.ids.insert((kind, name.clone()), *next);
        format!("({next}) {name}")
    }
}

/// A name on one line: control characters (a newline would end the line) become `?`, and an
/// empty name is callgrind's `???`.
fn clean(name: &str) -> String {
    if name.is_empty() {
        return "???".to_owned();
    }
    name.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// Writes `profile` in the callgrind format (`# callgrind format`, version 1).
pub fn write_callgrind(w: &mut dyn Write, profile: &Profile) -> io::Result<()> {
    let total = profile.total();
    writeln!(w, "# callgrind format")?;
    writeln!(w, "version: 1")?;
    writeln!(w, "creator: gmon {}", env!("CARGO_PKG_VERSION"))?;
    writeln!(w, "cmd: {}", clean(&profile.command))?;
    for c in &profile.comments {
        writeln!(w, "# {}", clean(c))?;
    }
    writeln!(w, "positions: instr line")?;
    writeln!(
        w,
        "event: {} : {}",
        clean(&profile.event),
        clean(&profile.event_long)
    )?;
    writeln!(w, "events: {}", clean(&profile.event))?;
    writeln!(w, "summary: {total}")?;
    let mut names = Names::default();
    // The current object and file of the body, which `ob=` / `fl=` lines change.
    let mut object: Option<&str> = None;
    let mut file: Option<&str> = None;
    for f in &profile.functions {
        if f.costs.is_empty() && f.calls.is_empty() {
            continue;
        }
        writeln!(w)?;
        if object != Some(f.object.as_str()) {
            writeln!(w, "ob={}", names.get("ob", &f.object))?;
            object = Some(&f.object);
        }
        if file != Some(f.file.as_str()) {
            writeln!(w, "fl={}", names.get("fl", &f.file))?;
            file = Some(&f.file);
        }
        writeln!(w, "fn={}", names.get("fn", &f.name))?;
        let mut inlined = false;
        for c in &f.costs {
            match &c.file {
                Some(other) if *other != f.file => {
                    writeln!(w, "fi={}", names.get("fl", other))?;
                    inlined = true;
                }
                _ if inlined => {
                    writeln!(w, "fe={}", names.get("fl", &f.file))?;
                    inlined = false;
                }
                _ => {}
            }
            writeln!(w, "{} {}", position(c.position), c.samples)?;
        }
        if inlined {
            writeln!(w, "fe={}", names.get("fl", &f.file))?;
        }
        for call in &f.calls {
            let Some(callee) = profile.functions.get(call.callee) else {
                continue;
            };
            if call.count == 0 {
                continue;
            }
            if callee.object != f.object {
                writeln!(w, "cob={}", names.get("ob", &callee.object))?;
            }
            writeln!(w, "cfi={}", names.get("fl", &callee.file))?;
            writeln!(w, "cfn={}", names.get("fn", &callee.name))?;
            writeln!(w, "calls={} {}", call.count, position(callee.entry))?;
            writeln!(w, "{} {}", position(call.site), call.inclusive)?;
        }
    }
    writeln!(w)?;
    writeln!(w, "totals: {total}")?;
    Ok(())
}

/// `0xADDRESS LINE`, as `positions: instr line` reads it.
fn position(p: Position) -> String {
    format!("{:#x} {}", p.address, p.line)
}
