//! Objects for the tests that compare a fast decode with rmcp's union.

use serde_json::{Map, Value};

/// Objects made of every subset of `members`: for each subset, one object
/// per value of each member in it, the others at their first value (the
/// empty object once).
pub(crate) fn member_combinations(members: &[(&str, &[Value])]) -> Vec<Value> {
    let mut out = vec![Value::Object(Map::new())];
    for mask in 1u32..(1 << members.len()) {
        for (vary, (_, values)) in members.iter().enumerate() {
            if mask & (1 << vary) == 0 {
                continue;
            }
            for value in *values {
                let mut object = Map::new();
                for (i, (name, values)) in members.iter().enumerate() {
                    if mask & (1 << i) != 0 {
                        let v = if i == vary { value } else { &values[0] };
                        object.insert((*name).to_string(), v.clone());
                    }
                }
                out.push(Value::Object(object));
            }
        }
    }
    out
}
