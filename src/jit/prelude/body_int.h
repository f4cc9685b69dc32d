#define GX__INT_COMMON(T, S, U, W) \
GXF T gx_add_##S(T a, T b) { return (T)((U)a + (U)b); } \
GXF T gx_sub_##S(T a, T b) { return (T)((U)a - (U)b); } \
GXF T gx_mul_##S(T a, T b) { return (T)((U)a * (U)b); } \
GXF T gx_neg_##S(T a) { return (T)((U)0 - (U)a); } \
GXF T gx_shl_##S(T a, uint64_t n) { return (T)((U)a << (n & (W - 1))); } \
GXF T gx_min_##S(T a, T b) { return a < b ? a : b; } \
GXF T gx_max_##S(T a, T b) { return a > b ? a : b; } \
GXF T gx_clamp_##S(T x, T lo, T hi) { return gx_min_##S(gx_max_##S(x, lo), hi); }
#define GX__INT_SIGNED(T, S, U, W, MN) \
GX__INT_COMMON(T, S, U, W) \
GXF T gx_div_##S(T a, T b) { return b == 0 ? (T)0 : (a == (MN) && b == -1) ? a : (T)(a / b); } \
GXF T gx_mod_##S(T a, T b) { return (b == 0 || b == -1) ? (T)0 : (T)(a % b); } \
GXF T gx_shr_##S(T a, uint64_t n) { return a < 0 ? (T)~(T)(~a >> (n & (W - 1))) : (T)(a >> (n & (W - 1))); } \
GXF T gx_abs_##S(T a) { return a < 0 ? gx_neg_##S(a) : a; } \
GXF T gx_sign_##S(T a) { return (T)((a > 0) - (a < 0)); }
#define GX__INT_UNSIGNED(T, S, W) \
GX__INT_COMMON(T, S, T, W) \
GXF T gx_div_##S(T a, T b) { return b == 0 ? (T)0 : (T)(a / b); } \
GXF T gx_mod_##S(T a, T b) { return b == 0 ? (T)0 : (T)(a % b); } \
GXF T gx_shr_##S(T a, uint64_t n) { return (T)(a >> (n & (W - 1))); } \
GXF T gx_abs_##S(T a) { return a; } \
GXF T gx_sign_##S(T a) { return (T)(a > 0); }
GX__INT_SIGNED(int32_t, i32, uint32_t, 32, (-2147483647 - 1))
GX__INT_SIGNED(int64_t, i64, uint64_t, 64, (-9223372036854775807LL - 1))
GX__INT_UNSIGNED(uint32_t, u32, 32)
GX__INT_UNSIGNED(uint64_t, u64, 64)
