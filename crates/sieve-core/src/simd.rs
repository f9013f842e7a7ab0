//! Eight f64 lanes and the handful of operations the lane engine needs,
//! written once over [`Vector`] and compiled twice: portable arrays (any
//! CPU) and AVX-512 registers (chosen at run time where the CPU has them,
//! see [`has_avx512`]).
//!
//! Every operation is a plain IEEE-754 operation on each lane — no fused
//! multiply-add, no approximate reciprocal — so both give the scalar
//! engine's bits.

/// Lanes per vector: 8 f64 fill one AVX-512 register.
pub const LANES: usize = 8;

pub(crate) type Lanes = [f64; LANES];

/// Whether this CPU runs the AVX-512 code (checked once): every function
/// compiled for it enables at most these features.
#[cfg(target_arch = "x86_64")]
pub(crate) fn has_avx512() -> bool {
    use std::sync::OnceLock;
    static HAS: OnceLock<bool> = OnceLock::new();
    *HAS.get_or_init(|| {
        std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512vl")
            && std::is_x86_feature_detected!("bmi1")
    })
}

#[cfg(not(target_arch = "x86_64"))]
pub(crate) fn has_avx512() -> bool {
    false
}

pub(crate) trait Vector: Copy {
    type Mask: Copy;
    fn splat(x: f64) -> Self;
    fn load(a: &Lanes) -> Self;
    fn store(self, a: &mut Lanes);
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn div(self, o: Self) -> Self;
    fn lt(self, o: Self) -> Self::Mask;
    fn gt(self, o: Self) -> Self::Mask;
    fn and(a: Self::Mask, b: Self::Mask) -> Self::Mask;
    fn any(m: Self::Mask) -> bool;
    /// `if m { a } else { b }`, per lane.
    fn select(m: Self::Mask, a: Self, b: Self) -> Self;
}

/// Arrays the compiler vectorizes as well as it can.
#[derive(Clone, Copy)]
pub(crate) struct Portable(Lanes);

impl Vector for Portable {
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
    fn and(a: Self::Mask, b: Self::Mask) -> Self::Mask {
        std::array::from_fn(|l| a[l] & b[l])
    }
    #[inline(always)]
    fn any(m: Self::Mask) -> bool {
        m.iter().any(|&b| b)
    }
    #[inline(always)]
    fn select(m: Self::Mask, a: Self, b: Self) -> Self {
        Portable(std::array::from_fn(|l| if m[l] { a.0[l] } else { b.0[l] }))
    }
}

/// One AVX-512 register. Only constructed inside functions compiled with
/// `avx512f` (after [`has_avx512`]), which is what makes the intrinsic
/// calls below sound.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub(crate) struct Avx512(std::arch::x86_64::__m512d);

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::{Avx512, Lanes, Vector};
    use std::arch::x86_64::*;

    // SAFETY (every block below): these run inlined into functions compiled
    // with avx512f, called only after the CPU was checked for it.
    impl Vector for Avx512 {
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
        fn and(a: Self::Mask, b: Self::Mask) -> Self::Mask {
            a & b
        }
        #[inline(always)]
        fn any(m: Self::Mask) -> bool {
            m != 0
        }
        #[inline(always)]
        fn select(m: Self::Mask, a: Self, b: Self) -> Self {
            Avx512(unsafe { _mm512_mask_blend_pd(m, b.0, a.0) })
        }
    }
}
