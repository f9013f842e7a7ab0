//! f64 lanes and the handful of operations the lane code needs, written
//! once over [`Vector`] and compiled for each [`Level`] the CPU may have
//! (chosen at run time by [`Level::best`]): eight lanes as portable arrays,
//! as one AVX-512 register or as two AVX registers ([`Avx2`]), and four
//! lanes in one AVX register ([`Avx4`], the lane engine's halves on AVX2).
//!
//! Every operation is a plain IEEE-754 operation on each lane — no fused
//! multiply-add, no approximate reciprocal — so all of them give the scalar
//! code's bits.
//!
//! The vector types call intrinsics in safe methods: they are sound because
//! they are only used inside functions compiled for their features
//! (`#[target_feature]`), which are only called at a level
//! [`Level::best`] reported.

/// Lanes per vector: 8 f64 fill one AVX-512 register (two AVX ones).
pub const LANES: usize = 8;

pub(crate) type Lanes = [f64; LANES];

/// The vector instructions a kernel is compiled for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Portable code (SSE2 on x86-64).
    Portable,
    /// AVX and AVX2 (256-bit vectors): x86-64 CPUs since 2013.
    Avx2,
    /// AVX-512 with the BW and VL extensions and BMI1.
    Avx512,
}

impl Level {
    /// The widest level this CPU runs (checked once). Every function
    /// compiled for a level enables at most the features checked here.
    pub fn best() -> Level {
        use std::sync::OnceLock;
        static BEST: OnceLock<Level> = OnceLock::new();
        *BEST.get_or_init(detect)
    }

    /// Every level this CPU runs, narrowest first (tests compare them).
    pub fn available() -> Vec<Level> {
        [Level::Portable, Level::Avx2, Level::Avx512]
            .into_iter()
            .filter(|&l| l <= Level::best())
            .collect()
    }
}

impl PartialOrd for Level {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Level {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (*self as u8).cmp(&(*other as u8))
    }
}

#[cfg(target_arch = "x86_64")]
fn detect() -> Level {
    use std::is_x86_feature_detected as has;
    // Each level includes the ones below it (tests run them all).
    let avx2 = has!("avx") && has!("avx2");
    let found = if avx2 && has!("avx512f") && has!("avx512bw") && has!("avx512vl") && has!("bmi1") {
        Level::Avx512
    } else if avx2 {
        Level::Avx2
    } else {
        Level::Portable
    };
    // `SIEVE_SIMD=avx2` (or `portable`) runs a lower level than the CPU
    // has: what a machine without AVX-512 runs, measured on one with it.
    match std::env::var("SIEVE_SIMD")
        .map(|v| v.to_ascii_lowercase())
        .as_deref()
    {
        Ok("avx2") => found.min(Level::Avx2),
        Ok("portable") => Level::Portable,
        _ => found,
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn detect() -> Level {
    Level::Portable
}

/// `W` f64 lanes.
pub(crate) trait Vector<const W: usize>: Copy {
    type Mask: Copy;
    fn splat(x: f64) -> Self;
    fn load(a: &[f64; W]) -> Self;
    fn store(self, a: &mut [f64; W]);
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn div(self, o: Self) -> Self;
    fn lt(self, o: Self) -> Self::Mask;
    fn gt(self, o: Self) -> Self::Mask;
    fn le(self, o: Self) -> Self::Mask;
    fn ge(self, o: Self) -> Self::Mask;
    /// `!(self < o)`: unlike `ge`, true where either side is NaN.
    fn not_lt(self, o: Self) -> Self::Mask;
    /// `!(self > o)`, true on NaN.
    fn not_gt(self, o: Self) -> Self::Mask;
    /// `!(self <= o)`, true on NaN.
    fn not_le(self, o: Self) -> Self::Mask;
    /// `!(self >= o)`, true on NaN.
    fn not_ge(self, o: Self) -> Self::Mask;
    fn and(a: Self::Mask, b: Self::Mask) -> Self::Mask;
    /// `a and not b`.
    fn and_not(a: Self::Mask, b: Self::Mask) -> Self::Mask;
    fn any(m: Self::Mask) -> bool;
    /// Bit l set where lane l of `m` is.
    fn bits(m: Self::Mask) -> u8;
    /// `if m { a } else { b }`, per lane.
    fn select(m: Self::Mask, a: Self, b: Self) -> Self;
    /// `if m { a } else { b }`, per lane, of masks.
    fn pick(m: Self::Mask, a: Self::Mask, b: Self::Mask) -> Self::Mask;
    /// `if self > o { self } else { o }`, per lane (the rule of `maxpd`).
    #[inline(always)]
    fn max(self, o: Self) -> Self {
        Self::select(self.gt(o), self, o)
    }
    /// `if self < o { self } else { o }`, per lane (the rule of `minpd`).
    #[inline(always)]
    fn min(self, o: Self) -> Self {
        Self::select(self.lt(o), self, o)
    }
    /// 64 bytes of lane bits (as [`Vector::bits`] gives them) turned into a
    /// word per lane: bit `i` of `out[l]` is bit `l` of `marks[i]`.
    #[inline(always)]
    fn transpose(marks: &[u8; 64]) -> [u64; 8] {
        // Multiplying bit 0 of each of 8 bytes by this constant gathers
        // them, byte k's bit at bit 56 + k, without carries into the top
        // byte.
        const GATHER: u64 = 0x0102_0408_1020_4080;
        std::array::from_fn(|lane| {
            let mut bits = 0;
            for (k, eight) in marks.chunks_exact(8).enumerate() {
                let word = u64::from_le_bytes(eight.try_into().expect("eight bytes"));
                let ones = (word >> lane) & 0x0101_0101_0101_0101;
                bits |= (ones.wrapping_mul(GATHER) >> 56) << (8 * k);
            }
            bits
        })
    }
}

/// Arrays the compiler vectorizes as well as it can.
#[derive(Clone, Copy)]
pub(crate) struct Portable(Lanes);

// The negated comparisons are meant: they are true on NaN.
#[allow(clippy::neg_cmp_op_on_partial_ord)]
impl Vector<LANES> for Portable {
    type Mask = [bool; LANES];
    #[inline(always)]
    fn splat(x: f64) -> Self {
        Portable([x; LANES])
    }
    #[inline(always)]
    fn load(a: &Lanes) -> Self {
        Portable(*a)
    }
    #[inline(always)]
    fn store(self, a: &mut Lanes) {
        *a = self.0;
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        Portable(std::array::from_fn(|l| self.0[l] + o.0[l]))
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        Portable(std::array::from_fn(|l| self.0[l] - o.0[l]))
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        Portable(std::array::from_fn(|l| self.0[l] * o.0[l]))
    }
    #[inline(always)]
    fn div(self, o: Self) -> Self {
        Portable(std::array::from_fn(|l| self.0[l] / o.0[l]))
    }
    #[inline(always)]
    fn lt(self, o: Self) -> Self::Mask {
        std::array::from_fn(|l| self.0[l] < o.0[l])
    }
    #[inline(always)]
    fn gt(self, o: Self) -> Self::Mask {
        std::array::from_fn(|l| self.0[l] > o.0[l])
    }
    #[inline(always)]
    fn le(self, o: Self) -> Self::Mask {
        std::array::from_fn(|l| self.0[l] <= o.0[l])
    }
    #[inline(always)]
    fn ge(self, o: Self) -> Self::Mask {
        std::array::from_fn(|l| self.0[l] >= o.0[l])
    }
    #[inline(always)]
    fn not_lt(self, o: Self) -> Self::Mask {
        std::array::from_fn(|l| !(self.0[l] < o.0[l]))
    }
    #[inline(always)]
    fn not_gt(self, o: Self) -> Self::Mask {
        std::array::from_fn(|l| !(self.0[l] > o.0[l]))
    }
    #[inline(always)]
    fn not_le(self, o: Self) -> Self::Mask {
        std::array::from_fn(|l| !(self.0[l] <= o.0[l]))
    }
    #[inline(always)]
    fn not_ge(self, o: Self) -> Self::Mask {
        std::array::from_fn(|l| !(self.0[l] >= o.0[l]))
    }
    #[inline(always)]
    fn and(a: Self::Mask, b: Self::Mask) -> Self::Mask {
        std::array::from_fn(|l| a[l] & b[l])
    }
    #[inline(always)]
    fn and_not(a: Self::Mask, b: Self::Mask) -> Self::Mask {
        std::array::from_fn(|l| a[l] & !b[l])
    }
    #[inline(always)]
    fn any(m: Self::Mask) -> bool {
        m.iter().any(|&b| b)
    }
    #[inline(always)]
    fn bits(m: Self::Mask) -> u8 {
        m.iter()
            .enumerate()
            .fold(0, |b, (l, &on)| b | (u8::from(on) << l))
    }
    #[inline(always)]
    fn select(m: Self::Mask, a: Self, b: Self) -> Self {
        Portable(std::array::from_fn(|l| if m[l] { a.0[l] } else { b.0[l] }))
    }
    #[inline(always)]
    fn pick(m: Self::Mask, a: Self::Mask, b: Self::Mask) -> Self::Mask {
        std::array::from_fn(|l| if m[l] { a[l] } else { b[l] })
    }
}

/// One AVX-512 register. Only constructed inside functions compiled with
/// `avx512f` (after [`Level::best`] said so), which is what makes the intrinsic
/// calls below sound.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub(crate) struct Avx512(std::arch::x86_64::__m512d);

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::{Avx512, Lanes, Vector, LANES};
    use std::arch::x86_64::*;

    // SAFETY (every block below): these run inlined into functions compiled
    // with avx512f, called only after the CPU was checked for it.
    impl Vector<LANES> for Avx512 {
        type Mask = __mmask8;
        #[inline(always)]
        fn splat(x: f64) -> Self {
            Avx512(unsafe { _mm512_set1_pd(x) })
        }
        #[inline(always)]
        fn load(a: &Lanes) -> Self {
            Avx512(unsafe { _mm512_loadu_pd(a.as_ptr()) })
        }
        #[inline(always)]
        fn store(self, a: &mut Lanes) {
            unsafe { _mm512_storeu_pd(a.as_mut_ptr(), self.0) }
        }
        #[inline(always)]
        fn add(self, o: Self) -> Self {
            Avx512(unsafe { _mm512_add_pd(self.0, o.0) })
        }
        #[inline(always)]
        fn sub(self, o: Self) -> Self {
            Avx512(unsafe { _mm512_sub_pd(self.0, o.0) })
        }
        #[inline(always)]
        fn mul(self, o: Self) -> Self {
            Avx512(unsafe { _mm512_mul_pd(self.0, o.0) })
        }
        #[inline(always)]
        fn div(self, o: Self) -> Self {
            Avx512(unsafe { _mm512_div_pd(self.0, o.0) })
        }
        #[inline(always)]
        fn lt(self, o: Self) -> Self::Mask {
            unsafe { _mm512_cmp_pd_mask::<_CMP_LT_OQ>(self.0, o.0) }
        }
        #[inline(always)]
        fn gt(self, o: Self) -> Self::Mask {
            unsafe { _mm512_cmp_pd_mask::<_CMP_GT_OQ>(self.0, o.0) }
        }
        #[inline(always)]
        fn le(self, o: Self) -> Self::Mask {
            unsafe { _mm512_cmp_pd_mask::<_CMP_LE_OQ>(self.0, o.0) }
        }
        #[inline(always)]
        fn ge(self, o: Self) -> Self::Mask {
            unsafe { _mm512_cmp_pd_mask::<_CMP_GE_OQ>(self.0, o.0) }
        }
        #[inline(always)]
        fn not_lt(self, o: Self) -> Self::Mask {
            unsafe { _mm512_cmp_pd_mask::<_CMP_NLT_UQ>(self.0, o.0) }
        }
        #[inline(always)]
        fn not_gt(self, o: Self) -> Self::Mask {
            unsafe { _mm512_cmp_pd_mask::<_CMP_NGT_UQ>(self.0, o.0) }
        }
        #[inline(always)]
        fn not_le(self, o: Self) -> Self::Mask {
            unsafe { _mm512_cmp_pd_mask::<_CMP_NLE_UQ>(self.0, o.0) }
        }
        #[inline(always)]
        fn not_ge(self, o: Self) -> Self::Mask {
            unsafe { _mm512_cmp_pd_mask::<_CMP_NGE_UQ>(self.0, o.0) }
        }
        #[inline(always)]
        fn and(a: Self::Mask, b: Self::Mask) -> Self::Mask {
            a & b
        }
        #[inline(always)]
        fn and_not(a: Self::Mask, b: Self::Mask) -> Self::Mask {
            a & !b
        }
        #[inline(always)]
        fn any(m: Self::Mask) -> bool {
            m != 0
        }
        #[inline(always)]
        fn bits(m: Self::Mask) -> u8 {
            m
        }
        #[inline(always)]
        fn select(m: Self::Mask, a: Self, b: Self) -> Self {
            Avx512(unsafe { _mm512_mask_blend_pd(m, b.0, a.0) })
        }
        #[inline(always)]
        fn pick(m: Self::Mask, a: Self::Mask, b: Self::Mask) -> Self::Mask {
            (m & a) | (!m & b)
        }
        #[inline(always)]
        fn max(self, o: Self) -> Self {
            Avx512(unsafe { _mm512_max_pd(self.0, o.0) })
        }
        #[inline(always)]
        fn min(self, o: Self) -> Self {
            Avx512(unsafe { _mm512_min_pd(self.0, o.0) })
        }
    }
}

/// Two AVX registers. Only constructed inside functions compiled with
/// `avx` (after [`Level::best`] said so), which is what makes the
/// intrinsic calls below sound.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub(crate) struct Avx2([std::arch::x86_64::__m256d; 2]);

/// One AVX register: four lanes (the lane engine runs eight lanes on AVX2
/// as two halves of four, which fit the 16 registers and can each skip
/// their flat stretches).
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub(crate) struct Avx4(std::arch::x86_64::__m256d);

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{Avx2, Avx4, Lanes, Vector, LANES};
    use std::arch::x86_64::*;

    /// Applies `f` to both halves.
    #[inline(always)]
    fn each(a: Avx2, b: Avx2, f: impl Fn(__m256d, __m256d) -> __m256d) -> Avx2 {
        Avx2([f(a.0[0], b.0[0]), f(a.0[1], b.0[1])])
    }

    // SAFETY (every block below): these run inlined into functions compiled
    // with avx, called only after the CPU was checked for it.
    impl Vector<LANES> for Avx2 {
        /// All ones where true, per lane.
        type Mask = [__m256d; 2];
        #[inline(always)]
        fn splat(x: f64) -> Self {
            let v = unsafe { _mm256_set1_pd(x) };
            Avx2([v, v])
        }
        #[inline(always)]
        fn load(a: &Lanes) -> Self {
            unsafe {
                Avx2([
                    _mm256_loadu_pd(a.as_ptr()),
                    _mm256_loadu_pd(a.as_ptr().add(4)),
                ])
            }
        }
        #[inline(always)]
        fn store(self, a: &mut Lanes) {
            unsafe {
                _mm256_storeu_pd(a.as_mut_ptr(), self.0[0]);
                _mm256_storeu_pd(a.as_mut_ptr().add(4), self.0[1]);
            }
        }
        #[inline(always)]
        fn add(self, o: Self) -> Self {
            each(self, o, |a, b| unsafe { _mm256_add_pd(a, b) })
        }
        #[inline(always)]
        fn sub(self, o: Self) -> Self {
            each(self, o, |a, b| unsafe { _mm256_sub_pd(a, b) })
        }
        #[inline(always)]
        fn mul(self, o: Self) -> Self {
            each(self, o, |a, b| unsafe { _mm256_mul_pd(a, b) })
        }
        #[inline(always)]
        fn div(self, o: Self) -> Self {
            each(self, o, |a, b| unsafe { _mm256_div_pd(a, b) })
        }
        #[inline(always)]
        fn lt(self, o: Self) -> Self::Mask {
            each(self, o, |a, b| unsafe { _mm256_cmp_pd::<_CMP_LT_OQ>(a, b) }).0
        }
        #[inline(always)]
        fn gt(self, o: Self) -> Self::Mask {
            each(self, o, |a, b| unsafe { _mm256_cmp_pd::<_CMP_GT_OQ>(a, b) }).0
        }
        #[inline(always)]
        fn le(self, o: Self) -> Self::Mask {
            each(self, o, |a, b| unsafe { _mm256_cmp_pd::<_CMP_LE_OQ>(a, b) }).0
        }
        #[inline(always)]
        fn ge(self, o: Self) -> Self::Mask {
            each(self, o, |a, b| unsafe { _mm256_cmp_pd::<_CMP_GE_OQ>(a, b) }).0
        }
        #[inline(always)]
        fn not_lt(self, o: Self) -> Self::Mask {
            each(self, o, |a, b| unsafe {
                _mm256_cmp_pd::<_CMP_NLT_UQ>(a, b)
            })
            .0
        }
        #[inline(always)]
        fn not_gt(self, o: Self) -> Self::Mask {
            each(self, o, |a, b| unsafe {
                _mm256_cmp_pd::<_CMP_NGT_UQ>(a, b)
            })
            .0
        }
        #[inline(always)]
        fn not_le(self, o: Self) -> Self::Mask {
            each(self, o, |a, b| unsafe {
                _mm256_cmp_pd::<_CMP_NLE_UQ>(a, b)
            })
            .0
        }
        #[inline(always)]
        fn not_ge(self, o: Self) -> Self::Mask {
            each(self, o, |a, b| unsafe {
                _mm256_cmp_pd::<_CMP_NGE_UQ>(a, b)
            })
            .0
        }
        #[inline(always)]
        fn and(a: Self::Mask, b: Self::Mask) -> Self::Mask {
            each(Avx2(a), Avx2(b), |a, b| unsafe { _mm256_and_pd(a, b) }).0
        }
        #[inline(always)]
        fn and_not(a: Self::Mask, b: Self::Mask) -> Self::Mask {
            // andnot negates its first operand.
            each(Avx2(a), Avx2(b), |a, b| unsafe { _mm256_andnot_pd(b, a) }).0
        }
        #[inline(always)]
        fn any(m: Self::Mask) -> bool {
            unsafe { _mm256_movemask_pd(_mm256_or_pd(m[0], m[1])) != 0 }
        }
        #[inline(always)]
        fn bits(m: Self::Mask) -> u8 {
            let low = unsafe { _mm256_movemask_pd(m[0]) } as u32;
            let mut high = unsafe { _mm256_movemask_pd(m[1]) } as u32;
            // An empty barrier: LLVM otherwise merges the two mask moves
            // into pack, permute and one mask move, a vector op more on
            // the pipes the state machine is bound by (measured).
            unsafe {
                std::arch::asm!("/* {0:e} */", inout(reg) high, options(pure, nomem, nostack, preserves_flags));
            }
            (low | high << 4) as u8
        }
        #[inline(always)]
        fn select(m: Self::Mask, a: Self, b: Self) -> Self {
            // blendv takes the second operand where the mask is set.
            unsafe {
                Avx2([
                    _mm256_blendv_pd(b.0[0], a.0[0], m[0]),
                    _mm256_blendv_pd(b.0[1], a.0[1], m[1]),
                ])
            }
        }
        #[inline(always)]
        fn pick(m: Self::Mask, a: Self::Mask, b: Self::Mask) -> Self::Mask {
            Self::select(m, Avx2(a), Avx2(b)).0
        }
        #[inline(always)]
        fn max(self, o: Self) -> Self {
            each(self, o, |a, b| unsafe { _mm256_max_pd(a, b) })
        }
        #[inline(always)]
        fn min(self, o: Self) -> Self {
            each(self, o, |a, b| unsafe { _mm256_min_pd(a, b) })
        }
        /// `vpmovmskb` reads bit 7 of each byte; adding a byte to itself
        /// moves the next lane's bit there. (Needs AVX2, which every
        /// function using `Avx2` enables.)
        #[inline(always)]
        fn transpose(marks: &[u8; 64]) -> [u64; 8] {
            let mut out = [0u64; 8];
            unsafe {
                let p = marks.as_ptr().cast::<__m256i>();
                let (mut lo, mut hi) = (_mm256_loadu_si256(p), _mm256_loadu_si256(p.add(1)));
                for lane in (0..8).rev() {
                    let low = _mm256_movemask_epi8(lo) as u32;
                    let high = _mm256_movemask_epi8(hi) as u32;
                    out[lane] = u64::from(low) | u64::from(high) << 32;
                    lo = _mm256_add_epi8(lo, lo);
                    hi = _mm256_add_epi8(hi, hi);
                }
            }
            out
        }
    }

    // SAFETY (every block below): as above, inlined into functions
    // compiled with avx.
    impl Vector<4> for Avx4 {
        /// All ones where true, per lane.
        type Mask = __m256d;
        #[inline(always)]
        fn splat(x: f64) -> Self {
            Avx4(unsafe { _mm256_set1_pd(x) })
        }
        #[inline(always)]
        fn load(a: &[f64; 4]) -> Self {
            Avx4(unsafe { _mm256_loadu_pd(a.as_ptr()) })
        }
        #[inline(always)]
        fn store(self, a: &mut [f64; 4]) {
            unsafe { _mm256_storeu_pd(a.as_mut_ptr(), self.0) }
        }
        #[inline(always)]
        fn add(self, o: Self) -> Self {
            Avx4(unsafe { _mm256_add_pd(self.0, o.0) })
        }
        #[inline(always)]
        fn sub(self, o: Self) -> Self {
            Avx4(unsafe { _mm256_sub_pd(self.0, o.0) })
        }
        #[inline(always)]
        fn mul(self, o: Self) -> Self {
            Avx4(unsafe { _mm256_mul_pd(self.0, o.0) })
        }
        #[inline(always)]
        fn div(self, o: Self) -> Self {
            Avx4(unsafe { _mm256_div_pd(self.0, o.0) })
        }
        #[inline(always)]
        fn lt(self, o: Self) -> Self::Mask {
            unsafe { _mm256_cmp_pd::<_CMP_LT_OQ>(self.0, o.0) }
        }
        #[inline(always)]
        fn gt(self, o: Self) -> Self::Mask {
            unsafe { _mm256_cmp_pd::<_CMP_GT_OQ>(self.0, o.0) }
        }
        #[inline(always)]
        fn le(self, o: Self) -> Self::Mask {
            unsafe { _mm256_cmp_pd::<_CMP_LE_OQ>(self.0, o.0) }
        }
        #[inline(always)]
        fn ge(self, o: Self) -> Self::Mask {
            unsafe { _mm256_cmp_pd::<_CMP_GE_OQ>(self.0, o.0) }
        }
        #[inline(always)]
        fn not_lt(self, o: Self) -> Self::Mask {
            unsafe { _mm256_cmp_pd::<_CMP_NLT_UQ>(self.0, o.0) }
        }
        #[inline(always)]
        fn not_gt(self, o: Self) -> Self::Mask {
            unsafe { _mm256_cmp_pd::<_CMP_NGT_UQ>(self.0, o.0) }
        }
        #[inline(always)]
        fn not_le(self, o: Self) -> Self::Mask {
            unsafe { _mm256_cmp_pd::<_CMP_NLE_UQ>(self.0, o.0) }
        }
        #[inline(always)]
        fn not_ge(self, o: Self) -> Self::Mask {
            unsafe { _mm256_cmp_pd::<_CMP_NGE_UQ>(self.0, o.0) }
        }
        #[inline(always)]
        fn and(a: Self::Mask, b: Self::Mask) -> Self::Mask {
            unsafe { _mm256_and_pd(a, b) }
        }
        #[inline(always)]
        fn and_not(a: Self::Mask, b: Self::Mask) -> Self::Mask {
            unsafe { _mm256_andnot_pd(b, a) }
        }
        #[inline(always)]
        fn any(m: Self::Mask) -> bool {
            unsafe { _mm256_movemask_pd(m) != 0 }
        }
        #[inline(always)]
        fn bits(m: Self::Mask) -> u8 {
            unsafe { _mm256_movemask_pd(m) as u8 }
        }
        #[inline(always)]
        fn select(m: Self::Mask, a: Self, b: Self) -> Self {
            Avx4(unsafe { _mm256_blendv_pd(b.0, a.0, m) })
        }
        #[inline(always)]
        fn max(self, o: Self) -> Self {
            Avx4(unsafe { _mm256_max_pd(self.0, o.0) })
        }
        #[inline(always)]
        fn min(self, o: Self) -> Self {
            Avx4(unsafe { _mm256_min_pd(self.0, o.0) })
        }
        #[inline(always)]
        fn pick(m: Self::Mask, a: Self::Mask, b: Self::Mask) -> Self::Mask {
            unsafe { _mm256_blendv_pd(b, a, m) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every level's transpose against the definition, on bytes with every
    /// bit pattern.
    #[test]
    fn transpose_gives_each_lane_its_bits() {
        let mut marks = [0u8; 64];
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for round in 0..50 {
            for m in &mut marks {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                *m = state as u8;
            }
            if round == 0 {
                marks = std::array::from_fn(|i| if i % 3 == 0 { 0xff } else { i as u8 });
            }
            let want: [u64; 8] = std::array::from_fn(|l| {
                (0..64).fold(0, |w, i| w | u64::from(marks[i] >> l & 1) << i)
            });
            assert_eq!(Portable::transpose(&marks), want);
            #[cfg(target_arch = "x86_64")]
            if Level::best() >= Level::Avx2 {
                // SAFETY: the CPU has AVX2.
                assert_eq!(unsafe { transpose_avx2(&marks) }, want);
            }
        }
    }

    /// Lanes in which every pair of some edge values (equal ones, ±0 and
    /// NaN included) meets somewhere.
    fn edge_pairs() -> impl Iterator<Item = (Lanes, Lanes)> {
        let values = [
            f64::NAN,
            f64::NEG_INFINITY,
            -1.0,
            -0.0,
            0.0,
            2.0,
            f64::INFINITY,
        ];
        let lanes =
            move |seed: usize| -> Lanes { std::array::from_fn(|l| values[(l * 3 + seed) % 7]) };
        (0..7).flat_map(move |a| (0..7).map(move |b| (lanes(a), lanes(b))))
    }

    /// The negated comparisons are the negations (true on NaN, unlike the
    /// reversed comparisons) and `pick` picks, at every level.
    #[test]
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    fn negated_comparisons_hold_on_nan_and_pick_picks() {
        let bits = |f: &dyn Fn(usize) -> bool| (0..LANES).fold(0u8, |b, l| b | u8::from(f(l)) << l);
        for (a, b) in edge_pairs() {
            let want = [
                bits(&|l| !(a[l] < b[l])),
                bits(&|l| !(a[l] > b[l])),
                bits(&|l| !(a[l] <= b[l])),
                bits(&|l| !(a[l] >= b[l])),
                bits(&|l| {
                    if a[l] < b[l] {
                        a[l] <= b[l]
                    } else {
                        a[l] >= b[l]
                    }
                }),
                bits(&|l| {
                    if a[l] < b[l] {
                        a[l] >= b[l]
                    } else {
                        a[l] <= b[l]
                    }
                }),
            ];
            assert_eq!(negations::<Portable>(&a, &b), want);
            #[cfg(target_arch = "x86_64")]
            if Level::best() >= Level::Avx2 {
                // SAFETY: the CPU has AVX2.
                assert_eq!(unsafe { negations_avx2(&a, &b) }, want);
            }
            #[cfg(target_arch = "x86_64")]
            if Level::best() >= Level::Avx512 {
                // SAFETY: the CPU has AVX-512.
                assert_eq!(unsafe { negations_avx512(&a, &b) }, want);
            }
        }
    }

    /// `min` and `max` follow their rule (`minpd`'s and `maxpd`'s: the
    /// second value unless the compare holds, so on NaN and ±0 too) at
    /// every level, the four-lane halves included.
    #[test]
    fn min_and_max_follow_their_rule() {
        let bits = |v: &Lanes| v.map(f64::to_bits);
        for (a, b) in edge_pairs() {
            let min: Lanes = std::array::from_fn(|l| if a[l] < b[l] { a[l] } else { b[l] });
            let max: Lanes = std::array::from_fn(|l| if a[l] > b[l] { a[l] } else { b[l] });
            let want = [bits(&min), bits(&max)];
            let got = |(min, max): (Lanes, Lanes)| [bits(&min), bits(&max)];
            assert_eq!(got(min_max::<Portable>(&a, &b)), want);
            #[cfg(target_arch = "x86_64")]
            if Level::best() >= Level::Avx2 {
                // SAFETY: the CPU has AVX2.
                let (eight, halves) = unsafe { min_max_avx2(&a, &b) };
                assert_eq!(got(eight), want);
                assert_eq!(got(halves), want);
            }
            #[cfg(target_arch = "x86_64")]
            if Level::best() >= Level::Avx512 {
                // SAFETY: the CPU has AVX-512.
                assert_eq!(got(unsafe { min_max_avx512(&a, &b) }), want);
            }
        }
    }

    #[inline(always)]
    fn min_max<V: Vector<LANES>>(a: &Lanes, b: &Lanes) -> (Lanes, Lanes) {
        let (a, b) = (V::load(a), V::load(b));
        let (mut min, mut max) = ([0.0; LANES], [0.0; LANES]);
        a.min(b).store(&mut min);
        a.max(b).store(&mut max);
        (min, max)
    }

    /// Eight lanes in two AVX registers, and as two halves of four.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx,avx2")]
    fn min_max_avx2(a: &Lanes, b: &Lanes) -> ((Lanes, Lanes), (Lanes, Lanes)) {
        let (mut min, mut max) = ([0.0; LANES], [0.0; LANES]);
        for h in 0..2 {
            let half = |v: &Lanes| -> [f64; 4] { std::array::from_fn(|l| v[4 * h + l]) };
            let (x, y) = (Avx4::load(&half(a)), Avx4::load(&half(b)));
            let (mut lo, mut hi) = ([0.0; 4], [0.0; 4]);
            x.min(y).store(&mut lo);
            x.max(y).store(&mut hi);
            min[4 * h..4 * h + 4].copy_from_slice(&lo);
            max[4 * h..4 * h + 4].copy_from_slice(&hi);
        }
        (min_max::<Avx2>(a, b), (min, max))
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,bmi1")]
    fn min_max_avx512(a: &Lanes, b: &Lanes) -> (Lanes, Lanes) {
        min_max::<Avx512>(a, b)
    }

    #[inline(always)]
    fn negations<V: Vector<LANES>>(a: &Lanes, b: &Lanes) -> [u8; 6] {
        let (a, b) = (V::load(a), V::load(b));
        [
            V::bits(a.not_lt(b)),
            V::bits(a.not_gt(b)),
            V::bits(a.not_le(b)),
            V::bits(a.not_ge(b)),
            V::bits(V::pick(a.lt(b), a.le(b), a.ge(b))),
            V::bits(V::pick(a.lt(b), a.ge(b), a.le(b))),
        ]
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx,avx2")]
    fn negations_avx2(a: &Lanes, b: &Lanes) -> [u8; 6] {
        negations::<Avx2>(a, b)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,bmi1")]
    fn negations_avx512(a: &Lanes, b: &Lanes) -> [u8; 6] {
        negations::<Avx512>(a, b)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx,avx2")]
    fn transpose_avx2(marks: &[u8; 64]) -> [u64; 8] {
        Avx2::transpose(marks)
    }
}
