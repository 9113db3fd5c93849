//! Writing output files safely: to a temporary file beside the target, renamed into place only
//! when everything was written, so a failure never leaves a half-written file.

use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use anyhow::Context;

/// Creates `path` atomically: `fill` writes the content; on success the temporary file is renamed
/// to `path`, on error it is removed and `path` is left untouched.
pub fn write_atomically<F>(path: &Path, fill: F) -> anyhow::Result<()>
where
    F: FnOnce(&mut dyn Write) -> anyhow::Result<()>,
{
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let tmp = tempfile::Builder::new()
        .prefix(".gmon-tmp-")
        .tempfile_in(dir)
        .with_context(|| format!("{}: cannot create a temporary file", dir.display()))?;
    {
        let mut w = BufWriter::new(tmp.as_file());
        fill(&mut w)?;
        w.flush()
            .with_context(|| format!("{}: write failed", path.display()))?;
    }
    tmp.as_file().sync_all().ok();
    tmp.persist(path)
        .map_err(|e| e.error)
        .with_context(|| format!("{}: cannot create", path.display()))?;
    Ok(())
}

/// Reads a whole input file, naming it in the error.
pub fn read_input(path: &Path) -> anyhow::Result<Vec<u8>> {
    fs::read(path).with_context(|| format!("{}", path.display()))
}

/// Whether an error chain ends in an `io::Error` of kind `BrokenPipe`.
pub fn is_broken_pipe(err: &io::Error) -> bool {
    err.kind() == io::ErrorKind::BrokenPipe
}
