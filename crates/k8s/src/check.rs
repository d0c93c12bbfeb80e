//! What the API server would refuse, refused here first: `kubectl apply` of a Job with a bad
//! namespace, CPU, memory or image fails long after `herd k8s render` said "wrote", or worse, a
//! pod sits in `InvalidImageName` until the start instant has passed.

/// A namespace is a DNS-1123 label: lowercase letters, digits and `-`, at most 63, starting and
/// ending with a letter or digit.
pub fn namespace(ns: &str) -> Result<(), String> {
    let ok = !ns.is_empty()
        && ns.len() <= 63
        && ns
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !ns.starts_with('-')
        && !ns.ends_with('-');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "--namespace `{ns}` is not a Kubernetes namespace: lowercase letters, digits and dashes, at most 63, e.g. load-test"
        ))
    }
}

/// A Kubernetes quantity, positive: a decimal number and a suffix from `suffixes`.
fn quantity(v: &str, suffixes: &[&str]) -> bool {
    let digits_end = v
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(v.len());
    let (number, suffix) = v.split_at(digits_end);
    let well_formed = !number.is_empty()
        && number != "."
        && number.matches('.').count() <= 1
        && suffixes.contains(&suffix);
    well_formed && number.parse::<f64>().is_ok_and(|n| n > 0.0)
}

pub fn cpu(v: &str) -> Result<(), String> {
    if quantity(v, &["", "m"]) {
        Ok(())
    } else {
        Err(format!(
            "--cpu `{v}` is not a CPU quantity: cores (2, 0.5) or millicores (500m)"
        ))
    }
}

pub fn memory(v: &str) -> Result<(), String> {
    let suffixes = [
        "", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei",
    ];
    if quantity(v, &suffixes) {
        Ok(())
    } else {
        Err(format!(
            "--memory `{v}` is not a memory quantity: bytes with a suffix, e.g. 512Mi, 2Gi or 1G"
        ))
    }
}

/// An image reference as the container runtime reads it (distribution's reference grammar):
/// `[registry[:port]/]path[:tag][@algorithm:hex]`.
pub fn image(v: &str) -> Result<(), String> {
    let bad = || {
        Err(format!(
            "--image `{v}` is not an image reference: [registry/]name[:tag][@sha256:digest], lowercase name, e.g. registry.example/herd:0.1"
        ))
    };
    let (rest, digest) = match v.split_once('@') {
        Some((r, d)) => (r, Some(d)),
        None => (v, None),
    };
    if let Some(d) = digest {
        let Some((algo, hex)) = d.split_once(':') else {
            return bad();
        };
        let algo_ok = !algo.is_empty()
            && algo
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"+._-".contains(&b));
        if !algo_ok || hex.len() < 32 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return bad();
        }
    }
    // A tag follows the last `:` that comes after the last `/` (a registry's port does not).
    let last_slash = rest.rfind('/').map_or(0, |i| i + 1);
    let (name, tag) = match rest[last_slash..].rfind(':') {
        Some(i) => (&rest[..last_slash + i], Some(&rest[last_slash + i + 1..])),
        None => (rest, None),
    };
    if let Some(t) = tag {
        let ok = !t.is_empty()
            && t.len() <= 128
            && !t.starts_with(['.', '-'])
            && t.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b));
        if !ok {
            return bad();
        }
    }
    let mut parts: Vec<&str> = name.split('/').collect();
    let first = parts[0];
    let is_registry = parts.len() > 1
        && (first.contains(['.', ':'])
            || first == "localhost"
            || first.bytes().any(|b| b.is_ascii_uppercase()));
    if is_registry {
        let (host, port) = first.split_once(':').unwrap_or((first, "80"));
        let host_ok = !host.is_empty()
            && host.split('.').all(|l| {
                !l.is_empty()
                    && !l.starts_with('-')
                    && !l.ends_with('-')
                    && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            });
        if !host_ok || port.parse::<u16>().is_err() {
            return bad();
        }
        parts.remove(0);
    }
    let component = |c: &str| {
        // [a-z0-9]+ separated by one `.`, one or two `_`, or any number of `-`.
        let b = c.as_bytes();
        !b.is_empty()
            && b[0].is_ascii_alphanumeric()
            && b[b.len() - 1].is_ascii_alphanumeric()
            && b.iter()
                .all(|&x| x.is_ascii_lowercase() || x.is_ascii_digit() || b"._-".contains(&x))
            && !c.contains("..")
            && !c.contains("___")
            && !c.contains("._")
            && !c.contains("_.")
    };
    if name.len() > 255 || parts.is_empty() || !parts.iter().all(|c| component(c)) {
        return bad();
    }
    Ok(())
}

/// The host of a workload's target when it is this machine: on a cluster every pod would load
/// itself, not the server.
pub fn loopback_host(target: &str) -> Option<&str> {
    let rest = target.split_once("://").map_or(target, |p| p.1);
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let host_port = authority.rsplit_once('@').map_or(authority, |p| p.1);
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        &v6[..v6.find(']').unwrap_or(v6.len())]
    } else {
        host_port.split(':').next().unwrap_or("")
    };
    let lower = host.to_ascii_lowercase();
    let loopback = lower == "localhost"
        || lower.ends_with(".localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback() || ip.is_unspecified());
    loopback.then_some(&authority[authority.len() - host_port.len()..])
}

/// A remote-write URL the pods can push to (`shown` as herd prints it), and no password in it.
pub fn remote_write(url: &str, shown: &str) -> Result<(), String> {
    pods_can_push(
        "--prometheus-remote-write",
        url,
        shown,
        "push to an agent in the cluster that adds them",
        "http://prometheus.monitoring:9090/api/v1/write",
    )
}

/// An OTLP URL the pods can push to (`shown` as herd prints it), and no password in it.
pub fn otlp(url: &str, shown: &str) -> Result<(), String> {
    pods_can_push(
        "--otlp",
        url,
        shown,
        "push to a collector in the cluster that adds them",
        "http://otel-collector.monitoring:4318",
    )
}

/// The Job's arguments are readable by anyone who can read the Job: no credentials in `url`
/// (shown as `shown`), and not this machine's loopback, where each pod would push to itself.
fn pods_can_push(
    flag: &str,
    url: &str,
    shown: &str,
    instead: &str,
    example: &str,
) -> Result<(), String> {
    let authority = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap_or("");
    if authority.contains('@') {
        return Err(format!(
            "{flag} {shown}: credentials in the URL would be written into the Job for anyone \
             who reads it; {instead}"
        ));
    }
    let host = authority.rsplit_once(':').map_or(authority, |(h, _)| h);
    if host == "localhost" || host.starts_with("127.") || host == "[::1]" {
        return Err(format!(
            "{flag} {shown}: each pod would push to itself; give the address the pods reach, \
             e.g. {example}"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_api_server_refuses_is_refused() {
        assert!(namespace("load-test").is_ok());
        for bad in ["Bad_NS", "-x", "x-", "", &"a".repeat(64)] {
            assert!(namespace(bad).is_err(), "{bad}");
        }
        for good in ["1", "2", "0.5", "500m", "1.5"] {
            assert!(cpu(good).is_ok(), "{good}");
        }
        for bad in ["abc", "", "0", "-1", "1Gi", "2 ", "1.2.3", "."] {
            assert!(cpu(bad).is_err(), "{bad}");
        }
        for good in ["512Mi", "2Gi", "1G", "1000000", "1.5Gi"] {
            assert!(memory(good).is_ok(), "{good}");
        }
        for bad in ["lots", "512MB", "0Mi", "Mi", "512m"] {
            assert!(memory(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn image_references() {
        for good in [
            "herd:latest",
            "herd",
            "registry.example/herd:0.1",
            "localhost:5000/team/herd",
            "ghcr.io/a/b-c__d.e:v1.2_3",
            "herd@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        ] {
            assert!(image(good).is_ok(), "{good}");
        }
        for bad in [
            "bad image name!",
            "Herd:1",
            "herd:",
            "herd:-x",
            "registry.example:notaport/herd",
            "herd@sha256:xyz",
            "",
            "a//b",
        ] {
            assert!(image(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn loopback_targets() {
        assert_eq!(
            loopback_host("http://127.0.0.1:8080/x"),
            Some("127.0.0.1:8080")
        );
        assert_eq!(loopback_host("http://localhost/"), Some("localhost"));
        assert_eq!(loopback_host("http://[::1]:80"), Some("[::1]:80"));
        assert_eq!(loopback_host("https://127.1.2.3"), Some("127.1.2.3"));
        assert_eq!(loopback_host("http://shop.default.svc:8080/"), None);
        assert_eq!(loopback_host("http://10.0.0.1/"), None);
    }
}
