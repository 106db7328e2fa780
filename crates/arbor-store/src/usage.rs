//! Token and cost accounting that knows the tree: what each session spent on the path it
//! resumes and on the branches it left, with the entries a fork copied from its parent counted
//! once.
use arbor_core::doc::SessionDoc;
use arbor_core::entry::{EntryType, Role};
use arbor_core::json::JsValue;
use std::collections::{HashMap, HashSet};

/// Tokens and cost: the one usage sum of arbor (`stats`, the exports, the index's catalog all
/// add [`Tokens`] read by [`Tokens::of`] or [`Tokens::of_raw`]).
///
/// What counts, as pi and omp write it: the numbers `input`, `output`, `cacheRead` and
/// `cacheWrite` of a `usage` object and the number `cost.total` (the parts of `cost` are not
/// added up). A member that is missing, not a number or not finite counts 0.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Tokens {
    /// Input tokens.
    pub input: f64,
    /// Output tokens.
    pub output: f64,
    /// Cache reads.
    pub cache_read: f64,
    /// Cache writes.
    pub cache_write: f64,
    /// Cost (the `usage.cost.total` the agent recorded).
    pub cost: f64,
}

impl Tokens {
    /// Adds `o`.
    pub fn add(&mut self, o: &Tokens) {
        self.input += o.input;
        self.output += o.output;
        self.cache_read += o.cache_read;
        self.cache_write += o.cache_write;
        self.cost += o.cost;
    }

    /// The tokens of one `usage` object, from the member reader `num` (a member's number, if it
    /// is one) and `cost.total`: the one place that names the members.
    fn read(num: impl Fn(&str) -> Option<f64>, cost_total: Option<f64>) -> Tokens {
        let finite = |x: Option<f64>| x.filter(|x| x.is_finite()).unwrap_or(0.0);
        Tokens {
            input: finite(num("input")),
            output: finite(num("output")),
            cache_read: finite(num("cacheRead")),
            cache_write: finite(num("cacheWrite")),
            cost: finite(cost_total),
        }
    }

    /// The tokens of a `usage` object held as a DOM (anything else counts 0).
    pub fn of(u: &JsValue) -> Tokens {
        let n = |v: Option<&JsValue>| match v {
            Some(JsValue::Number(x)) => Some(*x),
            _ => None,
        };
        Tokens::read(
            |k| n(u.get(k)),
            n(u.get("cost").and_then(|c| c.get("total"))),
        )
    }

    /// The tokens of a `usage` object from its raw JSON, without building a DOM (anything but
    /// an object counts 0).
    pub fn of_raw(raw: &[u8]) -> Tokens {
        let Ok(f) = arbor_core::entry::parse_fields(raw) else {
            return Tokens::default();
        };
        let total = match f.get(raw, "cost") {
            Some((c, arbor_core::json::ValueKind::Object)) => arbor_core::entry::parse_fields(c)
                .ok()
                .and_then(|cf| cf.num(c, "total")),
            _ => None,
        };
        Tokens::read(|k| f.num(raw, k), total)
    }
}

/// One usage record of a session.
#[derive(Debug, Clone, PartialEq)]
pub struct Spend {
    /// The entry's id.
    pub entry_id: Option<String>,
    /// The entry's timestamp.
    pub timestamp: Option<String>,
    /// `provider/model`.
    pub model: String,
    /// On the path from the leaf to the root (the branch pi resumes).
    pub on_path: bool,
    /// A pi 1.5 `usage` entry (compaction, branch summary, title...) rather than a turn.
    pub side: bool,
    /// What it spent.
    pub tokens: Tokens,
}

/// Every usage record of `doc`: assistant messages' `usage` and pi 1.5's `usage` entries.
pub fn spends(doc: &SessionDoc) -> Vec<Spend> {
    let mut on_path = vec![false; doc.entries().len()];
    if let Some(l) = doc.index().leaf {
        for i in doc.index().path(doc, l).entries {
            on_path[i] = true;
        }
    }
    let mut out = Vec::new();
    for (i, e) in doc.entries().iter().enumerate() {
        let line = doc.line(&e.line);
        let (usage, model, side) = match (&e.etype, e.role.as_ref()) {
            (EntryType::Message, Some(Role::Assistant)) => {
                let Some(m) = e.message.as_ref() else {
                    continue;
                };
                let Some(u) = m.value(line, "usage") else {
                    continue;
                };
                let model = format!(
                    "{}/{}",
                    m.str(line, "provider").unwrap_or_default(),
                    m.str(line, "model").unwrap_or_default()
                );
                (u, model, false)
            }
            (EntryType::Usage, _) => {
                let Some(u) = e.fields.value(line, "usage") else {
                    continue;
                };
                let model = format!(
                    "{}/{}",
                    e.fields.str(line, "provider").unwrap_or_default(),
                    e.fields.str(line, "model").unwrap_or_default()
                );
                (u, model, true)
            }
            _ => continue,
        };
        out.push(Spend {
            entry_id: e.id.as_deref().map(str::to_string),
            timestamp: e.timestamp.as_deref().map(str::to_string),
            model,
            on_path: on_path[i],
            side,
            tokens: Tokens::of(&usage),
        });
    }
    out
}

/// What makes two spends the same turn: the entry's id and timestamp.
pub type SpendKey = (Option<String>, Option<String>);

/// The keys of `spends`: what a fork of this session copies keeps them.
pub fn spend_keys(spends: &[Spend]) -> HashSet<SpendKey> {
    spends
        .iter()
        .map(|x| (x.entry_id.clone(), x.timestamp.clone()))
        .collect()
}

/// Fixed-point bits of the token counts in [`Sums`].
const TOKEN_BITS: i32 = 32;
/// Fixed-point bits of the cost in [`Sums`].
const COST_BITS: i32 = 80;
/// The largest magnitude one value may add (2^100 units): 2^26 of them cannot overflow.
const CLAMP: f64 = 1_267_650_600_228_229_401_496_703_205_376.0;

fn fixed(x: f64, bits: i32) -> i128 {
    let v = x * 2f64.powi(bits);
    if v.is_finite() {
        v.clamp(-CLAMP, CLAMP) as i128
    } else {
        0
    }
}

fn unfixed(v: i128, bits: i32) -> f64 {
    v as f64 / 2f64.powi(bits)
}

/// Sums of [`Tokens`] in fixed point (tokens to 2^-32, cost to 2^-80): integer additions, so
/// the total does not depend on the order of the additions, and sums kept by the catalog add
/// up to exactly what adding every turn again gives.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sums {
    /// Input tokens.
    pub input: i128,
    /// Output tokens.
    pub output: i128,
    /// Cache reads.
    pub cache_read: i128,
    /// Cache writes.
    pub cache_write: i128,
    /// Cost.
    pub cost: i128,
}

impl Sums {
    /// Adds one record.
    pub fn add_tokens(&mut self, t: &Tokens) {
        self.add(&Sums {
            input: fixed(t.input, TOKEN_BITS),
            output: fixed(t.output, TOKEN_BITS),
            cache_read: fixed(t.cache_read, TOKEN_BITS),
            cache_write: fixed(t.cache_write, TOKEN_BITS),
            cost: fixed(t.cost, COST_BITS),
        });
    }

    /// Adds `o`.
    pub fn add(&mut self, o: &Sums) {
        self.input = self.input.wrapping_add(o.input);
        self.output = self.output.wrapping_add(o.output);
        self.cache_read = self.cache_read.wrapping_add(o.cache_read);
        self.cache_write = self.cache_write.wrapping_add(o.cache_write);
        self.cost = self.cost.wrapping_add(o.cost);
    }

    /// The sums as numbers (each rounded once).
    pub fn tokens(&self) -> Tokens {
        Tokens {
            input: unfixed(self.input, TOKEN_BITS),
            output: unfixed(self.output, TOKEN_BITS),
            cache_read: unfixed(self.cache_read, TOKEN_BITS),
            cache_write: unfixed(self.cache_write, TOKEN_BITS),
            cost: unfixed(self.cost, COST_BITS),
        }
    }
}

/// Where a spend went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// A turn on the current path.
    Path,
    /// A turn on a branch that was left.
    Other,
    /// A pi 1.5 `usage` entry (summaries and the like).
    Side,
}

impl Kind {
    fn of(s: &Spend) -> Kind {
        match (s.side, s.on_path) {
            (true, _) => Kind::Side,
            (false, true) => Kind::Path,
            (false, false) => Kind::Other,
        }
    }
}

/// The spends of one session that share everything `arbor stats` groups, filters and
/// deduplicates by: the first 10 and 7 characters of their timestamp (day and month), the UTC
/// day and hour of the time it reads as (week; hours so that a `--since` falls inside few
/// buckets), model, kind, and whether the session's parent holds the same entry (a fork's
/// copy).
#[derive(Debug, Clone, PartialEq)]
pub struct Bucket {
    /// The timestamp's first 10 characters (`None`: missing or shorter).
    pub day: Option<String>,
    /// The timestamp's first 7 characters.
    pub month: Option<String>,
    /// Days since the epoch of the timestamp's time (`None`: no readable time).
    pub utc_day: Option<i64>,
    /// Hours since the epoch of that time (set with `utc_day`).
    pub utc_hour: i64,
    /// Earliest time of the spends, ms (when `utc_day` is set).
    pub min_ms: f64,
    /// Latest time of the spends, ms (when `utc_day` is set).
    pub max_ms: f64,
    /// `provider/model`.
    pub model: String,
    /// Path, branch or summary.
    pub kind: Kind,
    /// Entries the session's parent session holds too (same id and timestamp).
    pub copied: bool,
    /// How many spends.
    pub spends: u64,
    /// What they spent.
    pub sums: Sums,
}

/// The buckets of a session's spends; `parent` is the keys of its parent session's spends (a
/// fork's copies are marked `copied`). `per_spend`: one bucket per spend (the exact times,
/// for a `--since` inside a bucket's day).
pub fn buckets(
    spends: &[Spend],
    parent: Option<&HashSet<SpendKey>>,
    per_spend: bool,
) -> Vec<Bucket> {
    type Key = (
        Option<String>,
        Option<String>,
        Option<(i64, i64)>,
        String,
        Kind,
        bool,
    );
    let mut out: Vec<Bucket> = Vec::new();
    let mut at: HashMap<Key, usize> = HashMap::new();
    for s in spends {
        let ts = s.timestamp.as_deref();
        let ms = ts.and_then(arbor_core::time::parse_iso_ms);
        let copied = parent.is_some_and(|p| p.contains(&(s.entry_id.clone(), s.timestamp.clone())));
        let key: Key = (
            ts.and_then(|t| t.get(..10)).map(str::to_string),
            ts.and_then(|t| t.get(..7)).map(str::to_string),
            ms.map(|m| {
                (
                    (m / 86_400_000.0).floor() as i64,
                    (m / 3_600_000.0).floor() as i64,
                )
            }),
            s.model.clone(),
            Kind::of(s),
            copied,
        );
        let i = match at.get(&key) {
            Some(&i) if !per_spend => i,
            _ => {
                out.push(Bucket {
                    day: key.0.clone(),
                    month: key.1.clone(),
                    utc_day: key.2.map(|d| d.0),
                    utc_hour: key.2.map_or(0, |d| d.1),
                    min_ms: f64::INFINITY,
                    max_ms: f64::NEG_INFINITY,
                    model: key.3.clone(),
                    kind: key.4,
                    copied,
                    spends: 0,
                    sums: Sums::default(),
                });
                at.insert(key, out.len() - 1);
                out.len() - 1
            }
        };
        let b = &mut out[i];
        if let Some(m) = ms {
            b.min_ms = b.min_ms.min(m);
            b.max_ms = b.max_ms.max(m);
        }
        b.spends += 1;
        b.sums.add_tokens(&s.tokens);
    }
    out
}

/// Buckets as bytes (what the catalog keeps); [`decode_buckets`] reads them back.
pub fn encode_buckets(buckets: &[Bucket]) -> Vec<u8> {
    let mut o = Vec::with_capacity(8 + buckets.len() * 128);
    let put_str = |o: &mut Vec<u8>, s: &str| {
        o.extend_from_slice(&(s.len() as u32).to_le_bytes());
        o.extend_from_slice(s.as_bytes());
    };
    o.extend_from_slice(&(buckets.len() as u32).to_le_bytes());
    for b in buckets {
        let flags = match b.kind {
            Kind::Path => 0u8,
            Kind::Other => 1,
            Kind::Side => 2,
        } | (u8::from(b.copied) << 2)
            | (u8::from(b.day.is_some()) << 3)
            | (u8::from(b.month.is_some()) << 4)
            | (u8::from(b.utc_day.is_some()) << 5);
        o.push(flags);
        if let Some(d) = &b.day {
            put_str(&mut o, d);
        }
        if let Some(m) = &b.month {
            put_str(&mut o, m);
        }
        put_str(&mut o, &b.model);
        if let Some(d) = b.utc_day {
            o.extend_from_slice(&d.to_le_bytes());
            o.extend_from_slice(&b.utc_hour.to_le_bytes());
            o.extend_from_slice(&b.min_ms.to_le_bytes());
            o.extend_from_slice(&b.max_ms.to_le_bytes());
        }
        o.extend_from_slice(&b.spends.to_le_bytes());
        for v in [
            b.sums.input,
            b.sums.output,
            b.sums.cache_read,
            b.sums.cache_write,
            b.sums.cost,
        ] {
            o.extend_from_slice(&v.to_le_bytes());
        }
    }
    o
}

/// Reads what [`encode_buckets`] wrote (`None`: not such bytes).
pub fn decode_buckets(b: &[u8]) -> Option<Vec<Bucket>> {
    struct R<'a>(&'a [u8]);
    impl<'a> R<'a> {
        fn take(&mut self, n: usize) -> Option<&'a [u8]> {
            if self.0.len() < n {
                return None;
            }
            let (a, rest) = self.0.split_at(n);
            self.0 = rest;
            Some(a)
        }
        fn arr<const N: usize>(&mut self) -> Option<[u8; N]> {
            self.take(N)?.try_into().ok()
        }
        fn string(&mut self) -> Option<String> {
            let n = u32::from_le_bytes(self.arr()?) as usize;
            String::from_utf8(self.take(n)?.to_vec()).ok()
        }
    }
    let mut r = R(b);
    let n = u32::from_le_bytes(r.arr()?) as usize;
    let mut out = Vec::with_capacity(n.min(1 << 16));
    for _ in 0..n {
        let [flags] = r.arr::<1>()?;
        let kind = match flags & 3 {
            0 => Kind::Path,
            1 => Kind::Other,
            2 => Kind::Side,
            _ => return None,
        };
        let day = if flags & 8 != 0 {
            Some(r.string()?)
        } else {
            None
        };
        let month = if flags & 16 != 0 {
            Some(r.string()?)
        } else {
            None
        };
        let model = r.string()?;
        let (utc_day, utc_hour, min_ms, max_ms) = if flags & 32 != 0 {
            (
                Some(i64::from_le_bytes(r.arr()?)),
                i64::from_le_bytes(r.arr()?),
                f64::from_le_bytes(r.arr()?),
                f64::from_le_bytes(r.arr()?),
            )
        } else {
            (None, 0, f64::INFINITY, f64::NEG_INFINITY)
        };
        let spends = u64::from_le_bytes(r.arr()?);
        let mut v = [0i128; 5];
        for x in &mut v {
            *x = i128::from_le_bytes(r.arr()?);
        }
        out.push(Bucket {
            day,
            month,
            utc_day,
            utc_hour,
            min_ms,
            max_ms,
            model,
            kind,
            copied: flags & 4 != 0,
            spends,
            sums: Sums {
                input: v[0],
                output: v[1],
                cache_read: v[2],
                cache_write: v[3],
                cost: v[4],
            },
        });
    }
    r.0.is_empty().then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one usage sum: a DOM and the raw bytes read the same, with pi's and omp's rules
    /// (numbers only, finite only, `cost.total` and never the parts of `cost`).
    #[test]
    fn tokens_of_a_dom_and_of_raw_bytes_agree() {
        let cases: [(&[u8], Tokens); 6] = [
            (
                br#"{"input":10,"output":5,"cacheRead":1,"cacheWrite":2,"totalTokens":18,"cost":{"input":0.1,"output":0.2,"total":0.5}}"#,
                Tokens { input: 10.0, output: 5.0, cache_read: 1.0, cache_write: 2.0, cost: 0.5 },
            ),
            // The parts of `cost` are not a total.
            (
                br#"{"input":3,"cost":{"input":0.1,"output":0.2}}"#,
                Tokens { input: 3.0, ..Tokens::default() },
            ),
            // Strings, nulls, objects and non-finite numbers count 0.
            (
                br#"{"input":"10","output":null,"cacheRead":{},"cacheWrite":1e400,"cost":{"total":"0.5"}}"#,
                Tokens::default(),
            ),
            (br#"{"cost":0.5}"#, Tokens::default()),
            (br#"[1,2]"#, Tokens::default()),
            (br#"7"#, Tokens::default()),
        ];
        for (raw, want) in cases {
            let text = String::from_utf8_lossy(raw);
            assert_eq!(Tokens::of_raw(raw), want, "raw {text}");
            let dom = JsValue::parse(raw).expect("test JSON parses");
            assert_eq!(Tokens::of(&dom), want, "dom {text}");
        }
        let mut t = Tokens::of_raw(br#"{"input":1,"output":2,"cost":{"total":0.25}}"#);
        t.add(&Tokens::of_raw(
            br#"{"input":4,"cacheWrite":8,"cost":{"total":0.5}}"#,
        ));
        assert_eq!(
            t,
            Tokens {
                input: 5.0,
                output: 2.0,
                cache_read: 0.0,
                cache_write: 8.0,
                cost: 0.75
            }
        );
    }

    #[test]
    fn sums_do_not_depend_on_order() {
        let xs = [0.1, 0.2, 0.3, 1e-7, 12.5, 0.000_123_4];
        let mut a = Sums::default();
        let mut b = Sums::default();
        for x in xs {
            a.add_tokens(&Tokens {
                cost: x,
                ..Tokens::default()
            });
        }
        for x in xs.iter().rev() {
            b.add_tokens(&Tokens {
                cost: *x,
                ..Tokens::default()
            });
        }
        assert_eq!(a, b);
        assert!((a.tokens().cost - xs.iter().sum::<f64>()).abs() < 1e-12);
    }

    #[test]
    fn buckets_round_trip() {
        let s = |id: &str, ts: Option<&str>, side: bool| Spend {
            entry_id: Some(id.into()),
            timestamp: ts.map(str::to_string),
            model: "p/m".into(),
            on_path: true,
            side,
            tokens: Tokens {
                input: 3.0,
                cost: 0.25,
                ..Tokens::default()
            },
        };
        let spends = [
            s("a", Some("2026-01-01T10:00:00Z"), false),
            s("b", Some("2026-01-01T10:30:00Z"), false),
            s("c", None, true),
            s("d", Some("2026-01"), false),
        ];
        let parent: HashSet<SpendKey> = [(Some("a".into()), Some("2026-01-01T10:00:00Z".into()))]
            .into_iter()
            .collect();
        let bs = buckets(&spends, Some(&parent), false);
        assert_eq!(bs.len(), 4);
        assert!(bs[0].copied && !bs[1].copied);
        assert_eq!(decode_buckets(&encode_buckets(&bs)), Some(bs.clone()));
        let merged = buckets(&spends, None, false);
        assert_eq!(merged.len(), 3);
        assert_eq!(merged[0].spends, 2);
        assert_eq!(merged[0].sums.tokens().cost, 0.5);
        assert_eq!(decode_buckets(&[1, 0, 0]), None);
    }
}
