//! glibc 2.36's `qsort`, which is a stable top-down merge sort (`msort`).
//!
//! gprof sorts everything with `qsort`, and several of its comparators are not total orders
//! (e.g. `cmp_total` puts a cycle header first whenever it is on the *left*). Reproducing the
//! output therefore needs the very same sequence of comparisons: left half `n/2` elements, and
//! the merge takes the left element when `cmp(left, right) <= 0`.
//!
//! Every comparison msort makes has its left element earlier in the input than its right one.
//! So a comparator that, on such pairs, answers as some key order does (`cmp_total`'s cycle
//! rule included: a header on the left is "less", which is what a tie gives) produces exactly
//! the input sorted stably by that key. The big sorts use such keys ([`name_ranks`],
//! [`ordered_f64`]) and fall back to [`msort`] only where no key exists (NaN times).

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

/// Ranks of `names` in byte order: equal names get equal ranks, so that sorts which end on a
/// name comparison can compare integers. Neighbouring symbols often share a name (the line
/// symbols of one function): a run of equal names is sorted once. The sort compares the
/// names' first eight bytes as one integer, and the bytes only when those are equal (a hash
/// table of the names and a sort by their bytes were a tenth of a dense program's analysis).
pub fn name_ranks<'a, I: IntoIterator<Item = &'a str>>(names: I) -> Vec<u32> {
    // Runs of equal neighbouring names: (prefix key, name, run number), and each name's run.
    let names = names.into_iter();
    let mut runs: Vec<(u64, &str, u32)> = Vec::with_capacity(names.size_hint().0);
    let mut run_of: Vec<u32> = Vec::with_capacity(names.size_hint().0);
    for name in names {
        if runs.last().is_none_or(|&(_, last, _)| last != name) {
            let number = u32::try_from(runs.len()).unwrap_or(u32::MAX);
            runs.push((prefix_key(name.as_bytes()), name, number));
        }
        run_of.push(u32::try_from(runs.len() - 1).unwrap_or(u32::MAX));
    }
    // The runs themselves are sorted, in place, each with its number: sorting run numbers
    // read the keys through them, a scattered read at every comparison. Equal keys of names
    // of at most eight bytes are names that differ only in trailing zero bytes (the keys'
    // padding), which the lengths order: dense programs repeat short names ("helper"), and
    // comparing their bytes again was most of this sort.
    let nruns = runs.len();
    let mut order = runs;
    order.sort_unstable_by(|&(ka, na, _), &(kb, nb, _)| {
        ka.cmp(&kb).then_with(|| {
            if na.len() <= 8 && nb.len() <= 8 {
                na.len().cmp(&nb.len())
            } else {
                na.as_bytes().cmp(nb.as_bytes())
            }
        })
    });
    let mut rank = vec![0u32; nruns];
    let mut r = 0u32;
    let mut prev: Option<(u64, &str)> = None;
    for &(k, n, u) in &order {
        let cur = (k, n);
        if let Some(p) = prev
            && p != cur
        {
            r += 1;
        }
        prev = Some(cur);
        if let Some(slot) = rank.get_mut(u as usize) {
            *slot = r;
        }
    }
    run_of
        .iter()
        .map(|&i| rank.get(i as usize).copied().unwrap_or(0))
        .collect()
}

/// The first eight bytes of `name` as a big-endian integer, zero-padded: a smaller key means
/// a smaller name in byte order; equal keys say nothing.
fn prefix_key(name: &[u8]) -> u64 {
    let mut k = [0u8; 8];
    let n = name.len().min(8);
    k[..n].copy_from_slice(&name[..n]);
    u64::from_be_bytes(k)
}

/// The stable sort of the items `0..n` by `key`, where the *idle* items (those `idle` puts in a
/// bucket: in gprof's tables, the many symbols with no time and no calls) differ from each
/// other only by their bucket, and `key` orders them by bucket, then input order. The idle
/// items are bucket-sorted in linear time, the others sorted, and the two runs merged. `None`
/// when an item has no key (a NaN time): the caller falls back to [`msort`].
pub fn sort_mostly_idle<K: Ord>(
    n: u32,
    key: impl Fn(u32) -> Option<K>,
    idle: impl Fn(u32) -> Option<u32>,
    nbuckets: usize,
) -> Option<Vec<u32>> {
    let mut busy = Vec::new();
    let mut idle_items = Vec::new();
    for i in 0..n {
        let k = key(i)?;
        match idle(i) {
            Some(bucket) => idle_items.push((bucket, i)),
            None => busy.push((k, i)),
        }
    }
    busy.sort_unstable();
    let busy: Vec<u32> = busy.into_iter().map(|(_, i)| i).collect();
    Some(merge_by_key(
        &busy,
        &bucket_sort(&idle_items, nbuckets),
        |i| (key(i), i),
    ))
}

/// Stable bucket sort of `items` — `(bucket, item)` pairs listed in the order they should keep
/// within a bucket — into bucket order, in linear time.
fn bucket_sort(items: &[(u32, u32)], nbuckets: usize) -> Vec<u32> {
    let mut start = vec![0usize; nbuckets + 1];
    for &(b, _) in items {
        if let Some(c) = start.get_mut(b as usize + 1) {
            *c += 1;
        }
    }
    for k in 1..start.len() {
        let prev = start.get(k - 1).copied().unwrap_or(0);
        if let Some(c) = start.get_mut(k) {
            *c += prev;
        }
    }
    let mut out = vec![0u32; items.len()];
    for &(b, item) in items {
        if let Some(pos) = start.get_mut(b as usize)
            && let Some(slot) = out.get_mut(*pos)
        {
            *slot = item;
            *pos += 1;
        }
    }
    out
}

/// Merges two runs of items, each sorted by `key` (a key with no ties: it ends on the item).
fn merge_by_key<K: Ord>(a: &[u32], b: &[u32], key: impl Fn(u32) -> K) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while let (Some(&x), Some(&y)) = (a.get(i), b.get(j)) {
        if key(x) <= key(y) {
            out.push(x);
            i += 1;
        } else {
            out.push(y);
            j += 1;
        }
    }
    out.extend_from_slice(a.get(i..).unwrap_or(&[]));
    out.extend_from_slice(b.get(j..).unwrap_or(&[]));
    out
}

/// `x` as a `u64` with the same order, -0 equal to +0 (gprof's comparators subtract, and
/// `-0 - 0 == 0`); `None` for NaN, which no key orders as those comparators do.
pub fn ordered_f64(x: f64) -> Option<u64> {
    if x.is_nan() {
        return None;
    }
    let x = if x == 0.0 { 0.0 } else { x };
    let bits = x.to_bits();
    Some(if bits >> 63 == 1 {
        !bits
    } else {
        bits | 1 << 63
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_ranks_follow_byte_order() {
        let r = name_ranks(["b", "a", "b", "_c", "a", "B"]);
        assert_eq!(r, vec![3, 2, 3, 1, 2, 0]);
        // Runs of equal names, names sharing their first eight bytes, a prefix of another,
        // and a NUL byte where the key pads with zeros.
        let r = name_ranks([
            "abcdefghz",
            "abcdefghz",
            "abcdefgha",
            "abcdefgh",
            "abc",
            "abc\0",
            "abcdefghz",
            "",
        ]);
        assert_eq!(r, vec![5, 5, 4, 3, 1, 2, 5, 0]);
    }

    #[test]
    fn ordered_f64_keeps_order_and_merges_zeros() {
        let xs = [
            f64::NEG_INFINITY,
            -2.5,
            -0.0,
            0.0,
            1e-300,
            1.0,
            7.0,
            f64::INFINITY,
        ];
        let keys: Vec<u64> = xs.iter().filter_map(|&x| ordered_f64(x)).collect();
        assert_eq!(keys.len(), xs.len());
        assert_eq!(keys.get(2), keys.get(3));
        for w in keys.windows(2).skip(3) {
            assert!(w[0] < w[1]);
        }
        assert!(keys[0] < keys[1] && keys[1] < keys[2]);
        assert_eq!(ordered_f64(f64::NAN), None);
    }

    /// A key sort gives what msort gives with a comparator that agrees with the key (the
    /// header rule of `cmp_total` included).
    #[test]
    fn key_sort_matches_msort() {
        // (time, is_header, name): headers tie among themselves but compare "less" on the left.
        let items: Vec<(u32, bool, &str)> = (0..200u32)
            .map(|i| {
                (
                    (i * 37) % 5,
                    i % 11 == 0,
                    ["b", "a", "_x", "c"][(i % 4) as usize],
                )
            })
            .collect();
        let cmp = |l: &usize, r: &usize| {
            let (a, b) = (items[*l], items[*r]);
            if a.0 != b.0 {
                return b.0.cmp(&a.0);
            }
            if a.1 {
                return Ordering::Less;
            }
            if b.1 {
                return Ordering::Greater;
            }
            a.2.cmp(b.2)
        };
        let mut by_msort: Vec<usize> = (0..items.len()).collect();
        msort(&mut by_msort, cmp);
        let ranks = name_ranks(items.iter().map(|i| i.2));
        let mut by_key: Vec<usize> = (0..items.len()).collect();
        by_key.sort_by_key(|&i| {
            let (t, h, _) = items[i];
            (std::cmp::Reverse(t), !h, if h { 0 } else { ranks[i] })
        });
        assert_eq!(by_msort, by_key);
    }

    #[test]
    fn bucket_sort_is_stable_and_merge_interleaves() {
        let items = [(2, 10), (0, 11), (2, 12), (1, 13), (0, 14)];
        assert_eq!(bucket_sort(&items, 3), vec![11, 14, 13, 10, 12]);
        let key = |i: u32| (i % 10, i);
        assert_eq!(
            merge_by_key(&[20, 3, 17], &[11, 5, 9], key),
            vec![20, 11, 3, 5, 17, 9]
        );
    }

    #[test]
    fn stable_and_sorted() {
        let mut v: Vec<(u32, u32)> = (0..100).map(|i| ((i * 7919) % 13, i)).collect();
        msort(&mut v, |a, b| a.0.cmp(&b.0));
        for w in v.windows(2) {
            assert!(w[0].0 < w[1].0 || (w[0].0 == w[1].0 && w[0].1 < w[1].1));
        }
    }
}
