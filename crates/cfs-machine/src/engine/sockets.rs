//! The socket layer's part of the model: AF_UNIX send buffers (skb
//! truesize, `sk_sndbuf`, who a full buffer blocks and when it wakes
//! them) and pipes (16 pages, merged writes), with the kernel constants
//! they are sized by.

use crate::program::{Stream, TaskRef};
use std::collections::VecDeque;

/// `sizeof(struct sk_buff)` on x86_64, bytes: counted from 2.6.26's
/// struct (e490517a include/linux/skbuff.h) with a distribution's config
/// (conntrack, bridge netfilter, NET_SCHED with actions, multiqueue,
/// NET_DMA, SECMARK; 64-bit kernels keep the header pointers as 32-bit
/// offsets). The same value is used for every profile.
pub const SKB_STRUCT_BYTES: u64 = 232;

/// `SMP_CACHE_BYTES`, to which `alloc_skb` rounds the data area up
/// (`SKB_DATA_ALIGN`): 128 on an x86_64 kernel built for generic CPUs
/// (X86_L1_CACHE_SHIFT 7 with GENERIC_CPU, e490517a arch/x86/Kconfig.cpu),
/// as distributions build them.
pub const SMP_CACHE_BYTES: u64 = 128;

/// `SK_WMEM_MAX`, every socket's default `sk_sndbuf`
/// (`sysctl_wmem_default`): (sizeof(struct sk_buff) + 256) × 256 =
/// 124,928 bytes (e490517a net/core/sock.c:202-213).
pub const SK_WMEM_MAX: u64 = (SKB_STRUCT_BYTES + 256) * 256;

/// `SOCK_MIN_SNDBUF` (e490517a include/net/sock.h): the smallest send
/// buffer a socket takes.
pub const SOCK_MIN_SNDBUF: u64 = 2_048;

/// `SKB_MAX_ALLOC`, the largest skb `unix_stream_sendmsg` allocates:
/// four pages less the aligned `struct skb_shared_info` (312 bytes with 18
/// fragments on x86_64, aligned to 384), 16,384 − 384 = 16,000 bytes
/// (e490517a include/linux/skbuff.h).
pub const SKB_MAX_ALLOC: u64 = 16_000;

/// The truesize an AF_UNIX stream write of `bytes` charges to its socket's
/// `sk_wmem_alloc` (e490517a net/unix/af_unix.c, unix_stream_sendmsg): it
/// is cut into skbs of at most `sndbuf / 2 − 64` and at most
/// [`SKB_MAX_ALLOC`] bytes, and each skb costs its data rounded up to
/// [`SMP_CACHE_BYTES`] plus [`SKB_STRUCT_BYTES`] (`alloc_skb`). A 100-byte
/// hackbench message costs 128 + 232 = 360 bytes, so 348 of them fill
/// [`SK_WMEM_MAX`] (a write is allowed while less than that is charged).
pub fn skb_truesize(bytes: u32, sndbuf: u64) -> u64 {
    let skb = |len: u64| len.div_ceil(SMP_CACHE_BYTES) * SMP_CACHE_BYTES + SKB_STRUCT_BYTES;
    let bytes = bytes as u64;
    let chunk = (sndbuf / 2).saturating_sub(64).clamp(SMP_CACHE_BYTES, SKB_MAX_ALLOC);
    let chunk = if sndbuf == 0 { SKB_MAX_ALLOC } else { chunk };
    // One skb, the common case: nothing to cut. A message of no bytes
    // (still a wakeup here) is charged one empty skb.
    if bytes <= chunk {
        return skb(bytes);
    }
    let (full, rest) = (bytes / chunk, bytes % chunk);
    full * skb(chunk) + if rest > 0 { skb(rest) } else { 0 }
}

/// `PIPE_BUFFERS`: the pages a pipe holds (e490517a
/// include/linux/pipe_fs_i.h; fixed until 2.6.35's F_SETPIPE_SZ).
pub const PIPE_BUFFERS: usize = 16;

/// `PAGE_SIZE` on x86, bytes: a pipe buffer's capacity.
pub const PAGE_SIZE: u32 = 4_096;

/// Socket-layer behaviour of the simulated kernel that changes who is
/// woken, beyond the reader wakeup every message makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sockets {
    /// Wake the writer of an AF_UNIX stream message ([`Action::Write`])
    /// when the reader takes it, if the writer sleeps in `Select` or
    /// `Wait`. In every modelled kernel the reader's recvmsg frees the skb,
    /// whose destructor `sock_wfree` calls `unix_write_space`; that wakes
    /// the writer socket's wait queue (`wake_up_interruptible_sync`, no
    /// event key) as soon as the socket is writable again. A select()
    /// sleeping on that socket wakes, polls every descriptor and sleeps
    /// again: select only learned to ignore wakeups for events it does not
    /// wait for in 2.6.31 (4938d7e0 "poll: avoid extra wakeups in
    /// select/poll"), and unix_write_space still passed no key in 2.6.32
    /// (22763c5c net/unix/af_unix.c). Off by default: see
    /// docs/CALIBRATION.md §5 for what it does to the pgbench tables.
    ///
    /// [`Action::Write`]: crate::program::Action::Write
    pub write_space_wakeups: bool,
    /// `sk_sndbuf` of every AF_UNIX stream socket, bytes; 0 leaves send
    /// buffers unbounded (writes never block). A write
    /// ([`Action::Write`]) finding its socket's `sk_wmem_alloc` (the
    /// truesize of its skbs not yet taken, [`skb_truesize`]) at or above
    /// this blocks, as `sock_alloc_send_pskb` does in
    /// `sock_wait_for_wmem`, until the reader has taken enough that the
    /// socket is writable again: `unix_write_space` wakes the socket's
    /// waiters (sync, newest first) once `sk_wmem_alloc` is at most a
    /// quarter of this (`unix_writable`, e490517a net/unix/af_unix.c).
    /// Default [`SK_WMEM_MAX`]: 348 hackbench messages fit, and a blocked
    /// sender wakes when 86 are left. A write larger than one skb is
    /// charged whole when it starts rather than blocking between its skbs.
    ///
    /// [`Action::Write`]: crate::program::Action::Write
    pub sndbuf: u64,
    /// Model a select() pass as the window it is in the kernel
    /// ([`Action::Select`] with its sockets named): a message landing on a
    /// socket already polled is missed by that pass and, if the socket
    /// holds the selecting task on its wait queue, wakes it while it runs
    /// (try_to_wake_up's `out_running`), so that a pass finding nothing
    /// reschedules voluntarily before it polls again (on the 2.6.32
    /// profiles it only polls again: see `engine::poll`). On by default;
    /// off, a pass finds every message that came before it ended.
    ///
    /// [`Action::Select`]: crate::program::Action::Select
    pub poll_window: bool,
    /// `net.ipv4.tcp_low_latency` (default 0, as in every modelled
    /// kernel): when set, `tcp_prequeue` declines every segment
    /// (4b119e21 and bce7f793 include/net/tcp.h:875 and :887, 22763c5c
    /// :924), so the receive softirq runs `tcp_v4_do_rcv` itself and
    /// `tcp_rcv_established` ends in `sk_data_ready` (bce7f793
    /// net/ipv4/tcp_input.c:4834, 22763c5c :5320): `sock_def_readable`'s
    /// sync wakeup, even for a reader blocked in recv, which with the
    /// prequeue gets a plain one. The wakeup still comes from the
    /// softirq on the sender's CPU ([`Action::TcpSend`]). A sysctl, so
    /// `--switch` can write it mid-run ([`Setting::TcpLowLatency`]).
    ///
    /// [`Action::TcpSend`]: crate::program::Action::TcpSend
    /// [`Setting::TcpLowLatency`]: super::Setting::TcpLowLatency
    pub tcp_low_latency: bool,
}

impl Default for Sockets {
    fn default() -> Sockets {
        Sockets { write_space_wakeups: false, sndbuf: SK_WMEM_MAX, poll_window: true, tcp_low_latency: false }
    }
}

/// Whose buffer a write fills.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum SockKey {
    /// A socket connection of its own ([`Stream::Pair`]).
    Pair { writer: TaskRef, reader: TaskRef },
    /// A socket several writers share ([`Stream::Shared`]).
    Shared(u32),
    /// A pipe ([`Stream::Pipe`]).
    Pipe(u32),
}

impl SockKey {
    pub(super) fn new(stream: Stream, writer: TaskRef, reader: TaskRef) -> SockKey {
        match stream {
            Stream::Pair => SockKey::Pair { writer, reader },
            Stream::Shared(id) => SockKey::Shared(id),
            Stream::Pipe(id) => SockKey::Pipe(id),
        }
    }
}

/// One stream's buffer: for a shared socket the truesize of its skbs not
/// yet taken (`sk_wmem_alloc`), for a pipe its pages in use, oldest first;
/// and the writers blocked on it (its wait queue, in the order they were
/// added). A connection ([`Stream::Pair`]) has an entry only once its
/// charge has been needed ([`super::Sim::pair_wmem`]); until then it is bounded by
/// its reader's `pair_bytes`.
#[derive(Debug, Default)]
pub(super) struct SendBuf {
    pub(super) wmem: u64,
    pub(super) pages: VecDeque<PipePage>,
    pub(super) waiters: Vec<TaskRef>,
}

/// A pipe buffer in use: where its data ends (`offset + len`, where a
/// merged write goes) and how much of it is unread (`len`).
#[derive(Clone, Copy, Debug)]
pub(super) struct PipePage {
    pub(super) end: u32,
    pub(super) unread: u32,
}

impl SendBuf {
    /// The part of a `bytes` write that `pipe_write` merges into the last
    /// page: the write's size modulo a page, if the pipe has a page and it
    /// has room for that much after its data.
    pub(super) fn pipe_merge(&self, bytes: u32) -> u32 {
        let tail = bytes % PAGE_SIZE;
        match self.pages.back() {
            Some(last) if tail != 0 && last.end + tail <= PAGE_SIZE => tail,
            _ => 0,
        }
    }

    /// Whether a `bytes` write must wait: it needs a new page and all
    /// [`PIPE_BUFFERS`] are in use.
    pub(super) fn pipe_full(&self, bytes: u32) -> bool {
        bytes > self.pipe_merge(bytes) && self.pages.len() >= PIPE_BUFFERS
    }

    /// `pipe_write` of `bytes`: the merged part into the last page, the
    /// rest into new pages of up to a page each.
    pub(super) fn pipe_put(&mut self, bytes: u32) {
        let merged = self.pipe_merge(bytes);
        if let Some(last) = self.pages.back_mut() {
            last.end += merged;
            last.unread += merged;
        }
        let mut rest = bytes - merged;
        while rest > 0 {
            let n = rest.min(PAGE_SIZE);
            self.pages.push_back(PipePage { end: n, unread: n });
            rest -= n;
        }
    }

    /// `pipe_read` of one `bytes` message from the oldest pages; returns
    /// how many pages it emptied and released.
    pub(super) fn pipe_take(&mut self, bytes: u32) -> usize {
        let (mut rest, mut freed) = (bytes, 0);
        while rest > 0 {
            let Some(front) = self.pages.front_mut() else { break };
            let n = rest.min(front.unread);
            front.unread -= n;
            rest -= n;
            if front.unread == 0 {
                self.pages.pop_front();
                freed += 1;
            }
        }
        freed
    }
}
