//! Packet captures as libpcap files, built in memory.
//!
//! Each simulated packet becomes one record with real Ethernet, IPv4 and TCP or
//! UDP headers, so Wireshark and tshark can follow flows, ECN marks and TCP
//! sequence numbers. Only the headers are captured: a record's captured length
//! is the header size while its original length is the full frame, so files
//! stay small and tools still see the true segment sizes. The file format
//! itself is written by the `pcap-file` crate, with nanosecond timestamps
//! counted from the start of the simulation (the Unix epoch in the file).

use std::time::Duration;

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, Endianness, TsResolution};

use crate::packet::{Sack, OPTION_BYTES, OPTION_TYPE};
use crate::units::Time;

/// Transport header of a captured packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// TCP segment: 32-bit sequence/ack numbers as they go on the wire, flag bits
    /// (use the constants below), receive window, `options` bytes of other
    /// options — the timestamp option (two NOPs, kind 8, RFC 7323 §3) with
    /// `ts` = (TSval, TSecr) when 12 or more, then NOPs — and the SACK option
    /// (RFC 2018 §3, after two NOPs; blocks relative to `ack`, 32-bit on the
    /// wire).
    ///
    /// The lengths on the wire come from [`Frame::ip_len`], which should be
    /// `40 + options + SACK option + payload`.
    Tcp {
        src_port: u16,
        dst_port: u16,
        seq: u32,
        ack: u32,
        flags: u8,
        window: u16,
        options: u8,
        ts: (u32, u32),
        sack: Sack,
    },
    /// UDP datagram.
    Udp { src_port: u16, dst_port: u16 },
    /// ICMP destination unreachable, fragmentation needed (type 3, code 4)
    /// with the next-hop MTU field (RFC 1191 §4), quoting the IPv4 header and
    /// first 8 bytes (ports and sequence number) of a TCP segment of the flow
    /// it is about, from host `quoted_src` to host `quoted_dst`. Its
    /// [`Frame::ip_len`] should be 56.
    IcmpMtu {
        mtu: u16,
        quoted_src: u32,
        quoted_dst: u32,
        src_port: u16,
        dst_port: u16,
        seq: u32,
    },
}

/// TCP flag bits, as in byte 13 of the TCP header.
pub const FIN: u8 = 0x01;
pub const SYN: u8 = 0x02;
pub const RST: u8 = 0x04;
pub const PSH: u8 = 0x08;
pub const ACK: u8 = 0x10;
pub const ECE: u8 = 0x40;
pub const CWR: u8 = 0x80;

/// One captured packet.
#[derive(Clone, Copy, Debug)]
pub struct Frame {
    pub time: Time,
    /// Source and destination host indices (0-based).
    pub src_host: u32,
    pub dst_host: u32,
    /// Total IPv4 length in bytes (IP header + transport header + payload). For TCP this is
    /// 20 + 20 + payload (+ 4 with the IP option); for UDP it is the simulated packet size and must be >= 28.
    ///
    /// Values that do not fit are clamped: above 65 535 to 65 535 (the IPv4 maximum),
    /// below the header size (40 for TCP, 28 for UDP) up to the header size.
    pub ip_len: u32,
    /// IP ECN codepoint (0 = Not-ECT, 1 = ECT(1), 2 = ECT(0), 3 = CE); only the low two
    /// bits are used.
    pub ecn: u8,
    /// IPv4 identification field (any value the caller chooses, e.g. a packet counter).
    pub ip_id: u16,
    /// The in-band IP option's two data octets, when the packet carries it
    /// (BOTCP's buffer-occupancy feedback, seed §4.1: the BOF field and the
    /// echo): written after the 20-byte header as type 226, length 4, then
    /// these (IHL 6); its 4 bytes are part of `ip_len`.
    pub ip_option: Option<[u8; 2]>,
    pub transport: Transport,
}

const ETH_HDR: usize = 14;
const IP_HDR: usize = 20;
/// The in-band IP option: type, length and two data octets.
const IP_OPTION: usize = OPTION_BYTES as usize;
const TCP_HDR: usize = 20;
const UDP_HDR: usize = 8;
/// ICMP header (8) + the quoted IPv4 header (20) + 8 bytes of its datagram.
const ICMP_MTU_LEN: usize = 8 + IP_HDR + 8;
/// The most TCP option bytes: 40 (a 60-byte header).
const MAX_TCP_OPTIONS: usize = 40;
/// Two NOPs and the timestamp option (RFC 7323 §3 and Appendix A).
const TS_OPTION: usize = 12;
/// The largest captured length of a record: Ethernet + IPv4 (with the
/// option) + TCP headers.
const MAX_CAPLEN: usize = ETH_HDR + IP_HDR + IP_OPTION + TCP_HDR + MAX_TCP_OPTIONS;
/// Snapshot length in the global header: the customary 262 144, above the largest
/// original length (14 + 65 535), which pcap readers check records against.
const SNAPLEN: u32 = 262_144;
const PS_PER_NS: u64 = 1_000;
/// A MAC Control frame as captured: the minimum Ethernet frame without its
/// 4-byte FCS.
const PAUSE_FRAME: usize = 60;

/// An in-memory pcap capture.
#[derive(Debug)]
pub struct Capture {
    writer: PcapWriter<Vec<u8>>,
    frames: u64,
}

impl Capture {
    /// An empty capture: the pcap global header (little-endian, nanosecond
    /// timestamps, Ethernet link type) and no records.
    pub fn new() -> Capture {
        let header = PcapHeader {
            snaplen: SNAPLEN,
            datalink: DataLink::ETHERNET,
            ts_resolution: TsResolution::NanoSecond,
            endianness: Endianness::Little,
            ..PcapHeader::default()
        };
        let writer =
            PcapWriter::with_header(Vec::new(), header).expect("writing to a Vec cannot fail");
        Capture { writer, frames: 0 }
    }

    /// Appends one record for `f`. Never panics: out-of-range lengths are
    /// clamped as documented on [`Frame::ip_len`].
    pub fn push(&mut self, f: &Frame) {
        let mut buf = [0u8; MAX_CAPLEN];
        let (caplen, ip_len) = encode(f, &mut buf);
        let timestamp = Duration::from_nanos(f.time.0 / PS_PER_NS);
        let orig_len = ETH_HDR as u32 + u32::from(ip_len);
        let packet = PcapPacket::new(timestamp, orig_len, &buf[..caplen]);
        // Cannot fail: a Vec accepts every write, u64 picoseconds are under
        // 2^32 seconds, and caplen <= orig_len (ip_len covers the headers)
        // and caplen <= SNAPLEN.
        self.writer
            .write_packet(&packet)
            .expect("a valid record written to a Vec");
        self.frames += 1;
    }

    /// Appends one 802.3 MAC Control PAUSE frame (IEEE 802.3 Annex 31B) sent
    /// by switch node `node` at `time`: to the reserved multicast address
    /// 01-80-C2-00-00-01, EtherType 0x8808. A frame naming every class
    /// (`classes` = 0xFF) is an 802.3x PAUSE (opcode 0x0001, one pause time);
    /// any other is an 802.1Qbb PFC frame (opcode 0x0101: the class-enable
    /// vector, then eight pause times, `quanta` for the classes named and 0
    /// for the others). Padded to the minimum frame, 60 bytes before the FCS.
    pub fn push_pause(&mut self, time: Time, node: u32, classes: u8, quanta: u16) {
        let mut buf = [0u8; PAUSE_FRAME];
        buf[0..6].copy_from_slice(&[0x01, 0x80, 0xc2, 0, 0, 0x01]);
        buf[6..12].copy_from_slice(&switch_mac(node));
        buf[12..14].copy_from_slice(&0x8808u16.to_be_bytes());
        let body = &mut buf[ETH_HDR..];
        if classes == u8::MAX {
            body[0..2].copy_from_slice(&0x0001u16.to_be_bytes());
            body[2..4].copy_from_slice(&quanta.to_be_bytes());
        } else {
            body[0..2].copy_from_slice(&0x0101u16.to_be_bytes());
            body[2..4].copy_from_slice(&u16::from(classes).to_be_bytes());
            for c in 0..8 {
                let time = if classes & (1 << c) != 0 { quanta } else { 0 };
                body[4 + 2 * c..6 + 2 * c].copy_from_slice(&time.to_be_bytes());
            }
        }
        let timestamp = Duration::from_nanos(time.0 / PS_PER_NS);
        let packet = PcapPacket::new(timestamp, PAUSE_FRAME as u32, &buf);
        self.writer
            .write_packet(&packet)
            .expect("a valid record written to a Vec");
        self.frames += 1;
    }

    /// Number of records so far.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// The complete pcap file.
    pub fn into_bytes(self) -> Vec<u8> {
        self.writer.into_writer()
    }
}

impl Default for Capture {
    fn default() -> Capture {
        Capture::new()
    }
}

/// IPv4 address of host `h`: 10.x.y.z with x.y.z = h + 1 (so host 0 is 10.0.0.1).
/// Only the low 24 bits of h + 1 are used, so host 16 777 214 (10.255.255.255)
/// is the last distinct one.
pub fn host_ip(h: u32) -> [u8; 4] {
    let [_, x, y, z] = h.wrapping_add(1).to_be_bytes();
    [10, x, y, z]
}

/// The host index whose address ([`host_ip`]) a switch's packets carry in
/// captures: switch node `node` is 10.255.x.y (x.y = node + 1), beyond every
/// host index below 16 711 679.
pub fn switch_host(node: u32) -> u32 {
    0x00FF_0000 | (node & 0xFFFF)
}

/// Locally administered MAC address of host `h`: 02:00:00 followed by the
/// same three bytes as its IP address.
fn host_mac(h: u32) -> [u8; 6] {
    let [_, x, y, z] = host_ip(h);
    [0x02, 0, 0, x, y, z]
}

/// Locally administered MAC address of switch node `node`: 02:01 followed
/// by the node's 32-bit index.
fn switch_mac(node: u32) -> [u8; 6] {
    let [a, b, c, d] = node.to_be_bytes();
    [0x02, 0x01, a, b, c, d]
}

/// Writes the Ethernet, IPv4 and transport headers of `f` into `buf`; returns
/// the number of bytes written and the (clamped) IPv4 total length.
fn encode(f: &Frame, buf: &mut [u8; MAX_CAPLEN]) -> (usize, u16) {
    let (protocol, l4_len) = match f.transport {
        Transport::Tcp { sack, options, .. } => {
            let (other, sack) = tcp_options(options, &sack);
            (6, TCP_HDR + other + sack)
        }
        Transport::Udp { .. } => (17, UDP_HDR),
        Transport::IcmpMtu { .. } => (1, ICMP_MTU_LEN),
    };
    let ip_hdr = IP_HDR + if f.ip_option.is_some() { IP_OPTION } else { 0 };
    let min_len = (ip_hdr + l4_len) as u16;
    let ip_len = u16::try_from(f.ip_len).unwrap_or(u16::MAX).max(min_len);

    let (eth, rest) = buf.split_at_mut(ETH_HDR);
    let (ip, l4) = rest.split_at_mut(ip_hdr);

    eth[0..6].copy_from_slice(&host_mac(f.dst_host));
    eth[6..12].copy_from_slice(&host_mac(f.src_host));
    eth[12..14].copy_from_slice(&0x0800u16.to_be_bytes());

    ip[0] = 0x40 | (ip_hdr / 4) as u8; // version 4, IHL in 32-bit words
    ip[1] = f.ecn & 0b11; // DSCP 0
    ip[2..4].copy_from_slice(&ip_len.to_be_bytes());
    ip[4..6].copy_from_slice(&f.ip_id.to_be_bytes());
    ip[6..8].copy_from_slice(&0x4000u16.to_be_bytes()); // DF, fragment offset 0
    ip[8] = 64; // TTL
    ip[9] = protocol;
    ip[12..16].copy_from_slice(&host_ip(f.src_host));
    ip[16..20].copy_from_slice(&host_ip(f.dst_host));
    if let Some([bof, echo]) = f.ip_option {
        ip[IP_HDR..].copy_from_slice(&[OPTION_TYPE, OPTION_BYTES as u8, bof, echo]);
    }
    let checksum = ipv4_checksum(ip);
    ip[10..12].copy_from_slice(&checksum.to_be_bytes());

    match f.transport {
        Transport::Tcp {
            src_port,
            dst_port,
            seq,
            ack,
            flags,
            window,
            options,
            ts,
            sack,
        } => {
            l4[0..2].copy_from_slice(&src_port.to_be_bytes());
            l4[2..4].copy_from_slice(&dst_port.to_be_bytes());
            l4[4..8].copy_from_slice(&seq.to_be_bytes());
            l4[8..12].copy_from_slice(&ack.to_be_bytes());
            l4[12] = ((l4_len / 4) as u8) << 4; // data offset in 32-bit words
            l4[13] = flags;
            l4[14..16].copy_from_slice(&window.to_be_bytes());
            // Checksum and urgent pointer stay 0.
            let (other, sack_len) = tcp_options(options, &sack);
            let sack_at = TCP_HDR + other;
            l4[TCP_HDR..sack_at].fill(1); // NOPs
            if other >= TS_OPTION {
                // NOP, NOP, kind 8, length 10, TSval, TSecr.
                l4[22..24].copy_from_slice(&[8, 10]);
                l4[24..28].copy_from_slice(&ts.0.to_be_bytes());
                l4[28..32].copy_from_slice(&ts.1.to_be_bytes());
            }
            if sack_len > 0 {
                // NOP, NOP, kind 5, length 2 + 8n, then the blocks.
                l4[sack_at..sack_at + 4].copy_from_slice(&[1, 1, 5, 2 + 8 * sack.len() as u8]);
                for (i, (l, r)) in sack.blocks(u64::from(ack)).enumerate() {
                    let at = sack_at + 4 + 8 * i;
                    l4[at..at + 4].copy_from_slice(&(l as u32).to_be_bytes());
                    l4[at + 4..at + 8].copy_from_slice(&(r as u32).to_be_bytes());
                }
            }
        }
        Transport::Udp { src_port, dst_port } => {
            l4[0..2].copy_from_slice(&src_port.to_be_bytes());
            l4[2..4].copy_from_slice(&dst_port.to_be_bytes());
            l4[4..6].copy_from_slice(&(ip_len - ip_hdr as u16).to_be_bytes());
            // Checksum stays 0 (none).
        }
        Transport::IcmpMtu {
            mtu,
            quoted_src,
            quoted_dst,
            src_port,
            dst_port,
            seq,
        } => {
            l4[0] = 3; // destination unreachable
            l4[1] = 4; // fragmentation needed and DF set
            l4[6..8].copy_from_slice(&mtu.to_be_bytes());
            // The quoted datagram: a full-size TCP segment's IPv4 header
            // (its length is the old MTU, unknown here: the largest) and the
            // first 8 bytes of its TCP header.
            let q = &mut l4[8..8 + IP_HDR];
            q[0] = 0x45;
            q[2..4].copy_from_slice(&u16::MAX.to_be_bytes());
            q[6..8].copy_from_slice(&0x4000u16.to_be_bytes());
            q[8] = 64;
            q[9] = 6;
            q[12..16].copy_from_slice(&host_ip(quoted_src));
            q[16..20].copy_from_slice(&host_ip(quoted_dst));
            let checksum = ipv4_checksum(q);
            q[10..12].copy_from_slice(&checksum.to_be_bytes());
            let tcp = &mut l4[8 + IP_HDR..ICMP_MTU_LEN];
            tcp[0..2].copy_from_slice(&src_port.to_be_bytes());
            tcp[2..4].copy_from_slice(&dst_port.to_be_bytes());
            tcp[4..8].copy_from_slice(&seq.to_be_bytes());
            let checksum = ipv4_checksum(&l4[..ICMP_MTU_LEN]);
            l4[2..4].copy_from_slice(&checksum.to_be_bytes());
        }
    }
    (ETH_HDR + ip_hdr + l4_len, ip_len)
}

/// Bytes of the other options (whole words, at most 40) and of the SACK
/// option (none if it does not fit beside them).
fn tcp_options(options: u8, sack: &Sack) -> (usize, usize) {
    let other = usize::from(options).min(MAX_TCP_OPTIONS) & !3;
    let sack = sack.option_bytes() as usize;
    (
        other,
        if other + sack <= MAX_TCP_OPTIONS {
            sack
        } else {
            0
        },
    )
}

/// The Internet checksum (RFC 1071) of `header` (an IPv4 header, or an ICMP
/// message of even length), whose checksum field is zero.
fn ipv4_checksum(header: &[u8]) -> u16 {
    let mut sum: u32 = header
        .chunks_exact(2)
        .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pcap_file::pcap::PcapReader;

    fn be16(b: &[u8], at: usize) -> u16 {
        u16::from_be_bytes([b[at], b[at + 1]])
    }

    fn be32(b: &[u8], at: usize) -> u32 {
        u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
    }

    /// A TCP segment from host `src` to host `src ^ 1`.
    fn tcp(t_ps: u64, src: u32, seq: u32, ack: u32, flags: u8, payload: u32, ecn: u8) -> Frame {
        Frame {
            time: Time(t_ps),
            src_host: src,
            dst_host: src ^ 1,
            ip_len: 40 + payload,
            ecn,
            ip_id: seq as u16,
            ip_option: None,
            transport: Transport::Tcp {
                src_port: 40_000u16.wrapping_add(src as u16),
                dst_port: 5001,
                seq,
                ack,
                flags,
                window: 65_535,
                options: 0,
                ts: (0, 0),
                sack: Sack::default(),
            },
        }
    }

    /// An ACK with two SACK blocks carries them after two NOPs, the data
    /// offset covering the option (RFC 2018 §3), within a longer IP packet.
    #[test]
    fn the_sack_option_is_encoded() {
        let mut sack = Sack::default();
        assert!(sack.push(1000, 3000, 5000));
        assert!(sack.push(1000, 7000, 8000));
        let mut f = tcp(1_000, 1, 1, 1000, ACK, 0, 0);
        f.ip_len = 40 + sack.option_bytes();
        if let Transport::Tcp { sack: s, .. } = &mut f.transport {
            *s = sack;
        }
        let mut buf = [0u8; MAX_CAPLEN];
        let (caplen, ip_len) = encode(&f, &mut buf);
        assert_eq!((caplen, ip_len), (14 + 20 + 20 + 20, 60));
        let tcp = &buf[34..];
        assert_eq!(tcp[12] >> 4, 10, "data offset: 40 B of TCP header");
        assert_eq!(tcp[20..24], [1, 1, 5, 18]);
        assert_eq!(be32(tcp, 24), 3000);
        assert_eq!(be32(tcp, 28), 5000);
        assert_eq!(be32(tcp, 32), 7000);
        assert_eq!(be32(tcp, 36), 8000);
    }

    /// With a 52 B header the 12 option bytes are the timestamp option (two
    /// NOPs, kind 8, length 10, TSval, TSecr; RFC 7323 §3), before SACK.
    #[test]
    fn the_timestamp_option_comes_before_sack() {
        let mut sack = Sack::default();
        assert!(sack.push(1000, 3000, 5000));
        let mut f = tcp(1_000, 1, 1, 1000, ACK, 0, 0);
        f.ip_len = 52 + sack.option_bytes();
        if let Transport::Tcp {
            sack: s,
            options,
            ts,
            ..
        } = &mut f.transport
        {
            *s = sack;
            *options = 12;
            *ts = (77, 66);
        }
        let mut buf = [0u8; MAX_CAPLEN];
        let (caplen, ip_len) = encode(&f, &mut buf);
        assert_eq!((caplen, ip_len), (14 + 20 + 20 + 12 + 12, 64));
        let tcp = &buf[34..];
        assert_eq!(tcp[12] >> 4, 11, "data offset: 44 B of TCP header");
        assert_eq!(tcp[20..24], [1, 1, 8, 10]);
        assert_eq!((be32(tcp, 24), be32(tcp, 28)), (77, 66));
        assert_eq!(tcp[32..36], [1, 1, 5, 10]);
        assert_eq!((be32(tcp, 36), be32(tcp, 40)), (3000, 5000));
    }

    #[test]
    fn records_decode_to_the_frames_pushed() {
        let frames = [
            tcp(1_000, 0, 100, 0, SYN | ECE | CWR, 0, 0),
            // Picoseconds below a nanosecond are dropped.
            tcp(2_500_999, 0, 101, 7, ACK | PSH, 1460, 2),
            tcp(3_000_000_000_000, 1, 7, 1561, ACK | ECE, 0, 0),
            tcp(3_000_000_123_000, 0, 1561, 7, ACK, 1460, 3),
            Frame {
                time: Time(4_200_000_000_001),
                src_host: 2,
                dst_host: 300,
                ip_len: 1000,
                ecn: 1,
                ip_id: 0xbeef,
                ip_option: None,
                transport: Transport::Udp {
                    src_port: 9,
                    dst_port: 4791,
                },
            },
            Frame {
                time: Time(5_000_000_000_000),
                src_host: switch_host(7),
                dst_host: 3,
                ip_len: 56,
                ecn: 0,
                ip_id: 1,
                ip_option: None,
                transport: Transport::IcmpMtu {
                    mtu: 956,
                    quoted_src: 3,
                    quoted_dst: 0,
                    src_port: 40_000,
                    dst_port: 5001,
                    seq: 1461,
                },
            },
        ];
        let mut cap = Capture::new();
        for f in &frames {
            cap.push(f);
        }
        assert_eq!(cap.frames(), 6);
        let bytes = cap.into_bytes();

        // Little-endian nanosecond magic, Ethernet link type.
        assert_eq!(bytes[0..4], [0x4d, 0x3c, 0xb2, 0xa1]);
        let mut reader = PcapReader::new(&bytes[..]).expect("a pcap file");
        let header = reader.header();
        assert_eq!(header.ts_resolution, TsResolution::NanoSecond);
        assert_eq!(header.datalink, DataLink::ETHERNET);
        assert_eq!(header.snaplen, SNAPLEN);

        let expected_ns = [
            1,
            2_500,
            3_000_000_000,
            3_000_000_123,
            4_200_000_000,
            5_000_000_000,
        ];
        for (f, ns) in frames.iter().zip(expected_ns) {
            let pkt = reader.next_packet().expect("a record").expect("valid");
            assert_eq!(pkt.timestamp, Duration::from_nanos(ns));
            assert_eq!(pkt.orig_len, 14 + f.ip_len);
            let d = &pkt.data[..];
            let l4_len = match f.transport {
                Transport::Tcp { .. } => 20,
                Transport::Udp { .. } => 8,
                Transport::IcmpMtu { .. } => 36,
            };
            assert_eq!(d.len(), 14 + 20 + l4_len);

            // Ethernet.
            assert_eq!(d[0..6], host_mac(f.dst_host));
            assert_eq!(d[6..12], host_mac(f.src_host));
            assert_eq!(d[0] & 0b11, 0b10, "unicast, locally administered");
            assert_eq!(be16(d, 12), 0x0800);

            // IPv4.
            let ip = &d[14..34];
            assert_eq!(ip[0], 0x45);
            assert_eq!(ip[1], f.ecn, "DSCP 0, ECN in the low bits");
            assert_eq!(u32::from(be16(ip, 2)), f.ip_len);
            assert_eq!(be16(ip, 4), f.ip_id);
            assert_eq!(be16(ip, 6), 0x4000);
            assert_eq!(ip[8], 64);
            assert_eq!(ip[12..16], host_ip(f.src_host));
            assert_eq!(ip[16..20], host_ip(f.dst_host));
            let sum: u32 = (0..20).step_by(2).map(|i| u32::from(be16(ip, i))).sum();
            assert_eq!((sum & 0xffff) + (sum >> 16), 0xffff, "header checksum");

            // Transport.
            let l4 = &d[34..];
            match f.transport {
                Transport::Tcp {
                    src_port,
                    dst_port,
                    seq,
                    ack,
                    flags,
                    window,
                    ..
                } => {
                    assert_eq!(ip[9], 6);
                    assert_eq!(be16(l4, 0), src_port);
                    assert_eq!(be16(l4, 2), dst_port);
                    assert_eq!(be32(l4, 4), seq);
                    assert_eq!(be32(l4, 8), ack);
                    assert_eq!(l4[12], 0x50);
                    assert_eq!(l4[13], flags);
                    assert_eq!(be16(l4, 14), window);
                    assert_eq!(be32(l4, 16), 0, "checksum and urgent pointer");
                }
                Transport::Udp { src_port, dst_port } => {
                    assert_eq!(ip[9], 17);
                    assert_eq!(be16(l4, 0), src_port);
                    assert_eq!(be16(l4, 2), dst_port);
                    assert_eq!(u32::from(be16(l4, 4)), f.ip_len - 20);
                    assert_eq!(be16(l4, 6), 0);
                }
                Transport::IcmpMtu {
                    mtu,
                    quoted_src,
                    src_port,
                    seq,
                    ..
                } => {
                    assert_eq!(ip[9], 1);
                    assert_eq!(ip[12..16], [10, 255, 0, 8], "the switch's address");
                    assert_eq!((l4[0], l4[1]), (3, 4), "fragmentation needed");
                    assert_eq!((be16(l4, 4), be16(l4, 6)), (0, mtu));
                    let sum: u32 = (0..36).step_by(2).map(|i| u32::from(be16(l4, i))).sum();
                    let folded = (sum & 0xffff) + (sum >> 16);
                    assert_eq!((folded & 0xffff) + (folded >> 16), 0xffff, "ICMP checksum");
                    assert_eq!(l4[8 + 9], 6, "a TCP segment quoted");
                    assert_eq!(l4[8 + 12..8 + 16], host_ip(quoted_src));
                    assert_eq!(be16(l4, 28), src_port);
                    assert_eq!(be32(l4, 32), seq);
                }
            }
        }
        assert!(reader.next_packet().is_none());
    }

    #[test]
    fn out_of_range_lengths_are_clamped() {
        let mut cap = Capture::default();
        let mut big = tcp(u64::MAX, u32::MAX, 1, 1, ACK, 100_000, 0xff);
        cap.push(&big);
        big.ip_len = 0;
        cap.push(&big);
        cap.push(&Frame {
            ip_len: 3,
            transport: Transport::Udp {
                src_port: 1,
                dst_port: 2,
            },
            ..big
        });
        let bytes = cap.into_bytes();
        let mut reader = PcapReader::new(&bytes[..]).expect("a pcap file");
        let mut lens = Vec::new();
        while let Some(p) = reader.next_packet() {
            let p = p.expect("valid");
            lens.push((p.orig_len, be16(&p.data, 16), p.data[15]));
        }
        assert_eq!(lens, [(14 + 65_535, 65_535, 3), (54, 40, 3), (42, 28, 3)]);
    }

    /// 802.3x PAUSE (opcode 1, one time) and 802.1Qbb PFC (opcode 0x0101,
    /// class-enable vector, eight times) as IEEE 802.3 Annex 31B and 802.1Qbb
    /// (clause 36 of 802.1Q) lay them out, and as tshark decodes them.
    #[test]
    fn pause_frames_are_mac_control_frames() {
        let mut cap = Capture::new();
        cap.push_pause(Time(5_000), 7, u8::MAX, 0xffff);
        cap.push_pause(Time(6_000), 7, 1 << 3, 100);
        let bytes = cap.into_bytes();
        let mut reader = PcapReader::new(&bytes[..]).expect("a pcap file");
        let p = reader.next_packet().unwrap().unwrap();
        assert_eq!((p.orig_len, p.data.len()), (60, 60));
        assert_eq!(p.data[0..6], [0x01, 0x80, 0xc2, 0, 0, 1]);
        assert_eq!(p.data[6..12], [2, 1, 0, 0, 0, 7]);
        assert_eq!(be16(&p.data, 12), 0x8808);
        assert_eq!((be16(&p.data, 14), be16(&p.data, 16)), (1, 0xffff));
        let p = reader.next_packet().unwrap().unwrap();
        assert_eq!((be16(&p.data, 14), be16(&p.data, 16)), (0x0101, 8));
        let times: Vec<u16> = (0..8).map(|c| be16(&p.data, 18 + 2 * c)).collect();
        assert_eq!(times, [0, 0, 0, 100, 0, 0, 0, 0]);
    }

    /// BOTCP's option (seed §4.1): IHL 6, then type 226, length 4, the BOF
    /// field and the echo, inside the checksum, before the TCP header.
    #[test]
    fn the_bof_option_follows_the_ip_header() {
        let mut f = tcp(1_000, 0, 1, 1, ACK, 1456, 0);
        f.ip_len = 44 + 1456;
        f.ip_option = Some([30, 12]);
        let mut buf = [0u8; MAX_CAPLEN];
        let (caplen, ip_len) = encode(&f, &mut buf);
        assert_eq!((caplen, ip_len), (14 + 24 + 20, 1500));
        let ip = &buf[14..38];
        assert_eq!(ip[0], 0x46);
        assert_eq!(ip[20..24], [226, 4, 30, 12]);
        let sum: u32 = (0..24).step_by(2).map(|i| u32::from(be16(ip, i))).sum();
        assert_eq!((sum & 0xffff) + (sum >> 16), 0xffff, "header checksum");
        assert_eq!(be32(&buf, 38 + 4), 1, "the TCP header follows the option");
    }

    #[test]
    fn host_ips() {
        assert_eq!(host_ip(0), [10, 0, 0, 1]);
        assert_eq!(host_ip(255), [10, 0, 1, 0]);
        assert_eq!(host_ip(65_535), [10, 1, 0, 0]);
        assert_eq!(host_ip(16_777_214), [10, 255, 255, 255]);
    }
}
