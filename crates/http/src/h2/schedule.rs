//! A stream's body pieces still to go on their schedule (`pace.rs` writes them): plain data
//! the stream holds, naming nothing of the session.

use herd_engine::Paced;
use std::sync::Arc;
use std::time::Instant;

/// A stream's pieces still to go.
#[derive(Debug)]
pub(super) struct Pace {
    pub(super) paced: Arc<Paced>,
    /// The next piece's index (the first went with the request).
    pub(super) next: usize,
    /// When it is due; set at the first pump after the stream opened.
    pub(super) due: Option<Instant>,
}

impl Pace {
    /// The schedule of `paced`, when it has a piece after its first.
    pub(super) fn of(paced: &Arc<Paced>) -> Option<Box<Pace>> {
        (paced.pieces.len() > 1).then(|| {
            Box::new(Pace {
                paced: Arc::clone(paced),
                next: 1,
                due: None,
            })
        })
    }
}
