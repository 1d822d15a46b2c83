//! `pgbench -S` against PostgreSQL 8.3 over unix sockets
//! (hosts-and-costs.md §3): one client process serving N connections with
//! a select() loop, the postmaster forking one backend per connection.
//!
//! Who wakes whom: the client's query write wakes the backend blocked in
//! recv; the backend's reply wakes the client blocked in select(). Both are
//! `sock_def_readable` → `wake_up_interruptible_sync`: sync wakeups. Both
//! are AF_UNIX stream writes ([`Action::Write`]), so with the engine's
//! `write_space_wakeups` on, the reader taking one also wakes its writer
//! if it sleeps (the client in select(), the backend in recv); connection
//! set-up and the final Terminate stay plain messages.
//!
//! The client loop, as Greg Smith describes it and pgbench.c (8.3) codes
//! it: select() on every open connection; for each ready one read the reply
//! and send that connection's next query; block in select() again. Each
//! select() polls all open sockets (O(N)); one that slept polls them again
//! when woken.
//!
//! Connection set-up is modelled simply: the client connects one
//! connection at a time (PQsetdbLogin is synchronous), the postmaster forks
//! a backend (placed by the kernel's fork balancing), the backend
//! initialises and reports ready. Its time counts in TPS, which pgbench
//! reports "including connections establishing".

use super::{CostField, Listener, Side, StartCpus, Tag, WorkloadOpts, ns};
use crate::dist::Dist;
use crate::program::{Action, ForkSpec, Planner, Program, Queued, StepCx, Stream, TaskRef, TaskSpec};
use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;
use std::sync::Arc;

/// Every live backend, for GetSnapshotData's scan (shared by the
/// postmaster, which adds each child, and the backends).
type Registry = Rc<RefCell<Arc<[TaskRef]>>>;

/// CPU work per step at the 2.4 GHz Core 2 baseline, and data sizes.
/// Values are \[E\] estimates anchored on hosts-and-costs.md §3.2/§5.1 (see
/// docs/CALIBRATION.md): the client ≈ 22 µs per transaction (§5.1's
/// "client µs/txn (base)"; with its cross-CPU costs it then saturates near
/// the best published 36.5K TPS, as §3.2 derives) and the backend ≈ 63 µs,
/// so that with two context switches one client co-located with its
/// backend takes the 90.6 µs of the published 11,043 TPS \[P\].
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct PgbenchCosts {
    /// Reading a reply: recv, PQconsumeInput, PQgetResult, PQclear.
    pub client_reply_ns: f64,
    /// Building and sending the next query: getrand, putVariable,
    /// assignVariables, PQsendQuery (the write that wakes the backend).
    pub client_query_ns: f64,
    /// select() entry, fd_set build and exit.
    pub select_base_ns: f64,
    /// select()'s poll of one open socket (§3.2: 0.1-0.2 µs × N).
    pub select_per_conn_ns: f64,
    /// A select() that finds nothing ready sleeps: it has registered on
    /// every socket's wait queue (poll_wait: a poll_table_entry and
    /// add_wait_queue under the queue's lock), and after the wakeup it
    /// polls every socket again and removes every entry (poll_freewait).
    /// This is the registration plus removal per socket [E, ~0.1 µs].
    pub poll_wait_per_conn_ns: f64,
    /// Cache lines of each other backend's PGPROC that GetSnapshotData
    /// reads per transaction (PostgreSQL 8.3 procarray.c scans every
    /// backend's xid/xmin, which each backend rewrites every transaction:
    /// a dirty line on the CPU that backend last ran on).
    pub snapshot_lines: f64,
    /// A backend's whole transaction: recv, parse, plan, execute, send.
    pub backend_ns: f64,
    /// Coefficient of variation of the backend's time (btree and heap
    /// pages hit different cache levels each time).
    pub backend_cv: f64,
    /// Query and reply sizes on the socket, bytes.
    pub query_bytes: u32,
    /// Reply: RowDescription, DataRow, CommandComplete, ReadyForQuery.
    pub reply_bytes: u32,
    /// The client's share of a connection set-up.
    pub connect_ns: f64,
    /// The postmaster's fork of a ~40 MB-RSS process.
    pub fork_ns: f64,
    /// Backend start-up (InitPostgres with warm catalogs, authentication).
    pub backend_start_ns: f64,
    /// Private working sets, KB: the client's per-connection state, a
    /// backend's memory contexts and caches, the postmaster.
    pub client_ws_kb: u32,
    /// Extra client working set per connection, KB (PGconn buffers).
    pub client_ws_per_conn_kb: u32,
    /// A backend's private hot set, KB.
    pub backend_ws_kb: u32,
    /// 1: after select() returns, serve the ready connections in
    /// connection order, as pgbench's loop does (`for (i = 0; i <
    /// nclients; i++) if (FD_ISSET(...)) doCustom(...)`, contrib pgbench.c
    /// of 8.2/8.3). 0 (the default): in the order the replies came, which
    /// is what the shipped calibration was fitted with; docs/CALIBRATION.md
    /// §5 ("The order pgbench serves its connections") measures both.
    pub serve_in_connection_order: u32,
}

impl Default for PgbenchCosts {
    fn default() -> Self {
        PgbenchCosts {
            client_reply_ns: 9_000.0,
            client_query_ns: 11_500.0,
            select_base_ns: 1_500.0,
            select_per_conn_ns: 150.0,
            poll_wait_per_conn_ns: 100.0,
            snapshot_lines: 1.0,
            backend_ns: 63_000.0,
            backend_cv: 0.1,
            query_bytes: 120,
            reply_bytes: 250,
            connect_ns: 60_000.0,
            fork_ns: 150_000.0,
            backend_start_ns: 300_000.0,
            client_ws_kb: 32,
            client_ws_per_conn_kb: 4,
            backend_ws_kb: 128,
            serve_in_connection_order: 0,
        }
    }
}

/// Every field of [`PgbenchCosts`], as `--cost pgbench.FIELD` names it.
pub const COST_FIELDS: [CostField<PgbenchCosts>; 17] = [
    CostField::ns(
        "client_reply_ns",
        "[E] §5.1's 22 µs client, split 9 : 11.5; ≤ 27 µs at the 861 peak [D]",
        |c, x| c.client_reply_ns = x,
    ),
    CostField::ns("client_query_ns", "[E] with client_reply_ns, §5.1's 22 µs client (CALIBRATION §3)", |c, x| {
        c.client_query_ns = x
    }),
    CostField::ns("select_base_ns", "[E] select() entry, fd_set build and exit", |c, x| c.select_base_ns = x),
    CostField::ns("select_per_conn_ns", "[E] §3.2, §5.2: 0.1-0.2 µs per socket per select()", |c, x| {
        c.select_per_conn_ns = x
    }),
    CostField::ns(
        "poll_wait_per_conn_ns",
        "[C] fs/select.c poll_wait and poll_freewait per socket, ~0.1 µs [E]",
        |c, x| c.poll_wait_per_conn_ns = x,
    ),
    CostField::number(
        "snapshot_lines",
        "[C] PostgreSQL 8.3 GetSnapshotData reads every PGPROC's xid/xmin",
        |c, x| c.snapshot_lines = x,
        crate::costs::MAX_LINES,
    ),
    CostField::ns(
        "backend_ns",
        "[D] anchor 1: 90.6 µs a transaction (11,043 TPS) less client, switches, wakeups",
        |c, x| c.backend_ns = x,
    ),
    CostField::number(
        "backend_cv",
        "[E] btree and heap pages hit different cache levels each time",
        |c, x| c.backend_cv = x,
        1.0,
    ),
    CostField::bytes("query_bytes", "[E] the -S SELECT as one Query message", |c, x| c.query_bytes = x as u32),
    CostField::bytes("reply_bytes", "[E] RowDescription, DataRow, CommandComplete, ReadyForQuery", |c, x| {
        c.reply_bytes = x as u32
    }),
    CostField::ns("connect_ns", "[E] the client's share of a connection set-up", |c, x| c.connect_ns = x),
    CostField::ns("fork_ns", "[E] the postmaster's fork of a ~40 MB-RSS process", |c, x| c.fork_ns = x),
    CostField::ns(
        "backend_start_ns",
        "[E] InitPostgres with warm catalogs (CALIBRATION §5: 1-2 ms is likelier)",
        |c, x| c.backend_start_ns = x,
    ),
    CostField::kb("client_ws_kb", "[E] pgbench's own hot state", |c, x| c.client_ws_kb = x as u32),
    // Per connection: 60 connections of 1 MB is 60 MB.
    CostField {
        name: "client_ws_per_conn_kb",
        source: "[E] a PGconn's buffers",
        set: |c, x| c.client_ws_per_conn_kb = x as u32,
        max: 1_024.0,
        whole: true,
    },
    CostField::kb("backend_ws_kb", "[E] §5.1: 150-250 KB; 128 fits 895's decline past 30 clients [D]", |c, x| {
        c.backend_ws_kb = x as u32
    }),
    // A switch rather than a price: 0 or 1.
    CostField {
        name: "serve_in_connection_order",
        source: "[C] pgbench.c serves ready connections by index (1); 0 = as replies came, the fitted default (CALIBRATION §5)",
        set: |c, x| c.serve_in_connection_order = x as u32,
        max: 1.0,
        whole: true,
    },
];

/// Builds the initial tasks: the postmaster (task 0) and pgbench (task 1),
/// on the CPUs `start` drew.
pub fn tasks(clients: u32, opts: &WorkloadOpts, c: PgbenchCosts, start: StartCpus) -> (Vec<TaskSpec>, Vec<TaskRef>) {
    let clients = clients.max(1);
    // selecttest.sh's split, -t = total / C; the command line refuses a
    // total below the client count, and a library caller's gets one each.
    let per_client = opts.transactions.map(|t| (t / clients as u64).max(1));
    let client_ws_kb = c.client_ws_kb + c.client_ws_per_conn_kb * clients;
    let tasks = vec![
        start.task(Side::Server, "postmaster", opts, 64, Postmaster::new(c)),
        start.task(Side::Client, "pgbench", opts, client_ws_kb, Queued::new(Client::new(c, clients, per_client))),
    ];
    (tasks, vec![1])
}

/// The postmaster: forks a backend per connection request, and adds each
/// to the [`Registry`] as soon as it exists.
struct Postmaster {
    registry: Registry,
    listener: Box<dyn Program>,
}

impl Postmaster {
    fn new(c: PgbenchCosts) -> Postmaster {
        let registry: Registry = Rc::new(RefCell::new(Arc::from(Vec::new())));
        let shared = registry.clone();
        let listener = Listener::new(c.fork_ns, move |client| ForkSpec {
            name: "postgres".into(),
            program: Queued::boxed(Backend { c, client, started: false, registry: shared.clone() }),
            params: None,
            ws_kb: c.backend_ws_kb,
        });
        Postmaster { registry, listener: Queued::boxed(listener) }
    }
}

impl Program for Postmaster {
    fn step(&mut self, cx: &mut StepCx<'_>) -> Action {
        if let Some(child) = cx.forked {
            let mut all: Vec<TaskRef> = self.registry.borrow().to_vec();
            all.push(child);
            *self.registry.borrow_mut() = Arc::from(all);
        }
        self.listener.step(cx)
    }
}

/// A backend: start up, report ready, then serve queries until terminated.
struct Backend {
    c: PgbenchCosts,
    client: TaskRef,
    started: bool,
    registry: Registry,
}

impl Planner for Backend {
    fn plan(&mut self, cx: &mut StepCx<'_>, q: &mut VecDeque<Action>) {
        let c = self.c;
        if !self.started {
            self.started = true;
            q.push_back(Action::Run(ns(c.backend_start_ns)));
            q.push_back(Action::Send { to: self.client, sync: true, bytes: 300, tag: Tag::Ready as u32 });
        }
        for m in cx.received {
            if m.tag == Tag::Terminate as u32 {
                // proc_exit: release resources, then exit.
                q.clear();
                q.push_back(Action::Run(ns(20_000.0)));
                q.push_back(Action::Exit);
                return;
            }
            let peers = self.registry.borrow().clone();
            q.push_back(Action::Touch { peers, lines: c.snapshot_lines });
            q.push_back(Action::RunDist(Dist::normal_cv(c.backend_ns, c.backend_cv)));
            q.push_back(Action::Write {
                to: self.client,
                stream: Stream::Pair,
                bytes: c.reply_bytes,
                tag: Tag::Reply as u32,
            });
        }
        q.push_back(Action::Wait { all: false });
    }
}

/// pgbench itself.
struct Client {
    c: PgbenchCosts,
    clients: u32,
    /// `-t` per connection (None: run until the duration ends).
    per_client: Option<u64>,
    phase: Phase,
    /// Backend task of each connection, in connection order.
    conns: Vec<TaskRef>,
    /// Connection index by backend task.
    index: BTreeMap<TaskRef, usize>,
    done: Vec<u64>,
    /// The open connections, as select() polls them.
    fds: Arc<[TaskRef]>,
    /// The replies one pass serves, (connection, backend); kept to reuse
    /// its allocation.
    ready: Vec<(usize, TaskRef)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Connecting,
    Running,
}

impl Client {
    fn new(c: PgbenchCosts, clients: u32, per_client: Option<u64>) -> Client {
        Client {
            c,
            clients,
            per_client,
            phase: Phase::Connecting,
            conns: Vec::new(),
            index: BTreeMap::new(),
            done: Vec::new(),
            fds: Arc::from(Vec::new()),
            ready: Vec::new(),
        }
    }

    /// select() on every open connection: a pass polling each in
    /// descriptor order (connection order: libpq's sockets take the lowest
    /// free descriptors as they are opened), then block until one is
    /// ready; after a wakeup it polls them all again, then takes itself
    /// off every socket's wait queue.
    fn select(&self) -> Action {
        // select_base_ns is entry and fd_set copy-in, then copy-out and
        // exit: half each [E] (three get_fd_set before, three set_fd_set
        // after, core_sys_select).
        let half = ns(self.c.select_base_ns / 2.0);
        let n = self.fds.len() as f64;
        let repoll_ns = ns(self.c.select_per_conn_ns * n);
        // A call that slept: the repoll, then registering and removing
        // the entries (poll_wait, poll_freewait) and select()'s base once
        // more, priced as one sum.
        let slept = ns(self.c.select_base_ns + n * (self.c.select_per_conn_ns + self.c.poll_wait_per_conn_ns));
        Action::Select {
            entry_ns: half,
            poll_ns: ns(self.c.select_per_conn_ns),
            exit_ns: ns(self.c.select_base_ns).saturating_sub(half),
            repoll_ns,
            slept_ns: slept.saturating_sub(repoll_ns),
            fds: self.fds.clone(),
        }
    }

    /// The open connections' backends, in connection order.
    fn open_fds(&self) -> Arc<[TaskRef]> {
        let closed = |i: usize| self.per_client.is_some_and(|n| self.done[i] >= n);
        self.conns.iter().enumerate().filter(|&(i, _)| !closed(i)).map(|(_, &b)| b).collect()
    }

    fn query(&self, to: TaskRef, q: &mut VecDeque<Action>) {
        q.push_back(Action::Run(ns(self.c.client_query_ns)));
        q.push_back(Action::Write { to, stream: Stream::Pair, bytes: self.c.query_bytes, tag: Tag::Query as u32 });
    }

    /// The next connection request, or the priming of every connection.
    fn connect_step(&mut self, cx: &StepCx<'_>, q: &mut VecDeque<Action>) {
        if let Some(m) = cx.received.iter().find(|m| m.tag == Tag::Ready as u32) {
            self.index.insert(m.from, self.conns.len());
            self.conns.push(m.from);
            self.done.push(0);
        }
        if (self.conns.len() as u32) < self.clients {
            q.push_back(Action::Run(ns(self.c.connect_ns)));
            // The postmaster is task 0.
            q.push_back(Action::Send { to: 0, sync: true, bytes: 100, tag: Tag::Connect as u32 });
            q.push_back(Action::Wait { all: false });
            return;
        }
        self.phase = Phase::Running;
        self.fds = self.open_fds();
        for &b in &self.conns {
            self.query(b, q);
        }
        q.push_back(self.select());
    }

    /// Serve every ready connection, then select() again: read the reply,
    /// send the next query. pgbench walks its connections in index order
    /// after select() returns (`for (i = 0; i < nclients; i++) if
    /// (FD_ISSET(...)) doCustom(...)`, contrib pgbench.c of 8.2/8.3), which
    /// [`PgbenchCosts::serve_in_connection_order`] selects; by default the
    /// replies are served in the order they came (see that field).
    fn serve(&mut self, cx: &StepCx<'_>, q: &mut VecDeque<Action>) {
        let mut closed = false;
        let mut ready = std::mem::take(&mut self.ready);
        ready.clear();
        let replies = cx.received.iter().filter(|m| m.tag == Tag::Reply as u32);
        ready.extend(replies.filter_map(|m| self.index.get(&m.from).map(|&i| (i, m.from))));
        if self.c.serve_in_connection_order != 0 {
            ready.sort_unstable();
        }
        for &(i, from) in &ready {
            q.push_back(Action::Run(ns(self.c.client_reply_ns)));
            q.push_back(Action::Progress(1));
            self.done[i] += 1;
            if self.per_client.is_none_or(|n| self.done[i] < n) {
                self.query(from, q);
            } else {
                // PQfinish: send Terminate, stop selecting on it.
                q.push_back(Action::Send { to: from, sync: true, bytes: 5, tag: Tag::Terminate as u32 });
                closed = true;
            }
        }
        self.ready = ready;
        if closed {
            self.fds = self.open_fds();
        }
        if self.fds.is_empty() {
            q.push_back(Action::Exit);
            return;
        }
        q.push_back(self.select());
    }
}

impl Planner for Client {
    fn plan(&mut self, cx: &mut StepCx<'_>, q: &mut VecDeque<Action>) {
        match self.phase {
            Phase::Connecting => self.connect_step(cx, q),
            Phase::Running => self.serve(cx, q),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::Msg;
    use rand::SeedableRng;

    /// What the client queues when it gets `msgs` (from backends 10, 11,
    /// 12 ...), having blocked in select() or not.
    fn plan(client: &mut Client, msgs: &[(TaskRef, Tag)], blocked: bool) -> Vec<String> {
        let received: Vec<Msg> = msgs
            .iter()
            .map(|&(from, tag)| Msg { from, cpu: 0, bytes: 0, tag: tag as u32, stream: Some(Stream::Pair) })
            .collect();
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(1);
        let mut cx = StepCx { now: 0, me: 1, rng: &mut rng, received: &received, blocked, forked: None, parent: None };
        let mut q = VecDeque::new();
        client.plan(&mut cx, &mut q);
        q.iter().map(|a| format!("{a:?}")).collect()
    }

    fn dbg(actions: &[Action]) -> Vec<String> {
        actions.iter().map(|a| format!("{a:?}")).collect()
    }

    /// A select() over `fds` (backends, in connection order): 0.75 µs in,
    /// 0.15 µs a socket, 0.75 µs out; after sleeping, a re-poll of
    /// 0.15 µs a socket, then the rest of 1.5 µs + (0.15 + 0.10) µs a
    /// socket.
    fn sel(fds: &[TaskRef]) -> Action {
        let n = fds.len() as u64;
        let repoll_ns = 150 * n;
        let slept_ns = 1_500 + 250 * n - repoll_ns;
        Action::Select { entry_ns: 750, poll_ns: 150, exit_ns: 750, repoll_ns, slept_ns, fds: Arc::from(fds) }
    }

    /// The client's per-transaction costs with 3 connections of 2
    /// transactions each, from the default costs: a select() pass costs
    /// 1.5 µs, half in and half out, + 0.15 µs per open connection
    /// (1,950 ns at 3) and polls the open connections in connection
    /// order; a call that slept pays a re-poll of 0.15 µs per connection
    /// (450 ns) and, with it, 1.5 + 3 x (0.15 + 0.10) = 2.25 µs in all
    /// (the engine charges both, so the plan after a sleep is the plan
    /// without one). Each reply costs 9 µs to read and 11.5 µs to send
    /// the next query; a connection that has done its 2 is closed
    /// (Terminate) and leaves the select set.
    #[test]
    fn the_client_serves_every_reply_and_pays_select_by_connection() {
        let c = PgbenchCosts::default();
        let mut client = Client::new(c, 3, Some(2));
        let ready = |b| [(b, Tag::Ready)];
        // Connecting: one request at a time, each answered by a Ready.
        let connect = dbg(&[
            Action::Run(60_000),
            Action::Send { to: 0, sync: true, bytes: 100, tag: Tag::Connect as u32 },
            Action::Wait { all: false },
        ]);
        assert_eq!(plan(&mut client, &[], false), connect);
        assert_eq!(plan(&mut client, &ready(10), true), connect);
        assert_eq!(plan(&mut client, &ready(11), true), connect);
        // The last Ready: prime every connection, then select().
        let query =
            |to| [Action::Run(11_500), Action::Write { to, stream: Stream::Pair, bytes: 120, tag: Tag::Query as u32 }];
        let mut want: Vec<Action> = [10, 11, 12].into_iter().flat_map(query).collect();
        want.push(sel(&[10, 11, 12]));
        assert_eq!(plan(&mut client, &ready(12), true), dbg(&want));
        // Two replies after sleeping in select(): each served in turn, in
        // the order they came (the default).
        let mut want = vec![];
        for b in [10, 12] {
            want.extend([Action::Run(9_000), Action::Progress(1)]);
            want.extend(query(b));
        }
        want.push(sel(&[10, 11, 12]));
        assert_eq!(plan(&mut client, &[(10, Tag::Reply), (12, Tag::Reply)], true), dbg(&want));
        // Backend 10's second reply, found without sleeping: its connection
        // closes, and select() now covers 2 (1,800 ns a pass; 300 and
        // 1,700 ns after a sleep).
        let want = [
            Action::Run(9_000),
            Action::Progress(1),
            Action::Send { to: 10, sync: true, bytes: 5, tag: Tag::Terminate as u32 },
            sel(&[11, 12]),
        ];
        assert_eq!(plan(&mut client, &[(10, Tag::Reply)], false), dbg(&want));
    }

    /// With `serve_in_connection_order`, replies from backends 12 and 10
    /// (12's first) are served 10 then 12, as pgbench's loop over its
    /// connections after select() serves them; by default 12 then 10.
    #[test]
    fn connection_order_serves_the_ready_connections_by_index() {
        for (by_index, order) in [(1, [10, 12]), (0, [12, 10])] {
            let c = PgbenchCosts { serve_in_connection_order: by_index, ..PgbenchCosts::default() };
            let mut client = Client::new(c, 3, None);
            for b in [10, 11] {
                plan(&mut client, &[(b, Tag::Ready)], true);
            }
            plan(&mut client, &[(12, Tag::Ready)], true);
            let mut want = vec![];
            for b in order {
                want.extend([Action::Run(9_000), Action::Progress(1)]);
                want.extend([
                    Action::Run(11_500),
                    Action::Write { to: b, stream: Stream::Pair, bytes: 120, tag: Tag::Query as u32 },
                ]);
            }
            want.push(sel(&[10, 11, 12]));
            let got = plan(&mut client, &[(12, Tag::Reply), (10, Tag::Reply)], true);
            assert_eq!(got, dbg(&want), "serve_in_connection_order = {by_index}");
        }
    }

    /// pgbench's working set grows with its connections: 32 KB + 4 KB per
    /// connection (its PGconn buffers).
    #[test]
    fn the_client_task_carries_its_connections() {
        let opts = WorkloadOpts { transactions: Some(20_000), ..WorkloadOpts::default() };
        let start = StartCpus { server: 0, client: 1 };
        let (tasks, finish) = tasks(15, &opts, PgbenchCosts::default(), start);
        assert_eq!(finish, vec![1]);
        assert_eq!((tasks[0].name.as_str(), tasks[0].ws_kb), ("postmaster", 64));
        assert_eq!((tasks[1].name.as_str(), tasks[1].ws_kb), ("pgbench", 32 + 4 * 15));
    }
}
