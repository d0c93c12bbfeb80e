//! `--body-file`: a regular file of at most [`MAX_BODY`] bytes, read once, straight into the
//! request's own bytes (`herd_http::prepare_with`), so a 60 MB body costs 60 MB, not a copy per
//! stage of its preparation.

use herd_engine::Request;
use herd_http::{HttpError, RequestSpec, Target};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The largest request body herd sends: it is held in memory (one copy, shared by every
/// connection), so a device or a huge file must not fill the machine before the first request.
pub const MAX_BODY: u64 = 64 << 20;

/// A body file opened and checked, not read yet.
pub(crate) struct BodyFile {
    path: PathBuf,
    file: File,
    len: usize,
}

impl BodyFile {
    /// Opens `path` and checks it is a regular file of at most [`MAX_BODY`] bytes. A FIFO is
    /// opened without waiting for a writer (which would block forever, Ctrl-C unheard) and
    /// refused; `/dev/zero` would be read forever and is refused as well.
    pub(crate) fn open(path: &Path) -> Result<BodyFile, String> {
        use std::os::unix::fs::OpenOptionsExt;
        let cannot =
            |e: std::io::Error| format!("cannot read the body file {}: {e}", path.display());
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
            .map_err(cannot)?;
        let meta = file.metadata().map_err(cannot)?;
        if !meta.is_file() {
            return Err(format!(
                "--body-file {} is not a regular file (a device, pipe or directory): give a file whose content is the body",
                path.display()
            ));
        }
        if meta.len() > MAX_BODY {
            return Err(format!(
                "--body-file {} is {} bytes; herd sends a body of at most {MAX_BODY} bytes (64 MiB), held once in memory: send a smaller file",
                path.display(),
                meta.len()
            ));
        }
        Ok(BodyFile {
            path: path.to_owned(),
            file,
            len: meta.len() as usize,
        })
    }

    /// The request `spec` describes with this file's content as its body (a file that grew
    /// since it was opened sends its first bytes, as many as it had then).
    pub(crate) fn prepare(
        mut self,
        target: &Target,
        spec: &RequestSpec,
    ) -> Result<Request, HttpError> {
        let path = self.path.display().to_string();
        herd_http::prepare_with(target, spec, self.len, |into| {
            self.file
                .read_exact(into)
                .map_err(|source| HttpError::BodyFile { path, source })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_is_refused_without_waiting_for_a_writer() {
        let dir = std::env::temp_dir().join(format!("herd-body-fifo-{}", std::process::id()));
        let _ = std::fs::remove_file(&dir);
        let c = std::ffi::CString::new(dir.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let err = BodyFile::open(&dir).err().expect("a FIFO is refused");
        std::fs::remove_file(&dir).unwrap();
        assert!(err.contains("is not a regular file"), "{err}");
    }

    #[test]
    fn a_file_is_read_into_the_request_once() {
        let path = std::env::temp_dir().join(format!("herd-body-{}", std::process::id()));
        std::fs::write(&path, b"hello").unwrap();
        let body = BodyFile::open(&path).unwrap();
        assert_eq!(body.len, 5);
        let target = Target::parse("http://127.0.0.1:9/").unwrap();
        let spec = RequestSpec {
            method: "POST".into(),
            ..RequestSpec::default()
        };
        let req = body.prepare(&target, &spec).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(req.bytes.ends_with(b"Content-Length: 5\r\n\r\nhello"));
        let parts = req.parts.unwrap();
        assert_eq!(&*parts.body, b"hello");
        // The parts' body is the tail of the bytes sent, not a copy.
        assert_eq!(
            parts.body.as_ptr(),
            req.bytes[req.bytes.len() - 5..].as_ptr()
        );
    }
}
