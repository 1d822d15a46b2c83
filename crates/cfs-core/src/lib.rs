//! # cfs-core
//!
//! The CFS fair class of Linux 2.6.26 (with 2.6.25, 2.6.26-rc4, 2.6.32-rc1
//! and 2.6.32 as profiles), ported kernel-exact as a `no_std` library.
#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

extern crate alloc;
