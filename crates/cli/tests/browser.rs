//! The HTML reports in a real browser (Debian's Chromium, headless): they render with no
//! console errors, their scripts run, their charts are drawn, and they print to PDF.
//! `scripts/check` installs Chromium.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(60);

fn fixture(name: &str) -> String {
    format!(
        "{}/../report/tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn chromium() -> PathBuf {
    if let Some(p) = std::env::var_os("HERD_CHROMIUM") {
        return PathBuf::from(p);
    }
    for p in [
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
    ] {
        if Path::new(p).exists() {
            return PathBuf::from(p);
        }
    }
    panic!("Chromium is not installed: run `scripts/check` (it installs it) or `apt-get install -y chromium`");
}

/// Runs headless Chromium on `page` with `args`, bounded by [`TIMEOUT`].
fn browse(dir: &TempDir, page: &Path, args: &[&str]) -> Output {
    browse_at(dir, page, "", args)
}

/// As [`browse`], with `fragment` (e.g. `#hover=...`) appended to the page's URL.
fn browse_at(dir: &TempDir, page: &Path, fragment: &str, args: &[&str]) -> Output {
    let mut cmd = Command::new(chromium());
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--enable-logging=stderr",
        "--v=0",
    ])
    .arg(format!("--user-data-dir={}", dir.path("profile").display()))
    .args(args)
    .arg(format!("file://{}{fragment}", page.display()))
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("start chromium");
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let reader = std::thread::spawn(move || {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut out, &mut b).unwrap();
        b
    });
    let err_reader = std::thread::spawn(move || {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut err, &mut b).unwrap();
        b
    });
    let deadline = Instant::now() + TIMEOUT;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within {} s", TIMEOUT.as_secs());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: reader.join().unwrap(),
        stderr: err_reader.join().unwrap(),
    }
}

/// The page's console messages and uncaught exceptions, from Chromium's log.
fn console(log: &str) -> Vec<&str> {
    log.lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
        .collect()
}

fn report(dir: &TempDir, args: &[&str], name: &str) -> PathBuf {
    let page = dir.path(name);
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["-o", page.to_str().unwrap()]);
    let out = run_herd(&all);
    assert!(matches!(out.status.code(), Some(0 | 3)), "{}", stderr(&out));
    page
}

/// Loads the page, checks the console is quiet and the hover script armed every chart, and
/// returns the DOM as it stands after the scripts ran.
fn rendered_dom(dir: &TempDir, page: &Path, min_charts: usize) -> String {
    let out = browse(dir, page, &["--dump-dom"]);
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{log}");
    assert_eq!(console(&log), Vec::<&str>::new(), "console output");
    let dom = String::from_utf8_lossy(&out.stdout).into_owned();
    let charts = dom.matches("<figure class=\"chart\" id=").count();
    assert!(charts >= min_charts, "{charts} charts");
    assert!(
        dom.contains(&format!("data-charts-ready=\"{charts}\"")),
        "every chart armed by the script"
    );
    dom
}

#[test]
fn a_run_report_renders_without_console_errors() {
    let dir = TempDir::new("browser-run");
    let page = report(
        &dir,
        &["report", &fixture("run-closed-errors.json")],
        "run.html",
    );
    let dom = rendered_dom(&dir, &page, 4);
    // Charts have data: the latency lines have a point per second.
    let latency = dom.split("id=\"chart-latency\"").nth(1).unwrap();
    let path = latency.split(" d=\"").nth(1).unwrap();
    assert_eq!(
        path[..path.find('"').unwrap()].matches('L').count(),
        3,
        "4 seconds, 4 points"
    );
}

#[test]
fn hovering_a_chart_shows_its_values() {
    let dir = TempDir::new("browser-hover");
    let page = report(
        &dir,
        &["report", &fixture("run-closed-errors.json")],
        "run.html",
    );
    let out = browse_at(&dir, &page, "#hover=chart-latency:0.64", &["--dump-dom"]);
    let log = String::from_utf8_lossy(&out.stderr);
    assert_eq!(console(&log), Vec::<&str>::new(), "console output");
    let dom = String::from_utf8_lossy(&out.stdout);
    let chart = dom.split("id=\"chart-latency\"").nth(1).unwrap();
    let chart = &chart[..chart.find("</figure>").unwrap()];
    let tip = chart.split("<div class=\"tip\"").nth(1).unwrap();
    assert!(!tip.starts_with(" hidden"), "the hover box is shown: {tip}");
    // 0.64 of the width is t = 2.5 s on the 4 s axis: the third second, a value per percentile.
    assert!(tip.contains("2–3 s"), "{tip}");
    for name in ["p50", "p90", "p99", "max"] {
        assert!(
            tip.contains(&format!("<span>{name}</span>")),
            "{name}: {tip}"
        );
    }
    assert!(tip.matches(" ms</span>").count() == 4, "{tip}");
}

#[test]
fn a_comparison_renders_without_console_errors() {
    let dir = TempDir::new("browser-compare");
    let page = report(
        &dir,
        &[
            "compare",
            &fixture("run-open.json"),
            &fixture("run-open-slow.json"),
        ],
        "compare.html",
    );
    let dom = rendered_dom(&dir, &page, 3);
    assert!(dom.contains("REGRESSED"));
}

#[test]
fn a_screenshot_of_the_report_shows_its_charts() {
    let dir = TempDir::new("browser-shot");
    let page = report(
        &dir,
        &["report", &fixture("run-closed-errors.json")],
        "run.html",
    );
    let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("herd-report-run.png");
    let _ = std::fs::remove_file(&shot);
    let arg = format!("--screenshot={}", shot.display());
    let out = browse(
        &dir,
        &page,
        &[&arg, "--window-size=1280,2000", "--hide-scrollbars"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let decoder = png::Decoder::new(std::fs::File::open(&shot).expect("screenshot written"));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (1280, 2000));
    let step = info.color_type.samples();
    let pixels: Vec<&[u8]> = buf[..info.buffer_size()]
        .chunks(step)
        .map(|p| &p[..3])
        .collect();
    let mut colours: Vec<&[u8]> = pixels.clone();
    colours.sort();
    colours.dedup();
    assert!(colours.len() > 50, "not blank: {} colours", colours.len());
    // The 2xx bars (#009E73) and the p50 line (#0072B2) are on screen.
    for (name, rgb) in [
        ("2xx green", [0x00, 0x9E, 0x73]),
        ("p50 blue", [0x00, 0x72, 0xB2]),
    ] {
        let n = pixels.iter().filter(|p| **p == rgb).count();
        assert!(n > 500, "{name}: {n} pixels");
    }
    eprintln!("screenshot: {}", shot.display());
}

#[test]
fn pdf_is_printed_with_chromium() {
    let dir = TempDir::new("browser-pdf");
    let pdf = dir.path("report.pdf");
    let out = herd()
        .args([
            "report",
            &fixture("run-open.json"),
            "--format",
            "pdf",
            "-o",
            pdf.to_str().unwrap(),
        ])
        .env("HERD_CHROMIUM", chromium())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let bytes = std::fs::read(&pdf).unwrap();
    assert!(bytes.starts_with(b"%PDF-"), "a PDF");
    assert!(bytes.len() > 10_000, "{} bytes", bytes.len());
    // Without a browser, a clear message.
    let out = herd()
        .args([
            "report",
            &fixture("run-open.json"),
            "-o",
            dir.path("x.pdf").to_str().unwrap(),
        ])
        .env("PATH", "/nonexistent")
        .env_remove("HERD_CHROMIUM")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("needs Chromium or Chrome"),
        "{}",
        stderr(&out)
    );
}
