/* lambda.h -- the lambda language: parse, type-check and emit as C expression text.
 *
 * Text: "x, y -> sin(x)*sin(x) + cos(y)*cos(y)".  Parameters left of "->" (zero or
 * more), one expression right of it.  The expression language is C-like:
 *  literals 1, 0x1F, 1u, 1L?, 2.5, 2.5f, 1e-3, true, false; parameters; named constants;
 *  unary + - ! ~; binary * / % + - << >> < <= > >= == != & ^ | && || with C precedence;
 *  c ? a : b; casts written as calls: f32(x) f64 i8 i16 i32 i64 u8 u16 u32 u64 bool;
 *  the math library (see lam__builtins in lambda_sema.c) and user functions.
 * Types follow C's usual arithmetic conversions on gx dtypes (bool promotes to i32,
 * i8/i16/u8/u16 to i32, float literal "2.5" is f64, "2.5f" f32, integer literal i32 or
 * i64 if it does not fit; f32 op f64 -> f64).  Math functions on integer args compute in f64;
 * on f32 args in f32 (sinf...).
 *
 * Emission produces ONE C expression (valid C99 and valid CUDA C++), calling helper
 * functions from the prelude (lam_prelude) for everything that the two compilers
 * spell differently or where C has undefined behaviour.  The same text is emitted for
 * both targets; the prelude differs.  Helpers are named gx_<op>_<dtype>: gx_add_i32,
 * gx_div_u64, gx_shl_i64, gx_sin_f32, gx_min_u32, gx_isnan_f64, gx_cvt_f64_i8...
 * Integer semantics (identical on CPU and GPU, never undefined):
 *  - signed + - * and unary - wrap modulo 2^bits (computed in the unsigned type);
 *  - x / 0 == 0 and x % 0 == 0; MIN / -1 == MIN and MIN % -1 == 0;
 *  - a << b and a >> b use the count b & (bits-1) (bits of the promoted left type);
 *    >> of a negative signed value is arithmetic;
 *  - float -> integer (casts, user-function arguments) truncates toward zero like C,
 *    but NaN gives 0 and out-of-range values saturate to the type's MIN / MAX;
 *  - integer -> narrower integer wraps modulo 2^bits; anything -> bool is (x != 0).
 * c ? a : b with same-typed branches keeps that type (bool stays bool), otherwise
 * the usual arithmetic conversions.  See docs/LAMBDAS.md.
 * Complex (c64 = cf32, c128 = cf64 parameters): + - * / and unary - through
 * gx_<op>_c64/_c128 helpers, == and != (no ordering, no && || ! or ?: conditions);
 * c64 op f32/integer -> c64, c64 op f64 or c128 -> c128; re, im, abs, abs2, arg
 * return the real type, conj and exp stay complex, complex(re, im) builds one,
 * casts c64(x) / c128(x) convert, casts of a complex to a real type are errors.
 * rand(seed, i) -> f64 and randf(seed, i) -> f32 are element i of gx_rand's stream.
 */
#ifndef GX_LAMBDA_H
#define GX_LAMBDA_H

#include "core/gx_internal.h"

typedef struct lam_fn_sig {
    char name[64];
    gx_dtype ret;
    int nparams;
    gx_dtype params[16];
    bool callable; /* every type in the signature is a scalar dtype */
} lam_fn_sig;

/* An array the lambda reads by index: name[i0, ..., i{ndim-1}] (gx_bind).  The
 * emitter spells bound array k's read as the call gx_bl<k>(j0, ..., j{ndim-1}), each
 * j an int64_t (u64 indices saturate at INT64_MAX through gx_bix_u64, so a huge one
 * stays out of range); the op that runs the lambda defines gx_bl<k> and gx_bix_u64
 * (ops/bind.c) to load with the bound array's strides and check the bounds. */
typedef struct lam_arr {
    const char *name;
    gx_dtype dtype;
    int ndim;
} lam_arr;

typedef struct lam_env {
    const char *text; /* the lambda */
    int nargs;        /* dtypes of the actual arguments, in order */
    const gx_dtype *arg_types;
    const gx_const *consts; /* named scalar constants (may be NULL) */
    int nconsts;
    const lam_fn_sig *fns; /* user functions visible to the lambda (may be NULL) */
    int nfns;
    const lam_arr *arrays; /* arrays read by index (may be NULL) */
    int narrays;
} lam_env;

typedef struct lam_lambda lam_lambda;

/* Parses and type-checks.  On error: GX_ERR_SYNTAX (with the text and a caret line
 * under the offending column in gx_last_error()), or GX_ERR_TYPE (unknown name, wrong
 * arity of a call, `&` on floats, parameter count != nargs, ...) also with a caret. */
gx_status lam_compile(const lam_env *env, lam_lambda **out);
/* Parses only (no types): for syntax checks and arity.  *nparams = parameter count. */
gx_status lam_parse_arity(const char *text, int *nparams);
gx_dtype lam_result_type(const lam_lambda *l);
int lam_nparams(const lam_lambda *l);
/* Appends the expression to `out`.  Parameter i is spelled param_names[i], constant j
 * const_names[j] (a C expression of the constant's dtype). */
gx_status lam_emit(const lam_lambda *l, const char *const *param_names, const char *const *const_names, gx__sbuf *out);
/* A closed interval of integer values; ok == false: no bound known. */
typedef struct lam_range {
    bool ok;
    int64_t lo, hi;
} lam_range;
/* lam_emit, where param_ranges[i] (the array or any entry may be absent) bounds the
 * values parameter i takes.  Integer operations whose operands and result provably fit
 * then compute in 32-bit or unsigned forms: the same values, fewer instructions.
 * *result (may be NULL) receives the bound of the lambda's value (in its result dtype). */
gx_status lam_emit_ranged(const lam_lambda *l, const char *const *param_names, const lam_range *param_ranges,
                          const char *const *const_names, gx__sbuf *out, lam_range *result);
/* The CPU work of one evaluation, in elements of a vectorised sum (1 = as cheap as
 * one; at least 1): what the CPU backend's grain weighs a part's elements by, so an
 * expensive lambda (integer division, which keeps GCC's loop scalar; transcendental
 * calls) spreads over the cores at sizes where a plain one stays on one.  A static
 * estimate (deterministic: a reduction's partition must not depend on timings). */
int lam_cost(const lam_lambda *l);
void lam_free(lam_lambda *l);

/* The prelude for target "c" or "cuda" (any other target gets "c"): fixed-width ints,
 * bool, the gx_* math and arithmetic helpers the emitter calls, the complex types
 * cf32/cf64 with c32(re, im), cadd, csub, cmul, cconj, cabs2 (macro abs2) and c64,
 * cadd64, csub64, cmul64, cconj64, cabs2_64 (abs2_64), and the GXF qualifier
 * ("static inline", plus __attribute__((unused)) on GCC/clang; CUDA:
 * "static __device__ __forceinline__").  A static string; never NULL. */
const char *lam_prelude(gx__target target);

/* Emits, each line indented by `ind`, the C prelude's GX__PF for every 64-byte line of
 * `bytes` bytes from the address expression `ptr` on (a software prefetch 4 KB ahead,
 * for the CPU loops over large parts: reduce_gen.h's RG_CPU_WIDE_MIN says why). */
void lam_emit_prefetch(gx__sbuf *b, const char *ind, const char *ptr, size_t bytes);

/* Scans C source for top-level function definitions and their signatures
 * (comments, string/char literals and preprocessor lines are skipped; declarations,
 * typedefs, struct definitions and initializers are passed over).  Type spellings:
 * bool/_Bool, signed char/int8_t, short/int16_t, int/signed/int32_t, long/long long/
 * int64_t/ptrdiff_t, their unsigned forms and uint*_t/size_t, float, double; plain
 * char, long double, void, pointers, arrays and named types (cf32...) are not dtypes.
 * `sigs[i].name` holds the name (at most 63 chars, else GX_ERR_SYNTAX); nparams is
 * capped at 16 (more makes the function non-callable).  More than `max` definitions
 * is GX_ERR_INVALID_ARGUMENT.  offsets may be NULL.
 * Every definition is reported; only those whose return and parameter types are scalar
 * dtypes get callable = true (others are still compiled, for use by other functions).  `offsets[i]` receives the byte
 * offset where definition i starts (so the caller can prefix a qualifier).
 * Returns GX_ERR_SYNTAX with a line number when a definition cannot be read. */
gx_status lam_scan_functions(const char *source, lam_fn_sig *sigs, size_t *offsets, int max, int *count);

#endif
