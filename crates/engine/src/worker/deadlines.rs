//! Request deadlines, exact and without a timer per request. Every exchange of a thread has the
//! same timeout and starts on a clock that only moves forward, so deadlines arrive in the order
//! exchanges started: a list threaded through the exchange slots (no allocation per request)
//! holds the exchanges in flight, earliest deadline first. Adding and removing one is O(1); the loop wakes
//! for the first deadline, to the microsecond, and fires every one that is due.

use std::time::Instant;

const NONE: u32 = u32::MAX;

#[derive(Clone, Copy)]
struct Node {
    prev: u32,
    next: u32,
    at: Option<Instant>,
}

const FREE: Node = Node {
    prev: NONE,
    next: NONE,
    at: None,
};

#[derive(Default)]
pub(crate) struct Deadlines {
    nodes: Vec<Node>,
    head: Option<u32>,
    tail: Option<u32>,
}

impl Deadlines {
    /// Exchange slot `i` is in flight until `at`.
    pub fn insert(&mut self, i: usize, at: Instant) {
        if self.nodes.len() <= i {
            self.nodes.resize(i + 1, FREE);
        }
        self.remove(i);
        // Walk back from the tail past later deadlines: never more than a step while the
        // clock moves forward, but correct whatever the order.
        let mut after = self.tail;
        while let Some(a) = after {
            match self.nodes[a as usize].at {
                Some(t) if t > at => after = link(self.nodes[a as usize].prev),
                _ => break,
            }
        }
        let i32_ = i as u32;
        let next = match after {
            Some(a) => link(self.nodes[a as usize].next),
            None => self.head,
        };
        self.nodes[i] = Node {
            prev: after.unwrap_or(NONE),
            next: next.unwrap_or(NONE),
            at: Some(at),
        };
        match after {
            Some(a) => self.nodes[a as usize].next = i32_,
            None => self.head = Some(i32_),
        }
        match next {
            Some(n) => self.nodes[n as usize].prev = i32_,
            None => self.tail = Some(i32_),
        }
    }

    /// Exchange slot `i` is no longer in flight (a no-op when it was not).
    pub fn remove(&mut self, i: usize) {
        let Some(node) = self.nodes.get(i).copied() else {
            return;
        };
        if node.at.is_none() {
            return;
        }
        match link(node.prev) {
            Some(p) => self.nodes[p as usize].next = node.next,
            None => self.head = link(node.next),
        }
        match link(node.next) {
            Some(n) => self.nodes[n as usize].prev = node.prev,
            None => self.tail = link(node.prev),
        }
        self.nodes[i] = FREE;
    }

    /// The earliest deadline and its exchange slot.
    pub fn first(&self) -> Option<(usize, Instant)> {
        let h = self.head?;
        Some((h as usize, self.nodes[h as usize].at?))
    }

    /// Every exchange slot in flight, earliest deadline first.
    pub fn all(&self) -> Vec<usize> {
        let mut out = Vec::new();
        let mut at = self.head;
        while let Some(i) = at {
            out.push(i as usize);
            at = link(self.nodes[i as usize].next);
        }
        out
    }
}

fn link(v: u32) -> Option<u32> {
    (v != NONE).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn first_is_always_the_earliest_whatever_is_removed() {
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        let mut d = Deadlines::default();
        d.insert(3, ms(10));
        d.insert(0, ms(20));
        d.insert(7, ms(30));
        assert_eq!(d.first(), Some((3, ms(10))));
        d.remove(0);
        d.remove(3);
        assert_eq!(d.first(), Some((7, ms(30))));
        d.insert(2, ms(5)); // out of order: still placed first
        assert_eq!(d.all(), vec![2, 7]);
        d.insert(2, ms(40)); // moved
        assert_eq!(d.all(), vec![7, 2]);
        d.remove(7);
        d.remove(2);
        d.remove(2);
        assert_eq!(d.first(), None);
        assert!(d.all().is_empty());
    }
}
