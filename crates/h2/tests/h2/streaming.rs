//! A server answering piece by piece: request parts as they arrive, a body written over time,
//! trailers at the end (what a gRPC server does).

use herd_h2::{ClientSession, Event, Part, Request, ServerSession, Settings};

fn shuttle(from: &mut Vec<u8>, send: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    from.clear();
    send(from);
    std::mem::take(from)
}

#[test]
fn a_response_written_in_pieces_ends_with_its_trailers() {
    let mut client = ClientSession::new(&Settings::default()).unwrap();
    let mut server = ServerSession::new(&Settings::default()).unwrap();
    server.stream_requests();
    let request = Request {
        method: b"POST",
        authority: b"mock.test",
        path: b"/pkg.Svc/Method",
        headers: &[(b"content-type", b"application/grpc")],
        body: b"ping",
        ..Request::default()
    };
    client.submit(&request, 3, true).unwrap();
    let mut buf = Vec::new();
    let wire = shuttle(&mut buf, |out| {
        client.send(out).unwrap();
    });
    server.recv(&wire).unwrap();
    let parts: Vec<Part> = server.parts().collect();
    assert!(
        server.events().events.next().is_none(),
        "no whole request event"
    );
    let Part::Head {
        stream_id, path, ..
    } = &parts[0]
    else {
        panic!("{parts:?}")
    };
    let stream_id = *stream_id;
    assert_eq!(&**path, b"/pkg.Svc/Method");
    assert_eq!(
        parts[1..],
        [
            Part::Data {
                stream_id,
                bytes: b"ping".to_vec()
            },
            Part::End { stream_id }
        ]
    );

    server
        .open(stream_id, 200, &[(b"content-type", b"application/grpc")])
        .unwrap();
    let mut round = |server: &mut ServerSession, client: &mut ClientSession| {
        let back = shuttle(&mut buf, |out| {
            server.send(out).unwrap();
        });
        client.recv(&back).unwrap();
        let got = client.events();
        let kept = got.kept.to_vec();
        let events: Vec<Event> = got.events.collect();
        (events, kept)
    };
    let (events, _) = round(&mut server, &mut client);
    assert!(events.contains(&Event::Status {
        exchange: 3,
        status: 200
    }));
    assert!(!events.iter().any(|e| matches!(e, Event::Closed { .. })));

    assert!(server.write(stream_id, b"one").unwrap());
    let (events, kept) = round(&mut server, &mut client);
    let data: Vec<&[u8]> = events
        .iter()
        .filter_map(|e| match e {
            Event::Data { kept: Some(r), .. } => Some(&kept[r.clone()]),
            _ => None,
        })
        .collect();
    assert_eq!(data, [b"one"], "a piece goes out as soon as it is written");

    server.write(stream_id, b"two").unwrap();
    server.finish(stream_id, &[(b"grpc-status", b"0")]).unwrap();
    let (events, kept) = round(&mut server, &mut client);
    let text = |r: &std::ops::Range<usize>| String::from_utf8_lossy(&kept[r.clone()]).into_owned();
    let seen: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::Data { kept: Some(r), .. } => Some(text(r)),
            Event::Header { name, value, .. } => Some(format!("{}={}", text(name), text(value))),
            Event::Closed { end, .. } => Some(format!("{end:?}")),
            _ => None,
        })
        .collect();
    assert_eq!(seen, ["two", "grpc-status=0", "Complete"]);
    assert!(
        !server.write(stream_id, b"late").unwrap(),
        "a closed stream takes nothing"
    );
}

/// RFC 8441: a server whose SETTINGS offer extended CONNECT takes `:protocol websocket` (its
/// head says so among the fields), and bytes flow both ways on the stream after its `200`; a
/// server that does not offer it is told apart before any CONNECT goes.
#[test]
fn an_extended_connect_carries_bytes_both_ways_where_the_server_offers_it() {
    let mut client = ClientSession::new(&Settings::default()).unwrap();
    let offering = Settings {
        connect_protocol: true,
        ..Settings::default()
    };
    let mut server = ServerSession::new(&offering).unwrap();
    server.stream_requests();
    let mut buf = Vec::new();
    let mut to_server = |client: &mut ClientSession, server: &mut ServerSession| {
        let wire = shuttle(&mut buf, |out| {
            client.send(out).unwrap();
        });
        server.recv(&wire).unwrap();
        let back = shuttle(&mut buf, |out| {
            server.send(out).unwrap();
        });
        client.recv(&back).unwrap();
    };
    assert!(!client.connect_protocol(), "not before the SETTINGS");
    to_server(&mut client, &mut server);
    assert!(client.settled() && client.connect_protocol());
    let request = Request {
        method: b"CONNECT",
        authority: b"mock.test",
        path: b"/chat",
        headers: &[(b"sec-websocket-version", b"13")],
        open: true,
        protocol: Some(b"websocket"),
        ..Request::default()
    };
    let id = client.submit(&request, 5, true).unwrap();
    to_server(&mut client, &mut server);
    let parts: Vec<Part> = server.parts().collect();
    let Some(Part::Head {
        stream_id,
        method,
        fields,
        ..
    }) = parts.first()
    else {
        panic!("{parts:?}")
    };
    let stream_id = *stream_id;
    assert_eq!(&**method, b"CONNECT");
    let fields = String::from_utf8_lossy(fields);
    assert!(fields.contains(":protocol: websocket\r\n"), "{fields}");
    server.open(stream_id, 200, &[]).unwrap();
    for round in 0..3 {
        assert!(client.write(id, b"ping", false).unwrap());
        to_server(&mut client, &mut server);
        let got: Vec<Part> = server.parts().collect();
        assert_eq!(
            got,
            [Part::Data {
                stream_id,
                bytes: b"ping".to_vec()
            }],
            "round {round}"
        );
        assert!(server.write(stream_id, b"pong").unwrap());
        to_server(&mut client, &mut server);
        let events = client.events();
        let kept = events.kept.to_vec();
        let data: Vec<Vec<u8>> = events
            .events
            .filter_map(|e| match e {
                Event::Data { kept: Some(r), .. } => Some(kept[r].to_vec()),
                _ => None,
            })
            .collect();
        assert_eq!(data, [b"pong".to_vec()], "round {round}");
    }
    assert!(client.sent(id) > 0, "the stream's frames are counted");

    // nghttp2's own server without the setting: the client learns so from its SETTINGS.
    let mut plain_client = ClientSession::new(&Settings::default()).unwrap();
    let mut plain = ServerSession::new(&Settings::default()).unwrap();
    to_server(&mut plain_client, &mut plain);
    assert!(plain_client.settled() && !plain_client.connect_protocol());
}
