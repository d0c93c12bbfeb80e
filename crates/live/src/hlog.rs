//! `--hlog FILE`: the HdrHistogram interval log, one latency histogram per second, in the format
//! of HdrHistogram's `HistogramLogWriter` (a `#[StartTime: ...]` header, the column legend, then
//! `start,length,max,histogram` lines, the histogram V2-encoded, deflated and base64'd), so
//! HdrHistogram's own log tools and the Python `hdrhistogram` package read it. Values are
//! microseconds; `Interval_Max` is in milliseconds (max value divisor 1000, as the tools default).
//! Event streams add one tagged line per histogram each second (`Tag=ttft,...`: the time to
//! first event from the intended send, `Tag=ttft_sent`, `Tag=itl`: the gaps between events),
//! from the first second that has them on: the tools read each tag as its own log. A WebSocket
//! run's untagged lines are its replies' latency (from each message's intended send), and its
//! ping -> pong round trips (`--ping-interval`) are `Tag=ping_rtt`, from the first pong on.

use crate::{RunStart, Sink, SinkError};
use herd_engine::Record;
use herd_result::encode_histogram;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

const FLAG: &str = "--hlog";

pub struct Hlog {
    path: PathBuf,
    out: Option<BufWriter<File>>,
    /// A second had event streams: every later second has their tagged lines too.
    streams: bool,
    /// A second had pongs: every later second has a `ping_rtt` line too.
    pings: bool,
}

impl Hlog {
    pub fn create(path: &Path) -> Self {
        Hlog {
            path: path.to_owned(),
            out: None,
            streams: false,
            pings: false,
        }
    }
}

impl Sink for Hlog {
    fn start(&mut self, start: &RunStart) -> Result<(), SinkError> {
        let err = |e| SinkError::new(FLAG, &self.path, e);
        let mut out = BufWriter::new(File::create(&self.path).map_err(err)?);
        let epoch = start
            .measure_start
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs_f64();
        let when = humantime::format_rfc3339_millis(start.measure_start);
        write!(
            out,
            "#[Latency of {} in microseconds, one histogram per second: herd {}]\n\
             #[StartTime: {epoch:.3} (seconds since epoch), {when}]\n\
             #[BaseTime: {epoch:.3} (seconds since epoch)]\n\
             #[MaxValueDivisor: 1000.0]\n\
             \"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n",
            start.config.url,
            herd_result::HERD_VERSION,
        )
        .map_err(err)?;
        out.flush().map_err(err)?;
        self.out = Some(out);
        Ok(())
    }

    fn record(
        &mut self,
        r: &Record,
        _server: Option<&herd_result::Server>,
    ) -> Result<(), SinkError> {
        let err = |e| SinkError::new(FLAG, &self.path, e);
        let Some(out) = self.out.as_mut() else {
            return Ok(());
        };
        let s = &r.second;
        line(out, None, r.index(), s.latency.histogram()).map_err(err)?;
        self.streams |= s.streams.is_some();
        if self.streams {
            let st = s.streams.as_deref();
            for (tag, h) in [
                ("ttft", st.and_then(|x| x.first.histogram())),
                ("ttft_sent", st.and_then(|x| x.first_sent.histogram())),
                ("itl", st.and_then(|x| x.gap.histogram())),
            ] {
                line(out, Some(tag), r.index(), h).map_err(err)?;
            }
        }
        let ping = s.ws.as_deref().and_then(|w| w.ping.histogram());
        self.pings |= ping.is_some();
        if self.pings {
            line(out, Some("ping_rtt"), r.index(), ping).map_err(err)?;
        }
        out.flush().map_err(err)
    }
}

/// One second's line, tagged or not. A quiet second is an empty histogram, not a gap: the log
/// has one line per second (per tag).
fn line(
    out: &mut impl Write,
    tag: Option<&str>,
    index: u64,
    h: Option<&herd_engine::metrics::LiveHistogram>,
) -> std::io::Result<()> {
    let empty;
    let h = match h {
        Some(h) => h,
        None => {
            empty = herd_engine::metrics::empty_second_histogram();
            &empty
        }
    };
    if let Some(tag) = tag {
        write!(out, "Tag={tag},")?;
    }
    writeln!(
        out,
        "{index}.000,1.000,{:.3},{}",
        h.max() as f64 / 1e3,
        encode_histogram(h)
    )
}
