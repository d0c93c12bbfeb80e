//! PDF output: the HTML report printed by a headless Chromium (its print stylesheet lays it
//! out for A4), when one is installed.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The longest a browser gets to print one report.
const TIMEOUT: Duration = Duration::from_secs(60);
const BROWSERS: [&str; 5] = [
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
    "chrome",
];

/// A Chromium to print with: `HERD_CHROMIUM`, else the first known name on `PATH`.
pub fn find_chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("HERD_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    BROWSERS.iter().find_map(|name| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    })
}

/// Why a PDF was not printed, said whole (what to install or where it failed).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct PdfError(String);

/// Prints `html` to a PDF at `out`.
pub fn print(html: &str, out: &Path) -> Result<(), PdfError> {
    let browser = find_chromium().ok_or_else(|| {
        PdfError(
            "--format pdf needs Chromium or Chrome (none found on PATH; set HERD_CHROMIUM to its \
             path, or install it: apt-get install chromium). Or write HTML (-o report.html) and \
             print it to PDF from any browser."
                .to_owned(),
        )
    })?;
    let work = scratch_dir()?;
    let result = print_in(&browser, html, out, &work);
    let _ = std::fs::remove_dir_all(&work);
    result
}

fn print_in(browser: &Path, html: &str, out: &Path, work: &Path) -> Result<(), PdfError> {
    let page = work.join("report.html");
    std::fs::write(&page, html)
        .map_err(|e| PdfError(format!("cannot write {}: {e}", page.display())))?;
    // Chromium resolves the output path against its own working directory.
    let out_abs = std::path::absolute(out).unwrap_or_else(|_| out.to_owned());
    let _ = std::fs::remove_file(&out_abs);
    let log = work.join("chromium.log");
    let mut cmd = Command::new(browser);
    cmd.args([
        "--headless",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-quic",
        "--no-pdf-header-footer",
    ])
    .arg(format!(
        "--user-data-dir={}",
        work.join("profile").display()
    ))
    .arg(format!("--print-to-pdf={}", out_abs.display()))
    .arg(format!("file://{}", page.display()));
    // Chromium refuses to run as root with its sandbox on (containers, CI).
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        cmd.arg("--no-sandbox");
    }
    let log_file = std::fs::File::create(&log)
        .map_err(|e| PdfError(format!("cannot write {}: {e}", log.display())))?;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log_file)
        .spawn()
        .map_err(|e| PdfError(format!("cannot start {}: {e}", browser.display())))?;
    let deadline = Instant::now() + TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(PdfError(format!(
                    "{} did not print the PDF within {} s",
                    browser.display(),
                    TIMEOUT.as_secs()
                )));
            }
        }
    };
    let printed = std::fs::metadata(&out_abs).is_ok_and(|m| m.len() > 0);
    if !status.success() || !printed {
        let said = std::fs::read_to_string(&log).unwrap_or_default();
        let tail: Vec<&str> = said.lines().rev().take(5).collect();
        return Err(PdfError(format!(
            "{} could not print {} ({status}): {}",
            browser.display(),
            out.display(),
            tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
        )));
    }
    Ok(())
}

fn scratch_dir() -> Result<PathBuf, PdfError> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let dir = std::env::temp_dir().join(format!("herd-pdf-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir)
        .map_err(|e| PdfError(format!("cannot create {}: {e}", dir.display())))?;
    Ok(dir)
}
