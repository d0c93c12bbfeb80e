//! Server reflection (`grpc.reflection.v1alpha.ServerReflection`), asked once before the run
//! when neither `--proto` nor `--protoset` is given: the files declaring the call's service,
//! over one HTTP/2 connection of herd's own session (h2c, or TLS with ALPN h2: rustls over the
//! blocking socket), blocking, with a deadline.

use crate::frame::{self, Decoder};
use herd_h2::{ClientSession, Event, Request, Settings};
use prost::bytes::Buf;
use prost::encoding::{decode_key, decode_varint, encode_varint, WireType};
use prost_reflect::DescriptorPool;
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, StreamOwned};
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, Instant};

const PATH: &[u8] = b"/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo";

/// The types of `service` as the server at `addr` (`host:port`, plaintext) describes them,
/// the well-known types beside them.
pub fn pool(
    addr: &str,
    service: &str,
    wait: Duration,
    tls: Option<Arc<ClientConfig>>,
) -> Result<DescriptorPool, String> {
    let files = ask(addr, service, wait, tls).map_err(|e| {
        format!(
            "server reflection at {addr}: {e}; give the call's types with --proto FILE or \
             --protoset FILE"
        )
    })?;
    // A FileDescriptorSet is its files, each as field 1.
    let mut set = Vec::new();
    for f in &files {
        encode_varint(0x0a, &mut set);
        encode_varint(f.len() as u64, &mut set);
        set.extend_from_slice(f);
    }
    let mut pool = DescriptorPool::global();
    pool.decode_file_descriptor_set(set.as_slice())
        .map_err(|e| format!("server reflection at {addr}: its files do not build: {e}"))?;
    Ok(pool)
}

/// The connection reflection is asked over.
enum Conn {
    Plain(TcpStream),
    Tls(Box<StreamOwned<ClientConnection, TcpStream>>),
}

impl Conn {
    fn open(addr: &str, wait: Duration, tls: Option<Arc<ClientConfig>>) -> Result<Conn, String> {
        let to = addr
            .to_socket_addrs()
            .map_err(|e| format!("cannot resolve: {e}"))?
            .next()
            .ok_or("no address")?;
        let tcp = TcpStream::connect_timeout(&to, wait).map_err(|e| e.to_string())?;
        let _ = tcp.set_nodelay(true);
        // The TLS handshake reads inside the first write: it waits no longer than the rest.
        tcp.set_read_timeout(Some(wait))
            .map_err(|e| e.to_string())?;
        let Some(config) = tls else {
            return Ok(Conn::Plain(tcp));
        };
        let host = addr.rsplit_once(':').map_or(addr, |(h, _)| h);
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let name = ServerName::try_from(host.to_owned())
            .map_err(|e| format!("{host} is no name for TLS: {e}"))?;
        let tls = ClientConnection::new(config, name).map_err(|e| e.to_string())?;
        Ok(Conn::Tls(Box::new(StreamOwned::new(tls, tcp))))
    }

    fn tcp(&self) -> &TcpStream {
        match self {
            Conn::Plain(t) => t,
            Conn::Tls(s) => &s.sock,
        }
    }
}

impl Read for Conn {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Conn::Plain(t) => t.read(buf),
            Conn::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Conn {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Conn::Plain(t) => t.write(buf),
            Conn::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Conn::Plain(t) => t.flush(),
            Conn::Tls(s) => s.flush(),
        }
    }
}

/// The files (serialized FileDescriptorProtos) the server sends for `symbol`.
fn ask(
    addr: &str,
    symbol: &str,
    wait: Duration,
    tls: Option<Arc<ClientConfig>>,
) -> Result<Vec<Vec<u8>>, String> {
    let deadline = Instant::now() + wait;
    let mut conn = Conn::open(addr, wait, tls)?;
    let mut session = ClientSession::new(&Settings::default()).map_err(|e| e.to_string())?;
    // ServerReflectionRequest { file_containing_symbol (4): symbol }
    let mut message = vec![0x22];
    encode_varint(symbol.len() as u64, &mut message);
    message.extend_from_slice(symbol.as_bytes());
    let body = frame::encode(&message);
    let headers: [(&[u8], &[u8]); 2] =
        [(b"content-type", b"application/grpc"), (b"te", b"trailers")];
    let request = Request {
        method: b"POST",
        authority: addr.as_bytes(),
        path: PATH,
        headers: &headers,
        body: &body,
        ..Request::default()
    };
    session
        .submit(&request, 0, true)
        .map_err(|e| e.to_string())?;
    let (mut reply, mut status) = (Vec::new(), None::<String>);
    let (mut out, mut buf) = (Vec::new(), vec![0u8; 64 << 10]);
    loop {
        out.clear();
        session.send(&mut out).map_err(|e| e.to_string())?;
        conn.write_all(&out).map_err(|e| e.to_string())?;
        conn.flush().map_err(|e| e.to_string())?;
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(format!("no answer within {wait:?}"));
        }
        conn.tcp()
            .set_read_timeout(Some(left))
            .map_err(|e| e.to_string())?;
        let n = conn.read(&mut buf).map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("the server closed the connection".into());
        }
        session.recv(&buf[..n]).map_err(|e| e.to_string())?;
        let events = session.events();
        let kept = events.kept;
        for event in events.events {
            match event {
                Event::Header { name, value, .. } if &kept[name.clone()] == b"grpc-status" => {
                    status = Some(String::from_utf8_lossy(&kept[value]).into_owned());
                }
                Event::Data {
                    kept: Some(range), ..
                } => reply.extend_from_slice(&kept[range]),
                Event::Closed { .. } => return files(&reply, status.as_deref()),
                _ => {}
            }
        }
    }
}

/// The files in the reply's messages, or what the server said was wrong.
fn files(reply: &[u8], status: Option<&str>) -> Result<Vec<Vec<u8>>, String> {
    if status != Some("0") {
        return Err(format!(
            "it answered grpc-status {} (is reflection served?)",
            status.unwrap_or("none")
        ));
    }
    let (mut files, mut said) = (Vec::new(), None);
    let mut decoder = Decoder::default();
    decoder
        .feed(reply, |m| {
            if let Err(e) = response(m, &mut files, &mut said) {
                said.get_or_insert(e);
            }
        })
        .and_then(|()| decoder.finish())
        .map_err(|e| e.to_string())?;
    match said {
        Some(e) => Err(e),
        None if files.is_empty() => Err("it sent no file".into()),
        None => Ok(files),
    }
}

/// A ServerReflectionResponse: its `file_descriptor_response` (4) files (1), or its
/// `error_response` (7) message (2).
fn response(
    mut m: &[u8],
    files: &mut Vec<Vec<u8>>,
    said: &mut Option<String>,
) -> Result<(), String> {
    let bad = |e: prost::DecodeError| format!("its reply does not decode: {e}");
    while m.has_remaining() {
        let (tag, wire) = decode_key(&mut m).map_err(bad)?;
        let field = match wire {
            WireType::LengthDelimited => {
                let len = decode_varint(&mut m).map_err(bad)? as usize;
                if len > m.len() {
                    return Err("its reply is cut".into());
                }
                let (field, rest) = m.split_at(len);
                m = rest;
                field
            }
            WireType::Varint => {
                decode_varint(&mut m).map_err(bad)?;
                continue;
            }
            _ => return Err("its reply does not decode".into()),
        };
        match tag {
            4 => files.extend(inner(field, 1)?),
            7 => {
                let text = inner(field, 2)?.into_iter().next().unwrap_or_default();
                *said = Some(format!("it said: {}", String::from_utf8_lossy(&text)));
            }
            _ => {}
        }
    }
    Ok(())
}

/// The length-delimited fields numbered `want` of a message.
fn inner(mut m: &[u8], want: u32) -> Result<Vec<Vec<u8>>, String> {
    let bad = |e: prost::DecodeError| format!("its reply does not decode: {e}");
    let mut got = Vec::new();
    while m.has_remaining() {
        let (tag, wire) = decode_key(&mut m).map_err(bad)?;
        match wire {
            WireType::LengthDelimited => {
                let len = decode_varint(&mut m).map_err(bad)? as usize;
                if len > m.len() {
                    return Err("its reply is cut".into());
                }
                if tag == want {
                    got.push(m[..len].to_vec());
                }
                m = &m[len..];
            }
            WireType::Varint => {
                decode_varint(&mut m).map_err(bad)?;
            }
            _ => return Err("its reply does not decode".into()),
        }
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn len_field(tag: u8, bytes: &[u8]) -> Vec<u8> {
        let mut out = vec![tag];
        encode_varint(bytes.len() as u64, &mut out);
        out.extend_from_slice(bytes);
        out
    }

    #[test]
    fn a_reply_gives_its_files_or_what_went_wrong() {
        // file_descriptor_response (4) { file_descriptor_proto (1): two files }
        let inner = [len_field(0x0a, b"one"), len_field(0x0a, b"two")].concat();
        let reply = frame::encode(&[vec![0x08, 1], len_field(0x22, &inner)].concat());
        let got = files(&reply, Some("0")).unwrap();
        assert_eq!(got, [b"one".to_vec(), b"two".to_vec()]);
        // error_response (7) { error_code (1): 5, error_message (2): "not found" }
        let error = [vec![0x08, 5], len_field(0x12, b"not found")].concat();
        let reply = frame::encode(&len_field(0x3a, &error));
        assert_eq!(files(&reply, Some("0")).unwrap_err(), "it said: not found");
        let e = files(&[], Some("12")).unwrap_err();
        assert!(e.contains("grpc-status 12"), "{e}");
        assert_eq!(files(&[], Some("0")).unwrap_err(), "it sent no file");
        let cut = frame::encode(&[0x22, 9, 1]);
        assert!(files(&cut, Some("0")).unwrap_err().contains("cut"));
    }
}
