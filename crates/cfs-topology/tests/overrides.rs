//! The per-level flag override parser and its application.

use cfs_topology::{
    DomainLevel as L, FlagOverride, Host, KernelVersion as V, OverrideError, SdFlags, parse_flag_overrides,
    parse_flag_overrides_for,
};

#[test]
fn parses_the_example() {
    let o = parse_flag_overrides("MC:-PREFER_LOCAL,CPU:-PREFER_LOCAL,NODE:+PREFER_LOCAL").unwrap();
    assert_eq!(
        o,
        [
            FlagOverride { level: L::Mc, set: SdFlags::empty(), clear: SdFlags::PREFER_LOCAL },
            FlagOverride { level: L::Cpu, set: SdFlags::empty(), clear: SdFlags::PREFER_LOCAL },
            FlagOverride { level: L::Node, set: SdFlags::PREFER_LOCAL, clear: SdFlags::empty() },
        ]
    );
    let o = parse_flag_overrides(" smt : +sd_wake_idle - BALANCE_NEWIDLE ").unwrap();
    assert_eq!(o, [FlagOverride { level: L::Sibling, set: SdFlags::WAKE_IDLE, clear: SdFlags::BALANCE_NEWIDLE }]);
    assert!(parse_flag_overrides("  ").unwrap().is_empty());
}

/// 2.6.32-rc1 MC = 4719 with PREFER_LOCAL (0x40); clearing it gives 2.6.32
/// final's 4655.
#[test]
fn applies_to_every_cpu() {
    let mut d = Host::preset("q6600").unwrap().build_domains(V::V2_6_32Rc1);
    let o = parse_flag_overrides_for("MC:-PREFER_LOCAL,CPU:-PREFER_LOCAL,NODE:+PREFER_LOCAL", V::V2_6_32Rc1).unwrap();
    assert_eq!(d.apply_overrides(&o), 8, "4 MC + 4 CPU domains; no NODE level");
    assert!(d.per_cpu.iter().flatten().all(|sd| !sd.flags.contains(SdFlags::PREFER_LOCAL)));
    assert_eq!(d.of(2)[0].flags.kernel_value(V::V2_6_32Rc1), 4655);
    assert_eq!(d, Host::preset("q6600").unwrap().build_domains(V::V2_6_32).with_version(V::V2_6_32Rc1));
}

trait WithVersion {
    fn with_version(self, v: V) -> Self;
}

impl WithVersion for cfs_topology::SchedDomains {
    fn with_version(mut self, v: V) -> Self {
        self.version = v;
        self
    }
}

#[test]
fn errors_quote_the_item() {
    let cases = [
        ("MC:-PREFER_LOCAL,,CPU:+WAKE_IDLE", OverrideError::EmptyItem(1)),
        ("MC-PREFER_LOCAL", OverrideError::MissingColon("MC-PREFER_LOCAL".into())),
        ("L3:-PREFER_LOCAL", OverrideError::UnknownLevel { item: "L3:-PREFER_LOCAL".into(), level: "L3".into() }),
        ("MC:PREFER_LOCAL", OverrideError::MissingSign { item: "MC:PREFER_LOCAL".into(), rest: "PREFER_LOCAL".into() }),
        ("MC:", OverrideError::MissingSign { item: "MC:".into(), rest: "".into() }),
        (
            "MC:-PREFER_REMOTE",
            OverrideError::UnknownFlag { item: "MC:-PREFER_REMOTE".into(), flag: "PREFER_REMOTE".into() },
        ),
        ("MC:+", OverrideError::UnknownFlag { item: "MC:+".into(), flag: "".into() }),
        (
            "MC:+WAKE_IDLE-WAKE_IDLE",
            OverrideError::Conflict { item: "MC:+WAKE_IDLE-WAKE_IDLE".into(), flag: "SD_WAKE_IDLE" },
        ),
    ];
    for (text, want) in cases {
        assert_eq!(parse_flag_overrides(text).unwrap_err(), want, "{text}");
    }
    let e = parse_flag_overrides_for("SIBLING:+WAKE_IDLE", V::V2_6_32).unwrap_err();
    assert_eq!(e.to_string(), "SD_WAKE_IDLE does not exist in 2.6.32");
    assert!(parse_flag_overrides_for("MC:+PREFER_LOCAL", V::V2_6_26).is_err());
    assert!(parse_flag_overrides_for("MC:+WAKE_IDLE", V::V2_6_26).is_ok());
}

/// InitFlagEdits composes items as applying them one after the other does:
/// each clears then sets, so `MC:-WAKE_AFFINE` then `MC:+WAKE_AFFINE+WAKE_IDLE`
/// leaves WAKE_AFFINE set, and `CPU:+PREFER_LOCAL` then `CPU:-PREFER_LOCAL`
/// leaves it clear. Checked flag by flag against the sequential result for
/// every start value of the four flags involved.
#[test]
fn init_flag_edits_compose_as_the_items_apply_in_order() {
    use cfs_topology::{DomainLevel, InitFlagEdits, SdFlags};
    let items =
        parse_flag_overrides("MC:-WAKE_AFFINE,CPU:+PREFER_LOCAL,MC:+WAKE_AFFINE+WAKE_IDLE,CPU:-PREFER_LOCAL-SERIALIZE")
            .unwrap();
    let edits = InitFlagEdits::none().with_overrides(&items);
    let bits = [SdFlags::WAKE_AFFINE, SdFlags::WAKE_IDLE, SdFlags::PREFER_LOCAL, SdFlags::SERIALIZE];
    for level in [DomainLevel::Mc, DomainLevel::Cpu, DomainLevel::Node] {
        for start in 0u32..16 {
            let flags =
                bits.iter().enumerate().filter(|(i, _)| start >> i & 1 == 1).fold(SdFlags::empty(), |f, (_, b)| f | *b);
            let sequential = items.iter().filter(|o| o.level == level).fold(flags, |f, o| (f - o.clear) | o.set);
            assert_eq!(edits.apply(level, flags), sequential, "{level:?} from {flags:?}");
        }
    }
    let mc = edits.apply(DomainLevel::Mc, SdFlags::empty());
    assert_eq!(mc, SdFlags::WAKE_AFFINE | SdFlags::WAKE_IDLE);
    assert_eq!(edits.apply(DomainLevel::Cpu, SdFlags::PREFER_LOCAL | SdFlags::SERIALIZE), SdFlags::empty());
    // NODE is untouched; iter lists MC and CPU, each as one combined pair.
    assert_eq!(edits.iter().map(|o| o.level).collect::<Vec<_>>(), [DomainLevel::Mc, DomainLevel::Cpu]);
    assert!(InitFlagEdits::none().is_empty() && !edits.is_empty());
}
