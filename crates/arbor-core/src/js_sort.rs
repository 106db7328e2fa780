//! V8's `Array.prototype.sort` (TimSort, `third_party/v8/builtins/array-sort.tq`), step for
//! step, at every length.
//!
//! pi sorts a node's children with `(a, b) => new Date(a.timestamp).getTime() -
//! new Date(b.timestamp).getTime()`. With an unparseable timestamp the comparator gives `NaN`,
//! which V8 reads as `0` ("equal"): the comparator is then not a total order and the result
//! depends on every step of the algorithm (its runs, merges and galloping). Rust's
//! `sort_by` panics on such a comparator (since 1.81) and would give another order anyway,
//! so arbor runs V8's algorithm itself. The comparator here can be anything; the sort never
//! panics and always returns a permutation of its input.

use std::cmp::Ordering;

/// V8's `kMinGallopWins`.
const MIN_GALLOP: usize = 7;

/// Sorts `v` exactly as V8's `Array.prototype.sort(cmp)` would, where `cmp(a, b)` is the
/// comparator's result read as V8 reads it (`Less` for a negative number, `Equal` for `0` and
/// `NaN`, `Greater` for a positive number).
pub fn v8_sort<T: Copy>(v: &mut [T], mut cmp: impl FnMut(T, T) -> Ordering) {
    let n = v.len();
    if n < 2 {
        return;
    }
    let mut s = State {
        a: v,
        cmp: &mut cmp,
        min_gallop: MIN_GALLOP,
        runs: Vec::new(),
        tmp: Vec::new(),
    };
    let mut remaining = n;
    let mut low = 0;
    let min_run = min_run_length(remaining);
    while remaining != 0 {
        let mut run = s.count_and_make_run(low, low + remaining);
        if run < min_run {
            let forced = min_run.min(remaining);
            s.binary_insertion_sort(low, low + run, low + forced);
            run = forced;
        }
        s.runs.push((low, run));
        s.merge_collapse();
        low += run;
        remaining -= run;
    }
    s.merge_force_collapse();
}

/// [`v8_sort`] with a comparator returning a JS number (`a - b` style): negative, zero, positive
/// or NaN (read as zero, as V8 does).
pub fn v8_sort_by_number<T: Copy>(v: &mut [T], mut cmp: impl FnMut(T, T) -> f64) {
    v8_sort(v, |a, b| {
        let d = cmp(a, b);
        if d < 0.0 {
            Ordering::Less
        } else if d > 0.0 {
            Ordering::Greater
        } else {
            Ordering::Equal
        }
    });
}

/// [`v8_sort_by_number`] for elements that are not `Copy` (a listing's rows): the indices are
/// sorted by V8's algorithm, then `v` is put in that order (no element is copied or dropped).
pub fn v8_sort_slice_by_number<T>(v: &mut [T], mut cmp: impl FnMut(&T, &T) -> f64) {
    let mut order: Vec<usize> = (0..v.len()).collect();
    v8_sort_by_number(&mut order, |a, b| cmp(&v[a], &v[b]));
    // Apply the permutation in place: position `i` takes the element at `order[i]`.
    let mut pos: Vec<usize> = (0..v.len()).collect(); // where each original element is now
    let mut at: Vec<usize> = (0..v.len()).collect(); // which original element is at each slot
    for i in 0..v.len() {
        let want = order[i];
        let j = pos[want];
        if j != i {
            v.swap(i, j);
            let moved = at[i];
            at[j] = moved;
            pos[moved] = j;
            at[i] = want;
            pos[want] = i;
        }
    }
}

fn min_run_length(mut n: usize) -> usize {
    let mut r = 0;
    while n >= 64 {
        r |= n & 1;
        n >>= 1;
    }
    n + r
}

struct State<'a, T, F> {
    a: &'a mut [T],
    cmp: &'a mut F,
    min_gallop: usize,
    /// Pending runs: (base, length).
    runs: Vec<(usize, usize)>,
    tmp: Vec<T>,
}

impl<T: Copy, F: FnMut(T, T) -> Ordering> State<'_, T, F> {
    fn lt(&mut self, x: T, y: T) -> bool {
        (self.cmp)(x, y) == Ordering::Less
    }

    fn count_and_make_run(&mut self, low_arg: usize, high: usize) -> usize {
        let low = low_arg + 1;
        if low == high {
            return 1;
        }
        let mut run = 2;
        let descending = self.lt(self.a[low], self.a[low - 1]);
        let mut prev = self.a[low];
        for idx in low + 1..high {
            let cur = self.a[idx];
            let less = self.lt(cur, prev);
            // Descending runs are strictly descending; ascending ones non-descending.
            if descending != less {
                break;
            }
            prev = cur;
            run += 1;
        }
        if descending {
            self.a[low_arg..low_arg + run].reverse();
        }
        run
    }

    fn binary_insertion_sort(&mut self, low: usize, start_arg: usize, high: usize) {
        let mut start = if low == start_arg {
            start_arg + 1
        } else {
            start_arg
        };
        while start < high {
            let (mut left, mut right) = (low, start);
            let pivot = self.a[start];
            while left < right {
                let mid = left + ((right - left) >> 1);
                if self.lt(pivot, self.a[mid]) {
                    right = mid;
                } else {
                    left = mid + 1;
                }
            }
            self.a.copy_within(left..start, left + 1);
            self.a[left] = pivot;
            start += 1;
        }
    }

    fn run_len(&self, i: usize) -> usize {
        self.runs[i].1
    }

    fn invariant_established(&self, n: usize) -> bool {
        if n < 2 {
            return true;
        }
        self.run_len(n - 2) > self.run_len(n - 1) + self.run_len(n)
    }

    fn merge_collapse(&mut self) {
        while self.runs.len() > 1 {
            let mut n = self.runs.len() - 2;
            if !self.invariant_established(n + 1) || !self.invariant_established(n) {
                if self.run_len(n - 1) < self.run_len(n + 1) {
                    n -= 1;
                }
                self.merge_at(n);
            } else if self.run_len(n) <= self.run_len(n + 1) {
                self.merge_at(n);
            } else {
                break;
            }
        }
    }

    fn merge_force_collapse(&mut self) {
        while self.runs.len() > 1 {
            let mut n = self.runs.len() - 2;
            if n > 0 && self.run_len(n - 1) < self.run_len(n + 1) {
                n -= 1;
            }
            self.merge_at(n);
        }
    }

    fn merge_at(&mut self, i: usize) {
        let (mut base_a, mut len_a) = self.runs[i];
        let (base_b, mut len_b) = self.runs[i + 1];
        self.runs[i].1 = len_a + len_b;
        self.runs.remove(i + 1);
        let key_right = self.a[base_b];
        let k = gallop_right(self.cmp, self.a, key_right, base_a, len_a, 0);
        base_a += k;
        len_a -= k;
        if len_a == 0 {
            return;
        }
        let key_left = self.a[base_a + len_a - 1];
        len_b = gallop_left(self.cmp, self.a, key_left, base_b, len_b, len_b - 1);
        if len_b == 0 {
            return;
        }
        if len_a <= len_b {
            self.merge_low(base_a, len_a, base_b, len_b);
        } else {
            self.merge_high(base_a, len_a, base_b, len_b);
        }
    }

    fn merge_low(&mut self, base_a: usize, len_a: usize, base_b: usize, len_b: usize) {
        let (mut len_a, mut len_b) = (len_a, len_b);
        self.tmp.clear();
        self.tmp.extend_from_slice(&self.a[base_a..base_a + len_a]);
        let mut dest = base_a;
        let mut ct = 0;
        let mut cb = base_b;
        self.a[dest] = self.a[cb];
        dest += 1;
        cb += 1;
        len_b -= 1;
        // The labels of array-sort.tq: Succeed and CopyB.
        let copy_b = 'merge: {
            if len_b == 0 {
                break 'merge false;
            }
            if len_a == 1 {
                break 'merge true;
            }
            let mut min_gallop = self.min_gallop;
            loop {
                let (mut wins_a, mut wins_b) = (0usize, 0usize);
                loop {
                    if self.lt(self.a[cb], self.tmp[ct]) {
                        self.a[dest] = self.a[cb];
                        dest += 1;
                        cb += 1;
                        wins_b += 1;
                        len_b -= 1;
                        wins_a = 0;
                        if len_b == 0 {
                            break 'merge false;
                        }
                        if wins_b >= min_gallop {
                            break;
                        }
                    } else {
                        self.a[dest] = self.tmp[ct];
                        dest += 1;
                        ct += 1;
                        wins_a += 1;
                        len_a -= 1;
                        wins_b = 0;
                        if len_a == 1 {
                            break 'merge true;
                        }
                        if wins_a >= min_gallop {
                            break;
                        }
                    }
                }
                min_gallop += 1;
                let mut first = true;
                while wins_a >= MIN_GALLOP || wins_b >= MIN_GALLOP || first {
                    first = false;
                    min_gallop = min_gallop.saturating_sub(1).max(1);
                    self.min_gallop = min_gallop;
                    wins_a = gallop_right(self.cmp, &self.tmp, self.a[cb], ct, len_a, 0);
                    if wins_a > 0 {
                        self.a[dest..dest + wins_a].copy_from_slice(&self.tmp[ct..ct + wins_a]);
                        dest += wins_a;
                        ct += wins_a;
                        len_a -= wins_a;
                        if len_a == 1 {
                            break 'merge true;
                        }
                        // Impossible for a consistent comparator, not assumed (V8).
                        if len_a == 0 {
                            break 'merge false;
                        }
                    }
                    self.a[dest] = self.a[cb];
                    dest += 1;
                    cb += 1;
                    len_b -= 1;
                    if len_b == 0 {
                        break 'merge false;
                    }
                    wins_b = gallop_left(self.cmp, self.a, self.tmp[ct], cb, len_b, 0);
                    if wins_b > 0 {
                        self.a.copy_within(cb..cb + wins_b, dest);
                        dest += wins_b;
                        cb += wins_b;
                        len_b -= wins_b;
                        if len_b == 0 {
                            break 'merge false;
                        }
                    }
                    self.a[dest] = self.tmp[ct];
                    dest += 1;
                    ct += 1;
                    len_a -= 1;
                    if len_a == 1 {
                        break 'merge true;
                    }
                }
                min_gallop += 1;
                self.min_gallop = min_gallop;
            }
        };
        if copy_b {
            // The last element of run A belongs at the end of the merge.
            self.a.copy_within(cb..cb + len_b, dest);
            self.a[dest + len_b] = self.tmp[ct];
        } else if len_a > 0 {
            self.a[dest..dest + len_a].copy_from_slice(&self.tmp[ct..ct + len_a]);
        }
    }

    fn merge_high(&mut self, base_a: usize, len_a: usize, base_b: usize, len_b: usize) {
        let (mut len_a, mut len_b) = (len_a, len_b);
        self.tmp.clear();
        self.tmp.extend_from_slice(&self.a[base_b..base_b + len_b]);
        // Cursors are "one past" positions so that they can reach -1 in V8's terms:
        // V8's `x` is `x1 - 1` here.
        let mut dest1 = base_b + len_b;
        let mut ct1 = len_b;
        let mut ca1 = base_a + len_a;
        self.a[dest1 - 1] = self.a[ca1 - 1];
        dest1 -= 1;
        ca1 -= 1;
        len_a -= 1;
        let copy_a = 'merge: {
            if len_a == 0 {
                break 'merge false;
            }
            if len_b == 1 {
                break 'merge true;
            }
            let mut min_gallop = self.min_gallop;
            loop {
                let (mut wins_a, mut wins_b) = (0usize, 0usize);
                loop {
                    if self.lt(self.tmp[ct1 - 1], self.a[ca1 - 1]) {
                        self.a[dest1 - 1] = self.a[ca1 - 1];
                        dest1 -= 1;
                        ca1 -= 1;
                        wins_a += 1;
                        len_a -= 1;
                        wins_b = 0;
                        if len_a == 0 {
                            break 'merge false;
                        }
                        if wins_a >= min_gallop {
                            break;
                        }
                    } else {
                        self.a[dest1 - 1] = self.tmp[ct1 - 1];
                        dest1 -= 1;
                        ct1 -= 1;
                        wins_b += 1;
                        len_b -= 1;
                        wins_a = 0;
                        if len_b == 1 {
                            break 'merge true;
                        }
                        if wins_b >= min_gallop {
                            break;
                        }
                    }
                }
                min_gallop += 1;
                let mut first = true;
                while wins_a >= MIN_GALLOP || wins_b >= MIN_GALLOP || first {
                    first = false;
                    min_gallop = min_gallop.saturating_sub(1).max(1);
                    self.min_gallop = min_gallop;
                    let k = gallop_right(
                        self.cmp,
                        self.a,
                        self.tmp[ct1 - 1],
                        base_a,
                        len_a,
                        len_a - 1,
                    );
                    wins_a = len_a - k;
                    if wins_a > 0 {
                        dest1 -= wins_a;
                        ca1 -= wins_a;
                        self.a.copy_within(ca1..ca1 + wins_a, dest1);
                        len_a -= wins_a;
                        if len_a == 0 {
                            break 'merge false;
                        }
                    }
                    self.a[dest1 - 1] = self.tmp[ct1 - 1];
                    dest1 -= 1;
                    ct1 -= 1;
                    len_b -= 1;
                    if len_b == 1 {
                        break 'merge true;
                    }
                    let k = gallop_left(self.cmp, &self.tmp, self.a[ca1 - 1], 0, len_b, len_b - 1);
                    wins_b = len_b - k;
                    if wins_b > 0 {
                        dest1 -= wins_b;
                        ct1 -= wins_b;
                        self.a[dest1..dest1 + wins_b].copy_from_slice(&self.tmp[ct1..ct1 + wins_b]);
                        len_b -= wins_b;
                        if len_b == 1 {
                            break 'merge true;
                        }
                        // Impossible for a consistent comparator, not assumed (V8).
                        if len_b == 0 {
                            break 'merge false;
                        }
                    }
                    self.a[dest1 - 1] = self.a[ca1 - 1];
                    dest1 -= 1;
                    ca1 -= 1;
                    len_a -= 1;
                    if len_a == 0 {
                        break 'merge false;
                    }
                }
                min_gallop += 1;
                self.min_gallop = min_gallop;
            }
        };
        if copy_a {
            // The first element of run B belongs at the front of the merge.
            dest1 -= len_a;
            ca1 -= len_a;
            self.a.copy_within(ca1..ca1 + len_a, dest1);
            self.a[dest1 - 1] = self.tmp[ct1 - 1];
        } else if len_b > 0 {
            let d = dest1 - len_b;
            self.a[d..d + len_b].copy_from_slice(&self.tmp[..len_b]);
        }
    }
}

/// V8's `GallopLeft`: where `key` belongs in `arr[base..base+len]` (leftmost position), starting
/// the search at `hint`.
fn gallop_left<T: Copy, F: FnMut(T, T) -> Ordering>(
    cmp: &mut F,
    arr: &[T],
    key: T,
    base: usize,
    len: usize,
    hint: usize,
) -> usize {
    let lt = |cmp: &mut F, x: T, y: T| cmp(x, y) == Ordering::Less;
    let (mut last, mut ofs): (isize, isize) = (0, 1);
    let hint_i = hint as isize;
    if lt(cmp, arr[base + hint], key) {
        let max = (len - hint) as isize;
        while ofs < max {
            if !lt(cmp, arr[base + hint + ofs as usize], key) {
                break;
            }
            last = ofs;
            ofs = (ofs << 1) + 1;
        }
        ofs = ofs.min(max);
        last += hint_i;
        ofs += hint_i;
    } else {
        let max = hint_i + 1;
        while ofs < max {
            if lt(cmp, arr[base + hint - ofs as usize], key) {
                break;
            }
            last = ofs;
            ofs = (ofs << 1) + 1;
        }
        ofs = ofs.min(max);
        let tmp = last;
        last = hint_i - ofs;
        ofs = hint_i - tmp;
    }
    last += 1;
    while last < ofs {
        let m = last + ((ofs - last) >> 1);
        if lt(cmp, arr[base + m as usize], key) {
            last = m + 1;
        } else {
            ofs = m;
        }
    }
    ofs as usize
}

/// V8's `GallopRight`: where `key` belongs in `arr[base..base+len]` (rightmost position),
/// starting the search at `hint`.
fn gallop_right<T: Copy, F: FnMut(T, T) -> Ordering>(
    cmp: &mut F,
    arr: &[T],
    key: T,
    base: usize,
    len: usize,
    hint: usize,
) -> usize {
    let lt = |cmp: &mut F, x: T, y: T| cmp(x, y) == Ordering::Less;
    let (mut last, mut ofs): (isize, isize) = (0, 1);
    let hint_i = hint as isize;
    if lt(cmp, key, arr[base + hint]) {
        let max = hint_i + 1;
        while ofs < max {
            if !lt(cmp, key, arr[base + hint - ofs as usize]) {
                break;
            }
            last = ofs;
            ofs = (ofs << 1) + 1;
        }
        ofs = ofs.min(max);
        let tmp = last;
        last = hint_i - ofs;
        ofs = hint_i - tmp;
    } else {
        let max = (len - hint) as isize;
        while ofs < max {
            if lt(cmp, key, arr[base + hint + ofs as usize]) {
                break;
            }
            last = ofs;
            ofs = (ofs << 1) + 1;
        }
        ofs = ofs.min(max);
        last += hint_i;
        ofs += hint_i;
    }
    last += 1;
    while last < ofs {
        let m = last + ((ofs - last) >> 1);
        if lt(cmp, key, arr[base + m as usize]) {
            ofs = m;
        } else {
            last = m + 1;
        }
    }
    ofs as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn by_ts(v: &mut [usize], ts: &[f64]) {
        v8_sort_by_number(v, |a, b| ts[a] - ts[b]);
    }

    #[test]
    fn slice_sort_puts_owned_elements_in_v8s_order() {
        // Owned (non-Copy) rows end in the same order as V8's sort of their indices.
        for n in [0usize, 1, 2, 64, 70, 300] {
            let ts: Vec<f64> = (0..n)
                .map(|i| {
                    if i % 7 == 3 {
                        f64::NAN
                    } else {
                        ((i * 53) % 70) as f64
                    }
                })
                .collect();
            let mut idx: Vec<usize> = (0..n).collect();
            v8_sort_by_number(&mut idx, |a, b| ts[b] - ts[a]);
            let mut rows: Vec<(String, f64)> = ts
                .iter()
                .enumerate()
                .map(|(i, &t)| (i.to_string(), t))
                .collect();
            v8_sort_slice_by_number(&mut rows, |a, b| b.1 - a.1);
            let got: Vec<String> = rows.into_iter().map(|r| r.0).collect();
            let want: Vec<String> = idx.iter().map(|i| i.to_string()).collect();
            assert_eq!(got, want, "n={n}");
        }
    }

    #[test]
    fn consistent_comparator_gives_a_stable_ascending_sort() {
        // Long enough for several runs, merges and galloping.
        let ts: Vec<f64> = (0..1000).map(|i| ((i * 7919) % 97) as f64).collect();
        let mut v: Vec<usize> = (0..ts.len()).collect();
        by_ts(&mut v, &ts);
        let mut want: Vec<usize> = (0..ts.len()).collect();
        want.sort_by(|&a, &b| ts[a].total_cmp(&ts[b]));
        assert_eq!(v, want);
    }

    #[test]
    fn nan_comparator_never_panics_and_permutes() {
        for n in [0usize, 1, 2, 63, 64, 65, 100, 257, 1000] {
            let ts: Vec<f64> = (0..n)
                .map(|i| {
                    if i % 5 == 3 {
                        f64::NAN
                    } else {
                        ((i * 31) % 17) as f64
                    }
                })
                .collect();
            let mut v: Vec<usize> = (0..n).collect();
            by_ts(&mut v, &ts);
            let mut sorted = v.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..n).collect::<Vec<_>>(), "n={n}");
        }
    }

    #[test]
    fn small_nan_array_matches_binary_insertion() {
        // c2 (9s), c1 (7s), bad (NaN): node's [..].sort gives c1, c2, bad.
        let ts = [9000.0, 7000.0, f64::NAN];
        let mut v = vec![0, 1, 2];
        by_ts(&mut v, &ts);
        assert_eq!(v, vec![1, 0, 2]);
    }

    #[test]
    fn min_run_is_v8s() {
        assert_eq!(min_run_length(63), 63);
        assert_eq!(min_run_length(64), 32);
        assert_eq!(min_run_length(65), 33);
        assert_eq!(min_run_length(1000), 63);
    }
}
