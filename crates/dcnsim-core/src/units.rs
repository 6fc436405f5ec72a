//! Physical quantities as integer newtypes, with the physics on them.
//!
//! Time is picoseconds in a `u64` (about 213 days of simulated time), rates are
//! bits per second, sizes are bytes. Quantities are written in scenarios the way
//! people write them (`"10Gbps"`, `"0.2us"`, `"64KB"`, `"1000pkt"`) and parsed
//! here exactly: decimal mantissas are scaled with integer arithmetic, so
//! `"0.2us"` is exactly 200 000 ps and never a float rounding away from it.

use std::fmt;

/// Simulated time or duration in picoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

impl Time {
    pub const ZERO: Time = Time(0);
    pub const PS_PER_S: u64 = 1_000_000_000_000;

    pub fn from_us(us: u64) -> Time {
        Time(us * 1_000_000)
    }

    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / Self::PS_PER_S as f64
    }
}

/// The longest delay a link, a host or a switch may add: 1 s. Light crosses
/// the Earth's circumference in 0.13 s in vacuum (0.2 s in fibre) and reaches
/// the Moon in 1.3 s; a data-center delay is microseconds. A longer one is a
/// slip of the unit (`"197days"` where `"197us"` was meant), refused by name.
pub const MAX_DELAY: Time = Time(Time::PS_PER_S);

/// `TCP_RTO_MAX` (120 s, include/net/tcp.h), the largest of the three
/// references' caps (ns-2 and ns-3 hold 60 s).
pub const MAX_RTO: Time = Time(120 * Time::PS_PER_S);

/// Serde for a delay key (`topology.link.delay`, `network.host_delay`, ...):
/// a time no longer than [`MAX_DELAY`].
pub fn delay<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Time, D::Error> {
    let t: Time = serde::Deserialize::deserialize(d)?;
    if t > MAX_DELAY {
        return Err(serde::de::Error::custom(format!(
            "a delay of {} s is beyond the 1 s bound of any delay (docs/scenario.md, Bounds)",
            t.as_secs_f64()
        )));
    }
    Ok(t)
}

/// [`delay`] for a key that may be absent (`#[serde(default)]`).
pub fn optional_delay<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Time>, D::Error> {
    delay(d).map(Some)
}

impl std::ops::Add for Time {
    type Output = Time;
    fn add(self, rhs: Time) -> Time {
        Time(self.0 + rhs.0)
    }
}

impl std::ops::Sub for Time {
    type Output = Time;
    fn sub(self, rhs: Time) -> Time {
        Time(self.0 - rhs.0)
    }
}

impl std::ops::Mul<u64> for Time {
    type Output = Time;
    fn mul(self, rhs: u64) -> Time {
        Time(self.0 * rhs)
    }
}

impl std::iter::Sum for Time {
    fn sum<I: Iterator<Item = Time>>(iter: I) -> Time {
        Time(iter.map(|t| t.0).sum())
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}us", self.0 as f64 / 1e6)
    }
}

/// A link or sending rate in bits per second (always positive).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate(pub u64);

impl Rate {
    /// Time to serialize `bytes` onto a link of this rate, rounded up to a whole
    /// picosecond so that a packet never leaves before its last bit.
    #[inline]
    pub fn serialization(self, bytes: u64) -> Time {
        let bits = u128::from(bytes) * 8 * u128::from(Time::PS_PER_S);
        Time(bits.div_ceil(u128::from(self.0)) as u64)
    }

    /// Picoseconds per byte when that is a whole number (1, 10, 40, 100 Gbps
    /// and most rates people use), so serialization needs no division.
    pub fn exact_ps_per_byte(self) -> Option<u64> {
        let ps = 8 * Time::PS_PER_S;
        ps.is_multiple_of(self.0).then_some(ps / self.0)
    }

    pub fn bps(self) -> f64 {
        self.0 as f64
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}Gbps", self.0 as f64 / 1e9)
    }
}

/// A size in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bytes(pub u64);

/// A queue capacity: a number of packets or a number of bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Capacity {
    Packets(u64),
    Bytes(u64),
}

impl Capacity {
    /// `amount` in the unit of `unit`.
    pub fn of_unit(unit: Capacity, amount: u64) -> Capacity {
        match unit {
            Capacity::Packets(_) => Capacity::Packets(amount),
            Capacity::Bytes(_) => Capacity::Bytes(amount),
        }
    }

    /// The number, in whichever unit it has.
    pub fn amount(self) -> u64 {
        match self {
            Capacity::Packets(n) | Capacity::Bytes(n) => n,
        }
    }

    /// How many packets of `packet` bytes it holds (a byte amount rounded
    /// up: the last packet that starts in it is in).
    pub fn packets_of(self, packet: u64) -> u64 {
        match self {
            Capacity::Packets(n) => n,
            Capacity::Bytes(b) => b.div_ceil(packet.max(1)),
        }
    }
}

impl fmt::Display for Capacity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Capacity::Packets(n) => write!(f, "{n}pkt"),
            Capacity::Bytes(n) => write!(f, "{n}B"),
        }
    }
}

/// Split `"12.5Gbps"` (or `"1.25e10bps"`, `"10 Gbps"`) into an exact decimal
/// mantissa, its number of decimal places, and the unit. An exponent (`e` or
/// `E`, an optional sign and digits) scales the mantissa exactly.
fn split_number(text: &str) -> Result<(u128, u32, &str), String> {
    let s = text.trim();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, rest) = s.split_at(end);
    if s.starts_with('-') {
        return Err(format!("must be positive, got \"{text}\""));
    }
    if num.is_empty() || num == "." || num.matches('.').count() > 1 {
        return Err(format!(
            "expected a number followed by a unit, got \"{text}\""
        ));
    }
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    if int.len() + frac.len() > 30 {
        return Err(format!("number too long in \"{text}\""));
    }
    let digits: u128 = format!("{int}{frac}")
        .parse()
        .map_err(|_| format!("expected a number followed by a unit, got \"{text}\""))?;
    let (exp, unit) = split_exponent(rest);
    let scale = i64::from(frac.len() as u32) - exp;
    if scale >= 0 {
        if scale > 38 {
            return Err(format!("\"{text}\" has too many decimal places"));
        }
        return Ok((digits, scale as u32, unit.trim()));
    }
    let digits = u32::try_from(-scale)
        .ok()
        .and_then(|e| 10u128.checked_pow(e))
        .and_then(|f| digits.checked_mul(f))
        .ok_or_else(|| format!("\"{text}\" is too large"))?;
    Ok((digits, 0, unit.trim()))
}

/// A leading exponent (`e9`, `E-3`, `e+2`) of `rest`, and what follows it.
fn split_exponent(rest: &str) -> (i64, &str) {
    let Some(tail) = rest.strip_prefix(['e', 'E']) else {
        return (0, rest);
    };
    let sign_len = usize::from(tail.starts_with(['+', '-']));
    let digits = tail[sign_len..]
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(tail.len() - sign_len);
    // Beyond ±61 every quantity is out of range either way.
    match tail[..sign_len + digits].parse::<i64>() {
        Ok(e) if digits > 0 => (e.clamp(-61, 61), &tail[sign_len + digits..]),
        _ => (0, rest),
    }
}

/// `digits / 10^scale * factor`, exactly, or an error if not a whole number.
fn scale_exact(
    text: &str,
    digits: u128,
    scale: u32,
    factor: u128,
    what: &str,
) -> Result<u64, String> {
    let num = digits
        .checked_mul(factor)
        .ok_or_else(|| format!("\"{text}\" is too large"))?;
    let div = 10u128.pow(scale);
    if num % div != 0 {
        return Err(format!("\"{text}\" is not a whole number of {what}"));
    }
    u64::try_from(num / div).map_err(|_| format!("\"{text}\" is too large"))
}

fn unit_list(units: &[(&str, u128)]) -> String {
    units.iter().map(|(u, _)| *u).collect::<Vec<_>>().join(", ")
}

fn parse_with(text: &str, units: &[(&str, u128)], what: &str) -> Result<u64, String> {
    let (digits, scale, unit) = split_number(text)?;
    if unit.is_empty() {
        return Err(format!(
            "\"{text}\" has no unit (expected one of {})",
            unit_list(units)
        ));
    }
    let factor = units
        .iter()
        .find(|(u, _)| *u == unit)
        .map(|(_, f)| *f)
        .ok_or_else(|| {
            format!(
                "unknown unit \"{unit}\" in \"{text}\" (expected one of {})",
                unit_list(units)
            )
        })?;
    scale_exact(text, digits, scale, factor, what)
}

const TIME_UNITS: &[(&str, u128)] = &[
    ("ps", 1),
    ("ns", 1_000),
    ("us", 1_000_000),
    ("µs", 1_000_000),
    ("ms", 1_000_000_000),
    ("s", 1_000_000_000_000),
];

const RATE_UNITS: &[(&str, u128)] = &[
    ("bps", 1),
    ("Kbps", 1_000),
    ("Mbps", 1_000_000),
    ("Gbps", 1_000_000_000),
    ("Tbps", 1_000_000_000_000),
];

const SIZE_UNITS: &[(&str, u128)] = &[
    ("B", 1),
    ("KB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("KiB", 1 << 10),
    ("MiB", 1 << 20),
    ("GiB", 1 << 30),
];

impl std::str::FromStr for Time {
    type Err = String;
    fn from_str(s: &str) -> Result<Time, String> {
        parse_with(s, TIME_UNITS, "picoseconds").map(Time)
    }
}

impl std::str::FromStr for Rate {
    type Err = String;
    fn from_str(s: &str) -> Result<Rate, String> {
        match parse_with(s, RATE_UNITS, "bits per second")? {
            0 => Err(format!("rate must be positive, got \"{s}\"")),
            bps => Ok(Rate(bps)),
        }
    }
}

impl std::str::FromStr for Bytes {
    type Err = String;
    fn from_str(s: &str) -> Result<Bytes, String> {
        match parse_with(s, SIZE_UNITS, "bytes")? {
            0 => Err(format!("size must be positive, got \"{s}\"")),
            b => Ok(Bytes(b)),
        }
    }
}

impl std::str::FromStr for Capacity {
    type Err = String;
    fn from_str(s: &str) -> Result<Capacity, String> {
        if let Some(n) = s.trim().strip_suffix("pkt") {
            let (digits, scale, rest) = split_number(n)?;
            if !rest.is_empty() {
                return Err(format!(
                    "expected a packet count like \"1000pkt\", got \"{s}\""
                ));
            }
            return match scale_exact(s, digits, scale, 1, "packets")? {
                0 => Err(format!("capacity must be positive, got \"{s}\"")),
                p => Ok(Capacity::Packets(p)),
            };
        }
        s.parse::<Bytes>()
            .map(|b| Capacity::Bytes(b.0))
            .map_err(|e| {
                format!("{e}; a capacity is a size (\"64KB\") or a packet count (\"1000pkt\")")
            })
    }
}

/// Serde support: every quantity is written as a string with a unit. A bare
/// number is refused with the string it probably meant, in the quantity's
/// usual unit (`25` for a time: `expected a string with a unit, such as "25us"`).
macro_rules! deserialize_from_str {
    ($($ty:ty: $unit:literal),*) => {$(
        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                use serde::de::{Error, Unexpected};
                use serde_json::Value;
                let (unexpected, number) = match <Value as serde::Deserialize>::deserialize(d)? {
                    Value::String(text) => return text.parse().map_err(Error::custom),
                    Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
                        (Some(u), _, _) => (Unexpected::Unsigned(u), u.to_string()),
                        (_, Some(i), _) => (Unexpected::Signed(i), i.to_string()),
                        (_, _, f) => {
                            let f = f.unwrap_or(f64::NAN);
                            (Unexpected::Float(f), f.to_string())
                        }
                    },
                    Value::Bool(b) => (Unexpected::Bool(b), String::new()),
                    Value::Null => (Unexpected::Unit, String::new()),
                    Value::Array(_) => (Unexpected::Seq, String::new()),
                    Value::Object(_) => (Unexpected::Map, String::new()),
                };
                let expected = if number.is_empty() {
                    "a string".to_string()
                } else {
                    format!("a string with a unit, such as \"{number}{}\"", $unit)
                };
                Err(D::Error::invalid_type(unexpected, &expected.as_str()))
            }
        }
    )*};
}
deserialize_from_str!(Time: "us", Rate: "Gbps", Bytes: "B", Capacity: "pkt");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_parse_exactly() {
        assert_eq!("0.2us".parse::<Time>().unwrap(), Time(200_000));
        assert_eq!(
            "1e6s".parse::<Time>().unwrap(),
            Time(1_000_000 * 1_000_000_000_000)
        );
        // 10^9 s is 10^21 ps, beyond the 64-bit clock (about 213 days).
        assert!("1e9s".parse::<Time>().unwrap_err().contains("too large"));
        assert_eq!("2e-1us".parse::<Time>().unwrap(), Time(200_000));
        assert_eq!("2.5E+3ns".parse::<Time>().unwrap(), Time(2_500_000));
        assert_eq!("10 us".parse::<Time>().unwrap(), Time(10_000_000));
        assert!("1e-13s"
            .parse::<Time>()
            .unwrap_err()
            .contains("not a whole number"));
        assert!("1e30s".parse::<Time>().unwrap_err().contains("too large"));
        assert!("1e99s".parse::<Time>().unwrap_err().contains("too large"));
        assert_eq!("25us".parse::<Time>().unwrap(), Time(25_000_000));
        assert_eq!("2.5µs".parse::<Time>().unwrap(), Time(2_500_000));
        assert_eq!("200ms".parse::<Time>().unwrap(), Time(200_000_000_000));
        assert_eq!("0us".parse::<Time>().unwrap(), Time(0));
        assert!("0.0001ps".parse::<Time>().is_err());
        assert!("10".parse::<Time>().unwrap_err().contains("no unit"));
        assert!("-1us".parse::<Time>().unwrap_err().contains("positive"));
    }

    #[test]
    fn rates_and_sizes() {
        assert_eq!("10Gbps".parse::<Rate>().unwrap(), Rate(10_000_000_000));
        assert_eq!("2.5e9bps".parse::<Rate>().unwrap(), Rate(2_500_000_000));
        assert_eq!("1.5e3B".parse::<Bytes>().unwrap(), Bytes(1500));
        assert_eq!(
            "1e3pkt".parse::<Capacity>().unwrap(),
            Capacity::Packets(1000)
        );
        assert_eq!("2.5Gbps".parse::<Rate>().unwrap(), Rate(2_500_000_000));
        assert!("10Gps"
            .parse::<Rate>()
            .unwrap_err()
            .contains("unknown unit \"Gps\""));
        assert!("0Gbps".parse::<Rate>().is_err());
        assert_eq!("64KB".parse::<Bytes>().unwrap(), Bytes(64_000));
        assert_eq!("64KiB".parse::<Bytes>().unwrap(), Bytes(65_536));
        assert_eq!("1500B".parse::<Bytes>().unwrap(), Bytes(1500));
        assert_eq!(
            "1000pkt".parse::<Capacity>().unwrap(),
            Capacity::Packets(1000)
        );
        assert_eq!(
            "128KB".parse::<Capacity>().unwrap(),
            Capacity::Bytes(128_000)
        );
        assert!("1.5pkt".parse::<Capacity>().is_err());
    }

    #[test]
    fn serialization_is_exact_or_rounded_up() {
        // 1500 B at 1 Gbps is 12 us exactly (the first seed, §2).
        assert_eq!(Rate(1_000_000_000).serialization(1500), Time::from_us(12));
        // 1 byte at 3 bps: 8/3 s, rounded up to the next picosecond.
        assert_eq!(Rate(3).serialization(1), Time(2_666_666_666_667));
        assert_eq!(Rate(10_000_000_000).exact_ps_per_byte(), Some(800));
        assert_eq!(Rate(3_000_000_000).exact_ps_per_byte(), None);
    }
}
