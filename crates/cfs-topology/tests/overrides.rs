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
