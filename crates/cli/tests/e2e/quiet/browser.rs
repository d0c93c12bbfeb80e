//! The HTML reports in a real browser (Debian's Chromium, headless): runs, sweeps and capacity
//! searches render with no console errors, their scripts run, their charts are drawn and
//! hovered, screenshots show them, and they print to PDF. The screenshots are kept under the
//! target directory (`target/tmp/herd-report-*.png`) for people to look at.
//! `scripts/check` installs Chromium.

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(60);

pub fn chromium() -> PathBuf {
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
    browse_url(dir, &format!("file://{}{fragment}", page.display()), args)
}

/// Runs headless Chromium on `url` with `args`, bounded by [`TIMEOUT`].
pub fn browse_url(dir: &TempDir, url: &str, args: &[&str]) -> Output {
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
    .arg(url)
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
pub fn console(log: &str) -> Vec<&str> {
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
fn the_scenarios_table_shows_a_workload_runs_iterations_and_durations() {
    let dir = TempDir::new("browser-scenarios");
    let json = fixture("run-workload.json");
    let page = report(&dir, &["report", &json], "workload.html");
    let dom = rendered_dom(&dir, &page, 4);
    let section = dom
        .split("id=\"by_scenario\"")
        .nth(1)
        .expect("a Scenarios section");
    let table = &section[..section.find("</table>").unwrap()];
    let doc = read_json(Path::new(&json));
    let scenarios = doc["by_scenario"].as_array().unwrap();
    assert_eq!(
        table.matches("<tr>").count(),
        scenarios.len() + 1,
        "{table}"
    );
    for s in scenarios {
        let name = s["name"].as_str().unwrap();
        let row = table.split(&format!("<td>{name}</td>")).nth(1).expect(name);
        let row = &row[..row.find("</tr>").unwrap()];
        let cells: Vec<&str> = row
            .split("<td>")
            .skip(1)
            .map(|c| &c[..c.find("</td>").unwrap()])
            .collect();
        let d = &s["duration_ms"];
        let ms = |k: &str| herd_result::format::duration_ms(d[k].as_f64().unwrap());
        let want = vec![
            s["weight"].to_string(),
            s["iterations"].to_string(),
            ms("min"),
            ms("mean"),
            ms("p50"),
            ms("p95"),
            ms("p99"),
            ms("max"),
        ];
        assert_eq!(cells, want, "{name}");
        assert!(!row.contains("<td>-</td>"), "no dashes: {row}");
    }
}

/// A screenshot of `page`, `height` pixels of a 1280-pixel-wide window, kept under the target
/// directory as `name` for people to look at; returns its pixels (RGB).
fn screenshot(dir: &TempDir, page: &Path, name: &str, height: u32) -> Vec<[u8; 3]> {
    let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_file(&shot);
    let arg = format!("--screenshot={}", shot.display());
    let size = format!("--window-size=1280,{height}");
    let out = browse(dir, page, &[&arg, &size, "--hide-scrollbars"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let decoder = png::Decoder::new(std::fs::File::open(&shot).expect("screenshot written"));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (1280, height));
    let step = info.color_type.samples();
    let pixels: Vec<[u8; 3]> = buf[..info.buffer_size()]
        .chunks(step)
        .map(|p| [p[0], p[1], p[2]])
        .collect();
    let mut colours = pixels.clone();
    colours.sort();
    colours.dedup();
    assert!(colours.len() > 50, "not blank: {} colours", colours.len());
    eprintln!("screenshot: {}", shot.display());
    pixels
}

/// How many pixels are exactly `rgb`: a series drawn in that colour leaves hundreds.
fn count(pixels: &[[u8; 3]], rgb: [u8; 3]) -> usize {
    pixels.iter().filter(|p| **p == rgb).count()
}

const BLUE: [u8; 3] = [0x00, 0x72, 0xB2];
const ORANGE: [u8; 3] = [0xE6, 0x9F, 0x00];
const GREEN: [u8; 3] = [0x00, 0x9E, 0x73];
const RED: [u8; 3] = [0xD5, 0x5E, 0x00];

#[test]
fn a_screenshot_of_the_report_shows_its_charts() {
    let dir = TempDir::new("browser-shot");
    let page = report(
        &dir,
        &["report", &fixture("run-closed-errors.json")],
        "run.html",
    );
    let pixels = screenshot(&dir, &page, "herd-report-run.png", 2000);
    // The 2xx bars (#009E73) and the p50 line (#0072B2) are on screen.
    for (name, rgb) in [("2xx green", GREEN), ("p50 blue", BLUE)] {
        let n = count(&pixels, rgb);
        assert!(n > 500, "{name}: {n} pixels");
    }
}

#[test]
fn a_watched_run_draws_the_server_and_the_generator_in_the_browser() {
    let dir = TempDir::new("browser-watched");
    let page = report(&dir, &["report", &fixture("run-watched.json")], "run.html");
    let dom = rendered_dom(&dir, &page, 15);
    for id in [
        "chart-server-cpu",
        "chart-server-metric-1",
        "chart-generator-cpu",
    ] {
        assert!(dom.contains(&format!("id=\"{id}\"")), "{id}");
    }
    // Hovering the server's CPU at the middle of the run shows both processes' seconds.
    let out = browse_at(&dir, &page, "#hover=chart-server-cpu:0.5", &["--dump-dom"]);
    let dom = String::from_utf8_lossy(&out.stdout);
    let chart = dom.split("id=\"chart-server-cpu\"").nth(1).unwrap();
    let tip = chart.split("<div class=\"tip\"").nth(1).unwrap();
    let tip = &tip[..tip.find("</div></div>").unwrap_or(tip.len())];
    assert!(tip.contains("3–4 s"), "{tip}");
    assert!(
        tip.contains("pid 28882 CPU") && tip.contains("pid 28884 CPU"),
        "{tip}"
    );
    let pixels = screenshot(&dir, &page, "herd-report-watched.png", 5600);
    assert!(count(&pixels, ORANGE) > 500, "the worker's lines");
}

#[test]
fn a_sweep_report_draws_its_saturation_curves_in_the_browser() {
    let dir = TempDir::new("browser-sweep");
    let page = report(&dir, &["report", &fixture("sweep-open.json")], "sweep.html");
    let dom = rendered_dom(&dir, &page, 3);
    assert!(dom.contains("small: saturates between 200 and 300 req/s asked"));
    // 0.525 of the width is 300 req/s on the 0..600 axis: both targets' values there.
    let out = browse_at(
        &dir,
        &page,
        "#hover=chart-sweep-errors:0.525",
        &["--dump-dom"],
    );
    let log = String::from_utf8_lossy(&out.stderr);
    assert_eq!(console(&log), Vec::<&str>::new(), "console output");
    let dom = String::from_utf8_lossy(&out.stdout);
    let chart = dom.split("id=\"chart-sweep-errors\"").nth(1).unwrap();
    let tip = chart.split("<div class=\"tip\"").nth(1).unwrap();
    assert!(!tip.starts_with(" hidden"), "the hover box is shown: {tip}");
    assert!(tip.contains("300 req/s asked"), "{tip}");
    assert!(
        tip.contains("<span>small not ok</span><span class=\"v\">26.7%</span>"),
        "{tip}"
    );
    assert!(
        tip.contains("<span>big not ok</span><span class=\"v\">0%</span>"),
        "{tip}"
    );
    // One colour per target, both on screen.
    let pixels = screenshot(&dir, &page, "herd-report-sweep.png", 2400);
    for (name, rgb) in [("small: blue", BLUE), ("big: orange", ORANGE)] {
        let n = count(&pixels, rgb);
        assert!(n > 500, "{name}: {n} pixels");
    }
}

#[test]
fn a_capacity_report_draws_the_answer_and_the_search_in_the_browser() {
    let dir = TempDir::new("browser-capacity");
    let page = report(
        &dir,
        &["report", &fixture("capacity-open.json")],
        "capacity.html",
    );
    let dom = rendered_dom(&dir, &page, 4);
    assert!(dom.contains("CAPACITY: 400 req/s"));
    let pixels = screenshot(&dir, &page, "herd-report-capacity.png", 3000);
    // The curves (blue), the probes that held (green) and broke (red) in the search.
    for (name, rgb, least) in [
        ("curves", BLUE, 500),
        ("held", GREEN, 100),
        ("broke", RED, 100),
    ] {
        let n = count(&pixels, rgb);
        assert!(n > least, "{name}: {n} pixels");
    }
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
