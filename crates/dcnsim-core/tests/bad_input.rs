//! Bad input gets one line naming the field path and the reason.

mod common;
use common::error_of;

const STAR: &str = "[topology]\nkind = \"star\"\nhosts = 4\n";

#[test]
fn unknown_keys_are_errors_at_every_level() {
    assert!(error_of(&format!("colour = 1\n{STAR}")).starts_with("colour: unknown key"));
    assert!(error_of(&format!("{STAR}speed = 3")).starts_with("topology.speed: unknown key"));
    let e = error_of(&format!(
        "{STAR}[network]\nqueue = {{ capacity = \"10pkt\", red = true }}"
    ));
    assert!(e.starts_with("network.queue.red: unknown key"), "{e}");
    let e = error_of(&format!(
        "{STAR}[[traffic.probes]]\nsrc = 0\ndst = 1\nsize = \"1500B\"\nprio = 1"
    ));
    assert!(e.starts_with("traffic.probes[0].prio: unknown key"), "{e}");
}

#[test]
fn bad_units_and_values_name_the_field() {
    let e = error_of("[topology]\nkind = \"star\"\nhosts = 4\nlink = { rate = \"10Gps\" }");
    assert_eq!(
        e,
        "topology.link.rate: unknown unit \"Gps\" in \"10Gps\" (expected one of bps, Kbps, Mbps, Gbps, Tbps)"
    );
    let e = error_of("[topology]\nkind = \"star\"\nhosts = 4\nlink = { rate = \"0Gbps\" }");
    assert_eq!(
        e,
        "topology.link.rate: rate must be positive, got \"0Gbps\""
    );
    let e = error_of("[topology]\nkind = \"star\"\nhosts = 4\nlink = { rate = \"-1Gbps\" }");
    assert!(e.starts_with("topology.link.rate: must be positive"), "{e}");
    let e = error_of(&format!("{STAR}[network]\nhost_delay = \"2.5\""));
    assert!(
        e.starts_with("network.host_delay: \"2.5\" has no unit"),
        "{e}"
    );
    let e = error_of(&format!(
        "{STAR}[[traffic.streams]]\nsrc = 0\ndst = 1\nload = 1.5\nstop = \"1ms\""
    ));
    assert_eq!(
        e,
        "traffic.streams[0].load: load must be in (0, 1], got 1.5"
    );
}

#[test]
fn host_indices_are_checked_against_the_topology() {
    let e = error_of(&format!("{STAR}[[traffic.probes]]\nsrc = 0\ndst = 4"));
    assert_eq!(
        e,
        "traffic.probes[0].dst: host 4 out of range: the topology has 4 hosts (0..3)"
    );
    let e = error_of(&format!(
        "{STAR}[[traffic.streams]]\nsrc = -1\ndst = 1\nrate = \"1Gbps\"\nstop = \"1ms\""
    ));
    assert!(
        e.starts_with("traffic.streams[0].src: expected a host index"),
        "{e}"
    );
}

#[test]
fn topology_errors() {
    assert_eq!(
        error_of("[topology]\nkind = \"fat_tree\"\nk = 5"),
        "topology.k: fat-tree k must be even, got 5"
    );
    // 10^6 x 10^6 hosts would wrap a 32-bit product; it is refused before building.
    assert_eq!(
        error_of("[topology]\nkind = \"leaf_spine\"\nleaves = 1000000\nspines = 1\nhosts_per_leaf = 1000000"),
        "topology.hosts_per_leaf: gives 1000000000000 hosts, more than the 1000000 a topology may have"
    );
    assert!(
        error_of("[topology]\nkind = \"tree3\"\ntors = 1000\naggs = 1\nhosts_per_tor = 1001")
            .starts_with("topology.hosts_per_tor: gives 1001000 hosts")
    );
    assert!(error_of("[topology]\nkind = \"tree3\"\ntors = 7")
        .starts_with("topology.tors: must be a multiple of aggs"));
    assert_eq!(error_of("seed = 1"), "topology: required");
    assert_eq!(
        error_of("[topology]\nkind = \"fat_tree\""),
        "topology.k: required"
    );
    let e = error_of(
        r#"[topology]
kind = "edges"
nodes = [{name = "a", kind = "host"}, {name = "s", kind = "switch"}]
links = [{a = "a", b = "t"}]"#,
    );
    assert_eq!(
        e,
        "topology.links[0].b: no node named \"t\" in topology.nodes"
    );
}

#[test]
fn streams_must_end_and_elr_needs_tiers() {
    let e = error_of(&format!(
        "{STAR}[[traffic.streams]]\nsrc = 0\ndst = 1\nrate = \"1Gbps\""
    ));
    assert!(e.starts_with("traffic.streams[0].stop: required"), "{e}");
    let e = error_of(
        r#"[forwarding]
policy = "elr"
[topology]
kind = "edges"
nodes = [{name = "a", kind = "host"}, {name = "b", kind = "host"}, {name = "s", kind = "switch"}]
links = [{a = "a", b = "s"}, {a = "b", b = "s"}]"#,
    );
    assert!(
        e.starts_with("forwarding.policy: elr needs the tier"),
        "{e}"
    );
    let e = error_of(&format!("{STAR}[forwarding]\nelr_classes = [1]"));
    assert_eq!(e, "forwarding.elr_classes: only with policy = \"elr\"");
    let e = error_of(&format!(
        "{STAR}[forwarding]\npolicy = \"elr\"\nelr_classes = [8]"
    ));
    assert!(
        e.starts_with("forwarding.elr_classes: a traffic class is 0 to 7"),
        "{e}"
    );
    let e = error_of(&format!("{STAR}[forwarding]\npolicy = \"spray\""));
    assert!(
        e.starts_with("forwarding.policy: unknown variant `spray`"),
        "{e}"
    );
    let e = error_of(&format!("{STAR}[trace]\nqueues = [\"sw0->host9\"]"));
    assert!(e.starts_with("trace.queues[0]: no port named"), "{e}");
}

/// Controllers' keys live in their own tables; the old flat keys of
/// `[transport]` are refused in one line naming the new place, and the
/// tables' bad values name the key in the table.
#[test]
fn controller_settings_are_in_their_tables_and_old_keys_name_the_new_place() {
    for (old, new) in [
        (
            "dctcp_g = 0.1",
            "transport.dctcp_g: moved to [transport.dctcp] g",
        ),
        (
            "dctcp_alpha_init = 0.5",
            "transport.dctcp_alpha_init: moved to [transport.dctcp] alpha_init",
        ),
        (
            "d2tcp_d_min = 0.5",
            "transport.d2tcp_d_min: moved to [transport.d2tcp] d_min",
        ),
        (
            "d2tcp_d_max = 2.0",
            "transport.d2tcp_d_max: moved to [transport.d2tcp] d_max",
        ),
        (
            "l2dct_w_max = 2.5",
            "transport.l2dct_w_max: moved to [transport.l2dct] w_max",
        ),
        (
            "l2dct_w_min = 0.1",
            "transport.l2dct_w_min: moved to [transport.l2dct] w_min",
        ),
    ] {
        assert_eq!(error_of(&format!("{STAR}[transport]\n{old}")), new);
    }
    let bad = |table: &str| error_of(&format!("{STAR}[transport.{table}"));
    assert_eq!(
        bad("dctcp]\ng = 0"),
        "transport.dctcp.g: must be in (0, 1], got 0"
    );
    assert!(
        bad("dctcp]\nalpha_init = 2").starts_with("transport.dctcp.alpha_init: must be in [0, 1]")
    );
    assert!(
        bad("d2tcp]\nd_min = 3.0").starts_with("transport.d2tcp.d_min: must be > 0 and ≤ d_max")
    );
    assert!(
        bad("l2dct]\nw_min = 3.0").starts_with("transport.l2dct.w_min: must be > 0 and ≤ w_max")
    );
    assert!(bad("l2dct]\ng = 2").starts_with("transport.l2dct.g: must be in (0, 1]"));
    assert!(bad("pfabric]\nrto = \"0us\"").starts_with("transport.pfabric.rto:"));
    assert!(bad("dctcp]\ngain = 0.1").starts_with("transport.dctcp.gain: unknown key"));
    assert!(bad("newreno]\ng = 0.1").starts_with("transport.newreno.g: unknown key"));
    // A table's keys are taken: a valid one runs.
    let ok = format!(
        "{STAR}[transport]\nprotocol = \"d2tcp\"\n[transport.d2tcp]\ng = 0.125\nd_min = 1.0"
    );
    assert!(dcnsim_core::Scenario::from_toml_str(&ok).is_ok());
}

/// What cannot describe a network is refused in one line naming the field
/// (docs/scenario.md, Bounds), and the same scenario just inside each bound is
/// accepted.
#[test]
fn physical_nonsense_is_refused_naming_the_field() {
    let ok = |text: &str| {
        dcnsim_core::Scenario::from_toml_str(text).unwrap_or_else(|e| panic!("{text}\n{e}"));
    };
    let flow = "[[traffic.flows]]\nsrc = 0\ndst = 1\nsize = \"10KB\"\n";
    assert_eq!(
        error_of(&format!("stop_time = \"0us\"\n{STAR}")),
        "stop_time: a run of zero length simulates nothing: give a time after 0 (or none: run until the traffic ends)"
    );
    ok(&format!("stop_time = \"1ns\"\n{STAR}"));
    // 197 days of link delay; 1 s is the bound, on every delay key.
    for (key, table) in [
        (
            "topology.link.delay",
            "[topology]\nkind = \"star\"\nhosts = 4\nlink = { delay = \"17020800s\" }\n",
        ),
        (
            "network.host_delay",
            &format!("{STAR}[network]\nhost_delay = \"1.5s\"\n"),
        ),
        (
            "network.switch_latency",
            &format!("{STAR}[network]\nswitch_latency = \"2s\"\n"),
        ),
    ] {
        let e = error_of(table);
        assert!(
            e.starts_with(&format!("{key}: a delay of ")) && e.contains("beyond the 1 s bound"),
            "{e}"
        );
    }
    let e = error_of(
        r#"[topology]
kind = "edges"
nodes = [{name = "a", kind = "host"}, {name = "b", kind = "host"}]
links = [{a = "a", b = "b", delay = "2s"}]"#,
    );
    assert!(
        e.starts_with("topology.links[0].delay: a delay of 2 s is beyond"),
        "{e}"
    );
    ok("[topology]\nkind = \"star\"\nhosts = 4\nlink = { delay = \"1s\" }\n");
    assert_eq!(
        error_of(&format!("{STAR}[transport]\nrwnd = \"1B\"\n{flow}")),
        "transport.rwnd: 1 B is smaller than one segment (mss 1460 B): the receiver could never take a full one"
    );
    ok(&format!("{STAR}[transport]\nrwnd = \"1460B\"\n{flow}"));
    let e = error_of(&format!(
        "{STAR}[[traffic.probes]]\nsrc = 0\ndst = 1\nsize = \"1B\""
    ));
    assert!(
        e.starts_with("traffic.probes[0].size: packet size 1 B is smaller than its own headers"),
        "{e}"
    );
    ok(&format!(
        "{STAR}[[traffic.probes]]\nsrc = 0\ndst = 1\nsize = \"28B\""
    ));
    let stream = |rate: &str, extra: &str| {
        format!("stop_time = \"1ms\"\n{STAR}[[traffic.streams]]\nsrc = 0\ndst = 1\nrate = \"{rate}\"\n{extra}")
    };
    assert_eq!(
        error_of(&stream("1000Tbps", "")),
        "traffic.streams[0].rate: 1000000000000000 bps is faster than host 0's link (10000000000 bps); set faster_than_link = true to send it anyway"
    );
    ok(&stream("10Gbps", ""));
    ok(&stream("1000Tbps", "faster_than_link = true"));
    let e = error_of(&format!("{STAR}[network]\nqueue = {{ capacity = \"1B\" }}"));
    assert_eq!(e, "network.queue.capacity: 1 B holds no full packet: one segment is 1500 B (transport.mss 1460 B + header 40 B)");
    let e = error_of(&format!(
        "{STAR}[network]\nnic_queue = {{ capacity = \"1499B\" }}"
    ));
    assert!(
        e.starts_with("network.nic_queue.capacity: 1499 B holds no full packet"),
        "{e}"
    );
    ok(&format!(
        "{STAR}[network]\nqueue = {{ capacity = \"1500B\" }}"
    ));
    ok(&format!(
        "{STAR}[network]\nqueue = {{ capacity = \"1000B\" }}\n[transport]\nmss = \"960B\""
    ));
    // Starts at or after the run's stop_time.
    let e = error_of(&format!("stop_time = \"1ms\"\n{STAR}{flow}start = \"2ms\""));
    assert!(e.starts_with("traffic.flows[0].start: the flow starts at 2000us, not before the run's stop_time (1000us)"), "{e}");
    let e = error_of(&stream("1Gbps", "start = \"1ms\"\nstop = \"3ms\""));
    assert!(
        e.starts_with("traffic.streams[0].start: the stream starts at 1000us"),
        "{e}"
    );
    let e = error_of(&format!(
        "stop_time = \"1ms\"\n{STAR}[[traffic.workloads]]\nsrc = 0\ndst = 1\nsize = \"1KB\"\nload = 0.1\nstart = \"5ms\"\nstop = \"6ms\""
    ));
    assert!(
        e.starts_with("traffic.workloads[0].start: the workload starts at 5000us"),
        "{e}"
    );
    ok(&stream("1Gbps", "start = \"0.999ms\"\nstop = \"3ms\""));
}

/// A CDF file with a size beyond 1 TB (here 1e300 B) is refused naming the line.
#[test]
fn cdf_sizes_are_bounded() {
    let dir = std::env::temp_dir().join(format!("dcnsim-cdf-bound-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (huge, fine) = (dir.join("huge.cdf"), dir.join("fine.cdf"));
    std::fs::write(&huge, "1000 0.5\n1e300 1\n").unwrap();
    std::fs::write(&fine, "1000 0.5\n1e12 1\n").unwrap();
    let workload = |path: &std::path::Path| {
        format!(
            "stop_time = \"1ms\"\n{STAR}[[traffic.workloads]]\nsrc = 0\ndst = 1\ncdf = \"{}\"\nload = 0.1",
            path.display()
        )
    };
    let e = error_of(&workload(&huge));
    assert!(
        e.starts_with("traffic.workloads[0].cdf: ")
            && e.ends_with("line 2: size 1e300 B is beyond the 1e12 B (1 TB) bound of a flow size"),
        "{e}"
    );
    assert!(dcnsim_core::Scenario::from_toml_str(&workload(&fine)).is_ok());
    std::fs::remove_dir_all(&dir).unwrap();
}
