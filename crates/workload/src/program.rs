//! The compiled workload: scenarios of steps with pre-split templates and, for static requests,
//! the bytes serialized once. Shared read-only by every thread; per-user state lives in
//! [`crate::script`].

use crate::cookie::Jar;
use crate::data::Source;
use crate::extract::{Extract, JsonPath};
use crate::grpc_call::GrpcSend;
use crate::hole::{Lookup, NotSent, Slot};
use crate::redirect::Redirect;
use crate::template::Template;

use crate::think::Think;
use herd_engine::Request;
use herd_http::{prepare, RequestSpec, Target};

#[derive(Debug)]
pub struct Program {
    pub target: Target,
    pub sources: Vec<Source>,
    pub scenarios: Vec<Scenario>,
    /// Cumulative weights, for picking a scenario with one draw.
    pub cumulative: Vec<u64>,
    /// Request names; a request's `name` indexes this table.
    pub names: Vec<String>,
    pub checks: Vec<String>,
    /// Number of distinct extracted variables (slots).
    pub variables: usize,
    pub cookies: bool,
    /// Users walk the scenarios in order instead of picking by weight (siege URL files).
    pub walk: bool,
    pub seed: u64,
    /// Steps without holes: each user caches them serialized with its cookies.
    pub static_steps: usize,
    /// `script:`: the Lua functions templates and checks call.
    pub lua: Option<crate::lua::LuaScript>,
    /// Its users open WebSockets beside their requests (`ws: { connect }` steps).
    pub sockets: bool,
}

impl Program {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        target: Target,
        sources: Vec<Source>,
        scenarios: Vec<Scenario>,
        names: Vec<String>,
        checks: Vec<String>,
        variables: usize,
        cookies: bool,
        walk: bool,
        seed: u64,
    ) -> Program {
        let mut scenarios = scenarios;
        let mut static_steps = 0;
        let mut sockets = false;
        for step in scenarios.iter_mut().flat_map(|s| s.steps.iter_mut()) {
            if let Step::Send(send) = step {
                sockets |= send.socket != herd_engine::SocketRole::None;
                if send.prebuilt.is_some() {
                    send.cache_slot = Some(static_steps);
                    static_steps += 1;
                }
            }
        }
        let cumulative = scenarios
            .iter()
            .scan(0, |acc, s| {
                *acc += s.weight;
                Some(*acc)
            })
            .collect();
        Program {
            target,
            sources,
            scenarios,
            cumulative,
            names,
            checks,
            variables,
            cookies,
            walk,
            seed,
            static_steps,
            lua: None,
            sockets,
        }
    }

    /// The scenario a draw in `0..total weight` falls on.
    pub fn scenario_at(&self, draw: u64) -> usize {
        self.cumulative.partition_point(|&c| c <= draw)
    }

    pub fn total_weight(&self) -> u64 {
        self.cumulative.last().copied().unwrap_or(0)
    }
}

#[derive(Debug)]
pub struct Scenario {
    pub name: String,
    pub weight: u64,
    pub steps: Vec<Step>,
    /// Data sources its steps use: drawn once at the start of each iteration.
    pub sources: Vec<usize>,
}

#[derive(Debug)]
pub enum Step {
    Send(Box<Send>),
    Think(Think),
}

/// One request step, ready to send.
#[derive(Debug)]
pub struct Send {
    pub name: u32,
    pub method: String,
    pub path: Template,
    pub headers: Vec<(String, Template)>,
    pub body: Template,
    /// Keep the response (cookies, extraction, body checks, redirects).
    pub keep: bool,
    /// Of what is kept only `Set-Cookie` is read (the cookie jar, nothing else).
    pub only_cookies: bool,
    /// `stream: llm`: an event-stream response is read as an LLM's tokens.
    pub llm: bool,
    /// Accepted statuses; empty means "below 400".
    pub status: Vec<u16>,
    pub status_check: Option<usize>,
    pub body_contains: Option<(String, usize)>,
    /// `check: { lua: NAME }`: (the script's function, the check).
    pub lua_check: Option<(usize, usize)>,
    /// `check: { json: { PATH: VALUE } }`: (the path, the value its first node must be, the
    /// check).
    pub json_checks: Vec<(JsonPath, String, usize)>,
    /// A `grpc:` step's call: its body is the request message as JSON until built.
    pub grpc: Option<Box<GrpcSend>>,
    /// (variable slot, how, check).
    pub extract: Vec<(usize, Extract, usize)>,
    pub follow: bool,
    /// The check that counts steps not sent because a variable was unset.
    pub sent_check: Option<usize>,
    /// For a step without holes: the spec and the request serialized once.
    pub prebuilt: Option<(RequestSpec, Request)>,
    /// For a step without holes: where each user keeps it serialized with its cookies.
    pub cache_slot: Option<usize>,
    /// A WebSocket message's: what its reply must hold, and the check that counts it.
    pub expect: Option<(crate::step::Expect, usize)>,
    /// A WebSocket message's: its socket closes after its reply (`ws: close`).
    pub close: bool,
    /// An http(s):// target's `ws:` step: the Upgrade opening the user's socket, or a
    /// message on it.
    pub socket: herd_engine::SocketRole,
}

/// A step's values with its rendered body, for `{{request.body}}` in its headers.
struct WithBody<'a, L> {
    vars: &'a L,
    body: &'a str,
}

impl<L: Lookup> Lookup for WithBody<'_, L> {
    fn value(&self, slot: Slot) -> Option<&str> {
        match slot {
            Slot::RequestBody => Some(self.body),
            other => self.vars.value(other),
        }
    }

    fn random(&self) -> u64 {
        self.vars.random()
    }

    fn lua(&self, index: usize, args: &[String]) -> Result<String, String> {
        self.vars.lua(index, args)
    }
}

impl Send {
    /// A WebSocket message of this step (`ws:`), its body as written: the socket frames its
    /// bytes.
    pub fn message(&self) -> Request {
        let mut req = Request::new(self.body.source().into_bytes());
        req.name = self.name;
        req.keep_response = self.keep;
        req.last = self.close;
        req.socket = self.socket;
        req
    }

    /// The spec of a step without holes.
    pub fn static_spec(&self) -> RequestSpec {
        let text = |t: &Template| t.source();
        RequestSpec {
            method: self.method.clone(),
            path: text(&self.path),
            headers: self
                .headers
                .iter()
                .map(|(n, v)| (n.clone(), text(v)))
                .collect(),
            body: text(&self.body).into_bytes(),
        }
    }

    /// Renders and serializes the request with the cookies of `jar` that go to its path.
    pub fn build(
        &self,
        target: &Target,
        vars: &impl Lookup,
        jar: Option<&Jar>,
        redirect: Option<&Redirect>,
    ) -> Result<Request, NotSent> {
        let mut spec = match &self.prebuilt {
            Some((spec, _)) => spec.clone(),
            None => {
                let render = |t: &Template| {
                    let mut s = String::new();
                    t.render(vars, &mut s).map(|()| s)
                };
                let body = render(&self.body)?;
                let vars = WithBody { vars, body: &body };
                let mut headers = Vec::with_capacity(self.headers.len());
                for (n, v) in &self.headers {
                    let mut s = String::new();
                    v.render(&vars, &mut s)?;
                    headers.push((n.clone(), s));
                }
                let body = match &self.grpc {
                    Some(g) => g.encode(body.as_bytes()).map_err(NotSent::Invalid)?,
                    None => body.into_bytes(),
                };
                RequestSpec {
                    method: self.method.clone(),
                    path: render(&self.path)?,
                    headers,
                    body,
                }
            }
        };
        if let Some(r) = redirect {
            spec.path.clone_from(&r.location);
            spec.method.clone_from(&r.method);
            if !r.keep_body {
                spec.body.clear();
                spec.headers
                    .retain(|(n, _)| !n.eq_ignore_ascii_case("content-type"));
            }
        }
        if self.method == crate::step::WS {
            let mut req = self.message();
            req.bytes = spec.body.into();
            return Ok(req);
        }
        if let Some(c) = jar.and_then(|j| j.header(target, &spec.path)) {
            spec.headers.push(("Cookie".to_owned(), c));
        }
        let mut req = prepare(target, &spec).map_err(|e| NotSent::Invalid(e.to_string()))?;
        req.name = self.name;
        req.keep_response = self.keep;
        req.keep_only_cookies = self.only_cookies;
        req.llm = self.llm;
        req.socket = self.socket;
        req.last = self.close;
        Ok(req)
    }
}
