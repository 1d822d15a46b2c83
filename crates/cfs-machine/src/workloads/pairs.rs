//! Client/server pair workloads: `tbench` and `sysbench-oltp`.
//!
//! Both have N independent 1:1 ping-pong pairs (unlike pgbench's one
//! client for N servers): a listener (task 0) creates one server per
//! connection (tbench_srv forks, mysqld creates a thread; both go through
//! the kernel's fork placement), and a launcher (task 1) forks the N
//! clients. Every request and reply wakes its reader from the sender's
//! CPU: tbench's over loopback TCP, whose receive softirq runs there and
//! wakes a reader blocked in recv without the sync hint
//! ([`Action::TcpSend`]); sysbench's over a unix socket, a sync wakeup.

use super::{CostField, Launcher, Listener, START_MUTEX, Side, StartCpus, StartGate, Tag, WorkloadOpts, ns};
use crate::program::{Action, ForkSpec, Planner, Queued, StepCx, TaskRef, TaskSpec};
use std::collections::VecDeque;

/// Which pair workload, with its costs.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Tbench(TbenchCosts),
    Sysbench(SysbenchCosts),
}

impl Kind {
    /// A request or reply on the pair's connection: loopback TCP for
    /// tbench (the receive softirq wakes a reader blocked in recv without
    /// the sync hint), a unix socket for sysbench's `localhost` MySQL
    /// connection (sock_def_readable, sync).
    fn send(self, to: TaskRef, bytes: u32, tag: u32) -> Action {
        match self {
            Kind::Tbench(_) => Action::TcpSend { to, bytes, tag },
            Kind::Sysbench(_) => Action::Send { to, sync: true, bytes, tag },
        }
    }
}

/// One tbench operation: request and reply bytes on the wire, and the
/// payload bytes dbench counts towards MB/s (only ReadX and WriteX).
#[derive(Clone, Copy, Debug)]
struct TbOp {
    req: u32,
    reply: u32,
    counted: u32,
}

/// A cyclic op mix standing in for the NetBench `client.txt` loadfile,
/// which is not available here \[E\]: sizes per hosts-and-costs.md §3.3's
/// table, names of ~20 characters, ~1.1 KB counted per op (§3.3 suggests
/// ~1 KB).
const TB_OPS: [TbOp; 10] = [
    TbOp { req: 114, reply: 87, counted: 0 },          // NTCreateX
    TbOp { req: 95, reply: 71, counted: 0 },           // QPathInfo
    TbOp { req: 59, reply: 59 + 4096, counted: 4096 }, // ReadX 4 KB
    TbOp { req: 59, reply: 59 + 4096, counted: 4096 }, // ReadX 4 KB
    TbOp { req: 59 + 2048, reply: 55, counted: 2048 }, // WriteX 2 KB
    TbOp { req: 59, reply: 71, counted: 0 },           // QFileInfo
    TbOp { req: 59, reply: 59 + 1024, counted: 1024 }, // ReadX 1 KB
    TbOp { req: 47, reply: 39, counted: 0 },           // Close
    TbOp { req: 99, reply: 39 + 90 * 4, counted: 0 },  // FindFirst, 4 entries
    TbOp { req: 51, reply: 39, counted: 0 },           // LockX
];

/// tbench's own costs, which `--cost tbench.FIELD=VALUE` replaces.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct TbenchCosts {
    /// CPU per op on each side (§3.3, §5.2 \[E\]: ~5 µs client and ~5 µs
    /// server at 2.4 GHz, syscalls and the TCP stack included).
    pub side_ns: f64,
    /// Copying a byte through loopback TCP, per side (one copy into the
    /// skb, one out of it; ~2.5 GB/s memcpy \[E\]).
    pub copy_ns_per_byte: f64,
    /// A client's connect before its first op \[E\].
    pub connect_ns: f64,
    /// tbench_srv's fork of a child per connection \[E\].
    pub fork_ns: f64,
    /// A server child's working set, KB \[E\].
    pub server_ws_kb: u32,
    /// A client's working set, KB \[E\].
    pub client_ws_kb: u32,
}

impl TbenchCosts {
    /// The shipped values.
    pub const SHIPPED: TbenchCosts = TbenchCosts {
        side_ns: 5_000.0,
        copy_ns_per_byte: 0.4,
        connect_ns: 20_000.0,
        fork_ns: 60_000.0,
        server_ws_kb: 48,
        client_ws_kb: 48,
    };

    /// One side's CPU for `op`: the fixed part plus both copies of its
    /// bytes.
    fn side(&self, op: TbOp) -> f64 {
        self.side_ns + self.copy_ns_per_byte * (op.req + op.reply) as f64
    }
}

impl Default for TbenchCosts {
    fn default() -> Self {
        TbenchCosts::SHIPPED
    }
}

/// Every field of [`TbenchCosts`], as `--cost tbench.FIELD` names it.
pub const TBENCH_COST_FIELDS: [CostField<TbenchCosts>; 6] = [
    CostField::ns("side_ns", "[E] §3.3, §5.2: ~5 µs a side, syscalls and the TCP stack included", |c, x| {
        c.side_ns = x
    }),
    // A 4 KB ReadX at 1,000 ns a byte is 4 ms a side.
    CostField::number(
        "copy_ns_per_byte",
        "[E] two copies through loopback at ~2.5 GB/s",
        |c, x| c.copy_ns_per_byte = x,
        1_000.0,
    ),
    CostField::ns("connect_ns", "[E] a client's connect before its first op", |c, x| c.connect_ns = x),
    CostField::ns("fork_ns", "[E] tbench_srv's fork of a child per connection", |c, x| c.fork_ns = x),
    CostField::kb("server_ws_kb", "[E] §5.1: a tbench task's 30-60 KB", |c, x| c.server_ws_kb = x as u32),
    CostField::kb("client_ws_kb", "[E] §5.1: a tbench task's 30-60 KB", |c, x| c.client_ws_kb = x as u32),
];

/// sysbench's and mysqld's own costs, which `--cost
/// sysbench-oltp.FIELD=VALUE` replaces.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct SysbenchCosts {
    /// sysbench's own CPU per statement (§4.3 \[E\]).
    pub client_ns: f64,
    /// A factor on every statement's server time in the `OLTP` table
    /// (1 = the table's 550 µs a transaction).
    pub statement_scale: f64,
    /// A statement's request on the socket, bytes \[E\].
    pub request_bytes: u32,
    /// A client's connect before its first statement \[E\].
    pub connect_ns: f64,
    /// mysqld's clone of a thread per connection \[E\].
    pub fork_ns: f64,
    /// A connection thread's working set, KB \[E\].
    pub server_ws_kb: u32,
    /// A sysbench thread's working set, KB \[E\].
    pub client_ws_kb: u32,
}

impl SysbenchCosts {
    /// The shipped values.
    pub const SHIPPED: SysbenchCosts = SysbenchCosts {
        client_ns: 5_000.0,
        statement_scale: 1.0,
        request_bytes: 96,
        connect_ns: 20_000.0,
        fork_ns: 30_000.0,
        server_ws_kb: 128,
        client_ws_kb: 32,
    };
}

impl Default for SysbenchCosts {
    fn default() -> Self {
        SysbenchCosts::SHIPPED
    }
}

/// Every field of [`SysbenchCosts`], as `--cost sysbench-oltp.FIELD` names
/// it.
pub const SYSBENCH_COST_FIELDS: [CostField<SysbenchCosts>; 7] = [
    CostField::ns("client_ns", "[E] §4.3: ~5 µs of sysbench per statement", |c, x| c.client_ns = x),
    // The dearest statement (80 µs) at 1,000 times is 80 ms.
    CostField::number(
        "statement_scale",
        "[E] §4.3: 20-40 µs a point select, 60-150 µs a range (the OLTP table)",
        |c, x| c.statement_scale = x,
        1_000.0,
    ),
    CostField::bytes("request_bytes", "[E] a statement's request on the socket", |c, x| c.request_bytes = x as u32),
    CostField::ns("connect_ns", "[E] a client's connect before its first statement", |c, x| c.connect_ns = x),
    CostField::ns("fork_ns", "[E] mysqld's clone of a thread per connection", |c, x| c.fork_ns = x),
    CostField::kb("server_ws_kb", "[E] a connection thread's working set", |c, x| c.server_ws_kb = x as u32),
    CostField::kb("client_ws_kb", "[E] a sysbench thread's working set", |c, x| c.client_ws_kb = x as u32),
];

/// sysbench 0.4 OLTP read-only: the 16 statements of one transaction
/// (§4.3) as (server µs \[E\], reply bytes \[E\]).
const OLTP: [(f64, u32); 16] = [
    (10.0, 11),  // BEGIN
    (25.0, 150), // 10 point selects by primary key
    (25.0, 150),
    (25.0, 150),
    (25.0, 150),
    (25.0, 150),
    (25.0, 150),
    (25.0, 150),
    (25.0, 150),
    (25.0, 150),
    (25.0, 150),
    (60.0, 12_000), // simple range (100 rows)
    (60.0, 60),     // SUM over a range
    (80.0, 12_000), // ORDER BY range
    (80.0, 12_000), // DISTINCT range
    (10.0, 11),     // COMMIT
];

/// tbench: `tbench_srv` (task 0) and the tbench parent (task 1).
pub fn tbench(clients: u32, opts: &WorkloadOpts, costs: TbenchCosts, start: StartCpus) -> Vec<TaskSpec> {
    pair_tasks(Kind::Tbench(costs), clients, opts, start)
}

/// sysbench OLTP read-only: mysqld (task 0) and sysbench (task 1).
pub fn sysbench(clients: u32, opts: &WorkloadOpts, costs: SysbenchCosts, start: StartCpus) -> Vec<TaskSpec> {
    pair_tasks(Kind::Sysbench(costs), clients, opts, start)
}

/// The listener (task 0), which forks a [`Server`] per connection, and the
/// launcher (task 1), which forks the clients.
fn pair_tasks(kind: Kind, clients: u32, opts: &WorkloadOpts, start: StartCpus) -> Vec<TaskSpec> {
    // fork of a small tbench_srv / clone of a mysqld thread.
    let (srv_name, fork_ns, conn_name, conn_ws) = match kind {
        Kind::Tbench(c) => ("tbench_srv", c.fork_ns, "tbench_srv", c.server_ws_kb),
        Kind::Sysbench(c) => ("mysqld", c.fork_ns, "mysqld-conn", c.server_ws_kb),
    };
    let listener = Listener::new(fork_ns, move |client| ForkSpec {
        name: conn_name.into(),
        program: Queued::boxed(Server { kind, client, started: false }),
        params: None,
        ws_kb: conn_ws,
    });
    let (cli_name, worker_name, worker_ws) = match kind {
        Kind::Tbench(c) => ("tbench", "tbench-client", c.client_ws_kb),
        Kind::Sysbench(c) => ("sysbench", "sysbench-thread", c.client_ws_kb),
    };
    // sysbench's threads wait at its start mutex until all exist; tbench's
    // children wait at dbench's barrier until all are connected.
    let gate = match kind {
        Kind::Tbench(_) => StartGate::AfterStarted,
        Kind::Sysbench(_) => StartGate::AfterForks,
    };
    let launcher = Launcher::gated(clients, gate, move |i| ForkSpec {
        name: worker_name.into(),
        program: Queued::boxed(PairClient::new(kind, (i as usize * 3) % TB_OPS.len(), gate)),
        params: None,
        ws_kb: worker_ws,
    });
    vec![
        start.task(Side::Server, srv_name, opts, 64, Queued::new(listener)),
        start.task(Side::Client, cli_name, opts, 64, Queued::new(launcher)),
    ]
}

/// A server: answer the connection's first exchange, then every request.
/// dbench's `sio_setup` ends its connect with `do_packets(child, 8, 8)`:
/// 8 bytes each way over the same loopback TCP connection, so tbench_srv's
/// child wakes the client as every later reply does, from the receive
/// softirq and without the sync hint (sahlberg/dbench sockio.c:66-82). A
/// MySQL server greets its new connection first, over the unix socket,
/// sync, as sysbench's replies come.
struct Server {
    kind: Kind,
    client: TaskRef,
    started: bool,
}

impl Planner for Server {
    fn plan(&mut self, cx: &mut StepCx<'_>, q: &mut VecDeque<Action>) {
        if !self.started {
            self.started = true;
            let bytes = match self.kind {
                Kind::Tbench(_) => 8,
                Kind::Sysbench(_) => 64,
            };
            q.push_back(self.kind.send(self.client, bytes, Tag::Ready as u32));
        }
        for m in cx.received.iter().filter(|m| m.tag & OP_TAG != 0) {
            let op = (m.tag & !OP_TAG) as usize;
            let (cost, reply) = match self.kind {
                Kind::Tbench(c) => {
                    let op = TB_OPS[op % TB_OPS.len()];
                    (c.side(op), op.reply)
                }
                Kind::Sysbench(c) => {
                    let (us, reply) = OLTP[op % OLTP.len()];
                    (us * 1000.0 * c.statement_scale, reply)
                }
            };
            q.push_back(Action::Run(ns(cost)));
            q.push_back(self.kind.send(self.client, reply, Tag::Reply as u32));
        }
        q.push_back(Action::Wait { all: true });
    }
}

/// A request's tag: this bit plus the op (tbench) or statement (sysbench)
/// index, so the server knows what it is answering.
const OP_TAG: u32 = 0x100;

/// Where a [`PairClient`] is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// Not yet started: the connect is still to be sent.
    New,
    /// Connect sent; waiting for its server (`server`) and, when the
    /// driver has a start barrier, for the release (`released`).
    Starting { server: Option<TaskRef>, released: bool },
    /// Issuing requests to `server` back to back.
    Running { server: TaskRef },
}

/// A benchmark client: connect, wait at the driver's start barrier if it
/// has one, then issue requests back to back.
struct PairClient {
    kind: Kind,
    stage: Stage,
    /// The driver holds its workers at a barrier ([`StartGate`]).
    gate: StartGate,
    /// Next tbench op, or next sysbench statement.
    op: usize,
}

impl PairClient {
    fn new(kind: Kind, op: usize, gate: StartGate) -> PairClient {
        PairClient { kind, stage: Stage::New, gate, op }
    }

    fn request(&self, server: TaskRef, q: &mut VecDeque<Action>) {
        match self.kind {
            Kind::Tbench(c) => {
                let op = TB_OPS[self.op];
                q.push_back(Action::Run(ns(c.side(op))));
                q.push_back(self.kind.send(server, op.req, OP_TAG | self.op as u32));
            }
            Kind::Sysbench(c) => {
                q.push_back(Action::Run(ns(c.client_ns)));
                q.push_back(self.kind.send(server, c.request_bytes, OP_TAG | self.op as u32));
            }
        }
        q.push_back(Action::Wait { all: true });
    }

    /// A reply arrived: count progress, move to the next op.
    fn answered(&mut self, q: &mut VecDeque<Action>) {
        match self.kind {
            Kind::Tbench(_) => {
                let counted = TB_OPS[self.op].counted;
                if counted > 0 {
                    q.push_back(Action::Progress(counted as u64));
                }
                self.op = (self.op + 1) % TB_OPS.len();
            }
            Kind::Sysbench(_) => {
                self.op += 1;
                if self.op == OLTP.len() {
                    self.op = 0;
                    q.push_back(Action::Progress(1));
                }
            }
        }
    }
}

impl Planner for PairClient {
    fn plan(&mut self, cx: &mut StepCx<'_>, q: &mut VecDeque<Action>) {
        let (server, released) = match self.stage {
            Stage::New => {
                self.stage = Stage::Starting { server: None, released: self.gate == StartGate::Open };
                let connect_ns = match self.kind {
                    Kind::Tbench(c) => c.connect_ns,
                    Kind::Sysbench(c) => c.connect_ns,
                };
                q.push_back(Action::Run(ns(connect_ns)));
                q.push_back(Action::Send { to: 0, sync: true, bytes: 64, tag: Tag::Connect as u32 });
                q.push_back(Action::Wait { all: false });
                return;
            }
            Stage::Running { server } => {
                if cx.received.iter().any(|m| m.tag == Tag::Reply as u32) {
                    self.answered(q);
                    self.request(server, q);
                } else {
                    q.push_back(Action::Wait { all: true });
                }
                return;
            }
            Stage::Starting { server, released } => (server, released),
        };
        // Starting: one message per wait (a semaphore or mutex wait), the
        // server's Ready or the driver's Go, in either order.
        let (mut server, mut released) = (server, released);
        for m in cx.received {
            if m.tag == Tag::Go as u32 {
                released = true;
            } else if m.tag == Tag::Ready as u32 {
                server = Some(m.from);
                if matches!(self.kind, Kind::Sysbench(_)) {
                    self.op = 0;
                }
                if let (StartGate::AfterStarted, Some(driver)) = (self.gate, cx.parent) {
                    q.push_back(Action::Send { to: driver, sync: false, bytes: 0, tag: Tag::Started as u32 });
                }
                if self.gate == StartGate::AfterForks {
                    // Connected: take and drop the start mutex, sleeping
                    // until the driver, or the thread before, drops it.
                    q.push_back(Action::Lock(START_MUTEX));
                    q.push_back(Action::Unlock(START_MUTEX));
                    released = true;
                }
            }
        }
        match server {
            Some(server) if released => {
                self.stage = Stage::Running { server };
                self.request(server, q);
            }
            _ => {
                self.stage = Stage::Starting { server, released };
                q.push_back(Action::Wait { all: false });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::{Msg, Program};
    use rand::SeedableRng;

    /// The pair workloads at their shipped costs.
    const TBENCH: Kind = Kind::Tbench(TbenchCosts::SHIPPED);
    const SYSBENCH: Kind = Kind::Sysbench(SysbenchCosts::SHIPPED);

    /// Steps `p` once with `received` delivered.
    fn step(p: &mut dyn Program, received: &[Msg]) -> Action {
        step_as(p, received, None, None)
    }

    /// The same, for a task whose parent is `parent`, right after it forked `forked`.
    fn step_as(p: &mut dyn Program, received: &[Msg], parent: Option<TaskRef>, forked: Option<TaskRef>) -> Action {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(1);
        let mut cx = StepCx { now: 0, me: 9, rng: &mut rng, received, blocked: true, forked, parent };
        p.step(&mut cx)
    }

    fn msg(from: TaskRef, bytes: u32, tag: u32) -> Msg {
        Msg { from, cpu: 0, bytes, tag, stream: None }
    }

    /// A request or reply as `kind` sends it: (receiver, bytes, tag). tbench
    /// writes on loopback TCP, sysbench on a unix socket (sync); the other
    /// kind's send is not one.
    fn on_the_wire(kind: Kind, a: &Action) -> Option<(TaskRef, u32, u32)> {
        match (kind, a) {
            (Kind::Tbench(_), &Action::TcpSend { to, bytes, tag }) => Some((to, bytes, tag)),
            (Kind::Sysbench(_), &Action::Send { to, sync: true, bytes, tag }) => Some((to, bytes, tag)),
            _ => None,
        }
    }

    /// What `n` request/reply exchanges between a connected client (task 9)
    /// and its server (task 5) cost: (client ns, server ns, progress units,
    /// request bytes, each reply's bytes).
    fn exchange(kind: Kind, first_op: usize, n: usize) -> (u64, u64, u64, u64, Vec<u32>) {
        let started = Stage::Starting { server: None, released: true };
        let connected = PairClient { stage: started, ..PairClient::new(kind, first_op, StartGate::Open) };
        let mut client = Queued::new(connected);
        let mut server = Queued::new(Server { kind, client: 9, started: true });
        let (mut c_ns, mut s_ns, mut units, mut req, mut rep) = (0, 0, 0, 0, Vec::new());
        let mut inbox = vec![msg(5, 64, Tag::Ready as u32)];
        for _ in 0..n {
            // The client: (progress,) work, the request, then a wait.
            let request = loop {
                match step(&mut client, &std::mem::take(&mut inbox)) {
                    Action::Run(ns) => c_ns += ns,
                    Action::Progress(u) => units += u,
                    a => match on_the_wire(kind, &a) {
                        Some((5, bytes, tag)) => break msg(9, bytes, tag),
                        _ => panic!("client: {a:?}"),
                    },
                }
            };
            assert!(matches!(step(&mut client, &[]), Action::Wait { all: true }));
            req += request.bytes as u64;
            // The server answers it and waits again.
            let mut got = vec![request];
            let reply = loop {
                match step(&mut server, &std::mem::take(&mut got)) {
                    Action::Run(ns) => s_ns += ns,
                    a => match on_the_wire(kind, &a) {
                        Some((9, bytes, tag)) => break msg(5, bytes, tag),
                        _ => panic!("server: {a:?}"),
                    },
                }
            };
            assert!(matches!(step(&mut server, &[]), Action::Wait { all: true }));
            rep.push(reply.bytes);
            inbox = vec![reply];
        }
        // The last reply's progress.
        if let Action::Progress(u) = step(&mut client, &inbox) {
            units += u;
        }
        (c_ns, s_ns, units, req, rep)
    }

    /// One cycle of the 10-op tbench mix, each op answered with its own
    /// reply (NTCreateX 87 bytes, QPathInfo 71, ReadX 4 KB twice, ...): 2,749
    /// request and 10,154 reply bytes; each side spends 5 µs an op plus 0.4 ns a byte copied through
    /// loopback, 10 x 5,000 + 0.4 x 12,903 = 55,161 ns (rounded per op, to
    /// the same); the counted payload is the ReadX and WriteX data, 4,096 x
    /// 2 + 2,048 + 1,024 = 11,264 bytes (~1.1 KB an op, hosts-and-costs.md
    /// §3.3).
    #[test]
    fn a_tbench_cycle_costs_and_counts_its_op_mix() {
        let (c, s, units, req, rep) = exchange(TBENCH, 0, 10);
        assert_eq!(rep, [87, 71, 4_155, 4_155, 55, 71, 1_083, 39, 399, 39]);
        assert_eq!((req, rep.iter().sum::<u32>()), (2_749, 10_154));
        assert_eq!((c, s), (55_161, 55_161));
        assert_eq!(units, 11_264);
        // Starting elsewhere in the mix rotates the order, not the cycle.
        let (c7, s7, units7, req7, rep7) = exchange(TBENCH, 7, 10);
        assert_eq!((c7, s7, units7, req7), (c, s, units, req));
        let mut rotated = rep;
        rotated.rotate_left(7);
        assert_eq!(rep7, rotated);
    }

    /// One sysbench OLTP read-only transaction: 16 statements of 96 bytes;
    /// the server spends 10 + 10 x 25 + 60 + 60 + 80 + 80 + 10 = 550 µs and
    /// returns 11 + 10 x 150 + 12,000 + 60 + 12,000 + 12,000 + 11 = 37,582
    /// bytes; sysbench 16 x 5 µs; one transaction counted at COMMIT.
    #[test]
    fn a_sysbench_transaction_is_sixteen_statements() {
        let (c, s, units, req, rep) = exchange(SYSBENCH, 0, 16);
        assert_eq!((c, s, units, req, rep.iter().sum::<u32>()), (80_000, 550_000, 1, 16 * 96, 37_582));
        assert_eq!(rep[11], 12_000, "the simple range returns its 100 rows");
        // 15 statements are not a transaction yet; a connect starts at BEGIN.
        assert_eq!(exchange(SYSBENCH, 5, 15).2, 0);
    }

    /// A new server's first exchange goes the way its replies will: for
    /// tbench, the 8 bytes of dbench's `do_packets(child, 8, 8)` over
    /// loopback TCP (a wakeup from the receive softirq, not sync), where a
    /// sync unix-socket send would let wake_affine pull the fresh client
    /// onto its server's CPU; for sysbench, the MySQL greeting over the
    /// unix socket, sync.
    #[test]
    fn a_servers_first_exchange_is_its_connections_kind() {
        let first = |kind: Kind| step(&mut Queued::new(Server { kind, client: 9, started: false }), &[]);
        assert!(matches!(first(TBENCH), Action::TcpSend { to: 9, bytes: 8, tag } if tag == Tag::Ready as u32));
        assert!(
            matches!(first(SYSBENCH), Action::Send { to: 9, sync: true, bytes: 64, tag } if tag == Tag::Ready as u32)
        );
    }

    /// The launcher staggers the tbench clients through the op mix: client
    /// i starts at op 3i mod 10, so clients 0-4 open with ops 0, 3, 6, 9, 2.
    #[test]
    fn tbench_clients_start_at_staggered_ops() {
        let start = StartCpus { server: 0, client: 1 };
        let mut tasks = tbench(5, &WorkloadOpts::default(), TbenchCosts::default(), start);
        assert_eq!((tasks[0].name.as_str(), tasks[1].name.as_str()), ("tbench_srv", "tbench"));
        let launcher = &mut tasks[1].program;
        let mut first_ops = Vec::new();
        for _ in 0..5 {
            assert!(matches!(step(launcher.as_mut(), &[]), Action::Run(_)));
            let Action::Fork(spec) = step(launcher.as_mut(), &[]) else { panic!("no fork") };
            let mut worker = spec.program;
            while !matches!(step(worker.as_mut(), &[]), Action::Wait { .. }) {}
            assert!(matches!(step(worker.as_mut(), &[msg(5, 64, Tag::Ready as u32)]), Action::Wait { all: false }));
            assert!(matches!(step(worker.as_mut(), &[msg(1, 0, Tag::Go as u32)]), Action::Run(_)));
            let Action::TcpSend { tag, .. } = step(worker.as_mut(), &[]) else { panic!("no request") };
            assert_eq!(tag & OP_TAG, OP_TAG);
            first_ops.push(tag & !OP_TAG);
        }
        assert_eq!(first_ops, [0, 3, 6, 9, 2]);
    }

    /// Plays a driver (task 1) that forks `n` workers as tasks 10, 11, ...;
    /// each time it waits after the last fork, the next batch of workers
    /// reports `Started`. Returns the workers it sends `Go` to, how often
    /// it waited first, and in how many calls it sent them.
    fn release(kind: Kind, n: u32, batches: &[usize]) -> (Vec<TaskRef>, usize, usize) {
        let start = StartCpus { server: 0, client: 1 };
        let mut tasks = pair_tasks(kind, n, &WorkloadOpts::default(), start);
        let driver = tasks[1].program.as_mut();
        let mut forked = None;
        for child in 10..10 + n as TaskRef {
            assert!(matches!(step_as(driver, &[], None, forked), Action::Run(_)));
            assert!(matches!(step_as(driver, &[], None, None), Action::Fork(_)));
            forked = Some(child);
        }
        let (mut waits, mut reported) = (0, 0);
        let mut inbox: Vec<Msg> = Vec::new();
        let (mut go, mut calls) = (Vec::new(), 0);
        loop {
            match step_as(driver, &std::mem::take(&mut inbox), None, forked.take()) {
                Action::Wait { all: true } => {
                    let batch = batches[waits];
                    inbox =
                        (reported..reported + batch).map(|i| msg(10 + i as TaskRef, 0, Tag::Started as u32)).collect();
                    reported += batch;
                    waits += 1;
                }
                Action::SendAll { to, tag, sync: false, .. } if tag == Tag::Go as u32 => {
                    go.extend(to.iter());
                    calls += 1;
                }
                Action::Exit => return (go, waits, calls),
                a => panic!("driver: {a:?}"),
            }
        }
    }

    /// sysbench lifts its barrier as soon as its threads exist (sysbench
    /// 0.4 run_test: lock thread_start_mutex, create every thread, then
    /// unlock it; each thread takes and drops it in turn, so the one
    /// unlock starts a chain of wakeups); tbench (dbench's create_procs)
    /// first waits until every child is connected: with 3 of 4 reported it
    /// waits again, with all 4 it goes, and dbench's one semop wakes every
    /// child.
    #[test]
    fn the_drivers_release_their_workers_at_their_barrier() {
        let start = StartCpus { server: 0, client: 1 };
        let mut tasks = pair_tasks(SYSBENCH, 3, &WorkloadOpts::default(), start);
        let driver = tasks[1].program.as_mut();
        let mut seen = Vec::new();
        let mut forked = None;
        for child in 10..20 {
            let a = step_as(driver, &[], None, forked.take());
            seen.push(match a {
                Action::Lock(m) => format!("lock {m}"),
                Action::Unlock(m) => format!("unlock {m}"),
                Action::Run(_) => "run".into(),
                Action::Fork(_) => {
                    forked = Some(child);
                    "fork".into()
                }
                Action::Exit => break,
                a => panic!("driver: {a:?}"),
            });
        }
        let (lock, unlock) = (format!("lock {START_MUTEX}"), format!("unlock {START_MUTEX}"));
        assert_eq!(seen, [lock.as_str(), "run", "fork", "run", "fork", "run", "fork", unlock.as_str()]);
        assert_eq!(release(TBENCH, 4, &[4]), (vec![10, 11, 12, 13], 1, 1));
        assert_eq!(release(TBENCH, 4, &[3, 0, 1]), (vec![10, 11, 12, 13], 3, 1));
    }

    /// A tbench worker connects, reports to its driver once connected, and
    /// sends its first request only when both its server is ready and the
    /// barrier is lifted, in either order. A sysbench worker, once its
    /// server has greeted it, takes and drops the start mutex (sleeping
    /// there until the driver has dropped it), then sends its first.
    #[test]
    fn a_worker_waits_for_its_server_and_the_barrier_in_either_order() {
        let ready = msg(5, 64, Tag::Ready as u32);
        let go = msg(1, 0, Tag::Go as u32);
        let mut w = Queued::new(PairClient::new(SYSBENCH, 0, StartGate::AfterForks));
        assert!(matches!(step_as(&mut w, &[], Some(1), None), Action::Run(20_000)));
        assert!(matches!(step_as(&mut w, &[], Some(1), None), Action::Send { to: 0, .. }));
        assert!(matches!(step_as(&mut w, &[], Some(1), None), Action::Wait { all: false }));
        assert!(matches!(step_as(&mut w, &[ready], Some(1), None), Action::Lock(START_MUTEX)));
        assert!(matches!(step_as(&mut w, &[], Some(1), None), Action::Unlock(START_MUTEX)));
        assert!(matches!(step_as(&mut w, &[], Some(1), None), Action::Run(5_000)));
        let request = step_as(&mut w, &[], Some(1), None);
        assert!(matches!(on_the_wire(SYSBENCH, &request), Some((5, _, OP_TAG))), "{request:?}");
        for order in [[ready, go], [go, ready]] {
            let mut w = Queued::new(PairClient::new(TBENCH, 0, StartGate::AfterStarted));
            let mut sent = Vec::new();
            let mut inbox = Vec::new();
            let mut order = order.into_iter();
            // Connect (20 µs, then the connect), then take one message
            // per wait until the first request's work starts.
            let first_work = loop {
                match step_as(&mut w, &std::mem::take(&mut inbox), Some(1), None) {
                    Action::Run(ns) if sent.iter().any(|&(to, _)| to == 0) => break ns,
                    Action::Run(ns) => assert_eq!(ns, 20_000),
                    Action::Send { to, tag, .. } => sent.push((to, tag)),
                    Action::Wait { all: false } => inbox = vec![order.next().expect("waits for more")],
                    a => panic!("{a:?}"),
                }
            };
            assert!(order.next().is_none(), "started before both messages");
            let request = step_as(&mut w, &[], Some(1), None);
            let Some((5, _, tag)) = on_the_wire(TBENCH, &request) else { panic!("no request: {request:?}") };
            assert_eq!(tag, OP_TAG);
            // tbench's first op costs 5 µs + 0.4 ns x (114 + 87) bytes.
            assert_eq!(first_work, 5_080);
            assert_eq!(sent, [(0, Tag::Connect as u32), (1, Tag::Started as u32)]);
        }
    }
}
