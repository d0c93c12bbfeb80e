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
