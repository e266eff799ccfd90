//! The functions of the rule environment against what a 1.36 server computes.

use recon_apimachinery::json;
use recon_apimachinery::json::Value;

use super::*;

/// Expressions and the message a real 1.36 server printed for `'%s'.format([expr])`.
const LIBRARY: &[(&str, &str)] = &[
    (r#"ip('192.168.0.1').isLoopback()"#, r#"false"#),
    (r#"string(ip('::1'))"#, r#"::1"#),
    (r#"ip('10.0.0.1').family()"#, r#"4"#),
    (r#"cidr('10.0.0.0/8').containsIP('10.1.2.3')"#, r#"true"#),
    (r#"string(cidr('10.0.0.1/8').masked())"#, r#"10.0.0.0/8"#),
    (r#"cidr('10.0.0.0/8').prefixLength()"#, r#"8"#),
    (
        r#"url('https://example.com:8080/path?x=1').getHost()"#,
        r#"example.com:8080"#,
    ),
    (
        r#"url('https://example.com:8080/path?x=1&x=2').getQuery()"#,
        r#"{"x":["1", "2"]}"#,
    ),
    (
        r#"url('https://example.com:8080/p%20a').getEscapedPath()"#,
        r#"/p%20a"#,
    ),
    (r#"semver('1.2.3').major()"#, r#"1"#),
    (r#"semver('v1.2', true).minor()"#, r#"2"#),
    (r#"semver('1.2.3').isLessThan(semver('1.10.0'))"#, r#"true"#),
    (r#"format.named('dns1123Label').hasValue()"#, r#"true"#),
    (
        r#"quantity('1.5Gi').asApproximateFloat()"#,
        r#"1.610612736e+09"#,
    ),
    (r#"quantity('100m').isInteger()"#, r#"false"#),
    (r#"quantity('1k').add(5).asInteger()"#, r#"1005"#),
    (r#"quantity('1k').compareTo(quantity('1000'))"#, r#"0"#),
    (r#"[3, 1, 2].sort()"#, r#"[1, 2, 3]"#),
    (r#"[[1], [2, 3]].flatten()"#, r#"[1, 2, 3]"#),
    (r#"lists.range(3)"#, r#"[0, 1, 2]"#),
    (r#"'a,b,c'.split(',', 2)"#, r#"["a", "b,c"]"#),
    (r#"'hello'.indexOf('l')"#, r#"2"#),
    (r#"'hello'.lastIndexOf('l')"#, r#"3"#),
    (r#"'Hello'.lowerAscii()"#, r#"hello"#),
    (r#"'a.b.c'.replace('.', '-', 1)"#, r#"a-b.c"#),
    (r#"'  x '.trim()"#, r#"x"#),
    (r#"strings.quote('a"b\n')"#, r#""a\"b\n""#),
    (r#"sets.intersects([1, 2], [2, 3])"#, r#"true"#),
    (
        r#"timestamp('2023-05-06T07:08:09.123Z').getDayOfWeek()"#,
        r#"6"#,
    ),
    (
        r#"timestamp('2023-05-06T07:08:09.123Z').getHours('America/New_York')"#,
        r#"3"#,
    ),
    (
        r#"timestamp('2023-05-06T07:08:09.123Z').getMilliseconds()"#,
        r#"123"#,
    ),
    (
        r#"timestamp('2023-05-06T07:08:09.123Z').getDayOfYear()"#,
        r#"125"#,
    ),
    (
        r#"string(timestamp('2023-05-06T07:08:09.120Z'))"#,
        r#"2023-05-06T07:08:09.12Z"#,
    ),
    (r#"string(duration('1h30m'))"#, r#"5400s"#),
    (r#"duration('1h30m').getMinutes()"#, r#"90"#),
    (r#"string(1.5e21)"#, r#"1.5e+21"#),
    (r#"string(1e-7)"#, r#"1e-07"#),
    (r#"string(0.1)"#, r#"0.1"#),
    (r#"int(1e10)"#, r#"10000000000"#),
    (r#"double('1.5')"#, r#"1.5"#),
    (r#"'abcabc'.find('b.')"#, r#"bc"#),
    (r#"'abcabc'.findAll('b', 1)"#, r#"["b"]"#),
    (r#"optional.none().orValue(5)"#, r#"5"#),
    (r#"[1, 2, 3].exists_one(x, x > 2)"#, r#"true"#),
    (r#"[1, 2, 3].map(x, x * 2)"#, r#"[2, 4, 6]"#),
    (r#"[1, 2, 3].filter(x, x > 1)"#, r#"[2, 3]"#),
    (r#"{'a': 1}.transformMap(k, v, v + 1)"#, r#"{"a":2}"#),
    (r#"[1, 2].transformList(i, v, i + v)"#, r#"[1, 3]"#),
    (r#"string(b'abc')"#, r#"abc"#),
    (r#"dyn(1) == 1.0"#, r#"true"#),
    (r#"[1, 2, 3].isSorted()"#, r#"true"#),
    (r#"[2, 1].min()"#, r#"1"#),
    (r#"'abc'.charAt(3)"#, r#"failed rule: false"#),
    (r#"size('héllo')"#, r#"5"#),
    (r#"1u + 2u"#, r#"3"#),
    (r#"-9223372036854775808"#, r#"-9223372036854775808"#),
    (r#"7 / 2"#, r#"3"#),
    (r#"7 % -3"#, r#"1"#),
    (r#"-7 / 2"#, r#"-3"#),
    (r#"2.0 / 0.0"#, r#"+Inf"#),
    (r#"string(-0.0)"#, r#"-0"#),
    (r#"[1, 2, 3].slice(1, 2)"#, r#"[2]"#),
    (r#"[1, 1, 2].distinct()"#, r#"[1, 2]"#),
    (r#"[1, 2].reverse()"#, r#"[2, 1]"#),
    (r#"sets.equivalent([1, 2], [2, 1, 1])"#, r#"true"#),
    (r#"{'b': 2, 'a': 1}"#, r#"{"a":1, "b":2}"#),
    (r#"[1, 2] + [3]"#, r#"[1, 2, 3]"#),
    (r#"duration('-1.5s')"#, r#"-1.5s"#),
    (r#"string(duration('100ms'))"#, r#"0.1s"#),
    (r#"timestamp(1700000000)"#, r#"2023-11-14T22:13:20Z"#),
    (r#"int(timestamp('2023-01-01T00:00:00Z'))"#, r#"1672531200"#),
    (r#"string(duration('1h') + duration('1s'))"#, r#"3601s"#),
    (r#"bool('true')"#, r#"true"#),
    (r#"isURL('not a url')"#, r#"false"#),
    (r#"isIP('1.2.3')"#, r#"false"#),
    (r#"isCIDR('1.2.3.4/33')"#, r#"false"#),
    (
        r#"quantity('1Gi').isGreaterThan(quantity('1G'))"#,
        r#"true"#,
    ),
    (
        r#"'%.3f %e %b %o %X'.format([2.5, 12345.678, 5, 8, 255])"#,
        r#"2.500 1.234568×10⁰⁴ 101 10 FF"#,
    ),
    (r#"'%s'.format([duration('90s')])"#, r#"90s"#),
    (
        r#"'%s'.format([timestamp('2023-01-01T00:00:00Z')])"#,
        r#"2023-01-01T00:00:00Z"#,
    ),
    (r#"'%s'.format([type(1)])"#, r#"int"#),
    (r#"'%s'.format([null])"#, r#"null"#),
    (r#"'%s'.format([1.0])"#, r#"1"#),
];

#[test]
fn library_functions_give_what_cel_go_gives() {
    let list: Vec<Value> = LIBRARY
        .iter()
        .map(|(e, _)| json!({"rule": "false", "messageExpression": format!("'%s'.format([{e}])")}))
        .collect();
    let schema = spec_schema(json!({"type": "object", "x-kubernetes-validations": list}));
    let errors = rules(&schema).evaluate(&spec(json!({})), None).errors;
    let got: Vec<String> = errors.iter().map(|e| e.cause().message).collect();
    let wanted: Vec<String> = LIBRARY
        .iter()
        .map(|(_, m)| format!("Invalid value: {m}"))
        .collect();
    let mismatches: Vec<String> = LIBRARY
        .iter()
        .zip(got.iter().zip(&wanted))
        .filter(|(_, (g, w))| g != w)
        .map(|((e, _), (g, w))| format!("{e}: got {g:?}, wanted {w:?}"))
        .collect();
    assert_eq!(mismatches, Vec::<String>::new());
    assert_eq!(got.len(), wanted.len());
}

#[test]
fn library_errors_are_worded_as_kubernetes_words_them() {
    let fields = [
        (
            "q",
            "quantity(self).isInteger()",
            "abc",
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
        (
            "c",
            "cidr(self).prefixLength() == 1",
            "1.2.3.4",
            "network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix(\"1.2.3.4\"): no '/'",
        ),
        (
            "u",
            "url(self).getHost() == 'x'",
            "x",
            "URL parse error during conversion from string: parse \"x\": invalid URI for request",
        ),
        (
            "v",
            "semver(self).major() == 1",
            "x",
            "No Major.Minor.Patch elements found",
        ),
        (
            "t",
            "timestamp(self) > timestamp('2020-01-01T00:00:00Z')",
            "2020-01-01",
            "invalid RFC 3339 timestamp \"2020-01-01\"",
        ),
        (
            "d",
            "duration(self) > duration('1s')",
            "1x",
            "type conversion error from 'string' to 'google.protobuf.Duration'",
        ),
        (
            "n",
            "int(self) > 1",
            "abc",
            "type conversion error from 'string' to 'int'",
        ),
        (
            "tz",
            "timestamp('2020-01-01T00:00:00Z').getHours(self) == 1",
            "Nowhere/Land",
            "unknown time zone Nowhere/Land",
        ),
        (
            "tz2",
            "timestamp('2020-01-01T00:00:00Z').getHours(self) == 1",
            "+25:00",
            "timezone offset hours out of range [-23, 23]: +25:00",
        ),
    ];
    for (field, rule, value, message) in fields {
        let schema = spec_schema(
            json!({"type": "object", "properties": {field: {"type": "string",
            "maxLength": 64, "x-kubernetes-validations": [{"rule": rule}]}}}),
        );
        assert_eq!(
            validate(&schema, &spec(json!({field: value})), None),
            format!("spec.{field}: Invalid value: \"string\": {message} evaluating rule: {rule}")
        );
    }
}

#[test]
fn regex_classes_are_ascii_as_in_re2() {
    let schema = spec_schema(json!({"type": "object", "x-kubernetes-validations": [
        {"rule": "!'\u{661}\u{662}'.matches('^\\\\d+$')"},
        {"rule": "'a_1'.matches('^\\\\w+$') && 'a b'.matches('a\\\\sb') && 'x9'.matches('[\\\\dx]+')"},
        {"rule": "!'\u{e9}'.matches('^\\\\w$') && 'ab'.find('\\\\bb') == ''"}]}));
    assert_eq!(validate(&schema, &spec(json!({})), None), "");
}
