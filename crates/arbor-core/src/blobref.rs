//! omp's blob references: `blob:sha256:<64 lowercase hex>` strings that stand for bytes kept
//! in the content-addressed blob store (`<agent dir>/blobs/<hex>`), and the base64 codec with
//! Node's / Bun's exact semantics (the blob name is the SHA-256 of the *decoded* bytes, so the
//! decoding must match theirs byte for byte for two tools to share one store).
//!
//! Pure syntax: nothing here touches the filesystem (the store lives in `arbor-store`).
use crate::json::JsStr;

/// The prefix of every blob reference.
pub const BLOB_PREFIX: &str = "blob:sha256:";

/// Whether `s` is a blob reference as omp tests it (`startsWith("blob:sha256:")`), valid or not.
pub fn is_blob_ref(s: &[u8]) -> bool {
    s.starts_with(BLOB_PREFIX.as_bytes())
}

/// Whether `hash` is a canonical blob name: exactly 64 lowercase hex characters (omp's
/// `BLOB_HASH_RE`). Only such names may ever become a path inside the blob directory.
pub fn is_valid_hash(hash: &[u8]) -> bool {
    hash.len() == 64 && hash.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Why a string that looks like a blob reference cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BlobRefError {
    /// The suffix after `blob:sha256:` is not 64 lowercase hex characters.
    #[error(
        "malformed blob reference {0:?} (expected blob:sha256: and 64 lowercase hex characters)"
    )]
    Malformed(String),
}

/// The hash of a blob reference: `Ok(None)` when `s` is not a reference at all,
/// `Err` when it starts like one but its hash is not canonical (a path-traversal attempt
/// such as `blob:sha256:../../etc/passwd` ends here, before any path is built).
pub fn parse_blob_ref(s: &[u8]) -> Result<Option<&str>, BlobRefError> {
    let Some(hash) = s.strip_prefix(BLOB_PREFIX.as_bytes()) else {
        return Ok(None);
    };
    if !is_valid_hash(hash) {
        return Err(BlobRefError::Malformed(
            String::from_utf8_lossy(s).chars().take(120).collect(),
        ));
    }
    // Validated ASCII.
    Ok(std::str::from_utf8(hash).ok())
}

/// `blob:sha256:<hex>`.
pub fn blob_ref(hex: &str) -> String {
    format!("{BLOB_PREFIX}{hex}")
}

/// Lowercase hex of `bytes`.
pub fn to_hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        s.push(HEX[usize::from(b >> 4)] as char);
        s.push(HEX[usize::from(b & 15)] as char);
    }
    s
}

/// Every blob hash mentioned in `bytes`, found as omp's `gc` finds them (a case-insensitive
/// `blob:sha256:` followed by 64 hex characters, lowercased), in order of appearance,
/// duplicates included. Works on raw lines, so malformed lines still keep their blobs alive.
pub fn find_blob_hashes(bytes: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    let pat = BLOB_PREFIX.as_bytes();
    let mut i = 0;
    while i + pat.len() <= bytes.len() {
        let Some(k) = memchr::memchr2(b'b', b'B', &bytes[i..]) else {
            break;
        };
        let at = i + k;
        if bytes.len() - at >= pat.len() && bytes[at..at + pat.len()].eq_ignore_ascii_case(pat) {
            let h = &bytes[at + pat.len()..];
            if h.len() >= 64 && h[..64].iter().all(u8::is_ascii_hexdigit) {
                out.push(String::from_utf8_lossy(&h[..64]).to_ascii_lowercase());
                i = at + pat.len() + 64;
                continue;
            }
        }
        i = at + 1;
    }
    out
}

/// The UTF-16 code units of a JS string held as WTF-8.
pub fn utf16_units(s: &JsStr) -> impl Iterator<Item = u16> + '_ {
    let b = &s.0;
    let mut i = 0;
    let mut pending: Option<u16> = None;
    std::iter::from_fn(move || {
        if let Some(lo) = pending.take() {
            return Some(lo);
        }
        let c = *b.get(i)?;
        let (cp, len) = if c < 0x80 {
            (u32::from(c), 1)
        } else if c < 0xE0 {
            (
                u32::from(c & 0x1F) << 6 | u32::from(b.get(i + 1).copied().unwrap_or(0x80) & 0x3F),
                2,
            )
        } else if c < 0xF0 {
            (
                u32::from(c & 0x0F) << 12
                    | u32::from(b.get(i + 1).copied().unwrap_or(0x80) & 0x3F) << 6
                    | u32::from(b.get(i + 2).copied().unwrap_or(0x80) & 0x3F),
                3,
            )
        } else {
            (
                u32::from(c & 0x07) << 18
                    | u32::from(b.get(i + 1).copied().unwrap_or(0x80) & 0x3F) << 12
                    | u32::from(b.get(i + 2).copied().unwrap_or(0x80) & 0x3F) << 6
                    | u32::from(b.get(i + 3).copied().unwrap_or(0x80) & 0x3F),
                4,
            )
        };
        i += len;
        if cp >= 0x10000 {
            let v = cp - 0x10000;
            pending = Some(0xDC00 | (v & 0x3FF) as u16);
            Some(0xD800 | (v >> 10) as u16)
        } else {
            Some(cp as u16)
        }
    })
}

fn b64_value(c: u8) -> Option<u8> {
    Some(match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' | b'-' => 62,
        b'/' | b'_' => 63,
        _ => return None,
    })
}

/// `Buffer.from(s, "base64")` as Node and Bun compute it: each UTF-16 code unit is cut to its
/// low byte; both alphabets (`+/` and `-_`) are accepted; every other byte is skipped;
/// decoding stops at the first `=`; missing padding is fine and leftover bits are dropped.
pub fn decode_base64_js(s: &JsStr) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.0.len() / 4 * 3 + 3);
    let (mut acc, mut bits) = (0u32, 0u32);
    let mut push = |v: u8, out: &mut Vec<u8>| {
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    };
    if s.0.is_ascii() {
        for &c in &s.0 {
            if c == b'=' {
                break;
            }
            if let Some(v) = b64_value(c) {
                push(v, &mut out);
            }
        }
        return out;
    }
    for unit in utf16_units(s) {
        let c = (unit & 0xFF) as u8;
        if c == b'=' {
            break;
        }
        if let Some(v) = b64_value(c) {
            push(v, &mut out);
        }
    }
    out
}

/// `buffer.toString("base64")`: standard alphabet with `=` padding.
pub fn encode_base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = match chunk.len() {
            3 => u32::from(chunk[0]) << 16 | u32::from(chunk[1]) << 8 | u32::from(chunk[2]),
            2 => u32::from(chunk[0]) << 16 | u32::from(chunk[1]) << 8,
            _ => u32::from(chunk[0]) << 16,
        };
        s.push(A[(n >> 18) as usize & 63] as char);
        s.push(A[(n >> 12) as usize & 63] as char);
        s.push(if chunk.len() > 1 {
            A[(n >> 6) as usize & 63] as char
        } else {
            '='
        });
        s.push(if chunk.len() > 2 {
            A[n as usize & 63] as char
        } else {
            '='
        });
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::JsValue;

    fn js(lit: &str) -> JsStr {
        match JsValue::parse(lit.as_bytes()).as_ref() {
            Ok(JsValue::String(s)) => s.clone(),
            other => panic!("not a string literal: {other:?}"),
        }
    }

    #[test]
    fn base64_decoding_matches_node_and_bun() {
        // Expected values printed by Node 22 and Bun 1.4.4 (`Buffer.from(s, "base64")`).
        let cases: &[(&str, &str)] = &[
            (r#""QUJD""#, "414243"),
            (r#""QUJDRA""#, "41424344"),
            (r#""QUJDR""#, "414243"),
            (r#""QQ==QQ==""#, "41"),
            (r#""QU!JD""#, "414243"),
            (r#""Q""#, ""),
            (r#""=QUJD""#, ""),
            (r#""QU JD\n""#, "414243"),
            (r#""Q===""#, ""),
            (r#""-_-_""#, "fbffbf"),
            (r#""+/+/""#, "fbffbf"),
            (r#""QUJDRA==x""#, "41424344"),
            (r#""QQ=Q""#, "41"),
            (r#""QUI=QUI=""#, "4142"),
            (r#""Q\u0155JD""#, "414243"),
            (r#""QU\u00e9JD""#, "414243"),
            (r#""QU\ud83dJD""#, "41"),
            (r#""QU\ud83d\ude00JD""#, "41"),
            (r#""QU\udc00JD""#, "414243"),
            (r#""QUJ\ud83dD""#, "4142"),
        ];
        for (input, hex) in cases {
            assert_eq!(to_hex(&decode_base64_js(&js(input))), *hex, "{input}");
        }
    }

    #[test]
    fn base64_roundtrip() {
        for n in 0..20 {
            let bytes: Vec<u8> = (0..n).map(|i| (i * 37 + 11) as u8).collect();
            let enc = encode_base64(&bytes);
            assert_eq!(decode_base64_js(&JsStr::from(enc.as_str())), bytes);
        }
        assert_eq!(encode_base64(b"ABCD"), "QUJDRA==");
    }

    #[test]
    fn refs_are_validated_before_use() {
        let good = format!("blob:sha256:{}", "a".repeat(64));
        assert_eq!(
            parse_blob_ref(good.as_bytes()),
            Ok(Some("a".repeat(64).as_str()))
        );
        assert_eq!(parse_blob_ref(b"hello"), Ok(None));
        assert!(parse_blob_ref(b"blob:sha256:../../etc/passwd").is_err());
        assert!(parse_blob_ref(format!("blob:sha256:{}", "A".repeat(64)).as_bytes()).is_err());
        assert!(parse_blob_ref(format!("blob:sha256:{}0", "a".repeat(64)).as_bytes()).is_err());
        assert!(is_blob_ref(b"blob:sha256:"));
    }

    #[test]
    fn finds_hashes_like_omp_gc() {
        let h = "0123456789abcdef".repeat(4);
        let text = format!(
            r#"{{"data":"blob:sha256:{h}","x":"BLOB:SHA256:{}","y":"blob:sha256:abc"}}"#,
            h.to_uppercase()
        );
        assert_eq!(find_blob_hashes(text.as_bytes()), vec![h.clone(), h]);
    }
}
