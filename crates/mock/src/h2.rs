//! HTTP/2 connections: the same routes, latencies and faults as HTTP/1.1, on nghttp2's server
//! session (herd-h2), plus what only HTTP/2 has: GOAWAY after N requests (`goaway-after`),
//! streams refused (`fault=refuse`) and a stream limit (`max-streams`).
//!
//! Streams of one connection are answered independently: a delayed answer waits on the
//! worker's timer while later streams go by, and a stalled stream holds only itself.

use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;

use herd_h2::{Event, Part, ServerSession, Settings};
use rand::Rng;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

use crate::auth::authorized;
use crate::counters::bump;
use crate::grpc::{self, Action, Call, Step};
use crate::h2_ws::{Echo, Sockets};
use crate::response::{Failure, Lookup, Prepared, GARBAGE};
use crate::route::Fault;
use crate::worker::{Socket, Worker};

/// What an HTTP/2 client sends first (RFC 9113 section 3.4).
pub(crate) const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// SETTINGS_MAX_CONCURRENT_STREAMS unless a route's `max-streams` says less: room for herd's
/// and h2load's widest windows.
const DEFAULT_MAX_STREAMS: u32 = 10_000;

const READ_BUF: usize = 16 << 10;

/// RFC 9113 section 7.
const INTERNAL_ERROR: u32 = 0x2;
const REFUSED_STREAM: u32 = 0x7;

/// An answer decided when its request arrived, sent when its delay is over.
struct Due {
    stream_id: i32,
    route: usize,
    failed: bool,
    /// For echo routes: the request as text.
    echo: Option<Vec<u8>>,
}

/// What the worker's timer hands back to a connection.
enum Wake {
    Http(Due),
    /// A gRPC call's next steps are due.
    Grpc(i32, Vec<Action>),
    /// A WebSocket's message is due back.
    Ws(Echo),
}

/// A request whose body is still coming.
struct Pending {
    method: Box<[u8]>,
    path: Box<[u8]>,
    fields: Box<[u8]>,
    body: Vec<u8>,
}

/// A gRPC call in progress.
struct Live {
    call: Call,
    started: tokio::time::Instant,
    /// Its response headers are submitted.
    opened: bool,
}

struct H2Conn {
    session: ServerSession,
    pending: HashMap<i32, Pending>,
    calls: HashMap<i32, Live>,
    /// WebSockets on streams (RFC 8441).
    ws: Sockets,
    out: Vec<u8>,
    /// Requests answered per route, for `goaway-after`.
    served: Vec<u32>,
    goaway_sent: bool,
    /// A fault ended the connection: flush and close.
    closing: bool,
}

pub(crate) async fn serve<S: Socket>(mut stream: S, mut buf: Vec<u8>, w: Rc<Worker>) {
    let settings = Settings {
        max_concurrent_streams: w.table.max_streams.unwrap_or(DEFAULT_MAX_STREAMS),
        // WebSockets over HTTP/2 for the `ws` routes (h2_ws.rs).
        connect_protocol: true,
        ..Settings::default()
    };
    let Ok(mut session) = ServerSession::new(&settings) else {
        return;
    };
    // gRPC answers a stream before the client is done with it.
    session.stream_requests();
    let mut conn = H2Conn {
        session,
        pending: HashMap::new(),
        calls: HashMap::new(),
        ws: Sockets::default(),
        out: Vec::with_capacity(READ_BUF),
        served: vec![0; w.table.routes()],
        goaway_sent: false,
        closing: false,
    };
    let (tx, mut rx) = mpsc::unbounded_channel::<Wake>();
    let mut broken = conn.session.recv(&buf).is_err();
    buf.resize(READ_BUF.max(buf.len()), 0);
    loop {
        conn.take_requests(&w, &tx);
        if conn.flush(&mut stream).await.is_err() {
            return;
        }
        if broken || conn.closing || !conn.session.alive() {
            break;
        }
        tokio::select! {
            read = stream.read(&mut buf) => match read {
                Ok(0) | Err(_) => return,
                Ok(n) => broken = conn.session.recv(&buf[..n]).is_err(),
            },
            Some(wake) = rx.recv() => match wake {
                Wake::Http(due) => conn.answer(&w, due),
                Wake::Grpc(stream_id, actions) => conn.act(stream_id, actions),
                Wake::Ws(echo) => conn.ws.answer(&mut conn.session, &w, echo),
            },
        }
    }
    // nghttp2 has said GOAWAY (or a fault closes): let the client read it before the FIN.
    let _ = stream.shutdown().await;
}

impl H2Conn {
    fn take_requests(&mut self, w: &Rc<Worker>, tx: &mpsc::UnboundedSender<Wake>) {
        let parts: Vec<Part> = self.session.parts().collect();
        for part in parts {
            match part {
                Part::Head {
                    stream_id,
                    method,
                    path,
                    fields,
                } => {
                    let head = (&method[..], &path[..], &fields[..]);
                    if self.ws.begin(&mut self.session, w, stream_id, head) {
                        continue;
                    }
                    if grpc::is_grpc(&fields) {
                        bump(&w.counters.requests);
                        self.grpc_begin(w, tx, stream_id, &path, &fields);
                    } else {
                        let body = Vec::new();
                        let request = Pending {
                            method,
                            path,
                            fields,
                            body,
                        };
                        self.pending.insert(stream_id, request);
                    }
                }
                Part::Data { stream_id, bytes } => {
                    if self.ws.owns(stream_id) {
                        let echoes = self.ws.data(&mut self.session, w, stream_id, &bytes);
                        for e in echoes {
                            self.echo(w, tx, e);
                        }
                    } else if let Some(live) = self.calls.get_mut(&stream_id) {
                        let steps = live.call.data(&bytes, live.started.elapsed());
                        self.carry_out(w, tx, stream_id, steps);
                    } else if let Some(request) = self.pending.get_mut(&stream_id) {
                        let room = herd_h2::KEPT_BODY.saturating_sub(request.body.len());
                        request
                            .body
                            .extend_from_slice(&bytes[..room.min(bytes.len())]);
                    }
                }
                Part::End { stream_id } => {
                    if self.ws.owns(stream_id) {
                        self.ws.end(&mut self.session, stream_id);
                    } else if let Some(live) = self.calls.get_mut(&stream_id) {
                        let steps = live.call.end(live.started.elapsed());
                        self.carry_out(w, tx, stream_id, steps);
                    } else if let Some(r) = self.pending.remove(&stream_id) {
                        bump(&w.counters.requests);
                        self.request(w, tx, stream_id, &r.method, &r.path, &r.fields, &r.body);
                    }
                }
            }
        }
        let closed: Vec<i32> = self
            .session
            .events()
            .events
            .filter_map(|e| match e {
                Event::Closed { stream_id, .. } => Some(stream_id),
                _ => None,
            })
            .collect();
        for stream_id in closed {
            self.ws.closed(stream_id);
            self.calls.remove(&stream_id);
            self.pending.remove(&stream_id);
        }
    }

    /// A WebSocket's message goes back when its latency is over.
    fn echo(&mut self, w: &Rc<Worker>, tx: &mpsc::UnboundedSender<Wake>, e: Echo) {
        if e.delay.is_zero() {
            return self.ws.answer(&mut self.session, w, e);
        }
        let (w, tx) = (Rc::clone(w), tx.clone());
        tokio::task::spawn_local(async move {
            w.delays.sleep(e.delay).await;
            let _ = tx.send(Wake::Ws(e));
        });
    }

    fn grpc_begin(
        &mut self,
        w: &Rc<Worker>,
        tx: &mpsc::UnboundedSender<Wake>,
        stream_id: i32,
        path: &[u8],
        fields: &[u8],
    ) {
        let path = String::from_utf8_lossy(path);
        let (call, failing) = match grpc::begin(w, &path, fields) {
            Ok(begun) => begun,
            Err((code, message)) => {
                self.calls.insert(stream_id, self.live(Call::refused()));
                let steps = vec![Step {
                    after: Duration::ZERO,
                    action: Action::Finish(code, message),
                }];
                return self.carry_out(w, tx, stream_id, steps);
            }
        };
        if failing {
            bump(&w.counters.injected);
        }
        let mut live = self.live(call);
        let steps = live.call.begin(Duration::ZERO);
        self.calls.insert(stream_id, live);
        self.carry_out(w, tx, stream_id, steps);
    }

    fn live(&self, call: Call) -> Live {
        Live {
            call,
            started: tokio::time::Instant::now(),
            opened: false,
        }
    }

    /// Does what is due now, and hands the rest to the timer, in order.
    fn carry_out(
        &mut self,
        w: &Rc<Worker>,
        tx: &mpsc::UnboundedSender<Wake>,
        stream_id: i32,
        steps: Vec<Step>,
    ) {
        let (now, later) = grpc::due_now(steps);
        self.act(stream_id, now);
        if later.is_empty() {
            return;
        }
        let (w, tx) = (Rc::clone(w), tx.clone());
        tokio::task::spawn_local(async move {
            let start = tokio::time::Instant::now();
            for step in later {
                let wait =
                    (start + step.after).saturating_duration_since(tokio::time::Instant::now());
                if !wait.is_zero() {
                    w.delays.sleep(wait).await;
                }
                // The connection may be gone; then so is the call.
                if tx.send(Wake::Grpc(stream_id, vec![step.action])).is_err() {
                    return;
                }
            }
        });
    }

    fn act(&mut self, stream_id: i32, actions: Vec<Action>) {
        for action in actions {
            let Some(live) = self.calls.get_mut(&stream_id) else {
                return;
            };
            let grpc_type: [(&[u8], &[u8]); 1] = [(b"content-type", b"application/grpc")];
            if !live.opened && !matches!(action, Action::Fault(_)) {
                live.opened = self.session.open(stream_id, 200, &grpc_type).is_ok();
            }
            match action {
                Action::Message(message) => {
                    let mut framed = Vec::with_capacity(message.len() + 5);
                    grpc::encode(&message, &mut framed);
                    let _ = self.session.write(stream_id, &framed);
                }
                Action::Finish(code, message) => {
                    let (code, message) = grpc::trailers(code, &message);
                    let mut fields: Vec<(&[u8], &[u8])> = vec![(b"grpc-status", code.as_bytes())];
                    if !message.is_empty() {
                        fields.push((b"grpc-message", message.as_bytes()));
                    }
                    let _ = self.session.finish(stream_id, &fields);
                    self.calls.remove(&stream_id);
                }
                Action::Fault(fault) => {
                    self.fault(fault, stream_id);
                    self.calls.remove(&stream_id);
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)] // one request's parts, taken apart once
    fn request(
        &mut self,
        w: &Rc<Worker>,
        tx: &mpsc::UnboundedSender<Wake>,
        stream_id: i32,
        method: &[u8],
        path: &[u8],
        fields: &[u8],
        body: &[u8],
    ) {
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        let table = &w.table;
        let route = match table.lookup(&text(method), &text(path)) {
            Lookup::Found(route) => route,
            Lookup::NotFound => return self.respond(stream_id, &table.not_found),
            Lookup::MethodNotAllowed => return self.respond(stream_id, &table.method_not_allowed),
        };
        let authorization = fields
            .split(|b| *b == b'\n')
            .find_map(|line| line.strip_prefix(b"authorization: "))
            .map(|v| v.strip_suffix(b"\r").unwrap_or(v));
        if !authorized(route, authorization) {
            return self.respond(stream_id, &route.unauthorized);
        }
        let (failed, delay) = {
            let mut rng = w.rng.borrow_mut();
            let failed = route.error_rate > 0.0 && rng.gen_bool(route.error_rate);
            (failed, route.delay.sample(&mut *rng))
        };
        let echo = route.echo.then(|| {
            let mut echo = Vec::with_capacity(fields.len() + body.len() + 64);
            for part in [method, b" ", path, b" HTTP/2\r\n", fields, b"\r\n", body] {
                echo.extend_from_slice(part);
            }
            echo
        });
        let due = Due {
            stream_id,
            route: route.index,
            failed,
            echo,
        };
        if delay.is_zero() {
            return self.answer(w, due);
        }
        let (w, tx) = (Rc::clone(w), tx.clone());
        tokio::task::spawn_local(async move {
            w.delays.sleep(delay).await;
            // The connection may be gone; then so is the answer.
            let _ = tx.send(Wake::Http(due));
        });
    }

    fn answer(&mut self, w: &Worker, due: Due) {
        let route = w.table.route(due.route);
        if due.failed {
            bump(&w.counters.injected);
            match &route.failure {
                Failure::Status(prepared) => self.respond(due.stream_id, prepared),
                Failure::Fault(fault) => self.fault(*fault, due.stream_id),
            }
        } else if let Some(echo) = &due.echo {
            let fields = pairs(&route.ok);
            let _ = self
                .session
                .respond(due.stream_id, route.status, &fields, echo);
        } else {
            self.respond(due.stream_id, &route.ok);
        }
        self.served[due.route] += 1;
        if route
            .goaway_after
            .is_some_and(|n| self.served[due.route] >= n)
            && !self.goaway_sent
        {
            // As nginx after keepalive_requests: streams above this one go unprocessed.
            self.goaway_sent = self.session.goaway(due.stream_id, 0).is_ok();
        }
    }

    fn respond(&mut self, stream_id: i32, prepared: &Prepared) {
        let fields = pairs(prepared);
        let _ = self
            .session
            .respond(stream_id, prepared.status, &fields, prepared.body());
    }

    /// A fault on HTTP/2 hits the stream where it can (reset, refuse, truncate, stall) and the
    /// connection where it cannot (close, garbage).
    fn fault(&mut self, fault: Fault, stream_id: i32) {
        let _ = match fault {
            Fault::Reset | Fault::Truncate => self.session.reset(stream_id, INTERNAL_ERROR),
            Fault::Refuse => self.session.reset(stream_id, REFUSED_STREAM),
            Fault::Stall => Ok(()),
            Fault::Close => {
                self.closing = true;
                self.session.goaway(stream_id, INTERNAL_ERROR)
            }
            Fault::Garbage => {
                self.closing = true;
                self.out.extend_from_slice(GARBAGE);
                Ok(())
            }
        };
    }

    async fn flush<S: Socket>(&mut self, stream: &mut S) -> std::io::Result<()> {
        if !self.closing || self.out.is_empty() {
            // Garbage goes out alone: nothing nghttp2 says may make it parse.
            let _ = self.session.send(&mut self.out);
        }
        if !self.out.is_empty() {
            stream.write_all(&self.out).await?;
            self.out.clear();
        }
        Ok(())
    }
}

fn pairs(prepared: &Prepared) -> Vec<(&[u8], &[u8])> {
    prepared
        .fields
        .iter()
        .map(|(n, v)| (&n[..], &v[..]))
        .collect()
}
