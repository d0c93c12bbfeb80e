//! `--requests-log FILE`: one CSV line per measured request (k6's `--out csv`, Gatling's
//! simulation.log, vegeta's results), written by a thread of its own from the batches the
//! workers hand off (`herd_engine::requests_log`), so the loop only copies integers. `.gz` makes
//! it gzip: one gzip member about each second, written whole, so `zcat` reads everything up
//! to a `kill -9` and no line is ever cut in two.

use crate::SinkError;
use flate2::write::GzEncoder;
use flate2::Compression;
use herd_engine::metrics::Verdict;
use herd_engine::requests_log::Line;
use herd_engine::RequestsLog;
use herd_result::RequestsLogged;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const FLAG: &str = "--requests-log";

/// The columns, in order.
pub const HEADER: &str =
    "intended_us,sent_us,latency_us,service_us,status,bytes_in,bytes_out,error,name,connection";

/// Lines reach the file at least this often (a gzip member each time).
const EVERY: Duration = Duration::from_secs(1);
/// ... or whenever this much text is waiting.
const CHUNK: usize = 1 << 20;

/// How the file is written, from its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Plain,
    Gzip,
}

/// The compression `path`'s name asks for; a name herd cannot write is refused with what to
/// write instead.
pub fn compression(path: &Path) -> Result<Encoding, String> {
    let name = path.to_string_lossy();
    if name.ends_with(".gz") {
        Ok(Encoding::Gzip)
    } else if name.ends_with(".zst") || name.ends_with(".bz2") || name.ends_with(".xz") {
        Err(format!(
            "{FLAG} {name}: herd writes the log as gzip (name it .csv.gz) or plain CSV (.csv), \
             not {}",
            path.extension()
                .map_or(String::new(), |e| e.to_string_lossy().into_owned())
        ))
    } else {
        Ok(Encoding::Plain)
    }
}

/// The writer of one run's log: its thread, and the log the workers send into.
pub struct Writer {
    path: PathBuf,
    log: Arc<RequestsLog>,
    thread: JoinHandle<std::io::Result<u64>>,
}

impl Writer {
    /// Creates `path` with its header and starts the writer; the run given [`Writer::log`]
    /// sends its lines to it. `names` are the request names, by index.
    pub fn start(path: &Path, names: Vec<String>) -> Result<Writer, SinkError> {
        let err = |e| SinkError::new(FLAG, path, e);
        let how = compression(path)
            .map_err(|m| err(std::io::Error::new(std::io::ErrorKind::InvalidInput, m)))?;
        let mut out = Out {
            file: File::create(path).map_err(err)?,
            how,
            text: Vec::with_capacity(CHUNK + 64 * 1024),
        };
        out.text.extend_from_slice(HEADER.as_bytes());
        out.text.push(b'\n');
        out.write().map_err(err)?;
        let (log, rx) = RequestsLog::new();
        let thread = std::thread::Builder::new()
            .name("herd-requests-log".into())
            .spawn(move || write(out, rx, &names))
            .map_err(err)?;
        Ok(Writer {
            path: path.to_owned(),
            log,
            thread,
        })
    }

    /// Where the run's workers send their lines.
    pub fn log(&self) -> Arc<RequestsLog> {
        Arc::clone(&self.log)
    }

    /// After the run (its workers gone): the last lines written and the file finished. What it
    /// holds, or why it could not be written.
    pub fn finish(self) -> Result<RequestsLogged, SinkError> {
        let lost = self.log.lost();
        // The thread ends when the last sender is gone: the workers' are, the run being over.
        drop(self.log);
        let written = match self.thread.join() {
            Ok(r) => r,
            Err(_) => Err(std::io::Error::other("the writer thread panicked")),
        };
        let lines = written.map_err(|e| SinkError::new(FLAG, &self.path, e))?;
        Ok(RequestsLogged {
            path: self.path.display().to_string(),
            lines,
            lost,
        })
    }
}

/// `--requests-log` as an output of a run: the writer starts when the run asks where its
/// requests go, ends when the engine is done, and says in the result what the file holds (lines
/// the writer could not keep up with are a warning, never a silent loss).
pub struct RequestsLogSink {
    path: PathBuf,
    writer: Option<Writer>,
    logged: Option<Result<RequestsLogged, SinkError>>,
}

impl RequestsLogSink {
    pub fn create(path: &Path) -> Self {
        RequestsLogSink {
            path: path.to_owned(),
            writer: None,
            logged: None,
        }
    }

    fn end(&mut self) {
        if let Some(w) = self.writer.take() {
            self.logged = Some(w.finish());
        }
    }
}

impl crate::Sink for RequestsLogSink {
    fn requests_log(
        &mut self,
        labels: &herd_run::Labels,
    ) -> Result<Option<Arc<RequestsLog>>, SinkError> {
        let writer = Writer::start(&self.path, labels.names.clone())?;
        let log = writer.log();
        self.writer = Some(writer);
        Ok(Some(log))
    }

    fn finished(&mut self) {
        self.end();
    }

    fn amend(&mut self, result: &mut herd_result::RunResult) -> Result<(), SinkError> {
        self.end();
        let Some(logged) = self.logged.take() else {
            return Ok(());
        };
        let logged = logged?;
        if logged.lost > 0 {
            result.warnings.push(format!(
                "--requests-log {}: {} of {} requests have no line: the writer fell behind the \
                 load (the totals count them all)",
                logged.path,
                logged.lost,
                logged.lost + logged.lines
            ));
        }
        result.requests_log = Some(logged);
        Ok(())
    }
}

impl Drop for RequestsLogSink {
    /// A run that failed still keeps the lines written so far.
    fn drop(&mut self) {
        self.end();
    }
}

/// The file and the text not yet in it.
struct Out {
    file: File,
    how: Encoding,
    text: Vec<u8>,
}

impl Out {
    /// The text waiting, in one write: a gzip member, or the plain lines.
    fn write(&mut self) -> std::io::Result<()> {
        if self.text.is_empty() {
            return Ok(());
        }
        match self.how {
            Encoding::Plain => self.file.write_all(&self.text)?,
            Encoding::Gzip => {
                let mut gz =
                    GzEncoder::new(Vec::with_capacity(self.text.len() / 4), Compression::fast());
                gz.write_all(&self.text)?;
                self.file.write_all(&gz.finish()?)?;
            }
        }
        self.text.clear();
        Ok(())
    }
}

/// The writer thread: batches in, lines out, until every sender is gone. The lines written.
fn write(mut out: Out, rx: Receiver<Vec<Line>>, names: &[String]) -> std::io::Result<u64> {
    let mut lines = 0u64;
    let mut due = Instant::now() + EVERY;
    loop {
        let gone = match rx.recv_timeout(due.saturating_duration_since(Instant::now())) {
            Ok(batch) => {
                for l in &batch {
                    line(&mut out.text, l, names);
                }
                lines += batch.len() as u64;
                false
            }
            Err(RecvTimeoutError::Timeout) => false,
            Err(RecvTimeoutError::Disconnected) => true,
        };
        let now = Instant::now();
        if gone || now >= due || out.text.len() >= CHUNK {
            // A failed write ends the thread: the workers then count what follows as lost.
            out.write()?;
            due = now + EVERY;
        }
        if gone {
            return Ok(lines);
        }
    }
}

/// One line of the log, appended to `text`. `names` is empty for a run of one URL (its
/// lines name nothing); a workload's names past herd's cap count as `other`, as in the result.
pub fn line(text: &mut Vec<u8>, l: &Line, names: &[String]) {
    let error = match l.result {
        Ok(Verdict::Ok) => "",
        // A response, judged failed: a status of 400 or more, or a failed check.
        Ok(Verdict::Failed) => "failed",
        Err(kind) => kind.key(),
    };
    let name = match names.get(l.name as usize) {
        Some(n) => n.as_str(),
        None if names.is_empty() => "",
        None => "other",
    };
    // itoa, not `write!`: the formatting machinery was half of the writer thread's
    // instructions per line (callgrind).
    let mut n = itoa::Buffer::new();
    let mut num = |text: &mut Vec<u8>, v: u64| text.extend_from_slice(n.format(v).as_bytes());
    num(text, l.intended_us);
    text.push(b',');
    if let Some(v) = l.sent_us {
        num(text, v);
    }
    text.push(b',');
    num(text, l.latency_us);
    text.push(b',');
    if let Some(v) = l.service_us {
        num(text, v);
    }
    text.push(b',');
    num(text, u64::from(l.status));
    text.push(b',');
    num(text, l.bytes_in);
    text.push(b',');
    num(text, l.bytes_out);
    text.push(b',');
    text.extend_from_slice(error.as_bytes());
    text.push(b',');
    text.extend_from_slice(quoted(name).as_bytes());
    text.push(b',');
    if let Some(c) = l.connection {
        num(text, c);
    }
    text.push(b'\n');
}

/// A CSV field: quoted when it holds a comma, a quote or a line break (RFC 4180).
fn quoted(field: &str) -> std::borrow::Cow<'_, str> {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\"")).into()
    } else {
        field.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use herd_engine::metrics::ErrorKind;
    use std::io::Read;

    fn sample(result: Result<Verdict, ErrorKind>, name: u32) -> Line {
        Line {
            intended_us: 1_000,
            sent_us: Some(1_250),
            latency_us: 900,
            service_us: Some(650),
            status: 200,
            bytes_in: 612,
            bytes_out: 40,
            result,
            name,
            connection: Some(3),
        }
    }

    fn text(l: &Line, names: &[String]) -> String {
        let mut t = Vec::new();
        line(&mut t, l, names);
        String::from_utf8(t).unwrap()
    }

    #[test]
    fn a_line_has_every_column_of_the_header() {
        let ok = text(&sample(Ok(Verdict::Ok), 0), &[]);
        assert_eq!(ok, "1000,1250,900,650,200,612,40,,,3\n");
        assert_eq!(ok.split(',').count(), HEADER.split(',').count());
        let names = vec!["cart, add".to_owned(), "say \"hi\"".to_owned()];
        let never_sent = Line {
            sent_us: None,
            service_us: None,
            status: 0,
            connection: None,
            ..sample(Err(ErrorKind::ConnectRefused), 0)
        };
        assert_eq!(
            text(&never_sent, &names),
            "1000,,900,,0,612,40,connect_refused,\"cart, add\",\n"
        );
        assert!(
            text(&sample(Ok(Verdict::Failed), 1), &names).contains(",failed,\"say \"\"hi\"\"\",")
        );
        assert!(text(&sample(Ok(Verdict::Ok), 7), &names).contains(",other,"));
    }

    #[test]
    fn the_name_picks_the_compression_and_refuses_what_herd_cannot_write() {
        assert_eq!(compression("r.csv.gz".as_ref()), Ok(Encoding::Gzip));
        assert_eq!(compression("r.csv".as_ref()), Ok(Encoding::Plain));
        let e = compression("r.csv.zst".as_ref()).unwrap_err();
        assert!(e.contains(".csv.gz"), "{e}");
    }

    #[test]
    fn a_gzip_log_of_no_request_still_reads_as_its_header() {
        let dir = std::env::temp_dir().join(format!("herd-reqlog-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("r.csv.gz");
        let w = Writer::start(&path, Vec::new()).unwrap();
        let logged = w.finish().unwrap();
        assert_eq!(logged.lines, 0);
        let mut s = String::new();
        flate2::read::MultiGzDecoder::new(File::open(&path).unwrap())
            .read_to_string(&mut s)
            .unwrap();
        assert_eq!(s, format!("{HEADER}\n"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
