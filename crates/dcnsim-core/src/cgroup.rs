//! The memory limits of the process's cgroup and its ancestors (cgroup v2
//! `memory.max`, v1 `memory.limit_in_bytes`), watched while a run goes.
//!
//! A cgroup's limit is not an allocation failure but the kernel's OOM killer
//! (SIGKILL, exit 137, no word): the run has to stop before it. Batch
//! schedulers (Slurm, Kubernetes) enforce their jobs' memory this way. Every
//! check of the event loop's memory (`Simulation::check_memory`, every
//! 65,536 events, never per packet) asks [`Watch::over`], which reads the
//! limits and what the cgroups hold at most every [`EVERY`] of wall time. What
//! a cgroup holds is its `memory.current` (v1 `memory.usage_in_bytes`) less
//! its file cache (`active_file` and `inactive_file` of `memory.stat`, v1
//! `total_active_file` and `total_inactive_file`), which the kernel reclaims
//! before it kills: a run writing its outputs fills the cache to the limit
//! and is not stopped for that.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How often the limits and use are read, at most (wall time).
const EVERY: Duration = Duration::from_millis(10);

/// The run stops once a cgroup holds more than this share of its limit:
/// what is left is for the tables the run makes as it ends, and for the
/// growth between two reads.
pub const STOP_SHARE: f64 = 0.9;

/// cgroup v1 says "no limit" with a number near 2^63.
const NO_LIMIT: u64 = 1 << 62;

/// One cgroup with a memory controller: its directory and its version.
#[derive(Clone, Debug)]
struct Group {
    dir: PathBuf,
    v1: bool,
}

impl Group {
    /// Its limit, if it has one, and what it holds but its file cache.
    fn read(&self) -> Option<(u64, u64)> {
        let (limit, usage, prefix) = if self.v1 {
            ("memory.limit_in_bytes", "memory.usage_in_bytes", "total_")
        } else {
            ("memory.max", "memory.current", "")
        };
        let limit = number(&self.dir.join(limit)).filter(|&l| l < NO_LIMIT)?;
        let usage = number(&self.dir.join(usage))?;
        let stat = std::fs::read_to_string(self.dir.join("memory.stat")).unwrap_or_default();
        let cache: u64 = stat
            .lines()
            .filter_map(|line| line.split_once(' '))
            .filter(|(key, _)| {
                key.strip_prefix(prefix)
                    .is_some_and(|k| k == "active_file" || k == "inactive_file")
            })
            .filter_map(|(_, v)| v.trim().parse::<u64>().ok())
            .sum();
        Some((limit, usage.saturating_sub(cache)))
    }
}

fn number(path: &Path) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// The cgroups of this process that may limit its memory, and when they
/// were last read.
#[derive(Debug)]
pub struct Watch {
    groups: Vec<Group>,
    last: Option<Instant>,
}

impl Watch {
    /// The memory cgroups of this process and their ancestors (none where
    /// `/proc` or the cgroup mounts cannot be read).
    pub fn of_this_process() -> Watch {
        Watch::at(Path::new("/"))
    }

    /// [`Watch::of_this_process`] with `/proc` and `/sys` under `root`.
    pub fn at(root: &Path) -> Watch {
        let read = |p: &str| std::fs::read_to_string(root.join(p)).unwrap_or_default();
        let (cgroups, mounts) = (read("proc/self/cgroup"), read("proc/self/mountinfo"));
        let mut groups = Vec::new();
        for line in cgroups.lines() {
            let mut parts = line.splitn(3, ':');
            let (Some(_), Some(controllers), Some(path)) =
                (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            let v1 = !controllers.is_empty();
            if v1 && !controllers.split(',').any(|c| c == "memory") {
                continue;
            }
            let Some((mount_root, point)) = mount(&mounts, v1) else {
                continue;
            };
            let Ok(inside) = Path::new(path).strip_prefix(mount_root) else {
                continue;
            };
            let top = root.join(point.trim_start_matches('/'));
            let mut dir = top.join(inside);
            loop {
                groups.push(Group {
                    dir: dir.clone(),
                    v1,
                });
                if dir == top || !dir.pop() {
                    break;
                }
            }
        }
        Watch { groups, last: None }
    }

    /// The first cgroup holding more than [`STOP_SHARE`] of its limit, as
    /// (what it holds, its limit) in bytes; read at most every [`EVERY`].
    pub fn over(&mut self) -> Option<(u64, u64)> {
        if self.groups.is_empty() || self.last.is_some_and(|t| t.elapsed() < EVERY) {
            return None;
        }
        self.last = Some(Instant::now());
        self.groups
            .iter()
            .filter_map(Group::read)
            .find(|&(limit, used)| used as f64 > STOP_SHARE * limit as f64)
            .map(|(limit, used)| (used, limit))
    }

    /// What the limits leave: the smallest limit less what its cgroup holds
    /// (its file cache apart); `None` without a limit. The budget a run's
    /// estimate is checked against before it starts (`python/dcnsim/memory.py`).
    pub fn left(&self) -> Option<u64> {
        self.groups
            .iter()
            .filter_map(Group::read)
            .map(|(limit, used)| limit.saturating_sub(used))
            .min()
    }

    /// The cgroup that `bytes` more would take past [`STOP_SHARE`] of its
    /// limit, as (what it would hold, its limit): read now, for a large
    /// table's growth, which the kernel would meet not with a failed
    /// allocation but, once its pages are touched, with the OOM killer.
    pub fn refuses(&self, bytes: u64) -> Option<(u64, u64)> {
        self.groups
            .iter()
            .filter_map(Group::read)
            .map(|(limit, used)| (limit, used.saturating_add(bytes)))
            .find(|&(limit, after)| after as f64 > STOP_SHARE * limit as f64)
            .map(|(limit, after)| (after, limit))
    }
}

/// (root, mount point) of the cgroup v1 memory controller's mount, or of
/// the v2 hierarchy's, from `/proc/self/mountinfo`'s lines.
fn mount(mountinfo: &str, v1: bool) -> Option<(&str, &str)> {
    mountinfo.lines().find_map(|line| {
        let fields: Vec<&str> = line.split(' ').collect();
        let dash = fields.iter().position(|&f| f == "-")?;
        let (fstype, options) = (*fields.get(dash + 1)?, *fields.get(dash + 3)?);
        let ours = if v1 {
            fstype == "cgroup" && options.split(',').any(|o| o == "memory")
        } else {
            fstype == "cgroup2"
        };
        ours.then(|| (fields[3], fields[4]))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake v1 tree (a process two levels down, the limit on its parent)
    /// and a v2 one: the limit is found on the ancestor, the file cache is
    /// not counted, and the run is over only past [`STOP_SHARE`].
    #[test]
    fn limits_of_ancestors_count_and_file_cache_does_not() {
        let root = std::env::temp_dir().join(format!("dcnsim-cgroup-{}", std::process::id()));
        let write = |p: &str, text: &str| {
            let path = root.join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write("proc/self/cgroup", "4:memory:/job/step\n0::/job/step\n");
        write(
            "proc/self/mountinfo",
            "30 25 0:26 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n\
             31 25 0:27 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n",
        );
        let v1 = "sys/fs/cgroup/memory/job";
        write(&format!("{v1}/memory.limit_in_bytes"), "1000000\n");
        write(&format!("{v1}/memory.usage_in_bytes"), "950000\n");
        write(
            &format!("{v1}/memory.stat"),
            "cache 1\ntotal_active_file 50000\ntotal_inactive_file 30000\n",
        );
        write(
            &format!("{v1}/step/memory.limit_in_bytes"),
            "9223372036854771712\n",
        );
        write(&format!("{v1}/step/memory.usage_in_bytes"), "950000\n");
        let mut watch = Watch::at(&root);
        assert_eq!(watch.groups.len(), 3 + 3, "{:?}", watch.groups);
        // 950,000 held, 80,000 of it file cache: 870,000 < 900,000.
        assert_eq!(watch.over(), None);
        write(&format!("{v1}/memory.stat"), "total_inactive_file 40000\n");
        watch.last = None;
        assert_eq!(watch.over(), Some((910_000, 1_000_000)));
        // Read at most every EVERY.
        assert_eq!(watch.over(), None);
        // A growth is checked at once: 870,000 + 29,000 fits under 900,000.
        write(&format!("{v1}/memory.stat"), "total_inactive_file 80000\n");
        assert_eq!(watch.refuses(29_000), None);
        assert_eq!(watch.refuses(31_000), Some((901_000, 1_000_000)));
        std::fs::remove_dir_all(&root).unwrap();
    }
}
