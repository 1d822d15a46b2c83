//! The cache model (docs/CALIBRATION.md §1): which cache holds each CPU's
//! working sets, how much has been loaded into each last-level cache, and
//! what a task pays to bring its working set back when it runs again.
//!
//! Eviction follows random replacement: after P bytes were loaded into a
//! cache of S bytes, a line survives with exp(-P/S) (`libm::exp`, the
//! same on every platform: see `crate::dist`). Each last-level cache keeps
//! one running count of the bytes loaded into it (its *pressure*); a task
//! leaving a CPU notes the count (its stamp), and the difference when it
//! returns is the P it was exposed to.

use cfs_topology::Host;

/// Where a task last ran, as far as its refill depends on it.
#[derive(Clone, Copy, Debug)]
pub(super) struct LastRun {
    /// The CPU it left.
    pub cpu: usize,
    /// That CPU's last-level cache pressure when it left ([`Caches::pressure_of`]).
    pub stamp: f64,
    /// Moving one line from that CPU's caches to the new CPU's, ns
    /// (the cost set's `xfer_line_ns` at their distance; not read when
    /// the task runs on `cpu` again).
    pub xfer_line_ns: f64,
}

/// Which cache each CPU's working set lives in, and the pressure on each
/// last-level cache.
#[derive(Debug)]
pub(super) struct Caches {
    /// Last-level data cache instance of each CPU (a dense id).
    pub llc: Vec<usize>,
    /// Size of each LLC instance, bytes.
    pub llc_bytes: Vec<f64>,
    /// Bytes of data cache private to each CPU's core.
    pub private_bytes: Vec<f64>,
    /// Bytes loaded into each LLC instance so far.
    pub pressure: Vec<f64>,
}

impl Caches {
    /// The data caches of `host`: each CPU's highest-level one is its
    /// LLC, and a cache no wider than its core is private to it. A host
    /// described without caches gets one private 1 MB cache per CPU.
    pub fn new(host: &Host) -> Caches {
        let n = host.nr_cpus();
        let mut llc = vec![usize::MAX; n];
        let mut llc_level = vec![0u8; n];
        let mut llc_bytes = Vec::new();
        let mut private_bytes = vec![0.0f64; n];
        for cache in host.caches().iter().filter(|c| c.kind.holds_data()) {
            for inst in &cache.instances {
                let id = llc_bytes.len();
                llc_bytes.push(cache.size_kb as f64 * 1024.0);
                for cpu in inst.iter().filter(|&c| c < n) {
                    if cache.level > llc_level[cpu] {
                        llc_level[cpu] = cache.level;
                        llc[cpu] = id;
                    }
                    if inst.is_subset_of(&host.thread_siblings(cpu)) {
                        private_bytes[cpu] = private_bytes[cpu].max(cache.size_kb as f64 * 1024.0);
                    }
                }
            }
        }
        for (cpu, l) in llc.iter_mut().enumerate() {
            if *l == usize::MAX {
                *l = llc_bytes.len();
                llc_bytes.push(1024.0 * 1024.0);
                private_bytes[cpu] = 1024.0 * 1024.0;
            }
        }
        let pressure = vec![0.0; llc_bytes.len()];
        Caches { llc, llc_bytes, private_bytes, pressure }
    }

    /// The pressure on `cpu`'s last-level cache: a leaving task's stamp.
    #[inline]
    pub fn pressure_of(&self, cpu: usize) -> f64 {
        self.pressure[self.llc[cpu]]
    }

    /// The fraction of a working set left in `llc` at `stamp` that has
    /// been evicted since: 1 - exp(-P/S).
    #[inline]
    fn evicted(&self, llc: usize, stamp: f64) -> f64 {
        let p = (self.pressure[llc] - stamp).max(0.0);
        1.0 - libm::exp(-p / self.llc_bytes[llc])
    }

    /// What a task with a working set of `ws` bytes pays, in ns, to run on
    /// `cpu`, and the bytes it loads into `cpu`'s LLC (added to its
    /// pressure):
    /// - never ran: the whole set from memory;
    /// - back under the same LLC: the evicted part from memory, plus, from
    ///   another core, the core's private levels from the shared cache;
    /// - from under another LLC: the surviving part across at
    ///   `xfer_line_ns`, the evicted part from memory; the new LLC takes
    ///   the whole set.
    #[inline]
    pub fn refill(&mut self, ws: f64, last: Option<LastRun>, cpu: usize, mem_line_ns: f64) -> f64 {
        if ws <= 0.0 {
            return 0.0;
        }
        let lines = ws / 64.0;
        let llc = self.llc[cpu];
        let (cost, loaded) = match last {
            None => (lines * mem_line_ns, ws),
            Some(l) if self.llc[l.cpu] == llc => {
                let f = self.evicted(llc, l.stamp);
                let mut cost = f * lines * mem_line_ns;
                if l.cpu != cpu {
                    let private = ws.min(self.private_bytes[cpu]) / 64.0;
                    cost += private * l.xfer_line_ns;
                }
                (cost, f * ws)
            }
            Some(l) => {
                let f = self.evicted(self.llc[l.cpu], l.stamp);
                ((1.0 - f) * lines * l.xfer_line_ns + f * lines * mem_line_ns, ws)
            }
        };
        self.pressure[llc] += loaded;
        cost
    }
}
