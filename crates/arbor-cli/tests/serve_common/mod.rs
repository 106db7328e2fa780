//! What the session page's tests share.
use std::path::Path;

/// The ids on the path from the root to `leaf`, read from the file (parentId links).
pub fn path_to(file: &Path, leaf: &str) -> Vec<String> {
    let text = std::fs::read_to_string(file).expect("session");
    let mut parent = std::collections::HashMap::new();
    for l in text.lines().skip(1) {
        let v: serde_json::Value = serde_json::from_str(l).expect("json line");
        if let Some(id) = v["id"].as_str() {
            parent.insert(id.to_string(), v["parentId"].as_str().map(String::from));
        }
    }
    let mut out = vec![leaf.to_string()];
    let mut cur = leaf.to_string();
    while let Some(Some(p)) = parent.get(&cur) {
        out.push(p.clone());
        cur = p.clone();
    }
    out.reverse();
    out
}
