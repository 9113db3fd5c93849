//! C `printf`-compatible number and string formatting, as glibc prints them.
//!
//! gprof prints every number through `printf`; Rust's `format!` differs in the details that show
//! in a byte-for-byte comparison: NaN is `NaN` instead of `-nan`/`nan`, there is no `%g`, and
//! `%8.8s` *truncates* a string while `{:8.8}` counts characters, not bytes. These helpers append
//! exactly what glibc 2.36 would print to a byte buffer.

/// Appends `s` formatted like C's `%[-]W.Ps`: at most `prec` bytes of `s` (all if `None`),
/// padded with spaces to `width` bytes, on the left unless `left` is set.
pub fn put_s(buf: &mut Vec<u8>, s: &[u8], width: usize, prec: Option<usize>, left: bool) {
    let s = match prec {
        Some(p) if p < s.len() => &s[..p],
        _ => s,
    };
    let pad = width.saturating_sub(s.len());
    if !left {
        buf.extend(std::iter::repeat_n(b' ', pad));
    }
    buf.extend_from_slice(s);
    if left {
        buf.extend(std::iter::repeat_n(b' ', pad));
    }
}

/// Appends `%W.Ws` (the common gprof idiom: exactly `width` bytes, truncating).
pub fn put_sw(buf: &mut Vec<u8>, s: &str, width: usize) {
    put_s(buf, s.as_bytes(), width, Some(width), false);
}

/// Up to 64 bytes of formatted text on the stack: the reports print millions of numbers, and
/// a `String` per number was a tenth of a large report's time.
struct Small {
    buf: [u8; 64],
    len: usize,
}

impl Small {
    fn new() -> Small {
        Small {
            buf: [0; 64],
            len: 0,
        }
    }

    fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl std::fmt::Write for Small {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        let dst = self.buf.get_mut(self.len..end).ok_or(std::fmt::Error)?;
        dst.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// Appends an unsigned integer like `%[-]Wlu`.
pub fn put_u(buf: &mut Vec<u8>, v: u64, width: usize, left: bool) {
    let mut digits = [0u8; 20];
    put_s(buf, u_digits(v, &mut digits), width, None, left);
}

/// The decimal digits of `v` (`%lu`), written at the end of `digits`.
pub fn u_digits(v: u64, digits: &mut [u8; 20]) -> &[u8] {
    // Two digits per division: a call graph prints a count or an index per line, hundreds
    // of thousands of them on a dense program.
    const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
        2021222324252627282930313233343536373839\
        4041424344454647484950515253545556575859\
        6061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899";
    let mut i = digits.len();
    let mut v = v;
    while v >= 100 {
        let p = (v % 100) as usize * 2;
        v /= 100;
        i -= 2;
        digits[i..i + 2].copy_from_slice(&PAIRS[p..p + 2]);
    }
    if v >= 10 {
        let p = v as usize * 2;
        i -= 2;
        digits[i..i + 2].copy_from_slice(&PAIRS[p..p + 2]);
    } else {
        i -= 1;
        digits[i] = b'0' + v as u8;
    }
    &digits[i..]
}

/// Appends a signed integer like `%[-]Wd`.
pub fn put_i(buf: &mut Vec<u8>, v: i64, width: usize, left: bool) {
    let s = v.to_string();
    put_s(buf, s.as_bytes(), width, None, left);
}

/// The text glibc prints for a non-finite value (`-nan`, `nan`, `inf`, `-inf`), or `None`.
fn non_finite(v: f64) -> Option<&'static str> {
    if v.is_nan() {
        Some(if v.is_sign_negative() { "-nan" } else { "nan" })
    } else if v.is_infinite() {
        Some(if v < 0.0 { "-inf" } else { "inf" })
    } else {
        None
    }
}

/// C's `(long) v` on x86-64: truncation toward zero, and the "integer indefinite" value
/// `LONG_MIN` for NaN and out-of-range values (e.g. an infinite `hist_scale`).
pub fn c_long(v: f64) -> i64 {
    // 2^63 is exactly representable; every double in [-2^63, 2^63) converts.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    if !(-LIMIT..LIMIT).contains(&v) {
        i64::MIN
    } else {
        v as i64
    }
}

/// Formats `v` like C's `%.Pf` (no width).
pub fn f_string(v: f64, prec: usize) -> String {
    match non_finite(v) {
        Some(s) => s.to_string(),
        // Rust's fixed-precision formatting is exact (correctly rounded from the binary value),
        // as glibc's is, and also keeps the sign of -0.0.
        None => format!("{v:.prec$}"),
    }
}

/// `v` with `prec` decimals (at most 9), correctly rounded from its exact binary value with
/// ties to even, as glibc's `%.Pf` and Rust's `{:.P}` both round; `None` for non-finite or
/// very large values. Integer arithmetic only: a report prints hundreds of thousands of
/// times, and the general formatter was a tenth of a large report's time.
fn fixed(v: f64, prec: usize, out: &mut Small) -> Option<()> {
    if !v.is_finite() || prec > 9 {
        return None;
    }
    let bits = v.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    let (m, e) = if biased == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), biased - 1075)
    };
    let p10 = 10u128.pow(prec as u32);
    // m < 2^53 and p10 < 2^30: the product fits in 83 bits.
    let x = u128::from(m) * p10;
    let q = if e >= 0 {
        if e > 40 {
            return None;
        }
        x << e
    } else {
        let s = (-e) as u32;
        if s > 100 {
            0 // below a quarter of the last printed digit: rounds to zero
        } else {
            let q = x >> s;
            let r = x & ((1u128 << s) - 1);
            let half = 1u128 << (s - 1);
            if r > half || (r == half && q & 1 == 1) {
                q + 1
            } else {
                q
            }
        }
    };
    let mut digits = [0u8; 48];
    let mut i = digits.len();
    // At least prec + 1 digits: the integer part is never empty. Nearly every printed value
    // fits in 64 bits, where a division by 10 is a multiplication; a 128-bit one is a call.
    match u64::try_from(q) {
        Ok(mut rest) => {
            while rest != 0 || digits.len() - i <= prec {
                i -= 1;
                digits[i] = b'0' + (rest % 10) as u8;
                rest /= 10;
            }
        }
        Err(_) => {
            let mut rest = q;
            while rest != 0 || digits.len() - i <= prec {
                i -= 1;
                digits[i] = b'0' + (rest % 10) as u8;
                rest /= 10;
            }
        }
    }
    let d = &digits[i..];
    let point = d.len() - prec;
    let mut put = |b: &[u8]| -> Option<()> {
        let end = out.len + b.len();
        out.buf.get_mut(out.len..end)?.copy_from_slice(b);
        out.len = end;
        Some(())
    };
    if v.is_sign_negative() {
        put(b"-")?;
    }
    put(&d[..point])?;
    if prec > 0 {
        put(b".")?;
        put(&d[point..])?;
    }
    Some(())
}

/// Appends `v` like C's `%W.Pf` (right-aligned).
pub fn put_f(buf: &mut Vec<u8>, v: f64, width: usize, prec: usize) {
    use std::fmt::Write as _;
    let mut small = Small::new();
    if fixed(v, prec, &mut small).is_some() {
        put_s(buf, small.bytes(), width, None, false);
        return;
    }
    small.len = 0;
    if non_finite(v).is_none() && write!(small, "{v:.prec$}").is_ok() {
        put_s(buf, small.bytes(), width, None, false);
    } else {
        // A non-finite value, or more than 64 bytes of digits.
        put_s(buf, f_string(v, prec).as_bytes(), width, None, false);
    }
}

/// Formats `v` like C's `%g`: 6 significant digits, trailing zeros removed, exponent form when
/// the decimal exponent is below -4 or at least 6, exponent with at least two digits.
pub fn g_string(v: f64) -> String {
    if let Some(s) = non_finite(v) {
        return s.to_string();
    }
    const P: i32 = 6;
    if v == 0.0 {
        return if v.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    // The exponent X of the value once rounded to P significant digits decides the style.
    let e = format!("{:.*e}", (P - 1) as usize, v);
    let (mantissa, exp) = match e.split_once('e') {
        Some((m, x)) => (m.to_string(), x.parse::<i32>().unwrap_or(0)),
        None => (e.clone(), 0),
    };
    if !(-4..P).contains(&exp) {
        let m = strip_zeros(&mantissa);
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{m}e{sign}{:02}", exp.unsigned_abs())
    } else {
        let prec = (P - 1 - exp).max(0) as usize;
        strip_zeros(&format!("{v:.prec$}"))
    }
}

/// Removes trailing zeros after a decimal point, and the point itself if nothing follows it.
fn strip_zeros(s: &str) -> String {
    if !s.contains('.') {
        return s.to_string();
    }
    let t = s.trim_end_matches('0');
    t.trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `u_digits` prints what `%lu` prints, around every digit-count boundary.
    #[test]
    fn u_digits_is_lu() {
        let mut values = vec![0, u64::MAX];
        let mut p = 1u64;
        while let Some(next) = p.checked_mul(10) {
            values.extend([p - 1, p, p + 1, next / 2 + 7]);
            p = next;
        }
        values.extend([p - 1, p, p + 1]);
        for v in values {
            let mut d = [0u8; 20];
            assert_eq!(u_digits(v, &mut d), v.to_string().as_bytes(), "{v}");
        }
    }

    #[test]
    fn g_matches_glibc() {
        assert_eq!(g_string(0.01), "0.01");
        assert_eq!(g_string(0.001), "0.001");
        assert_eq!(g_string(1e-6), "1e-06");
        assert_eq!(g_string(1.0 / 60.0), "0.0166667");
        assert_eq!(g_string(1.0 / 1024.0), "0.000976562");
        assert_eq!(g_string(1.0), "1");
        assert_eq!(g_string(123456.0), "123456");
        assert_eq!(g_string(1234567.0), "1.23457e+06");
        assert_eq!(g_string(f64::INFINITY), "inf");
        assert_eq!(g_string(0.0001), "0.0001");
        assert_eq!(g_string(0.00001), "1e-05");
    }

    #[test]
    fn f_matches_glibc() {
        let mut b = Vec::new();
        put_f(&mut b, -f64::NAN, 7, 2);
        assert_eq!(b, b"   -nan");
        assert_eq!(f_string(0.125, 2), "0.12");
        assert_eq!(f_string(0.375, 2), "0.38");
        assert_eq!(f_string(2.5, 0), "2");
        assert_eq!(f_string(99.95, 1), "100.0");
        assert_eq!(f_string(f64::INFINITY, 2), "inf");
    }

    #[test]
    fn numbers_on_the_stack_match_format() {
        let mut b = Vec::new();
        for v in [0u64, 7, 10, 99, 12345678, u64::MAX] {
            b.clear();
            put_u(&mut b, v, 7, false);
            assert_eq!(b, format!("{v:>7}").as_bytes());
        }
        let mut vals = vec![
            0.0,
            -0.0,
            0.005,
            0.015,
            0.125,
            2.5,
            1.0 / 3.0,
            12345.678,
            1e30,
        ];
        vals.extend([-1e300, f64::NAN, 5e-324, 1e15 + 0.5, 99.995, -0.001, 4.5e15]);
        // Ticks over a rate, as the reports divide them, and random bit patterns.
        vals.extend((0..2000).map(|t| f64::from(t) / 60.0));
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            vals.push(f64::from_bits(x));
            vals.push((x % 100_000_000) as f64 / 1024.0);
        }
        for v in vals {
            for prec in [0, 1, 2, 3, 9] {
                b.clear();
                put_f(&mut b, v, 9, prec);
                let want = f_string(v, prec);
                assert_eq!(b, format!("{want:>9}").as_bytes(), "{v:e} .{prec}");
            }
        }
    }

    #[test]
    fn c_long_is_x86_cvttsd2si() {
        assert_eq!(c_long(1.9969), 1);
        assert_eq!(c_long(-2.5), -2);
        assert_eq!(c_long(f64::INFINITY), i64::MIN);
        assert_eq!(c_long(f64::NAN), i64::MIN);
        assert_eq!(c_long(f64::INFINITY).wrapping_mul(2), 0);
    }

    #[test]
    fn s_truncates() {
        let mut b = Vec::new();
        put_s(&mut b, b"[10000]", 6, Some(6), true);
        assert_eq!(b, b"[10000");
        b.clear();
        put_s(&mut b, b"[1]", 6, Some(6), true);
        assert_eq!(b, b"[1]   ");
    }
}
