//! Arguments a function needs written in the file, checked when the file compiles.

use super::{Arg, Parser};
use crate::func::Func;

impl Parser<'_, '_> {
    /// Arguments that must be known now: numbers for random_int and now_unix, and a literal
    /// JWT's claims must be a JSON object.
    pub(super) fn check_literals(
        &mut self,
        func: Func,
        args: &[(Arg, usize)],
        at: usize,
    ) -> Option<()> {
        let number = |a: &Arg| match a {
            Arg::Text(t) => t.parse::<i64>().ok(),
            _ => None,
        };
        match func {
            Func::RandomInt | Func::NowUnix => {
                let ns: Vec<Option<i64>> = args.iter().map(|(a, _)| number(a)).collect();
                if ns.iter().any(Option::is_none) {
                    self.error(
                        at,
                        format!("`{}` takes whole numbers written in the file", func.name()),
                        &format!(
                            "e.g. {}",
                            if func == Func::RandomInt {
                                "random_int(1, 100)"
                            } else {
                                "now_unix(3600)"
                            }
                        ),
                    );
                    return None;
                }
                if let [Some(a), Some(b)] = ns[..] {
                    if a > b {
                        self.error(
                            at,
                            format!(
                                "random_int({a}, {b}): the first bound must not exceed the second"
                            ),
                            "e.g. random_int(1, 100)",
                        );
                        return None;
                    }
                }
            }
            Func::JwtHs256 => {
                if let (Arg::Text(claims), _) = &args[0] {
                    if !matches!(
                        serde_json::from_str::<serde_json::Value>(claims),
                        Ok(serde_json::Value::Object(_))
                    ) {
                        self.error(at, "the claims of jwt_hs256 are not a JSON object", "e.g. jwt_hs256('{\"sub\":\"alice\"}', 'key'), or concat(...) to build them");
                        return None;
                    }
                }
            }
            Func::Env => {
                let name = match &args[0].0 {
                    Arg::Text(t) => t.as_str(),
                    _ => "",
                };
                let valid = !name.is_empty()
                    && !name.starts_with(|c: char| c.is_ascii_digit())
                    && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                if !valid {
                    self.error(
                        at,
                        "env takes the name of an environment variable written in the file",
                        "e.g. env('API_TOKEN')",
                    );
                    return None;
                }
                if std::env::var_os(name).is_none() {
                    self.error(
                        at,
                        format!("env('{name}'): {name} is not set in herd's environment"),
                        &format!("export {name}=... before running herd (herd k8s render puts it into a Kubernetes Secret)"),
                    );
                    return None;
                }
            }
            _ => {}
        }
        Some(())
    }
}
