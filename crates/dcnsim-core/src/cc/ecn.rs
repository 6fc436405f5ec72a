//! NewReno with ECN (RFC 3168): data is ECN-capable, the receiver latches ECE
//! until CWR, and the sender halves its window (the default cut) at most once
//! per window of data.

use super::{Build, Controller, NoSettings};

#[derive(Clone, Debug)]
pub struct Ecn;

impl Build for Ecn {
    type Settings = NoSettings;

    fn new(_s: &NoSettings) -> Ecn {
        Ecn
    }
}

impl Controller for Ecn {
    fn ecn_capable(&self) -> bool {
        true
    }
}
