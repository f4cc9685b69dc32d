/* test_cross.c -- every operation of gx run through GXT_CROSS (tests/gx_test.h): the
 * same random inputs on a CPU context and on the context under test, results compared
 * element by element.  In the cuda.* runs this is CUDA against the CPU backend.
 *
 * Tolerances: 0 where both backends must agree exactly (integers, copies, compaction,
 * the counter-based generator, max/min); a few ulp for float arithmetic (NVRTC
 * contracts a*b + c into one FMA, the CPU's compiler does not) and math functions
 * (the CPU's libm against CUDA's); n * eps for float sums, which the backends fold in
 * different orders. */
#include "gx_test.h"

#define IN1(t, n) ((gxt_in[]){{t, 1, {n}}})
#define IN2D(t, r, c) ((gxt_in[]){{t, 2, {r, c}}})

/* ------------------------------------------------------------ map */

static gx_status op_map_poly(gx_ctx *c, gx_array *const *in, gx_array **out)
{
    return gx_map(c, "x -> 3 * x * x - 2 * x + 1", 1, in, NULL, out);
}
static gx_status op_map_sincos(gx_ctx *c, gx_array *const *in, gx_array **out)
{
    return gx_map(c, "x -> sin(x) * sin(x) + cos(2 * x)", 1, in, NULL, out);
}
static gx_status op_map_bcast(gx_ctx *c, gx_array *const *in, gx_array **out)
{
    gx_const k = GX_CONST("k", GX_SCALAR_F64(0.25));
    gx_map_opts o = {.consts = &k, .nconsts = 1};
    return gx_map(c, "x, y -> k * x + y", 2, in, &o, out);
}
static gx_status op_map_int(gx_ctx *c, gx_array *const *in, gx_array **out)
{
    return gx_map(c, "a, b -> (a * 7 + b) % 13", 2, in, NULL, out);
}
static gx_status op_map_complex(gx_ctx *c, gx_array *const *in, gx_array **out)
{
    return gx_map(c, "z -> z * z + conj(z)", 1, in, NULL, out);
}

/* Arrays read inside lambdas (gx_bind): in[0] holds u8 indices in [0, 100]. */
static gx_status op_map_gather(gx_ctx *c, gx_array *const *in, gx_array **out)
{
    gx_bind b = GX_BIND("t", in[1]);
    gx_map_opts o = {.arrays = &b, .narrays = 1};
    return gx_map(c, "i -> t[i] * 2 + t[100 - i]", 1, in, &o, out);
}
static gx_status op_map_gather2d(gx_ctx *c, gx_array *const *in, gx_array **out)
{
    int perm[2] = {1, 0};
    gx_array *v = NULL;
    gx_status s = gx_array_permute(in[1], perm, &v); /* (13, 11), strides (1, 13) */
    gx_bind b = GX_BIND("m", v);
    gx_map_opts o = {.arrays = &b, .narrays = 1};
    if (s == GX_OK)
        s = gx_map(c, "i -> m[i % 13, i % 11] - m[12, 10]", 1, in, &o, out);
    gx_array_release(v);
    return s;
}
static gx_status op_mapreduce_gather(gx_ctx *c, gx_array *const *in, gx_array **out)
{
    gx_bind b = GX_BIND("t", in[1]);
    gx_reduce_opts o = {.arrays = &b, .narrays = 1};
    return gx_mapreduce_to(c, "i -> t[i] * t[100 - i]", "+", 1, in, &o, out);
}

GXT_TEST(cross_map)
{
    GXT_CROSS(op_map_gather, 2, ((gxt_in[]){{GX_U8, 1, {1001}}, {GX_F32, 1, {101}}}), 0);
    GXT_CROSS(op_map_gather2d, 2, ((gxt_in[]){{GX_U8, 1, {333}}, {GX_F64, 2, {11, 13}}}), 0);
    GXT_CROSS(op_mapreduce_gather, 2, ((gxt_in[]){{GX_U8, 1, {4099}}, {GX_F64, 1, {101}}}), 1e-12);
    GXT_CROSS(op_map_poly, 1, IN1(GX_F32, 100003), 3e-7); /* NVRTC contracts a*b+c into an FMA: 1 ulp */
    GXT_CROSS(op_map_poly, 1, IN1(GX_I64, 33), 0);
    GXT_CROSS(op_map_sincos, 1, IN1(GX_F64, 4099), 1e-15);
    GXT_CROSS(op_map_sincos, 1, IN1(GX_F32, 4099), 2e-6);
    GXT_CROSS(op_map_bcast, 2, ((gxt_in[]){{GX_F64, 2, {31, 17}}, {GX_F64, 1, {17}}}), 0);
    GXT_CROSS(op_map_int, 2, ((gxt_in[]){{GX_I32, 2, {9, 33}}, {GX_I16, 2, {9, 1}}}), 0);
    GXT_CROSS(op_map_complex, 1, IN1(GX_C128, 1001), 1e-15);
    GXT_CROSS(op_map_complex, 1, IN1(GX_C64, 1001), 1e-6);
}

/* ------------------------------------------------------------ reductions */

static gx_status op_sum_axis1(gx_ctx *c, gx_array *const *in, gx_array **out)
{
    int ax = 1;
    gx_reduce_opts o = {.axes = &ax, .naxes = 1};
    return gx_reduce_to(c, "+", in[0], &o, out);
}
static gx_status op_sum_all(gx_ctx *c, gx_array *const *in, gx_array **out)
{
    return gx_reduce_to(c, "+", in[0], NULL, out);
}
static gx_status op_max_axis0(gx_ctx *c, gx_array *const *in, gx_array **out)
{
    int ax = 0;
    gx_reduce_opts o = {.axes = &ax, .naxes = 1};
    return gx_reduce_to(c, "max", in[0], &o, out);
}
static gx_status op_mapreduce_dist(gx_ctx *c, gx_array *const *in, gx_array **out)
{
    return gx_mapreduce_to(c, "x, y -> (x - y) * (x - y)", "+", 2, in, NULL, out);
}
static gx_status op_argmin_rows(gx_ctx *c, gx_array *const *in, gx_array **out)
{
    int ax = -1;
    gx_reduce_opts o = {.axes = &ax, .naxes = 1};
    return gx_find_to(c, "min", in[0], &o, NULL, out);
}
static gx_status op_bitwise_all(gx_ctx *c, gx_array *const *in, gx_array **out)
{
    return gx_reduce_to(c, "^", in[0], NULL, out);
}

GXT_TEST(cross_reduce)
{
    GXT_CROSS(op_sum_all, 1, IN1(GX_I32, 1000003), 0);
    GXT_CROSS(op_sum_all, 1, IN1(GX_F64, 1000003), 1e-12);
    GXT_CROSS(op_sum_all, 1, IN1(GX_F32, 65537), 1e-4);
    GXT_CROSS(op_sum_axis1, 1, IN2D(GX_F64, 37, 1031), 1e-13);
    GXT_CROSS(op_sum_axis1, 1, IN2D(GX_U8, 5, 70001), 0);
    GXT_CROSS(op_max_axis0, 1, IN2D(GX_F32, 333, 65), 0);
    GXT_CROSS(op_max_axis0, 1, IN2D(GX_I16, 2, 5), 0);
    GXT_CROSS(op_mapreduce_dist, 2, ((gxt_in[]){{GX_F64, 1, {300007}}, {GX_F64, 1, {300007}}}), 1e-12);
    GXT_CROSS(op_argmin_rows, 1, IN2D(GX_F32, 17, 999), 0);
    GXT_CROSS(op_argmin_rows, 1, IN2D(GX_I64, 3, 1), 0);
    GXT_CROSS(op_bitwise_all, 1, IN1(GX_U32, 4097), 0);
}

/* ------------------------------------------------------------ scans, compaction, pipelines */

static gx_status op_cumsum(gx_ctx *c, gx_array *const *in, gx_array **out) { return gx_scan(c, "+", in[0], NULL, out); }
static gx_status op_cummax_rows(gx_ctx *c, gx_array *const *in, gx_array **out)
{
    gx_scan_opts o = {.axis = -1, .exclusive = 1}; /* named op: the neutral element is the init */
    return gx_scan(c, "max", in[0], &o, out);
}
static gx_status op_filter(gx_ctx *c, gx_array *const *in, gx_array **out)
{
    gx_const t = GX_CONST("t", GX_SCALAR_F64(0.25));
    gx_filter_opts o = {.consts = &t, .nconsts = 1};
    return gx_filter(c, "x -> x > t", 1, in, &o, out);
}
static gx_status op_findall(gx_ctx *c, gx_array *const *in, gx_array **out)
{
    return gx_findall(c, "x, y -> x % 3 == 0 && y > 50", 2, in, NULL, out);
}
static gx_status op_pipe(gx_ctx *c, gx_array *const *in, gx_array **out)
{
    gx_pipe *p = NULL;
    gx_status s = gx_pipe_from_arrays(c, 1, in, &p);
    if (s == GX_OK)
        s = gx_pipe_map(p, "x -> x * 2 + 1", NULL);
    if (s == GX_OK)
        s = gx_pipe_filter(p, "x -> x % 3 != 0", NULL);
    if (s == GX_OK)
        s = gx_pipe_collect(p, 1, out);
    gx_pipe_destroy(p);
    return s;
}
static gx_status op_pipe_reduce(gx_ctx *c, gx_array *const *in, gx_array **out)
{
    gx_pipe *p = NULL;
    gx_scalar r;
    gx_status s = gx_pipe_from_arrays(c, 1, in, &p);
    if (s == GX_OK)
        s = gx_pipe_filter(p, "x -> x > 0", NULL);
    if (s == GX_OK)
        s = gx_pipe_mapreduce(p, "x -> x * x", "+", NULL, &r);
    gx_pipe_destroy(p);
    int64_t one = 1;
    if (s == GX_OK)
        s = gx_array_from_host(c, GX_I64, 1, &one, &r.v.i, out);
    return s;
}
static gx_status op_pipe_scan(gx_ctx *c, gx_array *const *in, gx_array **out)
{
    gx_pipe *p = NULL;
    gx_status s = gx_pipe_iota(c, GX_I64, 100003, 5, 3, &p);
    (void)in;
    if (s == GX_OK)
        s = gx_pipe_scan(p, "^", NULL, out);
    gx_pipe_destroy(p);
    return s;
}

GXT_TEST(cross_scan_filter_pipe)
{
    GXT_CROSS(op_cumsum, 1, IN1(GX_I32, 1000003), 0);
    GXT_CROSS(op_cumsum, 1, IN1(GX_F64, 70001), 1e-12);
    GXT_CROSS(op_cumsum, 1, IN2D(GX_I64, 129, 7), 0); /* default axis 0: down the columns */
    GXT_CROSS(op_cummax_rows, 1, IN2D(GX_F32, 33, 257), 0);
    GXT_CROSS(op_filter, 1, IN1(GX_F64, 200003), 0);
    GXT_CROSS(op_findall, 2, ((gxt_in[]){{GX_I32, 2, {31, 1001}}, {GX_U8, 2, {31, 1001}}}), 0);
    GXT_CROSS(op_pipe, 1, IN1(GX_I32, 65539), 0);
    GXT_CROSS(op_pipe_reduce, 1, IN1(GX_I16, 300001), 0);
    GXT_CROSS(op_pipe_scan, 0, NULL, 0);
}

/* ------------------------------------------------------------ arrays */

static gx_status op_clone_convert(gx_ctx *ctx, gx_array *const *in, gx_array **out)
{
    (void)ctx;
    return gx_array_clone(in[0], GX_I16, out);
}
static gx_status op_copy_view(gx_ctx *c, gx_array *const *in, gx_array **out)
{
    gx_array *v = NULL;
    gx_slice sl[2] = {{1, GX_END, 2}, {38, 0, -3}}; /* odd rows, every third column backwards */
    (void)c;
    gx_status s = gx_array_view(in[0], sl, &v);
    if (s == GX_OK)
        s = gx_array_similar(v, out);
    if (s == GX_OK)
        s = gx_array_copy_into(v, *out);
    gx_array_release(v);
    return s;
}
static gx_status op_iota_fill(gx_ctx *c, gx_array *const *in, gx_array **out)
{
    (void)in;
    gx_status s = gx_array_iota(c, GX_U16, 70001, 65530, 7, out);
    gx_array *v = NULL;
    gx_slice sl = {3, GX_END, 5};
    if (s == GX_OK)
        s = gx_array_view(*out, &sl, &v);
    if (s == GX_OK)
        s = gx_array_fill_f64(v, 12345);
    gx_array_release(v);
    return s;
}

/* Bound arrays along an axis (row dot products of m[i, j] * w[j]), in a pipeline
 * scan, and gx_index_reduce (index_add_ along axis 0). */
static gx_status op_rowdot_bound(gx_ctx *c, gx_array *const *in, gx_array **out)
{
    gx_array_desc d;
    gx_status s = gx_array_describe(in[0], &d);
    int64_t shi[2] = {d.shape[0], 1}, shj[2] = {1, d.shape[1]};
    gx_array *i0 = NULL, *j0 = NULL, *ii = NULL, *jj = NULL;
    if (s == GX_OK)
        s = gx_array_iota(c, GX_I64, d.shape[0], 0, 1, &i0);
    if (s == GX_OK)
        s = gx_array_iota(c, GX_I32, d.shape[1], 0, 1, &j0);
    if (s == GX_OK)
        s = gx_array_reshape(i0, 2, shi, &ii);
    if (s == GX_OK)
        s = gx_array_reshape(j0, 2, shj, &jj);
    gx_bind b[2] = {GX_BIND("m", in[0]), GX_BIND("w", in[1])};
    int ax = 1;
    gx_reduce_opts o = {.axes = &ax, .naxes = 1, .arrays = b, .narrays = 2};
    gx_array *ij[2] = {ii, jj};
    if (s == GX_OK)
        s = gx_mapreduce_to(c, "i, j -> m[i, j] * w[j]", "+", 2, ij, &o, out);
    gx_array_release(i0);
    gx_array_release(j0);
    gx_array_release(ii);
    gx_array_release(jj);
    return s;
}
static gx_status op_pipe_scan_bound(gx_ctx *c, gx_array *const *in, gx_array **out)
{
    gx_pipe *p = NULL;
    gx_bind b = GX_BIND("t", in[1]);
    gx_pipe_opts o = {.arrays = &b, .narrays = 1};
    gx_status s = gx_pipe_from_arrays(c, 1, &in[0], &p);
    if (s == GX_OK)
        s = gx_pipe_map(p, "i -> t[i]", &o);
    if (s == GX_OK)
        s = gx_pipe_scan(p, "+", NULL, out);
    gx_pipe_destroy(p);
    return s;
}
static gx_status op_index_add_rows(gx_ctx *c, gx_array *const *in, gx_array **out)
{
    gx_index_opts o = {.deterministic = 1};
    gx_status s = gx_array_clone(in[0], GX_DTYPE_DEFAULT, out);
    if (s == GX_OK)
        s = gx_index_reduce(c, "+", *out, 0, in[1], in[2], &o);
    return s;
}

GXT_TEST(cross_bound_axes_index_reduce)
{
    GXT_CROSS(op_rowdot_bound, 2, ((gxt_in[]){{GX_F64, 2, {37, 1031}}, {GX_F64, 1, {1031}}}), 1e-13);
    GXT_CROSS(op_rowdot_bound, 2, ((gxt_in[]){{GX_I16, 2, {5, 70001}}, {GX_I32, 1, {70001}}}), 0);
    GXT_CROSS(op_pipe_scan_bound, 2, ((gxt_in[]){{GX_U8, 1, {100003}}, {GX_F64, 1, {101}}}), 1e-12);
    GXT_CROSS(op_index_add_rows, 3,
              ((gxt_in[]){{GX_F32, 2, {101, 16}}, {GX_U8, 1, {3001}}, {GX_F32, 2, {3001, 16}}}), 1e-5);
}

GXT_TEST(cross_arrays)
{
    GXT_CROSS(op_clone_convert, 1, IN1(GX_F64, 1001), 0);
    GXT_CROSS(op_copy_view, 1, IN2D(GX_C64, 21, 40), 0);
    GXT_CROSS(op_iota_fill, 0, NULL, 0);
}

/* ------------------------------------------------------------ linear algebra, FFT, random numbers */

static gx_status op_matmul(gx_ctx *c, gx_array *const *in, gx_array **out)
{
    (void)c;
    gx_matmul_opts o = {.op_b = GX_OP_T, .alpha = GX_SCALAR_F64(0.5)};
    return gx_matmul(in[0], in[1], &o, out);
}
static gx_status op_fft(gx_ctx *c, gx_array *const *in, gx_array **out)
{
    (void)c;
    return gx_fft(in[0], 1, GX_FFT_FORWARD, GX_FFT_NORM_ORTHO, out);
}
static gx_status op_rfft2(gx_ctx *c, gx_array *const *in, gx_array **out)
{
    (void)c;
    return gx_rfft(in[0], 2, GX_FFT_NORM_BACKWARD, out);
}
static gx_status op_rand(gx_ctx *c, gx_array *const *in, gx_array **out)
{
    (void)in;
    int64_t sh[2] = {333, 77};
    return gx_rand(c, (gx_rng){.seed = 42, .offset = 3, .start = 5}, GX_F32, 2, sh, out);
}
static gx_status op_rand_int(gx_ctx *c, gx_array *const *in, gx_array **out)
{
    (void)in;
    int64_t n = 100001;
    return gx_rand_int(c, (gx_rng){.seed = 7}, -1000, 1000000, GX_I32, 1, &n, out);
}

GXT_TEST(cross_linalg_fft_rand)
{
    GXT_CROSS(op_matmul, 2, ((gxt_in[]){{GX_F64, 2, {65, 33}}, {GX_F64, 2, {17, 33}}}), 1e-13);
    GXT_CROSS(op_matmul, 2, ((gxt_in[]){{GX_C64, 2, {8, 5}}, {GX_C64, 2, {3, 5}}}), 1e-5);
    GXT_CROSS(op_fft, 1, IN2D(GX_C128, 3, 1000), 1e-12);
    GXT_CROSS(op_rfft2, 1, IN2D(GX_F64, 24, 30), 1e-12);
    GXT_CROSS(op_rand, 0, NULL, 0);
    GXT_CROSS(op_rand_int, 0, NULL, 0);
}

/* f16 / bf16 (issue 20): conversions agree bit for bit (tol 0); arithmetic may
 * contract into FMAs on CUDA, so one half ulp; sums add in another order. */
static gx_status op_to_f16(gx_ctx *c, gx_array *const *in, gx_array **out)
{
    (void)c;
    return gx_array_clone(in[0], GX_F16, out);
}
static gx_status op_to_bf16(gx_ctx *c, gx_array *const *in, gx_array **out)
{
    (void)c;
    return gx_array_clone(in[0], GX_BF16, out);
}
static gx_status op_half_map(gx_ctx *c, gx_array *const *in, gx_array **out)
{
    return gx_map(c, "x, y -> sin(x) * sin(x) + cos(x) * cos(x) + x * y", 2, in, NULL, out);
}
static gx_status op_half_sum(gx_ctx *c, gx_array *const *in, gx_array **out)
{
    return gx_reduce_to(c, "+", in[0], NULL, out);
}

GXT_TEST(cross_half)
{
    GXT_CROSS(op_to_f16, 1, IN1(GX_F32, 100003), 0);
    GXT_CROSS(op_to_f16, 1, IN1(GX_F64, 4099), 0);
    GXT_CROSS(op_to_bf16, 1, IN1(GX_F32, 100003), 0);
    GXT_CROSS(op_to_bf16, 1, IN1(GX_F64, 4099), 0);
    GXT_CROSS(op_half_map, 2, ((gxt_in[]){{GX_F16, 1, {100003}}, {GX_F16, 1, {100003}}}), 0x1p-10);
    GXT_CROSS(op_half_map, 2, ((gxt_in[]){{GX_BF16, 1, {4097}}, {GX_BF16, 1, {4097}}}), 0x1p-7);
    GXT_CROSS(op_half_sum, 1, IN1(GX_F16, 1 << 20), 0x1p-10);
    GXT_CROSS(op_half_sum, 1, IN1(GX_BF16, 33), 0x1p-7);
}

static gx_status op_sort(gx_ctx *c, gx_array *const *in, gx_array **out) { return gx_sort(c, in[0], NULL, out); }
static gx_status op_sort_desc_flat(gx_ctx *c, gx_array *const *in, gx_array **out)
{
    return gx_sort(c, in[0], &(gx_sort_opts){.descending = 1, .flatten = 1}, out);
}
static gx_status op_argsort(gx_ctx *c, gx_array *const *in, gx_array **out)
{
    return gx_argsort(c, in[0], NULL, out);
}
static gx_status op_histogram(gx_ctx *c, gx_array *const *in, gx_array **out)
{
    return gx_histogram(c, in[0], &(gx_histogram_opts){.nbins = 37, .lo = -0.75, .hi = 0.5}, out, NULL);
}
static gx_status op_histogram_w(gx_ctx *c, gx_array *const *in, gx_array **out)
{
    return gx_histogram(c, in[0], &(gx_histogram_opts){.nbins = 5, .lo = -1, .hi = 1, .weights = in[1]}, out, NULL);
}

GXT_TEST(cross_sort_histogram)
{
    GXT_CROSS(op_sort, 1, IN1(GX_F32, 100003), 0);
    GXT_CROSS(op_sort, 1, IN2D(GX_I16, 257, 33), 0);
    GXT_CROSS(op_sort_desc_flat, 1, IN2D(GX_F64, 33, 1001), 0);
    GXT_CROSS(op_argsort, 1, IN1(GX_I32, 70001), 0); /* [-50, 50]: many ties, stable */
    GXT_CROSS(op_argsort, 1, IN2D(GX_F32, 1000, 31), 0);
    GXT_CROSS(op_histogram, 1, IN1(GX_F32, 1000003), 0);
    GXT_CROSS(op_histogram_w, 2, ((gxt_in[]){{GX_F64, 1, {4099}}, {GX_F32, 1, {4099}}}), 1e-12);
}
