//! The packet header, declared once and shared by every transport, queue
//! discipline, forwarding policy and switch agent, and the arena packets live
//! in (referred to by index; freed slots are reused, so the hot path allocates
//! nothing once the arena has grown).
//!
//! A header carries what the seeds' mechanisms read or write:
//! addresses (node ids, so a switch can originate a packet), the wire size, the
//! ECN codepoint (RFC 3168), the 802.1Q priority code point `class` (0–7), a
//! 64-bit `prio` (pFabric: smaller is served first), the port it arrived on,
//! what it is ([`Kind`]), the TCP fields ([`TcpHeader`]) and one optional
//! in-band option whose bytes count on the wire ([`Packet::set_option`]).

use crate::units::Time;

/// Marks "no flow" / "no record" / "no port" in `u32` index fields.
pub const NONE: u32 = u32::MAX;

/// IP ECN codepoints (RFC 3168).
pub const NOT_ECT: u8 = 0;
pub const ECT0: u8 = 2;
pub const CE: u8 = 3;

/// 802.1Q priority code points: classes 0 to 7 (7 is served first by the
/// `priority` discipline).
pub const CLASSES: usize = 8;

/// Bytes an in-band option adds to the wire size (a 4-byte TCP/IP option
/// word, such as BOTCP's buffer-occupancy field).
pub const OPTION_BYTES: u32 = 4;

/// The option's type octet: BOTCP's buffer-occupancy-feedback IP option
/// (seed `botcp.txt` §4.1: copied 1, class 3, number 2, so 226), of length
/// [`OPTION_BYTES`]; its third octet is the value switches stamp
/// ([`Hop::option`]), its fourth the receiver's echo
/// ([`TcpHeader::echo`]).
pub const OPTION_TYPE: u8 = 226;

/// The largest value of the option's one-octet BOF field.
pub const BOF_MAX: u32 = 255;

/// Bytes per BOF unit: one packet of BOTCP's 1500 bytes (seed §5, §5.3;
/// the reading is argued in `stage/max_occupancy.rs`, which stamps it).
pub const BOF_UNIT: u64 = 1500;

/// The BOF value of a buffer holding `bytes`: whole 1500-byte packets, at
/// most 255.
pub fn bof(bytes: u64) -> u32 {
    (bytes / BOF_UNIT).min(u64::from(BOF_MAX)) as u32
}

/// What a packet is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A probe or stream packet (UDP).
    Datagram,
    /// A TCP segment; its fields are in [`Packet::tcp`].
    Tcp,
    /// ICMP "fragmentation needed" (RFC 1191) carrying the 16-bit next-hop
    /// MTU field, sent by a switch to a flow's sender.
    IcmpMtu { mtu: u16 },
    /// An 802.3x / 802.1Qbb PAUSE frame: the classes in `classes` (bit c for
    /// class c) stop for `quanta` pause quanta of 512 bit times at the rate of
    /// the port it is sent back to (0 resumes), as the frame's 16-bit field.
    Pause { classes: u8, quanta: u16 },
    /// A datagram an application sent (`crate::app`): its `flow` is the
    /// application, its `record` the application's tag.
    AppDatagram,
}

/// The TCP header fields the TCP machine reads and writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpHeader {
    pub seq: u64,
    pub ack: u64,
    /// TCP flags ([`crate::tcp::SYN`] …).
    pub flags: u8,
    /// The timestamp value echoed back (TSecr), or [`crate::tcp::NO_TS`].
    pub ts_echo: Time,
    /// SACK blocks of an ACK (RFC 2018).
    pub sack: Sack,
    /// The in-band option's value the receiver echoes back to the sender
    /// (BOTCP's fourth octet, seed §4.1), on the segments of a flow whose
    /// controller asked for the option. It travels in the option's word (no
    /// bytes of its own) but is kept here, apart from [`Hop::option`],
    /// since only the ends read it: switches stamping the reverse path
    /// rewrite `option`, never the echo.
    pub echo: Option<u32>,
}

/// The most SACK blocks one ACK carries (RFC 2018 §3: four fit in the 40
/// bytes of TCP options).
pub const MAX_SACK_BLOCKS: usize = 4;

/// An ACK's SACK option (RFC 2018 §3): up to four [left, right) blocks of
/// data the receiver holds above the cumulative ACK, first the one holding
/// the latest segment; a D-SACK block (RFC 2883) may lie below the ACK. Kept
/// as signed offsets from `ack` so the header stays small.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sack {
    len: u8,
    blocks: [(i32, i32); MAX_SACK_BLOCKS],
}

impl Sack {
    /// Append the block [left, right) of an ACK of `ack`; false when full.
    pub fn push(&mut self, ack: u64, left: u64, right: u64) -> bool {
        let i = usize::from(self.len);
        if i == MAX_SACK_BLOCKS {
            return false;
        }
        let offset = |seq: u64| seq.wrapping_sub(ack) as i64 as i32;
        self.blocks[i] = (offset(left), offset(right));
        self.len += 1;
        true
    }

    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The blocks as absolute sequence numbers, for an ACK of `ack`.
    pub fn blocks(&self, ack: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.blocks[..self.len()].iter().map(move |&(l, r)| {
            (
                ack.wrapping_add_signed(l.into()),
                ack.wrapping_add_signed(r.into()),
            )
        })
    }

    /// Bytes the option adds to the header: kind, length and 8 per block,
    /// padded with two NOPs to whole 4-byte words (RFC 2018 §3).
    pub fn option_bytes(&self) -> u32 {
        if self.len == 0 {
            0
        } else {
            2 + 2 + 8 * u32::from(self.len)
        }
    }
}

/// The fields a packet's hops read and write, in one cache line: the arena
/// keeps them apart from the rest of the packet ([`Packet`]), which only its
/// sender and its receiver (or whoever drops it) read. A packet in the
/// network then costs a hop one line instead of three, and the lines of
/// packets in flight take less than half the cache (docs/performance.md).
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub struct Hop {
    /// Source and destination node ids (hosts, or a switch for packets a
    /// switch agent originates).
    pub src: u32,
    pub dst: u32,
    /// Wire size in bytes (IP packet: headers and the option included).
    pub size: u32,
    /// Its stream (datagrams) or connection (TCP, ICMP about a flow), or
    /// [`NONE`] for probes.
    pub flow: u32,
    /// The node its current link leads to.
    pub next_node: u32,
    /// Its egress port at `next_node` when already decided (see
    /// [`crate::forwarding::Forwarder::plan`]), else [`NONE`].
    pub route: u32,
    /// The port of the current node the packet arrived on (the port back
    /// towards the previous node), or [`NONE`] at its origin.
    pub ingress: u32,
    /// Links crossed so far.
    pub hops: u32,
    /// Five-tuple hash used by ECMP-style policies (also the flow key queue
    /// disciplines see).
    pub hash: u64,
    /// pFabric priority: smaller values are served first and dropped last.
    pub prio: u64,
    pub kind: Kind,
    /// IP ECN field: [`NOT_ECT`], [`ECT0`] or [`CE`].
    pub ecn: u8,
    /// 802.1Q priority code point, 0–7 (WRED profile, strict priority).
    pub class: u8,
    /// Equal-length routing: the packet has reached the top tier.
    pub climbed: bool,
    /// The in-band option, when present (its bytes are in `size`): here,
    /// beside what every hop reads, since port stages rewrite it at every
    /// hop (BOTCP's stamp); it fills the line.
    pub option: Option<u32>,
}

impl Hop {
    #[inline]
    pub fn is_tcp(&self) -> bool {
        matches!(self.kind, Kind::Tcp)
    }
}

/// A packet: its [`Hop`] fields (reached through `Deref`, so `pkt.size`
/// reads them) and what only its ends read.
#[derive(Clone, Copy, Debug)]
pub struct Packet {
    pub hop: Hop,
    /// Its row in the probe table, an application datagram's tag, or
    /// [`NONE`].
    pub record: u32,
    /// When the application sent it (a TCP segment's timestamp value).
    pub sent: Time,
    pub tcp: TcpHeader,
}

impl std::ops::Deref for Packet {
    type Target = Hop;
    #[inline]
    fn deref(&self) -> &Hop {
        &self.hop
    }
}

impl std::ops::DerefMut for Packet {
    #[inline]
    fn deref_mut(&mut self) -> &mut Hop {
        &mut self.hop
    }
}

/// What the arena keeps of a packet besides its [`Hop`] and its SACK
/// blocks: one cache line, which its delivery reads and its allocation
/// writes. Most packets carry no SACK block (SACK is off unless
/// `transport.sack` or a profile turns it on, as `linux` and `ns2_sack` do,
/// and then only ACKs during recovery carry blocks), so the blocks live
/// apart ([`Arena`]); with them inline this was 88 bytes, across two or
/// three lines (docs/performance.md).
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct Ends {
    sent: Time,
    seq: u64,
    ack: u64,
    ts_echo: Time,
    record: u32,
    echo: Option<u32>,
    flags: u8,
    /// Whether the packet carries SACK blocks (in [`Arena::sacks`]).
    sacked: bool,
}

impl Ends {
    fn of(p: &Packet) -> Ends {
        Ends {
            sent: p.sent,
            seq: p.tcp.seq,
            ack: p.tcp.ack,
            ts_echo: p.tcp.ts_echo,
            record: p.record,
            echo: p.tcp.echo,
            flags: p.tcp.flags,
            sacked: !p.tcp.sack.is_empty(),
        }
    }
}

impl Packet {
    /// A packet of `kind` with everything else zero or absent.
    pub fn new(kind: Kind, src: u32, dst: u32, size: u32, hash: u64, sent: Time) -> Packet {
        Packet {
            hop: Hop {
                src,
                dst,
                size,
                flow: NONE,
                next_node: 0,
                route: NONE,
                ingress: NONE,
                hops: 0,
                hash,
                prio: 0,
                kind,
                ecn: NOT_ECT,
                class: 0,
                climbed: false,
                option: None,
            },
            record: NONE,
            sent,
            tcp: TcpHeader::default(),
        }
    }

    /// Set the in-band option; the first time, its bytes join the wire size.
    #[inline]
    pub fn set_option(&mut self, value: u32) {
        if self.option.is_none() {
            self.size += OPTION_BYTES;
        }
        self.option = Some(value);
    }

    /// Bytes the in-band option adds to the wire size (0 without one).
    #[inline]
    pub fn option_bytes(&self) -> u32 {
        if self.option.is_some() {
            OPTION_BYTES
        } else {
            0
        }
    }
}

/// Packets in flight, by index: their [`Hop`] fields, what only their ends
/// read, and their SACK blocks in three tables, so the hops of the data
/// plane touch one line per packet and its ends one more.
#[derive(Default)]
pub struct Arena {
    hops: Vec<Hop>,
    ends: Vec<Ends>,
    /// The SACK blocks of packets that carry some, by index; written only
    /// for those (it grows to an index when a packet there first carries
    /// blocks), so runs without SACK never touch it.
    sacks: Vec<Sack>,
    free: Vec<u32>,
}

impl Arena {
    #[inline]
    pub fn alloc(&mut self, p: Packet) -> u32 {
        let i = match self.free.pop() {
            Some(i) => {
                self.hops[i as usize] = p.hop;
                self.ends[i as usize] = Ends::of(&p);
                i
            }
            None => {
                crate::cache::push_advised(&mut self.hops, p.hop);
                crate::cache::push_advised(&mut self.ends, Ends::of(&p));
                (self.hops.len() - 1) as u32
            }
        };
        self.put_sack(i, &p.tcp.sack);
        i
    }

    /// Keep the SACK blocks of packet `i`, if it carries any.
    #[inline]
    fn put_sack(&mut self, i: u32, sack: &Sack) {
        if !sack.is_empty() {
            let i = i as usize;
            if self.sacks.len() <= i {
                self.sacks.resize(self.hops.len(), Sack::default());
            }
            self.sacks[i] = *sack;
        }
    }

    #[inline]
    pub fn release(&mut self, i: u32) {
        self.free.push(i);
    }

    /// The hop fields of packet `i`.
    #[inline]
    pub fn hop(&self, i: u32) -> &Hop {
        &self.hops[i as usize]
    }

    #[inline]
    pub fn hop_mut(&mut self, i: u32) -> &mut Hop {
        &mut self.hops[i as usize]
    }

    /// The whole packet `i`, copied out.
    #[inline]
    pub fn get(&self, i: u32) -> Packet {
        let e = &self.ends[i as usize];
        Packet {
            hop: self.hops[i as usize],
            record: e.record,
            sent: e.sent,
            tcp: TcpHeader {
                seq: e.seq,
                ack: e.ack,
                flags: e.flags,
                ts_echo: e.ts_echo,
                echo: e.echo,
                sack: if e.sacked {
                    self.sacks[i as usize]
                } else {
                    Sack::default()
                },
            },
        }
    }

    /// Replace packet `i` (a switch agent changed it).
    pub fn put(&mut self, i: u32, p: Packet) {
        self.ends[i as usize] = Ends::of(&p);
        self.hops[i as usize] = p.hop;
        self.put_sack(i, &p.tcp.sack);
    }

    /// Start loading the hop fields of packet `i` into the cache, if it is
    /// a slot.
    #[inline]
    pub fn prefetch(&self, i: u32) {
        if let Some(p) = self.hops.get(i as usize) {
            crate::cache::prefetch(p);
        }
    }

    /// Start loading what packet `i` keeps besides its hop fields (read
    /// where it is delivered).
    #[inline]
    pub fn prefetch_ends(&self, i: u32) {
        if let Some(e) = self.ends.get(i as usize) {
            crate::cache::prefetch(e);
        }
    }

    /// Packets allocated and not yet released.
    pub fn live(&self) -> u64 {
        (self.hops.len() - self.free.len()) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_option_counts_on_the_wire_once() {
        let mut p = Packet::new(Kind::Tcp, 0, 1, 1500, 7, Time::ZERO);
        p.set_option(3);
        p.set_option(9);
        assert_eq!((p.size, p.option), (1500 + OPTION_BYTES, Some(9)));
        assert_eq!(p.option_bytes(), OPTION_BYTES);
    }

    /// A packet comes out of the arena as it went in, SACK blocks included;
    /// a slot reused by a packet without blocks holds none, and what the
    /// ends read stays one cache line.
    #[test]
    fn the_arena_keeps_packets_whole() {
        assert_eq!(std::mem::size_of::<Ends>(), 64);
        assert_eq!(std::mem::size_of::<Hop>(), 64);
        let mut arena = Arena::default();
        let mut acked = Packet::new(Kind::Tcp, 3, 1, 64, 11, Time(5));
        acked.tcp = TcpHeader {
            seq: 7,
            ack: 1 << 40,
            flags: 0x12,
            ts_echo: Time(4),
            sack: Sack::default(),
            echo: Some(31),
        };
        assert!(acked
            .tcp
            .sack
            .push(1 << 40, (1 << 40) + 1448, (1 << 40) + 2896));
        assert!(acked.tcp.sack.push(1 << 40, (1 << 40) - 1448, 1 << 40));
        acked.record = 9;
        acked.set_option(2);
        let plain = Packet::new(Kind::Tcp, 1, 3, 1500, 12, Time(6));
        let a = arena.alloc(plain);
        let b = arena.alloc(acked);
        let got = arena.get(b);
        assert_eq!(
            (got.tcp, got.record, got.option, got.sent),
            (acked.tcp, 9, Some(2), Time(5))
        );
        assert_eq!(
            (got.src, got.dst, got.size, got.hash),
            (3, 1, 64 + OPTION_BYTES, 11)
        );
        assert_eq!(arena.get(a).tcp, TcpHeader::default());
        arena.release(b);
        assert_eq!(arena.alloc(plain), b);
        assert_eq!(arena.get(b).tcp, TcpHeader::default());
        assert_eq!(arena.live(), 2);
    }
}
