//! glibc 2.36's `qsort`, which is a stable top-down merge sort (`msort`).
//!
//! gprof sorts everything with `qsort`, and several of its comparators are not total orders
//! (e.g. `cmp_total` puts a cycle header first whenever it is on the *left*). Reproducing the
//! output therefore needs the very same sequence of comparisons: left half `n/2` elements, and
//! the merge takes the left element when `cmp(left, right) <= 0`.

use std::cmp::Ordering;

/// Sorts `v` exactly as glibc's `msort` would with comparator `cmp`.
pub fn msort<T: Copy, F: FnMut(&T, &T) -> Ordering>(v: &mut [T], mut cmp: F) {
    if v.len() <= 1 {
        return;
    }
    let mut tmp: Vec<T> = Vec::with_capacity(v.len());
    msort_rec(v, &mut tmp, &mut cmp);
}

fn msort_rec<T: Copy, F: FnMut(&T, &T) -> Ordering>(v: &mut [T], tmp: &mut Vec<T>, cmp: &mut F) {
    let n = v.len();
    if n <= 1 {
        return;
    }
    let n1 = n / 2;
    {
        let (a, b) = v.split_at_mut(n1);
        msort_rec(a, tmp, cmp);
        msort_rec(b, tmp, cmp);
    }
    tmp.clear();
    let (mut i, mut j) = (0, n1);
    while i < n1 && j < n {
        if cmp(&v[i], &v[j]) != Ordering::Greater {
            tmp.push(v[i]);
            i += 1;
        } else {
            tmp.push(v[j]);
            j += 1;
        }
    }
    tmp.extend_from_slice(&v[i..n1]);
    // Whatever is left of the right half is already in place.
    let done = tmp.len();
    v[..done].copy_from_slice(tmp);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stable_and_sorted() {
        let mut v: Vec<(u32, u32)> = (0..100).map(|i| ((i * 7919) % 13, i)).collect();
        msort(&mut v, |a, b| a.0.cmp(&b.0));
        for w in v.windows(2) {
            assert!(w[0].0 < w[1].0 || (w[0].0 == w[1].0 && w[0].1 < w[1].1));
        }
    }
}
