//! Sweep steps too short to judge (tens of milliseconds: `--num-conns 1000` against nginx) once
//! concluded "saturates between 50 and 100 users" one time and "between 1 and 5" the next.

use super::fixtures::{sweep, SWEEP_CLOSED};

#[test]
fn a_sweep_of_steps_too_short_to_judge_says_so_instead_of_a_knee() {
    let mut s = sweep(SWEEP_CLOSED);
    let n = s.steps.len();
    assert!(n >= 3);
    for (i, step) in s.steps.iter_mut().enumerate() {
        step.runs[0].duration_s = 0.04 + 0.09 * i as f64 / (n - 1) as f64;
    }
    let k = &s.knees()[0];
    let said = k.sentence_in(&s.level_unit());
    assert!(
        said.contains("no conclusion: every step was too short to judge (40-130 ms)"),
        "{said}"
    );
    assert!(!said.contains("saturates"), "{said}");

    // Only the first step short: it is left out, and the conclusion says so.
    let mut s = sweep(SWEEP_CLOSED);
    s.steps[0].runs[0].duration_s = 0.05;
    let said = s.knees()[0].sentence_in(&s.level_unit());
    assert!(
        said.contains("1 step too short to judge (50 ms) left out"),
        "{said}"
    );
    assert_eq!(s.knees()[0].points.len(), s.steps.len() - 1);
}
