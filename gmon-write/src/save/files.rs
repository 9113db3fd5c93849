//! Writing an output file safely (spec/runtime.md §1): a temporary file created exclusively
//! next to the final name, then renamed over it.
//!
//! * The temporary name is `.<name>.tmp.<16 random hex digits>` in the final file's directory,
//!   opened with `O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC`: a name planted in advance (a
//!   symlink or a file) makes the open fail and another random name is tried; nothing is ever
//!   written through a link at the temporary name.
//! * The final name: a symbolic link there is followed only when the caller (the effective
//!   uid) owns it (it is then written through to its target, up to 40 links); a link owned by
//!   anyone else is refused, never followed and never replaced. glibc's `-pg` runtime is
//!   stricter: it opens gmon.out with `O_NOFOLLOW` and refuses every link.
//! * Mode: created `0666` and the process umask applies, as glibc creates gmon.out; a file
//!   replaced at the final name does not keep its old mode or owner (it is a new file).
//!
//! Everything here works on fixed buffers allocated in advance and calls the kernel directly:
//! no allocation and no lock, so a profile can be written at exit even when the program calls
//! `exit` from a signal handler that interrupted `malloc` (§4.5).

use std::ffi::c_int;

use crate::save::path::{FixedPath, OsFail};
use crate::sys;
use crate::zeroed::Zeroed;

/// The buffers one file write needs, allocated in advance.
#[derive(Debug)]
pub(crate) struct Scratch {
    target: FixedPath,
    tmp: FixedPath,
    link: FixedPath,
    buf: Zeroed<u8>,
}

impl Scratch {
    pub(crate) fn new() -> Scratch {
        Scratch {
            target: FixedPath::new(),
            tmp: FixedPath::new(),
            link: FixedPath::new(),
            buf: Zeroed::new(1 << 16),
        }
    }
}

/// Sets `s.target` to `path` followed through the links the caller owns.
fn resolve(path: &[u8], s: &mut Scratch) -> Result<(), OsFail> {
    let too_long = OsFail {
        what: "path too long",
        errno: libc::ENAMETOOLONG,
    };
    if !s.target.set(path) {
        return Err(too_long);
    }
    for _ in 0..40 {
        let (kind, owner) = match sys::lstat(s.target.c_str()) {
            Ok(st) => st,
            Err(libc::ENOENT) => return Ok(()),
            Err(errno) => {
                return Err(OsFail {
                    what: "lstat",
                    errno,
                });
            }
        };
        if kind != libc::S_IFLNK {
            return Ok(());
        }
        if owner != sys::geteuid() {
            return Err(OsFail {
                what: "a symbolic link owned by another user is not followed",
                errno: libc::EPERM,
            });
        }
        s.link.read_link(s.target.c_str()).map_err(|errno| OsFail {
            what: "readlink",
            errno,
        })?;
        let ok = if s.link.bytes().first() == Some(&b'/') {
            s.target.set(s.link.bytes())
        } else {
            let dir = s.target.dir_len();
            s.target.truncate(dir);
            s.target.push(s.link.bytes())
        };
        if !ok {
            return Err(too_long);
        }
    }
    Err(OsFail {
        what: "too many levels of symbolic links",
        errno: libc::ELOOP,
    })
}

/// 64 unpredictable bits: `getrandom`, else a mix of the clock, the pid and an address.
fn random_u64() -> u64 {
    if let Some(v) = sys::random_u64() {
        return v;
    }
    let here = 0u8;
    let mut x = sys::monotonic_ns() ^ u64::from(std::process::id()) << 40;
    x ^= (&here as *const u8 as u64).rotate_left(17);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^ (x >> 31)
}

/// Creates `.<name>.tmp.<random>` next to `s.target`, exclusively; names from byte `from` on
/// are relative to `dir` (a directory descriptor, or `AT_FDCWD` with `from` 0).
fn create_temp(s: &mut Scratch, dir_fd: c_int, from: usize) -> Result<c_int, OsFail> {
    let dir = s.target.dir_len();
    for _ in 0..16 {
        let mut hex = [0u8; 16];
        let r = random_u64();
        for (i, h) in hex.iter_mut().enumerate() {
            *h = b"0123456789abcdef"[((r >> (60 - 4 * i)) & 15) as usize];
        }
        let (dir_part, name) = s.target.bytes().split_at(dir);
        let ok = s.tmp.set(dir_part)
            && s.tmp.push(b".")
            && s.tmp.push(name)
            && s.tmp.push(b".tmp.")
            && s.tmp.push(&hex);
        if !ok {
            return Err(OsFail {
                what: "path too long",
                errno: libc::ENAMETOOLONG,
            });
        }
        let flags =
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        match sys::open_at(dir_fd, s.tmp.c_str_from(from), flags, 0o666) {
            Ok(fd) => return Ok(fd),
            Err(libc::EEXIST) => {}
            Err(errno) => {
                return Err(OsFail {
                    what: "create a temporary file",
                    errno,
                });
            }
        }
    }
    Err(OsFail {
        what: "create a temporary file (16 names taken)",
        errno: libc::EEXIST,
    })
}

/// Where encoded bytes go: a file descriptor through a buffer, or nowhere (to measure). Either
/// way their length and 64-bit FNV-1a hash are kept (spec §5.8).
#[derive(Debug)]
pub(crate) struct Sink<'a> {
    fd: c_int,
    buf: &'a mut [u8],
    used: usize,
    len: u64,
    hash: u64,
    /// Whether the file ends in a hole that the next write or [`Sink::finish`] must account
    /// for (the offset was moved past the end).
    hole_at_end: bool,
    fail: Option<OsFail>,
}

/// The FNV-1a prime.
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// Zero runs at least this long are left as holes in the file instead of written.
const HOLE_MIN: u64 = 1 << 14;

impl<'a> Sink<'a> {
    /// A sink that only measures (length and hash).
    pub(crate) fn measure(buf: &'a mut [u8]) -> Sink<'a> {
        Sink::to_fd(-1, buf)
    }

    /// Appends `n` zero bytes. Hashing them costs one multiplication (FNV-1a of a zero byte
    /// is a multiplication by the prime, so of `n` of them by its `n`-th power), and a long
    /// run is not written at all but left as a hole (the file system reads it back as zeros):
    /// a histogram over a large executable is mostly zero bins (python3's gmon.out is 1.5 MB,
    /// and hashing and writing it cost about 5 ms per process).
    pub(crate) fn put_zeros(&mut self, n: u64) {
        if self.fd < 0 {
            self.hash = self.hash.wrapping_mul(pow(FNV_PRIME, n));
        }
        self.len += n;
        if self.fd < 0 || self.fail.is_some() {
            return;
        }
        if n >= HOLE_MIN {
            self.drain();
            if let Err(errno) = sys::seek_forward(self.fd, n) {
                self.fail = Some(OsFail {
                    what: "lseek",
                    errno,
                });
            }
            self.hole_at_end = true;
            return;
        }
        static ZEROS: [u8; 4096] = [0; 4096];
        let mut left = n;
        while left > 0 {
            let k = left.min(ZEROS.len() as u64);
            self.copy_in(ZEROS.get(..k as usize).unwrap_or(&[]));
            left -= k;
        }
    }

    /// Flushes what is buffered and gives the file its full length when it ends in a hole.
    pub(crate) fn finish(&mut self) {
        self.drain();
        if self.hole_at_end
            && self.fail.is_none()
            && let Err(errno) = sys::set_len(self.fd, self.len)
        {
            self.fail = Some(OsFail {
                what: "ftruncate",
                errno,
            });
        }
    }

    /// (length, FNV-1a hash) of everything put so far.
    pub(crate) fn digest(&self) -> (u64, u64) {
        (self.len, self.hash)
    }

    fn to_fd(fd: c_int, buf: &'a mut [u8]) -> Sink<'a> {
        Sink {
            fd,
            buf,
            used: 0,
            len: 0,
            hash: 0xcbf2_9ce4_8422_2325,
            hole_at_end: false,
            fail: None,
        }
    }

    /// Appends `bytes`. Only a measuring sink hashes: the hash is taken before the file is
    /// written (it goes into the sidecar, which is written first).
    pub(crate) fn put(&mut self, bytes: &[u8]) {
        if self.fd < 0 {
            for &b in bytes {
                self.hash = (self.hash ^ u64::from(b)).wrapping_mul(FNV_PRIME);
            }
        }
        self.len += bytes.len() as u64;
        if self.fd < 0 || self.fail.is_some() {
            return;
        }
        self.copy_in(bytes);
    }

    fn copy_in(&mut self, bytes: &[u8]) {
        if !bytes.is_empty() {
            self.hole_at_end = false;
        }
        let mut rest = bytes;
        while !rest.is_empty() {
            let room = self.buf.len() - self.used;
            let n = room.min(rest.len());
            if let (Some(dst), Some(src)) =
                (self.buf.get_mut(self.used..self.used + n), rest.get(..n))
            {
                dst.copy_from_slice(src);
            }
            self.used += n;
            rest = rest.get(n..).unwrap_or(&[]);
            if self.used == self.buf.len() {
                self.drain();
            }
        }
    }

    fn drain(&mut self) {
        let mut at = 0;
        while at < self.used && self.fail.is_none() {
            let chunk = self.buf.get(at..self.used).unwrap_or(&[]);
            match sys::write(self.fd, chunk) {
                Err(libc::EINTR) => {}
                Err(errno) => {
                    self.fail = Some(OsFail {
                        what: "write",
                        errno,
                    })
                }
                Ok(0) => {
                    self.fail = Some(OsFail {
                        what: "write",
                        errno: libc::EIO,
                    })
                }
                Ok(n) => at += n,
            }
        }
        self.used = 0;
    }
}

/// Writes a file at `path` (followed through the caller's own links) with the bytes `emit` puts
/// into the sink: temporary file, then rename. On failure the temporary file is removed and the
/// final name is untouched.
///
/// In a process of `gmon record` the file goes into the run's directory, which is opened and
/// checked first (save/record.rs), and both names are taken relative to that descriptor: nothing is
/// written into a directory that is not, at that moment, this user's own.
pub(crate) fn write_file(
    path: &[u8],
    s: &mut Scratch,
    emit: impl FnOnce(&mut Sink<'_>),
) -> Result<(), OsFail> {
    let (dir_fd, from) = if crate::save::record::dir().is_some() {
        if !s.target.set(path) {
            return Err(OsFail {
                what: "path too long",
                errno: libc::ENAMETOOLONG,
            });
        }
        // The directory without its trailing `/`: with one, a link at its name is followed.
        let from = s.target.dir_len();
        let dir = match from {
            0 => &b"."[..],
            1 => &b"/"[..],
            n => s.target.bytes().get(..n - 1).unwrap_or_default(),
        };
        s.link.set(dir);
        (crate::save::record::open_own_dir(s.link.c_str())?, from)
    } else {
        resolve(path, s)?;
        (libc::AT_FDCWD, 0)
    };
    let result = write_at(s, dir_fd, from, emit);
    if dir_fd != libc::AT_FDCWD {
        sys::close(dir_fd);
    }
    result
}

/// [`write_file`] once `s.target` is final: names from byte `from` on are relative to `dir_fd`.
fn write_at(
    s: &mut Scratch,
    dir_fd: c_int,
    from: usize,
    emit: impl FnOnce(&mut Sink<'_>),
) -> Result<(), OsFail> {
    let fd = create_temp(s, dir_fd, from)?;
    let mut sink = Sink::to_fd(fd, &mut s.buf);
    emit(&mut sink);
    sink.finish();
    let mut result = sink.fail.map_or(Ok(()), Err);
    if !sys::close(fd) && result.is_ok() {
        result = Err(OsFail::last("close"));
    }
    if result.is_ok() {
        let (tmp, target) = (s.tmp.c_str_from(from), s.target.c_str_from(from));
        result = sys::rename_at(dir_fd, tmp, target).map_err(|errno| OsFail {
            what: "rename",
            errno,
        });
    }
    if result.is_err() {
        sys::unlink_at(dir_fd, s.tmp.c_str_from(from));
    }
    result
}

/// `base` to the power `exp`, wrapping (square and multiply).
fn pow(mut base: u64, mut exp: u64) -> u64 {
    let mut acc = 1u64;
    while exp > 0 {
        if exp & 1 == 1 {
            acc = acc.wrapping_mul(base);
        }
        base = base.wrapping_mul(base);
        exp >>= 1;
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeros_hash_and_write_as_bytes_of_zero() {
        for n in [
            0u64,
            1,
            7,
            4096,
            5000,
            HOLE_MIN,
            HOLE_MIN + 3,
            3 * HOLE_MIN + 1,
        ] {
            let (mut b1, mut b2) = ([0u8; 64], [0u8; 64]);
            let mut bytes = Sink::measure(&mut b1);
            bytes.put(b"ab");
            bytes.put(&vec![0u8; n as usize]);
            bytes.put(b"c");
            let mut zeros = Sink::measure(&mut b2);
            zeros.put(b"ab");
            zeros.put_zeros(n);
            zeros.put(b"c");
            assert_eq!(bytes.digest(), zeros.digest(), "{n} zeros");
        }
        // Written through a file: holes in the middle and at the end read back as zeros.
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("f");
        let file = std::fs::File::create(&path).expect("create");
        let fd = std::os::fd::AsRawFd::as_raw_fd(&file);
        let mut buf = [0u8; 64];
        let mut sink = Sink::to_fd(fd, &mut buf);
        sink.put(b"x");
        sink.put_zeros(HOLE_MIN + 5);
        sink.put(b"y");
        sink.put_zeros(10);
        sink.put_zeros(2 * HOLE_MIN);
        sink.finish();
        assert!(sink.fail.is_none());
        let mut want = b"x".to_vec();
        want.resize(want.len() + HOLE_MIN as usize + 5, 0);
        want.push(b'y');
        want.resize(want.len() + 10 + 2 * HOLE_MIN as usize, 0);
        assert_eq!(std::fs::read(&path).expect("read"), want);
    }
}
