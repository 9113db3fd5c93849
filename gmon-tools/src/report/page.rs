//! The page: page.html with our style and script inline, the data as JSON in a
//! non-executable script element, and a content security policy that allows those two blocks
//! by hash and nothing else (spec/report.md §1).

use std::io::{self, Write};

use super::csp::{base64, sha256};
use super::data::ReportData;
use crate::flame::escape;

const TEMPLATE: &str = include_str!("page.html");
const STYLE: &str = include_str!("style.css");
const SCRIPT: &str = include_str!("app.js");

/// Writes the whole page for `data`.
pub fn write_page(w: &mut dyn Write, data: &ReportData) -> io::Result<()> {
    let json = serde_json::to_string(data).map_err(io::Error::other)?;
    // Inside <script>, only `</script` and `<!--` could end or change the element; a JSON
    // string can say `<` as `\u003c` instead, so no `<` is left at all.
    let json = json.replace('<', "\\u003c");
    let hash = |s: &str| format!("'sha256-{}'", base64(&sha256(s.as_bytes())));
    let csp = format!(
        "default-src 'none'; script-src {}; style-src {}; base-uri 'none'; form-action 'none'",
        hash(SCRIPT),
        hash(STYLE)
    );
    let title = escape(&format!("gmon report: {}", data.meta.program));
    // One pass over the template: text put in (a program's path in the title) is never read
    // again as a placeholder.
    let mut rest = TEMPLATE;
    while let Some((before, after)) = rest.split_once("{{") {
        w.write_all(before.as_bytes())?;
        let (name, after) = after
            .split_once("}}")
            .ok_or_else(|| io::Error::other("page.html: unclosed {{"))?;
        let value = match name {
            "CSP" => csp.as_str(),
            "TITLE" => title.as_str(),
            "STYLE" => STYLE,
            "SCRIPT" => SCRIPT,
            "DATA" => json.as_str(),
            other => {
                return Err(io::Error::other(format!(
                    "page.html: unknown {{{{{other}}}}}"
                )));
            }
        };
        w.write_all(value.as_bytes())?;
        rest = after;
    }
    w.write_all(rest.as_bytes())
}
