//! The engine's unit tests: each pins one cost or rule of the model with a
//! hand-built program, its expected value worked out in its comment.

use super::*;
use crate::program::FnProgram;
use cfs_core::{CpuMask, KernelVersion, TaskParams};
use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;

fn setup<'a>(host: &'a Host, costs: &'a CostModel, limits: Limits) -> RunSetup<'a> {
    let v = KernelVersion::V2_6_26;
    RunSetup {
        host,
        costs,
        config: Config::new(v, host.nr_cpus()),
        domains: host.build_domains(v),
        seed: 3,
        limits,
        trace: true,
        instruments: Instruments::default(),
        sockets: Sockets::default(),
        changes: Vec::new(),
        irqs: Vec::new(),
        slow: Vec::new(),
        domain_build: Default::default(),
    }
}

/// A task that starts on `cpu` and may run anywhere.
fn free(name: &str, program: Box<dyn Program>, cpu: usize) -> TaskSpec {
    TaskSpec { name: name.into(), program, params: TaskParams::normal(), cpu, ws_kb: 0, side: None }
}

/// A task allowed only on `cpu`.
fn pinned(name: &str, program: Box<dyn Program>, cpu: usize, ws_kb: u32) -> TaskSpec {
    TaskSpec {
        name: name.into(),
        program,
        params: TaskParams::normal().allowed(CpuMask::single(cpu)),
        cpu,
        ws_kb,
        side: None,
    }
}

/// A program that plays `actions` in order, then exits.
fn script(actions: Vec<Action>) -> Box<dyn Program> {
    let mut it = actions.into_iter();
    Box::new(FnProgram(move |_cx: &mut StepCx<'_>| it.next().unwrap_or(Action::Exit)))
}

/// select() with no pass of its own and no sockets named: no poll window.
fn select(repoll_ns: u64) -> Action {
    Action::Select { entry_ns: 0, poll_ns: 0, exit_ns: 0, repoll_ns, slept_ns: 0, fds: Arc::from(Vec::new()) }
}

/// A ping task on `a` and a pong task on `b` for `rounds` round trips
/// of 10 µs each side; returns the run's end time.
fn ping_pong(a: usize, b: usize, rounds: u64) -> u64 {
    ping_pong_run(a, b, rounds).end_ns
}

/// [`ping_pong`]'s whole outcome.
fn ping_pong_run(a: usize, b: usize, rounds: u64) -> RunOutcome {
    let host = Host::preset("q6600").unwrap();
    let mut costs = CostModel::preset("q6600").unwrap();
    costs.jitter_cv = 0.0;
    let limits = Limits::new(None, 0, 10_000_000_000);
    let mut n = 0u64;
    let ping = FnProgram(move |cx: &mut StepCx<'_>| {
        n += 1;
        match n % 3 {
            1 if n / 3 >= rounds => Action::Exit,
            1 => Action::Run(10_000),
            2 => Action::Send { to: 1, sync: true, bytes: 64, tag: 0 },
            _ => {
                let _ = cx;
                Action::Wait { all: false }
            }
        }
    });
    let mut m = 0u64;
    let pong = FnProgram(move |_cx: &mut StepCx<'_>| {
        m += 1;
        match m % 3 {
            1 => Action::Wait { all: false },
            2 => Action::Run(10_000),
            _ => Action::Send { to: 0, sync: true, bytes: 64, tag: 0 },
        }
    });
    let inst = Instance {
        tasks: vec![pinned("ping", Box::new(ping), a, 16), pinned("pong", Box::new(pong), b, 16)],
        finish: vec![0],
        sync: SyncObjects::NONE,
    };
    let out = run(&setup(&host, &costs, limits), inst).unwrap();
    assert!(out.trace.is_some());
    out
}

#[test]
fn communication_costs_grow_with_distance() {
    let same_cpu = ping_pong(0, 0, 200);
    let same_die = ping_pong(0, 1, 200);
    let cross_die = ping_pong(0, 2, 200);
    // 200 round trips of 20 µs of work.
    assert!(same_cpu > 4_000_000, "{same_cpu}");
    assert!(same_cpu < same_die && same_die < cross_die, "{same_cpu} {same_die} {cross_die}");
}

/// The engine's price of one ping-pong round, worked out from the
/// Q6600 cost set (no jitter, so every figure is exact). The runs stay
/// inside the first 4 ms, before any tick, and the difference between
/// 60 and 20 rounds leaves out the start (first refills from DRAM).
///
/// Same CPU: each side runs 10 µs, sends (a system call, a local wakeup
/// and the two runqueue loads wake_affine reads), enters the wait (a
/// system call) and switches to the other (the direct switch cost; the
/// 16 KB working sets stay in the L2, so no refill).
///
/// Across CPUs the sender's own send and wait overlap the wakee's
/// start; the round trip is two hops of: the reschedule IPI's flight,
/// the idle wakee's C-state exit, its switch in, reading the message
/// (its 64 bytes plus the kernel's communication lines, dirty in the
/// sender's cache), its 10 µs, and the newly-idle balancing its CPU did
/// when it went idle (six runqueue reads: the die's two CPUs in the MC
/// domain, all four in the CPU domain), which the CPU owes as debt.
#[test]
fn round_trips_cost_what_the_model_charges() {
    let c = CostModel::preset("q6600").unwrap();
    let per_round = |a: usize, b: usize| (ping_pong(a, b, 60) - ping_pong(a, b, 20)) / 40;
    let side = 10_000.0
        + c.syscall_ns
        + c.wake_cost(Reach::SameCpu, false)
        + 2.0 * c.scan_ns_per_cpu
        + c.syscall_ns
        + c.ctx_switch_ns;
    // 2 x (10,000 + 100 + 500 + 200 + 100 + 1,800) = 25,400 ns.
    assert_eq!(per_round(0, 0), round_u64(2.0 * side));
    for (b, reach) in [(1, Reach::SharedCache), (2, Reach::Package)] {
        let hop = c.ipi_latency_ns[reach as usize]
            + c.idle_exit_ns
            + c.ctx_switch_ns
            + c.handoff_cost(reach, 64)
            + 10_000.0
            + 6.0 * c.scan_ns_per_cpu;
        // Same die: 2 x (1,000 + 5,000 + 1,800 + 41 x 15 + 10,000 + 600)
        // = 38,030 ns; across the dies: 2 x (1,500 + 5,000 + 1,800 +
        // 41 x 125 + 10,000 + 600) = 48,050 ns.
        assert_eq!(per_round(0, b), round_u64(2.0 * hop), "{reach:?}");
    }
}

/// A Q6600 simulation booted with one 128 KB task that only exits, for
/// poking at the cost helpers directly.
fn q6600_sim<'a>(host: &'a Host, costs: &'a CostModel) -> Sim<'a> {
    let inst =
        Instance { tasks: vec![pinned("t", script(Vec::new()), 0, 128)], finish: vec![0], sync: SyncObjects::NONE };
    Sim::new(&setup(host, costs, limits(None, 1_000)), inst).unwrap()
}

/// The refill formula of docs/CALIBRATION.md section 1, case by case, for a
/// 128 KB working set (2,048 lines) on the Q6600 (4 MB L2 per die, 32 KB
/// L1d per core; DRAM 12 ns a line, L2 to L1 3 ns, cross-die 20 ns).
/// A line survives P bytes loaded into a cache of S with exp(-P/S).
#[test]
fn refill_prices_the_working_set_by_where_it_was_left() {
    let host = Host::preset("q6600").unwrap();
    let costs = CostModel::preset("q6600").unwrap();
    let mut sim = q6600_sim(&host, &costs);
    let (die0, die1) = (sim.caches.llc[0], sim.caches.llc[2]);
    assert_eq!(sim.caches.llc[1], die0);
    assert_ne!(die0, die1);
    let s = 4.0 * 1024.0 * 1024.0;
    assert_eq!(sim.caches.llc_bytes[die0], s);
    assert_eq!(sim.caches.private_bytes[1], 32.0 * 1024.0);
    let (ws, lines) = (128.0 * 1024.0, 2048.0);
    let close = |got: f64, want: f64| assert!((got - want).abs() <= 1e-9 * want.max(1.0), "{got} against {want}");

    // Never ran: the whole set from DRAM, 2,048 x 12 = 24,576 ns, and the
    // die's cache now holds it.
    sim.tasks[0].last_cpu = None;
    let before = sim.caches.pressure[die1];
    close(sim.refill(0, 2), lines * 12.0);
    close(sim.caches.pressure[die1] - before, ws);

    // Back on its own CPU after one cache's worth was loaded there:
    // 1 - e^-1 = 63.2% of it comes again from DRAM.
    sim.tasks[0].last_cpu = Some(0);
    sim.tasks[0].stamp = sim.caches.pressure[die0] - s;
    let f = 1.0 - libm::exp(-1.0);
    let before = sim.caches.pressure[die0];
    close(sim.refill(0, 0), f * lines * 12.0);
    close(sim.caches.pressure[die0] - before, f * ws);

    // The other core of the die, nothing loaded since: only the 512
    // lines of L1d refill from the shared L2, 512 x 3 = 1,536 ns.
    sim.tasks[0].last_cpu = Some(1);
    sim.tasks[0].stamp = sim.caches.pressure[die0];
    close(sim.refill(0, 0), 512.0 * 3.0);

    // Across the dies after half a cache was loaded on the old one: the
    // surviving 1 - (1 - e^-0.5) comes over the FSB at 20 ns, the rest
    // from DRAM, and the new die's cache takes the whole set.
    sim.tasks[0].last_cpu = Some(2);
    sim.tasks[0].stamp = sim.caches.pressure[die1] - s / 2.0;
    let f = 1.0 - libm::exp(-0.5);
    let before = sim.caches.pressure[die0];
    close(sim.refill(0, 0), (1.0 - f) * lines * 20.0 + f * lines * 12.0);
    close(sim.caches.pressure[die0] - before, ws);

    // Nothing to refill without a working set.
    sim.tasks[0].ws_bytes = 0.0;
    assert_eq!(sim.refill(0, 0), 0.0);
}

/// Run-time jitter: the host's clock factor times a normal factor of
/// the cost set's CV (0.03 on the Q6600), clamped to 0.2-3; without
/// jitter the work is exact and draws nothing.
#[test]
fn work_is_scaled_and_jittered_by_the_cost_set() {
    let host = Host::preset("q6600").unwrap();
    let mut costs = CostModel::preset("q6600").unwrap();
    costs.clock_factor = 0.5;
    let mut sim = q6600_sim(&host, &costs);
    // The first draw, exactly: 10,000 ns x (1 + 0.03 z) for the run's
    // next standard normal z (a distribution test alone cannot tell
    // 1 + cv z from 1 - cv z).
    let z = crate::dist::std_normal(&mut sim.rng.clone());
    assert!(z.abs() > 0.01, "{z}");
    assert_eq!(sim.work(20_000), round_u64(10_000.0 * (1.0 + costs.jitter_cv * z)));
    let xs: Vec<f64> = (0..4000).map(|_| sim.work(20_000) as f64).collect();
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let sd = (xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0)).sqrt();
    // 20 us at half the baseline's time: mean 10,000 ns, sd 300 ns; the
    // sample's standard errors are 5 ns and ~1.1%.
    assert!((mean - 10_000.0).abs() < 25.0, "{mean}");
    assert!((sd - 300.0).abs() < 15.0, "{sd}");
    costs.jitter_cv = 0.0;
    let mut sim = q6600_sim(&host, &costs);
    let twin = sim.rng.clone();
    assert_eq!(sim.work(20_000), 10_000);
    assert_eq!(sim.rng, twin);
    // The clamp: a CV so large that the normal factor leaves 0.2-3.
    costs.jitter_cv = 10.0;
    let mut sim = q6600_sim(&host, &costs);
    let xs: Vec<u64> = (0..4000).map(|_| sim.work(20_000)).collect();
    assert!(xs.iter().all(|&x| (2_000..=30_000).contains(&x)));
    assert!(xs.contains(&2_000) && xs.contains(&30_000));
}

/// Runs `tasks` on the Q6600 without jitter until all have exited.
fn run_to_exit(tasks: Vec<TaskSpec>, sockets: Sockets) -> RunOutcome {
    run_to_exit_on(KernelVersion::V2_6_26, tasks, sockets)
}

/// [`run_to_exit`] under the profile of `version`.
fn run_to_exit_on(version: KernelVersion, tasks: Vec<TaskSpec>, sockets: Sockets) -> RunOutcome {
    let finish = (0..tasks.len()).collect();
    q6600_run(Instance { tasks, finish, sync: SyncObjects::NONE }, limits(None, 1_000), |s| {
        s.sockets = sockets;
        s.config = Config::new(version, s.host.nr_cpus());
        s.domains = s.host.build_domains(version);
    })
    .unwrap()
}

/// Limits for a run of `duration_ms` (or until its tasks finish) capped
/// at `max_ms` of simulated time.
fn limits(duration_ms: Option<u64>, max_ms: u64) -> Limits {
    Limits::new(duration_ms.map(|d| d * 1_000_000), 0, max_ms * 1_000_000)
}

/// Runs `inst` on the Q6600 without jitter, under [`setup`] as `edit`
/// changes it.
fn q6600_run(inst: Instance, limits: Limits, edit: impl FnOnce(&mut RunSetup<'_>)) -> Result<RunOutcome, SimError> {
    let host = Host::preset("q6600").unwrap();
    let mut costs = CostModel::preset("q6600").unwrap();
    costs.jitter_cv = 0.0;
    let mut s = setup(&host, &costs, limits);
    edit(&mut s);
    run(&s, inst)
}

/// A CPU hog: 1 ms of work at a time, for ever.
fn hog() -> Box<dyn Program> {
    Box::new(FnProgram(|_cx: &mut StepCx<'_>| Action::Run(1_000_000)))
}

/// What one exchange measured.
#[derive(Debug, PartialEq, Eq)]
struct Exchange {
    wakeups: u64,
    switches: u64,
    writer_ns: u64,
    reader_ns: u64,
    end_ns: u64,
}

/// One AF_UNIX exchange: the writer (task 0, CPU 0) computes 20 µs,
/// writes to the reader (task 1, CPU 2, asleep in recv by then) and
/// sleeps, in select() (`repoll_ns`) or, with `None`, in a 1 ms
/// nanosleep and then select(); the reader, woken across the FSB (IPI
/// and idle exit, ~6.5 µs, long after the writer slept), takes the
/// message, works 50 µs and writes back; the writer takes the reply and
/// exits.
fn unix_exchange(write_space_wakeups: bool, repoll_ns: Option<u64>) -> Exchange {
    let mut n = 0;
    let writer = FnProgram(move |_cx: &mut StepCx<'_>| {
        n += 1;
        match (n, repoll_ns) {
            // Let the reader block in recv first.
            (1, _) => Action::Run(20_000),
            (2, _) => Action::Write { to: 1, stream: Stream::Pair, bytes: 100, tag: 0 },
            (3, Some(repoll_ns)) => select(repoll_ns),
            (3, None) => Action::Sleep { ns: 1_000_000, interruptible: false },
            (4, None) => select(0),
            _ => Action::Exit,
        }
    });
    let mut m = 0;
    let reader = FnProgram(move |_cx: &mut StepCx<'_>| {
        m += 1;
        match m {
            1 => Action::Wait { all: false },
            2 => Action::Run(50_000),
            3 => Action::Write { to: 0, stream: Stream::Pair, bytes: 100, tag: 0 },
            _ => Action::Exit,
        }
    });
    let tasks = vec![pinned("writer", Box::new(writer), 0, 0), pinned("reader", Box::new(reader), 2, 0)];
    let out = run_to_exit(tasks, Sockets { write_space_wakeups, ..Sockets::default() });
    Exchange {
        wakeups: out.counters.wakeups,
        switches: out.switches,
        writer_ns: out.tasks[0].runtime_ns,
        reader_ns: out.tasks[1].runtime_ns,
        end_ns: out.end_ns,
    }
}

/// What a select() comes to on `version`. The selector (CPU 0) works
/// 30 ms (a tick gives the SCHED_BATCH task on its CPU the turn it needs
/// to block in recv), wakes that task (a batch wakeup does not preempt,
/// and its vruntime, frozen while it slept, is now behind the
/// selector's), wakes peer 1 on CPU 1, and passes 100 µs over sockets
/// `fds` (peers 1 and 2). Peer 1, woken across the FSB, works 40 µs and
/// sends: its message lands ~50 µs into the pass.
#[derive(Debug, PartialEq, Eq)]
struct SelectWindow {
    /// Passes raced by a wakeup that found nothing.
    races: u64,
    /// try_to_wake_up calls that found the selector on its runqueue.
    wake_running: u64,
    /// Whether the batch task ran before the selector read the message.
    yielded: bool,
}

fn select_window(version: KernelVersion, fds: &[TaskRef], poll_window: bool) -> SelectWindow {
    let seen = Rc::new(Cell::new(None));
    let (record, batch_done) = (seen.clone(), Rc::new(Cell::new(false)));
    let batch_flag = batch_done.clone();
    let fds: Arc<[TaskRef]> = Arc::from(fds);
    let mut n = 0;
    let selector = FnProgram(move |cx: &mut StepCx<'_>| {
        n += 1;
        match n {
            1 => Action::Run(30_000_000),
            2 => Action::Send { to: 3, sync: false, bytes: 8, tag: 0 },
            3 => Action::Send { to: 1, sync: false, bytes: 8, tag: 0 },
            4 => Action::Select {
                entry_ns: 0,
                poll_ns: 50_000,
                exit_ns: 0,
                repoll_ns: 1_000,
                slept_ns: 0,
                fds: fds.clone(),
            },
            _ => {
                record.set(Some((cx.received.len(), batch_flag.get())));
                Action::Exit
            }
        }
    });
    let mut m = 0;
    let batch = FnProgram(move |_cx: &mut StepCx<'_>| {
        m += 1;
        match m {
            1 => Action::Wait { all: false },
            2 => Action::Run(200_000),
            _ => {
                batch_done.set(true);
                Action::Exit
            }
        }
    });
    let sender = script(vec![
        Action::Wait { all: false },
        Action::Run(40_000),
        Action::Send { to: 0, sync: true, bytes: 100, tag: 0 },
    ]);
    let idle = script(vec![Action::Sleep { ns: 1_000_000, interruptible: false }]);
    let mut batch = pinned("batch", Box::new(batch), 0, 0);
    batch.params = batch.params.policy(cfs_core::Policy::Batch);
    let tasks = vec![
        pinned("selector", Box::new(selector), 0, 0),
        pinned("sender", sender, 1, 0),
        pinned("other", idle, 2, 0),
        batch,
    ];
    let out = run_to_exit_on(version, tasks, Sockets { poll_window, ..Sockets::default() });
    let (received, yielded) = seen.get().expect("the selector ran again");
    assert_eq!(received, 1, "the message is read in the end");
    SelectWindow { races: out.select_races, wake_running: out.counters.wake_running, yielded }
}

/// do_select polls its sockets in order through the pass (socket i at
/// lead + 50 µs x (i + ½): 25 µs in for the first of two, 75 µs
/// for the second) and registers on each until one is ready. The
/// message lands ~50 µs in.
///
/// Polled first, its socket has been polled and holds the selector. On
/// 2.6.26 the pass runs TASK_INTERRUPTIBLE, so the sender's wakeup takes
/// try_to_wake_up's out_running path and makes it TASK_RUNNING; the pass
/// finds nothing, and schedule() keeps it queued but runs the batch task,
/// further left in vruntime, first; then the selector polls again. On 2.6.32 the pass runs
/// TASK_RUNNING: the wakeup only sets `triggered`, and the selector polls
/// again at once. Polled second, the socket is polled after the message
/// came: found, no race. Without the window, found at the pass's end.
#[test]
fn a_message_behind_select_s_poll_makes_it_reschedule_and_poll_again() {
    let raced = |races, wake_running, yielded| SelectWindow { races, wake_running, yielded };
    let found = SelectWindow { races: 0, wake_running: 0, yielded: false };
    assert_eq!(select_window(KernelVersion::V2_6_26, &[1, 2], true), raced(1, 1, true));
    assert_eq!(select_window(KernelVersion::V2_6_26Rc4, &[1, 2], true), raced(1, 1, true));
    assert_eq!(select_window(KernelVersion::V2_6_32, &[1, 2], true), raced(1, 0, false));
    assert_eq!(select_window(KernelVersion::V2_6_26, &[2, 1], true), found);
    assert_eq!(select_window(KernelVersion::V2_6_26, &[1, 2], false), found);
}

/// The pass after a wakeup is a window too, registered on every socket
/// since the first pass. The selector (CPU 0) polls peers 1 and 2 (50 µs
/// a socket, so 100 µs a pass; in the pass after a wakeup peer 2's socket
/// is polled 75 µs in), finds nothing and sleeps. Peer 1 (CPU 1) sends at
/// 200 µs and wakes it; peer 2 (CPU 2) sends `late_us` later, while the
/// selector makes its second pass: `(messages the call returned, wakeups
/// that found the selector on its runqueue)`.
fn second_pass(version: KernelVersion, late_us: u64, poll_window: bool) -> (usize, u64) {
    let got = Rc::new(Cell::new(None));
    let record = got.clone();
    let fds: Arc<[TaskRef]> = Arc::from(vec![1, 2]);
    let mut n = 0;
    let selector = FnProgram(move |cx: &mut StepCx<'_>| {
        n += 1;
        if n == 1 {
            return Action::Select {
                entry_ns: 0,
                poll_ns: 50_000,
                exit_ns: 0,
                repoll_ns: 100_000,
                slept_ns: 0,
                fds: fds.clone(),
            };
        }
        record.set(Some(cx.received.len()));
        Action::Exit
    });
    let peer = |sleep_us: u64| {
        script(vec![
            Action::Sleep { ns: sleep_us * 1_000, interruptible: false },
            Action::Send { to: 0, sync: true, bytes: 100, tag: 0 },
        ])
    };
    let tasks = vec![
        pinned("selector", Box::new(selector), 0, 0),
        pinned("peer1", peer(200), 1, 0),
        pinned("peer2", peer(200 + late_us), 2, 0),
    ];
    let out = run_to_exit_on(version, tasks, Sockets { poll_window, ..Sockets::default() });
    (got.get().expect("the selector returned"), out.counters.wake_running)
}

/// Peer 2's message lands ~50 µs into the second pass, before its
/// socket's poll: found, and its wakeup reaches the selector through the
/// first pass's registration (out_running on 2.6.26, a no-op on 2.6.32,
/// where the pass runs TASK_RUNNING). At ~90 µs it is behind the poll:
/// missed by this call, the wakeup the same. Without the window the call
/// returns what was there when it woke.
#[test]
fn the_pass_after_a_wakeup_finds_what_lands_before_its_poll_and_is_woken_by_all() {
    assert_eq!(second_pass(KernelVersion::V2_6_26, 50, true), (2, 1));
    assert_eq!(second_pass(KernelVersion::V2_6_26, 90, true), (1, 1));
    assert_eq!(second_pass(KernelVersion::V2_6_32, 50, true), (2, 0));
    assert_eq!(second_pass(KernelVersion::V2_6_32, 90, true), (1, 0));
    assert_eq!(second_pass(KernelVersion::V2_6_26, 50, false), (1, 0));
}

/// Write space races a select() pass too: the selector (CPU 0) writes a
/// query to a reader (CPU 2) that is still asleep for 40 µs, then passes
/// 100 µs over its sockets to the reader (polled 25 µs in) and to one
/// more. The reader takes the query ~40 µs in: with write-space wakeups,
/// unix_write_space wakes the selector's socket, which the pass has
/// polled and registered on, so on 2.6.26 the wakeup finds the selector
/// on its runqueue (`out_running`), and the pass, finding nothing to
/// read, is a raced one; on 2.6.32 only `triggered` is set. The reader
/// works 80 µs and replies after the pass has ended, which ends the run:
/// `(select_races, wake_running)`.
fn write_space_race(version: KernelVersion, write_space_wakeups: bool) -> (u64, u64) {
    let fds: Arc<[TaskRef]> = Arc::from(vec![1, 2]);
    let selector = script(vec![
        Action::Write { to: 1, stream: Stream::Pair, bytes: 100, tag: 0 },
        Action::Select { entry_ns: 0, poll_ns: 50_000, exit_ns: 0, repoll_ns: 1_000, slept_ns: 0, fds },
    ]);
    let reader = script(vec![
        Action::Sleep { ns: 40_000, interruptible: false },
        Action::Wait { all: false },
        Action::Run(80_000),
        Action::Write { to: 0, stream: Stream::Pair, bytes: 100, tag: 0 },
    ]);
    let idle = script(vec![Action::Sleep { ns: 1_000_000, interruptible: false }]);
    let tasks = vec![pinned("selector", selector, 0, 0), pinned("reader", reader, 2, 0), pinned("other", idle, 3, 0)];
    let out = run_to_exit_on(version, tasks, Sockets { write_space_wakeups, ..Sockets::default() });
    (out.select_races, out.counters.wake_running)
}

#[test]
fn write_space_races_a_select_pass_that_registered_on_the_socket() {
    assert_eq!(write_space_race(KernelVersion::V2_6_26, true), (1, 1));
    assert_eq!(write_space_race(KernelVersion::V2_6_32, true), (1, 0));
    assert_eq!(write_space_race(KernelVersion::V2_6_26, false), (0, 0));
}

#[test]
fn taking_a_unix_write_wakes_a_writer_sleeping_in_select() {
    let repoll = 30_000;
    let off = unix_exchange(false, Some(repoll));
    let on = unix_exchange(true, Some(repoll));
    // Off: the query wakes the reader and the reply wakes the writer.
    // On: the reader taking the query (while the writer sleeps in
    // select) wakes the writer once more; it finds nothing, polls every
    // socket again (repoll_ns, no jitter, clock factor 1) and sleeps:
    // one wakeup, one more switch in and one more out of the writer's
    // CPU, and at least repoll_ns more CPU time for the writer. The
    // reader pays for that wakeup: a remote one across the FSB.
    assert_eq!(on.wakeups, off.wakeups + 1, "{off:?} {on:?}");
    assert_eq!(on.switches, off.switches + 2, "{off:?} {on:?}");
    assert!(on.writer_ns >= off.writer_ns + repoll, "{off:?} {on:?}");
    let remote_wake = CostModel::preset("q6600").unwrap().wake_cost(Reach::Package, true);
    assert_eq!(remote_wake, 2_200.0, "0.5 µs local + 0.7 µs IPI send + 8 lines x 125 ns");
    assert!(on.reader_ns >= off.reader_ns + 2_200, "{off:?} {on:?}");
    // A plain re-check costs nothing: only the switches differ.
    let free = unix_exchange(true, Some(0));
    assert!(free.writer_ns < off.writer_ns + repoll, "{off:?} {free:?}");
    // A writer asleep elsewhere (a nanosleep) is not on the socket's
    // wait queue: nothing changes.
    assert_eq!(unix_exchange(true, None), unix_exchange(false, None));
}

#[test]
fn an_skbs_truesize_is_its_aligned_data_plus_the_sk_buff() {
    // (232 + 256) x 256.
    assert_eq!(SK_WMEM_MAX, 124_928);
    // 100 bytes round up to one 128-byte line, plus 232.
    assert_eq!(skb_truesize(100, SK_WMEM_MAX), 360);
    assert_eq!(skb_truesize(128, SK_WMEM_MAX), 360);
    assert_eq!(skb_truesize(129, SK_WMEM_MAX), 488);
    assert_eq!(skb_truesize(0, SK_WMEM_MAX), 232);
    // Whole skbs only: 16,000 and 32,000 bytes leave no remainder.
    assert_eq!(skb_truesize(16_000, SK_WMEM_MAX), 16_232);
    assert_eq!(skb_truesize(32_000, SK_WMEM_MAX), 2 * 16_232);
    // 40,000 bytes: two full skbs of SKB_MAX_ALLOC (16,000 = 125 lines,
    // so 16,232 each) and 8,000 more (63 lines = 8,064, + 232).
    assert_eq!(skb_truesize(40_000, SK_WMEM_MAX), 2 * 16_232 + 8_296);
    // A 4,096-byte buffer cuts at 4,096 / 2 - 64 = 1,984 bytes (16 lines
    // = 2,048, + 232): 5,000 bytes are two of those and 1,032 (9 lines).
    assert_eq!(skb_truesize(5_000, 4_096), 2 * 2_280 + 1_384);
}

/// A writer (task 0, CPU 0) writing 100-byte messages for ever,
/// counting one unit per completed write, to a reader (task 1, CPU 2)
/// that sleeps 1 ms and then takes `reads` messages one at a time and
/// sleeps for good; each writer on `stream`, one more writer (task 2,
/// CPU 1) on the same terms with `second`. 5 ms.
fn flood(reads: u64, stream: Stream, second: bool, sockets: Sockets) -> RunOutcome {
    let writer = || {
        let mut wrote = false;
        Box::new(FnProgram(move |_cx: &mut StepCx<'_>| {
            wrote = !wrote;
            if wrote { Action::Write { to: 1, stream, bytes: 100, tag: 0 } } else { Action::Progress(1) }
        })) as Box<dyn Program>
    };
    let mut reader = vec![Action::Sleep { ns: 1_000_000, interruptible: false }];
    reader.extend((0..reads).map(|_| Action::Wait { all: false }));
    reader.push(Action::Sleep { ns: 1_000_000_000, interruptible: false });
    let mut tasks = vec![pinned("writer", writer(), 0, 0), pinned("reader", script(reader), 2, 0)];
    if second {
        tasks.push(pinned("writer2", writer(), 1, 0));
    }
    q6600_run(Instance { tasks, finish: vec![], sync: SyncObjects::NONE }, limits(Some(5), 1_000), |s| {
        s.sockets = sockets
    })
    .unwrap()
}

#[test]
fn a_full_send_buffer_blocks_the_writer_until_a_quarter_is_left() {
    let d = Sockets::default();
    // A write goes ahead while less than 124,928 bytes are charged:
    // 347 x 360 = 124,920 still is, so the 348th goes and the 349th
    // blocks.
    let full = flood(0, Stream::Pair, false, d);
    assert_eq!((full.units, full.send_blocks, full.peak_unread), (348, 1, 348));
    // The blocked writer wakes when the socket is writable:
    // 4 x sk_wmem_alloc <= 124,928, i.e. at most 86 skbs left
    // (4 x 86 x 360 = 123,840; 87 give 125,280). So 261 reads leave it
    // asleep, and the 262nd wakes it; it then writes while less than
    // the buffer is charged: 86 + 262 = 348 again, 610 writes in all.
    assert_eq!(flood(261, Stream::Pair, false, d).units, 348);
    let refill = flood(262, Stream::Pair, false, d);
    assert_eq!((refill.units, refill.send_blocks), (610, 2));
    // Each block is an instant on the writer's CPU (0) in the trace.
    let blocks: Vec<u64> = refill.trace.as_ref().unwrap().to_value().unwrap()["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "socket")
        .map(|e| e["tid"].as_u64().unwrap())
        .collect();
    assert_eq!(blocks, [0, 0]);
    // The reader pays for waking the writer: a wakeup across the FSB
    // (writer on CPU 0, reader on CPU 2; 500 + 700 + 8 x 125 = 2,200
    // ns), and no runqueue reads, since the writer may not run on the
    // reader's CPU; without the bound it takes the same 262 messages
    // and wakes nobody.
    let free_262 = flood(262, Stream::Pair, false, Sockets { sndbuf: 0, ..d });
    let c = CostModel::preset("q6600").unwrap();
    let wake = round_u64(c.wake_cost(Reach::Package, true));
    assert_eq!(refill.tasks[1].runtime_ns - free_262.tasks[1].runtime_ns, wake);
    // "At most a quarter" includes a quarter: a 2,880-byte buffer takes
    // 8 skbs (7 x 360 = 2,520 < 2,880), and 6 reads leave 2 x 360 =
    // 2,880 / 4, which wakes the writer for 6 more; 5 reads do not.
    let small = Sockets { sndbuf: 2_880, ..d };
    assert_eq!(flood(5, Stream::Pair, false, small).units, 8);
    assert_eq!(flood(6, Stream::Pair, false, small).units, 14);
    // Write-space wakeups change nothing for a writer blocked on the
    // buffer rather than in select().
    let wsw = Sockets { write_space_wakeups: true, ..d };
    assert_eq!(flood(262, Stream::Pair, false, wsw).units, 610);
    // Unbounded buffers never block: 5 ms of writes at ~100 ns each.
    let free = flood(0, Stream::Pair, false, Sockets { sndbuf: 0, ..d });
    assert_eq!(free.send_blocks, 0);
    assert!(free.units > 10_000, "{}", free.units);
}

/// A pipe: 100-byte writes merge into a page while 100 more bytes fit
/// after its data, 40 a page (4,000 of 4,096 bytes), so 16 pages take
/// 640 writes and the 641st, needing a 17th page, blocks. The reader
/// frees a page with its 40th read (pipe_read releases an emptied
/// buffer and wakes the writers), and the writer fills one more: 680.
/// Two writers share the one pipe.
#[test]
fn a_pipe_holds_sixteen_pages_and_a_freed_page_wakes_its_writers() {
    let d = Sockets::default();
    let full = flood(0, Stream::Pipe(3), false, d);
    assert_eq!((full.units, full.send_blocks, full.peak_unread), (640, 1, 640));
    // Reads that empty no page wake nobody: the only wakeups are the
    // reader's timer ones, as with no reads at all.
    let partial = flood(39, Stream::Pipe(3), false, d);
    assert_eq!((partial.units, partial.counters.wakeups), (640, full.counters.wakeups));
    let one_page = flood(40, Stream::Pipe(3), false, d);
    assert_eq!((one_page.units, one_page.send_blocks), (680, 2));
    assert_eq!(one_page.counters.wakeups, full.counters.wakeups + 1, "the writer, once");
    assert_eq!(flood(0, Stream::Pipe(3), true, d).units, 640);
    // The socket buffer's size has nothing to do with a pipe.
    assert_eq!(flood(0, Stream::Pipe(3), false, Sockets { sndbuf: 0, ..d }).units, 640);
}

#[test]
fn pipe_pages_merge_short_writes_and_release_when_read() {
    let mut b = SendBuf::default();
    // Nothing to merge into: a first write takes a page.
    assert_eq!(b.pipe_merge(100), 0);
    b.pipe_put(100);
    assert_eq!(b.pages.len(), 1);
    // 39 more fit (4,000 bytes); the 41st does not.
    for _ in 0..39 {
        assert_eq!(b.pipe_merge(100), 100);
        b.pipe_put(100);
    }
    assert_eq!((b.pages.len(), b.pipe_merge(100)), (1, 0));
    // 96 bytes still fit exactly (4,000 + 96 = 4,096).
    assert_eq!(b.pipe_merge(96), 96);
    // A 10,000-byte write: its 1,808 bytes modulo a page (10,000 -
    // 2 x 4,096) do not fit after 4,000, so it takes three new pages.
    b.pipe_put(10_000);
    assert_eq!(b.pages.iter().map(|p| p.unread).collect::<Vec<_>>(), [4_000, 4_096, 4_096, 1_808]);
    // Reading the first 40 messages empties the first page only with
    // the last of them.
    assert_eq!((0..39).map(|_| b.pipe_take(100)).sum::<usize>(), 0);
    assert_eq!(b.pipe_take(100), 1);
    // The big message spans and frees the other three.
    assert_eq!(b.pipe_take(10_000), 3);
    assert!(b.pages.is_empty());
    // Full: 16 pages in use and a write that needs a new one.
    for _ in 0..PIPE_BUFFERS {
        b.pipe_put(PAGE_SIZE);
    }
    assert!(b.pipe_full(1) && b.pipe_full(PAGE_SIZE));
    assert!(!b.pipe_full(0));
}

/// Two connections into one reader, whose mailbox holds both: each
/// writer's charge is its own messages' truesize there, however many
/// of the other's are queued with them. `a` and `b` are each a writer's
/// script (task 0 on CPU 0, task 2 on CPU 1), the reader (task 1, CPU
/// 2) sleeps 1 ms, reads `reads` messages, then sleeps for good; 5 ms.
fn two_connections(a: Vec<Action>, b: Vec<Action>, reads: u64) -> RunOutcome {
    let mut reader = vec![Action::Sleep { ns: 1_000_000, interruptible: false }];
    reader.extend((0..reads).map(|_| Action::Wait { all: false }));
    reader.push(Action::Sleep { ns: 1_000_000_000, interruptible: false });
    let tasks =
        vec![pinned("a", script(a), 0, 0), pinned("reader", script(reader), 2, 0), pinned("b", script(b), 1, 0)];
    q6600_run(Instance { tasks, finish: vec![], sync: SyncObjects::NONE }, limits(Some(5), 1_000), |_| {}).unwrap()
}

/// `n` writes of `bytes` to the reader, each counted as a unit if
/// `count`.
fn writes(n: u64, bytes: u32, count: bool) -> Vec<Action> {
    (0..n)
        .flat_map(|_| {
            let w = Action::Write { to: 1, stream: Stream::Pair, bytes, tag: 0 };
            [w, Action::Progress(count as u64)]
        })
        .collect()
}

#[test]
fn a_connection_is_charged_only_its_own_messages() {
    let sleep = |us: u64| Action::Sleep { ns: us * 1_000, interruptible: false };
    // 200-byte writes cost 256 + 232 = 488 bytes, and 256 of them are
    // exactly 124,928. `a` writes 128, waits while `b` writes 128, and
    // writes once more: the reader then holds exactly sk_sndbuf, but
    // `a`'s connection only half of it, so the write goes ahead.
    let mut a = writes(128, 200, true);
    a.push(sleep(200));
    a.extend(writes(1, 200, true));
    let mut b = vec![sleep(50)];
    b.extend(writes(128, 200, false));
    assert_eq!(two_connections(a, b, 0).units, 129);
    // `b` fills its connection (348 x 360) and blocks; then `a` queues
    // 300 behind it. 262 reads leave `b` 86 messages, a quarter, and
    // wake it though the reader still holds 386: it writes 262 more.
    // b's units count its writes from the 401st on: 348 + 262 = 610
    // writes in all leave 210 of them.
    let b_only = |reads| {
        let mut b = writes(400, 100, false);
        b.extend(writes(1_000, 100, true));
        let mut a = vec![sleep(200)];
        a.extend(writes(300, 100, false));
        two_connections(a, b, reads).units
    };
    assert_eq!(b_only(261), 0);
    assert_eq!(b_only(262), 210);
}

/// Three connections into one reader: each blocks at its own 348
/// (1,044 in all, the reader far past sk_sndbuf, so each charge is
/// tracked exactly; debug builds check it against the mailbox at every
/// step). After 786 reads the three hold 258 between them, so one at
/// least is down to a quarter (86) and writes again.
#[test]
fn connections_into_one_reader_block_each_at_its_own_buffer() {
    let run = |reads: u64| {
        let mut reader = vec![Action::Sleep { ns: 1_000_000, interruptible: false }];
        reader.extend((0..reads).map(|_| Action::Wait { all: false }));
        reader.push(Action::Sleep { ns: 1_000_000_000, interruptible: false });
        let flood = || {
            Box::new(FnProgram({
                let mut wrote = false;
                move |_cx: &mut StepCx<'_>| {
                    wrote = !wrote;
                    if wrote {
                        Action::Write { to: 1, stream: Stream::Pair, bytes: 100, tag: 0 }
                    } else {
                        Action::Progress(1)
                    }
                }
            })) as Box<dyn Program>
        };
        let tasks = vec![
            pinned("w0", flood(), 0, 0),
            pinned("reader", script(reader), 2, 0),
            pinned("w1", flood(), 1, 0),
            pinned("w2", flood(), 3, 0),
        ];
        q6600_run(Instance { tasks, finish: vec![], sync: SyncObjects::NONE }, limits(Some(5), 1_000), |_| {}).unwrap()
    };
    let full = run(0);
    assert_eq!((full.units, full.send_blocks, full.peak_unread), (1_044, 3, 1_044));
    assert!(run(786).units > 1_044);
}

/// A connection's first write can find its reader already holding
/// sk_sndbuf or more of other connections' skbs: its own charge, not
/// that total, decides. `b` fills its own connection with exactly
/// 256 x 488 = 124,928 bytes, `c` then writes once (the reader holding
/// exactly sk_sndbuf), and `a` once more (the reader holding more).
#[test]
fn a_first_write_is_charged_only_its_own_connection() {
    let sleep = |us: u64| Action::Sleep { ns: us * 1_000, interruptible: false };
    let w = |count| [Action::Write { to: 1, stream: Stream::Pair, bytes: 200, tag: 0 }, Action::Progress(count)];
    let b: Vec<Action> = (0..256).flat_map(|_| w(0)).collect();
    let after = |us, count| {
        let mut v = vec![sleep(us)];
        v.extend(w(count));
        v
    };
    let (c, a) = (after(100, 1), after(200, 1));
    let reader = script(vec![Action::Sleep { ns: 1_000_000_000, interruptible: false }]);
    let tasks = vec![
        pinned("a", script(a), 0, 0),
        pinned("reader", reader, 2, 0),
        pinned("b", script(b), 1, 0),
        pinned("c", script(c), 3, 0),
    ];
    let out =
        q6600_run(Instance { tasks, finish: vec![], sync: SyncObjects::NONE }, limits(Some(5), 1_000), |_| {}).unwrap();
    assert_eq!((out.units, out.send_blocks), (2, 0));
}

/// With write-space wakeups, a writer sleeping in select() is woken
/// when its own connection becomes writable, whatever else its reader
/// holds: `a` writes `mine` messages and selects (re-polling costs 30
/// µs), `b` queues 100 more behind them (36,000 bytes, above a quarter
/// of sk_sndbuf), the reader takes one. With `a`'s one message taken,
/// its connection is empty and `a` is woken; with 99 of its 100 left
/// (35,640 bytes) it is not. `b` writing on a shared socket elsewhere
/// as well puts an entry in the stream table.
#[test]
fn a_select_wakeup_looks_at_the_writers_own_connection() {
    let a_time = |mine: u64| {
        let mut a: Vec<Action> =
            (0..mine).map(|_| Action::Write { to: 1, stream: Stream::Pair, bytes: 100, tag: 0 }).collect();
        a.push(select(30_000));
        let mut b = vec![Action::Sleep { ns: 100_000, interruptible: false }];
        b.extend((0..100).map(|_| Action::Write { to: 1, stream: Stream::Pair, bytes: 100, tag: 0 }));
        b.push(Action::Write { to: 3, stream: Stream::Shared(9), bytes: 100, tag: 0 });
        let reader = script(vec![
            Action::Sleep { ns: 1_000_000, interruptible: false },
            Action::Wait { all: false },
            Action::Sleep { ns: 1_000_000_000, interruptible: false },
        ]);
        let idle = script(vec![Action::Sleep { ns: 1_000_000_000, interruptible: false }]);
        let tasks = vec![
            pinned("a", script(a), 0, 0),
            pinned("reader", reader, 2, 0),
            pinned("b", script(b), 1, 0),
            pinned("d", idle, 3, 0),
        ];
        let wsw = Sockets { write_space_wakeups: true, ..Sockets::default() };
        let out = q6600_run(Instance { tasks, finish: vec![], sync: SyncObjects::NONE }, limits(Some(5), 1_000), |s| {
            s.sockets = wsw
        });
        out.unwrap().tasks[0].runtime_ns
    };
    assert!(a_time(1) >= 30_000, "{}", a_time(1));
    assert!(a_time(100) < 30_000, "{}", a_time(100));
}

#[test]
fn writers_sharing_a_socket_share_its_buffer() {
    let d = Sockets::default();
    // Two connections: 348 each.
    let pairs = flood(0, Stream::Pair, true, d);
    assert_eq!((pairs.units, pairs.send_blocks), (696, 2));
    // One descriptor both write on (hackbench's senders): 348 in all,
    // and both block.
    let shared = flood(0, Stream::Shared(9), true, d);
    assert_eq!((shared.units, shared.send_blocks), (348, 2));
    // The 262nd read wakes both (unix_write_space wakes the whole
    // queue); between them they refill the 262 freed places.
    let refill = flood(262, Stream::Shared(9), true, d);
    assert_eq!(refill.units, 610);
    assert!(refill.counters.wakeups >= 2, "{:?}", refill.counters);
}

/// Two tasks that write to each other and never read fill both
/// buffers and block for good, as on a real kernel: the run stops with
/// a stall that says so.
#[test]
fn a_write_deadlock_is_a_stall_that_names_the_writers() {
    let flood = |to| {
        let mut n = 0;
        Box::new(FnProgram(move |_cx: &mut StepCx<'_>| {
            n += 1;
            if n > 1_000 { Action::Exit } else { Action::Write { to, stream: Stream::Pair, bytes: 100, tag: 0 } }
        })) as Box<dyn Program>
    };
    let tasks = vec![pinned("a", flood(1), 0, 0), pinned("b", flood(0), 1, 0)];
    let inst = Instance { tasks, finish: vec![0, 1], sync: SyncObjects::NONE };
    match q6600_run(inst, limits(None, 1_000), |_| {}) {
        Err(SimError::Stalled { writers, .. }) => assert_eq!(writers, 2),
        other => panic!("{:?}", other.map(|o| o.end_ns)),
    }
}

/// Unbounded buffers are always writable: with write-space wakeups, a
/// writer sleeping in select() is woken by each of its messages taken,
/// whether or not others are still unread, exactly as with the default
/// buffer (where two 360-byte skbs are far below a quarter).
#[test]
fn an_unbounded_buffer_is_always_writable() {
    let run = |sndbuf: u64| {
        let w = |to| Action::Write { to, stream: Stream::Pair, bytes: 100, tag: 0 };
        let writer = script(vec![Action::Run(20_000), w(1), w(1), select(0)]);
        let reader = script(vec![
            Action::Wait { all: false },
            Action::Run(30_000),
            Action::Wait { all: false },
            Action::Run(30_000),
            Action::Write { to: 0, stream: Stream::Pair, bytes: 100, tag: 0 },
        ]);
        let tasks = vec![pinned("writer", writer, 0, 0), pinned("reader", reader, 2, 0)];
        run_to_exit(tasks, Sockets { write_space_wakeups: true, sndbuf, ..Sockets::default() }).counters.wakeups
    };
    // The reader woken by the first write; the writer by each take
    // (twice) and by the reply: 4.
    assert_eq!(run(SK_WMEM_MAX), 4);
    assert_eq!(run(0), 4);
}

#[test]
fn a_reader_exiting_frees_its_unread_messages_and_wakes_their_writer() {
    // The writer writes 500 messages and exits; the reader sleeps 1 ms
    // and exits without reading. The writer blocks after 348; the
    // reader's exit purges them, which wakes it, and its last 152
    // writes find the peer gone (EPIPE) and return at once.
    let writer = script(
        (0..500)
            .flat_map(|_| [Action::Write { to: 1, stream: Stream::Pair, bytes: 100, tag: 0 }, Action::Progress(1)])
            .collect(),
    );
    let reader = script(vec![Action::Sleep { ns: 1_000_000, interruptible: false }]);
    let tasks = vec![pinned("writer", writer, 0, 0), pinned("reader", reader, 2, 0)];
    let out = run_to_exit(tasks, Sockets::default());
    assert_eq!((out.units, out.send_blocks), (500, 1));
    // It ends soon after the reader's 1 ms, not at the 1 s cap.
    assert!(out.end_ns < 2_000_000, "{}", out.end_ns);
}

/// The reader's CPU time for taking a 6,400-byte message written on
/// CPU 0, reading it on `cpu`.
fn reader_time(cpu: usize) -> u64 {
    let writer = script(vec![Action::Run(20_000), Action::Send { to: 1, sync: true, bytes: 6_400, tag: 0 }]);
    let mut m = 0;
    let reader = FnProgram(move |_cx: &mut StepCx<'_>| {
        m += 1;
        if m == 1 { Action::Wait { all: false } } else { Action::Exit }
    });
    let tasks = vec![pinned("writer", writer, 0, 0), pinned("reader", Box::new(reader), cpu, 0)];
    run_to_exit(tasks, Sockets::default()).tasks[1].runtime_ns
}

#[test]
fn reading_a_message_costs_its_lines_from_the_writers_cache() {
    // 40 lines of socket state plus 6,400 / 64 = 100 payload lines, at
    // 15 ns each from the other core of the die and 125 ns across the
    // FSB: the cross-die read costs 140 x 110 = 15,400 ns more.
    let (same_die, cross_die) = (reader_time(1), reader_time(2));
    assert_eq!(cross_die - same_die, 15_400, "{same_die} {cross_die}");
}

/// Two posts (or two condition signals) before anyone waits: the waiter
/// sleeps 100 µs on a timer, then waits, counts a unit, and waits again,
/// for the rest of the 5 ms run. A semaphore keeps the posts, so two waits
/// pass; a condition variable loses its signals, so the first wait blocks.
fn signalled_before_waiting(post: fn() -> Action, wait: fn() -> Action, sync: SyncObjects) -> u64 {
    let host = Host::preset("q6600").unwrap();
    let costs = CostModel::preset("q6600").unwrap();
    let limits = Limits::new(Some(5_000_000), 0, 1_000_000_000);
    let mut n = 0;
    let signaller = FnProgram(move |_cx: &mut StepCx<'_>| {
        n += 1;
        if n <= 2 { post() } else { Action::Exit }
    });
    let mut m = 0;
    let waiter = FnProgram(move |_cx: &mut StepCx<'_>| {
        m += 1;
        match m {
            1 => Action::Sleep { ns: 100_000, interruptible: false },
            k if k % 2 == 0 => wait(),
            _ => Action::Progress(1),
        }
    });
    let inst = Instance {
        tasks: vec![pinned("signaller", Box::new(signaller), 0, 0), pinned("waiter", Box::new(waiter), 1, 0)],
        finish: vec![],
        sync,
    };
    let out = run(&setup(&host, &costs, limits), inst).unwrap();
    assert_eq!(out.end_ns, 5_000_000);
    out.units
}

#[test]
fn semaphore_posts_are_counted_and_condition_signals_lost() {
    let sems = SyncObjects { sems: 1, ..SyncObjects::NONE };
    assert_eq!(signalled_before_waiting(|| Action::SemPost(0), || Action::SemWait(0), sems), 2);
    let conds = SyncObjects { conds: 1, ..SyncObjects::NONE };
    let signal = || Action::CondSignal { cond: 0, all: false };
    assert_eq!(signalled_before_waiting(signal, || Action::CondWait { cond: 0, mutex: None }, conds), 0);
}

/// A program that runs `make(0)`, `make(1)`, ... `make(len - 1)` and
/// starts over, for ever.
fn cycle(len: usize, make: impl Fn(usize) -> Action + 'static) -> Box<dyn Program> {
    let mut i = 0;
    Box::new(FnProgram(move |_cx: &mut StepCx<'_>| {
        i += 1;
        make((i - 1) % len)
    }))
}

/// Two tasks on CPUs 0 and 2 that each loop: lock, 100 µs of work,
/// unlock, `outside` (work or a sleep). Returns their CPU times in a
/// 10 ms run.
fn lockers(outside: fn() -> Action) -> (u64, u64) {
    let out = lockers_run(outside);
    (out.tasks[0].runtime_ns, out.tasks[1].runtime_ns)
}

/// [`lockers`]' whole outcome.
fn lockers_run(outside: fn() -> Action) -> RunOutcome {
    let body = move |k| match k {
        0 => Action::Lock(0),
        1 => Action::Run(100_000),
        2 => Action::Unlock(0),
        _ => outside(),
    };
    let tasks = vec![pinned("a", cycle(4, body), 0, 0), pinned("b", cycle(4, body), 2, 0)];
    let sync = SyncObjects { mutexes: 1, ..SyncObjects::NONE };
    q6600_run(Instance { tasks, finish: vec![], sync }, limits(Some(10), 100), |_| {}).unwrap()
}

/// The trace marks every lock that found the mutex taken, on the CPU where
/// the task then slept: with barging, b (CPU 2) at its first lock and
/// after each of a's ~98 unlocks; a never.
#[test]
fn the_trace_marks_each_lock_that_found_its_mutex_taken() {
    let out = lockers_run(|| Action::Progress(1));
    let trace = out.trace.expect("traced").to_value().unwrap();
    let marks: Vec<&serde_json::Value> =
        trace["traceEvents"].as_array().unwrap().iter().filter(|e| e["name"] == "mutex taken").collect();
    assert!((90..=100).contains(&marks.len()), "{}", marks.len());
    assert!(marks.iter().all(|e| e["tid"] == 2 && e["args"]["waiter"] == "b" && e["ph"] == "i"));
}

/// Three waiters (CPUs 1-3) wait on a condition with one mutex; a
/// broadcast from CPU 0 at 1 ms releases them, and each then holds the
/// mutex for 1 ms. What the broadcast wakes, as glibc of the era does it
/// (nptl pthread_cond_broadcast: FUTEX_CMP_REQUEUE, waking one waiter and
/// moving the others onto the mutex's futex; the kernel's
/// futex_requeue): w1 alone. It takes the free mutex, and each unlock
/// then wakes the next requeued waiter, which finds the mutex free. So
/// after the broadcaster's own timer wakeup there are three wakeups (the
/// broadcast's and two unlocks'), and no lock finds the mutex taken.
/// Waking all three would make five (three, then two unlocks') and two
/// locks that find it taken (the two that lose the race sleep on it).
#[test]
fn a_broadcast_wakes_one_waiter_and_requeues_the_rest_onto_the_mutex() {
    let waiter = || {
        script(vec![
            Action::Lock(0),
            Action::CondWait { cond: 0, mutex: Some(0) },
            Action::Run(1_000_000),
            Action::Unlock(0),
            Action::Progress(1),
        ])
    };
    let broadcaster =
        script(vec![Action::Sleep { ns: 1_000_000, interruptible: false }, Action::CondSignal { cond: 0, all: true }]);
    let mut tasks = vec![pinned("b", broadcaster, 0, 0)];
    tasks.extend((1..=3).map(|i| pinned(&format!("w{i}"), waiter(), i, 0)));
    let sync = SyncObjects { conds: 1, mutexes: 1, ..SyncObjects::NONE };
    let out = q6600_run(Instance { tasks, finish: vec![1, 2, 3], sync }, limits(None, 100), |_| {}).unwrap();
    assert_eq!(out.units, 3);
    let trace = out.trace.expect("traced").to_value().unwrap();
    let taken = trace["traceEvents"].as_array().unwrap().iter().filter(|e| e["name"] == "mutex taken").count();
    assert_eq!((out.counters.wakeups, taken), (1 + 3, 0));
    // One holder at a time, back to back: the last unlock comes 3 ms
    // after the broadcast, give or take the wakeups' µs.
    assert!((4_000_000..4_100_000).contains(&out.end_ns), "{}", out.end_ns);
}

/// rt-app's barrier event holds the barrier's mutex around its counter
/// and waits on its condition with it (rt-app.c `rtapp_barrier`), so
/// the broadcast that releases the waiters requeues them onto that
/// mutex, and they leave one unlock after another. Three waiters (w1-w3
/// on CPUs 1-3) arrive at once; the releaser on CPU 0 arrives at 1 ms.
/// Its broadcast wakes w1 and requeues w2 and w3; its unlock wakes w2.
/// w3 is woken by the unlock of whichever of w1 and w2 takes the mutex
/// again first, so from CPU 1 or 2: the trace's wakeup flow into CPU 3
/// starts there, where a broadcast waking all three would start all
/// three flows on CPU 0. Three wakeups either way.
#[test]
fn a_barrier_releases_its_waiters_one_unlock_after_another() {
    let user = |run_ns: u64| script(vec![Action::Run(run_ns), Action::Barrier(0), Action::Progress(1)]);
    let mut tasks = vec![pinned("releaser", user(1_000_000), 0, 0)];
    tasks.extend((1..=3).map(|i| pinned(&format!("w{i}"), user(1_000), i, 0)));
    let sync = SyncObjects { barriers: vec![4], ..SyncObjects::NONE };
    let out = q6600_run(Instance { tasks, finish: vec![0, 1, 2, 3], sync }, limits(None, 100), |_| {}).unwrap();
    assert_eq!((out.units, out.counters.wakeups), (4, 3));
    let trace = out.trace.expect("traced").to_value().unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    let flow = |ph: &str, id: u64| {
        events.iter().find(|e| e["cat"] == "wake" && e["ph"] == ph && e["id"] == id).map(|e| e["tid"].as_u64().unwrap())
    };
    // (source CPU, destination CPU) of each wakeup, in the order made.
    let flows: Vec<(u64, u64)> = (1..=3).map(|id| (flow("s", id).unwrap(), flow("f", id).unwrap())).collect();
    assert_eq!(flows[..2], [(0, 1), (0, 2)]);
    assert!(matches!(flows[2], (1 | 2, 3)), "{flows:?}");
}

/// With a 50 µs sleep after each unlock, the two take turns: the
/// sections never overlap, so the two CPU times add up to at most the
/// 10 ms run (without the mutex they would be 2 x 10 ms x 100 / 150 =
/// 13.3 ms), and each gets about half. With no gap, the unlocker takes
/// the mutex again before the task it woke on the other die has run
/// (a wakeup there costs µs): glibc's barging, and the other starves. It
/// runs only to find the mutex taken, once per unlock (10 ms / ~102 µs),
/// for a context switch and a futex call: ~2.4 µs each, 0.24 ms in all,
/// where a fair hand-over would give it 5 ms.
#[test]
fn a_mutex_serialises_its_holders_and_its_unlocker_barges() {
    let (a, b) = lockers(|| Action::Sleep { ns: 50_000, interruptible: false });
    assert!(a + b <= 10_100_000, "{a} + {b}");
    assert!(a.min(b) >= 4_000_000, "{a} {b}");
    let (a, b) = lockers(|| Action::Progress(1));
    assert!(a.max(b) >= 9_900_000 && a.min(b) <= 500_000, "{a} {b}");
}

/// A waiter (CPU 1) takes the mutex and waits on the condition, which
/// releases the mutex; a signaller (CPU 2) computes 1 ms, takes the
/// mutex, signals, holds it `hold` ns more and unlocks; the waiter then
/// counts a unit, which it can do only with the mutex back.
fn cond_with_mutex(hold: u64) -> u64 {
    let waiter = script(vec![
        Action::Lock(0),
        Action::CondWait { cond: 0, mutex: Some(0) },
        Action::Progress(1),
        Action::Unlock(0),
        Action::Sleep { ns: 100_000_000, interruptible: false },
    ]);
    let signaller = script(vec![
        Action::Run(1_000_000),
        Action::Lock(0),
        Action::CondSignal { cond: 0, all: false },
        Action::Run(hold),
        Action::Unlock(0),
        Action::Sleep { ns: 100_000_000, interruptible: false },
    ]);
    let tasks = vec![pinned("waiter", waiter, 1, 0), pinned("signaller", signaller, 2, 0)];
    let sync = SyncObjects { conds: 1, mutexes: 1, ..SyncObjects::NONE };
    q6600_run(Instance { tasks, finish: vec![], sync }, limits(Some(4), 100), |_| {}).unwrap().units
}

/// The signaller could lock at all only because the wait released the
/// mutex; once signalled, the waiter returns only when it has the mutex
/// again: at once after a short hold (10 µs), not within the 4 ms run
/// after a 5 ms one.
#[test]
fn a_condition_wait_releases_its_mutex_and_takes_it_back() {
    assert_eq!(cond_with_mutex(10_000), 1);
    assert_eq!(cond_with_mutex(5_000_000), 0);
}

/// A barrier's last user, finding no one to wake, makes no system call
/// (rt-app takes the barrier's mutex and broadcasts to nobody, both in
/// user space): a lone user that loops 1 µs of work and the barrier makes
/// ~1,000 loops in 1 ms, where a 100 ns call each time would leave 909.
#[test]
fn a_barrier_nobody_waits_at_is_free() {
    let lone = cycle(3, |i| match i {
        0 => Action::Run(1_000),
        1 => Action::Barrier(0),
        _ => Action::Progress(1),
    });
    let sync = SyncObjects { barriers: vec![1], ..SyncObjects::NONE };
    let tasks = vec![pinned("lone", lone, 1, 0)];
    let out = q6600_run(Instance { tasks, finish: vec![], sync }, limits(Some(1), 100), |_| {}).unwrap();
    assert!((980..=1_000).contains(&out.units), "{}", out.units);
}

/// Three tasks on CPUs 0-2 loop: (k + 1) x 100 µs of work, then a barrier
/// of three users. Every round lasts as long as the slowest, 300 µs plus
/// a wakeup, so in 10 ms each task passes it the same ~32 times (without
/// the barrier they would count 100, 50 and 33), and their CPU times
/// stand 1 : 2 : 3.
#[test]
fn a_barrier_holds_every_user_until_the_last() {
    let user = |k: u64| {
        cycle(3, move |i| match i {
            0 => Action::Run((k + 1) * 100_000),
            1 => Action::Barrier(0),
            _ => Action::Progress(1),
        })
    };
    let tasks = (0..3).map(|k| pinned("user", user(k as u64), k, 0)).collect();
    let sync = SyncObjects { barriers: vec![3], ..SyncObjects::NONE };
    let out = q6600_run(Instance { tasks, finish: vec![], sync }, limits(Some(10), 100), |_| {}).unwrap();
    // 10 ms / 300 µs = 33.3 rounds at most; at least 30 with 10% lost
    // to wakeups. A round's last units may straddle the end.
    assert!((90..=101).contains(&out.units), "{}", out.units);
    let rounds = out.tasks[0].runtime_ns as f64 / 100_000.0;
    for (k, t) in out.tasks.iter().enumerate() {
        let per_round = t.runtime_ns as f64 / rounds / 100_000.0;
        assert!((per_round - (k + 1) as f64).abs() < 0.1, "task {k}: {per_round}");
    }
}

/// Two hogs pinned to CPU 0 for 10 ms: one of them is queued when the run
/// ends, and its open wait is counted; each hog's CPU time, ended waits
/// and open wait cover the run (the CPU is never idle, so every
/// nanosecond is one hog's run or the other's wait).
#[test]
fn a_wait_still_open_at_the_end_is_counted() {
    let tasks = vec![pinned("a", hog(), 0, 0), pinned("b", hog(), 0, 0)];
    let out =
        q6600_run(Instance { tasks, finish: vec![], sync: SyncObjects::NONE }, limits(Some(10), 100), |_| {}).unwrap();
    let open: Vec<u64> = out.tasks.iter().map(|t| t.wait_open_ns).collect();
    assert!(open.iter().filter(|&&w| w > 0).count() == 1, "{:?}", out.tasks);
    for t in &out.tasks {
        assert_eq!(t.runtime_ns + t.wait_sum_ns + t.wait_open_ns, out.end_ns, "{t:?}");
    }
}

/// A program that names an object its instance lacks gets an error, not
/// a panic: a mutex past the one the run has, then a condition when it
/// has none.
#[test]
fn an_unknown_sync_object_is_an_error() {
    let bad = |a: fn() -> Action, sync: SyncObjects| {
        let tasks = vec![pinned("t", script(vec![a()]), 0, 0)];
        q6600_run(Instance { tasks, finish: vec![0], sync }, limits(None, 100), |_| {}).unwrap_err().to_string()
    };
    let one_mutex = SyncObjects { conds: 1, mutexes: 1, ..SyncObjects::NONE };
    let e = bad(|| Action::CondWait { cond: 0, mutex: Some(1) }, one_mutex.clone());
    assert!(
        e.starts_with("a task used mutex 1 at 0.0") && e.ends_with(" s, but the run has 1 (numbered from 0)"),
        "{e}"
    );
    // A known mutex does not excuse an unknown condition.
    let e = bad(|| Action::CondWait { cond: 1, mutex: Some(0) }, one_mutex.clone());
    assert!(e.starts_with("a task used condition 1 at") && e.ends_with("but the run has 1 (numbered from 0)"), "{e}");
    let e = bad(|| Action::CondSignal { cond: 0, all: true }, SyncObjects::NONE);
    assert!(e.starts_with("a task used condition 0 at") && e.ends_with("but the run has 0 (numbered from 0)"), "{e}");
    for (a, kind) in [
        (Action::Unlock as fn(usize) -> Action, "mutex"),
        (Action::SemPost, "semaphore"),
        (Action::SemWait, "semaphore"),
        (Action::Barrier, "barrier"),
        (Action::Lock, "mutex"),
    ] {
        let tasks = vec![pinned("t", script(vec![a(0)]), 0, 0)];
        let r = q6600_run(Instance { tasks, finish: vec![0], sync: SyncObjects::NONE }, limits(None, 100), |_| {});
        assert!(matches!(r, Err(SimError::NoSuchObject { kind: k, index: 0, count: 0, .. }) if k == kind), "{kind}");
    }
}

#[test]
fn a_workload_that_waits_forever_is_reported() {
    let host = Host::preset("x2").unwrap();
    let costs = CostModel::preset("x2").unwrap();
    let limits = Limits::new(None, 0, 1_000_000_000);
    let waiter = FnProgram(|_cx: &mut StepCx<'_>| Action::Wait { all: true });
    let inst = Instance { tasks: vec![free("w", Box::new(waiter), 0)], finish: vec![0], sync: SyncObjects::NONE };
    assert!(matches!(run(&setup(&host, &costs, limits), inst), Err(SimError::Stalled { .. })));
}

/// A sleeper (CPU 0) and a task (CPU 2) that computes 1 ms and signals
/// it; the sleeper's program after the signal is `then`.
fn interrupted_sleep(then: Action) -> Result<RunOutcome, SimError> {
    let sleeper = script(vec![Action::Sleep { ns: 10_000_000, interruptible: true }, then]);
    let signaller = script(vec![Action::Run(1_000_000), Action::Send { to: 0, sync: false, bytes: 0, tag: 0 }]);
    let tasks = vec![pinned("sleeper", sleeper, 0, 0), pinned("signaller", signaller, 2, 0)];
    q6600_run(Instance { tasks, finish: vec![0, 1], sync: SyncObjects::NONE }, limits(None, 100), |_| {})
}

/// A signal ends an interruptible sleep and cancels its timer for good:
/// a second sleep of 20 ms from ~1 ms lasts its 20 ms (the cancelled
/// timer's expiry at 10 ms must not end it), and a sleeper that then
/// waits for a message nobody sends is a stall as soon as a tick looks
/// (4 ms at HZ=250), not a run that idles on to its cap.
#[test]
fn a_signal_cancels_the_sleep_it_ends() {
    let out = interrupted_sleep(Action::Sleep { ns: 20_000_000, interruptible: false }).unwrap();
    assert!((21_000_000..21_100_000).contains(&out.end_ns), "{}", out.end_ns);
    match interrupted_sleep(Action::Wait { all: true }) {
        Err(SimError::Stalled { at, writers }) => assert_eq!((at, writers), (4_000_000, 0)),
        other => panic!("{:?}", other.map(|o| o.end_ns)),
    }
}

/// What the CLI prints when a run fails, and how an instance shows in
/// a debug log (programs are closures: only their count).
#[test]
fn errors_and_instances_say_what_they_hold() {
    let stalled = SimError::Stalled { at: 1_500_000_000, writers: 0 }.to_string();
    assert_eq!(stalled, "workload stalled at 1.500000 s: every task waits and no timer is armed");
    let one = SimError::Stalled { at: 0, writers: 1 }.to_string();
    assert!(one.ends_with("armed (1 of them blocked writing to a full socket buffer)"), "{one}");
    let two = SimError::Stalled { at: 0, writers: 2 }.to_string();
    assert!(two.ends_with("armed (2 of them blocked writing to full socket buffers)"), "{two}");
    let cap = SimError::TimeLimit { at: 2_000_000_000, waiting_for: Vec::new(), unnamed: 0 }.to_string();
    assert_eq!(cap, "run did not finish within 2.000 s of simulated time");
    let named = SimError::TimeLimit { at: 0, waiting_for: vec!["a".into(), "b".into()], unnamed: 3 }.to_string();
    assert!(named.ends_with("time (still to finish: a, b and 3 more)"), "{named}");
    let inst =
        Instance { tasks: vec![pinned("t", script(Vec::new()), 0, 0)], finish: vec![0], sync: SyncObjects::NONE };
    assert_eq!(format!("{inst:?}"), "Instance { tasks: 1, finish: [0] }");
    let alive = SimError::TooManyTasks { at: 2_500_000, limit: Limits::PID_MAX, alive: true }.to_string();
    assert_eq!(
        alive,
        "fork failed at 0.002500 s: 32768 tasks alive, the kernel's default pid_max (fewer clients, or does a \
         loop fork children that never exit?)"
    );
    let queued = SimError::TooManyMessages { at: 1_677_740_000, limit: Limits::MAX_UNREAD }.to_string();
    assert_eq!(
        queued,
        "16777216 messages queued unread at 1.677740 s: tasks send faster than their peers read (does a loop \
         send without waiting?)"
    );
    let created = SimError::TooManyTasks { at: 40_000_000_000, limit: Limits::MAX_TASKS, alive: false }.to_string();
    assert_eq!(
        created,
        "fork at 40.000000 s would create task 1048577, past the 1048576 one run may create (an exited task \
         keeps its slot; does a loop fork without end?)"
    );
    let failed = SimError::Program { at: 1_250_000, task: "b".into(), why: "it gave up".into() }.to_string();
    assert_eq!(failed, "b failed at 0.001250 s: it gave up");
}

/// A program that fails ends the run at once with its reason, naming the
/// task and the time: a task runs 1 ms, then fails.
#[test]
fn a_failing_program_ends_the_run_with_its_reason() {
    let failing = script(vec![Action::Run(1_000_000), Action::Fail("out of forks".into())]);
    let inst = Instance { tasks: vec![pinned("b", failing, 0, 0)], finish: vec![0], sync: SyncObjects::NONE };
    let e = q6600_run(inst, limits(None, 100), |_| {}).map(|_| ()).unwrap_err();
    let SimError::Program { at, task, why } = e else { panic!("{e}") };
    assert_eq!((task.as_str(), &*why), ("b", "out of forks"));
    assert!((1_000_000..1_100_000).contains(&at), "{at}");
}

/// A task on CPU 0 that forks `k` children running `child`, then exits
/// (which ends the run), under task limits of `max_tasks` created and
/// `pid_max` alive. Returns the number of tasks the run created.
fn forks(k: usize, child: fn() -> Box<dyn Program>, max_tasks: usize, pid_max: usize) -> Result<usize, SimError> {
    let spec = || ForkSpec { name: "child".into(), program: child(), params: None, ws_kb: 0 };
    let parent = script((0..k).map(|_| Action::Fork(Box::new(spec()))).collect());
    let inst = Instance { tasks: vec![pinned("parent", parent, 0, 0)], finish: vec![0], sync: SyncObjects::NONE };
    let limits = Limits { max_tasks, pid_max, ..limits(None, 1_000) };
    q6600_run(inst, limits, |_| {}).map(|o| o.tasks.len())
}

/// The task limits refuse the fork that would pass them, with an
/// error naming the limit, and nothing short of them. Children that
/// exit at once still count against `max_tasks` (a slot is never
/// reused): the parent and 9 children fit in 10, a 10th child does
/// not, however few are alive. Children that wait forever count
/// against `pid_max`: the parent and 9 of them are 10 alive.
#[test]
fn a_fork_past_the_task_limits_stops_the_run() {
    let exits = || script(Vec::new());
    assert_eq!(forks(9, exits, 10, 1_000).unwrap(), 10);
    match forks(10, exits, 10, 1_000) {
        Err(SimError::TooManyTasks { limit: 10, alive: false, at }) => assert!(at > 0),
        other => panic!("{other:?}"),
    }
    // An exited child no longer counts as alive: each runs first (the
    // child-runs-first rule) and exits before the parent forks again,
    // so 20 fit under a pid_max of 2.
    assert_eq!(forks(20, exits, 1_000, 2).unwrap(), 21);
    let waits = || script(vec![Action::Wait { all: true }]);
    assert_eq!(forks(9, waits, 1_000, 10).unwrap(), 10);
    match forks(10, waits, 1_000, 10) {
        Err(SimError::TooManyTasks { limit: 10, alive: true, at }) => assert!(at > 0),
        other => panic!("{other:?}"),
    }
    // An instance that starts with more tasks than pid_max allows is
    // refused at time 0.
    let tasks = (0..3).map(|i| pinned("t", script(Vec::new()), i, 0)).collect();
    let limits = Limits { pid_max: 2, ..limits(None, 100) };
    match q6600_run(Instance { tasks, finish: Vec::new(), sync: SyncObjects::NONE }, limits, |_| {}) {
        Err(SimError::TooManyTasks { at: 0, limit: 2, alive: true }) => {}
        other => panic!("{:?}", other.map(|o| o.tasks.len())),
    }
}

/// The signaller's CPU time when it signals a condition after 1 ms on
/// CPU 0, with or without a waiter blocked on it on CPU 2.
fn signaller_runtime(with_waiter: bool) -> u64 {
    let signaller = script(vec![Action::Run(1_000_000), Action::CondSignal { cond: 0, all: false }]);
    let mut tasks = vec![pinned("signaller", signaller, 0, 0)];
    if with_waiter {
        tasks.push(on_2_may_wake_on_0("waiter", vec![Action::CondWait { cond: 0, mutex: None }]));
    }
    let finish = (0..tasks.len()).collect();
    let out = q6600_run(
        Instance { tasks, finish, sync: SyncObjects { conds: 1, ..SyncObjects::NONE } },
        limits(None, 100),
        |_| {},
    )
    .unwrap();
    out.tasks[0].runtime_ns
}

/// A task that plays `actions`, allowed on CPUs 0 and 2 and started on 2:
/// a CPU-0 task that wakes it has its own CPU in the mask, so the wakeup
/// reads the two loads.
fn on_2_may_wake_on_0(name: &str, actions: Vec<Action>) -> TaskSpec {
    let params = TaskParams::normal().allowed(CpuMask::from_cpus([0, 2]));
    TaskSpec { name: name.into(), program: script(actions), params, cpu: 2, ws_kb: 0, side: None }
}

/// What waking [`on_2_may_wake_on_0`]'s task from CPU 0 costs the waker:
/// a wakeup across the dies (500 + 700 + 8 x 125 = 2,200 ns) and the two
/// runqueue reads cfs-core reports for wake_affine (`Event::Scan`,
/// 2 x 100 ns; wake_affine declines: the waker's 1024 on CPU 0 against an
/// empty CPU 2, not sync).
fn cross_die_wake_ns() -> u64 {
    let c = CostModel::preset("q6600").unwrap();
    round_u64(c.wake_cost(Reach::Package, true) + 2.0 * c.scan_ns_per_cpu)
}

/// Signalling a waiter costs the signaller [`cross_die_wake_ns`]; a signal
/// nobody waits for is lost, and wakes no one.
#[test]
fn a_condition_signal_charges_the_wakeup_to_the_signaller() {
    assert_eq!(signaller_runtime(true) - signaller_runtime(false), cross_die_wake_ns());
}

/// The CPU time of a task on CPU 0 that takes a mutex, computes 1 ms and
/// waits on a condition with it, in a 3 ms run; with or without a task
/// (allowed on CPUs 0 and 2, started on 2) asleep on that mutex since
/// 100 µs.
fn cond_waiter_runtime(with_sleeper: bool) -> u64 {
    let waiter = script(vec![Action::Lock(0), Action::Run(1_000_000), Action::CondWait { cond: 0, mutex: Some(0) }]);
    let mut tasks = vec![pinned("waiter", waiter, 0, 0)];
    if with_sleeper {
        tasks.push(on_2_may_wake_on_0("sleeper", vec![Action::Run(100_000), Action::Lock(0)]));
    }
    let sync = SyncObjects { conds: 1, mutexes: 1, ..SyncObjects::NONE };
    let out = q6600_run(Instance { tasks, finish: vec![], sync }, limits(Some(3), 100), |_| {}).unwrap();
    out.tasks[0].runtime_ns
}

/// A condition wait that releases a mutex someone sleeps on wakes that
/// task on its way to sleep, and pays for it as an unlock would: the same
/// [`cross_die_wake_ns`] as a signal.
#[test]
fn a_condition_wait_pays_for_the_mutex_sleeper_it_wakes() {
    assert_eq!(cond_waiter_runtime(true) - cond_waiter_runtime(false), cross_die_wake_ns());
}

/// Runs `tasks` (the last one finishes the run) under a `max_unread`
/// of 3 messages.
fn with_three_unread(tasks: Vec<TaskSpec>) -> Result<RunOutcome, SimError> {
    let finish = vec![tasks.len() - 1];
    let limits = Limits { max_unread: 3, ..limits(None, 1_000) };
    q6600_run(Instance { tasks, finish, sync: SyncObjects::NONE }, limits, |_| {})
}

/// `max_unread` bounds the messages queued over all tasks: a fourth
/// message to a task that never reads stops the run, three do not; a
/// message counts until it is read, or until its receiver exits; a
/// send to an exited task queues nothing.
#[test]
fn unread_messages_stop_the_run_past_max_unread() {
    let send = |to| Action::Send { to, sync: false, bytes: 64, tag: 0 };
    let hog = || script(vec![Action::Run(100_000_000)]);
    let sender = |n: usize| script((0..n).map(|_| send(0)).collect());
    assert!(with_three_unread(vec![pinned("hog", hog(), 0, 0), pinned("s", sender(3), 1, 0)]).is_ok());
    match with_three_unread(vec![pinned("hog", hog(), 0, 0), pinned("s", sender(4), 1, 0)]) {
        Err(SimError::TooManyMessages { limit: 3, at }) => assert!(at > 0),
        other => panic!("{:?}", other.map(|o| o.end_ns)),
    }
    // Three to a reader, then three more after it has read them: six
    // sent, never more than three unread.
    let batches = |to| {
        let mut ops: Vec<Action> = (0..3).map(|_| send(to)).collect();
        ops.push(Action::Sleep { ns: 1_000_000, interruptible: false });
        ops.extend((0..3).map(|_| send(to)));
        script(ops)
    };
    let reader = script(vec![Action::Wait { all: true }, Action::Wait { all: true }]);
    assert!(with_three_unread(vec![pinned("reader", reader, 0, 0), pinned("s", batches(0), 1, 0)]).is_ok());
    // Three to a task that exits unread at 0.1 ms, then three to another.
    let quits = script(vec![Action::Run(100_000)]);
    let mut ops: Vec<Action> = (0..3).map(|_| send(0)).collect();
    ops.push(Action::Sleep { ns: 1_000_000, interruptible: false });
    ops.extend((0..3).map(|_| send(1)));
    let tasks = vec![pinned("quits", quits, 0, 0), pinned("hog", hog(), 2, 0), pinned("s", script(ops), 1, 0)];
    assert!(with_three_unread(tasks).is_ok());
    // With three unread, a send to a task that has exited queues
    // nothing (EPIPE) and is no error.
    let quits = script(vec![Action::Run(100_000)]);
    let mut ops: Vec<Action> = (0..3).map(|_| send(1)).collect();
    ops.push(Action::Sleep { ns: 1_000_000, interruptible: false });
    ops.push(send(0));
    let tasks = vec![pinned("quits", quits, 0, 0), pinned("hog", hog(), 2, 0), pinned("s", script(ops), 1, 0)];
    assert!(with_three_unread(tasks).is_ok());
}

/// A waker that runs 50 ms on CPU 0, wakes a task asleep there since
/// the start, and runs 1 ms more, with or without WAKEUP_PREEMPT.
/// Returns both tasks' CPU time and the preemptions.
fn waker_and_wakee(preempt: bool) -> (u64, u64, u64) {
    let waker = script(vec![
        Action::Run(50_000_000),
        Action::Send { to: 0, sync: false, bytes: 64, tag: 0 },
        Action::Run(1_000_000),
    ]);
    // The wakee is task 0, so it runs first and is asleep before the
    // waker starts.
    let wakee = script(vec![Action::Wait { all: true }, Action::Run(100_000)]);
    let tasks = vec![pinned("wakee", wakee, 0, 0), pinned("waker", waker, 0, 0)];
    let inst = Instance { tasks, finish: vec![0, 1], sync: SyncObjects::NONE };
    // Without HRTICK: its timer would end the waker's long slice as
    // soon as the wakee is queued, a preemption in both variants.
    let edit = |s: &mut RunSetup<'_>| {
        s.config.features.set(cfs_core::Feature::WakeupPreempt, preempt).unwrap();
        s.config.features.set(cfs_core::Feature::Hrtick, false).unwrap();
    };
    let out = q6600_run(inst, limits(None, 100), edit).unwrap();
    (out.tasks[1].runtime_ns, out.tasks[0].runtime_ns, out.preemptions)
}

/// The waker pays for its wakeup even when the wakee preempts it: the
/// wakeup is work inside the waker's system call, done before the
/// return to user space where the preemption takes effect. The wakee
/// is ~50 ms of vruntime behind the waker, past 2.6.26's 30 ms wakeup
/// granularity (10 ms x (1 + log2 4)), so it preempts. With the
/// preemption the waker's CPU time grows by exactly the one context
/// switch it pays to come back (1.8 µs), and the wakee's is unchanged.
#[test]
fn a_preempted_waker_still_pays_for_its_wakeup() {
    let (waker_p, wakee_p, preemptions) = waker_and_wakee(true);
    let (waker, wakee, none) = waker_and_wakee(false);
    assert_eq!((preemptions, none), (1, 0));
    let ctx = round_u64(CostModel::preset("q6600").unwrap().ctx_switch_ns);
    assert_eq!(waker_p, waker + ctx);
    assert_eq!(wakee_p, wakee);
}

/// Two CPU hogs pinned to CPU 0 under 2.6.26 (sched_latency 20 ms x
/// (1 + log2 4) = 60 ms, so each of the two gets a 30 ms slice). Returns
/// when the second first runs, i.e. when the first lost the CPU.
fn first_slice_end(hrtick: bool) -> u64 {
    use std::cell::Cell;
    use std::rc::Rc;
    let started = Rc::new(Cell::new(None));
    let hog = |seen: Option<Rc<Cell<Option<u64>>>>| {
        FnProgram(move |cx: &mut StepCx<'_>| {
            if let Some(seen) = &seen
                && seen.get().is_none()
            {
                seen.set(Some(cx.now));
            }
            Action::Run(1_000_000)
        })
    };
    let tasks = vec![pinned("a", Box::new(hog(None)), 0, 0), pinned("b", Box::new(hog(Some(started.clone()))), 0, 0)];
    let inst = Instance { tasks, finish: Vec::new(), sync: SyncObjects::NONE };
    q6600_run(inst, limits(Some(50), 1_000), |s| {
        s.config.hres_timers = true;
        s.config.features.set(cfs_core::Feature::Hrtick, hrtick).unwrap()
    })
    .unwrap();
    started.get().unwrap()
}

/// With HRTICK (and high-resolution timers, which the HRTICK bit needs
/// and the engine's default lacks) the first hog is preempted when its
/// 30 ms slice is used up (hrtick_start_fair arms the timer for the rest of the slice, and
/// the hrtick's entity_tick reschedules at once); without it, at the
/// first tick after that, 32 ms (HZ=250). The second starts after the
/// switch (1.8 us; the tick's own scheduler work is the first's).
#[test]
fn hrtick_ends_a_slice_on_time_and_the_tick_late() {
    let ctx = round_u64(CostModel::preset("q6600").unwrap().ctx_switch_ns);
    assert_eq!(first_slice_end(true), 30_000_000 + ctx);
    assert_eq!(first_slice_end(false), 32_000_000 + ctx);
}

/// A timer that ends a sleep disarms it: a task that sleeps 1 ms and
/// then waits for a message nobody sends is a stall at the next tick.
#[test]
fn a_finished_sleep_leaves_no_timer_armed() {
    let p = script(vec![Action::Sleep { ns: 1_000_000, interruptible: false }, Action::Wait { all: true }]);
    let inst = Instance { tasks: vec![pinned("s", p, 0, 0)], finish: vec![0], sync: SyncObjects::NONE };
    match q6600_run(inst, limits(None, 100), |_| {}) {
        Err(SimError::Stalled { at, writers }) => assert_eq!((at, writers), (4_000_000, 0)),
        other => panic!("{:?}", other.map(|o| o.end_ns)),
    }
}

/// Without tasks whose exit ends the run, the run ends when every task
/// has exited (at the first tick that finds nothing to do), without an
/// error; a task spec's CPU beyond the host starts on its last CPU.
#[test]
fn a_run_of_exited_tasks_ends_cleanly_and_specs_clamp_their_cpu() {
    let p = script(vec![Action::Run(1_000_000)]);
    let spec = TaskSpec { name: "t".into(), program: p, params: TaskParams::normal(), cpu: 99, ws_kb: 0, side: None };
    let out = q6600_run(
        Instance { tasks: vec![spec], finish: Vec::new(), sync: SyncObjects::NONE },
        limits(None, 100),
        |_| {},
    )
    .unwrap();
    assert_eq!(out.end_ns, 4_000_000);
    assert!(out.cpu_busy_ns[3] >= 1_000_000 && out.cpu_busy_ns[..3].iter().all(|&b| b == 0), "{:?}", out.cpu_busy_ns);
    assert!(out.events >= out.switches && out.switches >= 2, "{} {}", out.events, out.switches);
}

/// The simulated-time cap is inclusive: a run whose last event falls
/// exactly on it finishes.
#[test]
fn a_run_may_use_all_of_its_cap() {
    let inst = Instance { tasks: vec![pinned("h", hog(), 0, 0)], finish: Vec::new(), sync: SyncObjects::NONE };
    assert_eq!(q6600_run(inst, limits(Some(8), 8), |_| {}).unwrap().end_ns, 8_000_000);
}

/// How work lands on a CPU: an idle CPU absorbs a charge; a charge to a
/// segment in flight lengthens it (and supersedes its end event); one
/// between segments waits as debt for the next. Every new or cut
/// segment takes a new epoch, so a superseded end event is ignored.
#[test]
fn charges_lengthen_the_segment_in_flight_or_wait_as_debt() {
    let host = Host::preset("q6600").unwrap();
    let costs = CostModel::preset("q6600").unwrap();
    let mut sim = q6600_sim(&host, &costs);
    assert!(sim.cpus[3].curr.is_none());
    sim.charge(3, 500);
    assert_eq!(sim.cpus[3].debt, 0);
    let seg = sim.cpus[0].seg.expect("the booted task runs");
    let g = sim.cpus[0].epoch;
    sim.charge(0, 500);
    assert_eq!(sim.cpus[0].seg.unwrap().work, seg.work + 500);
    assert!(sim.cpus[0].epoch > g);
    // Cut the segment 100 ns in: the rest is the task's pending work.
    let g = sim.cpus[0].epoch;
    sim.now = seg.start + 100;
    sim.interrupt_segment(0);
    assert!(sim.cpus[0].seg.is_none() && sim.cpus[0].epoch > g);
    assert_eq!(sim.tasks[0].pending, seg.work + 500 - 100);
    sim.charge(0, 700);
    assert_eq!(sim.cpus[0].debt, 700);
    let g = sim.cpus[0].epoch;
    sim.start_segment(0, 0);
    assert_eq!(sim.cpus[0].seg.unwrap().work, seg.work + 500 - 100 + 700);
    assert_eq!((sim.cpus[0].debt, sim.tasks[0].pending), (0, 0));
    assert!(sim.cpus[0].epoch > g);
    // Debt is paid before the task goes on, even with no work of its
    // own pending: a task about to resume from its system call first
    // runs a segment of the 300 ns its CPU owes.
    sim.now += sim.cpus[0].seg.unwrap().work;
    sim.interrupt_segment(0);
    assert_eq!(sim.tasks[0].pending, 0);
    sim.charge(0, 300);
    sim.tasks[0].deferred = Some(Deferred::Resume);
    sim.run_task(0).unwrap();
    assert_eq!(sim.cpus[0].seg.unwrap().work, 300);
    assert_eq!(sim.tasks[0].deferred, Some(Deferred::Resume));
}

/// Switch counting in the same-CPU ping-pong: two switches a round,
/// none of them a preemption (wakeup granularity is far above the
/// 10 us the wakee is behind).
#[test]
fn blocking_switches_are_not_preemptions() {
    let out = ping_pong_run(0, 0, 20);
    assert_eq!(out.preemptions, 0);
    assert!((40..=42).contains(&out.switches), "{}", out.switches);
}

/// Two hogs sharing CPU 0 for 100 ms under 2.6.26 take turns every
/// 30 ms slice (HRTICK on): preempted at 30, 60 and 90 ms.
#[test]
fn hogs_sharing_a_cpu_are_preempted_once_a_slice() {
    let tasks = vec![pinned("a", hog(), 0, 0), pinned("b", hog(), 0, 0)];
    let out =
        q6600_run(Instance { tasks, finish: Vec::new(), sync: SyncObjects::NONE }, limits(Some(100), 1_000), |_| {})
            .unwrap();
    assert_eq!(out.preemptions, 3);
}

/// With NO_HZ an idle CPU stops its tick when it goes idle, except the
/// one that takes the idle load balancer's role; without it every CPU
/// ticks.
#[test]
fn tickless_idle_cpus_stop_their_ticks() {
    let host = Host::preset("q6600").unwrap();
    let costs = CostModel::preset("q6600").unwrap();
    let stopped = |nohz: bool| {
        let mut s = setup(&host, &costs, limits(Some(20), 1_000));
        s.config.nohz = nohz;
        let inst = Instance { tasks: vec![pinned("h", hog(), 0, 0)], finish: Vec::new(), sync: SyncObjects::NONE };
        let mut sim = Sim::new(&s, inst).unwrap();
        sim.main_loop().unwrap();
        (0..4).filter(|&c| sim.sched.tick_stopped(c)).count()
    };
    assert_eq!(stopped(false), 0);
    assert_eq!(stopped(true), 2);
}

/// CPU time of a task on CPU 0 that reads 10 lines of each of `peers`
/// and exits, beside a task on CPU 2 that runs 1 ms (task 1) and one
/// that has exited by then (task 2).
fn toucher_runtime(peers: &[TaskRef]) -> u64 {
    let peers: std::sync::Arc<[TaskRef]> = peers.into();
    let toucher = script(vec![Action::Run(100_000), Action::Touch { peers, lines: 10.0 }]);
    let tasks = vec![
        pinned("toucher", toucher, 0, 0),
        pinned("busy", script(vec![Action::Run(1_000_000)]), 2, 0),
        pinned("gone", script(Vec::new()), 3, 0),
    ];
    run_to_exit(tasks, Sockets::default()).tasks[0].runtime_ns
}

/// Reading a live peer's lines costs a dirty line each from where it
/// runs (across the dies: 10 x 125 ns); the task's own lines and an
/// exited peer's cost nothing.
#[test]
fn touching_shared_lines_costs_by_where_each_peer_ran() {
    let c = CostModel::preset("q6600").unwrap();
    let base = toucher_runtime(&[]);
    assert_eq!(toucher_runtime(&[0, 2]), base);
    assert_eq!(toucher_runtime(&[0, 1, 2]) - base, round_u64(10.0 * c.dirty_line_ns[Reach::Package as usize]));
}

#[test]
fn a_run_that_never_finishes_hits_the_cap() {
    let host = Host::preset("x2").unwrap();
    let costs = CostModel::preset("x2").unwrap();
    let limits = Limits::new(None, 0, 50_000_000);
    let hog = FnProgram(|_cx: &mut StepCx<'_>| Action::Run(1_000_000));
    let inst = Instance { tasks: vec![free("h", Box::new(hog), 0)], finish: vec![0], sync: SyncObjects::NONE };
    assert!(matches!(run(&setup(&host, &costs, limits), inst), Err(SimError::TimeLimit { .. })));
}

/// The cap's error names the finishing tasks still alive, and only those:
/// of seven finishing tasks, `quick` exits at once and six hogs never do,
/// so the error names the first NAMED (5) hogs in task order and counts
/// the sixth; `bystander` is not a finishing task and is not named.
#[test]
fn the_cap_names_the_tasks_the_run_waits_for() {
    let host = Host::preset("x2").unwrap();
    let costs = CostModel::preset("x2").unwrap();
    let limits = Limits::new(None, 0, 20_000_000);
    let hog = || Box::new(FnProgram(|_cx: &mut StepCx<'_>| Action::Run(1_000_000)));
    let mut tasks = vec![free("quick", script(vec![Action::Exit]), 0), free("bystander", hog(), 0)];
    tasks.extend((0..6).map(|i| free(&format!("h{i}"), hog(), 0)));
    let finish = vec![0, 2, 3, 4, 5, 6, 7];
    let inst = Instance { tasks, finish, sync: SyncObjects::NONE };
    match run(&setup(&host, &costs, limits), inst) {
        Err(SimError::TimeLimit { waiting_for, unnamed, .. }) => {
            assert_eq!(waiting_for, ["h0", "h1", "h2", "h3", "h4"]);
            assert_eq!(unnamed, 1);
        }
        other => panic!("{other:?}"),
    }
}

/// One call that wakes several tasks preempts its caller once, after
/// the last wakeup; three calls that wake one each can preempt it
/// three times. Three sleepers and a waker share CPU 0 (2.6.26 on the
/// Q6600: wakeup granularity 10 ms × f = 3, sched_latency 20 ms × 3).
/// The waker runs 100 ms alone first. A woken sleeper keeps its own
/// vruntime (under 1 ms: it only ran up to its wait) unless that is
/// below min_vruntime − sched_latency (60 ms), which is at most 101 −
/// 60 = 41 ms; so each is at least 60 ms behind the waker, more than
/// the 30 ms granularity, and every wakeup would preempt it. With
/// SendAll all three get their message and the waker is preempted
/// once; with three Sends it is preempted after each and resumes
/// between them (each sleeper runs 100 µs, then exits).
#[test]
fn send_all_wakes_everyone_before_the_caller_is_preempted() {
    let run = |all: bool| {
        // The waker sleeps first, so the sleepers block before it runs.
        let nap = Action::Sleep { ns: 1_000_000, interruptible: false };
        let mut sends: Vec<Action> = vec![nap, Action::Run(100_000_000)];
        if all {
            sends.push(Action::SendAll { to: vec![1, 2, 3].into(), sync: false, bytes: 1, tag: 7 });
        } else {
            sends.extend((1..=3).map(|to| Action::Send { to, sync: false, bytes: 1, tag: 7 }));
        }
        sends.push(Action::Run(1_000_000));
        let sleeper = || script(vec![Action::Wait { all: true }, Action::Run(100_000), Action::Progress(1)]);
        let mut tasks = vec![pinned("waker", script(sends), 0, 0)];
        tasks.extend((1..=3).map(|i| pinned(&format!("s{i}"), sleeper(), 0, 0)));
        let inst = Instance { tasks, finish: vec![0, 1, 2, 3], sync: SyncObjects::NONE };
        let out = q6600_run(inst, limits(None, 1_000), |_| {}).unwrap();
        assert_eq!(out.units, 3, "every sleeper got its message");
        out.preemptions
    };
    assert_eq!(run(true), 1);
    assert_eq!(run(false), 3);
}

/// The caller of a SendAll pays one system call plus every wakeup:
/// with three sleepers pinned to CPU 1 (the other core of CPU 0's L2
/// on the Q6600), waking all three costs the waker on CPU 0 two more
/// wakeups than waking one. Only the first sends the reschedule IPI to
/// the idle CPU 1: the next two find TIF_NEED_RESCHED already set on
/// its idle task, and resched_task returns before smp_send_reschedule
/// (bce7f793 sched.c:1085-1105). So the two cost 2 × (0.5 µs local + 8
/// runqueue lines × 15 ns) = 1,240 ns, and the first 1,320 ns with its
/// 0.7 µs IPI (pinned to CPU 1, the sleepers are placed without
/// wake_affine's load reads); and three Sends cost two more system
/// calls (100 ns each) than one SendAll. Nothing else on CPU 0 differs
/// (no jitter, and the sleepers never run there).
#[test]
fn send_all_charges_one_call_and_every_wakeup() {
    let waker_ns = |sends: Vec<Action>| {
        let mut actions = vec![Action::Sleep { ns: 1_000_000, interruptible: false }, Action::Run(1_000_000)];
        actions.extend(sends);
        actions.push(Action::Run(1_000_000));
        let sleeper = || script(vec![Action::Wait { all: true }, Action::Progress(1)]);
        let mut tasks = vec![pinned("waker", script(actions), 0, 0)];
        tasks.extend((1..=3).map(|i| pinned(&format!("s{i}"), sleeper(), 1, 0)));
        let inst = Instance { tasks, finish: vec![0], sync: SyncObjects::NONE };
        let out = q6600_run(inst, limits(None, 1_000), |_| {}).unwrap();
        out.tasks[0].runtime_ns
    };
    let all = |to: Vec<TaskRef>| vec![Action::SendAll { to: to.into(), sync: false, bytes: 1, tag: 7 }];
    let one = |to| Action::Send { to, sync: false, bytes: 1, tag: 7 };
    let c = CostModel::preset("q6600").unwrap();
    let (first, more) =
        (round_u64(c.wake_cost(Reach::SharedCache, true)), round_u64(c.wake_cost(Reach::SharedCache, false)));
    assert_eq!((first, more), (1_320, 620));
    let three = waker_ns(all(vec![1, 2, 3]));
    assert_eq!(three - waker_ns(all(vec![1])), 2 * more);
    assert_eq!(waker_ns((1..=3).map(one).collect()) - three, 2 * 100);
}

/// One call wakes its sleepers in the wait queue's order, newest
/// sleeper first, whatever order the caller names them in: poll's
/// add_wait_queue and a wait-for-zero semop both insert at the head of
/// the queue, and the wakeup walks it from the head (bce7f793
/// fs/select.c:130, include/linux/wait.h:126, kernel/sched.c:4300,
/// ipc/sem.c:1151). Three sleepers, each alone on one of CPUs 1-3, go
/// to sleep after 30, 10 and 20 µs of work: s2 first, then s3, then s1.
/// The waker on CPU 0 names them s1, s2, s3 at 1 ms. The trace's wakeup
/// flows, numbered in the order the wakeups were made, end on CPU 1
/// (s1, the newest sleeper), then 3, then 2; in the order named they
/// would end on 1, 2, 3.
#[test]
fn send_all_wakes_the_newest_sleeper_first() {
    let sleeper =
        |run_us: u64| script(vec![Action::Run(run_us * 1_000), Action::Wait { all: true }, Action::Progress(1)]);
    let waker = script(vec![
        Action::Run(1_000_000),
        Action::SendAll { to: vec![1, 2, 3].into(), sync: false, bytes: 1, tag: 7 },
    ]);
    let tasks = vec![
        pinned("waker", waker, 0, 0),
        pinned("s1", sleeper(30), 1, 0),
        pinned("s2", sleeper(10), 2, 0),
        pinned("s3", sleeper(20), 3, 0),
    ];
    let inst = Instance { tasks, finish: vec![1, 2, 3], sync: SyncObjects::NONE };
    let out = q6600_run(inst, limits(None, 1_000), |_| {}).unwrap();
    assert_eq!(out.units, 3);
    let trace = out.trace.expect("traced").to_value().unwrap();
    let mut ends: Vec<(u64, u64)> = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "wake" && e["ph"] == "f")
        .map(|e| (e["id"].as_u64().unwrap(), e["tid"].as_u64().unwrap()))
        .collect();
    ends.sort();
    let cpus: Vec<u64> = ends.iter().map(|&(_, cpu)| cpu).collect();
    assert_eq!(cpus, [1, 3, 2]);
}

/// hackbench reads its clock once its children are ready: progress
/// before `StartMeasuring` is dropped, and the window runs from it to
/// the end. A task pinned to CPU 1 counts 5 units at 1 ms, then 3 more
/// after `StartMeasuring` at 2 ms and another 1 ms of work (no jitter,
/// clock factor 1.0: each `Run` takes its 1 ms plus only what the CPU
/// charges around it). The run's window is then end − 2 ms, and a
/// setting written at 1.5 ms cuts it into a phase wholly before the
/// start, which counts nothing, and one from the start, with all 3.
#[test]
fn start_measuring_restarts_the_window() {
    let task = script(vec![
        Action::Run(1_000_000),
        Action::Progress(5),
        Action::Run(1_000_000),
        Action::StartMeasuring,
        Action::Run(1_000_000),
        Action::Progress(3),
    ]);
    let inst = Instance { tasks: vec![pinned("t", task, 1, 0)], finish: vec![0], sync: SyncObjects::NONE };
    let change = Change { at_ns: 1_500_000, setting: Setting::Features("895".into()) };
    let out = q6600_run(inst, limits(None, 100), |s| s.changes = vec![change]).unwrap();
    assert_eq!(out.units, 3);
    let start = out.end_ns - out.window_ns;
    assert!((2_000_000..2_050_000).contains(&start), "window from {start} ns");
    assert!((1_000_000..1_050_000).contains(&out.window_ns), "{} ns", out.window_ns);
    assert_eq!(out.phases.len(), 2, "{:?}", out.phases);
    assert_eq!((out.phases[0].start_ns, out.phases[0].end_ns, out.phases[0].units), (1_500_000, 1_500_000, 0));
    assert_eq!((out.phases[1].start_ns, out.phases[1].end_ns, out.phases[1].units), (start, out.end_ns, 3));
}

/// The phases' waits are the schedstat totals' differences between change
/// times: over the phases they add up to the run's, task by task summed.
/// Two hogs pinned to one CPU wait for each other all run long, so every
/// phase of a 200 ms run cut at 50 and 120 ms ends some waits.
#[test]
fn phase_waits_add_up_to_the_runs() {
    let hog = || script((0..400).flat_map(|_| [Action::Run(1_000_000), Action::Progress(1)]).collect());
    let inst = Instance {
        tasks: vec![pinned("a", hog(), 0, 0), pinned("b", hog(), 0, 0)],
        finish: vec![],
        sync: SyncObjects::NONE,
    };
    let changes = vec![
        Change { at_ns: 50_000_000, setting: Setting::Features("895".into()) },
        Change { at_ns: 120_000_000, setting: Setting::Features("895".into()) },
    ];
    let out = q6600_run(inst, limits(Some(200), 300), |s| s.changes = changes).unwrap();
    assert_eq!(out.phases.len(), 3, "{:?}", out.phases);
    let sum: u64 = out.phases.iter().map(|p| p.wait_sum_ns).sum();
    let count: u64 = out.phases.iter().map(|p| p.wait_count).sum();
    assert_eq!(sum, out.tasks.iter().map(|t| t.wait_sum_ns).sum::<u64>());
    assert_eq!(count, out.tasks.iter().map(|t| t.wait_count).sum::<u64>());
    assert!(out.phases.iter().all(|p| p.wait_count > 0), "{:?}", out.phases);
}

#[test]
fn a_hog_keeps_its_cpu_busy() {
    let host = Host::preset("x2").unwrap();
    let costs = CostModel::preset("x2").unwrap();
    let limits = Limits::new(Some(100_000_000), 0, 1_000_000_000);
    let mut k = 0u64;
    let hog = FnProgram(move |_cx: &mut StepCx<'_>| {
        k += 1;
        if k % 2 == 1 { Action::Run(1_000_000) } else { Action::Progress(1) }
    });
    let inst = Instance { tasks: vec![free("h", Box::new(hog), 1)], finish: vec![], sync: SyncObjects::NONE };
    let out = run(&setup(&host, &costs, limits), inst).unwrap();
    assert!(out.cpu_busy_ns[1] > 99_000_000, "{:?}", out.cpu_busy_ns);
    // 1 ms of baseline work at the X2's clock factor 1.06, with jitter.
    assert!((85..=100).contains(&out.units), "{}", out.units);
}

/// The wasted-cores gap: while a second task shares CPU 0 with a hog
/// (both pinned there) the Q6600's other three CPUs are idle. A task
/// that wakes at 5 ms and runs 1 ms preempts the hog at once (wakeup
/// preemption), so the gap closes when it exits, ~1 ms later; one that
/// keeps running leaves the gap open to the end of the 25 ms run, and
/// the measure follows it at every event inside it. (b is listed first
/// so that it runs into its sleep before the hog takes the CPU.)
#[test]
fn the_idle_gap_probe_measures_from_its_start() {
    let gap = |second: Box<dyn Program>| {
        let tasks = vec![pinned("b", second, 0, 0), pinned("hog", hog(), 0, 0)];
        let watch = |s: &mut RunSetup<'_>| s.instruments = Instruments { watch: true, ..Instruments::default() };
        let inst = Instance { tasks, finish: Vec::new(), sync: SyncObjects::NONE };
        q6600_run(inst, limits(Some(25), 1_000), watch).unwrap().probe.worst_idle_gap_ns
    };
    let sleep = || Action::Sleep { ns: 5_000_000, interruptible: false };
    let short = gap(script(vec![sleep(), Action::Run(1_000_000)]));
    assert!((1_000_000..1_100_000).contains(&short), "{short}");
    let long = gap(script(vec![sleep(), Action::Run(100_000_000)]));
    // The last event inside it is CPU 1's tick at 24.5 ms (CPU n ticks
    // n x 0.5 ms into each 4 ms jiffy; CPU 2's at 25 ms meets the end):
    // 24.5 - 5 ms, less the few µs b took to wake and be queued.
    assert!((19_490_000..19_500_000).contains(&long), "{long}");
}

/// The 1:N measure: a waker on CPU 0 wakes ten wakees in turn (100 µs
/// of work per wakeup, sync hint, 50 µs per wakee run), for 200 ms.
/// With every wakee pinned to CPU 0 the windows are serialised for most
/// of the run (from 20 ms on: until then the wakees, queued behind the
/// waker's first slice, have not yet run into their first wait, so its
/// sends find them queued and wake no one), and the measure sees one
/// wakee run per wakeup. With one
/// wakee of ten on CPU 1, 90% of their runs are on the waker's CPU,
/// short of the 95% a window needs: no streak at all.
#[test]
fn the_one_to_n_probe_needs_95_percent_on_the_wakers_cpu() {
    let streak = |wakee_cpu: fn(usize) -> usize| {
        let mut k = 0usize;
        let mut ran = false;
        let waker = FnProgram(move |_cx: &mut StepCx<'_>| {
            ran = !ran;
            if ran {
                return Action::Run(100_000);
            }
            k += 1;
            Action::Send { to: k % 10 + 1, sync: true, bytes: 64, tag: 0 }
        });
        let mut tasks = vec![pinned("waker", Box::new(waker), 0, 0)];
        for i in 0..10 {
            let mut waiting = false;
            let wakee = FnProgram(move |_cx: &mut StepCx<'_>| {
                waiting = !waiting;
                if waiting { Action::Wait { all: true } } else { Action::Run(50_000) }
            });
            tasks.push(pinned(&format!("w{i}"), Box::new(wakee), wakee_cpu(i), 0));
        }
        let watch = |s: &mut RunSetup<'_>| {
            s.instruments = Instruments { one_to_n_waker: Some("waker".into()), ..Instruments::default() }
        };
        let out =
            q6600_run(Instance { tasks, finish: Vec::new(), sync: SyncObjects::NONE }, limits(Some(200), 1_000), watch);
        let out = out.unwrap();
        (out.probe.one_to_n_streak_ns, out.probe.one_to_n_wakees as u64, out.counters.wakeups)
    };
    let (serial, runs, wakeups) = streak(|_| 0);
    assert!(serial >= 150_000_000, "{serial}");
    assert!(wakeups > 900 && (wakeups - 1..=wakeups).contains(&runs), "{runs} runs, {wakeups} wakeups");
    assert_eq!(streak(|i| usize::from(i == 9)).0, 0);
}

/// `renice` mid-run (`--switch 0s:client-nice=5` and the like) reweights
/// each task of the side it names and no other. Three hogs share CPU 0: c
/// on the client side, s on the server side, h on neither (booted at nice
/// 5). On one runqueue CFS gives each a share of its weight over the sum
/// (prio_to_weight: nice -5 = 3121, 0 = 1024, 5 = 335), so over 2 s:
/// - as booted: c, s 1024 each, h 335: 1024 / 2383 = 0.430 for c;
/// - `client-nice=5`: c 335, s 1024, h 335: 335 / 1694 = 0.198;
/// - `server-nice=-5`: s 3121 of 1024 + 3121 + 335 = 4480: 0.697;
/// - `nice=0`: every task at 1024, h included: a third each.
///
/// A slice is at most sched_latency x ilog(4 CPUs) + 1 = 60 ms, so the
/// shares land within 0.02 of the weights' over 2 s.
#[test]
fn renicing_a_side_reweights_its_tasks_only() {
    let shares = |changes: Vec<Change>| {
        let side = |t: TaskSpec, s: Option<Side>| TaskSpec { side: s, ..t };
        let mut h = pinned("h", hog(), 0, 0);
        h.params = h.params.nice(5);
        let tasks = vec![
            side(pinned("c", hog(), 0, 0), Some(Side::Client)),
            side(pinned("s", hog(), 0, 0), Some(Side::Server)),
            h,
        ];
        let inst = Instance { tasks, finish: Vec::new(), sync: SyncObjects::NONE };
        let out = q6600_run(inst, limits(Some(2_000), 3_000), |s| s.changes = changes).unwrap();
        let total: u64 = out.tasks.iter().map(|t| t.runtime_ns).sum();
        out.tasks.iter().map(|t| t.runtime_ns as f64 / total as f64).collect::<Vec<_>>()
    };
    let at0 = |setting| vec![Change { at_ns: 0, setting }];
    let close = |got: f64, want: f64| assert!((got - want).abs() < 0.02, "{got} vs {want}");
    let booted = shares(Vec::new());
    close(booted[0], 1024.0 / 2383.0);
    close(booted[2], 335.0 / 2383.0);
    let client = shares(at0(Setting::Nice(Some(Side::Client), 5)));
    close(client[0], 335.0 / 1694.0);
    close(client[1], 1024.0 / 1694.0);
    let server = shares(at0(Setting::Nice(Some(Side::Server), -5)));
    close(server[1], 3121.0 / 4480.0);
    close(server[2], 335.0 / 4480.0);
    let all = shares(at0(Setting::Nice(None, 0)));
    for s in all {
        close(s, 1.0 / 3.0);
    }
}

/// Where a task ran longest (`TaskStat::main_cpu`, the task table's
/// `mostly_on`): one hog pinned to CPU 0 and moved to CPU 1 by a `taskset
/// -p` at 30 ms of a 40 ms run has run ~30 ms on CPU 0 and ~10 ms on CPU 1,
/// so CPU 0; moved at 10 ms, ~10 against ~30, so CPU 1. Its time is booked
/// from switch-in to switch-out, and to the end of the run while it still
/// runs.
#[test]
fn a_task_is_reported_where_it_ran_longest() {
    let main_cpu = |move_at_ms: u64| {
        let inst = Instance { tasks: vec![pinned("h", hog(), 0, 0)], finish: Vec::new(), sync: SyncObjects::NONE };
        let change = Change { at_ns: move_at_ms * 1_000_000, setting: Setting::Affinity(None, CpuMask::single(1)) };
        let out = q6600_run(inst, limits(Some(40), 100), |s| s.changes = vec![change]).unwrap();
        (out.tasks[0].main_cpu, out.tasks[0].migrations)
    };
    assert_eq!(main_cpu(30), (Some(0), 1));
    assert_eq!(main_cpu(10), (Some(1), 1));
}

/// The trace marks each task the balancer moved, on the CPU it moved to,
/// one instant per move the run's counters hold (periodic, newly idle,
/// active). Four hogs start on CPU 0 of the Q6600 under 2.6.26 and may run
/// anywhere. CPU n ticks n × 0.5 ms into each 4 ms jiffy (HZ 250, the
/// hrtimer stagger of tick_setup_sched_timer), and balancing starts at
/// jiffy 1, so the idle CPUs balance in CPU order (`cfs-sim run` of the
/// same four hogs with `RUST_LOG=cfs_core=trace` shows each pass's
/// verdict):
/// - CPU 1 at 4.5 ms, at MC (idle_idx 0, loads now): CPU 0 holds 4096
///   against an average of 2048, so the imbalance is 2048 and two
///   never-run (cold) hogs move;
/// - CPU 2 at 5 ms, at the CPU level (idle_idx 1: the lower of each CPU's
///   load at its own last tick and now): CPU 0 min(4096 at 4 ms, 2048),
///   CPU 1 min(0 at 4.5 ms, 2048), so die {0,1} holds 2048 with 4 tasks
///   over a capacity of 1; the average is 1024 and so is the imbalance;
///   of the two equal queues (2048 each) CPU 0 comes first, and its one
///   queued hog moves;
/// - CPU 3 at 5.5 ms, at the CPU level: die {0,1} reads min(4096, 1024) +
///   min(0, 2048) = 1024, its own die max(0, 1024) + 0 = 1024: balanced.
///
/// At 9.5 ms, after CPU 0 and CPU 1 have ticked at 8 and 8.5 ms (1024 and
/// 2048), CPU 3 finds CPU 1 the busiest queue, but CPU 1's queued hog
/// (hog3; it runs hog2, whose vruntime is lower) is the oldest entry of
/// its task list, which 2.6.26's load-balance iterator never returns:
/// three moves in all. With `iterator-fix` (38736f47507) the fourth hog
/// reaches CPU 3 at 9.5 ms.
#[test]
fn the_trace_marks_each_task_the_balancer_moved() {
    let moves_of = |fix: bool| {
        let tasks = (0..4).map(|i| free(&format!("hog{i}"), hog(), 0)).collect();
        let inst = Instance { tasks, finish: vec![], sync: SyncObjects::NONE };
        let out = q6600_run(inst, limits(Some(20), 100), |s| {
            if fix {
                s.config = s.config.with_patch(cfs_core::Patch::IteratorFix).unwrap();
            }
        })
        .unwrap();
        let c = &out.counters;
        let by_balance = c.mig_periodic + c.mig_newidle + c.mig_active;
        let trace = out.trace.expect("traced").to_value().unwrap();
        let moves: Vec<(u64, f64, u64, String)> = trace["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["cat"] == "balance")
            .map(|e| {
                assert_eq!((e["ph"].as_str(), e["name"].as_str()), (Some("i"), Some("pulled (periodic balance)")));
                let name = e["args"]["name"].as_str().unwrap().to_string();
                (e["tid"].as_u64().unwrap(), e["ts"].as_f64().unwrap(), e["args"]["from"].as_u64().unwrap(), name)
            })
            .collect();
        assert_eq!(moves.len() as u64, by_balance);
        moves
    };
    let hog = |n: u32| format!("hog{n}");
    // The iterator offers the newest entries first: hog3, hog2 from CPU 0 to
    // CPU 1, then hog1 (hog0 runs) to CPU 2.
    let first = [(1, 4_500.0, 0, hog(3)), (1, 4_500.0, 0, hog(2)), (2, 5_000.0, 0, hog(1))];
    assert_eq!(moves_of(false), first);
    let fixed = moves_of(true);
    assert_eq!(fixed[..3], first);
    assert_eq!(fixed.len(), 4);
    assert_eq!((fixed[3].0, fixed[3].1, fixed[3].2), (3, 9_500.0, 1));
}

/// A hog pinned to CPU 0 that counts one unit per 1 ms of work, for
/// 1 s, with `irqs` injected; jitter off.
fn counted_hog(irqs: Vec<IrqLoad>, seed: u64) -> Result<RunOutcome, SimError> {
    counted_hog_with(irqs, seed, vec![], vec![])
}

/// [`counted_hog`] with settings written mid-run and CPUs slowed from
/// the start.
fn counted_hog_with(
    irqs: Vec<IrqLoad>,
    seed: u64,
    changes: Vec<Change>,
    slow: Vec<Slowdown>,
) -> Result<RunOutcome, SimError> {
    let mut n = 0u64;
    let prog = FnProgram(move |_cx: &mut StepCx<'_>| {
        n += 1;
        if n % 2 == 1 { Action::Run(1_000_000) } else { Action::Progress(1) }
    });
    let inst = Instance { tasks: vec![pinned("hog", Box::new(prog), 0, 0)], finish: vec![], sync: SyncObjects::NONE };
    q6600_run(inst, limits(Some(1_000), 2_000), |s| {
        s.irqs = irqs;
        s.seed = seed;
        s.changes = changes;
        s.slow = slow;
    })
}

fn irq(s: &str) -> IrqLoad {
    s.parse().unwrap()
}

#[test]
fn interrupt_load_takes_its_share_from_the_task_it_interrupts() {
    let quiet = counted_hog(vec![], 3).unwrap();
    // Alone on its CPU the hog does 1,000 ms of work in 1 s, less its
    // first switch in (1.8 µs): the 1,000th unit ends just after the run.
    assert_eq!(quiet.units, 999);
    assert_eq!((quiet.irqs, quiet.irq_task_ns), (0, 0));
    // Handlers of 50 µs every 1 ms on its CPU: at 1, 2, ... 999 ms (the
    // one at 1 s comes after the run's end, scheduled before it), all of
    // them while it runs. It keeps 1 s - 999 x 50 µs = 950.05 ms of its
    // own work: 950 units, a twentieth fewer.
    let noisy = counted_hog(vec![irq("cpus=0,every=1ms,takes=50us")], 3).unwrap();
    assert_eq!(noisy.irqs, 999);
    assert_eq!(noisy.irq_task_ns, 999 * 50_000);
    assert_eq!(noisy.units, 950);
    // The trace draws each handler as a 50 µs `irq` slice on CPU 0's
    // track, inside the hog's slice (it never leaves the CPU).
    let v = noisy.trace.as_ref().unwrap().to_value().unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    let irqs: Vec<&serde_json::Value> = events.iter().filter(|e| e["name"] == "irq").collect();
    assert_eq!(irqs.len(), 999);
    assert!(irqs.iter().all(|e| e["tid"] == 0 && e["dur"] == 50.0 && e["cat"] == "irq"));
    assert_eq!(irqs[0]["ts"], 1_000.0);
    let hog: Vec<&serde_json::Value> = events.iter().filter(|e| e["name"] == "hog").collect();
    assert_eq!(hog.len(), 1);
    let (from, to) = (hog[0]["ts"].as_f64().unwrap(), hog[0]["ts"].as_f64().unwrap() + hog[0]["dur"].as_f64().unwrap());
    assert!(irqs.iter().all(|e| (from..=to).contains(&e["ts"].as_f64().unwrap())));
    // The same load on CPU 3, idle throughout, takes nothing from anyone
    // and draws nothing from the run's own random stream: the run is the
    // quiet one, event for event, except the interrupts themselves (each
    // an arrival and a return).
    let elsewhere = counted_hog(vec![irq("cpus=3,every=1ms,takes=50us")], 3).unwrap();
    assert_eq!((elsewhere.units, elsewhere.irq_task_ns, elsewhere.irqs), (999, 0, 999));
    assert_eq!(elsewhere.switches, quiet.switches);
    assert_eq!(elsewhere.events, quiet.events + 2 * 999);
}

#[test]
fn poisson_interrupts_come_from_their_own_seeded_stream() {
    // Exponential gaps with a 1 ms mean: ~1,000 arrivals in 1 s (a
    // Poisson count, standard deviation ~32; 900-1,100 is three of them).
    let load = || vec![irq("cpus=0,mean=1ms,takes=50us")];
    let a = counted_hog(load(), 3).unwrap();
    assert!((900..=1_100).contains(&a.irqs), "{}", a.irqs);
    // Every one interrupted the hog, and each took its 50 µs.
    assert_eq!(a.irq_task_ns, a.irqs * 50_000);
    // The same seed draws the same arrivals; another seed others.
    let again = counted_hog(load(), 3).unwrap();
    assert_eq!((again.irqs, again.units, again.events), (a.irqs, a.units, a.events));
    let other = counted_hog(load(), 4).unwrap();
    assert_ne!(other.irqs, a.irqs);
}

#[test]
fn an_interrupt_load_on_a_missing_cpu_is_an_error() {
    let e = counted_hog(vec![irq("cpus=2-4,every=1ms,takes=1us")], 3).unwrap_err();
    assert!(matches!(e, SimError::FaultCpu { cpu: 4, nr_cpus: 4, .. }), "{e:?}");
    assert_eq!(e.to_string(), "interrupt load cpus=2-4,every=1ms,takes=1us: CPU 4 does not exist (the host has 4)");
    // So does one that a change would start mid-run, and a slowdown: the
    // run fails before it starts.
    let late = |setting| counted_hog_with(vec![], 3, vec![Change { at_ns: 500_000_000, setting }], vec![]);
    let e = late(Setting::Irq(irq("cpus=7,every=1ms,takes=1us"))).unwrap_err();
    assert_eq!(e.to_string(), "interrupt load cpus=7,every=1ms,takes=1us: CPU 7 does not exist (the host has 4)");
    let e = late(Setting::Slow(slow("cpus=1,5,speed=50%"))).unwrap_err();
    assert_eq!(e.to_string(), "slowdown cpus=1,5,speed=50%: CPU 5 does not exist (the host has 4)");
    let e = counted_hog_with(vec![], 3, vec![], vec![slow("cpus=4,speed=50%")]).unwrap_err();
    assert!(matches!(e, SimError::FaultCpu { cpu: 4, .. }), "{e:?}");
}

/// The CPU-time check follows the faults through the run: two 60%
/// interrupt loads on CPU 0 are refused while both would run (120%), and
/// accepted when `irq=off` at 300 ms stops the first before the second
/// starts at 600 ms. That run then takes 299 interrupts from the first (at
/// 1-299 ms; the change goes before the arrival due at 300 ms) and 399
/// from the second (601-999 ms): 698.
#[test]
fn interrupt_loads_that_never_overlap_may_add_past_a_whole_cpu() {
    let at = |ms: u64, setting| Change { at_ns: ms * 1_000_000, setting };
    let load = || irq("cpus=0,every=1ms,takes=600us");
    let both = counted_hog_with(vec![load()], 3, vec![at(600, Setting::Irq(load()))], vec![]).unwrap_err();
    assert!(matches!(both, SimError::Fault(_)), "{both:?}");
    let apart = counted_hog_with(vec![load()], 3, vec![at(300, Setting::NoIrq), at(600, Setting::Irq(load()))], vec![])
        .unwrap();
    assert_eq!(apart.irqs, 698);
}

fn slow(s: &str) -> Slowdown {
    s.parse().unwrap()
}

/// A slowed CPU does its work at its speed, and the scheduler is not
/// told. The counted hog alone on CPU 0 (1 ms of work a unit, 1 s):
/// - at 50% its first switch-in (1.8 µs of work) takes 3.6 µs and each
///   unit 2 ms, so unit k ends at 3.6 µs + 2k ms: 499 units by 1 s (the
///   500th ends 3.6 µs after it); at 25%, 7.2 µs + 4k ms: 249.
/// - update_curr still charges wall time: the hog's runtime is the whole
///   second, as at full speed.
/// - with 50 µs handlers every 1 ms as well, each handler takes 100 µs
///   at half speed: 999 of them take 99.9 ms from the hog, which keeps
///   900.1 ms of CPU at half speed, 450.05 ms of work less its switch:
///   450 units.
#[test]
fn a_slowed_cpu_does_its_work_at_its_speed() {
    let full = counted_hog(vec![], 3).unwrap();
    let half = counted_hog_with(vec![], 3, vec![], vec![slow("cpus=0,speed=50%")]).unwrap();
    assert_eq!(half.units, 499);
    let quarter = counted_hog_with(vec![], 3, vec![], vec![slow("cpus=0,speed=25%")]).unwrap();
    assert_eq!(quarter.units, 249);
    assert_eq!(half.tasks[0].runtime_ns, full.tasks[0].runtime_ns);
    assert!(half.tasks[0].runtime_ns > 999_000_000, "{}", half.tasks[0].runtime_ns);
    let noisy =
        counted_hog_with(vec![irq("cpus=0,every=1ms,takes=50us")], 3, vec![], vec![slow("cpus=0,speed=50%")]).unwrap();
    assert_eq!((noisy.irqs, noisy.irq_task_ns, noisy.units), (999, 999 * 100_000, 450));
    // A slowdown of another CPU changes nothing here, and a later one
    // overrides an earlier one on the same CPU.
    let other = counted_hog_with(vec![], 3, vec![], vec![slow("cpus=1-3,speed=10%")]).unwrap();
    assert_eq!((other.units, other.events), (full.units, full.events));
    let both = counted_hog_with(vec![], 3, vec![], vec![slow("cpus=0,speed=10%"), slow("cpus=0,speed=50%")]);
    assert_eq!(both.unwrap().units, 499);
}

/// Faults switched on and off mid-run. The counted hog (1 s, unit k of
/// 1 ms ending at 1.8 µs + k ms at full speed):
/// - slowed to 50% at 250 ms and back to 100% at 750 ms: the unit in
///   flight at 250 ms has 1.8 µs of work left, done in 3.6 µs; then one
///   unit every 2 ms to 750 ms, where the one in flight again has 1.8 µs
///   left, now done in 1.8 µs. The phases count 249 units (1-249), 250
///   (250-499, the last at 748.0036 ms) and 250 (500-749): 749 in all,
///   the 750 ms of work the second held less the switch.
/// - 50 µs handlers every 1 ms from 500 ms: arrivals at 501-999 ms, 499
///   of them, 24.95 ms lost: 1,000 ms - 1.8 µs - 24.95 ms of work leaves
///   975 units. Stopped by `irq=off` at 750 ms (the change, queued first,
///   goes before the arrival due at the same instant): 501-749 ms, 249
///   arrivals, 12.45 ms: 987 units.
#[test]
fn faults_start_and_stop_mid_run() {
    let at = |ms: u64, setting| Change { at_ns: ms * 1_000_000, setting };
    let slowed = counted_hog_with(
        vec![],
        3,
        vec![at(250, Setting::Slow(slow("cpus=0,speed=50%"))), at(750, Setting::Slow(slow("cpus=0,speed=100%")))],
        vec![],
    )
    .unwrap();
    assert_eq!(slowed.units, 749);
    assert_eq!(slowed.phases.iter().map(|p| p.units).collect::<Vec<_>>(), [249, 250, 250]);
    // The trace marks each speed change on CPU 0's track (in µs).
    let v = slowed.trace.as_ref().unwrap().to_value().unwrap();
    let speeds: Vec<(String, f64, u64)> = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "slow")
        .map(|e| (e["name"].as_str().unwrap().to_string(), e["ts"].as_f64().unwrap(), e["tid"].as_u64().unwrap()))
        .collect();
    assert_eq!(speeds, [("speed 50%".to_string(), 250_000.0, 0), ("speed 100%".to_string(), 750_000.0, 0)]);
    // Each is an instant event ("ph": "i") scoped to its track ("s": "t").
    let marks = v["traceEvents"].as_array().unwrap().iter().filter(|e| e["cat"] == "slow");
    assert!(marks.clone().count() == 2 && marks.into_iter().all(|e| e["ph"] == "i" && e["s"] == "t"));
    let from = |changes| counted_hog_with(vec![], 3, changes, vec![]).unwrap();
    let load = || Setting::Irq(irq("cpus=0,every=1ms,takes=50us"));
    let started = from(vec![at(500, load())]);
    assert_eq!((started.irqs, started.units), (499, 975));
    let stopped = from(vec![at(500, load()), at(750, Setting::NoIrq)]);
    assert_eq!((stopped.irqs, stopped.units), (249, 987));
    // `irq=off` stops `--irq`'s loads too: 999 ms of 1 ms interrupts
    // become 499 (1-499 ms) when stopped at 500 ms.
    let boot = counted_hog_with(vec![irq("cpus=0,every=1ms,takes=50us")], 3, vec![at(500, Setting::NoIrq)], vec![]);
    assert_eq!(boot.unwrap().irqs, 499);
}

/// One 100 ms unit of work on the Q6600 (jitter off, the balancer's scans
/// free) as the task `task` makes of its program, under `changes` and
/// `slowed`: when it ended, and the run.
fn one_unit(
    task: impl FnOnce(Box<dyn Program>) -> TaskSpec,
    changes: Vec<Change>,
    slowed: Vec<Slowdown>,
) -> (u64, RunOutcome) {
    let ended = std::rc::Rc::new(std::cell::Cell::new(0u64));
    let seen = ended.clone();
    let mut n = 0u64;
    let prog = FnProgram(move |cx: &mut StepCx<'_>| {
        n += 1;
        if n == 1 {
            Action::Run(100_000_000)
        } else {
            seen.set(cx.now);
            Action::Exit
        }
    });
    let host = Host::preset("q6600").unwrap();
    let mut costs = CostModel::preset("q6600").unwrap();
    costs.jitter_cv = 0.0;
    costs.scan_ns_per_cpu = 0.0;
    let mut s = setup(&host, &costs, limits(Some(1_000), 2_000));
    s.changes = changes;
    s.slow = slowed;
    let out = run(&s, Instance { tasks: vec![task(Box::new(prog))], finish: vec![], sync: SyncObjects::NONE }).unwrap();
    (ended.get(), out)
}

/// Work in flight when a CPU changes speed is split at the change: what
/// was done at the old speed stays done. One 100 ms unit on the Q6600's
/// CPU 0, jitter off and the balancer's scans free (so the only other
/// work is the 1.8 µs switch-in its first segment carries: 100.0018 ms of
/// work from 0):
/// - at full speed it ends at 100.0018 ms;
/// - at 50% from the start, restored at 50 ms: 25 ms done by then,
///   75.0018 ms left at full speed: it ends at 125.0018 ms;
/// - at full speed, slowed to 50% at 50 ms: 50 ms done, 50.0018 ms left
///   at half speed take 100.0036 ms: 150.0036 ms;
/// - at 50% throughout: 200.0036 ms.
#[test]
fn work_in_flight_keeps_what_was_done_at_the_old_speed() {
    let at = |ms: u64, speed: &str| Change { at_ns: ms * 1_000_000, setting: Setting::Slow(slow(speed)) };
    let end_of_unit = |changes: Vec<Change>, slowed: Vec<Slowdown>| {
        let (end, _) = one_unit(|prog| pinned("unit", prog, 0, 0), changes, slowed);
        end
    };
    let half = || vec![slow("cpus=0,speed=50%")];
    assert_eq!(end_of_unit(vec![], vec![]), 100_001_800);
    assert_eq!(end_of_unit(vec![at(50, "cpus=0,speed=100%")], half()), 125_001_800);
    assert_eq!(end_of_unit(vec![at(50, "cpus=0,speed=50%")], vec![]), 150_003_600);
    assert_eq!(end_of_unit(vec![], half()), 200_003_600);
}

/// What 2.6.32's ARCH_POWER reads of a slowed CPU: an Intel host's CPUs
/// have APERF/MPERF, whose ratio is 1024 at the nominal clock and scales
/// with the speed (50% → 512, 25% → 256, 87.5% → 896); the X2 (AMD K8)
/// has none, so the scheduler keeps its generic hooks there.
#[test]
fn a_slowed_cpu_reports_its_clock_ratio_where_the_host_has_aperf_mperf() {
    assert_eq!(
        [1000, 500, 250, 875, 1].map(aperf_mperf_ratio),
        [1024, 512, 256, 896, 1],
        "permille x 1024 / 1000, truncated"
    );
    let ratios = |name: &str, slow: &[&str]| {
        let host = Host::preset(name).unwrap();
        let costs = CostModel::preset(name).unwrap();
        let mut s = setup(&host, &costs, limits(None, 1_000));
        s.slow = slow.iter().map(|x| x.parse().unwrap()).collect();
        let inst = Instance { tasks: vec![free("t", hog(), 0)], finish: vec![], sync: SyncObjects::NONE };
        let sim = Sim::new(&s, inst).unwrap();
        (0..host.nr_cpus()).map(|c| sim.sched.arch_freq_power(c)).collect::<Vec<_>>()
    };
    let q = ratios("q6600", &["cpus=1,speed=50%", "cpus=2-3,speed=87.5%"]);
    assert_eq!(q, [Some(1024), Some(512), Some(896), Some(896)]);
    assert_eq!(ratios("x2", &["cpus=1,speed=50%"]), [None, None]);
}

/// The threads of an SMT core share it (`smt_throughput`, the kernel's
/// smt_gain 1178/1024 = 1.15): alone a thread runs at full speed; with
/// its sibling busy each gets round(1.15 x 1000) / 2 = 575 thousandths.
/// On Nehalem-EP (clock factor set to 1 and jitter off, so 1 ms of work
/// is 1 ms), a hog counting 1 ms units for 1 s beside a second task:
/// - on CPU 0 with a hog on CPU 8, the other thread of core 0: a unit
///   takes ceil(1 ms x 1000 / 575) = 1.739131 ms; 574 of them end by 1 s
///   (575 would end at 1,000.0003 ms); its runtime is still the whole
///   second (the scheduler sees wall time);
/// - the same with the task on CPU 8 running 500 ms of work and exiting:
///   that takes 500 / 0.575 = 869.57 ms, after which CPU 0 runs alone at
///   full speed: 869.57 x 0.575 + 130.43 = 630.43 ms of work, 630 units;
/// - on CPU 1, a core of its own: 999 units (its first switch-in delays
///   the 1,000th past the end);
/// - with smt_throughput 2 every thread runs as if alone: 999.
#[test]
fn smt_siblings_share_their_core() {
    let run = |cpu: usize, sibling: Box<dyn Program>, smt: f64| {
        let host = Host::preset("nehalem-ep").unwrap();
        let mut costs = CostModel::preset("nehalem-ep").unwrap();
        costs.jitter_cv = 0.0;
        costs.clock_factor = 1.0;
        costs.smt_throughput = smt;
        let mut s = setup(&host, &costs, limits(Some(1_000), 2_000));
        s.trace = false;
        let tasks = vec![pinned("a", counting(), cpu, 0), pinned("b", sibling, 8, 0)];
        run(&s, Instance { tasks, finish: vec![], sync: SyncObjects::NONE }).unwrap()
    };
    let gain = crate::costs::SMT_GAIN;
    let both = run(0, hog(), gain);
    assert_eq!(both.units, 574);
    assert!(both.tasks[0].runtime_ns > 999_000_000, "{}", both.tasks[0].runtime_ns);
    assert_eq!(run(0, script(vec![Action::Run(500_000_000)]), gain).units, 630);
    assert_eq!(run(1, hog(), gain).units, 999);
    assert_eq!(run(0, hog(), 2.0).units, 999);
}

/// Work 1 ms, count it, repeat.
fn counting() -> Box<dyn Program> {
    let mut n = 0u64;
    Box::new(FnProgram(move |_cx: &mut StepCx<'_>| {
        n += 1;
        if n % 2 == 1 { Action::Run(1_000_000) } else { Action::Progress(1) }
    }))
}

/// A CPU going down mid-run (`Setting::Offline`). One 100 ms unit started
/// on the Q6600's CPU 3, jitter off and the balancer's scans free, so its
/// first segment is 100.0018 ms of work (the 1.8 µs switch-in). CPU 3 goes
/// down at 50 ms: 50 ms are done and 50.0018 ms are kept; cfs-core moves
/// the task to CPU 0, the first online CPU it allows, which is idle and
/// hears of it from itself (the command runs there) after its 5 µs idle
/// exit; switched in again (1.8 µs), it ends at 50 ms + 5 µs + 1.8 µs +
/// 50.0018 ms = 100.0086 ms. Pinned to CPU 3 the same happens through the
/// kernel's "no longer affine" fallback, which the counters report.
/// Brought back up at 60 ms, CPU 3 stays idle: nothing moves a task that
/// runs alone on its CPU. CPU 3 was busy for the 50 ms before it went
/// down, CPU 0 from 50.005 ms to the end of the exit's 0.1 µs system
/// call.
#[test]
fn a_cpu_going_down_hands_its_task_on_with_the_work_left() {
    let at = |ms: u64, setting| Change { at_ns: ms * 1_000_000, setting };
    let run_unit = |pin: bool, changes: Vec<Change>| {
        one_unit(|p| if pin { pinned("unit", p, 3, 0) } else { free("unit", p, 3) }, changes, vec![])
    };
    let (alone, base) = run_unit(false, vec![]);
    assert_eq!(alone, 100_001_800);
    for pin in [false, true] {
        let (end, out) = run_unit(pin, vec![at(50, Setting::Offline(3)), at(60, Setting::Online(3))]);
        assert_eq!(end, 100_008_600, "pinned: {pin}");
        assert_eq!((out.counters.mig_hotplug, out.counters.affinity_broken), (1, u64::from(pin)));
        assert_eq!(out.cpu_busy_ns[3], 50_000_000);
        assert_eq!(out.cpu_busy_ns[0], end + 100 - 50_005_000);
        // Two more context switches (the stop thread's preemption on CPU
        // 3, the switch-in on CPU 0), the first a preemption.
        assert_eq!((out.switches, out.preemptions), (base.switches + 2, base.preemptions + 1));
        // The trace marks the move on CPU 0's track as a hotplug one.
        assert_eq!(move_marks(&out), [("hotplug".to_string(), 0, 3)]);
    }
}

/// A CPU going down hands its interrupts on (fixup_irqs, `IrqRoutes`):
/// handlers of 50 µs every 1 ms steered to CPU 3, with the counted hog
/// pinned to CPU 0 (1 unit per 1 ms of work, 1 s). Arrivals come at 1, 2,
/// ..., 999 ms. CPU 3 goes down at 500.5 ms: the 500 before land on the
/// idle CPU 3 and take nothing from the hog; the 499 from 501 ms on go to
/// CPU 0, the first online CPU of the broken affinity, and each takes 50
/// µs from the hog: 1 s − 1.8 µs (its switch-in) − 499 × 50 µs = 975.048
/// ms of work, 975 units. CPU 3 coming back at 700.5 ms changes nothing:
/// the broken affinity stays. (Until 2026-12-04 a down CPU's interrupts
/// paused instead, and the hog kept all 999 units.)
#[test]
fn a_cpu_going_down_sends_its_interrupts_to_the_first_online_cpu() {
    let changes = vec![
        Change { at_ns: 500_500_000, setting: Setting::Offline(3) },
        Change { at_ns: 700_500_000, setting: Setting::Online(3) },
    ];
    let out = counted_hog_with(vec![irq("cpus=3,every=1ms,takes=50us")], 3, changes.clone(), vec![]).unwrap();
    assert_eq!(out.irqs, 999);
    assert_eq!(out.irq_task_ns, 499 * 50_000);
    assert_eq!(out.units, 975);
    // The trace draws the moved handlers on CPU 0's track, and marks the
    // broken affinity.
    let v = out.trace.as_ref().unwrap().to_value().unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    let on = |tid: u64| events.iter().filter(|e| e["name"] == "irq" && e["tid"] == tid).count();
    assert_eq!((on(0), on(3)), (499, 500));
    assert!(events.iter().any(|e| e["name"].as_str().is_some_and(|n| n.contains("broke the affinity of 1"))));
    // Steered to CPUs 0 and 3, the load would put 100 µs of every 1 ms on
    // CPU 0 once CPU 3 is down: still allowed. At 600 µs each it would be
    // 120%, refused before the run.
    let both = counted_hog_with(vec![irq("cpus=0,3,every=1ms,takes=50us")], 3, changes.clone(), vec![]).unwrap();
    assert_eq!(both.irq_task_ns, (999 + 499) * 50_000);
    let e = counted_hog_with(vec![irq("cpus=0,3,every=1ms,takes=600us")], 3, changes.clone(), vec![]).unwrap_err();
    assert!(e.to_string().contains("120% of CPU 0"), "{e}");
    // A CPU without interrupt sources breaks no affinity: no mark.
    let quiet = counted_hog_with(vec![irq("cpus=0,every=1ms,takes=50us")], 3, changes, vec![]).unwrap();
    let v = quiet.trace.as_ref().unwrap().to_value().unwrap();
    let marks = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"].as_str().is_some_and(|n| n.contains("fixup_irqs")));
    assert_eq!(marks.count(), 0);
    // Loads started on CPU 3 while it is down are held: two at 60% each
    // take nothing until it is back, and then 120% of it, which the check
    // refuses from that instant.
    let at = |ms: u64, setting| Change { at_ns: ms * 1_000_000, setting };
    let held = vec![
        at(100, Setting::Offline(3)),
        at(200, Setting::Irq(irq("cpus=3,every=1ms,takes=600us"))),
        at(200, Setting::Irq(irq("cpus=3,every=1ms,takes=600us"))),
        at(300, Setting::Online(3)),
    ];
    let e = counted_hog_with(vec![], 3, held, vec![]).unwrap_err();
    assert!(e.to_string().contains("120% of CPU 3") && e.to_string().contains("from 300ms"), "{e}");
}

/// `node_to_cpumask(cpu_to_node(cpu))` for a CPU going down: its NUMA
/// node's CPUs (Nehalem-EP's CPU 5 is on node 1: 4-7, 12-15), or every
/// CPU on a one-node host or a kernel built without CONFIG_NUMA.
#[test]
fn a_dying_cpus_node_is_its_numa_node_or_the_machine() {
    use cfs_topology::builder::NumaConfig;
    let nehalem = Host::preset("nehalem-ep").unwrap();
    let q6600 = Host::preset("q6600").unwrap();
    let with = |numa| DomainBuild { options: BuildOptions { numa, ..BuildOptions::default() }, overrides: vec![] };
    let node1 = CpuMask::from_cpus([4, 5, 6, 7, 12, 13, 14, 15]);
    assert_eq!(with(NumaConfig::Auto).node_of(&nehalem, 5), node1);
    assert_eq!(with(NumaConfig::On).node_of(&nehalem, 5), node1);
    assert_eq!(with(NumaConfig::Off).node_of(&nehalem, 5), nehalem.all_cpus());
    assert_eq!(with(NumaConfig::Auto).node_of(&q6600, 3), q6600.all_cpus());
}

/// A rebuild after hotplug is made by the kernel of the moment: the
/// initialiser edits of the patches the scheduler has now, not those it
/// booted with. Stoakley under 2.6.32-rc1 with CONFIG_NUMA, booted with
/// prefer-local-to-node (799e2205ec6: MC and CPU lose SD_PREFER_LOCAL, NODE
/// gains it and is kept): with the patch switched off since, CPU 7's going
/// down rebuilds MC and CPU with the flag and no NODE level; with it still
/// on, the patched levels. The boot's own initialiser edit (`--set
/// sd_init=MC:+SERIALIZE`, which no level of rc1's MC has) and `--sd-flags`
/// overrides (MC:-WAKE_AFFINE) are made in either way.
#[test]
fn a_rebuild_follows_the_patches_of_the_moment() {
    use cfs_core::Patch;
    use cfs_topology::builder::NumaConfig;
    use cfs_topology::{DomainLevel as L, FlagOverride, SdFlags};
    let host = Host::preset("stoakley").unwrap();
    let v = cfs_core::KernelVersion::V2_6_32Rc1;
    let patched = cfs_core::Config::new(v, 8).with_patch(Patch::PreferLocalToNode).unwrap();
    let plain = cfs_core::Config::new(v, 8);
    let wake = FlagOverride { level: L::Mc, set: SdFlags::empty(), clear: SdFlags::WAKE_AFFINE };
    let own = cfs_topology::InitFlagEdits::none().with(L::Mc, SdFlags::SERIALIZE, SdFlags::empty());
    let boot = DomainBuild {
        options: BuildOptions { numa: NumaConfig::On, init_flags: own, ..BuildOptions::default() },
        overrides: vec![wake],
    };
    let up = CpuMask::first_n(7);
    let levels = |d: &SchedDomains| {
        d.of(0)
            .iter()
            .map(|x| {
                let has = |f| x.flags.contains(f);
                (x.level, has(SdFlags::PREFER_LOCAL), has(SdFlags::WAKE_AFFINE), has(SdFlags::SERIALIZE))
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        levels(&boot.build(&host, &patched, up)),
        [(L::Mc, false, false, true), (L::Cpu, false, true, false), (L::Node, true, true, true)]
    );
    assert_eq!(levels(&boot.build(&host, &plain, up)), [(L::Mc, true, false, true), (L::Cpu, true, true, false)]);
}

/// The hotplug changes a run may carry: CPUs the host has, never CPU 0,
/// down only when up and up only when down.
#[test]
fn hotplug_changes_are_checked_before_the_run() {
    let at = |ms: u64, setting| Change { at_ns: ms * 1_000_000, setting };
    let check = |changes: &[Change]| crate::faults::check_hotplug(4, changes).map_err(|e| e.to_string());
    assert_eq!(check(&[at(1, Setting::Offline(3)), at(2, Setting::Online(3)), at(3, Setting::Offline(3))]), Ok(()));
    assert_eq!(
        check(&[at(1, Setting::Offline(0))]),
        Err("offline=0 at 1ms: CPU 0 cannot go offline (x86 kernels of this era give the boot CPU no online file)"
            .into())
    );
    assert_eq!(
        check(&[at(1, Setting::Offline(4))]),
        Err("offline=4 at 1ms: CPU 4 does not exist (the host has 4)".into())
    );
    assert_eq!(check(&[at(1, Setting::Online(2))]), Err("online=2 at 1ms: CPU 2 is already online".into()));
    assert_eq!(
        check(&[at(1, Setting::Offline(2)), at(5, Setting::Offline(2))]),
        Err("offline=2 at 5ms: CPU 2 is already offline".into())
    );
    // An affinity written while every CPU it names is down (found by the
    // `heuristics` fuzz target: the run used to fail midway with a
    // scheduler error); one naming a CPU that is up, or written once its
    // CPU is back, is fine.
    let only = |c: usize| CpuMask::single(c);
    assert_eq!(
        check(&[at(1, Setting::Offline(2)), at(2, Setting::Offline(3)), at(3, Setting::Affinity(None, only(2)))]),
        Err("affinity=2 at 3ms: no CPU of 2 is online then (CPU 2, 3 down), and sched_setaffinity refuses such a \
             mask (EINVAL)"
            .into())
    );
    let two_three = CpuMask::from_cpus([2, 3]);
    assert_eq!(check(&[at(1, Setting::Offline(2)), at(3, Setting::Affinity(Some(Side::Server), two_three))]), Ok(()));
    assert_eq!(
        check(&[at(1, Setting::Offline(2)), at(2, Setting::Online(2)), at(3, Setting::Affinity(None, only(2)))]),
        Ok(())
    );
    // The engine refuses them too, before anything runs.
    let host = Host::preset("q6600").unwrap();
    let costs = CostModel::preset("q6600").unwrap();
    let mut s = setup(&host, &costs, limits(Some(10), 20));
    s.changes = vec![at(1, Setting::Offline(0))];
    let inst = Instance { tasks: vec![], finish: vec![], sync: SyncObjects::NONE };
    assert!(matches!(run(&s, inst), Err(SimError::Fault(_))));
}

/// `isolcpus=3` on the Q6600 (`DomainBuild::options`). Four hogs that
/// allow every CPU, one started on each CPU: the one started on CPU 3
/// inherits init's mask, which leaves CPU 3 out, so it starts on CPU 0
/// instead, and no balancing ever reaches CPU 3 (it has no domain): for
/// 200 ms CPU 3 stays idle while CPUs 0-2 carry the four. A fifth hog
/// pinned to CPU 3 runs there, alone, the whole time.
#[test]
fn an_isolated_cpu_runs_only_what_is_pinned_there() {
    let isolated = |pin_one: bool| {
        let mut tasks: Vec<TaskSpec> = (0..4).map(|c| free("hog", hog(), c)).collect();
        if pin_one {
            tasks.push(pinned("pinned", hog(), 3, 0));
        }
        let inst = Instance { tasks, finish: vec![], sync: SyncObjects::NONE };
        q6600_run(inst, limits(Some(200), 400), |s| {
            s.domain_build.options.isolcpus = CpuMask::single(3);
            s.domains = s.host.build_domains_with(s.config.version, &s.domain_build.options);
        })
        .unwrap()
    };
    let out = isolated(false);
    assert_eq!(out.cpu_busy_ns[3], 0);
    assert!(out.cpu_busy_ns[..3].iter().all(|&b| b > 199_000_000), "{:?}", out.cpu_busy_ns);
    assert!(out.tasks.iter().all(|t| t.main_cpu != Some(3)));
    let out = isolated(true);
    assert!(out.cpu_busy_ns[3] > 199_000_000);
    let pinned_hog = out.tasks.iter().find(|t| t.name == "pinned").unwrap();
    assert_eq!((pinned_hog.main_cpu, pinned_hog.migrations), (Some(3), 0));
    assert!(out.tasks.iter().filter(|t| t.name == "hog").all(|t| t.main_cpu != Some(3)));
}

/// CONFIG_CPUSETS hands the hotplug rebuilds of 2.6.26 final and 2.6.32 to
/// the cpuset code, which builds over the top cpuset's CPUs, isolated ones
/// included (`DomainBuild::rebuild`). Two hogs that allow CPUs 2 and 3,
/// both started on CPU 2, with `isolcpus=3`: CPU 3 has no domain at boot,
/// so nothing pulls the second hog there. CPU 1 goes down at 50 ms. Under
/// 2.6.26 with cpusets the rebuild gives CPU 3 its domains, and its idle
/// balancing takes one hog within a few ticks: CPU 3 is busy for most of
/// the 150 ms left. Without cpusets, and under 2.6.25 (whose
/// update_sched_domains rebuilds without the isolated CPUs whatever the
/// config, and whose cpuset notifier rebuilds nothing), CPU 3 stays idle.
#[test]
fn with_cpusets_a_hotplug_rebuild_takes_the_isolated_cpus_back() {
    let busy3 = |version: cfs_core::KernelVersion, cpusets: bool| {
        let two_three = TaskParams::normal().allowed(CpuMask::from_cpus([2, 3]));
        let tasks = (0..2).map(|_| TaskSpec { params: two_three, ..free("hog", hog(), 2) }).collect();
        let inst = Instance { tasks, finish: vec![], sync: SyncObjects::NONE };
        let out = q6600_run(inst, limits(Some(200), 400), |s| {
            s.config = cfs_core::Config::new(version, 4);
            s.config.cpusets = cpusets;
            s.domain_build.options.isolcpus = CpuMask::single(3);
            s.domains = s.host.build_domains_with(version, &s.domain_build.options);
            s.changes = vec![Change { at_ns: 50_000_000, setting: Setting::Offline(1) }];
        })
        .unwrap();
        out.cpu_busy_ns[3]
    };
    use cfs_core::KernelVersion as V;
    assert!(busy3(V::V2_6_26, true) > 120_000_000, "{}", busy3(V::V2_6_26, true));
    assert_eq!(busy3(V::V2_6_26, false), 0);
    assert_eq!(busy3(V::V2_6_25, true), 0);
}

/// Which rebuilds the cpuset code makes (`DomainBuild::rebuild`), by
/// kernel: a hotplug rebuild from 2.6.26 final on (bce7f793
/// sched.c:7509-7518 leaves it to cpusets; 2.6.25's and rc4's
/// update_sched_domains always calls arch_init_sched_domains), and an
/// arch_reinit_sched_domains only in 2.6.32 (its rebuild_sched_domains is
/// the cpuset one; 2.6.2x's calls arch_init_sched_domains). Only there
/// does the isolated CPU 3 of a Q6600 get domains; without cpusets never.
#[test]
fn which_rebuilds_take_the_isolated_cpus_back_with_cpusets() {
    use cfs_core::KernelVersion as V;
    let host = Host::preset("q6600").unwrap();
    let mut build = DomainBuild::default();
    build.options.isolcpus = CpuMask::single(3);
    for v in V::ALL {
        for cpusets in [false, true] {
            let mut config = cfs_core::Config::new(v, 4);
            config.cpusets = cpusets;
            let has3 = |cause| !build.rebuild(&host, &config, host.all_cpus(), cause).of(3).is_empty();
            let hotplug = cpusets && !matches!(v, V::V2_6_25 | V::V2_6_26Rc4);
            let reinit = cpusets && v.is_2_6_32();
            assert_eq!((has3(Rebuild::Hotplug), has3(Rebuild::Reinit)), (hotplug, reinit), "{v} cpusets {cpusets}");
            assert!(build.build(&host, &config, host.all_cpus()).of(3).is_empty(), "{v}: the boot build");
        }
    }
}

/// An interrupt handler running on a CPU as it goes down returns to a dead
/// CPU: nothing happens there (with NO_HZ on, the idle loop would
/// otherwise offer to stop a dead CPU's tick). CPU 3 of an idle Q6600
/// takes 50 µs handlers every 1 ms from 1 ms (a hog pinned to CPU 0 keeps
/// the run going); it goes down at 1.02 ms, inside the first, and comes
/// back at 100 ms. The first handler returns to nothing on CPU 3; the
/// other 198 arrivals run on CPU 0, where fixup_irqs sent the source, and
/// stay there after CPU 3 is back: all 199 run, 198 of them charged to
/// the hog. (Until 2026-12-04 the source paused while CPU 3 was down: 101
/// ran.)
#[test]
fn a_handler_in_flight_when_its_cpu_goes_down_returns_to_nothing() {
    let changes = vec![
        Change { at_ns: 1_020_000, setting: Setting::Offline(3) },
        Change { at_ns: 100_000_000, setting: Setting::Online(3) },
    ];
    let inst = Instance { tasks: vec![pinned("hog", hog(), 0, 0)], finish: vec![], sync: SyncObjects::NONE };
    let out = q6600_run(inst, limits(Some(200), 400), |s| {
        s.config.nohz = true;
        s.irqs = vec![irq("cpus=3,every=1ms,takes=50us")];
        s.changes = changes;
    })
    .unwrap();
    assert_eq!((out.irqs, out.irq_task_ns), (199, 198 * 50_000));
}

/// The "wasted cores" probe (an idle CPU while another has two runnable)
/// does not count a CPU that is down: four hogs, one a CPU, and CPU 3
/// down from 50 ms leave CPU 0 with two hogs and no online CPU idle, so
/// the worst gap is the boot's instant, not the 150 ms CPU 3 is away.
#[test]
fn a_cpu_that_is_down_is_not_a_wasted_one() {
    let tasks = (0..4).map(|c| free("hog", hog(), c)).collect();
    let inst = Instance { tasks, finish: vec![], sync: SyncObjects::NONE };
    let out = q6600_run(inst, limits(Some(200), 400), |s| {
        s.instruments.watch = true;
        s.changes = vec![Change { at_ns: 50_000_000, setting: Setting::Offline(3) }];
    })
    .unwrap();
    assert!(out.probe.worst_idle_gap_ns < 100_000, "{}", out.probe.worst_idle_gap_ns);
    assert_eq!(out.counters.mig_hotplug, 1);
}

/// A `taskset -p` mid-run that moves a running hog marks the move on the
/// destination's track in the trace's "affinity" category: the hog starts
/// on CPU 0 and is sent to CPU 2 at 10 ms.
#[test]
fn the_trace_marks_an_affinity_move_as_one() {
    let inst = Instance { tasks: vec![free("hog", hog(), 0)], finish: vec![], sync: SyncObjects::NONE };
    let out = q6600_run(inst, limits(Some(20), 100), |s| {
        s.changes = vec![Change { at_ns: 10_000_000, setting: Setting::Affinity(None, CpuMask::single(2)) }];
    })
    .unwrap();
    assert_eq!(move_marks(&out), [("affinity".to_string(), 2, 0)]);
}

/// The trace's move marks: (category, the track moved to, the CPU moved
/// from).
fn move_marks(out: &RunOutcome) -> Vec<(String, u64, u64)> {
    let v = out.trace.as_ref().unwrap().to_value().unwrap();
    v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "i" && e["args"]["from"].is_u64())
        .map(|e| (e["cat"].as_str().unwrap().into(), e["tid"].as_u64().unwrap(), e["args"]["from"].as_u64().unwrap()))
        .collect()
}

/// A task returning from the schedule() it blocked in tests
/// TIF_NEED_RESCHED before it goes on (the kernel's `goto need_resched`
/// at the end of schedule()): a flag that is set when it is switched in
/// (one raised on it as it went idle, cfs_core::Task::need_resched)
/// sends it through schedule() before its continuation runs.
#[test]
fn a_task_resuming_from_schedule_reschedules_first_if_flagged() {
    let inst = Instance {
        tasks: vec![pinned("a", hog(), 0, 0), pinned("b", hog(), 0, 0)],
        finish: Vec::new(),
        sync: SyncObjects::NONE,
    };
    let host = Host::preset("q6600").unwrap();
    let costs = CostModel::preset("q6600").unwrap();
    let mut sim = Sim::new(&setup(&host, &costs, limits(None, 1_000)), inst).unwrap();
    let a = sim.cpus[0].curr.expect("one of the hogs runs");
    // Its slice is long used up 100 ms on: the tick raises need_resched.
    sim.now += 100_000_000;
    sim.sched.tick(sim.now, 0).unwrap();
    assert!(sim.sched.need_resched(0));
    sim.interrupt_segment(0);
    sim.tasks[a].pending = 0;
    sim.cpus[0].debt = 0;
    sim.tasks[a].deferred = Some(Deferred::Resume);
    sim.run_task(0).unwrap();
    assert_ne!(sim.cpus[0].curr, Some(a), "switched before resuming");
    assert_eq!(sim.tasks[a].deferred, Some(Deferred::Resume), "its continuation waits for its next run");
}

/// Where one wakeup by a running sender on CPU 0 puts a reader that waits
/// on idle CPU 1 (2.6.26 final): how many wakeups wake_affine placed on the
/// sender's CPU.
fn wakeup_of_a_waiting_reader(send: Action, waits_in_select: bool) -> u64 {
    let wait = if waits_in_select { select(0) } else { Action::Wait { all: true } };
    let reader = script(vec![wait]);
    let sender = script(vec![Action::Run(1_000_000), send, Action::Run(1_000_000)]);
    let tasks = vec![free("sender", sender, 0), free("reader", reader, 1)];
    let out = run_to_exit(tasks, Sockets::default());
    assert_eq!(out.counters.wakeups, 1);
    out.counters.wake_affine
}

/// A loopback TCP write wakes a reader blocked in recv from the receive
/// softirq through tcp_prequeue, without the sync hint (bce7f793
/// include/net/tcp.h:902), and one in select() through sock_def_readable,
/// with it (net/core/sock.c:1637). On 2.6.26 final the hint decides
/// wake_affine here: with it, the waker's weight comes off this CPU's load
/// (tl = 1024 - 1024 = 0 <= load(CPU 1) = 0, and 0 + 0 <= 1024 per task),
/// so the reader is pulled to the sender's CPU; without it tl = 1024 > 0,
/// `balanced` is 100 x 2048 > 112 x 0, and the reader stays where it slept.
#[test]
fn a_tcp_write_wakes_a_reader_in_recv_without_the_sync_hint() {
    let tcp = || Action::TcpSend { to: 1, bytes: 100, tag: 0 };
    let unix = Action::Send { to: 1, sync: true, bytes: 100, tag: 0 };
    assert_eq!(wakeup_of_a_waiting_reader(unix, false), 1, "a unix socket's sync wakeup is affine");
    assert_eq!(wakeup_of_a_waiting_reader(tcp(), false), 0, "tcp_prequeue's wakeup is not sync");
    assert_eq!(wakeup_of_a_waiting_reader(tcp(), true), 1, "sock_def_readable's is");
}

/// Two loopback TCP writes, at 1 ms and 4 ms, from a sender that keeps
/// CPU 0 busy to a reader blocked in recv on idle CPU 1, under 2.6.26
/// final with `sockets` and `changes`: how many wakeups there were, and
/// how many of them wake_affine placed on the sender's CPU.
fn tcp_wakeups(sockets: Sockets, changes: Vec<Change>) -> (u64, u64) {
    // One message a wait: a reader still queued when the second lands
    // must not take both at its first.
    let reader = script(vec![Action::Wait { all: false }, Action::Wait { all: false }]);
    let tcp = || Action::TcpSend { to: 1, bytes: 100, tag: 0 };
    let sender = script(vec![Action::Run(1_000_000), tcp(), Action::Run(3_000_000), tcp(), Action::Run(1_000_000)]);
    let tasks = vec![free("sender", sender, 0), free("reader", reader, 1)];
    let out = q6600_run(Instance { tasks, finish: vec![0, 1], sync: SyncObjects::NONE }, limits(None, 1_000), |s| {
        s.sockets = sockets;
        s.changes = changes;
    })
    .unwrap();
    (out.counters.wakeups, out.counters.wake_affine)
}

/// net.ipv4.tcp_low_latency: tcp_prequeue declines the segment (bce7f793
/// include/net/tcp.h:887), so the receive softirq's tcp_rcv_established
/// wakes even a reader blocked in recv through sock_def_readable, with the
/// sync hint (net/ipv4/tcp_input.c:4834, net/core/sock.c:1637), and
/// wake_affine pulls it as it pulls a unix socket's reader (the
/// arithmetic of `a_tcp_write_wakes_a_reader_in_recv_without_the_sync_hint`:
/// with the hint tl = 1024 - 1024 = 0 fits CPU 1's empty load; without it
/// tl = 1024 does not).
/// - Prequeue (the default): two plain wakeups, the reader stays on CPU 1.
/// - tcp_low_latency=1 at boot: the first wakeup pulls the reader beside
///   the sender, where it waits (its vruntime, carried over from CPU 1,
///   does not trail the sender's by a wakeup granularity, so no
///   preemption) until the sender's slice ends; the second write finds it
///   still queued, which is no wakeup.
/// - Written at 2 ms (`--switch 2ms:set=tcp_low_latency=1`): the first
///   wakeup is plain, the second sync and pulled (tcp_prequeue reads the
///   sysctl at each segment).
/// - 1 at boot, written back to 0 at 0.5 ms: the reader went to sleep at
///   boot without installing `ucopy.task` (tcp_recvmsg does only while the
///   sysctl is 0, bce7f793 net/ipv4/tcp.c:1418), so nothing is prequeued
///   for it and its first wakeup is still sync: as at boot.
#[test]
fn tcp_low_latency_makes_a_tcp_write_s_wakeup_sync() {
    let low = Sockets { tcp_low_latency: true, ..Sockets::default() };
    assert_eq!(tcp_wakeups(Sockets::default(), vec![]), (2, 0), "prequeue: two plain wakeups");
    assert_eq!(tcp_wakeups(low, vec![]), (1, 1), "no prequeue: sync, pulled at the first");
    let switched = vec![Change { at_ns: 2_000_000, setting: Setting::TcpLowLatency(true) }];
    assert_eq!(tcp_wakeups(Sockets::default(), switched), (2, 1), "sync from the switch on");
    let back = vec![Change { at_ns: 500_000, setting: Setting::TcpLowLatency(false) }];
    assert_eq!(tcp_wakeups(low, back), (1, 1), "asleep since before the switch: no ucopy.task");
}

/// Runs `tasks` on the Q6600 under 2.6.32, without jitter, for `ms` ms
/// of simulated time, and reads the scheduler's state with `look`.
fn on_2_6_32_after(ms: u64, tasks: Vec<TaskSpec>, look: impl FnOnce(&Scheduler<SimObserver>) -> u64) -> u64 {
    let host = Host::preset("q6600").unwrap();
    let mut costs = CostModel::preset("q6600").unwrap();
    costs.jitter_cv = 0.0;
    let mut s = setup(&host, &costs, limits(Some(ms), 1_000));
    s.config = Config::new(KernelVersion::V2_6_32, host.nr_cpus());
    s.domains = host.build_domains(KernelVersion::V2_6_32);
    let mut sim = Sim::new(&s, Instance { tasks, finish: vec![0], sync: SyncObjects::NONE }).unwrap();
    sim.main_loop().unwrap();
    look(&sim.sched)
}

/// The sender's `last_wakeup` after it woke a reader blocked in recv, on
/// 2.6.32, 6 ms into a run where it computes for 5 ms, sends, and
/// computes on.
fn senders_last_wakeup_on_2_6_32(send: Action) -> u64 {
    let sender = script(vec![Action::Run(5_000_000), send, Action::Run(50_000_000)]);
    let reader = script(vec![Action::Wait { all: true }]);
    let tasks = vec![free("sender", sender, 0), free("reader", reader, 1)];
    on_2_6_32_after(6, tasks, |s| s.task(TaskId(0)).unwrap().se.last_wakeup)
}

/// The TCP receive path runs in the sender's softirq, so on 2.6.32
/// try_to_wake_up sees in_interrupt() and leaves the sender's wakeup
/// statistics alone (22763c5c sched.c:2422-2433): `last_wakeup` stays 0.
/// A plain wakeup from the sender's own system call (non-sync too, so the
/// reader is placed the same way, on its own idle CPU) stamps it with the
/// sender's runtime as last accounted: by CPU 0's tick at 4 ms (HZ=250,
/// phase 0), so 4 ms less the time the task started after boot.
#[test]
fn a_tcp_write_s_wakeup_is_not_the_senders_on_2_6_32() {
    assert_eq!(senders_last_wakeup_on_2_6_32(Action::TcpSend { to: 1, bytes: 100, tag: 0 }), 0);
    let stamped = senders_last_wakeup_on_2_6_32(Action::Send { to: 1, sync: false, bytes: 100, tag: 0 });
    assert!((3_000_000..=4_000_000).contains(&stamped), "{stamped}");
}

/// The sender's CPU time when it computes 1 ms, writes `send` to a reader
/// blocked on idle CPU 1 (2.6.26 final), and computes 1 ms more.
fn senders_runtime(send: Action) -> u64 {
    let reader = script(vec![Action::Wait { all: true }]);
    let sender = script(vec![Action::Run(1_000_000), send, Action::Run(1_000_000)]);
    let out = run_to_exit(vec![free("sender", sender, 0), free("reader", reader, 1)], Sockets::default());
    out.tasks[0].runtime_ns
}

/// A TCP write costs its sender what a plain (non-sync) write does: the
/// system call plus the wakeup, priced by the reach from the sender's CPU
/// to the reader's (CPU 1: the other core of the die), which both leave
/// where it slept. Only the wakeup's context differs.
#[test]
fn a_tcp_write_costs_its_sender_what_a_plain_write_does() {
    let plain = senders_runtime(Action::Send { to: 1, sync: false, bytes: 100, tag: 0 });
    assert!(plain > 2_000_000, "{plain}");
    assert_eq!(senders_runtime(Action::TcpSend { to: 1, bytes: 100, tag: 0 }), plain);
}

/// The clock of CPU 0's runqueue `at_ms` into a 2.6.32 run where a
/// selector there polls two sockets for 100 ms (peer 1's at 25 ms, peer
/// 2's at 75 ms, both registering, nothing ready), peer 1 writes at 30 ms
/// and peer 2 at `second_ms`.
fn selectors_clock_on_2_6_32(second_ms: u64, at_ms: u64) -> u64 {
    on_2_6_32_after(at_ms, two_writers_to_a_selector(30, second_ms), |s| s.rq(0).unwrap().clock)
}

/// The tasks of [`selectors_clock_on_2_6_32`], peer 1 writing at
/// `first_ms`.
fn two_writers_to_a_selector(first_ms: u64, second_ms: u64) -> Vec<TaskSpec> {
    let fds: Arc<[TaskRef]> = Arc::from(vec![1, 2]);
    let select = Action::Select { entry_ns: 0, poll_ns: 50_000_000, exit_ns: 0, repoll_ns: 0, slept_ns: 0, fds };
    let send = || Action::Send { to: 0, sync: true, bytes: 8, tag: 0 };
    vec![
        pinned("selector", script(vec![select]), 0, 0),
        pinned("first", script(vec![Action::Run(first_ms * 1_000_000), send()]), 1, 0),
        pinned("second", script(vec![Action::Run(second_ms * 1_000_000), send()]), 2, 0),
    ]
}

/// What peer 2's write at 81 ms costs it beyond its work, at 82 ms
/// (2.6.32, [`selectors_clock_on_2_6_32`]'s scene with peer 1 writing
/// after it: the first write to race the pass), with the selector in its
/// pass or, with `busy`, CPU 0's task computing instead.
fn second_writers_overhead_on_2_6_32(busy: bool) -> u64 {
    let mut tasks = two_writers_to_a_selector(90, 81);
    if busy {
        tasks[0] = pinned("busy", script(vec![Action::Run(100_000_000)]), 0, 0);
    }
    let run = on_2_6_32_after(82, tasks, |s| s.task(TaskId(2)).unwrap().se.sum_exec_runtime);
    run - 81_000_000
}

/// On 2.6.32 a write that races select()'s pass meets a task already
/// TASK_RUNNING: try_to_wake_up updates the clock and returns (below),
/// and the engine leaves that call's price out, so the writer pays no
/// wakeup: its write costs it what a write to a task busy computing (no
/// waiter at all) does. The same ticks land on both writers' runs.
#[test]
fn a_write_racing_select_on_2_6_32_costs_its_writer_no_wakeup() {
    assert_eq!(second_writers_overhead_on_2_6_32(false), second_writers_overhead_on_2_6_32(true));
}

/// On 2.6.32 select() polls TASK_RUNNING, and every wakeup through a wait
/// queue the task is on reaches try_to_wake_up, which updates the task's
/// runqueue clock before its state test turns it away (22763c5c
/// fs/select.c:205-213, sched.c:2352-2354): the later of two as well as
/// the first. CPU 0's tick last updated the clock at 80 ms (HZ=250, phase
/// 0); peer 2's write at 81 ms, behind its socket's poll, updates it again
/// (to 81 ms and the write's system call), one at 90 ms comes after the run.
/// A write at 50 ms lands on peer 2's socket before its poll, where the
/// selector is on no wait queue yet: sock_def_readable finds the queue
/// empty and wakes nobody, so at 51 ms the clock is still the 48 ms tick's.
#[test]
fn every_wakeup_through_select_s_wait_queues_updates_the_clock_on_2_6_32() {
    let tick = 80_000_000;
    assert_eq!(selectors_clock_on_2_6_32(90, 82), tick);
    let clock = selectors_clock_on_2_6_32(81, 82);
    assert!((81_000_000..81_010_000).contains(&clock), "{clock}");
    assert_eq!(selectors_clock_on_2_6_32(50, 51), 48_000_000);
}

/// When a task that sleeps 10 ms, interruptibly, ends, after another task
/// sends it `send` at 1 ms.
fn interruptible_sleep_ends_ms(send: Action) -> u64 {
    let sleeper = script(vec![Action::Sleep { ns: 10_000_000, interruptible: true }]);
    let sender = script(vec![Action::Run(1_000_000), send]);
    let out = run_to_exit(vec![free("sleeper", sleeper, 0), free("sender", sender, 1)], Sockets::default());
    out.end_ns / 1_000_000
}

/// A signal ends an interruptible sleep (starve.c's kill of a parent in
/// nanosleep); data on a TCP socket does not, since nothing but a signal
/// wakes nanosleep.
#[test]
fn tcp_data_does_not_end_an_interruptible_sleep() {
    assert_eq!(interruptible_sleep_ends_ms(Action::Send { to: 0, sync: false, bytes: 0, tag: 0 }), 1);
    assert_eq!(interruptible_sleep_ends_ms(Action::TcpSend { to: 0, bytes: 8, tag: 0 }), 10);
}

/// A patch of the domain initialisers switched mid-run is built in
/// (`Scheduler::arch_reinit_sched_domains`), not only written into the
/// levels present: Stoakley under 2.6.32-rc1 with CONFIG_NUMA boots with
/// MC and CPU (its one-group NODE level is dropped, having no flag CPU
/// lacks); 799e2205ec6 switched on at 2 ms gives the patched kernel's
/// NODE level (PREFER_LOCAL there, which CPU then lacks), and switched off
/// at 4 ms takes it away again. The trace marks each rebuild beside the
/// setting that caused it; another setting (a tunable) rebuilds nothing.
#[test]
fn a_patch_of_the_initialisers_switched_mid_run_rebuilds_the_domains() {
    use cfs_core::Patch;
    use cfs_topology::builder::NumaConfig;
    let host = Host::preset("stoakley").unwrap();
    let mut costs = CostModel::preset("stoakley").unwrap();
    costs.jitter_cv = 0.0;
    let v = KernelVersion::V2_6_32Rc1;
    let at = |ms: u64, setting| Change { at_ns: ms * 1_000_000, setting };
    let mut s = setup(&host, &costs, limits(Some(6), 20));
    s.config = Config::new(v, 8);
    s.domain_build =
        DomainBuild { options: BuildOptions { numa: NumaConfig::On, ..BuildOptions::default() }, overrides: vec![] };
    s.domains = s.domain_build.build(&host, &s.config, host.all_cpus());
    s.changes = vec![
        at(1, Setting::Tunable("sched_nr_migrate".into(), 16)),
        at(2, Setting::Patch(Patch::PreferLocalToNode, true)),
        at(4, Setting::Patch(Patch::PreferLocalToNode, false)),
    ];
    let out =
        run(&s, Instance { tasks: vec![free("hog", counting(), 0)], finish: vec![], sync: SyncObjects::NONE }).unwrap();
    let v = out.trace.as_ref().unwrap().to_value().unwrap();
    let marks: Vec<(f64, String)> = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "setting")
        .map(|e| (e["ts"].as_f64().unwrap(), e["name"].as_str().unwrap().to_string()))
        .collect();
    let mark = |ms: f64, what: &str| (ms * 1000.0, what.to_string());
    assert_eq!(
        marks,
        [
            mark(1.0, "set=sched_nr_migrate=16"),
            mark(2.0, "domains rebuilt: CPU 0 has MC 0-1, CPU 0-7, NODE 0-7"),
            mark(2.0, "patch=prefer-local-to-node"),
            mark(4.0, "domains rebuilt: CPU 0 has MC 0-1, CPU 0-7"),
            mark(4.0, "no-patch=prefer-local-to-node"),
        ]
    );
}

/// `echo 1 > sched_mc_power_savings` mid-run (`Setting::PowerSavings`):
/// the knob takes the value and the domains are rebuilt with it, as
/// cfs-topology builds them (its builder tests derive the shape): on
/// Stoakley MC widens from the L2 pair 0-1 to the socket 0-3 and the CPU
/// level's groups become the two sockets, with SD_POWERSAVINGS_BALANCE;
/// written back to 0, the perf domains return.
///
/// Two hogs started on CPUs 3 and 5, one per socket, each run the whole
/// second there without the knob (each socket busy for at least 0.99 s).
/// With the knob on from 100 ms, under 2.6.25, an idle CPU of one socket
/// finds the other socket's lone task in its least loaded group
/// (find_busiest_group's power pick), fails to move it while it runs, and
/// after cache_nice_tries + 2 = 3 failed passes has the migration thread
/// push it: idle passes at the CPU level come every 1-4 ms, so one socket
/// is idle within tens of ms of the write and its busy time stays under
/// 150 ms. Under 2.6.26 the same pick is made and the same kicks sent, but
/// the migration thread's move_one_task walks the cfs_rq's task list,
/// whose iterator never returns the last entry (fixed in 2.6.28 by
/// 38736f47507): a lone task is never pushed, and both sockets stay busy.
#[test]
fn a_power_savings_write_rebuilds_the_domains_and_consolidates() {
    use cfs_core::KernelVersion as V;
    let host = Host::preset("stoakley").unwrap();
    let mut costs = CostModel::preset("stoakley").unwrap();
    costs.jitter_cv = 0.0;
    let at = |ms: u64, setting| Change { at_ns: ms * 1_000_000, setting };
    let run_with = |v: V, changes: Vec<Change>| {
        let mut s = setup(&host, &costs, limits(Some(1_000), 2_000));
        s.config = Config::new(v, 8);
        s.domains = host.build_domains(v);
        s.changes = changes;
        let tasks = vec![free("a", counting(), 3), free("b", counting(), 5)];
        run(&s, Instance { tasks, finish: vec![], sync: SyncObjects::NONE }).unwrap()
    };
    let knob = |level| Setting::PowerSavings { smt: false, level };
    let out = run_with(V::V2_6_26, vec![at(100, knob(1)), at(900, knob(0))]);
    let v = out.trace.as_ref().unwrap().to_value().unwrap();
    let marks: Vec<String> = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "setting")
        .map(|e| e["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        marks,
        [
            "domains rebuilt: CPU 0 has MC 0-3, CPU 0-7",
            "set=sched_mc_power_savings=1",
            "domains rebuilt: CPU 0 has MC 0-1, CPU 0-7",
            "set=sched_mc_power_savings=0",
        ]
    );
    let sockets = |out: &RunOutcome| {
        let busy = |cpus: std::ops::Range<usize>| cpus.map(|c| out.cpu_busy_ns[c]).sum::<u64>();
        let (a, b) = (busy(0..4), busy(4..8));
        (a.min(b), a.max(b), out.counters.mig_active)
    };
    let (idle_socket, _, _) = sockets(&run_with(V::V2_6_25, vec![]));
    assert!(idle_socket >= 990_000_000, "{idle_socket}");
    let (idle_socket, busy_socket, pushed) = sockets(&run_with(V::V2_6_25, vec![at(100, knob(1))]));
    assert!(idle_socket < 150_000_000 && busy_socket > 1_800_000_000, "{idle_socket} {busy_socket}");
    assert_eq!(pushed, 1);
    let (idle_socket, _, pushed) = sockets(&run_with(V::V2_6_26, vec![at(100, knob(1))]));
    assert!(idle_socket >= 990_000_000 && pushed == 0, "{idle_socket} {pushed}");
    // A level the kernel's store refuses (2.6.26 takes 0 or 1) fails the
    // run at the write, naming it, rather than running on as something else.
    let mut s = setup(&host, &costs, limits(Some(1_000), 2_000));
    s.changes = vec![at(100, knob(2))];
    let e = run(&s, Instance { tasks: vec![free("a", counting(), 3)], finish: vec![], sync: SyncObjects::NONE });
    let e = e.map(|_| ()).expect_err("refused").to_string();
    assert!(e.contains("power-savings level 2 is not one of 2.6.26's (0 to 1)"), "{e}");
}
