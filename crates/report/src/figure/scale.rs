//! The one rule for when an axis of load (users or requests per second) is logarithmic.

use super::XAxis;
use crate::Model;

/// The x axis of curves against load: linear for requests per second (open model), and for
/// users (closed) too unless the levels span a factor of 50 or more (seed 004's 1, 5, 10,
/// 100, 1000 users are invisible on a linear axis). Both back ends ask this function.
pub fn load_axis(model: Model, levels: &[f64]) -> XAxis {
    let lo = levels.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = levels.iter().copied().fold(0.0, f64::max);
    if model == Model::Closed && lo > 0.0 && hi / lo >= 50.0 {
        XAxis::Log10
    } else {
        XAxis::Linear
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_axis_is_log_only_for_users_spanning_fifty_times() {
        let table: [(Model, &[f64], XAxis); 8] = [
            (
                Model::Closed,
                &[1.0, 5.0, 10.0, 100.0, 1000.0],
                XAxis::Log10,
            ),
            (Model::Closed, &[2.0, 100.0], XAxis::Log10),
            (Model::Closed, &[2.0, 99.0], XAxis::Linear),
            (Model::Closed, &[10.0, 20.0, 40.0], XAxis::Linear),
            // A level of zero users has no place on a log axis.
            (Model::Closed, &[0.0, 1000.0], XAxis::Linear),
            (Model::Closed, &[], XAxis::Linear),
            // Rates are always linear: the demanded-rate diagonal must stay straight.
            (Model::Open, &[1.0, 1000.0], XAxis::Linear),
            (Model::Open, &[100.0, 200.0], XAxis::Linear),
        ];
        for (model, levels, want) in table {
            assert_eq!(load_axis(model, levels), want, "{model:?} {levels:?}");
        }
    }
}
