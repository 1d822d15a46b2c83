//! [`Scheduler`]: the machine-wide fair class and its public API.
//!
//! The kernel keeps per-CPU runqueues, per-task entities and per-CPU
//! domain copies as globals; here they are the fields of one value, and
//! every entry point takes the current time explicitly. Same inputs, same
//! decisions: there is no randomness and no hash-order iteration.

use crate::config::{Config, ConfigError};
use crate::entity::{CurrentState, SchedEntity, Task, TaskId, TaskParams, TaskState};
use crate::hotplug::HotplugError;
use crate::invariants::{ApiCall, History, InvariantViolation};
use crate::nohz::Nohz;
use crate::observe::{Event, MigrateReason, Observer};
use crate::profile::Rules;
use crate::rq::Rq;
use crate::sysctl::SettingError;
use crate::weights::{Policy, clamp_nice, set_load_weight};
use alloc::boxed::Box;
use alloc::format;
use alloc::vec::Vec;
use cfs_topology::{CpuId, CpuMask, SchedDomains};
use core::fmt;

/// Runtime state the kernel keeps in each CPU's copy of a sched_domain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DomainState {
    /// `last_balance`, jiffies.
    pub last_balance: u64,
    /// `balance_interval`, ms.
    pub balance_interval: u32,
    /// `nr_balance_failed`.
    pub nr_balance_failed: u32,
}

/// An API call the scheduler refused. The scheduler's state is unchanged
/// unless the error is [`SchedError::Invariant`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SchedError {
    /// No task with this id.
    UnknownTask(TaskId),
    /// CPU number out of range.
    BadCpu(CpuId),
    /// The task is not in a state that allows this call.
    WrongState {
        /// The task.
        task: TaskId,
        /// Its state.
        state: TaskState,
        /// What was attempted.
        op: &'static str,
    },
    /// `schedule(Sleep/Exit/Yield)` on a CPU running the idle task.
    IdleCpu(CpuId),
    /// The affinity mask has no CPU of this host that is online
    /// (`set_cpus_allowed_ptr`'s EINVAL).
    EmptyAffinity,
    /// Too many tasks (ids are u32).
    TooManyTasks,
    /// `tick` on a CPU whose tick is stopped (NO_HZ): the driver must not
    /// tick it until it leaves idle.
    TickStopped(CpuId),
    /// An online invariant failed; the report names the calls that led to it.
    Invariant(Box<InvariantViolation>),
    /// A run-time setting was refused (see [`crate::sysctl`]).
    Setting(SettingError),
    /// The CPU is offline: no task runs, ticks or wakes anything there.
    Offline(CpuId),
    /// A CPU could not go down or come up (see [`crate::hotplug`]).
    Hotplug(HotplugError),
}

impl fmt::Display for SchedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SchedError::UnknownTask(t) => write!(f, "unknown task {t}"),
            SchedError::BadCpu(c) => write!(f, "CPU {c} does not exist"),
            SchedError::WrongState { task, state, op } => write!(f, "{op}: task {task} is {state:?}"),
            SchedError::IdleCpu(c) => write!(f, "CPU {c} is running the idle task"),
            SchedError::EmptyAffinity => write!(f, "affinity mask holds no online CPU of this host"),
            SchedError::TooManyTasks => write!(f, "task id space exhausted"),
            SchedError::TickStopped(c) => write!(f, "CPU {c} has stopped its tick (NO_HZ idle)"),
            SchedError::Invariant(v) => write!(f, "{v}"),
            SchedError::Setting(e) => write!(f, "{e}"),
            SchedError::Offline(c) => write!(f, "CPU {c} is offline"),
            SchedError::Hotplug(e) => write!(f, "{e}"),
        }
    }
}

impl core::error::Error for SchedError {}

/// How the current task leaves the CPU in [`Scheduler::schedule`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "fuzzing", derive(arbitrary::Arbitrary))]
pub enum Deschedule {
    /// Preempted (or a voluntary reschedule): it stays runnable.
    Preempt,
    /// It blocks: dequeued with sleep = 1 until a wakeup.
    Sleep,
    /// It exits (do_exit → schedule with TASK_DEAD).
    Exit,
    /// sched_yield(): yield_task_fair, then schedule.
    Yield,
    /// The task calls schedule() itself, as a wait loop does after
    /// [`Scheduler::set_current_state`]: it is dequeued (as `Sleep`) if its
    /// state is still TASK_INTERRUPTIBLE, and stays queued (a voluntary
    /// switch, as `Preempt`) if a wakeup has made it TASK_RUNNING since
    /// (sched.c:4171, `if (prev->state && ...) deactivate_task`). The
    /// kernel also keeps a task with a signal already pending
    /// (`signal_pending_state`, :4172); cfs-core knows no signals, so a
    /// caller with one pending wakes the task or does not sleep it.
    Schedule,
}

/// The result of [`Scheduler::schedule`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Switch {
    /// Task that was current (None = idle).
    pub prev: Option<TaskId>,
    /// Task now current (None = idle).
    pub next: Option<TaskId>,
    /// Tasks pulled by idle_balance before picking.
    pub pulled: u32,
}

impl Switch {
    /// Whether a context switch happened.
    pub fn switched(&self) -> bool {
        self.prev != self.next
    }
}

/// The result of [`Scheduler::wake_up`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WakeOutcome {
    /// The CPU it is queued on.
    pub cpu: CpuId,
    /// False when the task was already runnable (try_to_wake_up returns 0).
    pub woken: bool,
    /// Whether the target CPU must reschedule.
    pub preempt: bool,
}

/// The result of [`Scheduler::fork`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ForkOutcome {
    /// The child.
    pub child: TaskId,
    /// Its CPU.
    pub cpu: CpuId,
}

/// The machine-wide fair class: N runqueues, the tasks, the domains.
///
/// `O` receives every decision (see [`crate::observe`]). A scheduler with a
/// cloneable observer can be cloned to fork a what-if run from any state.
#[derive(Clone)]
pub struct Scheduler<O: Observer = ()> {
    pub(crate) cfg: Config,
    pub(crate) rules: Rules,
    pub(crate) rqs: Vec<Rq>,
    pub(crate) tasks: Vec<Task>,
    /// The task groups under group scheduling (see [`crate::group`]).
    pub(crate) groups: Vec<crate::group::TaskGroup>,
    pub(crate) domains: SchedDomains,
    pub(crate) dstate: Vec<Vec<DomainState>>,
    pub(crate) online: CpuMask,
    pub(crate) resched_pending: CpuMask,
    pub(crate) observer: O,
    pub(crate) history: History,
    /// The migration-thread requests of set_cpus_allowed for tasks on a
    /// runqueue (running or queued), oldest first: the task, the CPU whose
    /// `migration_queue` holds the request (the task's CPU when the mask was
    /// written), and the destination chosen then (`req->dest_cpu =
    /// any_online_cpu(*new_mask)`). Carried out in that CPU's next
    /// schedule(), newest first, as its migration thread would
    /// ([`Scheduler::run_migration_queue`]).
    pub(crate) pending_move: Vec<(TaskId, CpuId, CpuId)>,
    /// Tasks left on a CPU their mask does not hold, as the kernel leaves
    /// them: a move whose every allowed CPU went down before it ran (see
    /// [`crate::hotplug`]), and what such a task forks. Only the invariant
    /// checker reads this; the next move onto an allowed CPU, or a new mask,
    /// clears it.
    pub(crate) stranded: Vec<TaskId>,
    /// The CPU whose migration thread is current while it balances newly
    /// idle in its own schedule(): an RT task at prio 0 (SCHED_FIFO at
    /// MAX_RT_PRIO - 1, bce7f793 sched.c:6085), which move_tasks reads as
    /// `this_rq->curr->prio` (:2858).
    pub(crate) migration_thread: Option<CpuId>,
    /// NO_HZ state (see [`crate::nohz`]).
    pub(crate) nohz: Nohz,
    /// 2.6.32's refreshed group powers (see [`crate::cpu_power`]).
    pub(crate) power: crate::cpu_power::CpuPower,
    pub(crate) now: u64,
    /// The first time any call passed in (the epoch of `jiffies`).
    pub(crate) origin: Option<u64>,
}

impl<O: Observer> fmt::Debug for Scheduler<O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scheduler")
            .field("version", &self.cfg.version)
            .field("nr_cpus", &self.rqs.len())
            .field("nr_tasks", &self.tasks.len())
            .finish()
    }
}

impl Scheduler<()> {
    /// A scheduler without an observer.
    pub fn new(cfg: Config, domains: SchedDomains) -> Result<Self, ConfigError> {
        Scheduler::with_observer(cfg, domains, ())
    }
}

impl<O: Observer> Scheduler<O> {
    /// A scheduler over `domains` (whose CPU count is the machine's).
    ///
    /// A patch of the domain initialisers in `cfg` is written into the
    /// levels `domains` has. For the patched kernel's own levels (one the
    /// edit keeps, such as 799e2205ec6's NODE on a one-node NUMA build),
    /// build `domains` with `BuildOptions { init_flags:
    /// cfg.patches.init_flag_edits(), .. }`; writing the edits again here
    /// then changes nothing, unless something after the build (an
    /// override, `relax_domain_level=`) touched the patch's flags.
    pub fn with_observer(cfg: Config, domains: SchedDomains, observer: O) -> Result<Self, ConfigError> {
        cfg.validate()?;
        let n = domains.nr_cpus().max(1);
        if n > cfs_topology::MAX_CPUS {
            return Err(ConfigError::Domains(format!("{n} CPUs exceed the limit")));
        }
        if (cfg.nr_cpus as usize) < n || cfg.nr_cpus as usize > cfs_topology::MAX_CPUS {
            return Err(ConfigError::NrCpus { nr_cpus: cfg.nr_cpus, cpus: n });
        }
        for (cpu, doms) in domains.per_cpu.iter().enumerate() {
            for d in doms {
                if !d.span.contains(cpu) || d.groups.is_empty() || d.span.iter().any(|c| c >= n) {
                    return Err(ConfigError::Domains(format!(
                        "CPU {cpu}: {} domain span {} is malformed for {n} CPUs",
                        d.level, d.span
                    )));
                }
            }
        }
        let dstate = (0..n).map(|cpu| fresh_domain_state(domains.of(cpu), 0)).collect();
        let mut domains = domains;
        if domains.per_cpu.len() < n {
            domains.per_cpu.resize(n, Vec::new());
        }
        apply_patch_domain_flags(&cfg, &mut domains);
        let mut s = Scheduler {
            rules: cfg.rules(),
            cfg,
            rqs: (0..n).map(Rq::new).collect(),
            tasks: Vec::new(),
            groups: Vec::new(),
            domains,
            dstate,
            online: CpuMask::first_n(n),
            resched_pending: CpuMask::empty(),
            observer,
            history: History::default(),
            pending_move: Vec::new(),
            stranded: Vec::new(),
            migration_thread: None,
            nohz: Nohz::default(),
            power: crate::cpu_power::CpuPower::new(n),
            now: 0,
            origin: None,
        };
        s.init_task_group();
        Ok(s)
    }

    // ----- queries -------------------------------------------------------

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Number of CPUs.
    pub fn nr_cpus(&self) -> usize {
        self.rqs.len()
    }

    /// The domains in use.
    pub fn domains(&self) -> &SchedDomains {
        &self.domains
    }

    /// A task.
    pub fn task(&self, id: TaskId) -> Option<&Task> {
        self.tasks.get(id.0 as usize)
    }

    /// `task_sched_runtime` (sched.c, the same in 2.6.25, 2.6.26 and, as
    /// `do_task_delta_exec`, 2.6.32): a task's CPU time at `now`, its
    /// `sum_exec_runtime` plus, while it runs, the time since its
    /// `exec_start`, which no `update_curr` has added yet (a task that
    /// never sleeps is otherwise only brought up to date at its ticks).
    /// The kernel refreshes the rq clock first; here that clock is `now`,
    /// so nothing is written. None for an unknown task.
    pub fn task_sched_runtime(&self, now: u64, id: TaskId) -> Option<u64> {
        let t = self.task(id)?;
        let running = self.curr(t.cpu) == Some(id);
        let delta = now.wrapping_sub(t.se.exec_start) as i64;
        Some(t.se.sum_exec_runtime.wrapping_add(if running && delta > 0 { delta as u64 } else { 0 }))
    }

    /// All tasks ever created, by id.
    pub fn tasks(&self) -> &[Task] {
        &self.tasks
    }

    /// A runqueue.
    pub fn rq(&self, cpu: CpuId) -> Option<&Rq> {
        self.rqs.get(cpu)
    }

    /// The current task of `cpu` (None = idle or no such CPU).
    pub fn curr(&self, cpu: CpuId) -> Option<TaskId> {
        self.rqs.get(cpu).and_then(|r| r.curr)
    }

    /// TIF_NEED_RESCHED of `cpu`'s current task.
    pub fn need_resched(&self, cpu: CpuId) -> bool {
        self.rqs.get(cpu).is_some_and(|r| r.need_resched)
    }

    /// The CPUs whose need_resched was newly set since the last call. A
    /// driver delivers these as reschedule IPIs (or acts at once locally).
    pub fn take_resched(&mut self) -> CpuMask {
        core::mem::take(&mut self.resched_pending)
    }

    /// The armed hrtick expiry of `cpu`, if any.
    pub fn hrtick_expiry(&self, cpu: CpuId) -> Option<u64> {
        self.rqs.get(cpu).and_then(|r| r.hrtick_expire)
    }

    /// Per-CPU domain balance state.
    pub fn domain_state(&self, cpu: CpuId) -> &[DomainState] {
        self.dstate.get(cpu).map(|v| v.as_slice()).unwrap_or(&[])
    }

    /// The observer.
    pub fn observer(&self) -> &O {
        &self.observer
    }

    /// The observer, mutably.
    pub fn observer_mut(&mut self) -> &mut O {
        &mut self.observer
    }

    /// The same scheduler, every runqueue and task as they are, reporting
    /// to `observer` from now on; the old observer is handed back. A
    /// driver can run a warm-up unobserved and attach a recorder (say a
    /// `Vec<(u64, Event)>`) for the part it studies.
    pub fn swap_observer<P: Observer>(self, observer: P) -> (Scheduler<P>, O) {
        let Scheduler {
            cfg,
            rules,
            rqs,
            tasks,
            groups,
            domains,
            dstate,
            online,
            resched_pending,
            observer: old,
            history,
            pending_move,
            stranded,
            migration_thread,
            nohz,
            power,
            now,
            origin,
        } = self;
        let s = Scheduler {
            cfg,
            rules,
            rqs,
            tasks,
            groups,
            domains,
            dstate,
            online,
            resched_pending,
            observer,
            history,
            pending_move,
            stranded,
            migration_thread,
            nohz,
            power,
            now,
            origin,
        };
        (s, old)
    }

    // ----- helpers --------------------------------------------------------

    pub(crate) fn emit(&mut self, ev: Event) {
        self.observer.event(self.now, &ev);
    }

    pub(crate) fn check_cpu(&self, cpu: CpuId) -> Result<(), SchedError> {
        if cpu < self.rqs.len() { Ok(()) } else { Err(SchedError::BadCpu(cpu)) }
    }

    /// The CPU exists and is online (see [`crate::hotplug`]).
    pub(crate) fn check_online(&self, cpu: CpuId) -> Result<(), SchedError> {
        self.check_cpu(cpu)?;
        if self.online.contains(cpu) { Ok(()) } else { Err(SchedError::Offline(cpu)) }
    }

    pub(crate) fn check_task(&self, id: TaskId) -> Result<TaskState, SchedError> {
        self.tasks.get(id.0 as usize).map(|t| t.state).ok_or(SchedError::UnknownTask(id))
    }

    #[inline]
    pub(crate) fn t(&self, id: TaskId) -> &Task {
        &self.tasks[id.0 as usize]
    }

    #[inline]
    pub(crate) fn tm(&mut self, id: TaskId) -> &mut Task {
        &mut self.tasks[id.0 as usize]
    }

    /// `update_rq_clock`: the caller's time is the rq clock.
    pub(crate) fn set_clock(&mut self, cpu: CpuId, now: u64) {
        self.advance(now);
        self.rqs[cpu].clock = now;
    }

    /// `update_rq_clock(cpu_rq(cpu))` run on CPU `on`: `cpu`'s clock set to
    /// `now`, except in 2.6.25 when `cpu` is another CPU
    /// ([`crate::profile::Rules::remote_clock_update`]). The caller's time
    /// is recorded either way.
    pub(crate) fn update_rq_clock_on(&mut self, on: CpuId, cpu: CpuId, now: u64) {
        if on == cpu || self.rules.remote_clock_update() {
            self.set_clock(cpu, now);
        } else {
            self.advance(now);
        }
    }

    /// Records the caller's time as "now" (and the jiffies epoch on the
    /// first call).
    pub(crate) fn advance(&mut self, now: u64) {
        if self.origin.is_none() {
            // Every CPU's clock starts at boot, the caller's first time: the
            // kernel's rq->clock and sched_clock() both start near 0 at boot,
            // so a clock no CPU has set yet reads as boot time. 2.6.25 reads
            // another CPU's clock as that CPU last set it, and every profile
            // translates schedstat stamps by the difference of two clocks in
            // set_task_cpu, so an unset clock is read in each of them.
            for rq in &mut self.rqs {
                rq.clock = now;
            }
        }
        self.origin.get_or_insert(now);
        self.now = now;
    }

    /// `wake_up_process(cpu_rq(cpu)->migration_thread)` from CPU `on`, as
    /// far as the fair class sees it. The thread is an RT task, so the
    /// wakeup's check_preempt_curr takes check_preempt_wakeup's `rt_prio`
    /// branch on `cpu`: the runqueue clock is brought up to date and the
    /// running fair task charged (update_rq_clock, update_curr: 4b119e21
    /// sched_fair.c:1113-1118, e490517a :1230-1235, bce7f793 :1173-1178;
    /// 2.6.32-rc1 and 2.6.32 charge before the test, 17d857be :1572,
    /// 22763c5c :1599, after try_to_wake_up brought the clock up), and the
    /// task is told to reschedule. The callers: load_balance's active-balance
    /// kick (bce7f793 sched.c:3362) and set_cpus_allowed for a task that
    /// is running or queued (:5588).
    pub(crate) fn wake_migration_thread(&mut self, on: CpuId, cpu: CpuId, now: u64) {
        self.update_rq_clock_on(on, cpu, now);
        let tg = self.rqs[cpu].curr.and_then(|c| self.tg(c));
        self.update_curr(cpu, tg);
        self.resched_cpu(cpu);
    }

    /// `resched_task(rq->curr)`. On an offline CPU (the NO_HZ balancer
    /// kicking the first CPU of its mask, which may have gone down) the
    /// flag lands on a dead CPU's idle task and the IPI goes nowhere:
    /// nothing to do, and `cpu_up` starts with the flag clear anyway.
    pub(crate) fn resched_cpu(&mut self, cpu: CpuId) {
        if !self.online.contains(cpu) {
            return;
        }
        let rq = &mut self.rqs[cpu];
        if !rq.need_resched {
            rq.need_resched = true;
            self.resched_pending.set(cpu);
        }
    }

    /// `set_cpus_allowed_ptr`'s test: the mask must hold an online CPU
    /// (`-EINVAL` otherwise), and it is kept whole, offline CPUs included,
    /// as `p->cpus_allowed` is (only the CPUs this machine has). An empty
    /// mask means every CPU. `setaffinity`: the mask comes from a
    /// sched_setaffinity call (`set_affinity`), or is a task's own given
    /// at its spawn or fork, which stands for one when it names CPUs.
    fn normalise_mask(&self, mask: CpuMask, setaffinity: bool) -> Result<CpuMask, SchedError> {
        let all = CpuMask::first_n(self.rqs.len());
        let m = if mask.is_empty() { all } else { mask.and(&all) };
        // sched_setaffinity's `cpus_and(new_mask, new_mask, cpus_allowed)`
        // with the top cpuset's CPUs (Config::cpusets): the online ones. A
        // task given no mask made no such call: it has the every-CPU mask
        // it would inherit from init.
        let m = if self.cfg.cpusets && (setaffinity || !mask.is_empty()) { m.and(&self.online) } else { m };
        if m.intersects(&self.online) { Ok(m) } else { Err(SchedError::EmptyAffinity) }
    }

    /// `cpuset_cpus_allowed(p)` for a task in the top cpuset: the online
    /// CPUs with cpusets, every possible CPU without (Config::cpusets).
    pub(crate) fn cpuset_cpus_allowed(&self) -> CpuMask {
        if self.cfg.cpusets { self.online } else { CpuMask::first_n(self.rqs.len()) }
    }

    /// A new task. `inherited`: a fork's copy of its parent's mask, taken
    /// as it is (`dup_task_struct` copies `cpus_allowed`; nothing checks
    /// it), even when every CPU in it has gone down since.
    fn new_task(&mut self, params: &TaskParams, cpu: CpuId, inherited: bool) -> Result<TaskId, SchedError> {
        let allowed = if inherited { params.allowed } else { self.normalise_mask(params.allowed, false)? };
        let idx = u32::try_from(self.tasks.len()).map_err(|_| SchedError::TooManyTasks)?;
        let id = TaskId(idx);
        let nice = clamp_nice(params.nice);
        let uid = params.uid.unwrap_or(0);
        let tg = self.group_of_uid(uid);
        let se = SchedEntity {
            load: set_load_weight(params.policy, nice, self.cfg.version),
            // __sched_fork (2.6.32): avg_wakeup starts at the granularity.
            avg_wakeup: if self.rules.is_2_6_32() { self.cfg.tunables.wakeup_granularity } else { 0 },
            ..Default::default()
        };
        self.tasks.push(Task {
            id,
            se,
            nice,
            policy: params.policy,
            allowed,
            cpu,
            state: TaskState::Sleeping,
            nr_migrations: 0,
            need_resched: false,
            current_state: CurrentState::Running,
            uid,
            tg,
        });
        Ok(id)
    }

    /// Runs the invariants if configured, recording the call first. The
    /// history only explains a violation, so without the checker (fixed for
    /// the scheduler's life by its `Config`) nothing is recorded.
    pub(crate) fn finish(&mut self, call: ApiCall) -> Result<(), SchedError> {
        if self.cfg.check_invariants {
            self.history.push(call);
            if let Err(mut v) = self.check_invariants() {
                v.history = self.history.calls();
                return Err(SchedError::Invariant(Box::new(v)));
            }
        }
        Ok(())
    }

    // ----- the API --------------------------------------------------------

    /// Creates a runnable task on `cpu` at boot time (no parent): it is
    /// placed as a new task (`place_entity(initial)`) and enqueued, and the
    /// CPU's current task gets a preemption check.
    pub fn spawn(&mut self, now: u64, cpu: CpuId, params: TaskParams) -> Result<TaskId, SchedError> {
        self.check_online(cpu)?;
        let allowed = self.normalise_mask(params.allowed, false)?;
        let cpu = if allowed.contains(cpu) { cpu } else { self.any_online_cpu(&allowed).unwrap_or(cpu) };
        let id = self.new_task(&params, cpu, false)?;
        self.set_clock(cpu, now);
        let min = self.tq(cpu, self.tg(id)).min_vruntime;
        self.tm(id).se.vruntime = min;
        self.task_new_fair(cpu, id, None);
        self.check_preempt_curr(cpu, id, true);
        self.emit(Event::Fork { parent: None, child: id, cpu });
        self.finish(ApiCall::Spawn { now, cpu, task: id })?;
        Ok(id)
    }

    /// `fork()` by the running task `parent`: sched_fork (placement by
    /// sched_balance_self on SD_BALANCE_FORK), then wake_up_new_task
    /// (task_new_fair: START_DEBIT placement, child-runs-first) and a
    /// preemption check. `params` = None inherits the parent's; given, they
    /// are the child's own setpriority/sched_setscheduler/sched_setaffinity
    /// before it first runs. A mask whose CPUs this machine has but which
    /// are all down at the fork is refused as sched_setaffinity refuses it
    /// (`set_cpus_allowed_ptr`'s `-EINVAL`), and the child keeps the mask it
    /// inherited; a mask naming no CPU of this machine is the caller's
    /// error ([`SchedError::EmptyAffinity`]).
    pub fn fork(&mut self, now: u64, parent: TaskId, params: Option<TaskParams>) -> Result<ForkOutcome, SchedError> {
        let st = self.check_task(parent)?;
        if st != TaskState::Running {
            return Err(SchedError::WrongState { task: parent, state: st, op: "fork" });
        }
        let p = self.t(parent).clone();
        // Its lowest CPU tells whether the mask names one of this machine's
        // (an empty mask means every CPU, which some CPU online always is).
        let refused = params.is_some_and(|q| {
            !q.allowed.is_empty()
                && !q.allowed.intersects(&self.online)
                && q.allowed.first().is_some_and(|c| c < self.rqs.len())
        });
        let inherited = params.is_none() || refused;
        let params = match params {
            Some(q) if refused => TaskParams { allowed: p.allowed, uid: Some(q.uid.unwrap_or(p.uid)), ..q },
            Some(q) => TaskParams { uid: Some(q.uid.unwrap_or(p.uid)), ..q },
            None => TaskParams { nice: p.nice, policy: p.policy, allowed: p.allowed, uid: Some(p.uid) },
        };
        let this_cpu = p.cpu;
        let child = self.new_task(&params, this_cpu, inherited)?;
        // sched_fork touches no runqueue clock in any profile;
        // wake_up_new_task updates the child's runqueue only (2.6.26
        // bce7f793 sched.c:2268, 2.6.32 sched.c:2545-2620), below. So the
        // parent's CPU keeps its clock when the child goes elsewhere.
        self.advance(now);
        // dup_task_struct copies the whole entity; __sched_fork then resets
        // the runtime statistics (new_task's defaults) but not vruntime, nor
        // the `waker` pointer of patches.md §1, which the patch adds to the
        // entity without resetting it in __sched_fork: a child starts with
        // its parent's waker. (Mike's last_preempter is reset there, §4.)
        self.tm(child).se.vruntime = p.se.vruntime;
        self.tm(child).se.waker = p.se.waker;
        // dup_task_struct's setup_thread_stack copies the parent's
        // thread_info flags too (bce7f793 kernel/fork.c:213; 4b119e21
        // fork.c:194), and no profile's sched_fork clears TIF_NEED_RESCHED:
        // a child forked while a reschedule is raised on its parent goes
        // through schedule() again as soon as it is first switched in.
        self.tm(child).need_resched = self.rqs[this_cpu].need_resched;
        let mut cpu = self.sched_balance_fork(this_cpu, child);
        // A child inherits its parent's mask unchecked (dup_task_struct),
        // and sched_fork places it where the balance says (beside a
        // stranded parent that is outside the mask). A mask given with the
        // fork is the caller's fork-then-sched_setaffinity: a child outside
        // it moves at once to its first allowed CPU, as set_cpus_allowed
        // moves a task that has not run.
        let allowed = self.t(child).allowed;
        if !inherited && !allowed.contains(cpu) {
            cpu = self.any_online_cpu(&allowed).unwrap_or(this_cpu);
        }
        if cpu != this_cpu {
            self.set_task_cpu(child, cpu);
            self.emit(Event::Migrate { task: child, from: this_cpu, to: cpu, reason: MigrateReason::Fork });
        }
        if !self.t(child).allowed.contains(cpu) {
            self.stranded.push(child);
        }
        // wake_up_new_task's update_rq_clock of the child's runqueue
        // (a no-op in 2.6.25 when fork balancing put it on another CPU).
        self.update_rq_clock_on(this_cpu, cpu, now);
        self.task_new_fair(cpu, child, Some(this_cpu));
        // wake_up_new_task runs in the parent, so the parent is `current`:
        // the last_preempter patch tags it when the child, placed on the
        // parent's CPU, would preempt it.
        self.check_preempt_wakeup(cpu, child, true, Some(parent), false);
        self.emit(Event::Fork { parent: Some(parent), child, cpu });
        self.finish(ApiCall::Fork { now, parent, child })?;
        Ok(ForkOutcome { child, cpu })
    }

    /// `try_to_wake_up(p, sync)` run on `waker_cpu` (whose current task is
    /// the waker, or the idle task for an interrupt-time wakeup).
    pub fn wake_up(&mut self, now: u64, task: TaskId, waker_cpu: CpuId, sync: bool) -> Result<WakeOutcome, SchedError> {
        self.check_online(waker_cpu)?;
        let st = self.check_task(task)?;
        if st == TaskState::Dead {
            return Err(SchedError::WrongState { task, state: st, op: "wake_up" });
        }
        self.advance(now);
        let out = self.try_to_wake_up(now, task, waker_cpu, sync, false);
        self.finish(ApiCall::Wake { now, task, waker_cpu, sync })?;
        Ok(out)
    }

    /// `try_to_wake_up` from interrupt context on `cpu` (a timer expiry,
    /// a signal from a softirq): as [`Scheduler::wake_up`], but the
    /// interrupted task is not treated as the waker where the kernel makes
    /// that distinction (2.6.32's `in_interrupt()` test).
    pub fn wake_up_irq(&mut self, now: u64, task: TaskId, cpu: CpuId, sync: bool) -> Result<WakeOutcome, SchedError> {
        self.check_online(cpu)?;
        let st = self.check_task(task)?;
        if st == TaskState::Dead {
            return Err(SchedError::WrongState { task, state: st, op: "wake_up_irq" });
        }
        self.advance(now);
        let out = self.try_to_wake_up(now, task, cpu, sync, true);
        self.finish(ApiCall::Wake { now, task, waker_cpu: cpu, sync })?;
        Ok(out)
    }

    /// `set_current_state(state)` by `task`, which must be running (the
    /// kernel's `current`): as a wait loop does before it tests its
    /// condition (do_select, sk_wait_data, prepare_to_wait) and, with
    /// [`CurrentState::Running`], when it leaves the loop without sleeping.
    ///
    /// While the task is TASK_INTERRUPTIBLE and still on its runqueue, a
    /// [`Scheduler::wake_up`] takes try_to_wake_up's `out_running` path
    /// (the preemption check on its CPU, which stamps the current task's
    /// `last_wakeup` and makes it the next buddy, then TASK_RUNNING), and
    /// [`Deschedule::Schedule`] dequeues it. A wakeup of a task left
    /// TASK_RUNNING does nothing. [`Deschedule::Sleep`] sets the state
    /// itself, so callers that never race a wakeup need not call this.
    pub fn set_current_state(&mut self, task: TaskId, state: CurrentState) -> Result<(), SchedError> {
        let st = self.check_task(task)?;
        if st != TaskState::Running {
            return Err(SchedError::WrongState { task, state: st, op: "set_current_state" });
        }
        self.tm(task).current_state = state;
        self.finish(ApiCall::SetCurrentState { task, state })
    }

    /// `schedule()` on `cpu`: the current task leaves as `how` says, an
    /// empty runqueue runs idle_balance, and the next task is picked.
    pub fn schedule(&mut self, now: u64, cpu: CpuId, how: Deschedule) -> Result<Switch, SchedError> {
        self.check_online(cpu)?;
        let prev = self.rqs[cpu].curr;
        if prev.is_none() && how != Deschedule::Preempt {
            return Err(SchedError::IdleCpu(cpu));
        }
        // cpu_idle(): the idle loop restarts a stopped tick before it calls
        // schedule() (tick_nohz_restart_sched_tick).
        self.tick_nohz_restart_sched_tick(cpu);
        let sw = self.do_schedule(now, cpu, how);
        self.finish(ApiCall::Schedule { now, cpu, how })?;
        Ok(sw)
    }

    /// `scheduler_tick()` on `cpu`: update_cpu_load, the fair task_tick,
    /// then (trigger_load_balance → SCHED_SOFTIRQ) rebalance_domains when
    /// `next_balance` is due. Returns whether `cpu` must reschedule.
    pub fn tick(&mut self, now: u64, cpu: CpuId) -> Result<bool, SchedError> {
        self.check_online(cpu)?;
        if self.rqs[cpu].tick_stopped {
            return Err(SchedError::TickStopped(cpu));
        }
        self.scheduler_tick(now, cpu);
        self.finish(ApiCall::Tick { now, cpu })?;
        Ok(self.rqs[cpu].need_resched)
    }

    /// The hrtick timer of `cpu` fired (see [`Scheduler::hrtick_expiry`]).
    /// A stale expiry (re-armed or cancelled since) is ignored.
    pub fn hrtick(&mut self, now: u64, cpu: CpuId) -> Result<bool, SchedError> {
        self.check_online(cpu)?;
        self.hrtick_fire(now, cpu);
        self.finish(ApiCall::Hrtick { now, cpu })?;
        Ok(self.rqs[cpu].need_resched)
    }

    /// `set_user_nice`.
    pub fn set_nice(&mut self, now: u64, task: TaskId, nice: i32) -> Result<(), SchedError> {
        let st = self.check_task(task)?;
        if st == TaskState::Dead {
            return Err(SchedError::WrongState { task, state: st, op: "set_nice" });
        }
        let nice = clamp_nice(nice);
        let policy = self.t(task).policy;
        // set_user_nice returns at once when the nice level does not change
        // (2.6.26 sched.c:4570): no requeue, buddies and min_vruntime untouched.
        if nice != self.t(task).nice {
            self.change_weight(now, task, policy, nice);
        }
        self.finish(ApiCall::SetNice { now, task, nice })
    }

    /// `sched_setscheduler` between the fair policies.
    pub fn set_policy(&mut self, now: u64, task: TaskId, policy: Policy) -> Result<(), SchedError> {
        let st = self.check_task(task)?;
        if st == TaskState::Dead {
            return Err(SchedError::WrongState { task, state: st, op: "set_policy" });
        }
        let nice = self.t(task).nice;
        let (cpu, on_rq) = (self.t(task).cpu, self.t(task).se.on_rq);
        let running = self.rqs[cpu].curr == Some(task);
        // sched_setscheduler (2.6.26 sched.c:4848-4864; 4b119e21
        // :4629-4645, 22763c5c :6324-6339): dequeue; a running task goes
        // through the class's put_prev_task; __setscheduler's
        // set_load_weight; set_curr_task (set_next_entity: the slice_max
        // schedstat, then a new slice, prev_sum_exec_runtime =
        // sum_exec_runtime) *before* the enqueue, whose hrtick_start_fair
        // then arms a whole slice; then check_class_changed ->
        // prio_changed_fair: check_preempt_curr for a queued task (the fair
        // policies share prio, so a running one is not rescheduled).
        self.set_clock(cpu, now);
        if on_rq {
            self.deactivate_task(cpu, task, false);
        }
        if running {
            self.put_prev_task_fair(cpu, task);
        }
        let lw = crate::weights::set_load_weight(policy, nice, self.cfg.version);
        let t = self.tm(task);
        t.policy = policy;
        t.se.load = lw;
        if running {
            self.set_curr_task_fair(cpu, task);
        }
        if on_rq {
            self.activate_task(cpu, task, false);
            if !running {
                self.check_preempt_curr(cpu, task, false);
            }
        }
        self.finish(ApiCall::SetPolicy { now, task, policy })
    }

    /// `set_cpus_allowed_ptr`. A task running or queued on a now-forbidden
    /// CPU gets a request for that CPU's migration thread, to move it to the
    /// first allowed CPU (`any_online_cpu`), and that CPU is rescheduled, as
    /// the thread's wakeup preempts its current task; the move happens in
    /// that CPU's next schedule() (or before the CPU goes down). A sleeping
    /// one just gets that CPU as its `task_cpu` (migrate_task: `!on_rq &&
    /// !task_running` -> set_task_cpu, 2.6.26 sched.c:1745-1760), so its
    /// next wakeup starts from an allowed CPU.
    pub fn set_affinity(&mut self, now: u64, task: TaskId, mask: CpuMask) -> Result<(), SchedError> {
        let st = self.check_task(task)?;
        if st == TaskState::Dead {
            return Err(SchedError::WrongState { task, state: st, op: "set_affinity" });
        }
        let mask = self.normalise_mask(mask, true)?;
        self.advance(now);
        self.tm(task).allowed = mask;
        self.stranded.retain(|&t| t != task);
        let cpu = self.t(task).cpu;
        if !mask.contains(cpu) {
            let dest = self.any_online_cpu(&mask).unwrap_or(cpu);
            match st {
                TaskState::Queued | TaskState::Running => {
                    // migrate_task queues a request on the task's runqueue
                    // for every task on one, running or queued (bce7f793
                    // sched.c:1752-1760), and wakes that CPU's migration
                    // thread, which carries it out in the CPU's next
                    // schedule(), after the current task is put back.
                    self.pending_move.push((task, cpu, dest));
                    self.wake_migration_thread(cpu, cpu, now);
                }
                TaskState::Sleeping => self.set_task_cpu(task, dest),
                TaskState::Dead => {}
            }
        }
        self.finish(ApiCall::SetAffinity { now, task, mask })
    }

    /// `sched_yield()` by the current task of `cpu`.
    pub fn sched_yield(&mut self, now: u64, cpu: CpuId) -> Result<Switch, SchedError> {
        self.schedule(now, cpu, Deschedule::Yield)
    }

    /// Runs `rebalance_domains` for `cpu` now, regardless of `next_balance`.
    pub fn rebalance(&mut self, now: u64, cpu: CpuId) -> Result<(), SchedError> {
        self.check_online(cpu)?;
        self.set_clock(cpu, now);
        let idle = self.rqs[cpu].is_idle();
        self.rebalance_domains(cpu, idle);
        self.finish(ApiCall::Rebalance { now, cpu })
    }
}

/// A domain chain's balancing state as the kernel's initialisers leave it
/// (`last_balance = jiffies`, the initial `balance_interval`, no failures):
/// at boot, and for domains rebuilt after a CPU went down or came up.
pub(crate) fn fresh_domain_state(chain: &[cfs_topology::SchedDomain], jiffies: u64) -> Vec<DomainState> {
    chain
        .iter()
        .map(|d| DomainState {
            last_balance: jiffies,
            balance_interval: d.params.balance_interval,
            nr_balance_failed: 0,
        })
        .collect()
}

/// A patch that changes the domain initialisers: the kernel would have
/// built these levels with its flags, at boot and at every rebuild.
pub(crate) fn apply_patch_domain_flags(cfg: &Config, domains: &mut SchedDomains) {
    for p in cfg.patches.iter() {
        for &(level, set, clear) in p.domain_flags() {
            domains.override_flags(level, set, clear);
        }
    }
}
