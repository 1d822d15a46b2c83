#![no_std]
extern crate alloc;

use core::alloc::{GlobalAlloc, Layout};

struct NoAlloc;
unsafe impl GlobalAlloc for NoAlloc {
    unsafe fn alloc(&self, _: Layout) -> *mut u8 {
        core::ptr::null_mut()
    }
    unsafe fn dealloc(&self, _: *mut u8, _: Layout) {}
}

#[global_allocator]
static A: NoAlloc = NoAlloc;

#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    loop {}
}

/// Touches the crates so they are linked.
#[unsafe(no_mangle)]
pub extern "C" fn probe() -> usize {
    cfs_topology::CpuMask::first_n(4).weight()
}
