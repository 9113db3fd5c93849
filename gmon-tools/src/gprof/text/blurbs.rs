//! Explanations printed without `-b`, in the places where GNU gprof prints its own.
//!
//! The texts are this project's (gprof's paragraphs are GPL prose and are not copied). What is
//! kept from gprof is the *shape* that tools rely on: the flat-profile and FSF call-graph
//! explanations follow their table and start with an empty line; each ends with a form-feed line
//! and one closing line, and the next section then starts with its own form-feed line (gprof2dot
//! stops reading a section at a form feed). The BSD (`-T`) call-graph explanation comes before
//! the table.
//!
//! Golden tests compare everything outside these blocks byte for byte; see
//! `gmon-tools/tests/gprof_golden.rs` for the exact rule that locates them.

/// After the flat profile (FSF), or after `flat profile:` (BSD, `-T`).
pub const FLAT: &str = "
 Columns of the flat profile (one row per function, hottest first):

 % time      share of all samples that fell inside this function.
             Samples that hit no function still count in the total,
             so the column may add up to less (or, because of the
             histogram's rounding, slightly more) than 100.
 cumulative  running sum of the self seconds of the rows above.
 self        seconds of samples inside the function itself.
 calls       times the function was called (blank when the function
             was not compiled with -pg, so no calls were counted).
 self/call   self time divided by calls, in the unit of the header.
 total/call  self time plus the time of its callees, per call.
 name        the function; see the call graph for where it is called.

 Times are estimates: each histogram sample stands for one clock tick
 spent at the sampled address.
\x0c
 Explanations written for gmon; use -b to omit them.
";

/// After the call graph (FSF layout).
pub const FSF_CALLG: &str = "
 Reading the call graph:

 Each block between dashed lines describes one function, the one whose
 line starts with its [index]. The lines above it are its callers, the
 lines below it are its callees.

 On the function's own line:
   % time    share of the total time spent in the function and in
             what it calls.
   self      seconds spent in the function itself.
   children  seconds spent in its callees on its behalf.
   called    calls received from other functions, then +N for calls
             it made to itself.

 On a caller's line, self and children are the part of the function's
 time charged to that caller, and called is this caller's calls over all
 calls of the function. On a callee's line they are the part of the
 callee's time charged to this function, and called is these calls over
 all calls of the callee.

 Functions that call each other in a loop form a cycle. A cycle has its
 own entry \"<cycle N as a whole>\" listing its members, and member names
 carry \"<cycle N>\". A caller of <spontaneous> means no recorded caller.
 An index in parentheses marks a function left out of the listing.
\x0c
 Explanations written for gmon; use -b to omit them.
";

/// Before the call graph (BSD layout, `-T`).
pub const BSD_CALLG: &str = "


call graph profile:
 Entries are sorted by the time spent in a function and its
 descendants. Each entry lists the callers above the function's own
 line (marked by its index) and the callees below it.

 self         seconds spent in the function itself (or, on a caller or
              callee line, the part charged along that arc).
 descendants  seconds spent in what it calls, charged the same way.
 called/total calls along the arc over all calls of the callee.
 called+self  calls from other functions, plus calls to itself.

 Members of a cycle carry <cycle N>, and each cycle has an entry of its
 own.
\x0c
 Explanations written for gmon; use -b to omit them.

";
