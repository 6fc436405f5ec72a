//! Congestion controllers: how a sender's window starts, grows and reacts.
//!
//! The TCP machine (`tcp/`) owns sequence space, loss detection and
//! timers; a controller owns the reactions ([`Controller`]): the initial
//! window, growth on ACKs, the cut on ECE, the reaction to the
//! duplicate-ACK threshold (or none: no fast retransmit), the timeout reaction,
//! the window floor for sending (below one segment with pacing), a fixed
//! retransmission timeout, probe mode, a pacing rate, and a timer of its own
//! ([`Controller::deadline`]). Every hook has today's TCP behaviour as its
//! default, so a controller states only what it changes.
//!
//! Add a controller by writing one file here that implements [`Controller`]
//! and [`Build`] (with its settings, the table `[transport.<name>]`) and
//! adding one line to the `controllers!` registry below. A
//! Rust program may also run a controller of its own without registering it
//! ([`Cc::Plugged`]; `Simulation::plug_controller`).

mod botcp;
mod d2tcp;
mod dctcp;
mod ecn;
mod l2dct;
mod pfabric;
mod reno;

pub use botcp::{Botcp, BotcpSpec};
pub use d2tcp::{D2tcp, D2tcpSpec};
pub use dctcp::{Dctcp, DctcpSpec};
pub use ecn::Ecn;
pub use l2dct::{L2dct, L2dctSpec};
pub use pfabric::{Pfabric, PfabricSpec};
pub use reno::{NewReno, SlowStart};

use crate::error::{parse_at, ScenarioError};
use crate::units::Time;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{Map, Value};

/// The sender's window, in bytes, and how ACKs grow it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    pub cwnd: f64,
    pub ssthresh: f64,
    pub mss: f64,
    /// The profile's rule for what an ACK adds ([`reno::grow`]).
    pub slow_start: SlowStart,
}

impl Window {
    pub fn new(cwnd: f64, ssthresh: f64, mss: f64, slow_start: SlowStart) -> Window {
        Window {
            cwnd,
            ssthresh,
            mss,
            slow_start,
        }
    }
}

/// What a controller may look at when it reacts.
#[derive(Clone, Copy, Debug)]
pub struct FlowState {
    pub now: Time,
    /// New data bytes sent so far (L²DCT's attained service).
    pub bytes_sent: u64,
    /// Bytes not yet acknowledged or sent (D²TCP's B).
    pub remaining: u64,
    /// Bytes sent and not yet acknowledged, `snd_max − snd_una` (BOTCP's
    /// test of whether the window limits the sender).
    pub in_flight: u64,
    /// Smoothed RTT, if there is a sample.
    pub srtt: Option<Time>,
    pub deadline: Option<Time>,
}

/// What the TCP machine asks of a controller kind once, for all of its
/// connections: fixed by the kind ([`Build::FLAGS`]), or given with a
/// controller a Rust program plugs in (`Simulation::plug_controller`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flags {
    /// Data segments are sent ECN-capable (ECT(0)).
    pub ecn_capable: bool,
    /// The receiver echoes each CE mark exactly (DCTCP's ACK state machine)
    /// rather than latching ECE until CWR (RFC 3168).
    pub precise_echo: bool,
    /// Whether the duplicate-ACK threshold triggers fast retransmit.
    pub fast_retransmit: bool,
    /// In-band feedback (BOTCP's buffer-occupancy option, seed §4.1): the
    /// value every segment of the flow carries in the packet's 4-byte
    /// option when it leaves, or none (no option, no bytes, no work).
    /// Switches may rewrite it on the way; the receiver echoes it back (the
    /// rule: `tcp/receiver.rs`) and [`Controller::on_feedback`] gets the echo.
    pub inband_option: Option<u32>,
}

impl Flags {
    /// NewReno's: not ECN-capable, fast retransmit, no option.
    pub const NEWRENO: Flags = Flags {
        ecn_capable: false,
        precise_echo: false,
        fast_retransmit: true,
        inband_option: None,
    };
}

/// What a controller kind needs of the rest of the scenario ([`Build::needs`]),
/// checked by `scenario/` for every protocol some flow runs, whatever the
/// kind: so a controller names nothing of the network, and the scenario no
/// controller.
#[derive(Clone, Debug, PartialEq)]
pub enum Need {
    /// A port stage of this kind (as `kind` is written in
    /// `[[network.stages]]`) on every switch egress port; `why` says what
    /// goes wrong without it.
    SwitchStage {
        kind: &'static str,
        why: &'static str,
    },
    /// Every switch egress port's buffer holds at least `bytes` (a buffer
    /// given in packets, of the protocol's largest segments); else the key
    /// `key` of the kind's table is refused with `why`.
    Buffer {
        bytes: u64,
        key: &'static str,
        why: String,
    },
}

/// One controller's reactions. Every method has a default: NewReno's.
pub trait Controller: std::fmt::Debug + Send {
    /// The window before the first ACK: `init_cwnd` segments (RFC 6928: 10).
    fn initial_window(&self, init_cwnd: u32, mss: f64) -> f64 {
        f64::from(init_cwnd) * mss
    }

    /// Grow the window for `acked` newly acknowledged bytes (outside recovery).
    fn on_ack(&mut self, w: &mut Window, acked: u64, _f: &FlowState) {
        reno::grow(w, acked, 1.0);
    }

    /// Account one ACK: `acked` bytes, whether it echoed CE, and `snd_una` /
    /// `snd_nxt` after it (DCTCP's marked-fraction estimate).
    fn observe(&mut self, _acked: u64, _ece: bool, _snd_una: u64, _snd_nxt: u64) {}

    /// The window after reacting to ECE (called at most once per window).
    fn ecn_cut(&self, w: &Window, _f: &FlowState) -> f64 {
        w.cwnd / 2.0
    }

    /// Entering fast recovery with `flight` bytes outstanding: set ssthresh
    /// (RFC 5681 eq. 4); the machine inflates cwnd by the duplicate ACKs.
    fn on_dupacks(&mut self, w: &mut Window, flight: u64) {
        w.ssthresh = (flight as f64 / 2.0).max(2.0 * w.mss);
    }

    /// The retransmission timer expired with `flight` bytes outstanding
    /// (RFC 5681 §3.1: ssthresh as eq. 4, cwnd one segment).
    fn on_timeout(&mut self, w: &mut Window, flight: u64) {
        w.ssthresh = (flight as f64 / 2.0).max(2.0 * w.mss);
        w.cwnd = w.mss;
    }

    /// The window the sender may fill is never taken below this. One segment
    /// by default; a controller with windows below one segment must also pace
    /// ([`Controller::pacing_rate`]).
    fn send_floor(&self, w: &Window) -> f64 {
        w.mss
    }

    /// A fixed retransmission timeout without backoff instead of RFC 6298's.
    fn fixed_rto(&self) -> Option<Time> {
        None
    }

    /// After this many consecutive timeouts, probe mode: header-sized probes
    /// until an ACK arrives.
    fn probe_after(&self) -> Option<u32> {
        None
    }

    /// Pacing rate in bytes per second, if this controller paces (then the
    /// next segment waits until the previous one's bytes at this rate have
    /// passed). Asked again after every ACK: the wait follows the rate the
    /// window gives now, from the previous segment's start.
    fn pacing_rate(&self, _w: &Window, _srtt: Option<Time>) -> Option<f64> {
        None
    }

    /// DCTCP's α, for traces (`NaN` for controllers without one).
    fn alpha(&self) -> f64 {
        f64::NAN
    }

    /// When this controller's own timer expires, if it runs. The connection
    /// takes it into its one deadline (`Conn::next_deadline` in `tcp/`)
    /// while it is not done, and calls [`Controller::on_timer`] once it has
    /// come; the connection then sends what the window allows.
    fn deadline(&self) -> Option<Time> {
        None
    }

    /// The deadline of [`Controller::deadline`] has come (`f.now` at or after
    /// it); the controller must move or clear it.
    fn on_timer(&mut self, _w: &mut Window, _f: &FlowState) {}

    /// An ACK of an open connection echoed `value`, the option's value as
    /// the receiver got it (called before the ACK's sends; only when the
    /// kind's [`Flags::inband_option`] asked for the option).
    fn on_feedback(&mut self, _w: &mut Window, _value: u32, _f: &FlowState) {}
}

/// How a registered controller is made: from its own settings, the table
/// `[transport.<name>]` named as its protocol.
pub trait Build: Controller + Sized {
    /// The table's keys ([`NoSettings`] for none).
    type Settings: DeserializeOwned + Default + Clone + std::fmt::Debug + PartialEq;
    /// Flat keys of `[transport]` that moved into the table: (old, new).
    const MOVED: &'static [(&'static str, &'static str)] = &[];
    /// What the TCP machine asks of the kind once ([`Flags`]).
    const FLAGS: Flags = Flags::NEWRENO;

    fn new(s: &Self::Settings) -> Self;

    /// Check the settings' ranges: the key in the table and the reason.
    fn check(_s: &Self::Settings) -> Result<(), (&'static str, String)> {
        Ok(())
    }

    /// What the kind under settings `s` needs of the rest of the scenario,
    /// checked when some flow runs it; nothing by default.
    fn needs(_s: &Self::Settings) -> Vec<Need> {
        Vec::new()
    }
}

/// The settings of a controller without any: an empty table.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NoSettings {}

/// The registry: `name: Variant(Type)`, one line per controller; `name`
/// (the variant's snake-case name) is what `protocol` is written as and
/// names its table of settings, `[transport.<name>]`.
macro_rules! controllers {
    ($d:tt; $($(#[$doc:meta])* $name:ident: $variant:ident($ty:ty),)*) => {
        /// `transport.protocol`: the registered congestion controllers, all
        /// running on the one TCP machine in `tcp/`.
        #[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq, strum::VariantNames)]
        #[serde(rename_all = "snake_case")]
        #[strum(serialize_all = "snake_case")]
        pub enum Protocol { $($(#[$doc])* $variant,)* }

        /// A connection's controller: a registered one, or one a Rust
        /// program plugged in (`Plugged`, called through a pointer).
        #[derive(Debug)]
        pub enum Cc { $($variant($ty),)* Plugged(Box<dyn Controller>), }

        impl Cc {
            pub fn new(protocol: Protocol, s: &CcSettings) -> Cc {
                match protocol { $(Protocol::$variant => Cc::$variant(<$ty as Build>::new(&s.$name)),)* }
            }
        }

        impl Protocol {
            /// Every registered protocol.
            pub const ALL: &'static [Protocol] = &[$(Protocol::$variant,)*];

            /// The kind's [`Build::FLAGS`].
            pub fn flags(self) -> Flags {
                match self { $(Protocol::$variant => <$ty as Build>::FLAGS,)* }
            }

            /// The kind's [`Build::needs`] under its settings in `s`.
            pub fn needs(self, s: &CcSettings) -> Vec<Need> {
                match self { $(Protocol::$variant => <$ty as Build>::needs(&s.$name),)* }
            }
        }

        /// Every registered controller's settings, each from its own table
        /// `[transport.<name>]`.
        #[derive(Clone, Debug, Default, PartialEq)]
        pub struct CcSettings { $(pub $name: <$ty as Build>::Settings,)* }

        impl CcSettings {
            /// Take the controllers' tables out of `[transport]`'s `keys`,
            /// parsed and checked. A flat key that moved into a table is
            /// refused, naming its new place.
            pub fn take(keys: &mut Map<String, Value>) -> Result<CcSettings, ScenarioError> {
                $(for (old, new) in <$ty as Build>::MOVED {
                    if keys.contains_key(*old) {
                        return Err(ScenarioError::new(
                            format!("transport.{old}"),
                            format!("moved to [transport.{}] {new}", stringify!($name)),
                        ));
                    }
                })*
                let mut s = CcSettings::default();
                $(if let Some(v) = keys.remove(stringify!($name)) {
                    let at = concat!("transport.", stringify!($name));
                    s.$name = parse_at(v, at)?;
                    <$ty as Build>::check(&s.$name)
                        .map_err(|(k, m)| ScenarioError::new(format!("{at}.{k}"), m))?;
                })*
                Ok(s)
            }
        }

        /// Forward a [`Controller`] call to the variant.
        macro_rules! each {
            ($d cc:expr, $d c:ident => $d call:expr) => {
                match $d cc { $(Cc::$variant($d c) => $d call,)* Cc::Plugged($d c) => $d call, }
            };
        }
    };
}

controllers! { $;
    /// Loss-based TCP NewReno (RFC 5681, RFC 6582); not ECN-capable.
    #[default]
    newreno: Newreno(NewReno),
    /// NewReno with RFC 3168 ECN: halve once per window on ECE.
    ecn: Ecn(Ecn),
    /// DCTCP (Alizadeh et al., SIGCOMM 2010; RFC 8257).
    dctcp: Dctcp(Dctcp),
    /// D²TCP (Vamanan et al., SIGCOMM 2012): deadline-aware DCTCP.
    d2tcp: D2tcp(D2tcp),
    /// L²DCT (Munir et al., INFOCOM 2013): least-attained-service DCTCP.
    l2dct: L2dct(L2dct),
    /// pFabric's host transport (Alizadeh et al., SIGCOMM 2013).
    pfabric: Pfabric(Pfabric),
    /// BOTCP's BOCC (Ahmed and Arshad, Symmetry 2019): windows from the
    /// switches' buffer-occupancy stamp.
    botcp: Botcp(Botcp),
}

impl Protocol {
    /// The name users write (`"dctcp"`).
    pub fn name(self) -> String {
        format!("{self:?}").to_lowercase()
    }
}

impl Cc {
    pub fn initial_window(&self, init_cwnd: u32, mss: f64) -> f64 {
        each!(self, c => c.initial_window(init_cwnd, mss))
    }
    /// [`Controller::on_ack`]; `f` makes the flow state, called only in
    /// the arms of controllers that read it (so that the others, inlined,
    /// never build it), as in the other calls that take one.
    #[inline]
    pub fn on_ack(&mut self, w: &mut Window, acked: u64, f: impl FnOnce() -> FlowState) {
        each!(self, c => c.on_ack(w, acked, &f()))
    }
    #[inline]
    pub fn observe(&mut self, acked: u64, ece: bool, snd_una: u64, snd_nxt: u64) {
        each!(self, c => c.observe(acked, ece, snd_una, snd_nxt))
    }
    pub fn ecn_cut(&self, w: &Window, f: impl FnOnce() -> FlowState) -> f64 {
        each!(self, c => c.ecn_cut(w, &f()))
    }
    pub fn on_dupacks(&mut self, w: &mut Window, flight: u64) {
        each!(self, c => c.on_dupacks(w, flight))
    }
    pub fn on_timeout(&mut self, w: &mut Window, flight: u64) {
        each!(self, c => c.on_timeout(w, flight))
    }
    #[inline]
    pub fn send_floor(&self, w: &Window) -> f64 {
        each!(self, c => c.send_floor(w))
    }
    pub fn fixed_rto(&self) -> Option<Time> {
        each!(self, c => c.fixed_rto())
    }
    pub fn probe_after(&self) -> Option<u32> {
        each!(self, c => c.probe_after())
    }
    #[inline]
    pub fn pacing_rate(&self, w: &Window, srtt: Option<Time>) -> Option<f64> {
        each!(self, c => c.pacing_rate(w, srtt))
    }
    pub fn alpha(&self) -> f64 {
        each!(self, c => c.alpha())
    }
    pub fn on_feedback(&mut self, w: &mut Window, value: u32, f: impl FnOnce() -> FlowState) {
        each!(self, c => c.on_feedback(w, value, &f()))
    }
    #[inline]
    pub fn deadline(&self) -> Option<Time> {
        each!(self, c => c.deadline())
    }
    pub fn on_timer(&mut self, w: &mut Window, f: impl FnOnce() -> FlowState) {
        each!(self, c => c.on_timer(w, &f()))
    }
}
