//! `Host::distance` on the presets and its ordering.

use cfs_topology::{Distance as D, Host};

#[test]
fn ordering_is_nearness() {
    let order = [
        D::SameCpu,
        D::SameCore,
        D::SharedCache { level: 2 },
        D::SharedCache { level: 3 },
        D::SamePackage,
        D::SameNode,
        D::RemoteNode { distance: 20 },
        D::RemoteNode { distance: 21 },
    ];
    assert!(order.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn q6600_dies() {
    let h = Host::preset("q6600").unwrap();
    assert_eq!(h.distance(0, 0), D::SameCpu);
    assert_eq!(h.distance(0, 1), D::SharedCache { level: 2 });
    assert_eq!(h.distance(1, 2), D::SamePackage, "the two dies share no cache");
}

#[test]
fn x2_private_l2() {
    let h = Host::preset("x2").unwrap();
    assert_eq!(h.distance(0, 1), D::SamePackage);
}

#[test]
fn nehalem_threads_l3_and_qpi() {
    let h = Host::preset("nehalem-ep").unwrap();
    assert_eq!(h.distance(0, 8), D::SameCore);
    assert_eq!(h.distance(0, 3), D::SharedCache { level: 3 });
    assert_eq!(h.distance(11, 0), D::SharedCache { level: 3 });
    assert_eq!(h.distance(0, 4), D::RemoteNode { distance: 21 });
    assert_eq!(h.distance(15, 8), D::RemoteNode { distance: 21 });
}

#[test]
fn fsb_sockets_share_a_node() {
    let t = Host::preset("tigerton").unwrap();
    assert_eq!(t.distance(0, 1), D::SharedCache { level: 2 });
    assert_eq!(t.distance(0, 2), D::SamePackage);
    assert_eq!(t.distance(0, 4), D::SameNode);
    let s = Host::preset("stoakley").unwrap();
    assert_eq!(s.distance(3, 4), D::SameNode);
}

#[test]
fn symmetric_on_every_pair() {
    for name in cfs_topology::PRESET_NAMES {
        let h = Host::preset(name).unwrap();
        for a in 0..h.nr_cpus() {
            for b in 0..h.nr_cpus() {
                assert_eq!(h.distance(a, b), h.distance(b, a), "{name} {a} {b}");
                assert_eq!(h.distance(a, b) == D::SameCpu, a == b);
            }
        }
    }
}

#[test]
#[should_panic(expected = "CPU 9 out of range")]
fn out_of_range_panics() {
    Host::preset("q6600").unwrap().distance(9, 9);
}

#[test]
fn labels_are_the_documented_short_names() {
    let labels: Vec<String> = [
        D::SameCpu,
        D::SameCore,
        D::SharedCache { level: 2 },
        D::SamePackage,
        D::SameNode,
        D::RemoteNode { distance: 21 },
    ]
    .into_iter()
    .map(D::label)
    .collect();
    assert_eq!(labels, ["same-cpu", "smt", "L2", "package", "node", "remote:21"]);
}
