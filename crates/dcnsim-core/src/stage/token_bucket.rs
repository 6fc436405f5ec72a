//! A token-bucket rate limiter per 802.1Q class: the host rate limiters of
//! QJUMP (seed `qjump.txt`, §3: each level's traffic is limited to a rate at
//! the host) and of any scheme that shapes a class.
//!
//! Each shaped class has a rate r and a burst b (bytes it may send ahead of
//! its rate). Its bucket fills at r up to b; a packet of the class may start
//! while the bucket is not in debt, and its whole size is taken as it starts,
//! so the bucket may go into debt by up to one packet: Linux HTB's rule
//! (`htb_class_mode`: a class may send while its tokens are not below zero).
//! The rule needs no look at the waiting packet's size, so the discipline
//! can skip a held class as it skips a paused one.
//!
//! Kept as the time the bucket will be full again (the generic cell rate
//! algorithm's theoretical arrival time, ITU-T I.371): `full_at`; a packet of
//! `s` bytes starting at `t` moves it to `max(full_at, t) + 8s/r`, and the
//! class may start at `t` when `t ≥ full_at − 8b/r` (times rounded up to a
//! whole picosecond, as serialization is). So, from a full bucket, packets
//! of size s go back to back while the bucket lasts, and after that one
//! every 8s/r exactly; with no burst, one every 8s/r from the first. A held
//! class's port wakes when it may start again ("not before T"). Classes not
//! listed are not shaped.

use super::{PortContext, Stage};
use crate::error::{join_path, ScenarioError};
use crate::packet::CLASSES;
use crate::units::{Bytes, Rate, Time, MAX_DELAY};
use serde::Deserialize;

/// `[[network.stages]] kind = "token_bucket"`: the shaped classes.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TokenBucketSpec {
    pub classes: Vec<ClassLimit>,
}

/// One class's rate and burst.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ClassLimit {
    /// 802.1Q priority code point, 0–7.
    pub class: u8,
    pub rate: Rate,
    /// Bytes the class may send ahead of its rate (none by default).
    pub burst: Option<Bytes>,
}

#[derive(Clone, Debug)]
pub struct TokenBucket {
    /// Classes shaped (bit c for class c).
    shaped: u8,
    rate: [Rate; CLASSES],
    /// 8b/r: how far ahead of its rate a class may be.
    ahead: [Time; CLASSES],
    /// When each class's bucket is full again.
    full_at: [Time; CLASSES],
}

impl Stage for TokenBucket {
    type Spec = TokenBucketSpec;
    const SHAPES: bool = true;

    fn check(spec: &TokenBucketSpec, path: &str) -> Result<(), ScenarioError> {
        let at = join_path(path, "classes");
        if spec.classes.is_empty() {
            return Err(ScenarioError::new(at, "lists no class to shape"));
        }
        for (i, c) in spec.classes.iter().enumerate() {
            if usize::from(c.class) >= CLASSES {
                return Err(ScenarioError::new(
                    format!("{at}[{i}].class"),
                    format!("802.1Q classes are 0 to 7, got {}", c.class),
                ));
            }
            if spec.classes[..i].iter().any(|o| o.class == c.class) {
                return Err(ScenarioError::new(
                    format!("{at}[{i}].class"),
                    format!("class {} is listed twice", c.class),
                ));
            }
        }
        Ok(())
    }

    /// A rate above the fastest of its ports' links never holds a packet
    /// (as a stream faster than its link, a slip of the unit); a burst is
    /// held as the time the class may run ahead of its rate (8 × burst /
    /// rate, as Linux's HTB and TBF take it, `buffer`): a delay, at most
    /// [`MAX_DELAY`].
    fn check_ports(spec: &TokenBucketSpec, path: &str, fastest: Rate) -> Result<(), ScenarioError> {
        for (i, c) in spec.classes.iter().enumerate() {
            let at = format!("{}[{i}]", join_path(path, "classes"));
            if c.rate > fastest {
                return Err(ScenarioError::new(
                    join_path(&at, "rate"),
                    format!(
                        "{} is faster than the fastest of the stage's ports ({fastest}): the class would never be held",
                        c.rate
                    ),
                ));
            }
            if let Some(burst) = c.burst {
                let ahead =
                    u128::from(burst.0) * 8 * u128::from(Time::PS_PER_S) / u128::from(c.rate.0);
                if ahead > u128::from(MAX_DELAY.0) {
                    return Err(ScenarioError::new(
                        join_path(&at, "burst"),
                        format!(
                            "{} B takes {} s at the class's rate ({}): a burst is how far ahead of its rate a class may run, at most 1 s like any delay",
                            burst.0,
                            ahead as f64 / Time::PS_PER_S as f64,
                            c.rate
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    fn new(spec: &TokenBucketSpec, _ctx: &PortContext) -> TokenBucket {
        let mut tb = TokenBucket {
            shaped: 0,
            rate: [Rate(1); CLASSES],
            ahead: [Time::ZERO; CLASSES],
            full_at: [Time::ZERO; CLASSES],
        };
        for c in &spec.classes {
            let i = usize::from(c.class);
            tb.shaped |= 1 << c.class;
            tb.rate[i] = c.rate;
            tb.ahead[i] = c.burst.map_or(Time::ZERO, |b| c.rate.serialization(b.0));
        }
        tb
    }

    fn held(&self, now: Time) -> u8 {
        let mut held = 0;
        for c in 0..CLASSES {
            if self.shaped & (1 << c) != 0 && now + self.ahead[c] < self.full_at[c] {
                held |= 1 << c;
            }
        }
        held
    }

    fn release_at(&self, held: u8) -> Time {
        (0..CLASSES)
            .filter(|&c| held & self.shaped & (1 << c) != 0)
            .map(|c| self.full_at[c] - self.ahead[c])
            .min()
            .unwrap_or(Time(u64::MAX))
    }

    fn on_start(&mut self, class: u8, size: u32, start: Time) {
        let c = usize::from(class);
        if self.shaped & (1 << class) != 0 {
            self.full_at[c] =
                self.full_at[c].max(start) + self.rate[c].serialization(u64::from(size));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Capacity;

    fn bucket(rate: &str, burst: Option<u64>) -> TokenBucket {
        let spec = TokenBucketSpec {
            classes: vec![ClassLimit {
                class: 3,
                rate: rate.parse().unwrap(),
                burst: burst.map(Bytes),
            }],
        };
        let ctx = PortContext {
            rate: "10Gbps".parse().unwrap(),
            buffer: Capacity::Packets(100),
            nic: true,
            hosts: 2,
            slowest_host_link: "10Gbps".parse().unwrap(),
        };
        TokenBucket::new(&spec, &ctx)
    }

    /// Start times of `n` packets of `size` bytes of class 3, all waiting
    /// at time 0 on a port of `line` picoseconds per byte: each starts when
    /// the wire is free and the class is not held.
    fn starts(tb: &mut TokenBucket, n: usize, size: u32, line: u64) -> Vec<u64> {
        let mut free = Time::ZERO;
        (0..n)
            .map(|_| {
                let t = if tb.held(free) & (1 << 3) != 0 {
                    tb.release_at(1 << 3)
                } else {
                    free
                };
                assert_eq!(tb.held(t), 0, "released at {t:?}");
                tb.on_start(3, size, t);
                free = t + Time(line * u64::from(size));
                t.0
            })
            .collect()
    }

    /// The closed form: at 1 Gbps a 1500 B packet takes 12 us of tokens;
    /// with a 4500 B burst on a 10 Gbps port (1.2 us per packet) the first
    /// packets go back to back until the bucket is in debt, then one every
    /// 12 us.
    #[test]
    fn after_the_burst_packets_leave_at_their_size_over_the_rate() {
        let us = 1_000_000;
        let mut tb = bucket("1Gbps", None);
        let t = starts(&mut tb, 5, 1500, 800);
        assert_eq!(t, [0, 12 * us, 24 * us, 36 * us, 48 * us]);

        let mut tb = bucket("1Gbps", Some(4500));
        let t = starts(&mut tb, 8, 1500, 800);
        // Packet i (back to back, at 1.2i us) may start while
        // 12i − 1.2i < 36 (us ahead the burst allows): i = 0..=3.
        let line = 1_200_000;
        assert_eq!(&t[..4], [0, line, 2 * line, 3 * line]);
        // Then (the bucket full again at 48 us after four) one goes every
        // 12 us, each once the bucket is no more than 36 us ahead.
        for (i, &s) in t.iter().enumerate().skip(4) {
            assert_eq!(s, (12 * i as u64 - 36) * us, "packet {i}");
        }
        // Long run: 8 packets = 4 back to back, then 12 us apart.
        assert_eq!(t[7] - t[4], 3 * 12 * us);
    }

    #[test]
    fn unlisted_classes_are_not_held() {
        let mut tb = bucket("1Gbps", None);
        tb.on_start(5, 1500, Time::ZERO);
        tb.on_start(3, 1500, Time::ZERO);
        assert_eq!(tb.held(Time(1)), 1 << 3);
        assert_eq!(tb.release_at(0xff), Time::from_us(12));
    }

    #[test]
    fn check_names_the_bad_class() {
        let limit = |class| ClassLimit {
            class,
            rate: Rate(1),
            burst: None,
        };
        let err = |classes| {
            TokenBucket::check(&TokenBucketSpec { classes }, "network.stages[0]")
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            err(vec![limit(8)]),
            "network.stages[0].classes[0].class: 802.1Q classes are 0 to 7, got 8"
        );
        assert_eq!(
            err(vec![limit(1), limit(1)]),
            "network.stages[0].classes[1].class: class 1 is listed twice"
        );
        assert_eq!(
            err(vec![]),
            "network.stages[0].classes: lists no class to shape"
        );
    }

    /// The rate up to the fastest port's link, the burst up to 1 s at the
    /// rate: 125,000,000 B at 1 Gbps.
    #[test]
    fn check_ports_bounds_rate_and_burst() {
        let gbps = Rate(1_000_000_000);
        let check = |rate: Rate, burst: u64| {
            let classes = vec![ClassLimit {
                class: 3,
                rate,
                burst: Some(Bytes(burst)),
            }];
            TokenBucket::check_ports(&TokenBucketSpec { classes }, "network.stages[0]", gbps)
                .map_err(|e| e.to_string())
        };
        assert!(check(gbps, 125_000_000).is_ok());
        let e = check(gbps, 125_000_001).unwrap_err();
        assert!(
            e.starts_with("network.stages[0].classes[0].burst: 125000001 B takes 1.000000008 s"),
            "{e}"
        );
        let e = check(Rate(gbps.0 + 1), 1500).unwrap_err();
        assert!(e.starts_with("network.stages[0].classes[0].rate: 1.000000001Gbps is faster than the fastest of the stage's ports (1Gbps)"), "{e}");
    }
}
