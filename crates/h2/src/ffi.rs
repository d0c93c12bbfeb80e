//! Every `unsafe` of herd's HTTP/2 sessions: the calls into nghttp2 and its callbacks into us
//! (the lone header-block inflater's are in `hpack.rs`).
//!
//! Why this is sound, once for the whole file:
//! - The session pointer comes from `nghttp2_session_{client,server}_new3`, is owned by one
//!   [`Raw`], used only through `&mut Raw`, and freed once, in `Drop`.
//! - `user_data` points at the `State` in `Raw::state`, a `Box`: its address holds when the
//!   `Raw` moves. nghttp2 calls back only from inside `mem_recv2`/`mem_send2`, which run under
//!   `&mut Raw`, so the callbacks' `&mut State` is the only live reference to it; `Raw` never
//!   touches `state` while one of those calls runs.
//! - Pointers and lengths nghttp2 hands to callbacks are valid for the callback's duration;
//!   they become slices that do not outlive it (anything kept is copied).
//! - Name/value pairs given to submit calls are copied by nghttp2 before it returns, so
//!   borrowed slices suffice; nghttp2 never writes through them. The one exception, a
//!   request's pseudo-header names (NO_COPY_NAME), are `'static`.
//! - nghttp2 allocates through `pool.rs`'s four functions (`nghttp2_mem`), which hand out
//!   and take back only blocks they made.
//! - The callbacks never unwind: the `State` methods they call do not panic, and a panic in an
//!   `extern "C"` function aborts rather than crossing into C.

use std::ffi::{c_int, c_void, CStr};
use std::ptr::{self, NonNull};

use libnghttp2_sys as sys;

use crate::pool;
use crate::state::{Read, State};
use crate::{H2Error, Settings};

pub(crate) struct Raw {
    session: NonNull<sys::nghttp2_session>,
    state: Box<State>,
    /// Reused for every submit: no allocation per request on our side.
    nva: Vec<sys::nghttp2_nv>,
}

// SAFETY: the session is owned by one `Raw` and touched only through `&mut Raw`; nghttp2 keeps
// no thread-local state, so moving the whole session to another thread is fine.
unsafe impl Send for Raw {}

/// An error nghttp2 returned, with its own message.
impl H2Error {
    pub(crate) fn lib(call: &'static str, code: i32) -> H2Error {
        H2Error::Nghttp2 {
            call,
            code,
            message: strerror(code),
        }
    }
}

pub(crate) fn strerror(code: i32) -> String {
    // SAFETY: nghttp2_strerror returns a static NUL-terminated string for any code.
    let message = unsafe { CStr::from_ptr(sys::nghttp2_strerror(code)) };
    message.to_string_lossy().into_owned()
}

fn check(call: &'static str, rv: c_int) -> Result<c_int, H2Error> {
    if rv < 0 {
        Err(H2Error::lib(call, rv))
    } else {
        Ok(rv)
    }
}

/// "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" (RFC 9113 section 3.4).
const PREFACE: u64 = 24;

impl Raw {
    pub(crate) fn new(server: bool, settings: &Settings) -> Result<Raw, H2Error> {
        let mut state = Box::new(State {
            server,
            // The client's connection preface goes out before any frame.
            unclaimed_out: if server { 0 } else { PREFACE },
            ..State::default()
        });
        let mut callbacks = ptr::null_mut();
        let mut session = ptr::null_mut();
        // SAFETY: see the file's note; every object made here is freed before returning, but
        // the session, which `Raw` owns from here on.
        let rv = unsafe {
            check(
                "callbacks_new",
                sys::nghttp2_session_callbacks_new(&mut callbacks),
            )?;
            sys::nghttp2_session_callbacks_set_on_begin_headers_callback(
                callbacks,
                Some(on_begin_headers),
            );
            sys::nghttp2_session_callbacks_set_on_header_callback(callbacks, Some(on_header));
            sys::nghttp2_session_callbacks_set_on_data_chunk_recv_callback(
                callbacks,
                Some(on_data),
            );
            sys::nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, Some(on_frame));
            sys::nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, Some(on_close));
            sys::nghttp2_session_callbacks_set_on_frame_send_callback(
                callbacks,
                Some(on_frame_send),
            );
            sys::nghttp2_session_callbacks_set_error_callback2(callbacks, Some(on_error));
            let user_data = (&mut *state as *mut State).cast::<c_void>();
            // nghttp2 copies `mem` before returning; its functions hold no state of their own.
            let mut mem = sys::nghttp2_mem {
                mem_user_data: ptr::null_mut(),
                malloc: Some(pool::mem::malloc),
                free: Some(pool::mem::free),
                calloc: Some(pool::mem::calloc),
                realloc: Some(pool::mem::realloc),
            };
            let rv = if server {
                sys::nghttp2_session_server_new3(
                    &mut session,
                    callbacks,
                    user_data,
                    ptr::null(),
                    &mut mem,
                )
            } else {
                // A client without nghttp2's HTTP messaging checks: validating every field of
                // every response (names, values, pseudo-headers) was a tenth of a response's
                // instructions on a static file's seven fields. The one check a count relies
                // on, the body's length against its content-length, is herd's own
                // (`StreamEnd::BadLength`).
                let mut option = ptr::null_mut();
                let rv = sys::nghttp2_option_new(&mut option);
                if rv == 0 {
                    sys::nghttp2_option_set_no_http_messaging(option, 1);
                    let rv = sys::nghttp2_session_client_new3(
                        &mut session,
                        callbacks,
                        user_data,
                        option,
                        &mut mem,
                    );
                    sys::nghttp2_option_del(option);
                    rv
                } else {
                    rv
                }
            };
            sys::nghttp2_session_callbacks_del(callbacks);
            rv
        };
        check("session_new", rv)?;
        let session = NonNull::new(session).ok_or_else(|| H2Error::lib("session_new", -901))?;
        let mut raw = Raw {
            session,
            state,
            nva: Vec::new(),
        };
        raw.configure(server, settings)?;
        Ok(raw)
    }

    fn configure(&mut self, server: bool, settings: &Settings) -> Result<(), H2Error> {
        let entry = |settings_id: u32, value: u32| sys::nghttp2_settings_entry {
            settings_id: settings_id as i32,
            value,
        };
        let mut iv = vec![
            entry(
                sys::NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS,
                settings.max_concurrent_streams,
            ),
            entry(
                sys::NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE,
                settings.stream_window.min(crate::MAX_WINDOW),
            ),
        ];
        if !server {
            iv.push(entry(sys::NGHTTP2_SETTINGS_ENABLE_PUSH, 0));
        }
        if server && settings.connect_protocol {
            iv.push(entry(sys::NGHTTP2_SETTINGS_ENABLE_CONNECT_PROTOCOL, 1));
        }
        let window = settings.connection_window.min(crate::MAX_WINDOW) as i32;
        // SAFETY: `iv` is read and copied before the call returns.
        unsafe {
            check(
                "submit_settings",
                sys::nghttp2_submit_settings(self.ptr(), 0, iv.as_ptr(), iv.len()),
            )?;
            check(
                "set_local_window_size",
                sys::nghttp2_session_set_local_window_size(self.ptr(), 0, 0, window),
            )?;
        }
        Ok(())
    }

    fn ptr(&self) -> *mut sys::nghttp2_session {
        self.session.as_ptr()
    }

    pub(crate) fn state(&mut self) -> &mut State {
        &mut self.state
    }

    pub(crate) fn state_ref(&self) -> &State {
        &self.state
    }

    /// Feeds the peer's bytes; the callbacks record what they meant in the state. Bytes that
    /// break the connection (nghttp2 answers them with GOAWAY and ends the session) are an
    /// error saying what was wrong.
    pub(crate) fn recv(&mut self, input: &[u8]) -> Result<(), H2Error> {
        self.state.complaint = None;
        // SAFETY: `input` is valid for the call; see the file's note for the callbacks.
        let rv = unsafe { sys::nghttp2_session_mem_recv2(self.ptr(), input.as_ptr(), input.len()) };
        if rv < 0 {
            return Err(H2Error::lib("mem_recv2", rv as i32));
        }
        if !self.alive() || !self.request_allowed() {
            if let Some(message) = self.state.complaint.take() {
                return Err(H2Error::Broken { message });
            }
        }
        Ok(())
    }

    /// Appends every frame nghttp2 has ready to `out`; returns how many bytes.
    pub(crate) fn send(&mut self, out: &mut Vec<u8>) -> Result<usize, H2Error> {
        let before = out.len();
        loop {
            let mut data = ptr::null();
            // SAFETY: on success `data` points at `rv` bytes nghttp2 owns until the next call
            // into the session; they are copied out before that.
            let rv = unsafe { sys::nghttp2_session_mem_send2(self.ptr(), &mut data) };
            if rv < 0 {
                return Err(H2Error::lib("mem_send2", rv as i32));
            }
            if rv == 0 {
                return Ok(out.len() - before);
            }
            // SAFETY: as above.
            out.extend_from_slice(unsafe { std::slice::from_raw_parts(data, rv as usize) });
        }
    }

    fn fill_nva<'a>(&mut self, fields: impl Iterator<Item = (&'a [u8], &'a [u8])>) {
        self.nva.clear();
        self.nva.extend(fields.map(|(name, value)| nv(name, value)));
    }

    /// Queues a request; the body, if any, is read from the stream's state when sent.
    /// `pseudo`'s names are herd's own (lowercase, `'static`): nghttp2 neither copies nor
    /// lowercases them (`NO_COPY_NAME`), the fields' names it does.
    pub(crate) fn submit_request<'a>(
        &mut self,
        pseudo: &[(&'static [u8], &'a [u8])],
        fields: impl Iterator<Item = (&'a [u8], &'a [u8])>,
        with_body: bool,
    ) -> Result<i32, H2Error> {
        self.nva.clear();
        self.nva
            .extend(pseudo.iter().map(|&(name, value)| sys::nghttp2_nv {
                flags: sys::NGHTTP2_NV_FLAG_NO_COPY_NAME as u8,
                ..nv(name, value)
            }));
        self.nva.extend(fields.map(|(name, value)| nv(name, value)));
        let provider = body_provider();
        let data = if with_body { &provider } else { ptr::null() };
        // SAFETY: `nva` points at slices alive for the call, which copies them.
        let rv = unsafe {
            sys::nghttp2_submit_request2(
                self.ptr(),
                ptr::null(),
                self.nva.as_ptr(),
                self.nva.len(),
                data,
                ptr::null_mut(),
            )
        };
        check("submit_request2", rv)
    }

    pub(crate) fn submit_response<'a>(
        &mut self,
        stream_id: i32,
        fields: impl Iterator<Item = (&'a [u8], &'a [u8])>,
        with_body: bool,
    ) -> Result<(), H2Error> {
        self.fill_nva(fields);
        let provider = body_provider();
        let data = if with_body { &provider } else { ptr::null() };
        // SAFETY: as for requests.
        let rv = unsafe {
            sys::nghttp2_submit_response2(
                self.ptr(),
                stream_id,
                self.nva.as_ptr(),
                self.nva.len(),
                data,
            )
        };
        check("submit_response2", rv).map(drop)
    }

    /// Puts a stream whose body provider said "nothing yet" back in nghttp2's queue.
    pub(crate) fn resume(&mut self, stream_id: i32) -> Result<(), H2Error> {
        // SAFETY: plain values.
        let rv = unsafe { sys::nghttp2_session_resume_data(self.ptr(), stream_id) };
        check("session_resume_data", rv).map(drop)
    }

    pub(crate) fn submit_rst(&mut self, stream_id: i32, code: u32) -> Result<(), H2Error> {
        // SAFETY: plain values.
        let rv = unsafe { sys::nghttp2_submit_rst_stream(self.ptr(), 0, stream_id, code) };
        check("submit_rst_stream", rv).map(drop)
    }

    pub(crate) fn submit_goaway(&mut self, last: i32, code: u32) -> Result<(), H2Error> {
        // SAFETY: plain values; no opaque data.
        let rv = unsafe { sys::nghttp2_submit_goaway(self.ptr(), 0, last, code, ptr::null(), 0) };
        check("submit_goaway", rv).map(drop)
    }

    /// Ends the connection with GOAWAY(code): the peer broke the protocol in a way only herd
    /// saw (its header blocks are decoded before nghttp2 reads them).
    pub(crate) fn terminate_session(&mut self, code: u32) {
        // SAFETY: plain values. Failing, it can only mean the session is over already.
        unsafe { sys::nghttp2_session_terminate_session(self.ptr(), code) };
    }

    /// Whether the peer's SETTINGS offer RFC 8441's extended CONNECT
    /// (SETTINGS_ENABLE_CONNECT_PROTOCOL = 1): a WebSocket on a stream.
    pub(crate) fn remote_connect_protocol(&self) -> bool {
        // SAFETY: a read of the session's settings.
        unsafe {
            sys::nghttp2_session_get_remote_settings(
                self.ptr(),
                sys::NGHTTP2_SETTINGS_ENABLE_CONNECT_PROTOCOL,
            ) == 1
        }
    }

    /// SETTINGS_MAX_CONCURRENT_STREAMS the peer allows (100 until its SETTINGS say).
    pub(crate) fn remote_max_streams(&self) -> u32 {
        // SAFETY: a read of the session's settings.
        unsafe {
            sys::nghttp2_session_get_remote_settings(
                self.ptr(),
                sys::NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS,
            )
        }
    }

    /// False once the peer's GOAWAY (or the session's end) rules out new streams.
    pub(crate) fn request_allowed(&self) -> bool {
        // SAFETY: a read of the session's state.
        unsafe { sys::nghttp2_session_check_request_allowed(self.ptr()) != 0 }
    }

    /// Whether the session still wants to read or write; neither means it is over.
    pub(crate) fn alive(&self) -> bool {
        // SAFETY: reads of the session's state.
        unsafe {
            sys::nghttp2_session_want_read(self.ptr()) != 0
                || sys::nghttp2_session_want_write(self.ptr()) != 0
        }
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        // SAFETY: the session is freed once; `state` outlives it (dropped after this).
        unsafe { sys::nghttp2_session_del(self.ptr()) }
    }
}

fn body_provider() -> sys::nghttp2_data_provider2 {
    sys::nghttp2_data_provider2 {
        source: sys::nghttp2_data_source {
            ptr: ptr::null_mut(),
        },
        read_callback: Some(read_body),
    }
}

/// The session's `State` from a callback's `user_data`.
///
/// # Safety
/// `user_data` must be the pointer `Raw::new` registered, called back from within a session
/// call made through `&mut Raw` (the file's note).
unsafe fn state<'a>(user_data: *mut c_void) -> &'a mut State {
    &mut *user_data.cast::<State>()
}

/// # Safety
/// A pointer and length from nghttp2, valid for the callback.
unsafe fn bytes<'a>(data: *const u8, len: usize) -> &'a [u8] {
    if len == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(data, len)
    }
}

unsafe extern "C" fn on_begin_headers(
    _session: *mut sys::nghttp2_session,
    frame: *const sys::nghttp2_frame,
    user_data: *mut c_void,
) -> c_int {
    let frame = &*frame;
    if frame.hd.type_ == sys::NGHTTP2_HEADERS as u8
        && frame.headers.cat == sys::NGHTTP2_HCAT_REQUEST
    {
        state(user_data).begin_request(frame.hd.stream_id);
    }
    0
}

#[allow(clippy::too_many_arguments)] // nghttp2's signature
unsafe extern "C" fn on_header(
    _session: *mut sys::nghttp2_session,
    frame: *const sys::nghttp2_frame,
    name: *const u8,
    namelen: usize,
    value: *const u8,
    valuelen: usize,
    _flags: u8,
    user_data: *mut c_void,
) -> c_int {
    let stream_id = (*frame).hd.stream_id;
    state(user_data).header(stream_id, bytes(name, namelen), bytes(value, valuelen));
    0
}

unsafe extern "C" fn on_data(
    _session: *mut sys::nghttp2_session,
    _flags: u8,
    stream_id: i32,
    data: *const u8,
    len: usize,
    user_data: *mut c_void,
) -> c_int {
    state(user_data).data(stream_id, bytes(data, len));
    0
}

unsafe extern "C" fn on_frame(
    _session: *mut sys::nghttp2_session,
    frame: *const sys::nghttp2_frame,
    user_data: *mut c_void,
) -> c_int {
    let frame = &*frame;
    let state = state(user_data);
    let kind = u32::from(frame.hd.type_);
    if kind == sys::NGHTTP2_SETTINGS {
        state.settled = true;
    }
    if kind == sys::NGHTTP2_HEADERS && frame.headers.cat == sys::NGHTTP2_HCAT_REQUEST {
        state.request_head(frame.hd.stream_id);
    }
    if kind == sys::NGHTTP2_GOAWAY {
        state.goaway(frame.goaway.last_stream_id, frame.goaway.error_code);
    } else if (kind == sys::NGHTTP2_HEADERS || kind == sys::NGHTTP2_DATA)
        && frame.hd.flags & sys::NGHTTP2_FLAG_END_STREAM as u8 != 0
    {
        state.end_of_request(frame.hd.stream_id);
    }
    0
}

unsafe extern "C" fn on_frame_send(
    _session: *mut sys::nghttp2_session,
    frame: *const sys::nghttp2_frame,
    user_data: *mut c_void,
) -> c_int {
    let hd = &(*frame).hd;
    state(user_data).frame_sent(hd.stream_id, hd.length as u64 + FRAME_HEADER);
    0
}

/// Every HTTP/2 frame's header: length, type, flags, stream id (RFC 9113 section 4.1).
const FRAME_HEADER: u64 = 9;

unsafe extern "C" fn on_close(
    _session: *mut sys::nghttp2_session,
    stream_id: i32,
    error_code: u32,
    user_data: *mut c_void,
) -> c_int {
    state(user_data).closed(stream_id, error_code);
    0
}

unsafe extern "C" fn on_error(
    _session: *mut sys::nghttp2_session,
    _code: c_int,
    message: *const std::ffi::c_char,
    len: usize,
    user_data: *mut c_void,
) -> c_int {
    let message = String::from_utf8_lossy(bytes(message.cast(), len)).into_owned();
    state(user_data).complaint = Some(message);
    0
}

unsafe extern "C" fn read_body(
    session: *mut sys::nghttp2_session,
    stream_id: i32,
    buf: *mut u8,
    length: usize,
    data_flags: *mut u32,
    _source: *mut sys::nghttp2_data_source,
    user_data: *mut c_void,
) -> sys::nghttp2_ssize {
    let buf = if length == 0 {
        &mut []
    } else {
        std::slice::from_raw_parts_mut(buf, length)
    };
    match state(user_data).read_body(stream_id, buf) {
        Read::Bytes { n, end } => {
            if end {
                *data_flags |= sys::NGHTTP2_DATA_FLAG_EOF;
            }
            n as sys::nghttp2_ssize
        }
        Read::Defer => sys::NGHTTP2_ERR_DEFERRED as sys::nghttp2_ssize,
        Read::Trailers { n, fields } => {
            *data_flags |= sys::NGHTTP2_DATA_FLAG_EOF;
            if !fields.is_empty() {
                // The trailers' HEADERS frame carries END_STREAM instead of this DATA frame.
                *data_flags |= sys::NGHTTP2_DATA_FLAG_NO_END_STREAM;
                let nva: Vec<sys::nghttp2_nv> = fields.iter().map(|(n, v)| nv(n, v)).collect();
                // nghttp2 allows this call inside the callback and copies `nva` before it returns.
                sys::nghttp2_submit_trailer(session, stream_id, nva.as_ptr(), nva.len());
            }
            n as sys::nghttp2_ssize
        }
    }
}

fn nv(name: &[u8], value: &[u8]) -> sys::nghttp2_nv {
    sys::nghttp2_nv {
        name: name.as_ptr().cast_mut(),
        value: value.as_ptr().cast_mut(),
        namelen: name.len(),
        valuelen: value.len(),
        flags: sys::NGHTTP2_NV_FLAG_NONE as u8,
    }
}
