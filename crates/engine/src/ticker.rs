//! The worker's 10 ms ticker: it sweeps request deadlines, closes seconds for the timeline, and
//! measures the loop's own health (how late it wakes, its CPU, its send lag) second by second.

use crate::deadline::Fired;
use crate::generator::ThreadCpu;
use crate::health::ThreadSecond;
use crate::worker::{Local, Report, TICK};
use crate::Transport;
use std::rc::Rc;
use std::sync::mpsc::Sender;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio::time::{sleep_until, Instant};

/// Starts the ticker of worker `k`; it runs until the worker aborts it.
pub(crate) fn spawn<T: Transport>(
    local: Rc<Local<T>>,
    k: usize,
    seconds: Option<Sender<Report>>,
) -> JoinHandle<()> {
    tokio::task::spawn_local(async move {
        let mut next = Instant::now();
        let mut health_sec: Option<u64> = None;
        let mut cpu_mark = ThreadCpu::now();
        let mut delay_max = Duration::ZERO;
        loop {
            next += TICK;
            sleep_until(next).await;
            let now = Instant::now();
            local.sweep(now, Fired::Deadline);
            let delay = now - next;
            delay_max = delay_max.max(delay);
            local
                .loop_delay
                .borrow_mut()
                .saturating_record(delay.as_micros() as u64);
            if now >= local.measure_start {
                let sec = (now - local.measure_start).as_secs();
                let mut rec = local.recorder.borrow_mut();
                rec.roll(sec);
                if let Some(tx) = &seconds {
                    for s in rec.take_ready() {
                        let _ = tx.send(Report::Second(s));
                    }
                    match health_sec {
                        Some(h) if h == sec => {}
                        Some(h) => {
                            let cpu = ThreadCpu::now();
                            let lag = {
                                let mut l = local.second_lag.borrow_mut();
                                let p = l.value_at_quantile(0.99);
                                l.reset();
                                p
                            };
                            let _ = tx.send(Report::Health(ThreadSecond {
                                index: h,
                                thread: k,
                                cpu: cpu.since(&cpu_mark),
                                loop_delay_max: delay_max,
                                send_lag_p99: Duration::from_micros(lag),
                                open_connections: local.open_conns.get(),
                            }));
                            cpu_mark = cpu;
                            delay_max = Duration::ZERO;
                            health_sec = Some(sec);
                        }
                        None => {
                            cpu_mark = ThreadCpu::now();
                            delay_max = Duration::ZERO;
                            local.second_lag.borrow_mut().reset();
                            health_sec = Some(sec);
                        }
                    }
                }
            }
            if now > next + TICK {
                next = now; // no burst of catch-up ticks after a stall
            }
        }
    })
}
