//! Building a [`Panel`]: a line chart on linear axes unless told otherwise, so each figure
//! states only what sets its chart apart.

use super::{Band, Kind, Mark, Panel, Reading, Series, XAxis};

/// The title of every axis of time since the measurement began.
pub const TIME_AXIS: &str = "time since start (s)";

impl Panel {
    /// An empty line chart named `id` on the page, headed `title` on a plot and captioned
    /// `caption` on the page.
    pub fn new(id: &str, title: &str, caption: &str) -> Panel {
        Panel {
            id: id.to_owned(),
            title: title.to_owned(),
            caption: caption.to_owned(),
            kind: Kind::Lines,
            x_label: String::new(),
            y_label: String::new(),
            x_axis: XAxis::Linear,
            y_axis: XAxis::Linear,
            x_reads: Reading::Number,
            y_reads: Reading::Number,
            x_range: (0.0, 1.0),
            y_range: (0.0, 1.0),
            height: 240.0,
            series: Vec::new(),
            marks: Vec::new(),
            bands: Vec::new(),
        }
    }

    /// The x axis: its title, scale, how its values read and its extent.
    pub fn x(self, label: &str, axis: XAxis, reads: Reading, range: (f64, f64)) -> Panel {
        Panel {
            x_label: label.to_owned(),
            x_axis: axis,
            x_reads: reads,
            x_range: range,
            ..self
        }
    }

    /// The run's time axis, seconds `0..end` (at least one), each position read as `reads`
    /// (a second of the timeline, a moment, a bucket of seconds).
    pub fn over_time(self, end: f64, reads: Reading) -> Panel {
        self.x(TIME_AXIS, XAxis::Linear, reads, (0.0, end.max(1.0)))
    }

    /// The y axis, as [`Panel::x`].
    pub fn y(self, label: &str, axis: XAxis, reads: Reading, range: (f64, f64)) -> Panel {
        Panel {
            y_label: label.to_owned(),
            y_axis: axis,
            y_reads: reads,
            y_range: range,
            ..self
        }
    }

    /// A linear y axis from zero to `top`.
    pub fn y_to(self, label: &str, reads: Reading, top: f64) -> Panel {
        self.y(label, XAxis::Linear, reads, (0.0, top))
    }

    pub fn height(self, height: f64) -> Panel {
        Panel { height, ..self }
    }

    pub fn kind(self, kind: Kind) -> Panel {
        Panel { kind, ..self }
    }

    pub fn series(self, series: Vec<Series>) -> Panel {
        Panel { series, ..self }
    }

    pub fn marks(self, marks: Vec<Mark>) -> Panel {
        Panel { marks, ..self }
    }

    pub fn bands(self, bands: Vec<Band>) -> Panel {
        Panel { bands, ..self }
    }
}
