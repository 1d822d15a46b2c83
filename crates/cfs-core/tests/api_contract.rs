//! The API's own contract, apart from the kernel logic: what
//! `Scheduler::with_observer` accepts as domains, how a CPU number is
//! checked, what `take_resched` and `Switch` report, that a fork moved by
//! fork balancing leaves the child where the outcome says, what a yield
//! does, and each error's text. Found by mutation testing of sched.rs (the
//! soak test reaches these paths with random calls but decides none of
//! them) and by coverage (`sched_yield` and the error texts).

use cfs_core::{
    Config, ConfigError, CpuMask, Deschedule, Event, KernelVersion, MigrateReason, Observer, SchedDomains, SchedError,
    Scheduler, SettingError, TaskParams,
};
use cfs_topology::{DomainLevel, GroupRing, Host, MAX_CPUS};

const V: KernelVersion = KernelVersion::V2_6_26Rc4;
const T0: u64 = 1_000_000_000;

fn q6600() -> SchedDomains {
    Host::preset("q6600").unwrap().build_domains(V)
}

fn build(domains: SchedDomains) -> Result<Scheduler<()>, ConfigError> {
    let n = domains.nr_cpus().max(1);
    Scheduler::new(Config::new(V, n), domains)
}

#[test]
fn the_machine_may_have_up_to_max_cpus() {
    // MAX_CPUS CPUs without domains are a machine; one more is refused.
    let flat = |n: usize| SchedDomains { version: V, per_cpu: vec![vec![]; n] };
    assert_eq!(build(flat(MAX_CPUS)).unwrap().nr_cpus(), MAX_CPUS);
    assert!(matches!(build(flat(MAX_CPUS + 1)), Err(ConfigError::Domains(_))));
    // No CPUs at all is taken as one CPU without domains.
    let mut s = build(flat(0)).unwrap();
    assert_eq!(s.nr_cpus(), 1);
    assert_eq!(s.domains().nr_cpus(), 1, "the domain table grows to the machine");
    let t = s.spawn(T0, 0, TaskParams::normal()).unwrap();
    assert_eq!(s.schedule(T0, 0, Deschedule::Preempt).unwrap().next, Some(t));
}

#[test]
fn each_malformed_domain_is_refused_on_its_own() {
    assert!(build(q6600()).is_ok());
    // CPU 0's MC domain: a span without CPU 0, no groups, a span past the machine.
    let edits: [fn(&mut SchedDomains); 3] = [
        |d| d.per_cpu[0][0].span = CpuMask::single(1),
        |d| d.per_cpu[0][0].groups = GroupRing::default(),
        |d| d.per_cpu[0][0].span = CpuMask::from_cpus([0, 1, 4]),
    ];
    for (i, edit) in edits.iter().enumerate() {
        let mut d = q6600();
        edit(&mut d);
        match build(d) {
            Err(ConfigError::Domains(msg)) => assert!(msg.contains("CPU 0"), "edit {i}: {msg}"),
            other => panic!("edit {i}: {other:?}"),
        }
    }
}

#[test]
fn a_cpu_number_is_checked_against_the_machine() {
    let mut s = build(q6600()).unwrap();
    assert!(matches!(s.spawn(T0, 4, TaskParams::normal()), Err(SchedError::BadCpu(4))));
    assert!(matches!(s.tick(T0, 4), Err(SchedError::BadCpu(4))));
    assert!(s.spawn(T0, 3, TaskParams::normal()).is_ok());
    assert_eq!(s.tasks().len(), 1);
}

#[test]
fn take_resched_hands_each_newly_raised_flag_over_once() {
    // A task spawned on an idle CPU preempts its idle task: CPU 2 needs a resched.
    let mut s = build(q6600()).unwrap();
    assert!(s.take_resched().is_empty());
    s.spawn(T0, 2, TaskParams::normal()).unwrap();
    assert_eq!(s.take_resched(), CpuMask::single(2));
    assert!(s.take_resched().is_empty());
    assert!(s.need_resched(2), "the flag itself stays until schedule()");
}

#[test]
fn a_switch_reports_whether_the_task_changed() {
    let mut s = build(q6600()).unwrap();
    let t = s.spawn(T0, 0, TaskParams::normal()).unwrap();
    let first = s.schedule(T0, 0, Deschedule::Preempt).unwrap();
    assert!(first.switched() && first.prev.is_none() && first.next == Some(t));
    // Alone on its CPU, a preempted task is picked again: no switch.
    let again = s.schedule(T0 + 1_000, 0, Deschedule::Preempt).unwrap();
    assert!(!again.switched() && again.prev == Some(t) && again.next == Some(t));
    assert!(format!("{s:?}").starts_with("Scheduler { version: V2_6_26Rc4, nr_cpus: 4, nr_tasks: 1"));
}

/// Records fork migrations.
#[derive(Default)]
struct Forks(Vec<(usize, usize)>);

impl Observer for Forks {
    fn event(&mut self, _now: u64, ev: &Event) {
        if let Event::Migrate { from, to, reason: MigrateReason::Fork, .. } = ev {
            self.0.push((*from, *to));
        }
    }
}

#[test]
fn a_forked_child_lives_where_fork_balancing_put_it() {
    // sched_balance_self (rc4 sched.c:2015-2072) from busy CPU 0 of an otherwise idle
    // Q6600 (no tick yet, so every cpu_load[] is 0 and each level is a tie that the
    // non-local group wins): the idlest group of the CPU domain is die {2,3}, whose
    // idlest CPU is 2
    // (ties go to the lowest). The walk goes on in CPU 2's MC domain, where
    // find_idlest_group keeps the idle non-local group {3}: the local one would have to
    // be lighter (`100*this_load < imbalance*min_load` returns NULL: 0 < 0 is false).
    // So the child is set to CPU 3, and one Migrate(Fork) 0 -> 3 says so.
    let mut s = Scheduler::with_observer(Config::new(V, 4), q6600(), Forks::default()).unwrap();
    let p = s.spawn(T0, 0, TaskParams::normal()).unwrap();
    s.schedule(T0, 0, Deschedule::Preempt).unwrap();
    let out = s.fork(T0 + 1_000, p, None).unwrap();
    assert_eq!(out.cpu, 3);
    assert_eq!(s.task(out.child).unwrap().cpu, 3);
    assert_eq!(s.rq(3).unwrap().nr_running, 1);
    assert_eq!(s.observer().0, vec![(0, 3)]);
    // Pinned to CPU 0, the child stays, and no migration is reported.
    let pinned = TaskParams::normal().allowed(CpuMask::single(0));
    let out = s.fork(T0 + 2_000, p, Some(pinned)).unwrap();
    assert_eq!((out.cpu, s.task(out.child).unwrap().cpu), (0, 0));
    assert_eq!(s.observer().0.len(), 1);
}

#[test]
fn sched_yield_is_a_no_op_for_normal_tasks_unless_compat_yield() {
    // 2.6.26 yield_task_fair (e490517a sched_fair.c): without
    // sysctl_sched_compat_yield a SCHED_NORMAL task's yield only updates its
    // runtime, and schedule() picks the leftmost again. A runs on CPU 0 and
    // B, spawned after it, waits with START_DEBIT's vslice ahead of A: A is
    // picked again. With compat_yield, A is put past the rightmost (B's
    // vruntime + 1) and B runs.
    for (compat, next) in [(0, 0), (1, 1)] {
        let mut s = build(q6600()).unwrap();
        let ids = [s.spawn(T0, 0, TaskParams::normal()).unwrap(), s.spawn(T0, 0, TaskParams::normal()).unwrap()];
        assert_eq!(s.schedule(T0, 0, Deschedule::Preempt).unwrap().next, Some(ids[0]));
        s.set_tunable("sched_compat_yield", compat).unwrap();
        let y = s.sched_yield(T0 + 1_000, 0).unwrap();
        assert_eq!((y.prev, y.next), (Some(ids[0]), Some(ids[next])), "compat_yield={compat}");
    }
    // sched_yield() is a call of the current task: an idle CPU has none.
    let mut s = build(q6600()).unwrap();
    assert!(matches!(s.sched_yield(T0, 1), Err(SchedError::IdleCpu(1))));
    assert!(matches!(s.sched_yield(T0, 4), Err(SchedError::BadCpu(4))));
}

#[test]
fn a_yield_leaves_the_task_runnable_for_a_wakeup_to_pass_by() {
    // yield() sets TASK_RUNNING before sys_sched_yield (bce7f793 sched.c:5243-5247,
    // 22763c5c :6746-6750). A task that set TASK_INTERRUPTIBLE and then yields is
    // TASK_RUNNING afterwards, so try_to_wake_up returns at its state test: not
    // woken, no preemption check, no next buddy. Without the reset it takes the
    // out_running path and reports the task woken.
    for v in [KernelVersion::V2_6_25, KernelVersion::V2_6_26, KernelVersion::V2_6_32] {
        let h = cfs_topology::Host::preset("q6600").unwrap();
        let mut s = Scheduler::new(Config::new(v, 4), h.build_domains(v)).unwrap();
        let a = s.spawn(T0, 0, TaskParams::normal()).unwrap();
        assert_eq!(s.schedule(T0, 0, Deschedule::Preempt).unwrap().next, Some(a));
        s.set_current_state(a, cfs_core::CurrentState::Interruptible).unwrap();
        s.sched_yield(T0 + 1_000, 0).unwrap();
        assert_eq!(s.task(a).unwrap().current_state, cfs_core::CurrentState::Running, "{v}");
        let out = s.wake_up(T0 + 2_000, a, 1, false).unwrap();
        assert!(!out.woken, "{v}");
    }
}

#[test]
fn every_error_says_what_went_wrong_in_one_line() {
    // The texts a driver shows its user (cfs-sim prints them as they are).
    let cases: [(Box<dyn std::fmt::Display>, &str); 10] = [
        (Box::new(SchedError::BadCpu(7)), "CPU 7 does not exist"),
        (Box::new(SchedError::IdleCpu(2)), "CPU 2 is running the idle task"),
        (Box::new(SchedError::EmptyAffinity), "affinity mask holds no online CPU of this host"),
        (Box::new(SchedError::TooManyTasks), "task id space exhausted"),
        (Box::new(SchedError::TickStopped(3)), "CPU 3 has stopped its tick (NO_HZ idle)"),
        (
            Box::new(ConfigError::FeatureTableMismatch),
            "the sched_features value was built for another kernel's feature table",
        ),
        (Box::new(ConfigError::BadHz(0)), "HZ=0 is out of range 1..=10000"),
        (Box::new(ConfigError::Domains("CPU 0: x".into())), "sched domains do not fit: CPU 0: x"),
        (Box::new(SchedError::Setting(SettingError::UnknownTunable("x".into()))), "unknown tunable \"x\""),
        (
            Box::new(SchedError::Setting(SettingError::NoSuchLevel(DomainLevel::Sibling))),
            "no Sibling sched domain on this host",
        ),
    ];
    for (e, want) in cases {
        assert_eq!(e.to_string(), want);
        assert!(!want.contains('\n'));
    }
}
