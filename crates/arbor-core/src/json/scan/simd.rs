//! The SIMD kernels of the scanner (x86-64): string runs, escape checks and the canonical
//! check in 16-, 32- and 64-byte blocks (SSE2, AVX2, AVX-512), chosen at run time by what the
//! CPU has. Each kernel has a scalar twin in the parent module that the tests compare it with.
use super::hex4;
use std::arch::x86_64::{
    __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8, _mm_set1_epi8,
};

/// Where [`skip_string_blocks`] stopped.
pub(super) enum Skip {
    /// The string is valid and ends just before this index.
    Done(usize),
    /// Go on byte by byte from this index (outside any escape).
    From(usize),
}

const EVEN: u64 = 0x5555_5555_5555_5555;

/// The escape characters `JSON.parse` accepts after a backslash, except `u`.
static SIMPLE_ESCAPE: [bool; 256] = {
    let mut t = [false; 256];
    let ok = *b"\"\\/bfnrt";
    let mut k = 0;
    while k < ok.len() {
        t[ok[k] as usize] = true;
        k += 1;
    }
    t
};

/// Masks of one 16-byte lane: (quote, backslash, control byte < 0x20).
#[inline(always)]
fn lane(p: *const __m128i) -> (u64, u64, u64) {
    // SAFETY: callers pass a pointer to 16 readable bytes; SSE2 is part of x86_64.
    unsafe {
        let x = _mm_loadu_si128(p);
        let q = _mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8(b'"' as i8))) as u32 & 0xFFFF;
        let b = _mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8(b'\\' as i8))) as u32 & 0xFFFF;
        let c = _mm_set1_epi8(0x1F);
        let l = _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(x, c), c)) as u32 & 0xFFFF;
        (u64::from(q), u64::from(b), u64::from(l))
    }
}

/// Masks of a 64-byte block: (quote, backslash, control).
#[inline(always)]
fn masks64(block: &[u8; 64]) -> (u64, u64, u64) {
    let p = block.as_ptr() as *const __m128i;
    // SAFETY: `block` is 64 bytes: four 16-byte lanes.
    let (l0, l1, l2, l3) = unsafe { (lane(p), lane(p.add(1)), lane(p.add(2)), lane(p.add(3))) };
    (
        l0.0 | l1.0 << 16 | l2.0 << 32 | l3.0 << 48,
        l0.1 | l1.1 << 16 | l2.1 << 32 | l3.1 << 48,
        l0.2 | l1.2 << 16 | l2.2 << 32 | l3.2 << 48,
    )
}

/// Scans the string whose contents start at `pos` in 64-byte blocks (see
/// [`super::skip_string`]).
#[inline]
pub(super) fn skip_string_blocks(src: &[u8], pos: usize) -> Skip {
    // Short strings (keys, ids, types): the closing quote in the first 16 bytes with no
    // backslash or control byte before it.
    if let Some(head) = src.get(pos..pos + 16) {
        let (q, b, c) = lane(head.as_ptr() as *const __m128i);
        if q != 0 {
            let k = q.trailing_zeros();
            if (b | c) & ((1u64 << k) - 1) == 0 {
                return Skip::Done(pos + k as usize + 1);
            }
        }
    }
    if has_avx512() {
        // SAFETY: the CPU has AVX-512 F, BW and VBMI (checked at run time).
        return unsafe { blocks_avx512(src, pos) };
    }
    if has_avx2() {
        // SAFETY: the CPU has AVX2 (checked at run time).
        return unsafe { blocks_avx2(src, pos) };
    }
    blocks_sse2(src, pos)
}

/// How far ahead of the block being read the block loops ask for the input's bytes:
/// without it the loops wait on memory for most of a load of a mapped session, as if the
/// hardware prefetcher did not follow the stream (distances and timings measured:
/// docs/performance.md, "Figures behind code decisions").
const PREFETCH_AHEAD: usize = 4096;

/// Asks for the cache line [`PREFETCH_AHEAD`] bytes past the start of `block`.
#[inline(always)]
fn prefetch_ahead(block: &[u8]) {
    use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
    // SAFETY: a prefetch is only a hint: it never faults and never reads into the program,
    // whatever the address (here possibly past the end of the input or of its mapping).
    unsafe { _mm_prefetch::<_MM_HINT_T0>(block.as_ptr().wrapping_add(PREFETCH_AHEAD).cast()) }
}

/// Whether the CPU has AVX-512 F, BW and VBMI (detected once).
#[inline(always)]
pub(super) fn has_avx512() -> bool {
    use std::sync::atomic::{AtomicU8, Ordering};
    static AVX512: AtomicU8 = AtomicU8::new(0);
    match AVX512.load(Ordering::Relaxed) {
        1 => false,
        2 => true,
        _ => {
            let yes = std::is_x86_feature_detected!("avx512f")
                && std::is_x86_feature_detected!("avx512bw")
                && std::is_x86_feature_detected!("avx512vbmi");
            AVX512.store(if yes { 2 } else { 1 }, Ordering::Relaxed);
            yes
        }
    }
}

/// The characters `JSON.parse` accepts after a backslash (`" \\ / b f n r t u`), as a
/// 128-byte table for `vpermi2b`: nonzero at their codes.
static ESCAPE_TABLE: [u8; 128] = byte_table(b"\"\\/bfnrtu");

/// A 128-byte `vpermi2b` table: 1 at the codes of `bytes`, 0 elsewhere.
const fn byte_table(bytes: &[u8]) -> [u8; 128] {
    let mut t = [0u8; 128];
    let mut k = 0;
    while k < bytes.len() {
        t[bytes[k] as usize & 0x7F] = 1;
        k += 1;
    }
    t
}

/// The registers both AVX-512 string scans start with: an escape table's two halves for
/// `vpermi2b`, and `"`, `\\`, `u` and 0x20 in every byte.
struct Avx512Regs {
    tab_lo: std::arch::x86_64::__m512i,
    tab_hi: std::arch::x86_64::__m512i,
    quote: std::arch::x86_64::__m512i,
    backslash: std::arch::x86_64::__m512i,
    u: std::arch::x86_64::__m512i,
    space: std::arch::x86_64::__m512i,
}

impl Avx512Regs {
    /// Loads the escape table and the constant registers.
    ///
    /// # Safety
    /// The CPU must have AVX-512 F, BW and VBMI (the dispatcher checks with `is_x86_feature_detected!`
    /// before it calls this).
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
    #[inline]
    unsafe fn new(table: &[u8; 128]) -> Avx512Regs {
        use std::arch::x86_64::{_mm512_loadu_si512, _mm512_set1_epi8};
        Avx512Regs {
            // SAFETY: `table` is 128 bytes: bytes 0..64 and 64..128 are read (unaligned loads).
            tab_lo: unsafe { _mm512_loadu_si512(table.as_ptr().cast()) },
            // SAFETY: as above, the upper 64 bytes.
            tab_hi: unsafe { _mm512_loadu_si512(table.as_ptr().add(64).cast()) },
            quote: _mm512_set1_epi8(b'"' as i8),
            backslash: _mm512_set1_epi8(b'\\' as i8),
            u: _mm512_set1_epi8(b'u' as i8),
            space: _mm512_set1_epi8(0x20),
        }
    }
}

/// AVX-512 blocks: one 64-byte register per block, the masks straight from the compares,
/// the escape characters checked with one two-register byte permute (VBMI) for the whole
/// block. Same logic as [`blocks_avx2`] otherwise.
///
/// # Safety
/// The CPU must have AVX-512 F, BW and VBMI (the dispatcher checks with `is_x86_feature_detected!`
/// before it calls this).
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
pub(super) unsafe fn blocks_avx512(src: &[u8], pos: usize) -> Skip {
    use std::arch::x86_64::{
        _mm512_cmpeq_epi8_mask, _mm512_cmplt_epu8_mask, _mm512_loadu_si512, _mm512_movepi8_mask,
        _mm512_or_si512, _mm512_permutex2var_epi8, _mm512_set1_epi8, _mm512_sub_epi8,
        _mm512_test_epi8_mask,
    };
    // SAFETY: this function runs only where the CPU has the features `new` needs (the
    // caller checked them, as this function's own contract requires).
    let r = unsafe { Avx512Regs::new(&ESCAPE_TABLE) };
    let (zero_char, ten) = (_mm512_set1_epi8(b'0' as i8), _mm512_set1_epi8(10));
    let (case_bit, a_char, six) = (
        _mm512_set1_epi8(0x20),
        _mm512_set1_epi8(b'a' as i8),
        _mm512_set1_epi8(6),
    );
    let mut i = pos;
    let mut carry = 0u64;
    while let Some(block) = src.get(i..i + 64) {
        prefetch_ahead(block);
        // SAFETY: `block` is a 64-byte slice of `src`: the unaligned load stays in it.
        let x = unsafe { _mm512_loadu_si512(block.as_ptr().cast()) };
        let q = _mm512_cmpeq_epi8_mask(x, r.quote);
        let bs = _mm512_cmpeq_epi8_mask(x, r.backslash);
        let ctl = _mm512_cmplt_epu8_mask(x, r.space);
        let um = _mm512_cmpeq_epi8_mask(x, r.u);
        // Table lookup by the low 7 bits; bytes >= 0x80 are never valid escapes.
        let t = _mm512_permutex2var_epi8(r.tab_lo, x, r.tab_hi);
        let ok = _mm512_test_epi8_mask(t, t) & !_mm512_movepi8_mask(x);
        let (ends, inside, escaped, overflow) = escapes(q, bs, carry);
        let esc = escaped & inside;
        if (ctl & inside) | (esc & !ok) != 0 {
            return Skip::From(restart(i, carry));
        }
        let us = esc & um;
        if us != 0 {
            // Each `\\u` is followed by four hex digits: checked for the whole block at
            // once with the hex-digit masks of this block and the next (escapes near the
            // end of the input go byte by byte).
            let hex_ok = match src.get(i + 64..i + 128) {
                Some(next) => {
                    let hex = |v| {
                        let digit = _mm512_cmplt_epu8_mask(_mm512_sub_epi8(v, zero_char), ten);
                        let lower = _mm512_or_si512(v, case_bit);
                        let letter = _mm512_cmplt_epu8_mask(_mm512_sub_epi8(lower, a_char), six);
                        digit | letter
                    };
                    // SAFETY: `next` is a 64-byte slice of `src`.
                    let y = unsafe { _mm512_loadu_si512(next.as_ptr().cast()) };
                    let h = u128::from(hex(x)) | u128::from(hex(y)) << 64;
                    let four = (h >> 1) & (h >> 2) & (h >> 3) & (h >> 4);
                    u128::from(us) & !four == 0
                }
                None => u_escapes_have_hex(src, i, us),
            };
            if !hex_ok {
                return Skip::From(restart(i, carry));
            }
        }
        if ends != 0 {
            return Skip::Done(i + ends.trailing_zeros() as usize + 1);
        }
        carry = u64::from(overflow);
        i += 64;
    }
    Skip::From(restart(i, carry))
}

/// Whether the CPU has AVX2 (detected once).
#[inline(always)]
pub(super) fn has_avx2() -> bool {
    use std::sync::atomic::{AtomicU8, Ordering};
    static AVX2: AtomicU8 = AtomicU8::new(0);
    match AVX2.load(Ordering::Relaxed) {
        1 => false,
        2 => true,
        _ => {
            let yes = std::is_x86_feature_detected!("avx2");
            AVX2.store(if yes { 2 } else { 1 }, Ordering::Relaxed);
            yes
        }
    }
}

/// The bits below `pos`'s string end, the escaped bits and the carry of one block, from its
/// quote and backslash masks (simdjson's find_escaped_branchless).
#[inline(always)]
fn escapes(q: u64, bs: u64, carry: u64) -> (u64, u64, u64, bool) {
    let bs = bs & !carry;
    let follows = (bs << 1) | carry;
    let odd_starts = bs & !EVEN & !follows;
    let (even_seq, overflow) = odd_starts.overflowing_add(bs);
    let escaped = (EVEN ^ (even_seq << 1)) & follows;
    let ends = q & !escaped;
    let inside = if ends == 0 {
        u64::MAX
    } else {
        (ends & ends.wrapping_neg()) - 1
    };
    (ends, inside, escaped, overflow)
}

/// Whether every escaped `u` of the block at `i` (bits of `us`) has four hex digits after it.
#[inline(always)]
fn u_escapes_have_hex(src: &[u8], i: usize, mut us: u64) -> bool {
    while us != 0 {
        if hex4(src, i + us.trailing_zeros() as usize + 1).is_err() {
            return false;
        }
        us &= us - 1;
    }
    true
}

#[inline(always)]
fn restart(i: usize, carry: u64) -> usize {
    if carry != 0 {
        i - 1
    } else {
        i
    }
}

/// AVX2 blocks: the escape characters are checked with a nibble lookup for the whole
/// block, so only `\\u` escapes are looked at one by one.
///
/// # Safety
/// The CPU must have AVX2 (the dispatcher checks with `is_x86_feature_detected!`
/// before it calls this).
#[target_feature(enable = "avx2")]
pub(super) unsafe fn blocks_avx2(src: &[u8], pos: usize) -> Skip {
    use std::arch::x86_64::{
        __m256i, _mm256_and_si256, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_max_epu8,
        _mm256_movemask_epi8, _mm256_set1_epi8, _mm256_setr_epi8, _mm256_setzero_si256,
        _mm256_shuffle_epi8, _mm256_srli_epi16,
    };
    // Valid escape characters `" / \\ b f n r t u` as (high nibble, low nibble) pairs: the
    // low-nibble table holds a bit per high nibble that completes a valid character.
    #[rustfmt::skip]
    let lo_tab = _mm256_setr_epi8(
        0, 0, 0xC4u8 as i8, 0, 0x80u8 as i8, 0x80u8 as i8, 0x40, 0, 0, 0, 0, 0, 0x20, 0, 0x40, 0x04,
        0, 0, 0xC4u8 as i8, 0, 0x80u8 as i8, 0x80u8 as i8, 0x40, 0, 0, 0, 0, 0, 0x20, 0, 0x40, 0x04,
    );
    #[rustfmt::skip]
    let hi_tab = _mm256_setr_epi8(
        1, 2, 4, 8, 16, 32, 64, 0x80u8 as i8, 0, 0, 0, 0, 0, 0, 0, 0,
        1, 2, 4, 8, 16, 32, 64, 0x80u8 as i8, 0, 0, 0, 0, 0, 0, 0, 0,
    );
    let quote = _mm256_set1_epi8(b'"' as i8);
    let backslash = _mm256_set1_epi8(b'\\' as i8);
    let u = _mm256_set1_epi8(b'u' as i8);
    let c1f = _mm256_set1_epi8(0x1F);
    let nib = _mm256_set1_epi8(0x0F);
    let zero = _mm256_setzero_si256();
    // (quote, backslash, control, valid escape char, u) masks of 32 bytes.
    let half = |p: *const __m256i| -> (u64, u64, u64, u64, u64) {
        // SAFETY: `half` is only given pointers to 32-byte halves of a 64-byte block
        // of `src` (below).
        let x = unsafe { _mm256_loadu_si256(p) };
        let m = |v| u64::from(_mm256_movemask_epi8(v) as u32);
        let lo = _mm256_and_si256(x, nib);
        let hi = _mm256_and_si256(_mm256_srli_epi16(x, 4), nib);
        let hit = _mm256_and_si256(
            _mm256_shuffle_epi8(lo_tab, lo),
            _mm256_shuffle_epi8(hi_tab, hi),
        );
        (
            m(_mm256_cmpeq_epi8(x, quote)),
            m(_mm256_cmpeq_epi8(x, backslash)),
            m(_mm256_cmpeq_epi8(_mm256_max_epu8(x, c1f), c1f)),
            !m(_mm256_cmpeq_epi8(hit, zero)) & 0xFFFF_FFFF,
            m(_mm256_cmpeq_epi8(x, u)),
        )
    };
    let mut i = pos;
    let mut carry = 0u64;
    while let Some(block) = src.get(i..i + 64) {
        prefetch_ahead(block);
        let p = block.as_ptr() as *const __m256i;
        // SAFETY: `p` points at a 64-byte block of `src`: `p` and `p + 32 bytes` are its
        // two halves.
        let (a, b) = (half(p), half(unsafe { p.add(1) }));
        let (q, bs, ctl, ok, um) = (
            a.0 | b.0 << 32,
            a.1 | b.1 << 32,
            a.2 | b.2 << 32,
            a.3 | b.3 << 32,
            a.4 | b.4 << 32,
        );
        let (ends, inside, escaped, overflow) = escapes(q, bs, carry);
        let esc = escaped & inside;
        if (ctl & inside) | (esc & !ok) != 0 {
            return Skip::From(restart(i, carry));
        }
        if !u_escapes_have_hex(src, i, esc & um) {
            return Skip::From(restart(i, carry));
        }
        if ends != 0 {
            return Skip::Done(i + ends.trailing_zeros() as usize + 1);
        }
        carry = u64::from(overflow);
        i += 64;
    }
    Skip::From(restart(i, carry))
}

/// With AVX2: `Some(end)` when the string whose contents start at `pos` is valid and
/// already exactly what `JSON.stringify` writes (only the escapes it uses, lowercase
/// `\\u` escapes only for controls without a short form and lone surrogates, valid UTF-8),
/// `end` being the index past its closing quote; `None` when that is not certain (no
/// AVX2, an escape to rewrite, a control byte, invalid UTF-8, the last 64 bytes of the
/// input): the caller then transcodes the string byte by byte.
#[inline]
pub(crate) fn canonical_string_end(src: &[u8], pos: usize) -> Option<usize> {
    if let Some(head) = src.get(pos..pos + 16) {
        let (q, b, c) = lane(head.as_ptr() as *const __m128i);
        if q != 0 {
            let k = q.trailing_zeros();
            let before = (1u64 << k) - 1;
            if (b | c) & before == 0 && head.get(..k as usize).is_some_and(|h| h.is_ascii()) {
                return Some(pos + k as usize + 1);
            }
        }
    }
    if has_avx512() {
        // SAFETY: the CPU has AVX-512 F, BW and VBMI (checked at run time).
        return unsafe { canonical_avx512(src, pos) };
    }
    if !has_avx2() {
        return None;
    }
    // SAFETY: the CPU has AVX2 (checked at run time).
    unsafe { canonical_avx2(src, pos) }
}

/// The characters after a backslash that `JSON.stringify` writes (`" \\ b f n r t`, and
/// `u`, whose escapes are checked one by one; not `/`), as a 128-byte `vpermi2b` table.
static CANONICAL_ESCAPE_TABLE: [u8; 128] = byte_table(b"\"\\bfnrtu");

/// [`canonical_avx2`] with one 64-byte register per block and the escape characters
/// checked with one byte permute (as [`blocks_avx512`]); same answers.
///
/// # Safety
/// The CPU must have AVX-512 F, BW and VBMI (the dispatcher checks with `is_x86_feature_detected!`
/// before it calls this).
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
pub(super) unsafe fn canonical_avx512(src: &[u8], pos: usize) -> Option<usize> {
    use std::arch::x86_64::{
        _mm512_cmpeq_epi8_mask, _mm512_cmplt_epu8_mask, _mm512_loadu_si512, _mm512_movepi8_mask,
        _mm512_permutex2var_epi8, _mm512_test_epi8_mask,
    };
    // SAFETY: the caller checked the CPU features, as this function's contract requires.
    let r = unsafe { Avx512Regs::new(&CANONICAL_ESCAPE_TABLE) };
    canonical_blocks(src, pos, |block| {
        // SAFETY: `block` is a 64-byte slice of `src`.
        let x = unsafe { _mm512_loadu_si512(block.as_ptr().cast()) };
        let non_ascii = _mm512_movepi8_mask(x);
        let t = _mm512_permutex2var_epi8(r.tab_lo, x, r.tab_hi);
        [
            _mm512_cmpeq_epi8_mask(x, r.quote),
            _mm512_cmpeq_epi8_mask(x, r.backslash),
            _mm512_cmplt_epu8_mask(x, r.space),
            _mm512_test_epi8_mask(t, t) & !non_ascii,
            _mm512_cmpeq_epi8_mask(x, r.u),
            non_ascii,
        ]
    })
}

/// The loop of the canonical check, shared by its AVX2 and AVX-512 versions (inlined into
/// each): `masks` gives a 64-byte block's masks of quotes, backslashes, control bytes,
/// escape characters `JSON.stringify` writes, `u` and non-ASCII bytes.
#[inline(always)]
fn canonical_blocks(src: &[u8], pos: usize, masks: impl Fn(&[u8]) -> [u64; 6]) -> Option<usize> {
    let mut i = pos;
    let mut carry = 0u64;
    let mut first_non_ascii: Option<usize> = None;
    loop {
        // The last block of the input is padded with NULs (control bytes: a string that
        // does not end before them is not accepted), so that a long string ending near
        // the end of the value is not re-done byte by byte as a whole.
        let mut padded = [0u8; 64];
        let block: &[u8] = match src.get(i..i + 64) {
            Some(b) => b,
            None => {
                let rest = src.get(i..).filter(|r| !r.is_empty())?;
                padded.get_mut(..rest.len())?.copy_from_slice(rest);
                &padded
            }
        };
        prefetch_ahead(block);
        let [q, bs, ctl, kept, um, non_ascii] = masks(block);
        let (ends, inside, escaped, overflow) = escapes(q, bs, carry);
        let esc = escaped & inside;
        if (ctl & inside) | (esc & !kept) != 0 {
            return None;
        }
        let mut us = esc & um;
        while us != 0 {
            // The backslash is just before the `u` (possibly at the end of the last block).
            if !u_escape_is_canonical(src, i + us.trailing_zeros() as usize - 1) {
                return None;
            }
            us &= us - 1;
        }
        let na = non_ascii & inside;
        if na != 0 && first_non_ascii.is_none() {
            first_non_ascii = Some(i + na.trailing_zeros() as usize);
        }
        if ends != 0 {
            let q = i + ends.trailing_zeros() as usize;
            if let Some(f) = first_non_ascii {
                simdutf8::basic::from_utf8(src.get(f..q)?).ok()?;
            }
            return Some(q + 1);
        }
        if std::ptr::eq(block.as_ptr(), padded.as_ptr()) {
            return None;
        }
        carry = u64::from(overflow);
        i += 64;
    }
}

/// Whether the `\\u` escape whose backslash is at `p` is spelled as `JSON.stringify`
/// spells it: a lone surrogate, or a control byte without a short escape, lowercase hex.
#[inline]
fn u_escape_is_canonical(src: &[u8], p: usize) -> bool {
    let Ok((cp, next)) = super::decode_escape(src, p) else {
        return false;
    };
    next == p + 6
        && ((cp < 0x20 && !matches!(cp, 0x08 | 0x09 | 0x0A | 0x0C | 0x0D))
            || (0xD800..0xE000).contains(&cp))
        && src
            .get(p + 2..p + 6)
            .is_some_and(|h| h.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')))
}

///
/// # Safety
/// The CPU must have AVX2 (the dispatcher checks with `is_x86_feature_detected!`
/// before it calls this).
#[target_feature(enable = "avx2")]
pub(super) unsafe fn canonical_avx2(src: &[u8], pos: usize) -> Option<usize> {
    use std::arch::x86_64::{
        __m256i, _mm256_and_si256, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_max_epu8,
        _mm256_movemask_epi8, _mm256_set1_epi8, _mm256_setr_epi8, _mm256_setzero_si256,
        _mm256_shuffle_epi8, _mm256_srli_epi16,
    };
    // The escape characters JSON.stringify writes: `" \\ b f n r t`, and `u` (checked one
    // by one); not `/`. Same nibble scheme as in `blocks_avx2`.
    #[rustfmt::skip]
    let lo_tab = _mm256_setr_epi8(
        0, 0, 0xC4u8 as i8, 0, 0x80u8 as i8, 0x80u8 as i8, 0x40, 0, 0, 0, 0, 0, 0x20, 0, 0x40, 0,
        0, 0, 0xC4u8 as i8, 0, 0x80u8 as i8, 0x80u8 as i8, 0x40, 0, 0, 0, 0, 0, 0x20, 0, 0x40, 0,
    );
    #[rustfmt::skip]
    let hi_tab = _mm256_setr_epi8(
        1, 2, 4, 8, 16, 32, 64, 0x80u8 as i8, 0, 0, 0, 0, 0, 0, 0, 0,
        1, 2, 4, 8, 16, 32, 64, 0x80u8 as i8, 0, 0, 0, 0, 0, 0, 0, 0,
    );
    let quote = _mm256_set1_epi8(b'"' as i8);
    let backslash = _mm256_set1_epi8(b'\\' as i8);
    let u = _mm256_set1_epi8(b'u' as i8);
    let c1f = _mm256_set1_epi8(0x1F);
    let nib = _mm256_set1_epi8(0x0F);
    let zero = _mm256_setzero_si256();
    // (quote, backslash, control, kept escape char, u, non-ASCII) masks of 32 bytes.
    let half = |p: *const __m256i| -> [u64; 6] {
        // SAFETY: `half` is only given pointers to 32-byte halves of a 64-byte block
        // of `src` (below).
        let x = unsafe { _mm256_loadu_si256(p) };
        let m = |v| u64::from(_mm256_movemask_epi8(v) as u32);
        let lo = _mm256_and_si256(x, nib);
        let hi = _mm256_and_si256(_mm256_srli_epi16(x, 4), nib);
        let hit = _mm256_and_si256(
            _mm256_shuffle_epi8(lo_tab, lo),
            _mm256_shuffle_epi8(hi_tab, hi),
        );
        [
            m(_mm256_cmpeq_epi8(x, quote)),
            m(_mm256_cmpeq_epi8(x, backslash)),
            m(_mm256_cmpeq_epi8(_mm256_max_epu8(x, c1f), c1f)),
            !m(_mm256_cmpeq_epi8(hit, zero)) & 0xFFFF_FFFF,
            m(_mm256_cmpeq_epi8(x, u)),
            m(x),
        ]
    };
    canonical_blocks(src, pos, |block| {
        let p = block.as_ptr() as *const __m256i;
        // SAFETY: `block` is 64 bytes: two 32-byte halves.
        let (a, b) = unsafe { (half(p), half(p.add(1))) };
        std::array::from_fn(|k| a[k] | b[k] << 32)
    })
}

/// SSE2 blocks (every x86_64 CPU).
pub(super) fn blocks_sse2(src: &[u8], pos: usize) -> Skip {
    let mut i = pos;
    // 1 when the first byte of the block is escaped by a backslash ending the last block.
    let mut carry = 0u64;
    while let Some(block) = src
        .get(i..i + 64)
        .and_then(|b| <&[u8; 64]>::try_from(b).ok())
    {
        prefetch_ahead(block);
        let (q, bs, ctl) = masks64(block);
        let (ends, inside, escaped, overflow) = escapes(q, bs, carry);
        if ctl & inside != 0 {
            return Skip::From(restart(i, carry));
        }
        let mut esc = escaped & inside;
        while esc != 0 {
            let k = esc.trailing_zeros() as usize;
            let c = block[k];
            if !(SIMPLE_ESCAPE[c as usize] || (c == b'u' && hex4(src, i + k + 1).is_ok())) {
                return Skip::From(restart(i, carry));
            }
            esc &= esc - 1;
        }
        if ends != 0 {
            return Skip::Done(i + ends.trailing_zeros() as usize + 1);
        }
        carry = u64::from(overflow);
        i += 64;
    }
    Skip::From(restart(i, carry))
}
