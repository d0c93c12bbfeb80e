//! Template function calls as the compiler sees them: computed once, rendered per request,
//! or refused with a position and a hint.

use crate::diag::{Diag, Pos};
use crate::hole::{Escape, Lookup, Slot};
use crate::template::Template;
use crate::yaml::Node;
use crate::yaml::Value;

struct NoVars;
impl Lookup for NoVars {
    fn value(&self, _: Slot) -> Option<&str> {
        Some("alice")
    }
    fn random(&self) -> u64 {
        u64::MAX / 2
    }
}

fn parse(text: &str) -> (Template, Vec<Diag>) {
    let node = Node {
        at: Pos { line: 5, col: 20 },
        value: Value::Scalar {
            text: text.into(),
            quoted: false,
        },
    };
    let mut d = Vec::new();
    let t = Template::parse(&node, text, Escape::None, &mut d);
    (t, d)
}

fn render(t: &Template) -> String {
    let mut out = String::new();
    t.render(&NoVars, &mut out).unwrap();
    out
}

#[test]
fn calls_with_literal_arguments_are_computed_once() {
    let (t, d) = parse("Bearer {{ jwt_hs256('{\"sub\":\"1234567890\",\"name\":\"John Doe\",\"iat\":1516239022}', \"your-256-bit-secret\") }}");
    assert!(d.is_empty(), "{d:?}");
    assert!(t.is_static(), "folded at compile time");
    assert!(render(&t).ends_with(".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"));
    let (t, _) = parse("{{ base64url(concat('a', 'b')) }}x");
    assert_eq!(t.source(), "YWI".to_owned() + "x");
}

#[test]
fn calls_on_variables_and_fresh_values_render_per_request() {
    let (mut t, d) = parse("/u/{{ sha256(users.name) }}/{{ random_int(1, 2) }}/{{uuid()}}");
    assert!(d.is_empty(), "{d:?}");
    assert!(!t.is_static());
    let holes: Vec<String> = t.holes_mut().map(|h| h.written()).collect();
    assert_eq!(
        holes,
        ["users.name"],
        "the argument is resolved like any hole"
    );
    let out = render(&t);
    assert!(
        out.starts_with("/u/2bd806c97f0e00af1a1fc3328fa763a9269723c8db8fac4f93af71db186d6e90/"),
        "{out}"
    );
    assert_eq!(
        t.source(),
        "/u/{{sha256(users.name)}}/{{random_int(1, 2)}}/{{uuid()}}"
    );
}

#[test]
fn bad_calls_are_reported_at_their_column_with_a_hint() {
    let table = [
        (
            "{{ hmac_sha265('k', 'x') }}",
            23,
            "`hmac_sha265` is not a template function",
            "did you mean `hmac_sha256`",
        ),
        (
            "ab{{ sha256() }}",
            25,
            "`sha256` takes 1 argument, not 0",
            "write sha256(data)",
        ),
        (
            "{{ hmac_sha256('k') }}",
            23,
            "`hmac_sha256` takes 2 arguments, not 1",
            "hmac_sha256(key, data)",
        ),
        (
            "{{ random_int(5, 1) }}",
            23,
            "first bound",
            "random_int(1, 100)",
        ),
        (
            "{{ random_int(users.n, 1) }}",
            23,
            "whole numbers",
            "random_int(1, 100)",
        ),
        (
            "{{ jwt_hs256('not json', 'k') }}",
            23,
            "not a JSON object",
            "concat",
        ),
        ("{{ sha256('x' }}", 34, "`sha256(` is not closed", "`)`"),
        ("{{ sha256('x) }}", 30, "the string is not closed", "quote"),
        (
            "{{ frobnicate() }}",
            23,
            "not a template function",
            "the functions are: hmac_sha256",
        ),
    ];
    for (text, col, message, hint) in table {
        let (_, d) = parse(text);
        assert_eq!(d.len(), 1, "{text}: {d:?}");
        assert!(d[0].message.contains(message), "{text}: {:?}", d[0]);
        assert!(
            d[0].hint.as_deref().unwrap_or("").contains(hint),
            "{text}: {:?}",
            d[0]
        );
        assert_eq!(d[0].at, Pos { line: 5, col }, "{text}");
    }
}

#[test]
fn lua_calls_are_never_folded_and_take_env_values_as_arguments() {
    std::env::set_var("HERD_EXPR_TEST_KEY", "k1");
    let (mut t, d) = parse("{{ lua.sign(env.HERD_EXPR_TEST_KEY, 'x', sha256(users.name)) }}");
    assert!(d.is_empty(), "{d:?}");
    assert!(
        !t.is_static(),
        "a Lua function may keep state: called per request"
    );
    let calls: Vec<(String, Pos)> = t.lua_mut().iter().map(|c| (c.name.clone(), c.at)).collect();
    assert_eq!(calls, [("sign".to_owned(), Pos { line: 5, col: 23 })]);
    struct Echo;
    impl Lookup for Echo {
        fn value(&self, _: Slot) -> Option<&str> {
            Some("alice")
        }
        fn random(&self) -> u64 {
            0
        }
        fn lua(&self, index: usize, args: &[String]) -> Result<String, String> {
            Ok(format!("{index}:{}", args[..2].join(",")))
        }
    }
    let mut out = String::new();
    t.render(&Echo, &mut out).unwrap();
    assert_eq!(
        out, "18446744073709551615:k1,x",
        "unbound until names resolve"
    );
    let (_, d) = parse("{{ lua.sign(env.HERD_EXPR_TEST_UNSET) }}");
    assert_eq!(
        d[0].message,
        "`env.HERD_EXPR_TEST_UNSET`: HERD_EXPR_TEST_UNSET is not set"
    );
}
