//! V8's `Date.parse` / `new Date(string)` (`src/date/dateparser*.{h,cc}`): the ECMAScript
//! date-time string format first, then, for anything else, V8's legacy parser, which accepts
//! far more (`"2026-11-24 20:05:04Z"`, `"Nov 24 2026 20:05:05 GMT"`, `"2024/01/02"`, `"1"`,
//! `+0000` offsets, a lowercase `z`, days past the month's end rolled over, words in
//! parentheses ignored, ...). pi compares and carries timestamps through `new Date(...)`, so
//! arbor reads them the same way.
//!
//! **Time zone.** Forms without an offset (a date-time in ISO form, every legacy form without a
//! zone) are *local time* in V8; pi runs in its user's zone. arbor reads them as **UTC**, the
//! same answer pi gives with `TZ=UTC` (the goldens are made so): arbor's output does not depend
//! on the machine it runs on. pi itself writes `toISOString()` timestamps, which carry `Z`.

use crate::js::is_whitespace;

const NONE: i64 = i64::MAX;

#[derive(Clone, Copy, PartialEq, Debug)]
enum KwType {
    Invalid,
    MonthName,
    AmPm,
    TimeZoneName,
    TimeSeparator,
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Tok {
    Invalid,
    Unknown,
    Number { n: i64, len: usize },
    Symbol(char),
    WhiteSpace,
    Keyword { t: KwType, v: i64, len: usize },
    End,
}

impl Tok {
    fn is_number(self) -> bool {
        matches!(self, Tok::Number { .. })
    }
    fn is_fixed(self, l: usize) -> bool {
        matches!(self, Tok::Number { len, .. } if len == l)
    }
    fn num(self) -> i64 {
        match self {
            Tok::Number { n, .. } => n,
            _ => 0,
        }
    }
    fn is_sign(self) -> bool {
        matches!(self, Tok::Symbol('+' | '-'))
    }
    fn sign(self) -> i64 {
        if self == Tok::Symbol('-') {
            -1
        } else {
            1
        }
    }
    fn is_kw_z(self) -> bool {
        matches!(
            self,
            Tok::Keyword {
                t: KwType::TimeZoneName,
                v: 0,
                len: 1
            }
        )
    }
}

const KEYWORDS: &[(&[u8; 3], KwType, i64)] = &[
    (b"jan", KwType::MonthName, 1),
    (b"feb", KwType::MonthName, 2),
    (b"mar", KwType::MonthName, 3),
    (b"apr", KwType::MonthName, 4),
    (b"may", KwType::MonthName, 5),
    (b"jun", KwType::MonthName, 6),
    (b"jul", KwType::MonthName, 7),
    (b"aug", KwType::MonthName, 8),
    (b"sep", KwType::MonthName, 9),
    (b"oct", KwType::MonthName, 10),
    (b"nov", KwType::MonthName, 11),
    (b"dec", KwType::MonthName, 12),
    (b"am\0", KwType::AmPm, 0),
    (b"pm\0", KwType::AmPm, 12),
    (b"ut\0", KwType::TimeZoneName, 0),
    (b"utc", KwType::TimeZoneName, 0),
    (b"z\0\0", KwType::TimeZoneName, 0),
    (b"gmt", KwType::TimeZoneName, 0),
    (b"cdt", KwType::TimeZoneName, -5),
    (b"cst", KwType::TimeZoneName, -6),
    (b"edt", KwType::TimeZoneName, -4),
    (b"est", KwType::TimeZoneName, -5),
    (b"mdt", KwType::TimeZoneName, -6),
    (b"mst", KwType::TimeZoneName, -7),
    (b"pdt", KwType::TimeZoneName, -7),
    (b"pst", KwType::TimeZoneName, -8),
    (b"t\0\0", KwType::TimeSeparator, 0),
];

struct Scanner {
    s: Vec<char>,
    i: usize,
    next: Tok,
}

impl Scanner {
    fn new(s: &str) -> Scanner {
        let mut sc = Scanner {
            s: s.chars().collect(),
            i: 0,
            next: Tok::End,
        };
        sc.next = sc.scan();
        sc
    }
    fn ch(&self) -> Option<char> {
        self.s.get(self.i).copied()
    }
    fn scan(&mut self) -> Tok {
        let pre = self.i;
        let Some(c) = self.ch() else {
            return Tok::End;
        };
        if c.is_ascii_digit() {
            // ReadUnsignedNumeral: leading zeros skipped, 9 significant digits kept.
            let mut n = 0i64;
            let mut k = 0;
            while self.ch() == Some('0') {
                self.i += 1;
            }
            while let Some(d) = self.ch().filter(char::is_ascii_digit) {
                if k < 9 {
                    n = n * 10 + i64::from(d as u8 - b'0');
                }
                k += 1;
                self.i += 1;
            }
            return Tok::Number {
                n,
                len: self.i - pre,
            };
        }
        if matches!(c, ':' | '-' | '+' | '.' | ')') {
            self.i += 1;
            return Tok::Symbol(c);
        }
        if c >= 'A' && !is_whitespace(c) {
            let mut prefix = [0u8; 3];
            let mut len = 0;
            while let Some(w) = self.ch().filter(|&w| w >= 'A' && !is_whitespace(w)) {
                if len < 3 {
                    // AsciiAlphaToLower: `c | 0x20` for any character (V8 applies it to the
                    // UTF-16 unit); non-ASCII never matches a keyword.
                    prefix[len] = if w.is_ascii() { (w as u8) | 0x20 } else { 0xff };
                }
                len += 1;
                self.i += 1;
            }
            let (t, v) = KEYWORDS
                .iter()
                .find(|(k, t, _)| **k == prefix && (len <= 3 || *t == KwType::MonthName))
                .map_or((KwType::Invalid, 0), |&(_, t, v)| (t, v));
            return Tok::Keyword { t, v, len };
        }
        if is_whitespace(c) {
            self.i += 1;
            return Tok::WhiteSpace;
        }
        if c == '(' {
            let mut balance = 0;
            loop {
                match self.ch() {
                    Some(')') => balance -= 1,
                    Some('(') => balance += 1,
                    _ => {}
                }
                self.i += 1;
                if !(balance > 0 && self.i < self.s.len()) {
                    break;
                }
            }
            return Tok::Unknown;
        }
        self.i += 1;
        Tok::Unknown
    }
    fn next(&mut self) -> Tok {
        let t = self.next;
        self.next = self.scan();
        t
    }
    fn peek(&self) -> Tok {
        self.next
    }
    fn skip_symbol(&mut self, c: char) -> bool {
        if self.next == Tok::Symbol(c) {
            self.next();
            true
        } else {
            false
        }
    }
}

fn between(x: i64, lo: i64, hi: i64) -> bool {
    (lo..=hi).contains(&x)
}
fn is_month(x: i64) -> bool {
    between(x, 1, 12)
}
fn is_day(x: i64) -> bool {
    between(x, 1, 31)
}
fn is_hour(x: i64) -> bool {
    between(x, 0, 23)
}
fn is_minute(x: i64) -> bool {
    between(x, 0, 59)
}

#[derive(Default)]
struct Day {
    comp: [i64; 3],
    index: usize,
    named_month: Option<i64>,
    iso: bool,
}

impl Day {
    fn add(&mut self, n: i64) -> bool {
        if self.index < 3 {
            self.comp[self.index] = n;
            self.index += 1;
            true
        } else {
            false
        }
    }
    fn write(&mut self) -> Option<(i64, i64, i64)> {
        if self.index < 1 {
            return None;
        }
        while self.index < 3 {
            self.comp[self.index] = 1;
            self.index += 1;
        }
        let c = self.comp;
        let (mut year, month, day);
        match self.named_month {
            None => {
                if self.iso || !is_day(c[0]) {
                    (year, month, day) = (c[0], c[1], c[2]);
                } else {
                    (month, day, year) = (c[0], c[1], c[2]);
                }
            }
            Some(m) => {
                month = m;
                if !is_day(c[0]) {
                    (year, day) = (c[0], c[1]);
                } else {
                    (day, year) = (c[0], c[1]);
                }
            }
        }
        if !self.iso {
            if between(year, 0, 49) {
                year += 2000;
            } else if between(year, 50, 99) {
                year += 1900;
            }
        }
        if !is_month(month) || !is_day(day) {
            return None;
        }
        Some((year, month - 1, day))
    }
}

struct Time {
    comp: [i64; 4],
    index: usize,
    hour_offset: i64,
}

impl Time {
    fn new() -> Time {
        Time {
            comp: [0; 4],
            index: 0,
            hour_offset: NONE,
        }
    }
    fn is_empty(&self) -> bool {
        self.index == 0
    }
    fn is_expecting(&self, n: i64) -> bool {
        (self.index == 1 && is_minute(n))
            || (self.index == 2 && is_minute(n))
            || (self.index == 3 && between(n, 0, 999))
    }
    fn add(&mut self, n: i64) -> bool {
        if self.index < 4 {
            self.comp[self.index] = n;
            self.index += 1;
            true
        } else {
            false
        }
    }
    fn add_final(&mut self, n: i64) -> bool {
        if !self.add(n) {
            return false;
        }
        while self.index < 4 {
            self.comp[self.index] = 0;
            self.index += 1;
        }
        true
    }
    fn write(&mut self) -> Option<[i64; 4]> {
        while self.index < 4 {
            self.comp[self.index] = 0;
            self.index += 1;
        }
        let [mut h, m, s, ms] = self.comp;
        if self.hour_offset != NONE {
            if !between(h, 0, 12) {
                return None;
            }
            h %= 12;
            h += self.hour_offset;
        }
        if (!is_hour(h) || !is_minute(m) || !is_minute(s) || !between(ms, 0, 999))
            && (h != 24 || m != 0 || s != 0 || ms != 0)
        {
            return None;
        }
        Some([h, m, s, ms])
    }
}

struct Zone {
    sign: i64,
    hour: i64,
    minute: i64,
}

impl Zone {
    fn new() -> Zone {
        Zone {
            sign: NONE,
            hour: NONE,
            minute: NONE,
        }
    }
    fn set(&mut self, offset_hours: i64) {
        self.sign = if offset_hours < 0 { -1 } else { 1 };
        self.hour = offset_hours * self.sign;
        self.minute = 0;
    }
    fn is_expecting(&self, n: i64) -> bool {
        self.hour != NONE && self.minute == NONE && is_minute(n)
    }
    fn is_utc(&self) -> bool {
        self.hour == 0 && self.minute == 0
    }
    fn is_empty(&self) -> bool {
        self.hour == NONE
    }
    /// Offset in seconds; `Some(None)` is local time.
    fn write(&mut self) -> Option<Option<i64>> {
        if self.sign == NONE {
            return Some(None);
        }
        if self.hour == NONE {
            self.hour = 0;
        }
        if self.minute == NONE {
            self.minute = 0;
        }
        let total = self
            .hour
            .checked_mul(3600)?
            .checked_add(self.minute.checked_mul(60)?)?;
        if total > i64::from(i32::MAX >> 1) {
            return None;
        }
        Some(Some(if self.sign < 0 { -total } else { total }))
    }
}

fn read_ms(t: Tok) -> i64 {
    let (mut n, mut len) = match t {
        Tok::Number { n, len } => (n, len),
        _ => return 0,
    };
    if len == 1 {
        n *= 100;
    } else if len == 2 {
        n *= 10;
    } else if len > 3 {
        len = len.min(9);
        let mut f = 1;
        while len > 3 {
            f *= 10;
            len -= 1;
        }
        n /= f;
    }
    n
}

/// V8's `ParseES5DateTime`: the ISO form. Returns the first token it did not take (the legacy
/// parser goes on from there), `Tok::End` when the whole string was ISO, `Tok::Invalid` when
/// the string is not a date.
fn parse_es5(sc: &mut Scanner, day: &mut Day, time: &mut Time, tz: &mut Zone) -> Tok {
    if sc.peek().is_sign() {
        let sign_token = sc.next();
        if !sc.peek().is_fixed(6) {
            return sign_token;
        }
        let year = sc.next().num();
        if sign_token.sign() < 0 && year == 0 {
            return sign_token;
        }
        day.add(sign_token.sign() * year);
    } else if sc.peek().is_fixed(4) {
        let y = sc.next().num();
        day.add(y);
    } else {
        return sc.next();
    }
    if sc.skip_symbol('-') {
        if !sc.peek().is_fixed(2) || !is_month(sc.peek().num()) {
            return sc.next();
        }
        let m = sc.next().num();
        day.add(m);
        if sc.skip_symbol('-') {
            if !sc.peek().is_fixed(2) || !is_day(sc.peek().num()) {
                return sc.next();
            }
            let d = sc.next().num();
            day.add(d);
        }
    }
    if !matches!(
        sc.peek(),
        Tok::Keyword {
            t: KwType::TimeSeparator,
            ..
        }
    ) {
        if sc.peek() != Tok::End {
            return sc.next();
        }
    } else {
        sc.next();
        if !sc.peek().is_fixed(2) || !between(sc.peek().num(), 0, 24) {
            return Tok::Invalid;
        }
        let hour_is_24 = sc.peek().num() == 24;
        let h = sc.next().num();
        time.add(h);
        if !sc.skip_symbol(':') {
            return Tok::Invalid;
        }
        if !sc.peek().is_fixed(2)
            || !is_minute(sc.peek().num())
            || (hour_is_24 && sc.peek().num() > 0)
        {
            return Tok::Invalid;
        }
        let m = sc.next().num();
        time.add(m);
        if sc.skip_symbol(':') {
            if !sc.peek().is_fixed(2)
                || !is_minute(sc.peek().num())
                || (hour_is_24 && sc.peek().num() > 0)
            {
                return Tok::Invalid;
            }
            let s = sc.next().num();
            time.add(s);
            if sc.skip_symbol('.') {
                if !sc.peek().is_number() || (hour_is_24 && sc.peek().num() > 0) {
                    return Tok::Invalid;
                }
                let ms = read_ms(sc.next());
                time.add(ms);
            }
        }
        if sc.peek().is_kw_z() {
            sc.next();
            tz.set(0);
        } else if sc.peek().is_sign() {
            tz.sign = sc.next().sign();
            if sc.peek().is_fixed(4) {
                let hm = sc.next().num();
                let (h, m) = (hm / 100, hm % 100);
                if !is_hour(h) || !is_minute(m) {
                    return Tok::Invalid;
                }
                tz.hour = h;
                tz.minute = m;
            } else {
                if !sc.peek().is_fixed(2) || !is_hour(sc.peek().num()) {
                    return Tok::Invalid;
                }
                tz.hour = sc.next().num();
                if !sc.skip_symbol(':') {
                    return Tok::Invalid;
                }
                if !sc.peek().is_fixed(2) || !is_minute(sc.peek().num()) {
                    return Tok::Invalid;
                }
                tz.minute = sc.next().num();
            }
        }
        if sc.peek() != Tok::End {
            return Tok::Invalid;
        }
    }
    if tz.is_empty() && time.is_empty() {
        tz.set(0);
    }
    day.iso = true;
    Tok::End
}

/// `Date.parse(s)` as V8 computes it, in epoch milliseconds; `None` where V8 gives NaN. Forms
/// without a zone are read as UTC (module documentation).
pub fn parse(s: &str) -> Option<f64> {
    let mut sc = Scanner::new(s);
    let mut day = Day::default();
    let mut time = Time::new();
    let mut tz = Zone::new();
    let first = parse_es5(&mut sc, &mut day, &mut time, &mut tz);
    if first == Tok::Invalid {
        return None;
    }
    let mut has_read_number = day.index > 0;
    let mut token = first;
    while token != Tok::End {
        match token {
            Tok::Number { n, .. } => {
                has_read_number = true;
                if sc.skip_symbol(':') {
                    if sc.skip_symbol(':') {
                        if !time.is_empty() {
                            return None;
                        }
                        time.add(n);
                        time.add(0);
                    } else {
                        if !time.add(n) {
                            return None;
                        }
                        if sc.peek() == Tok::Symbol('.') {
                            sc.next();
                        }
                    }
                } else if sc.peek() == Tok::Symbol('.') && time.is_expecting(n) {
                    sc.next();
                    time.add(n);
                    if !sc.peek().is_number() {
                        return None;
                    }
                    let ms = read_ms(sc.next());
                    if ms < 0 {
                        return None;
                    }
                    time.add_final(ms);
                } else if tz.is_expecting(n) {
                    tz.minute = n;
                } else if time.is_expecting(n) {
                    time.add_final(n);
                    let p = sc.peek();
                    if !matches!(p, Tok::End | Tok::WhiteSpace) && !p.is_kw_z() && !p.is_sign() {
                        return None;
                    }
                } else {
                    if !day.add(n) {
                        return None;
                    }
                    sc.skip_symbol('-');
                }
            }
            Tok::Keyword { t, v, .. } => {
                if t == KwType::AmPm && !time.is_empty() {
                    time.hour_offset = v;
                } else if t == KwType::MonthName {
                    day.named_month = Some(v);
                    sc.skip_symbol('-');
                } else if t == KwType::TimeZoneName && has_read_number {
                    tz.set(v);
                } else {
                    // Garbage words are illegal once a number has been read, and the first
                    // number must be separated from them.
                    if has_read_number || sc.peek().is_number() {
                        return None;
                    }
                }
            }
            t if t.is_sign() && (tz.is_utc() || !time.is_empty()) => {
                tz.sign = t.sign();
                let (mut n, mut len) = (0, 0);
                if sc.peek().is_number() {
                    if let Tok::Number { n: v, len: l } = sc.next() {
                        (n, len) = (v, l);
                    }
                }
                has_read_number = true;
                if sc.peek() == Tok::Symbol(':') {
                    tz.hour = n;
                    tz.minute = NONE;
                } else if len == 1 || len == 2 {
                    tz.hour = n;
                    tz.minute = 0;
                } else if len == 3 || len == 4 {
                    tz.hour = n / 100;
                    tz.minute = n % 100;
                } else {
                    return None;
                }
            }
            t if (t.is_sign() || t == Tok::Symbol(')')) && has_read_number => return None,
            _ => {}
        }
        token = sc.next();
    }
    let (y, m, d) = day.write()?;
    let [h, mi, s, ms] = time.write()?;
    let offset = tz.write()?;
    let date =
        make_day(y, m, d)? * 86_400_000.0 + (h * 3_600_000 + mi * 60_000 + s * 1000 + ms) as f64;
    let utc = match offset {
        // Local time: read as UTC (see the module documentation).
        None => {
            if date.abs() > 8.64e15 + 864e5 * 1e3 {
                return None;
            }
            date
        }
        Some(off) => {
            let t = date - off as f64 * 1000.0;
            if t.abs() > 8.64e15 {
                return None;
            }
            t
        }
    };
    crate::js::valid_time(crate::js::time_clip(utc))
}

/// ECMAScript `MakeDay` (the month may be any integer; the day rolls over).
fn make_day(year: i64, month: i64, date: i64) -> Option<f64> {
    if !between(year, -1_000_000, 1_000_000) || !between(month, -10_000_000, 10_000_000) {
        return None;
    }
    let y = year + month.div_euclid(12);
    let m = month.rem_euclid(12);
    Some((crate::time::days_from_civil(y, m + 1, 1) + date - 1) as f64)
}
