//! # cfs-topology
//!
//! Hosts and the Linux scheduling domains each kernel profile builds for them.
//!
//! Layers, bottom-up:
//! - [`cpumask`]: `CpuMask`, the fixed-size CPU bitmap (`cpumask_t`).
//! - [`version`]: [`KernelVersion`], the kernel releases we model.
//! - [`domain`]: the static `sched_domain` / `sched_group` description.
//!
//! `no_std` + `alloc` unless the `std` feature (default) is on; parsing and
//! the sysfs reader need `std`.
#![cfg_attr(not(feature = "std"), no_std)]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

extern crate alloc;

pub mod cpumask;
pub mod domain;
pub mod version;

pub use cpumask::{CpuId, CpuMask, MAX_CPUS};
pub use domain::{DomainLevel, DomainParams, SchedDomain, SchedDomains, SchedGroup, SdFlags};
pub use version::KernelVersion;
