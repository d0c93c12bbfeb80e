//! A metric family and its points: what the endpoint renders as text and the pushers encode
//! (remote write, OTLP).

/// Adds the family `name` to `out` and gives it back for its points.
pub(super) fn family<'a>(
    out: &'a mut Vec<Family>,
    name: &'static str,
    kind: &'static str,
    help: &'static str,
) -> &'a mut Family {
    out.push(Family {
        name,
        kind,
        help,
        points: Vec::new(),
    });
    out.last_mut().expect("just pushed")
}

/// A metric family: its series share a name (a histogram's with suffixes), type and help.
#[derive(Clone, Debug)]
pub struct Family {
    pub name: &'static str,
    pub kind: &'static str,
    pub help: &'static str,
    pub points: Vec<Point>,
}

/// One series' value: its full name and its labels beyond the base ones.
#[derive(Clone, Debug)]
pub struct Point {
    pub name: String,
    pub labels: Vec<(String, String)>,
    pub value: f64,
}

/// A point of `name`, with one label beyond the base ones or none.
pub(super) fn point(name: &str, extra: Option<(&str, String)>, value: f64) -> Point {
    Point {
        name: name.to_owned(),
        labels: extra.map(|(k, v)| (k.to_owned(), v)).into_iter().collect(),
        value,
    }
}
