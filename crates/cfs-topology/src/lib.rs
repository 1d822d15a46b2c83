//! # cfs-topology
//!
//! Hosts (CPUs, caches, NUMA nodes) and the Linux scheduling domains each
//! modelled kernel release builds for them.
//!
//! Layers, bottom-up:
//!
//! - [`cpumask`]: [`CpuMask`], the fixed-size CPU bitmap (`cpumask_t`).
//! - [`version`]: [`KernelVersion`], the kernel releases we model.
//! - [`host`]: [`Host`], a validated machine: logical CPUs with (package,
//!   die, core, thread, node) ids, caches with the CPUs sharing each
//!   instance, a SLIT node-distance table, vendor and clock. [`error`] holds
//!   the one error type, [`TopologyError`].
//! - Ways to get a host: [`presets`] (the project's five machines:
//!   [`Host::preset`]), [`shape`] (regular machines, [`HostShape`]),
//!   [`spec`] (compact strings like `2s4c2t`: [`Host::from_spec`]), and with
//!   `std`: [`toml_host`] ([`Host::from_toml`]), [`sysfs`]
//!   ([`Host::from_sysfs`]) and [`parse_any`] (preset name, spec or TOML).
//! - [`distance`]: [`Host::distance`], a cheap nearness query for cost models.
//! - [`domain`]: the `sched_domain` / `sched_group` types; a domain's groups
//!   are a [`GroupRing`], one list per level and span shared by its CPUs,
//!   each entering at its own group, as the kernel links them.
//! - [`builder`]: [`Host::build_domains`], the hierarchy a given kernel's x86
//!   code builds (spans, groups, `cpu_power`, flags, parameters, degenerate
//!   removal), ported from each release's `kernel/sched.c`.
//! - [`overrides`]: flag edits per level (`MC:-PREFER_LOCAL`), written into
//!   built domains ([`SchedDomains::apply_overrides`], a running kernel's
//!   `sched_domain` sysctl) or into the initialisers the builder starts from
//!   ([`InitFlagEdits`] in [`BuildOptions::init_flags`], a patched kernel,
//!   whose edits degenerate removal and group power see).
//! - [`render`]: the kernel's domain debug dump, a host summary, and (with
//!   `std`) JSON.
//!
//! `no_std` + `alloc` unless the `std` feature (default) is on; the TOML
//! reader, the sysfs reader and JSON need `std`.
#![cfg_attr(not(feature = "std"), no_std)]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

extern crate alloc;

pub mod builder;
pub mod cpumask;
pub mod distance;
pub mod domain;
pub mod error;
pub mod host;
pub mod overrides;
pub mod presets;
pub mod render;
pub mod shape;
pub mod spec;
#[cfg(feature = "std")]
pub mod sysfs;
#[cfg(feature = "std")]
pub mod toml_host;
pub mod version;

pub use builder::{BuildOptions, NumaConfig, PowerSavings};
pub use cpumask::{CpuId, CpuMask, MAX_CPUS};
pub use distance::Distance;
pub use domain::{DomainLevel, DomainParams, GroupRing, SchedDomain, SchedDomains, SchedGroup, SdFlags};
pub use error::TopologyError;
pub use host::{Cache, CacheKind, Host, HostDesc, LogicalCpu, Vendor};
pub use overrides::{FlagOverride, InitFlagEdits, OverrideError, parse_flag_overrides, parse_flag_overrides_for};
pub use presets::{PRESET_NAMES, PRESETS, PresetInfo};
#[cfg(feature = "std")]
pub use render::{domains_to_json, host_to_json};
pub use render::{render_host_summary, render_kernel_debug};
pub use shape::{CacheScope, CacheSpec, HostShape, Numbering};
pub use spec::parse_spec;
pub use version::KernelVersion;

/// Reads a host from any textual form: a preset name (`q6600`), a spec
/// string (`2s4c2t,mhz=2930`: input starting with a digit, on one line), or
/// else a TOML host file. Never panics, whatever the input (the fuzz entry
/// point).
#[cfg(feature = "std")]
pub fn parse_any(input: &str) -> Result<Host, TopologyError> {
    let t = input.trim();
    if presets::preset_shape(t).is_some() {
        return Host::preset(t);
    }
    if t.starts_with(|c: char| c.is_ascii_digit()) && !t.contains('\n') {
        return Host::from_spec(t);
    }
    Host::from_toml(input)
}
