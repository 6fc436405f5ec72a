//! The QJUMP seed's applications (`app/periodic.rs`,
//! `app/request_response.rs`, `app/barrier.rs`, `app/shuffle.rs`) on an
//! idle star of 1 Gbps links of 1 us: their operation rows against the
//! closed forms of store-and-forward serialisation plus propagation.

mod common;
use common::{error_of, run_toml};
use dcnsim_core::Output;

/// A byte takes 8 ns at 1 Gbps.
const PS_PER_BYTE: u64 = 8_000;
const DELAY_PS: u64 = 1_000_000;
const HEADER: u64 = 40;
const MSS: u64 = 1460;

/// One packet of `bytes` between two hosts of the star: two links.
fn one_way_ps(bytes: u64) -> u64 {
    2 * (bytes * PS_PER_BYTE + DELAY_PS)
}

fn star(hosts: u32, traffic: &str) -> String {
    format!(
        r#"
[topology]
kind = "star"
hosts = {hosts}
link = {{ rate = "1Gbps", delay = "1us" }}
{traffic}
"#
    )
}

fn ps(s: f64) -> u64 {
    (s * 1e12).round() as u64
}

/// (op_id, host, start, end, value) of `app`'s rows, ends in picoseconds.
fn rows(out: &Output, app: &str) -> Vec<(i64, i64, u64, u64, f64)> {
    let names = out.ops.str("application");
    let (id, host) = (out.ops.i64("op_id"), out.ops.i64("host"));
    let (start, end, value) = (
        out.ops.f64("start_s"),
        out.ops.f64("end_s"),
        out.ops.f64("value"),
    );
    (0..names.len())
        .filter(|&i| names[i] == app)
        .map(|i| (id[i], host[i], ps(start[i]), ps(end[i]), value[i]))
        .collect()
}

/// The server sends each interval one 90 B message to each of 3 clients,
/// back to back through its link: client c's (by place) waits for c
/// messages ahead of it. Its latency never changes, so its offset error is
/// zero.
#[test]
fn periodic_latency_is_one_way_plus_the_messages_ahead() {
    let out = run_toml(&star(
        4,
        r#"[[traffic.periodic]]
server = 0
clients = [3, 1, 2]
interval = "100us"
stop = "1ms""#,
    ));
    let r = rows(&out, "periodic");
    assert_eq!(r.len(), 30);
    for (seq, host, start, end, offset) in r {
        let place = [3, 1, 2].iter().position(|&h| h == host).unwrap() as u64;
        assert_eq!(start, seq as u64 * 100_000_000);
        assert_eq!(
            end - start,
            one_way_ps(90) + place * 90 * PS_PER_BYTE,
            "client {host}"
        );
        assert_eq!(offset, 0.0);
    }
}

/// One client, 64 B requests and 1024 B responses, each one segment, with
/// 1 ms of think time (every ACK has left before the next request): after
/// the first (which opens both connections), a request takes the request's
/// one-way time plus the response's, and the server's ACK of the request,
/// sent as the request arrives, goes ahead of the response on its link.
#[test]
fn request_latency_is_the_request_and_the_response_one_way() {
    let out = run_toml(&star(
        2,
        r#"[[traffic.request_response]]
servers = [0]
clients = [1]
requests = 5
think = "1ms""#,
    ));
    let r = rows(&out, "request_response");
    assert_eq!(r.len(), 5);
    let expected = one_way_ps(64 + HEADER) + HEADER * PS_PER_BYTE + one_way_ps(1024 + HEADER);
    for &(id, host, start, end, value) in &r[1..] {
        assert_eq!(host, 1);
        assert_eq!(end - start, expected, "request {id}");
        assert_eq!(ps(value), expected);
    }
    // The first also carries both handshakes: a SYN and a SYN-ACK each way.
    assert!(r[0].3 - r[0].2 >= expected + 2 * 2 * one_way_ps(HEADER));
}

/// Four hosts exchange 64 B messages (104 B packets, w = 832 ns on a link)
/// all to all. Host h sends to h+1, h+2, h+3 back to back, so receiver r
/// gets them from r−1, r−2, r−3 one link-time apart and never queues: the
/// last message leaves its sender's link at 3w + d and the switch at
/// 4w + d, and arrives at 4w + 2d, for every iteration after the first.
#[test]
fn barrier_sync_time_is_k_message_times_and_two_links() {
    let out = run_toml(&star(
        4,
        r#"[[traffic.barrier]]
hosts = "all"
iterations = 4
gap = "1ms""#,
    ));
    let r = rows(&out, "barrier");
    assert_eq!(r.len(), 16);
    let w = (64 + HEADER) * PS_PER_BYTE;
    // The last iteration closes the connections: each message's FIN (a
    // 40 B packet) follows it on its sender's link, so the third message
    // waits behind two FINs.
    let fins = |it: i64| if it == 3 { 2 * HEADER * PS_PER_BYTE } else { 0 };
    for &(it, _, start, end, sync) in r.iter().filter(|row| row.0 > 0) {
        assert_eq!(
            end - start,
            4 * w + 2 * DELAY_PS + fins(it),
            "iteration {it}"
        );
        assert_eq!(ps(sync), end - start);
    }
}

/// One mapper sends 1000 full segments to one reducer, twice: each job is
/// one flow on an idle path, the handshake then the segments back to back
/// (`tests/apps.rs`, `fct_ps`).
#[test]
fn shuffle_job_runtime_is_the_flow_on_an_idle_path() {
    let out = run_toml(&star(
        2,
        &format!(
            r#"[[traffic.shuffle]]
mappers = [0]
reducers = [1]
bytes = "{}B"
jobs = 2
gap = "1ms""#,
            1000 * MSS
        ),
    ));
    let r = rows(&out, "shuffle");
    assert_eq!(r.len(), 2);
    let wire = (MSS + HEADER) * PS_PER_BYTE;
    let fct = 2 * one_way_ps(HEADER) + HEADER * PS_PER_BYTE + 1001 * wire + 2 * DELAY_PS;
    for (job, _, start, end, runtime) in r {
        assert_eq!(end - start, fct, "job {job}");
        assert_eq!(ps(runtime), fct);
    }
}

#[test]
fn applications_without_hosts_name_the_field() {
    let err = |t: &str| error_of(&star(4, t));
    assert_eq!(
        err("[[traffic.request_response]]\nservers = [0]\nclients = []\nrequests = 1"),
        "traffic.request_response[0].clients: needs at least one client"
    );
    assert_eq!(
        err("[[traffic.periodic]]\nserver = 0\nclients = [0]\ninterval = \"1ms\"\nstop = \"2ms\""),
        "traffic.periodic[0].clients[0]: host 0 is the server"
    );
    assert_eq!(
        err("[[traffic.barrier]]\nhosts = [2]\niterations = 1"),
        "traffic.barrier[0].hosts: a barrier needs at least two hosts"
    );
    assert_eq!(
        err("[[traffic.shuffle]]\nmappers = []\nreducers = [1]\nbytes = \"1MB\""),
        "traffic.shuffle[0].mappers: needs at least one mapper"
    );
    assert_eq!(
        err("[[traffic.request_response]]\nservers = [0]\nclients = [1]\nrequests = 0"),
        "traffic.request_response[0].requests: must be at least 1"
    );
}
