#define GX__SC_MAX_F32 0x48800000u
#if !defined(GX__CUDA) && defined(__GNUC__) && __GNUC__ >= 8 && !defined(__clang__) && defined(__x86_64__) && defined(__AVX512F__)
#define GX__SC_WIDE __attribute__((target("prefer-vector-width=512")))
#else
#define GX__SC_WIDE
#endif
#if defined(GX__CUDA) || ((defined(FP_FAST_FMAF) || defined(__FMA__) || defined(__ARM_FEATURE_FMA)) && \
    (!defined(__FLT_EVAL_METHOD__) || __FLT_EVAL_METHOD__ == 0 || __FLT_EVAL_METHOD__ == 16))
#define GX__SC_FAST 1
typedef union { float f; uint32_t u; } gx__fu32;
GXF void gx__sincos_core(float x, float *sn, float *cs)
{
  gx__fu32 ux, ua, uj, us, uc;
  ux.f = x;
  ua.u = ux.u & 0x7fffffffu;
  uj.f = fmaf(ua.f, 0x1.45f306p-1f, 0x1.8p23f);
  const float k = uj.f - 0x1.8p23f;
  const float r = fmaf(-k, -0x1.ee59dap-50f, fmaf(-k, -0x1.777a5cp-25f, fmaf(-k, 0x1.921fb6p0f, ua.f)));
  const float r2 = r * r;
  const float s = fmaf(r * r2, fmaf(r2, fmaf(r2, -0x1.994388p-13f, 0x1.11073ap-7f), -0x1.555546p-3f), r);
  const float c = fmaf(r2, fmaf(r2, fmaf(r2, fmaf(r2, 0x1.991644p-16f, -0x1.6c07fp-10f), 0x1.55553cp-5f), -0.5f), 1.0f);
  const uint32_t q = uj.u;
  us.f = (q & 1u) ? c : s;
  uc.f = (q & 1u) ? s : c;
  us.u ^= ((q << 30) & 0x80000000u) ^ (ux.u & 0x80000000u);
  uc.u ^= ((q + 1u) << 30) & 0x80000000u;
  *sn = us.f;
  *cs = uc.f;
}
#ifdef GX__CUDA
GXF float gx__sin_h(float x) { float s, c; gx__sincos_core(x, &s, &c); return s; }
GXF float gx__cos_h(float x) { float s, c; gx__sincos_core(x, &s, &c); return c; }
#else
GXF void gx__sincos_f32(float x, uint32_t *m, float *sn, float *cs)
{
  gx__fu32 ua;
  ua.f = x;
  ua.u &= 0x7fffffffu;
  *m = ua.u > *m ? ua.u : *m;
  gx__sincos_core(x, sn, cs);
}
GXF float gx__fsin_f32(float x, uint32_t *m) { float s, c; gx__sincos_f32(x, m, &s, &c); return s; }
GXF float gx__fcos_f32(float x, uint32_t *m) { float s, c; gx__sincos_f32(x, m, &s, &c); return c; }
#endif
#else
#define GX__SC_FAST 0
GXF float gx__fsin_f32(float x, uint32_t *m) { (void)m; return gx_sin_f32(x); }
GXF float gx__fcos_f32(float x, uint32_t *m) { (void)m; return gx_cos_f32(x); }
#endif
