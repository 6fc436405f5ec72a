//! Errors in a scenario, and the helpers every module's config type uses to
//! produce them with the full path of the bad field. This module sits at the
//! bottom: the axes' config types (queue, controller, forwarding, topology,
//! applications) import it; it imports none of them.

use serde::de::DeserializeOwned;
use serde_json::Value;
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

/// `s` on one line: control characters (a newline in a key, say) escaped.
fn one_line(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            let escaped: Vec<char> = if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            escaped
        })
        .collect()
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let reason = one_line(&self.reason.replace('\n', " "));
        if self.path.is_empty() {
            write!(f, "scenario: {reason}")
        } else {
            write!(f, "{}: {reason}", one_line(&self.path))
        }
    }
}

impl std::error::Error for ScenarioError {}

/// Deserialize `value` into `T`, reporting errors with their full field path
/// (`prefix` + the path inside `value`).
pub fn parse_at<T: DeserializeOwned>(value: Value, prefix: &str) -> Result<T, ScenarioError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let inner = e.inner().to_string();
        let mut path = e.path().to_string();
        if path == "." {
            path.clear();
        }
        let mut path = join_path(prefix, &path);
        // serde says "unknown field `x`, expected one of ..." (the path already
        // names x) and "missing field `x`" (the path names x's parent).
        let msg = if let Some(rest) = inner.strip_prefix("unknown field `") {
            let expected = rest
                .split_once('`')
                .map_or("", |(_, e)| e.trim_start_matches(", "));
            format!("unknown key ({expected})")
        } else if let Some(rest) = inner.strip_prefix("missing field `") {
            path = join_path(&path, rest.trim_end_matches('`'));
            "required".to_string()
        } else {
            inner
        };
        ScenarioError::new(path, msg)
    })
}

pub fn join_path(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_string(),
        (_, true) => a.to_string(),
        _ if b.starts_with('[') => format!("{a}{b}"),
        _ => format!("{a}.{b}"),
    }
}
