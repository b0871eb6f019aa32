//! Format 2: the preimage is one RFC 8785 (JCS) document.
//!
//! `sha256(JCS({call_id, format: 2, kind, payload, prev_hash, seq, session_id,
//! ts_ms}))`, so any language with a JCS implementation and SHA-256 can
//! recompute a hash from the stored columns.
//!
//! JCS comes from `serde_json_canonicalizer`. It and `serde_jcs` (0.2) both
//! gave the RFC's number and key-order examples exactly when compared before
//! choosing (the tests below run them against this one). This one was chosen
//! because it formats numbers with the current `ryu-js` 1.x (the ECMAScript
//! algorithm RFC 8785 prescribes; upstream ships a test against the reference
//! implementation's generated number file), sorts keys by UTF-16 code units,
//! and turns on serde_json's `float_roundtrip`, without which reading a
//! stored float back may be off by one unit in the last place and canonicalise
//! differently from what was hashed. `serde_jcs` 0.2 uses `ryu-js` 0.2.
//!
//! The canonicaliser buffers and re-parses every member, so values whose
//! format 1 form is already their RFC 8785 form (most event payloads: strings
//! and small integers) skip it; see [`same_as_format1`].

use serde_json::Value;

use super::HashInput;
// serde_json escapes strings exactly as RFC 8785 does (see `same_as_format1`).
use super::json_string::push_json_string;

/// `value` as RFC 8785 canonical JSON.
///
/// Numbers are IEEE 754 doubles, as RFC 8785 requires: an integer beyond
/// ±2^53 is written as the nearest double.
pub fn canonical_json(value: &Value) -> String {
    if same_as_format1(value) {
        return super::format1::canonical_json(value);
    }
    // A `Value` holds no NaN or infinity and a `Vec` never fails to grow, so
    // the canonicaliser has nothing to fail on.
    serde_json_canonicalizer::to_string(value).unwrap_or_default()
}

/// The largest integer magnitude below which a JSON integer and the double
/// RFC 8785 reads it as are written with the same digits.
const EXACT_INTEGERS: u64 = 1 << 53;

/// Whether format 1's canonical form of `value` is already its RFC 8785 form,
/// so the (allocation-heavy) canonicaliser can be skipped: true when every
/// number is an integer within ±2^53 (written as the same digits) and no
/// object key holds a character from U+E000 up (below it, UTF-16 code-unit
/// order is UTF-8 byte order). Strings are escaped the same way by both:
/// `\"`, `\\`, `\b \t \n \f \r`, and lowercase `\u00xx` for the other
/// controls. A test compares the two forms on values of every kind.
pub fn same_as_format1(value: &Value) -> bool {
    match value {
        Value::Null | Value::Bool(_) | Value::String(_) => true,
        Value::Number(n) => n
            .as_u64()
            .or_else(|| n.as_i64().map(i64::unsigned_abs))
            .is_some_and(|m| m <= EXACT_INTEGERS),
        Value::Array(items) => items.iter().all(same_as_format1),
        Value::Object(map) => map
            .iter()
            .all(|(k, v)| k.chars().all(|c| c < '\u{e000}') && same_as_format1(v)),
    }
}

fn integer(n: i64) -> String {
    if n.unsigned_abs() <= EXACT_INTEGERS {
        n.to_string()
    } else {
        // Integers always serialise.
        serde_json_canonicalizer::to_string(&n).unwrap_or_default()
    }
}

/// The bytes format 2 hashes. The keys are all ASCII, so their UTF-16 order
/// is the order written here; the payload is already canonical and spliced in
/// (a test checks the result equals canonicalising the whole object).
pub(super) fn preimage(input: &HashInput<'_>, prev_hash: &str) -> String {
    let mut out = String::with_capacity(input.payload_canonical.len() + 256);
    out.push_str("{\"call_id\":");
    push_json_string(input.call_id, &mut out);
    out.push_str(",\"format\":2,\"kind\":");
    push_json_string(input.kind, &mut out);
    out.push_str(",\"payload\":");
    out.push_str(input.payload_canonical);
    out.push_str(",\"prev_hash\":");
    push_json_string(prev_hash, &mut out);
    out.push_str(",\"seq\":");
    out.push_str(&integer(input.seq));
    out.push_str(",\"session_id\":");
    push_json_string(input.session_id, &mut out);
    out.push_str(",\"ts_ms\":");
    out.push_str(&integer(input.ts_ms));
    out.push('}');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn canonical_text(json_text: &str) -> String {
        canonical_json(&serde_json::from_str(json_text).unwrap())
    }

    fn by_the_canonicalizer(value: &Value) -> String {
        serde_json_canonicalizer::to_string(value).unwrap()
    }

    #[test]
    fn the_shortcut_is_taken_only_where_it_gives_the_canonicalizer_s_bytes() {
        let controls: String = (0u8..0x20)
            .map(char::from)
            .chain(['\u{7f}', '\u{2028}'])
            .collect();
        let same = [
            json!(null),
            json!([
                true,
                false,
                0,
                -1,
                9_007_199_254_740_992_u64,
                -9_007_199_254_740_992_i64
            ]),
            json!({"b": "x", "a": {"é": 1, "中": [2, {"z": null, "\u{d7ff}": "q\"uo\\te/"}]}}),
            json!({"s": controls, "\u{1}\n": "ctl key", "emoji value": "\u{1f600}\u{fb33}"}),
        ];
        for v in &same {
            assert!(same_as_format1(v), "{v}");
            assert_eq!(canonical_json(v), by_the_canonicalizer(v), "{v}");
        }
        let different = [
            json!(1.5),
            json!(100.0),
            json!([9_007_199_254_740_993_u64]),
            json!(i64::MIN),
            json!({"\u{e000}": 1}),
            json!({"a": [{"\u{1f600}": 1, "\u{fb33}": 2}]}),
        ];
        for v in &different {
            assert!(!same_as_format1(v), "{v}");
            assert_eq!(canonical_json(v), by_the_canonicalizer(v), "{v}");
        }
    }

    #[test]
    fn numbers_follow_the_ecmascript_rules_of_rfc_8785() {
        // Appendix B of RFC 8785: IEEE 754 bit patterns and their canonical text.
        let cases: &[(u64, &str)] = &[
            (0x0000_0000_0000_0000, "0"),
            (0x8000_0000_0000_0000, "0"),
            (0x0000_0000_0000_0001, "5e-324"),
            (0x8000_0000_0000_0001, "-5e-324"),
            (0x7fef_ffff_ffff_ffff, "1.7976931348623157e+308"),
            (0xffef_ffff_ffff_ffff, "-1.7976931348623157e+308"),
            (0x4340_0000_0000_0000, "9007199254740992"),
            (0xc340_0000_0000_0000, "-9007199254740992"),
            (0x4430_0000_0000_0000, "295147905179352830000"),
            (0x44b5_2d02_c7e1_4af5, "9.999999999999997e+22"),
            (0x44b5_2d02_c7e1_4af6, "1e+23"),
            (0x44b5_2d02_c7e1_4af7, "1.0000000000000001e+23"),
            (0x444b_1ae4_d6e2_ef4e, "999999999999999700000"),
            (0x444b_1ae4_d6e2_ef4f, "999999999999999900000"),
            (0x444b_1ae4_d6e2_ef50, "1e+21"),
            (0x3eb0_c6f7_a0b5_ed8c, "9.999999999999997e-7"),
            (0x3eb0_c6f7_a0b5_ed8d, "0.000001"),
            (0x41b3_de43_5555_5553, "333333333.3333332"),
            (0x41b3_de43_5555_5554, "333333333.33333325"),
            (0x41b3_de43_5555_5555, "333333333.3333333"),
            (0x41b3_de43_5555_5556, "333333333.3333334"),
            (0x41b3_de43_5555_5557, "333333333.33333343"),
            (0xbecb_f647_612f_3696, "-0.0000033333333333333333"),
            (0x4314_3ff3_c1cb_0959, "1424953923781206.2"),
        ];
        for (bits, expected) in cases {
            let n = json!(f64::from_bits(*bits));
            assert_eq!(canonical_json(&n), *expected, "bits {bits:#018x}");
        }
    }

    #[test]
    fn number_literals_are_read_as_doubles_and_rewritten() {
        assert_eq!(
            canonical_text(
                "[1e21, 1E-7, -0, -0.0, 4.50, 2e-3, 1E30, 100.0, 0.000000000000000000000000001]"
            ),
            "[1e+21,1e-7,0,0,4.5,0.002,1e+30,100,1e-27]"
        );
        // Beyond 2^53 an integer is the nearest double.
        assert_eq!(canonical_json(&json!(u64::MAX)), "18446744073709552000");
    }

    #[test]
    fn keys_are_sorted_by_utf16_code_units() {
        // The sorting example of RFC 8785 §3.2.3: the smiley (a surrogate pair,
        // 0xD83D…) sorts before U+FB33, unlike in UTF-8 byte or code point order.
        let input = r#"{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Smiley","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis","</script>":"Browser Challenge"}"#;
        let expected = concat!(
            r#"{"\r":"Carriage Return","1":"One","</script>":"Browser Challenge","#,
            "\"\u{80}\":\"Control\",\"\u{f6}\":\"Latin Small Letter O With Diaeresis\",",
            "\"\u{20ac}\":\"Euro Sign\",\"\u{1f600}\":\"Smiley\",",
            "\"\u{fb33}\":\"Hebrew Letter Dalet With Dagesh\"}"
        );
        assert_eq!(canonical_text(input), expected);
    }

    #[test]
    fn the_rfc_example_object_is_canonical() {
        // The example of RFC 8785 §3.2.2 (numbers, string escapes, literals).
        let input = r#"{
            "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
            "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
            "literals": [null, true, false]
        }"#;
        assert_eq!(
            canonical_text(input),
            r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#
        );
    }

    #[test]
    fn the_spliced_envelope_equals_canonicalising_the_whole_object() {
        let payload = json!({"z": 1.5, "é": "a\u{7}b", "\u{1f600}": [null], "\u{fb33}": 1e21});
        let payload_canonical = canonical_json(&payload);
        let input = HashInput {
            seq: 7,
            ts_ms: 1_700_000_000_000,
            kind: "tool.started",
            session_id: "s\n1",
            call_id: "c\"1",
            payload_canonical: &payload_canonical,
        };
        let whole = canonical_json(&json!({
            "seq": 7, "ts_ms": 1_700_000_000_000_i64, "kind": "tool.started", "format": 2,
            "session_id": "s\n1", "call_id": "c\"1", "payload": payload, "prev_hash": "ab",
        }));
        assert_eq!(preimage(&input, "ab"), whole);
    }
}
