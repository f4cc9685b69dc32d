#define GX__CXL(C, T, S, MK, SF) \
GXF C gx_complex_##S(T re, T im) { return MK(re, im); } \
GXF C gx_add_##S(C a, C b) { return MK(a.re + b.re, a.im + b.im); } \
GXF C gx_sub_##S(C a, C b) { return MK(a.re - b.re, a.im - b.im); } \
GXF C gx_mul_##S(C a, C b) { return MK(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re); } \
GXF C gx_div_##S(C a, C b) { T s = fabs##SF(b.re) + fabs##SF(b.im); T ar = a.re / s, ai = a.im / s, br = b.re / s, bi = b.im / s; \
  T d = br * br + bi * bi; return MK((ar * br + ai * bi) / d, (ai * br - ar * bi) / d); } \
GXF C gx_neg_##S(C a) { return MK(-a.re, -a.im); } \
GXF bool gx_eq_##S(C a, C b) { return a.re == b.re && a.im == b.im; } \
GXF bool gx_ne_##S(C a, C b) { return !(a.re == b.re && a.im == b.im); } \
GXF T gx_re_##S(C a) { return a.re; } \
GXF T gx_im_##S(C a) { return a.im; } \
GXF C gx_conj_##S(C a) { return MK(a.re, -a.im); } \
GXF T gx_abs2_##S(C a) { return a.re * a.re + a.im * a.im; } \
GXF T gx_abs_##S(C a) { return hypot##SF(a.re, a.im); } \
GXF T gx_arg_##S(C a) { return atan2##SF(a.im, a.re); } \
GXF C gx_exp_##S(C a) { T r = exp##SF(a.re); return MK(r * cos##SF(a.im), r * sin##SF(a.im)); }
GX__CXL(cf32, float, c64, c32, f)
GX__CXL(cf64, double, c128, c64, )
GXF cf64 gx_cx_c64_c128(cf32 a) { return c64(a.re, a.im); }
GXF cf32 gx_cx_c128_c64(cf64 a) { return c32((float)a.re, (float)a.im); }
