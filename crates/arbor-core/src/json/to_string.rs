//! JS `ToString` of a JSON value (`String(v)`, template literals, `+` with a string,
//! `Array.prototype.join`), which pi and omp apply to fields they expect to be strings.

use super::{write_js_number, JsValue};

impl JsValue {
    /// Appends JS `String(self)` to `out` as WTF-8: `null`, `true`, numbers as JS prints them,
    /// strings as they are, objects as `[object Object]`, arrays as their elements'
    /// `ToString` joined with `,` (a `null` element as nothing).
    ///
    /// Iterative: an array nested a million levels deep (which `JSON.parse` reads) is converted
    /// without recursion. V8 gives up on such an array with a `RangeError` (its `join` recurses
    /// on the machine stack); this gives the answer the definition of `join` gives.
    pub fn write_js_string(&self, out: &mut Vec<u8>) {
        // Open arrays: the elements still to write, and whether one was seen already.
        let mut open: Vec<(std::slice::Iter<'_, JsValue>, bool)> = Vec::new();
        let mut next = Some(self);
        loop {
            match next.take() {
                Some(JsValue::Array(items)) => open.push((items.iter(), false)),
                Some(v) => write_primitive(v, out),
                None => {}
            }
            let Some((items, seen)) = open.last_mut() else {
                return;
            };
            match items.next() {
                None => {
                    open.pop();
                }
                Some(item) => {
                    if *seen {
                        out.push(b',');
                    }
                    *seen = true;
                    if !matches!(item, JsValue::Null) {
                        next = Some(item);
                    }
                }
            }
        }
    }
}

/// `ToString` of a value that is not an array.
fn write_primitive(v: &JsValue, out: &mut Vec<u8>) {
    match v {
        JsValue::Null => out.extend_from_slice(b"null"),
        JsValue::Bool(true) => out.extend_from_slice(b"true"),
        JsValue::Bool(false) => out.extend_from_slice(b"false"),
        JsValue::Number(n) if n.is_nan() => out.extend_from_slice(b"NaN"),
        JsValue::Number(n) if n.is_infinite() => {
            out.extend_from_slice(if *n > 0.0 { b"Infinity" } else { b"-Infinity" });
        }
        JsValue::Number(n) => write_js_number(*n, out),
        JsValue::String(s) => out.extend_from_slice(&s.0),
        JsValue::Object(_) => out.extend_from_slice(b"[object Object]"),
        JsValue::Array(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::JsValue;

    fn js_string(src: &str) -> String {
        let mut out = Vec::new();
        JsValue::parse(src.as_bytes())
            .expect("json")
            .write_js_string(&mut out);
        String::from_utf8(out).expect("utf8")
    }

    #[test]
    fn as_javascript_prints_it() {
        // Expected values from node: String(JSON.parse(src)).
        for (src, want) in [
            ("null", "null"),
            ("true", "true"),
            ("false", "false"),
            ("1e21", "1e+21"),
            ("-0", "0"),
            ("0.1", "0.1"),
            (r#""a\u00e9""#, "aé"),
            ("{}", "[object Object]"),
            ("[]", ""),
            ("[null]", ""),
            ("[null,null]", ","),
            (
                r#"[1,[2,[3,"x"]],null,{},true,[]]"#,
                "1,2,3,x,,[object Object],true,",
            ),
            ("[[],[[]],[null,[null]]]", ",,,"),
        ] {
            assert_eq!(js_string(src), want, "{src}");
        }
    }

    #[test]
    fn deep_arrays_on_a_small_stack() {
        std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(|| {
                let n = 1_000_000;
                let src = format!("{}\"x\",1{}", "[".repeat(n), "]".repeat(n));
                assert_eq!(js_string(&src), "x,1");
            })
            .expect("spawn")
            .join()
            .expect("no overflow");
    }
}
