//! Stopping the run from the page (`--dashboard-control`): the same as Ctrl-C, so the summary
//! and the files keep what was measured. Only the page's own button may do it: a stop carries
//! the `X-Herd-Control: stop` header, which a form or a script of another site cannot send
//! without asking first (a CORS preflight herd never grants). On an address others can reach,
//! it also carries the token herd printed with the dashboard's address.

use std::sync::Arc;

/// Who may stop the run from the page.
#[derive(Clone)]
pub struct Stopper {
    pub control: Arc<herd_engine::Control>,
    /// Required on an address others can reach.
    pub token: Option<String>,
}

/// The answer to `POST /stop`: its status line and text.
pub fn stop(
    stopper: Option<&Stopper>,
    query: &str,
    bearer: Option<&str>,
    from_page: bool,
) -> (&'static str, String) {
    let refused = "403 Forbidden";
    let Some(stopper) = stopper else {
        return (
            refused,
            "this dashboard cannot stop the run: start herd with --dashboard-control\n".into(),
        );
    };
    if !from_page {
        return (
            refused,
            "a stop comes from the dashboard's button (a POST with the header \
             X-Herd-Control: stop)\n"
                .into(),
        );
    }
    if let Some(token) = &stopper.token {
        let given = bearer.or_else(|| query.split('&').find_map(|kv| kv.strip_prefix("token=")));
        if !given.is_some_and(|g| same(g.as_bytes(), token.as_bytes())) {
            return (
                refused,
                "the dashboard listens beyond this machine: a stop needs the token herd printed \
                 (open the address it printed, with ?token=...)\n"
                    .into(),
            );
        }
    }
    stopper.control.cancel();
    (
        "202 Accepted",
        "stopping: the run ends as on Ctrl-C, its summary and files keep what was measured\n"
            .into(),
    )
}

/// Compares in time independent of where the first difference is.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

/// 128 random bits from the kernel, in hex.
pub fn new_token() -> std::io::Result<String> {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_stop_needs_control_the_page_and_on_an_open_address_the_token() {
        let control = Arc::new(herd_engine::Control::new());
        let open = Stopper {
            control: Arc::clone(&control),
            token: Some("s3cret".into()),
        };
        assert!(stop(None, "", None, true).1.contains("--dashboard-control"));
        assert!(stop(Some(&open), "token=s3cret", None, false)
            .0
            .starts_with("403"));
        assert!(stop(Some(&open), "", None, true).1.contains("token"));
        assert!(stop(Some(&open), "token=s3cre", None, true)
            .0
            .starts_with("403"));
        assert!(!control.is_cancelled());
        assert!(stop(Some(&open), "a=1&token=s3cret", None, true)
            .0
            .starts_with("202"));
        assert!(control.is_cancelled());
        let by_header = Stopper {
            control: Arc::new(herd_engine::Control::new()),
            token: Some("t".into()),
        };
        assert!(stop(Some(&by_header), "", Some("t"), true)
            .0
            .starts_with("202"));
        assert_eq!(new_token().unwrap().len(), 32);
    }
}
