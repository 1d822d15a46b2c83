//! [`TopologyError`]: everything that can be wrong with a host description,
//! whichever way it arrived (preset name, spec string, TOML file, sysfs tree).
//!
//! Every variant names the offending item (the CPU, the cache, the key, the
//! file) so that a user can fix the input without reading this crate.

use alloc::string::String;

/// Largest number of NUMA nodes a host may have (the kernel's `MAX_NUMNODES`
/// with `NODES_SHIFT` = 10).
pub const MAX_NODES: usize = 1024;

/// Why a host could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TopologyError {
    // ----- presets -------------------------------------------------------
    /// `Host::preset` was given a name it does not know.
    #[error("unknown host preset {name:?} (known: {known})")]
    UnknownPreset {
        /// What was asked for.
        name: String,
        /// The known names, comma separated.
        known: &'static str,
    },

    // ----- spec strings --------------------------------------------------
    /// The spec string was empty.
    #[error("empty host spec (expected something like `2s4c2t` or `1s2d2c`)")]
    EmptySpec,
    /// The shape part of a spec (`2n2s4c2t`) could not be read.
    #[error("bad host spec {spec:?} at byte {pos}: {reason}")]
    SpecSyntax {
        /// The shape being parsed.
        spec: String,
        /// Byte offset of the problem inside the shape.
        pos: usize,
        /// What was expected.
        reason: String,
    },
    /// An option after the shape (`,mhz=2400`) is unknown.
    #[error("unknown host spec option {0:?} (known: amd, intel, mhz=, l2=, l3=, order=, dist=)")]
    UnknownSpecOption(String),
    /// An option after the shape was given twice (`mhz=1,mhz=2`, or both
    /// `intel` and `amd`): which one was meant is not clear, so neither wins.
    #[error("host spec option `{0}` is given twice")]
    RepeatedSpecOption(String),
    /// An option after the shape has a value it cannot take.
    #[error("bad value {value:?} for host spec option `{key}`: expected {expected}")]
    BadSpecOption {
        /// The option name.
        key: String,
        /// The value given.
        value: String,
        /// What would have been accepted.
        expected: &'static str,
    },

    // ----- TOML ----------------------------------------------------------
    /// The TOML host file did not parse or had an unknown/missing key; the
    /// message is the TOML parser's, on one line after the position
    /// (`line 3, column 1: unknown field ...`).
    #[error("host file: {0}")]
    Toml(String),
    /// The TOML host file parsed but is inconsistent.
    #[error("host file: {0}")]
    HostFile(String),

    // ----- sysfs ---------------------------------------------------------
    /// A sysfs file was missing, unreadable or held something unexpected.
    #[error("sysfs {path}: {reason}")]
    Sysfs {
        /// The file or directory.
        path: String,
        /// What was wrong.
        reason: String,
    },

    // ----- validation of the host itself ---------------------------------
    /// The host has no CPUs.
    #[error("host {host:?} has no CPUs")]
    NoCpus {
        /// The host name.
        host: String,
    },
    /// More logical CPUs than [`crate::MAX_CPUS`].
    #[error("host has {0} logical CPUs; the limit is {max}", max = crate::MAX_CPUS)]
    TooManyCpus(usize),
    /// Two logical CPUs claim the same (package, die, core, thread).
    #[error("CPU {cpu} and CPU {other} are both package {package} die {die} core {core} thread {thread}")]
    DuplicateThread {
        /// The later CPU.
        cpu: usize,
        /// The earlier CPU with the same ids.
        other: usize,
        /// Package id.
        package: u32,
        /// Die id.
        die: u32,
        /// Core id.
        core: u32,
        /// Thread id.
        thread: u32,
    },
    /// The SMT threads of one core were put on different NUMA nodes.
    #[error(
        "CPU {cpu} (node {node}) and CPU {other} (node {other_node}) are threads of one core but on different NUMA nodes"
    )]
    CoreSplitAcrossNodes {
        /// One thread.
        cpu: usize,
        /// Its node.
        node: u32,
        /// Another thread of the same core.
        other: usize,
        /// That thread's node.
        other_node: u32,
    },
    /// A CPU's node id is not below the number of nodes in the distance table.
    #[error("CPU {cpu} is on node {node}, but the distance table has only {nodes} nodes")]
    NodeOutOfRange {
        /// The CPU.
        cpu: usize,
        /// Its node.
        node: u32,
        /// Rows in the distance table.
        nodes: usize,
    },
    /// A node id (or the number of nodes) is beyond [`MAX_NODES`].
    #[error("CPU {cpu} is on node {node}; node ids must be below {max}", max = MAX_NODES)]
    NodeIdTooLarge {
        /// The CPU (0 when the distance table itself is too big).
        cpu: usize,
        /// Its node id.
        node: u64,
    },
    /// The NUMA distance table is not square, or has the wrong size.
    #[error("NUMA distance table row {row} has {len} entries; expected {expected}")]
    DistanceShape {
        /// The row.
        row: usize,
        /// Its length.
        len: usize,
        /// The number of nodes.
        expected: usize,
    },
    /// A diagonal entry of the distance table is not 10 (SLIT's LOCAL_DISTANCE).
    #[error("NUMA distance from node {node} to itself is {value}; SLIT requires 10")]
    BadLocalDistance {
        /// The node.
        node: usize,
        /// The value found.
        value: u32,
    },
    /// An off-diagonal entry of the distance table is not in 11..=255.
    #[error("NUMA distance from node {from} to node {to} is {value}; remote distances must be 11..=255")]
    BadRemoteDistance {
        /// Row.
        from: usize,
        /// Column.
        to: usize,
        /// The value found.
        value: u32,
    },
    /// A cache description is unusable.
    #[error("L{level} {kind} cache: {reason}")]
    BadCache {
        /// Cache level.
        level: u8,
        /// "data", "instruction" or "unified".
        kind: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// The clock is outside 1..=[`crate::shape::MAX_MHZ`] MHz (the cost
    /// model scales CPU work by it, so a clock of zero or of terahertz
    /// would make work take forever or no time at all).
    #[error("host {host:?}: clock {mhz} MHz is outside 1..={max} MHz", max = crate::shape::MAX_MHZ)]
    ClockOutOfRange {
        /// The host name.
        host: String,
        /// The clock given.
        mhz: u32,
    },
}
