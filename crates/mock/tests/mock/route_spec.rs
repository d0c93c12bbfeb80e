//! The `--route` mini-language as a table: specs that parse (and print back to themselves)
//! and specs that fail with a message naming the bad part and what is allowed.

use std::time::Duration;

use herd_mock::{Auth, Events, Fault, Latency, Route};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn good_specs() {
    let r = Route::new;
    let table: Vec<(&str, Route)> = vec![
        ("/", r("/")),
        ("/*", r("/*")),
        (
            "/slow latency=lognormal:200ms:0.5 size=10kb status=200",
            Route {
                latency: Latency::LogNormal {
                    median: ms(200),
                    sigma: 0.5,
                },
                size: 10_000,
                ..r("/slow")
            },
        ),
        (
            "/flaky error-rate=0.1 fault=reset",
            Route {
                error_rate: 0.1,
                fault: Some(Fault::Reset),
                ..r("/flaky")
            },
        ),
        (
            "/api/* method=post latency=uniform:10ms:50ms size=512",
            Route {
                method: Some("POST".into()),
                latency: Latency::Uniform {
                    min: ms(10),
                    max: ms(50),
                },
                size: 512,
                ..r("/api/*")
            },
        ),
        (
            "/ latency=normal:100ms:20ms header=X-Mock:yes",
            Route {
                latency: Latency::Normal {
                    mean: ms(100),
                    stddev: ms(20),
                },
                headers: vec![("X-Mock".into(), "yes".into())],
                ..r("/")
            },
        ),
        (
            "/down fault=close",
            Route {
                error_rate: 1.0,
                fault: Some(Fault::Close),
                ..r("/down")
            },
        ),
        (
            "/e error-rate=25%",
            Route {
                error_rate: 0.25,
                ..r("/e")
            },
        ),
        (
            "/f latency=1.8s",
            Route {
                latency: Latency::Fixed(ms(1800)),
                ..r("/f")
            },
        ),
        (
            "/f latency=fixed:5ms",
            Route {
                latency: Latency::Fixed(ms(5)),
                ..r("/f")
            },
        ),
        (
            "/x latency=exp:100ms",
            Route {
                latency: Latency::Exponential { mean: ms(100) },
                ..r("/x")
            },
        ),
        (
            "/x latency=none size=0 status=204",
            Route {
                size: 0,
                status: 204,
                ..r("/x")
            },
        ),
        (
            "/big size=2mib",
            Route {
                size: 2 << 20,
                ..r("/big")
            },
        ),
        (
            "/e   echo  ",
            Route {
                echo: true,
                ..r("/e")
            },
        ),
        (
            "/api/* auth=hmac:s3cr=t",
            Route {
                auth: Some(Auth::Hs256Jwt {
                    key: "s3cr=t".into(),
                }),
                ..r("/api/*")
            },
        ),
        (
            "/c header=Set-Cookie:sid=abc;Path=/ header=X-Empty:",
            Route {
                headers: vec![
                    ("Set-Cookie".into(), "sid=abc;Path=/".into()),
                    ("X-Empty".into(), "".into()),
                ],
                ..r("/c")
            },
        ),
        (
            "/v1/chat/completions sse=llm ttft=lognormal:300ms:0.5 itl=20ms tokens=200",
            Route {
                events: Some(Events {
                    llm: true,
                    first: Latency::LogNormal {
                        median: ms(300),
                        sigma: 0.5,
                    },
                    gap: Latency::Fixed(ms(20)),
                    count: 200,
                    slots: None,
                }),
                ..r("/v1/chat/completions")
            },
        ),
        (
            "/v1/chat/completions sse=llm ttft=100ms itl=10ms tokens=5 slots=4",
            Route {
                events: Some(Events {
                    llm: true,
                    first: Latency::Fixed(ms(100)),
                    gap: Latency::Fixed(ms(10)),
                    count: 5,
                    slots: Some(4),
                }),
                ..r("/v1/chat/completions")
            },
        ),
        (
            "/events sse",
            Route {
                events: Some(Events::new(false)),
                ..r("/events")
            },
        ),
        (
            "/herd.echo.Echo/* grpc latency=10ms grpc-status=unavailable,5 error-rate=1%",
            Route {
                grpc: true,
                grpc_status: vec![14, 5],
                error_rate: 0.01,
                latency: Latency::Fixed(ms(10)),
                ..r("/herd.echo.Echo/*")
            },
        ),
        (
            "/* grpc grpc-status=all",
            Route {
                grpc: true,
                grpc_status: (1..=16).collect(),
                error_rate: 1.0,
                ..r("/*")
            },
        ),
        (
            "/helloworld.Greeter/SayHello grpc fault=garbage error-rate=0.5",
            Route {
                grpc: true,
                fault: Some(Fault::Garbage),
                error_rate: 0.5,
                ..r("/helloworld.Greeter/SayHello")
            },
        ),
    ];
    for (spec, want) in table {
        let got = Route::parse(spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
        assert_eq!(got, want, "{spec}");
        let again = Route::parse(&got.to_string()).unwrap_or_else(|e| panic!("{got}: {e}"));
        assert_eq!(
            again, got,
            "display of '{spec}' reads back as the same route"
        );
    }
}

#[test]
fn bad_specs_name_the_bad_part_and_what_is_allowed() {
    let table = [
        ("", "empty route spec"),
        ("   ", "empty route spec"),
        ("latency=5ms", "starts with its path"),
        ("api", "must start with '/'"),
        ("/a*b", "only have '*' at the end"),
        ("/x ttft=200ms", "add sse or sse=llm"),
        ("/x sse=chat", "write sse (events) or sse=llm"),
        ("/x sse tokens=0", "whole number from 1"),
        (
            "/x sse slots=0",
            "slots '0' is not a count; write a whole number from 1",
        ),
        ("/x slots=4", "add sse or sse=llm"),
        ("/x sse itl=soon", "itl 'soon'"),
        (
            "/x foo=1",
            "unknown option 'foo' in 'foo=1'; allowed: method, latency",
        ),
        ("/x slow", "'slow' is not an option; write key=value"),
        ("/x size=", "'size=' has no value"),
        ("/x size=10kb size=1", "'size' is given twice"),
        (
            "/x size=10qb",
            "unknown unit 'qb'; allowed: b, kb, kib, mb, mib",
        ),
        ("/x size=lots", "size 'lots'"),
        ("/x size=100mib", "above the 64 MiB limit"),
        (
            "/x status=abc",
            "status 'abc' is not a number; allowed: 200..599",
        ),
        ("/x status=700", "status 700 is outside 200..=599"),
        ("/x status=101", "status 101 is outside 200..=599"),
        ("/x error-rate=2", "error rate 2 is outside 0..=1"),
        (
            "/x error-rate=half",
            "error-rate 'half' is not a share; write e.g. 0.1 or 10%",
        ),
        (
            "/x fault=explode",
            "unknown fault 'explode'; allowed: reset, close, stall, garbage, truncate",
        ),
        ("/x latency=200", "latency '200': '200' has no unit"),
        ("/x latency=5d", "allowed: ns, us, ms, s, m, h"),
        (
            "/x latency=gamma:1s",
            "unknown distribution 'gamma'; allowed: none, 50ms",
        ),
        (
            "/x latency=uniform:10ms",
            "uniform takes 2 argument(s): uniform:MIN:MAX",
        ),
        (
            "/x latency=uniform:50ms:10ms",
            "uniform min 50ms is above max 10ms",
        ),
        (
            "/x latency=lognormal:200ms:wide",
            "sigma 'wide' is not a number",
        ),
        ("/x latency=exp:0ms", "exponential mean must be above zero"),
        ("/x header=NoColon", "header 'NoColon' needs NAME:VALUE"),
        ("/x header=Bad Name:v", "header 'Bad' needs NAME:VALUE"),
        (
            "/x header=X-A:two words",
            "'words' is not an option; write key=value",
        ),
        ("/x header=Content-Length:5", "set by the server"),
        ("/x method=GE(T", "not an HTTP method name"),
        ("/x echo=yes", "echo takes no value"),
        ("/x grpc=yes", "grpc takes no value"),
        (
            "/x grpc-status=5",
            "grpc-status is for gRPC routes: add grpc",
        ),
        (
            "/x grpc grpc-status=teapot",
            "grpc-status 'teapot' is not a gRPC status",
        ),
        (
            "/x grpc grpc-status=17",
            "grpc-status '17' is not a gRPC status",
        ),
        ("/x grpc echo", "echo, sse and auth are for HTTP routes"),
    ];
    for (spec, want) in table {
        match Route::parse(spec) {
            Ok(r) => panic!("'{spec}' should fail, parsed as {r:?}"),
            Err(e) => {
                let msg = e.to_string();
                assert!(
                    msg.contains(want),
                    "'{spec}': got '{msg}', want it to contain '{want}'"
                );
            }
        }
    }
}
