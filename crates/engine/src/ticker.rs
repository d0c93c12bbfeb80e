//! The worker's 10 ms ticks: they close seconds for the timeline and measure the loop's own
//! health (how late it wakes, its CPU, its send lag) second by second.

use crate::generator::ThreadCpu;
use crate::health::ThreadSecond;
use crate::share::ThreadShare;
use crate::ScriptSecond;
use herd_metrics::CompactHistogram;
use herd_metrics::{Recorder, Second};
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

/// How often a worker closes seconds and measures its own event-loop delay.
pub(crate) const TICK: Duration = Duration::from_millis(10);

/// What workers send the collector while they run, at their ticks.
pub(crate) enum Report {
    // Boxed: a second (two histograms' handles, per-name entries) is large beside the others,
    // and the channel's slots are sized by the largest variant.
    Second(Box<Second>),
    Health(ThreadSecond),
    Share(ThreadShare),
}

/// One worker's tick schedule and the health of the second in progress.
pub(crate) struct Ticks {
    k: usize,
    next: Instant,
    health_sec: Option<u64>,
    cpu_mark: ThreadCpu,
    delay_max: Duration,
    /// The worker's dropped arrivals when its last share was sent.
    dropped_mark: u64,
}

/// What a tick asks of the worker's script: what it counted since it was last asked.
pub(crate) trait Counts {
    fn take_second(&self) -> ScriptSecond;
}

impl<S: crate::Script> Counts for S {
    fn take_second(&self) -> ScriptSecond {
        crate::Script::take_second(self)
    }
}

/// What a tick reads and updates of its worker.
pub(crate) struct TickState<'a> {
    pub measure_start: Instant,
    pub recorder: &'a mut Recorder,
    pub loop_delay: &'a mut CompactHistogram,
    /// Send lag of the second in progress (open model); reset when the second is reported.
    pub second_lag: &'a mut CompactHistogram,
    pub open_connections: u64,
    /// Arrivals this worker dropped so far (open model).
    pub dropped: u64,
    /// Exchanges started and not ended.
    pub in_flight: u64,
    /// What the script counted since it was last asked.
    pub script: &'a dyn Counts,
    pub seconds: Option<&'a Sender<Report>>,
}

impl Ticks {
    /// Ticks of worker `k`, the first one `TICK` after `now`.
    pub fn new(k: usize, now: Instant) -> Self {
        Ticks {
            k,
            next: now + TICK,
            health_sec: None,
            cpu_mark: ThreadCpu::now(),
            delay_max: Duration::ZERO,
            dropped_mark: 0,
        }
    }

    /// When the next tick is due.
    pub fn due(&self) -> Instant {
        self.next
    }

    /// The tick due at [`Ticks::due`] came at `now`: records how late, closes the second when it
    /// is over and reports it with the worker's health, and schedules the next tick.
    pub fn tick(&mut self, now: Instant, s: TickState<'_>) {
        let delay = now.saturating_duration_since(self.next);
        self.delay_max = self.delay_max.max(delay);
        s.loop_delay.saturating_record(delay.as_micros() as u64);
        if now >= s.measure_start {
            let sec = (now - s.measure_start).as_secs();
            s.recorder.roll(sec);
            if let Some(tx) = s.seconds {
                for second in s.recorder.take_ready() {
                    let _ = tx.send(Report::Second(Box::new(second)));
                }
                match self.health_sec {
                    Some(h) if h == sec => {}
                    Some(h) => {
                        // The share goes first: the health closes the second for the collector.
                        self.share(h, &s, tx);
                        self.health(h, s.second_lag, s.open_connections, tx);
                        self.health_sec = Some(sec);
                    }
                    None => {
                        self.cpu_mark = ThreadCpu::now();
                        self.delay_max = Duration::ZERO;
                        s.second_lag.reset();
                        self.health_sec = Some(sec);
                    }
                }
            }
        }
        self.next += TICK;
        if now > self.next {
            self.next = now + TICK; // no burst of catch-up ticks after a stall
        }
    }
}

impl Ticks {
    /// Sends the worker's health in second `index`, and starts measuring the next.
    fn health(
        &mut self,
        index: u64,
        second_lag: &mut CompactHistogram,
        open_connections: u64,
        tx: &Sender<Report>,
    ) {
        let cpu = ThreadCpu::now();
        let lag = second_lag.value_at_quantile(0.99);
        second_lag.reset();
        let _ = tx.send(Report::Health(ThreadSecond {
            index,
            thread: self.k,
            cpu: cpu.since(&self.cpu_mark),
            loop_delay_max: self.delay_max,
            send_lag_p99: Duration::from_micros(lag),
            open_connections,
        }));
        self.cpu_mark = cpu;
        self.delay_max = Duration::ZERO;
    }

    /// Sends the worker's share of second `index`: drops and script counts since the last share.
    fn share(&mut self, index: u64, s: &TickState<'_>, tx: &Sender<Report>) {
        let _ = tx.send(Report::Share(ThreadShare {
            index,
            dropped: s.dropped - self.dropped_mark,
            in_flight: s.in_flight,
            script: s.script.take_second(),
        }));
        self.dropped_mark = s.dropped;
    }

    /// The worker is done: its share of the second it ended in (the run's last, cut short),
    /// so the stream's last record counts what the totals count.
    /// A worker that never ticked inside the measurement (on a virtual clock it can sleep
    /// through it) still hands over what it counted.
    pub fn finish(&mut self, now: Instant, s: TickState<'_>) {
        let index = match self.health_sec {
            Some(h) => h,
            None if now >= s.measure_start => (now - s.measure_start).as_secs(),
            None => return,
        };
        if let Some(tx) = s.seconds {
            self.share(index, &s, tx);
            // Its health too when that second is whole: the run's last whole second is often
            // the one in progress when the duration ends, and the generator's charts stopped
            // a second before the throughput's. A cut-short second is no sample of the load.
            let whole = now >= s.measure_start + Duration::from_secs(index + 1);
            if self.health_sec == Some(index) && whole {
                self.health(index, s.second_lag, s.open_connections, tx);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ScriptSecond;

    struct NoScript;
    impl Counts for NoScript {
        fn take_second(&self) -> ScriptSecond {
            ScriptSecond::default()
        }
    }

    fn state<'a>(
        measure_start: Instant,
        recorder: &'a mut Recorder,
        loop_delay: &'a mut CompactHistogram,
        second_lag: &'a mut CompactHistogram,
        tx: &'a Sender<Report>,
    ) -> TickState<'a> {
        TickState {
            measure_start,
            recorder,
            loop_delay,
            second_lag,
            open_connections: 1,
            dropped: 0,
            in_flight: 0,
            script: &NoScript,
            seconds: Some(tx),
        }
    }

    /// The seconds a worker's ticks report health for, when its last tick comes at `last` and
    /// it finishes at `end` (both after the start).
    fn health_seconds(last: Duration, end: Duration) -> Vec<u64> {
        let start = Instant::now();
        let (tx, rx) = std::sync::mpsc::channel();
        let mut recorder = Recorder::new(1);
        let (mut delay, mut lag) = (CompactHistogram::new(), CompactHistogram::new());
        let mut ticks = Ticks::new(0, start);
        let mut at = TICK;
        while at <= last {
            let s = state(start, &mut recorder, &mut delay, &mut lag, &tx);
            ticks.tick(start + at, s);
            at += TICK;
        }
        ticks.finish(
            start + end,
            state(start, &mut recorder, &mut delay, &mut lag, &tx),
        );
        drop(tx);
        rx.try_iter()
            .filter_map(|r| match r {
                Report::Health(h) => Some(h.index),
                _ => None,
            })
            .collect()
    }

    /// The run's last whole second is in progress when the duration ends (the worker's last
    /// tick came just before it): it still has its health, so the generator's charts end where
    /// the throughput's do; a cut-short last second has none.
    #[test]
    fn the_last_whole_second_has_its_health_and_a_cut_short_one_none() {
        let ms = Duration::from_millis;
        assert_eq!(health_seconds(ms(2_995), ms(3_000)), vec![0, 1, 2]);
        assert_eq!(health_seconds(ms(2_495), ms(2_500)), vec![0, 1]);
    }
}
