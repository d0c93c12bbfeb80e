//! `herd plot`: bench2graph's job (autobench's TSV), herd's own sweep JSON, and a run's JSON.

use crate::common::*;

const AUTOBENCH_TSV: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../result/tests/fixtures/autobench_seed001.tsv"
);

/// Decodes a PNG and returns (width, height, share of pixels that are not near-white).
fn inspect_png(path: &std::path::Path) -> (u32, u32, f64) {
    let file = std::fs::File::open(path).unwrap();
    let mut reader = png::Decoder::new(std::io::BufReader::new(file))
        .read_info()
        .unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let px = &buf[..info.buffer_size()];
    let channels = info.color_type.samples();
    let inked = px
        .chunks(channels)
        .filter(|p| p[..3].iter().any(|&c| c < 200))
        .count();
    (
        info.width,
        info.height,
        inked as f64 / (px.len() / channels) as f64,
    )
}

#[test]
fn plot_draws_autobenchs_tsv_like_bench2graph_did() {
    let dir = TempDir::new("plot-autobench");
    let out_png = dir.path("sweep.png");
    let out = run_herd(&["plot", AUTOBENCH_TSV, "-o", out_png.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (w, h, inked) = inspect_png(&out_png);
    assert_eq!((w, h), (1000, 1200));
    assert!((0.01..0.5).contains(&inked), "{inked}");
}

#[test]
fn plot_draws_a_sweep_json_and_a_run_json() {
    let server = mock(&[]);
    let url = format!("http://{}/", server.local_addr());
    let dir = TempDir::new("plot-json");
    let (sweep, run) = (dir.path("sweep.json"), dir.path("run.json"));
    let out = run_herd(&[
        "sweep",
        "--target",
        &format!("first={url}"),
        "--target",
        &format!("second={url}"),
        "--rates",
        "20,40",
        "--step-duration",
        "500ms",
        "--cooldown",
        "0s",
        "-t",
        "1",
        "--json",
        sweep.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let svg = dir.path("sweep.svg");
    let out = run_herd(&["plot", sweep.to_str().unwrap(), "-o", svg.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = std::fs::read_to_string(&svg).unwrap();
    for want in [
        "demanded rate (req/s)",
        "first replies/s",
        "second replies/s",
        "Response time",
    ] {
        assert!(text.contains(want), "the SVG lacks {want:?}");
    }

    let out = run_herd(&[
        "run",
        "--rate",
        "200",
        "-d",
        "2s",
        "-t",
        "1",
        "-q",
        "--json",
        run.to_str().unwrap(),
        &url,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let png = dir.path("latency.png");
    let out = run_herd(&["plot", run.to_str().unwrap(), "-o", png.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (_, _, inked) = inspect_png(&png);
    assert!((0.01..0.5).contains(&inked), "{inked}");
    let svg = dir.path("latency.svg");
    let out = run_herd(&["plot", run.to_str().unwrap(), "-o", svg.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = std::fs::read_to_string(&svg).unwrap();
    for want in [
        "Throughput",
        "Latency over time",
        "Latency by percentile",
        "99%",
    ] {
        assert!(text.contains(want), "the SVG lacks {want:?}");
    }
    server.shutdown();
}

#[test]
fn plot_refuses_what_it_cannot_draw() {
    let dir = TempDir::new("plot-bad");
    let junk = dir.path("junk.tsv");
    std::fs::write(&junk, "hello world\n1 2\n").unwrap();
    let other = dir.path("other.json");
    std::fs::write(&other, r#"{"requests": 3}"#).unwrap();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec![
                "plot".into(),
                AUTOBENCH_TSV.into(),
                "-o".into(),
                "x.gif".into(),
            ],
            ".png or .svg",
        ),
        (
            vec![
                "plot".into(),
                junk.display().to_string(),
                "-o".into(),
                "x.png".into(),
            ],
            "not an autobench or herd sweep table",
        ),
        (
            vec![
                "plot".into(),
                other.display().to_string(),
                "-o".into(),
                "x.png".into(),
            ],
            // The words `herd report` uses for the same file (tests/reading.rs).
            "is not a herd result: it has no `herd_version` key",
        ),
        (
            vec![
                "plot".into(),
                "/nonexistent.tsv".into(),
                "-o".into(),
                "x.png".into(),
            ],
            "cannot read /nonexistent.tsv",
        ),
    ];
    for (args, want) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        refused(&args, want);
    }
}
