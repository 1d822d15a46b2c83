//! `CpuMask`: a fixed-size CPU bitmap, the `cpumask_t` of the kernel.
//!
//! The size is fixed at [`MAX_CPUS`] so that masks are `Copy`, comparisons are
//! cheap and iteration is always in ascending CPU order (the kernel's
//! `for_each_cpu_mask` order, which several decisions depend on, e.g. "the
//! first idle CPU" in `wake_idle`).

use core::fmt;

/// Largest number of logical CPUs a host may have (the kernel's `NR_CPUS`).
pub const MAX_CPUS: usize = 1024;
const WORDS: usize = MAX_CPUS / 64;

/// A logical CPU number, `0..MAX_CPUS`.
pub type CpuId = usize;

/// A set of logical CPUs.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CpuMask {
    words: [u64; WORDS],
}

impl Default for CpuMask {
    #[inline]
    fn default() -> Self {
        Self::empty()
    }
}

impl CpuMask {
    /// The empty set.
    #[inline]
    pub const fn empty() -> Self {
        CpuMask { words: [0; WORDS] }
    }

    /// CPUs `0..n` (clamped to [`MAX_CPUS`]), a word at a time.
    pub fn first_n(n: usize) -> Self {
        let n = n.min(MAX_CPUS);
        let mut m = Self::empty();
        let (full, rest) = (n / 64, n % 64);
        for w in &mut m.words[..full] {
            *w = u64::MAX;
        }
        if rest > 0 {
            m.words[full] = (1u64 << rest) - 1;
        }
        m
    }

    /// A mask holding one CPU (empty if `cpu >= MAX_CPUS`).
    #[inline]
    pub fn single(cpu: CpuId) -> Self {
        let mut m = Self::empty();
        m.set(cpu);
        m
    }

    /// Builds a mask from CPU numbers; numbers `>= MAX_CPUS` are ignored.
    pub fn from_cpus<I: IntoIterator<Item = CpuId>>(cpus: I) -> Self {
        let mut m = Self::empty();
        for c in cpus {
            m.set(c);
        }
        m
    }

    /// Adds `cpu` (ignored if out of range).
    #[inline]
    pub fn set(&mut self, cpu: CpuId) {
        if cpu < MAX_CPUS {
            self.words[cpu / 64] |= 1u64 << (cpu % 64);
        }
    }

    /// Removes `cpu`.
    #[inline]
    pub fn clear(&mut self, cpu: CpuId) {
        if cpu < MAX_CPUS {
            self.words[cpu / 64] &= !(1u64 << (cpu % 64));
        }
    }

    /// Whether `cpu` is in the set.
    #[inline]
    pub fn contains(&self, cpu: CpuId) -> bool {
        cpu < MAX_CPUS && self.words[cpu / 64] & (1u64 << (cpu % 64)) != 0
    }

    /// Number of CPUs in the set (`cpus_weight`).
    #[inline]
    pub fn weight(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// True when no CPU is set.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// Lowest CPU in the set (`first_cpu`).
    #[inline]
    pub fn first(&self) -> Option<CpuId> {
        self.iter().next()
    }

    /// Set intersection.
    #[inline]
    pub fn and(&self, other: &CpuMask) -> CpuMask {
        let mut m = *self;
        for (a, b) in m.words.iter_mut().zip(other.words.iter()) {
            *a &= *b;
        }
        m
    }

    /// Set union.
    #[inline]
    pub fn or(&self, other: &CpuMask) -> CpuMask {
        let mut m = *self;
        for (a, b) in m.words.iter_mut().zip(other.words.iter()) {
            *a |= *b;
        }
        m
    }

    /// `self` minus `other`.
    #[inline]
    pub fn and_not(&self, other: &CpuMask) -> CpuMask {
        let mut m = *self;
        for (a, b) in m.words.iter_mut().zip(other.words.iter()) {
            *a &= !*b;
        }
        m
    }

    /// Whether every CPU of `self` is in `other`.
    #[inline]
    pub fn is_subset_of(&self, other: &CpuMask) -> bool {
        self.words.iter().zip(other.words.iter()).all(|(a, b)| a & !b == 0)
    }

    /// Whether the two sets share a CPU.
    #[inline]
    pub fn intersects(&self, other: &CpuMask) -> bool {
        self.words.iter().zip(other.words.iter()).any(|(a, b)| a & b != 0)
    }

    /// The CPUs in ascending order.
    #[inline]
    pub fn iter(&self) -> impl Iterator<Item = CpuId> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &w)| {
            let mut w = w;
            core::iter::from_fn(move || {
                if w == 0 {
                    None
                } else {
                    let b = w.trailing_zeros() as usize;
                    w &= w - 1;
                    Some(i * 64 + b)
                }
            })
        })
    }

    /// The CPUs in both sets, in ascending order: `self.and(other).iter()`
    /// without building the intersection (the kernel's `for_each_cpu_and`,
    /// which the balancer runs over every group of a domain).
    #[inline]
    pub fn iter_and<'a>(&'a self, other: &'a CpuMask) -> IterAnd<'a> {
        IterAnd { a: &self.words, b: &other.words, i: 0, w: self.words[0] & other.words[0] }
    }
}

/// [`CpuMask::iter_and`]'s iterator: word `i` of the intersection is
/// formed when the scan reaches it, and all-zero words are skipped.
#[derive(Clone, Debug)]
pub struct IterAnd<'a> {
    a: &'a [u64; WORDS],
    b: &'a [u64; WORDS],
    i: usize,
    w: u64,
}

impl Iterator for IterAnd<'_> {
    type Item = CpuId;

    #[inline]
    fn next(&mut self) -> Option<CpuId> {
        while self.w == 0 {
            self.i += 1;
            if self.i >= WORDS {
                return None;
            }
            self.w = self.a[self.i] & self.b[self.i];
        }
        let bit = self.w.trailing_zeros() as usize;
        self.w &= self.w - 1;
        Some(self.i * 64 + bit)
    }
}

/// Prints a kernel-style CPU list, e.g. `0-3,8,10-11`.
impl fmt::Display for CpuMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        let mut iter = self.iter().peekable();
        while let Some(start) = iter.next() {
            let mut end = start;
            while iter.peek() == Some(&(end + 1)) {
                end = iter.next().unwrap_or(end);
            }
            if !first {
                f.write_str(",")?;
            }
            first = false;
            if start == end {
                write!(f, "{start}")?;
            } else {
                write!(f, "{start}-{end}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Debug for CpuMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CpuMask({self})")
    }
}

/// Error from [`CpuMask::parse_list`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CpuListError {
    /// An element was not a number or a range `a-b`.
    #[error("bad CPU list element {0:?} (expected N or N-M)")]
    BadElement(alloc::string::String),
    /// Two commas in a row, or a comma first (`0,,1`, `,1`).
    #[error("empty CPU list element (two commas in a row, or a comma first)")]
    EmptyElement,
    /// A CPU number was `>= MAX_CPUS`.
    #[error("CPU {0} out of range (the limit is {MAX_CPUS})")]
    OutOfRange(usize),
    /// A range ran backwards.
    #[error("CPU range {0}-{1} runs backwards")]
    Backwards(usize, usize),
}

impl CpuMask {
    /// Parses a kernel CPU list such as `0-3,8` (the format of sysfs
    /// `shared_cpu_list` and of `taskset -c`). Whitespace around elements is
    /// ignored; an empty string gives the empty mask (a CPU-less node's
    /// `cpulist`). As bitmap_parselist (lib/bitmap.c) does, one trailing
    /// comma is accepted (`0,1,`) and any other empty element is not (`0,,1`,
    /// `,1`, `0,1,,`: the kernel's loop skips one comma after a number and
    /// then wants a digit or the end).
    pub fn parse_list(s: &str) -> Result<CpuMask, CpuListError> {
        use alloc::string::ToString;
        let mut m = CpuMask::empty();
        let mut parts = s.trim().split(',').map(str::trim).peekable();
        while let Some(part) = parts.next() {
            if part.is_empty() {
                if parts.peek().is_some() {
                    return Err(CpuListError::EmptyElement);
                }
                continue;
            }
            let (a, b) = match part.split_once('-') {
                Some((a, b)) => (a.trim(), b.trim()),
                None => (part, part),
            };
            let a: usize = a.parse().map_err(|_| CpuListError::BadElement(part.to_string()))?;
            let b: usize = b.parse().map_err(|_| CpuListError::BadElement(part.to_string()))?;
            if b < a {
                return Err(CpuListError::Backwards(a, b));
            }
            if b >= MAX_CPUS {
                return Err(CpuListError::OutOfRange(b));
            }
            for c in a..=b {
                m.set(c);
            }
        }
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;
    use alloc::vec::Vec;

    /// The intersection walk at the mask's two ends, and when it is empty.
    #[test]
    fn iter_and_reaches_the_last_word_and_stops() {
        let (one, top) = (CpuMask::single(0), CpuMask::single(MAX_CPUS - 1));
        assert_eq!(one.or(&top).iter_and(&top).collect::<Vec<_>>(), [MAX_CPUS - 1]);
        assert_eq!(one.or(&top).iter_and(&one.or(&top)).collect::<Vec<_>>(), [0, MAX_CPUS - 1]);
        let mut none = one.iter_and(&top);
        assert!(!one.intersects(&top) && none.next().is_none() && none.next().is_none());
    }

    #[test]
    fn list_round_trip() {
        let m = CpuMask::parse_list("0-3,8,10-11").unwrap();
        assert_eq!(m.weight(), 7);
        assert_eq!(format!("{m}"), "0-3,8,10-11");
        assert!(CpuMask::parse_list("3-1").is_err());
        assert!(CpuMask::parse_list("x").is_err());
        assert!(CpuMask::parse_list("1024").is_err());
    }

    /// bitmap_parselist's commas: one at the end is fine, any other empty
    /// element is not (two at the end included); an empty list is the
    /// empty mask.
    #[test]
    fn list_commas_as_the_kernel_reads_them() {
        assert_eq!(CpuMask::parse_list("0,1,").unwrap().weight(), 2);
        assert_eq!(CpuMask::parse_list("").unwrap().weight(), 0);
        assert_eq!(CpuMask::parse_list("\n").unwrap().weight(), 0);
        for bad in ["0,,1", ",1", " , 2", "0,1,,", ","] {
            assert_eq!(CpuMask::parse_list(bad), Err(CpuListError::EmptyElement), "{bad:?}");
        }
    }

    #[test]
    fn clear_removes_one_cpu_in_any_word() {
        // Bits 0, 63 | 64, 65 | 1023: word boundaries and the last CPU.
        let all = [0, 63, 64, 65, 1023];
        for &gone in &all {
            let mut m = CpuMask::from_cpus(all);
            m.clear(gone);
            let left: alloc::vec::Vec<_> = m.iter().collect();
            let want: alloc::vec::Vec<_> = all.iter().copied().filter(|&c| c != gone).collect();
            assert_eq!(left, want, "clear({gone})");
            assert!(!m.contains(gone));
            m.clear(gone);
            assert_eq!(m.weight(), 4, "clearing a clear bit changes nothing");
        }
    }

    #[test]
    fn cpus_past_the_limit_are_ignored() {
        // MAX_CPUS is the first CPU number a mask cannot hold: set, clear and
        // contains take it (and anything larger) without touching the bitmap.
        let mut m = CpuMask::single(MAX_CPUS - 1);
        m.set(MAX_CPUS);
        m.set(usize::MAX);
        m.clear(MAX_CPUS);
        assert_eq!(m, CpuMask::single(MAX_CPUS - 1));
        assert!(m.contains(MAX_CPUS - 1) && !m.contains(MAX_CPUS) && !m.contains(usize::MAX));
        assert_eq!(CpuMask::first_n(MAX_CPUS + 5).weight(), MAX_CPUS);
    }

    /// `first_n` fills whole words and then the low bits of the next: the
    /// same set as CPUs 0..n one at a time, at every word edge and between.
    #[test]
    fn first_n_is_cpus_zero_to_n() {
        for n in [0, 1, 2, 63, 64, 65, 127, 128, 129, 500, MAX_CPUS - 1, MAX_CPUS, MAX_CPUS + 1] {
            let m = CpuMask::first_n(n);
            assert_eq!(m, CpuMask::from_cpus(0..n), "n = {n}");
            assert_eq!(m.weight(), n.min(MAX_CPUS), "n = {n}");
        }
    }

    #[test]
    fn iter_ascending_across_words() {
        let m = CpuMask::from_cpus([700, 3, 64, 63]);
        let v: alloc::vec::Vec<_> = m.iter().collect();
        assert_eq!(v, [3, 63, 64, 700]);
    }
}
