//! NewReno with ECN (RFC 3168): data is ECN-capable, the receiver latches ECE
//! until CWR, and the sender halves its window (the default cut) at most once
//! per window of data.

use super::{Build, Controller, Flags, NoSettings};

#[derive(Clone, Debug)]
pub struct Ecn;

impl Build for Ecn {
    type Settings = NoSettings;
    const FLAGS: Flags = Flags {
        ecn_capable: true,
        ..Flags::NEWRENO
    };

    fn new(_s: &NoSettings) -> Ecn {
        Ecn
    }
}

/// Every reaction NewReno's: only the flags differ.
impl Controller for Ecn {}
