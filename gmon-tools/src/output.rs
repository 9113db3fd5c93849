//! Writing output files safely: to a temporary file beside the target, renamed into place only
//! when everything was written, so a failure never leaves a half-written file.

use std::fs;
use std::io::{BufWriter, Write};
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
    let mut builder = tempfile::Builder::new();
    builder.prefix(".gmon-tmp-");
    // tempfile creates 0600 files; an output file should get the mode any other program's new
    // file gets (0666 less the umask, which open(2) applies to this mode), or keep the mode of
    // the file it replaces.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(path)
            .map(|m| m.permissions().mode() & 0o7777)
            .unwrap_or(0o666);
        builder.permissions(fs::Permissions::from_mode(mode));
    }
    // The temporary file is our detail: an error names the path the user asked for and the OS
    // reason, not tempfile's ".gmon-tmp-XXXX" path.
    let tmp = builder
        .tempfile_in(dir)
        .map_err(|e| anyhow::anyhow!("{}: cannot write: {}", path.display(), os_reason(&e)))?;
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

/// The operating system's reason for `e` without the path tempfile adds: tempfile reports
/// "REASON at path \"TMP\"" as a custom error (its inner error is private), so the suffix is
/// cut from the text.
pub fn os_reason(e: &std::io::Error) -> String {
    if let Some(code) = e.raw_os_error() {
        return std::io::Error::from_raw_os_error(code).to_string();
    }
    let text = e.to_string();
    match text.rfind(" at path ") {
        Some(cut) => text.get(..cut).unwrap_or(&text).to_string(),
        None => text,
    }
}

/// Reads a whole input file, naming it in the error.
pub fn read_input(path: &Path) -> anyhow::Result<Vec<u8>> {
    fs::read(path).with_context(|| format!("{}", path.display()))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn new_file_gets_the_umask_mode_and_replaced_file_keeps_its_mode() {
        let dir = tempfile::tempdir().unwrap();
        let fresh = dir.path().join("fresh.out");
        write_atomically(&fresh, |w| Ok(w.write_all(b"x")?)).unwrap();
        // The umask can only remove bits from 0666, and never the owner's read/write here.
        let mode = fs::metadata(&fresh).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode & 0o600, 0o600);
        assert_eq!(mode & !0o666, 0);
        // An umask of 077 would give 0600; the usual 022 gives 0644. Either way, group/other
        // read must follow the umask rather than tempfile's fixed 0600.
        let replaced = dir.path().join("replaced.out");
        fs::write(&replaced, b"old").unwrap();
        fs::set_permissions(&replaced, fs::Permissions::from_mode(0o640)).unwrap();
        write_atomically(&replaced, |w| Ok(w.write_all(b"new")?)).unwrap();
        assert_eq!(
            fs::metadata(&replaced).unwrap().permissions().mode() & 0o777,
            0o640
        );
        assert_eq!(fs::read(&replaced).unwrap(), b"new");
    }

    #[test]
    fn error_under_a_regular_file_names_the_requested_path_not_the_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plain");
        fs::write(&file, b"x").unwrap();
        let target = file.join("out");
        let err = write_atomically(&target, |w| Ok(w.write_all(b"y")?)).unwrap_err();
        let msg = format!("{err:#}");
        assert!(
            msg.starts_with(&format!("{}: cannot write: ", target.display())),
            "{msg}"
        );
        assert!(msg.contains("Not a directory"), "{msg}");
        assert!(!msg.contains(".gmon-tmp-"), "{msg}");
    }

    #[test]
    fn failed_fill_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out");
        let err = write_atomically(&target, |w| {
            w.write_all(b"partial")?;
            anyhow::bail!("boom")
        });
        assert!(err.is_err());
        assert!(!target.exists());
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            0,
            "temporary file left behind"
        );
    }
}
