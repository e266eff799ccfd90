//! Go's `sort.SliceStable` (`sort/zsortfunc.go`: `stable_func`,
//! `insertionSort_func`, `symMerge_func`, `rotate_func`), reproduced step by
//! step: upstream's comparators in `normalizeSliceOrder` are not always
//! consistent orders, so another stable sort could order elements
//! differently.

use recon_apimachinery::json::Value;

use super::error::Fault;

/// `sort.SliceStable(data, less)`: insertion sort on blocks of 20 elements,
/// then SymMerge passes of doubling width.
pub(super) fn go_stable_sort<F>(data: &mut [Value], mut less: F) -> Result<(), Fault>
where
    F: FnMut(&Value, &Value) -> Result<bool, Fault>,
{
    let n = data.len();
    let mut block = 20;
    let (mut a, mut b) = (0, block);
    while b <= n {
        insertion_sort(data, a, b, &mut less)?;
        a = b;
        b += block;
    }
    insertion_sort(data, a, n, &mut less)?;
    while block < n {
        a = 0;
        b = 2 * block;
        while b <= n {
            sym_merge(data, a, a + block, b, &mut less)?;
            a = b;
            b += 2 * block;
        }
        let m = a + block;
        if m < n {
            sym_merge(data, a, m, n, &mut less)?;
        }
        block *= 2;
    }
    Ok(())
}

fn insertion_sort<F>(data: &mut [Value], a: usize, b: usize, less: &mut F) -> Result<(), Fault>
where
    F: FnMut(&Value, &Value) -> Result<bool, Fault>,
{
    for i in a + 1..b {
        let mut j = i;
        while j > a && less(&data[j], &data[j - 1])? {
            data.swap(j, j - 1);
            j -= 1;
        }
    }
    Ok(())
}

/// SymMerge of the sorted runs `data[a..m]` and `data[m..b]` (Kim & Kutzner),
/// as in Go's `sort` package.
fn sym_merge<F>(data: &mut [Value], a: usize, m: usize, b: usize, less: &mut F) -> Result<(), Fault>
where
    F: FnMut(&Value, &Value) -> Result<bool, Fault>,
{
    if m - a == 1 {
        let (mut i, mut j) = (m, b);
        while i < j {
            let h = (i + j) / 2;
            if less(&data[h], &data[a])? {
                i = h + 1;
            } else {
                j = h;
            }
        }
        let mut k = a;
        while k + 1 < i {
            data.swap(k, k + 1);
            k += 1;
        }
        return Ok(());
    }
    if b - m == 1 {
        let (mut i, mut j) = (a, m);
        while i < j {
            let h = (i + j) / 2;
            if !less(&data[m], &data[h])? {
                i = h + 1;
            } else {
                j = h;
            }
        }
        let mut k = m;
        while k > i {
            data.swap(k, k - 1);
            k -= 1;
        }
        return Ok(());
    }
    let mid = (a + b) / 2;
    let n = mid + m;
    let (mut start, mut r) = if m > mid { (n - b, mid) } else { (a, m) };
    let p = n - 1;
    while start < r {
        let c = (start + r) / 2;
        if !less(&data[p - c], &data[c])? {
            start = c + 1;
        } else {
            r = c;
        }
    }
    let end = n - start;
    if start < m && m < end {
        rotate(data, start, m, end);
    }
    if a < start && start < mid {
        sym_merge(data, a, start, mid, less)?;
    }
    if mid < end && end < b {
        sym_merge(data, mid, end, b, less)?;
    }
    Ok(())
}

/// Swaps the blocks `data[a..m]` and `data[m..b]` the way Go's `rotate` does.
fn rotate(data: &mut [Value], a: usize, m: usize, b: usize) {
    let mut i = m - a;
    let mut j = b - m;
    while i != j {
        if i > j {
            swap_range(data, m - i, m, j);
            i -= j;
        } else {
            swap_range(data, m - i, m + j - i, i);
            j -= i;
        }
    }
    swap_range(data, m - i, m, i);
}

fn swap_range(data: &mut [Value], a: usize, b: usize, n: usize) {
    for i in 0..n {
        data.swap(a + i, b + i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With a consistent comparator Go's stable sort is an ordinary stable sort.
    #[test]
    fn go_stable_sort_agrees_with_a_stable_sort_for_consistent_orders() {
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        for n in [0usize, 1, 2, 5, 19, 20, 21, 39, 40, 41, 77, 160] {
            let mut items: Vec<Value> = (0..n)
                .map(|i| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    recon_apimachinery::json!([(seed % 7) as i64, i as i64])
                })
                .collect();
            let mut expected = items.clone();
            expected.sort_by_key(|v| v[0].as_i64());
            go_stable_sort(&mut items, |a, b| Ok(a[0].as_i64() < b[0].as_i64())).unwrap();
            assert_eq!(items, expected, "n = {n}");
        }
    }
}
