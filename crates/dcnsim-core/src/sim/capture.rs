//! Packet captures: what a captured host sends and receives, or what a
//! captured port sends, as pcap records with real headers.

use super::flows::{tcp_sport, TCP_PORT};
use super::Simulation;
use crate::packet::{Packet, Proto, NONE};
use crate::pcap::{Frame, Transport};
use crate::traffic::{datagram_sport, PROBE_PORT, STREAM_PORT};

impl Simulation {
    /// Record packet `p` in every capture of `port` as it starts serializing.
    pub(super) fn capture_port(&mut self, port: u32, p: u32) {
        let pkt = *self.arena.get(p);
        for i in 0..self.net.ports[port as usize].pcap.len() {
            let c = self.net.ports[port as usize].pcap[i];
            self.capture(c, &pkt);
        }
    }

    pub(super) fn capture(&mut self, c: u32, pkt: &Packet) {
        let cap = &mut self.captures[c as usize];
        let transport = match pkt.proto {
            Proto::Tcp => {
                let f = &self.flows[pkt.flow as usize];
                let sport = tcp_sport(pkt.flow);
                let (src_port, dst_port) = if pkt.src == f.src {
                    (sport, TCP_PORT)
                } else {
                    (TCP_PORT, sport)
                };
                Transport::Tcp {
                    src_port,
                    dst_port,
                    // Sequence numbers on the wire are 32 bits and wrap.
                    seq: pkt.seq as u32,
                    ack: pkt.ack as u32,
                    flags: pkt.flags,
                    window: u16::MAX,
                    payload: pkt.size.saturating_sub(crate::tcp::HEADER),
                }
            }
            Proto::Udp => {
                let (id, dport) = if pkt.flow == NONE {
                    (pkt.record, PROBE_PORT)
                } else {
                    (pkt.flow, STREAM_PORT)
                };
                Transport::Udp {
                    src_port: datagram_sport(id),
                    dst_port: dport,
                }
            }
        };
        let ip_id = cap.frames() as u16;
        cap.push(&Frame {
            time: self.events.now(),
            src_host: pkt.src,
            dst_host: pkt.dst,
            ip_len: pkt.size,
            ecn: pkt.ecn,
            ip_id,
            transport,
        });
    }
}
