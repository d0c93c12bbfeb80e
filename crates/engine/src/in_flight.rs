//! [`InFlight`]: the requests on one connection awaiting their responses, oldest first.
//!
//! Most connections carry one request at a time (no `--pipeline`), and a run may hold ten
//! thousand of them: a queue on the heap for each would cost an allocation of one entry plus
//! the queue's own header, per connection. A window of one keeps its entry inline instead;
//! wider windows keep a `VecDeque`. The methods are the `VecDeque` ones the session uses.

use std::collections::VecDeque;
use std::ops::{Index, IndexMut, RangeFrom, RangeFull};

pub(crate) enum InFlight<E> {
    One(Option<E>),
    Many(VecDeque<E>),
}

impl<E> InFlight<E> {
    /// Room for `window` requests: inline for a window of one.
    pub fn with_capacity(window: usize) -> Self {
        if window <= 1 {
            InFlight::One(None)
        } else {
            InFlight::Many(VecDeque::with_capacity(window))
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        match self {
            InFlight::One(e) => usize::from(e.is_some()),
            InFlight::Many(q) => q.len(),
        }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    pub fn push_back(&mut self, e: E) {
        match self {
            InFlight::One(slot @ None) => *slot = Some(e),
            InFlight::One(first) => {
                // More than the window said: never lose a request, grow instead.
                let first = first.take();
                *self = InFlight::Many(first.into_iter().chain([e]).collect());
            }
            InFlight::Many(q) => q.push_back(e),
        }
    }

    #[inline]
    pub fn pop_front(&mut self) -> Option<E> {
        match self {
            InFlight::One(e) => e.take(),
            InFlight::Many(q) => q.pop_front(),
        }
    }

    #[inline]
    pub fn front_mut(&mut self) -> Option<&mut E> {
        match self {
            InFlight::One(e) => e.as_mut(),
            InFlight::Many(q) => q.front_mut(),
        }
    }

    /// The entries from `range.start` on, oldest first. Two slices, as `VecDeque`'s own
    /// iterator walks them: a batch of pipelined requests is written through here.
    pub fn range_mut(&mut self, range: RangeFrom<usize>) -> impl Iterator<Item = &mut E> {
        let (a, b): (&mut [E], &mut [E]) = match self {
            InFlight::One(e) => (e.as_mut_slice(), &mut []),
            InFlight::Many(q) => q.as_mut_slices(),
        };
        let (from_a, from_b) = (
            range.start.min(a.len()),
            range.start.saturating_sub(a.len()),
        );
        a[from_a..].iter_mut().chain(b[from_b..].iter_mut())
    }

    /// Takes every entry out, oldest first.
    pub fn drain(&mut self, _: RangeFull) -> impl Iterator<Item = E> + '_ {
        let (one, many) = match self {
            InFlight::One(e) => (e.take(), None),
            InFlight::Many(q) => (None, Some(q.drain(..))),
        };
        one.into_iter().chain(many.into_iter().flatten())
    }
}

impl<E> Index<usize> for InFlight<E> {
    type Output = E;

    #[inline]
    fn index(&self, i: usize) -> &E {
        match self {
            InFlight::One(e) => e.as_ref().filter(|_| i == 0).expect("index in flight"),
            InFlight::Many(q) => &q[i],
        }
    }
}

impl<E> IndexMut<usize> for InFlight<E> {
    #[inline]
    fn index_mut(&mut self, i: usize) -> &mut E {
        match self {
            InFlight::One(e) => e.as_mut().filter(|_| i == 0).expect("index in flight"),
            InFlight::Many(q) => &mut q[i],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::InFlight;

    fn all(q: &mut InFlight<u32>) -> Vec<u32> {
        q.range_mut(0..).map(|e| *e).collect()
    }

    #[test]
    fn a_window_of_one_and_a_wide_window_keep_the_same_order() {
        for window in [1, 4] {
            let mut q = InFlight::with_capacity(window);
            assert!(q.is_empty() && q.front_mut().is_none() && q.pop_front().is_none());
            q.push_back(1);
            assert_eq!((q.len(), q[0], all(&mut q)), (1, 1, vec![1]));
            assert_eq!(q.range_mut(1..).count(), 0);
            *q.front_mut().unwrap() = 2;
            assert_eq!(q.pop_front(), Some(2));
            q.push_back(3);
            assert_eq!(q.drain(..).collect::<Vec<_>>(), vec![3]);
            assert!(q.is_empty());
        }
    }

    #[test]
    fn more_requests_than_a_window_of_one_grow_it_and_none_is_lost() {
        let mut q = InFlight::with_capacity(1);
        q.push_back(1);
        q.push_back(2);
        q.push_back(3);
        assert!(matches!(q, InFlight::Many(_)));
        q[1] = 20;
        assert_eq!(q.range_mut(1..).map(|e| *e).collect::<Vec<_>>(), [20, 3]);
        assert_eq!(q.pop_front(), Some(1));
        assert_eq!(q.drain(..).collect::<Vec<_>>(), vec![20, 3]);
    }

    #[test]
    fn a_wide_window_wrapped_around_its_ring_walks_from_any_entry_in_order() {
        let mut q = InFlight::with_capacity(4);
        (0..4).for_each(|e| q.push_back(e));
        for e in 0..3 {
            assert_eq!(q.pop_front(), Some(e));
        }
        (4..7).for_each(|e| q.push_back(e));
        for from in 0..5 {
            let got: Vec<u32> = q.range_mut(from..).map(|e| *e).collect();
            assert_eq!(got, (3..7).skip(from).collect::<Vec<_>>(), "from {from}");
        }
    }

    #[test]
    fn a_window_of_one_holds_its_entry_inline() {
        type Entry = [u64; 21];
        let inline = std::mem::size_of::<InFlight<Entry>>();
        assert!(inline <= std::mem::size_of::<Entry>() + 8, "{inline}");
    }
}
