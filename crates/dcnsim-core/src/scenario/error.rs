use std::fmt;

/// A bad scenario: the path of the offending field and the reason, shown as one
/// line `path: reason` (or just `reason` when the scenario as a whole is wrong).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    pub path: String,
    pub reason: String,
}

impl ScenarioError {
    pub fn new(path: impl Into<String>, reason: impl Into<String>) -> Self {
        ScenarioError {
            path: path.into(),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let reason = self.reason.replace('\n', " ");
        if self.path.is_empty() {
            write!(f, "scenario: {reason}")
        } else {
            write!(f, "{}: {reason}", self.path)
        }
    }
}

impl std::error::Error for ScenarioError {}
