//! Process trees: `--watch-name nginx` matches every nginx of the machine, other users' and other
//! instances' too. The processes of a name group into trees (a master and its workers are one);
//! how many trees matched, and their roots, say whether the sum is one server or several, and a
//! parent pid narrows the watch to one tree.

use std::collections::BTreeMap;

/// The parent pid from the text of `/proc/PID/stat` (field 4, counted from the last `)`, since the
/// command name may hold spaces and parentheses).
pub fn parse_ppid(stat: &str) -> Option<u32> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_ascii_whitespace().nth(1)?.parse().ok()
}

/// The parent of a live process; `None` when it is gone (or is pid 1's parent, 0).
pub fn parent_of(pid: u32) -> Option<u32> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_ppid(&text).filter(|&p| p != 0)
}

/// Longest parent chain followed: deeper than any real tree, and a bound should `/proc` change
/// under the walk and form a cycle.
const MAX_DEPTH: usize = 4096;

/// Whether `pid` is `root` or one of its descendants.
pub fn in_tree(pid: u32, root: u32, parent: impl Fn(u32) -> Option<u32>) -> bool {
    let mut p = pid;
    for _ in 0..MAX_DEPTH {
        if p == root {
            return true;
        }
        match parent(p) {
            Some(next) if next != p => p = next,
            _ => return false,
        }
    }
    false
}

/// The roots of the trees `pids` form: each pid with no ancestor among `pids`, in the order
/// given. nginx's master and workers give one root, two nginx instances two.
pub fn roots(pids: &[u32], parent: impl Fn(u32) -> Option<u32>) -> Vec<u32> {
    let set: BTreeMap<u32, ()> = pids.iter().map(|&p| (p, ())).collect();
    pids.iter()
        .copied()
        .filter(|&pid| {
            let mut p = pid;
            for _ in 0..MAX_DEPTH {
                match parent(p) {
                    Some(next) if next != p => {
                        if set.contains_key(&next) {
                            return false;
                        }
                        p = next;
                    }
                    _ => return true,
                }
            }
            true
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parent_is_read_past_an_odd_command_name() {
        assert_eq!(parse_ppid("10582 (cat) R 10578 10578 5255 0"), Some(10578));
        assert_eq!(parse_ppid("42 (my (evil) name) S 1 42 42"), Some(1));
        assert_eq!(parse_ppid("42 (x)"), None);
    }

    #[test]
    fn names_group_into_trees_by_their_parents() {
        // 1 -> 100 (nginx master) -> 101, 102 (workers); 1 -> 200 (sh) -> 201 (nginx master)
        // -> 202 (worker); 1 -> 300 (another user's nginx).
        let parents: BTreeMap<u32, u32> = [
            (100, 1),
            (101, 100),
            (102, 100),
            (200, 1),
            (201, 200),
            (202, 201),
            (300, 1),
        ]
        .into_iter()
        .collect();
        let parent = |p: u32| parents.get(&p).copied();
        let nginx = [100, 101, 102, 201, 202, 300];
        assert_eq!(roots(&nginx, parent), vec![100, 201, 300]);
        assert_eq!(roots(&[101, 102], parent), vec![101, 102]);
        assert!(in_tree(202, 200, parent));
        assert!(in_tree(200, 200, parent));
        assert!(!in_tree(101, 200, parent));
        assert!(in_tree(300, 1, parent));
        // A cycle (a /proc changing under the walk) ends.
        let cycle = |p: u32| Some(if p == 5 { 6 } else { 5 });
        assert!(!in_tree(5, 7, cycle));
        assert_eq!(roots(&[9], cycle), vec![9]);
    }
}
