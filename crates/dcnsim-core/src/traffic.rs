//! Datagram traffic sources: probe packets and background streams.
//!
//! A stream sends fixed-size packets with exponential (Poisson) or constant
//! gaps whose mean gives its rate. The gap generator keeps an exact running
//! time for constant streams, so they never drift, and draws from the stream's
//! own random stream for Poisson ones.

use crate::forwarding::five_tuple_hash;
use crate::scenario::{Pattern, StreamSpec};
use crate::units::Time;
use rand::Rng;
use rand_distr::{Distribution, Exp1};
use rand_xoshiro::Xoshiro256PlusPlus;

/// IP protocol number of UDP, used in the five-tuple of datagram traffic.
const UDP: u8 = 17;

pub struct Stream {
    pub spec: StreamSpec,
    pub rng: Xoshiro256PlusPlus,
    /// Application time of the next packet.
    pub next: Time,
    /// Packets sent so far (also the constant-rate step counter).
    pub sent: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub bytes_delivered: u64,
    pub latency_sum_ps: u128,
    /// Hash of the stream's five-tuple when its destination is fixed.
    pub hash: u64,
}

impl Stream {
    pub fn new(id: u32, spec: StreamSpec, rng: Xoshiro256PlusPlus) -> Stream {
        let hash = datagram_hash(spec.src, spec.dst.unwrap_or(0), id, STREAM_PORT);
        Stream {
            next: spec.start,
            spec,
            rng,
            sent: 0,
            delivered: 0,
            dropped: 0,
            bytes_delivered: 0,
            latency_sum_ps: 0,
            hash,
        }
    }

    /// Mean gap between packets in picoseconds.
    fn mean_gap_ps(&self) -> f64 {
        f64::from(self.spec.size) * 8.0 * Time::PS_PER_S as f64 / self.spec.rate.bps()
    }

    /// Advance `next` past one packet; returns false once the stream is over.
    pub fn advance(&mut self) -> bool {
        self.sent += 1;
        self.next = match self.spec.pattern {
            Pattern::Constant => {
                let bits = u128::from(self.spec.size) * 8 * u128::from(Time::PS_PER_S);
                let offset = bits * u128::from(self.sent) / u128::from(self.spec.rate.0);
                self.spec.start + Time(offset as u64)
            }
            Pattern::Poisson => {
                let e: f64 = Exp1.sample(&mut self.rng);
                Time(self.next.0 + (e * self.mean_gap_ps()).round() as u64)
            }
        };
        self.next < self.spec.stop
    }

    /// The first send time: a Poisson stream starts after one random gap.
    pub fn first(&mut self) -> Time {
        if self.spec.pattern == Pattern::Poisson {
            let e: f64 = Exp1.sample(&mut self.rng);
            self.next = Time(self.next.0 + (e * self.mean_gap_ps()).round() as u64);
        }
        self.next
    }

    /// Destination of the next packet and its five-tuple hash.
    pub fn destination(&mut self, id: u32, hosts: u32) -> (u32, u64) {
        match self.spec.dst {
            Some(d) => (d, self.hash),
            None => {
                let mut d = self.rng.random_range(0..hosts - 1);
                if d >= self.spec.src {
                    d += 1;
                }
                (d, datagram_hash(self.spec.src, d, id, STREAM_PORT))
            }
        }
    }
}

/// Destination UDP ports of stream, probe and application datagrams.
pub const STREAM_PORT: u16 = 9000;
pub const PROBE_PORT: u16 = 9001;
pub const APP_PORT: u16 = 9002;

/// The five-tuple hash of a datagram of source `id` (a stream or probe row),
/// whose source port is an ephemeral port derived from `id` so ECMP spreads
/// sources.
pub fn datagram_hash(src: u32, dst: u32, id: u32, dport: u16) -> u64 {
    five_tuple_hash(src, dst, datagram_sport(id), dport, UDP)
}

/// The ephemeral UDP source port of datagram source `id`.
pub fn datagram_sport(id: u32) -> u16 {
    49152 + (id % 16384) as u16
}
