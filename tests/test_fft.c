/* test_fft.c -- gx_fft / gx_rfft / gx_irfft and their *_into forms against a direct
 * O(n^2) DFT in double (1-, 2-, 3-d, batched, non-power-of-two sizes), every norm,
 * round trips on large sizes, views, and bad input. */
#include "gx_test.h"

typedef struct zd {
    double re, im;
} zd;

/* Direct DFT over the last `rank` axes of a dense row-major (nd, shape) array. */
static void ref_dft(const zd *x, zd *y, int nd, const int64_t *shape, int rank, int sign)
{
    int64_t size = 1;
    for (int d = 0; d < nd; d++)
        size *= shape[d];
    zd *a = malloc(sizeof(zd) * (size_t)size), *b = malloc(sizeof(zd) * (size_t)size);
    memcpy(a, x, sizeof(zd) * (size_t)size);
    int64_t inner = 1;
    for (int d = nd - 1; d >= nd - rank; d--) {
        int64_t n = shape[d];
        for (int64_t i = 0; i < size; i++) {
            int64_t k = (i / inner) % n, base = i - k * inner;
            double sr = 0, si = 0;
            for (int64_t j = 0; j < n; j++) {
                double t = sign * 6.283185307179586477 * (double)((j * k) % n) / (double)n;
                zd v = a[base + j * inner];
                sr += v.re * cos(t) - v.im * sin(t);
                si += v.re * sin(t) + v.im * cos(t);
            }
            b[i] = (zd){sr, si};
        }
        memcpy(a, b, sizeof(zd) * (size_t)size);
        inner *= n;
    }
    memcpy(y, a, sizeof(zd) * (size_t)size);
    free(a);
    free(b);
}

static gx_array *upload_z(gx_ctx *ctx, gx_dtype t, int nd, const int64_t *shape, const zd *z, int64_t size)
{
    gx_array *a = NULL;
    if (t == GX_C128) {
        gx_array_from_host(ctx, t, nd, shape, z, &a);
        return a;
    }
    float *f = malloc(sizeof(float) * 2 * (size_t)size + 8);
    for (int64_t i = 0; i < size; i++)
        f[2 * i] = (float)z[i].re, f[2 * i + 1] = (float)z[i].im;
    gx_array_from_host(ctx, t, nd, shape, f, &a);
    free(f);
    return a;
}

static void download_z(gx_array *a, gx_dtype t, zd *z, int64_t size)
{
    if (t == GX_C128) {
        gx_array_to_host(a, z, sizeof(zd) * (size_t)size);
        return;
    }
    float *f = malloc(sizeof(float) * 2 * (size_t)size + 8);
    gx_array_to_host(a, f, sizeof(float) * 2 * (size_t)size);
    for (int64_t i = 0; i < size; i++)
        z[i] = (zd){f[2 * i], f[2 * i + 1]};
    free(f);
}

static double max_abs(const zd *z, int64_t n)
{
    double m = 0;
    for (int64_t i = 0; i < n; i++)
        m = fmax(m, fmax(fabs(z[i].re), fabs(z[i].im)));
    return m;
}

static void check_c2c(gx_dtype t, int nd, const int64_t *shape, int rank, gx_fft_dir dir, gx_fft_norm norm)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t size = 1, N = 1;
    for (int d = 0; d < nd; d++)
        size *= shape[d];
    for (int d = nd - rank; d < nd; d++)
        N *= shape[d];
    zd *x = malloc(sizeof(zd) * (size_t)size), *want = malloc(sizeof(zd) * (size_t)size),
       *got = malloc(sizeof(zd) * (size_t)size);
    for (int64_t i = 0; i < size; i++) {
        x[i] = (zd){gxt_rand01() * 2 - 1, gxt_rand01() * 2 - 1};
        if (t == GX_C64)
            x[i] = (zd){(float)x[i].re, (float)x[i].im};
    }
    ref_dft(x, want, nd, shape, rank, dir == GX_FFT_FORWARD ? -1 : 1);
    double sc = norm == GX_FFT_NORM_ORTHO      ? 1 / sqrt((double)N)
                : norm == GX_FFT_NORM_BACKWARD ? (dir == GX_FFT_INVERSE ? 1.0 / (double)N : 1)
                : norm == GX_FFT_NORM_FORWARD  ? (dir == GX_FFT_FORWARD ? 1.0 / (double)N : 1)
                                               : 1;
    for (int64_t i = 0; i < size; i++)
        want[i].re *= sc, want[i].im *= sc;
    gx_array *a = upload_z(ctx, t, nd, shape, x, size), *o = NULL;
    GXT_CHECK(a != NULL);
    if (nd == 1) {
        GXT_OK(gx_fft(a, rank, dir, norm, &o));
    } else { /* N-d cases go through the *_into form */
        GXT_OK(gx_array_empty(ctx, t, nd, shape, &o));
        GXT_OK(gx_fft_into(a, rank, dir, norm, o));
    }
    download_z(o, t, got, size);
    double tol = (t == GX_C64 ? 2e-6 : 1e-13) * (max_abs(want, size) + 1) * (log2((double)N) + 2);
    for (int64_t i = 0; i < size; i++)
        if (fabs(got[i].re - want[i].re) > tol || fabs(got[i].im - want[i].im) > tol) {
            GXT_FAIL_AT(__FILE__, __LINE__, "%s nd=%d last=%lld rank=%d dir=%d norm=%d i=%lld: %g%+gi want %g%+gi",
                        gx_dtype_name(t), nd, (long long)shape[nd - 1], rank, dir, norm, (long long)i, got[i].re,
                        got[i].im, want[i].re, want[i].im);
            break;
        }
    gx_array_release(a);
    gx_array_release(o);
    free(x), free(want), free(got);
}

GXT_TEST(fft_1d_against_dft)
{
    const int64_t ns[] = {1, 2, 3, 4, 5, 8, 12, 15, 16, 49, 64, 100, 127, 243};
    for (int t = 0; t < 2; t++)
        for (size_t i = 0; i < sizeof ns / sizeof *ns; i++)
            for (int dir = 0; dir < 2; dir++)
                check_c2c(t ? GX_C128 : GX_C64, 1, &ns[i], 1, (gx_fft_dir)dir, GX_FFT_NORM_BACKWARD);
}

GXT_TEST(fft_nd_batched_and_norms)
{
    const int64_t s2[2] = {12, 15}, s3[3] = {4, 6, 5}, b1[2] = {7, 49}, b2[3] = {3, 10, 9}, s4[4] = {2, 3, 4, 5};
    for (int t = 0; t < 2; t++) {
        gx_dtype dt = t ? GX_C128 : GX_C64;
        check_c2c(dt, 2, s2, 2, GX_FFT_FORWARD, GX_FFT_NORM_BACKWARD);
        check_c2c(dt, 3, s3, 3, GX_FFT_INVERSE, GX_FFT_NORM_BACKWARD);
        check_c2c(dt, 2, b1, 1, GX_FFT_FORWARD, GX_FFT_NORM_ORTHO);
        check_c2c(dt, 3, b2, 2, GX_FFT_INVERSE, GX_FFT_NORM_FORWARD);
        check_c2c(dt, 4, s4, 3, GX_FFT_FORWARD, GX_FFT_NORM_NONE);
        check_c2c(dt, 3, b2, 2, GX_FFT_FORWARD, GX_FFT_NORM_FORWARD);
    }
}

/* rfft against the DFT of the real signal; irfft brings it back. */
static void check_real(gx_dtype rt, int nd, const int64_t *shape, int rank)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t size = 1, last = shape[nd - 1], h = last / 2 + 1;
    for (int d = 0; d < nd; d++)
        size *= shape[d];
    int64_t hsize = size / last * h;
    double *x = malloc(sizeof(double) * (size_t)size);
    zd *xz = malloc(sizeof(zd) * (size_t)size), *full = malloc(sizeof(zd) * (size_t)size),
       *got = malloc(sizeof(zd) * (size_t)hsize);
    for (int64_t i = 0; i < size; i++) {
        x[i] = gxt_rand01() * 2 - 1;
        if (rt == GX_F32)
            x[i] = (float)x[i];
        xz[i] = (zd){x[i], 0};
    }
    ref_dft(xz, full, nd, shape, rank, -1);
    gx_array *a = NULL, *o = NULL, *back = NULL;
    if (rt == GX_F64) {
        GXT_OK(gx_array_from_host(ctx, rt, nd, shape, x, &a));
    } else {
        float *f = malloc(sizeof(float) * (size_t)size);
        for (int64_t i = 0; i < size; i++)
            f[i] = (float)x[i];
        GXT_OK(gx_array_from_host(ctx, rt, nd, shape, f, &a));
        free(f);
    }
    gx_dtype ct = rt == GX_F32 ? GX_C64 : GX_C128;
    if (nd == 1) {
        GXT_OK(gx_rfft(a, rank, GX_FFT_NORM_BACKWARD, &o));
    } else { /* N-d cases go through the *_into forms */
        int64_t hshape[GX_MAX_DIMS];
        memcpy(hshape, shape, sizeof(int64_t) * (size_t)nd);
        hshape[nd - 1] = h;
        GXT_OK(gx_array_empty(ctx, ct, nd, hshape, &o));
        GXT_OK(gx_rfft_into(a, rank, GX_FFT_NORM_BACKWARD, o));
    }
    download_z(o, ct, got, hsize);
    double tol = (rt == GX_F32 ? 2e-6 : 1e-13) * (max_abs(full, size) + 1) * 20;
    for (int64_t i = 0; i < hsize; i++) {
        zd w = full[(i / h) * last + i % h];
        if (fabs(got[i].re - w.re) > tol || fabs(got[i].im - w.im) > tol) {
            GXT_FAIL_AT(__FILE__, __LINE__, "rfft %s last=%lld i=%lld: %g%+gi want %g%+gi", gx_dtype_name(rt),
                        (long long)last, (long long)i, got[i].re, got[i].im, w.re, w.im);
            break;
        }
    }
    if (nd == 1) {
        GXT_OK(gx_irfft(o, rank, last, GX_FFT_NORM_BACKWARD, &back));
    } else {
        GXT_OK(gx_array_empty(ctx, rt, nd, shape, &back));
        GXT_OK(gx_irfft_into(o, rank, last, GX_FFT_NORM_BACKWARD, back));
    }
    double *hb = malloc(sizeof(double) * (size_t)size);
    if (rt == GX_F64) {
        GXT_OK(gx_array_to_host(back, hb, sizeof(double) * (size_t)size));
    } else {
        float *f = malloc(sizeof(float) * (size_t)size);
        GXT_OK(gx_array_to_host(back, f, sizeof(float) * (size_t)size));
        for (int64_t i = 0; i < size; i++)
            hb[i] = f[i];
        free(f);
    }
    double rtol = rt == GX_F32 ? 1e-5 : 1e-12;
    for (int64_t i = 0; i < size; i++)
        if (fabs(hb[i] - x[i]) > rtol) {
            GXT_FAIL_AT(__FILE__, __LINE__, "irfft %s last=%lld i=%lld: %g want %g", gx_dtype_name(rt), (long long)last,
                        (long long)i, hb[i], x[i]);
            break;
        }
    gx_array_release(a), gx_array_release(o), gx_array_release(back);
    free(x), free(xz), free(full), free(got), free(hb);
}

GXT_TEST(fft_real_transforms)
{
    const int64_t ns[] = {1, 2, 5, 12, 15, 16, 49, 100, 127};
    const int64_t s2[2] = {6, 10}, s3[3] = {3, 4, 7}, b[2] = {5, 12};
    for (int t = 0; t < 2; t++) {
        gx_dtype rt = t ? GX_F64 : GX_F32;
        for (size_t i = 0; i < sizeof ns / sizeof *ns; i++)
            check_real(rt, 1, &ns[i], 1);
        check_real(rt, 2, s2, 2);
        check_real(rt, 3, s3, 3);
        check_real(rt, 2, b, 1);
    }
}

GXT_TEST(fft_large_round_trips)
{
    gx_ctx *ctx = gxt_ctx();
    const int64_t ns[] = {(1 << 20), 3 * 5 * 7 * 11 * 13 * 17, 1000003 % 1000 + 4096 * 3};
    for (int t = 0; t < 2; t++)
        for (int k = 0; k < 3; k++) {
            gx_dtype dt = t ? GX_C128 : GX_C64;
            int64_t n = ns[k];
            gx_array *a = NULL, *f = NULL, *b = NULL, *re = NULL;
            GXT_OK(gx_rand(ctx, (gx_rng){1, 2, 0}, t ? GX_F64 : GX_F32, 1, (int64_t[]){2 * n}, &re));
            GXT_OK(gx_array_empty(ctx, dt, 1, &n, &a));
            size_t bytes = (size_t)n * gx_dtype_size(dt);
            char *h = malloc(bytes), *h2 = malloc(bytes);
            GXT_OK(gx_array_to_host(re, h, bytes));
            GXT_OK(gx_array_from_host_into(h, bytes, a));
            GXT_OK(gx_fft(a, 1, GX_FFT_FORWARD, GX_FFT_NORM_BACKWARD, &f));
            GXT_OK(gx_fft(f, 1, GX_FFT_INVERSE, GX_FFT_NORM_BACKWARD, &b));
            GXT_OK(gx_array_to_host(b, h2, bytes));
            double worst = 0;
            for (int64_t i = 0; i < 2 * n; i++) {
                double x = t ? ((double *)h)[i] : ((float *)h)[i], y = t ? ((double *)h2)[i] : ((float *)h2)[i];
                worst = fmax(worst, fabs(x - y));
            }
            GXT_CHECK(worst < (t ? 1e-12 : 2e-5));
            if (worst >= (t ? 1e-12 : 2e-5))
                fprintf(stderr, "n=%lld %s worst %g\n", (long long)n, gx_dtype_name(dt), worst);
            free(h), free(h2);
            gx_array_release(a), gx_array_release(f), gx_array_release(b), gx_array_release(re);
        }
}

GXT_TEST(fft_views_and_bad_input)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t s[2] = {8, 6};
    gx_array *a = NULL, *v = NULL, *o = NULL, *vc = NULL, *o2 = NULL, *r = NULL, *bad = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_C128, 2, s, &a));
    double one[2] = {1, 0};
    GXT_OK(gx_array_set(a, (int64_t[]){2, 1}, one));
    gx_slice sl[2] = {{0, 8, 2}, {0, 6, 1}};
    GXT_OK(gx_array_view(a, sl, &v)); /* rows 0, 2, 4, 6 */
    uint64_t c0 = gx_vendor_copies();
    GXT_OK(gx_fft(v, 1, GX_FFT_FORWARD, GX_FFT_NORM_BACKWARD, &o));
    GXT_CHECK(gx_vendor_copies() > c0);
    GXT_OK(gx_array_clone(v, GX_DTYPE_DEFAULT, &vc));
    GXT_OK(gx_fft(vc, 1, GX_FFT_FORWARD, GX_FFT_NORM_BACKWARD, &o2));
    double h1[48], h2[48];
    GXT_OK(gx_array_to_host(o, h1, sizeof h1));
    GXT_OK(gx_array_to_host(o2, h2, sizeof h2));
    GXT_CHECK(memcmp(h1, h2, sizeof h1) == 0);
    /* Row 1 of the view is the impulse at column 1: exp(-2 pi i k / 6). */
    GXT_NEAR(h1[12 + 2], cos(-6.283185307179586477 / 6), 1e-12);
    GXT_NEAR(h1[12 + 3], sin(-6.283185307179586477 / 6), 1e-12);
    GXT_OK(gx_array_zeros(ctx, GX_F32, 2, s, &r));
    GXT_STATUS(gx_fft(r, 1, GX_FFT_FORWARD, GX_FFT_NORM_BACKWARD, &bad), GX_ERR_DTYPE);
    GXT_STATUS(gx_rfft(a, 1, GX_FFT_NORM_BACKWARD, &bad), GX_ERR_DTYPE);
    GXT_STATUS(gx_fft(a, 3, GX_FFT_FORWARD, GX_FFT_NORM_BACKWARD, &bad), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_fft(a, 1, (gx_fft_dir)5, GX_FFT_NORM_BACKWARD, &bad), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_irfft(a, 1, 20, GX_FFT_NORM_BACKWARD, &bad), GX_ERR_SHAPE);
    GXT_MSG_HAS("n_last");
    GXT_STATUS(gx_fft_into(a, 1, GX_FFT_FORWARD, GX_FFT_NORM_BACKWARD, r), GX_ERR_SHAPE);
    GXT_STATUS(gx_fft_into(a, 1, GX_FFT_FORWARD, GX_FFT_NORM_BACKWARD, NULL), GX_ERR_INVALID_ARGUMENT);
    GXT_CHECK(bad == NULL);
    /* into an array you have: the same values; gx_fft ignores what *out held */
    gx_array *into = NULL, *big = NULL, *strided = NULL, *keep = NULL;
    GXT_OK(gx_array_empty(ctx, GX_C128, 2, (int64_t[]){4, 6}, &into));
    GXT_OK(gx_fft_into(v, 1, GX_FFT_FORWARD, GX_FFT_NORM_BACKWARD, into));
    GXT_OK(gx_array_to_host(into, h2, sizeof h2));
    GXT_CHECK(memcmp(h1, h2, sizeof h1) == 0);
    keep = into;
    GXT_OK(gx_fft(v, 1, GX_FFT_INVERSE, GX_FFT_NORM_BACKWARD, &into));
    GXT_CHECK(into != keep);
    GXT_OK(gx_array_to_host(keep, h2, sizeof h2));
    GXT_CHECK(memcmp(h1, h2, sizeof h1) == 0);
    /* an output view that is not dense receives a copy (counted); other rows stay zero */
    GXT_OK(gx_array_zeros(ctx, GX_C128, 2, s, &big));
    GXT_OK(gx_array_view(big, sl, &strided));
    c0 = gx_vendor_copies();
    GXT_OK(gx_fft_into(v, 1, GX_FFT_FORWARD, GX_FFT_NORM_BACKWARD, strided));
    GXT_CHECK(gx_vendor_copies() > c0);
    double hbig[96];
    GXT_OK(gx_array_to_host(big, hbig, sizeof hbig));
    for (int r = 0; r < 8; r++)
        for (int k = 0; k < 12; k++)
            GXT_CHECK(hbig[r * 12 + k] == (r % 2 ? 0.0 : h1[(r / 2) * 12 + k]));
    gx_array_release(into), gx_array_release(keep), gx_array_release(big), gx_array_release(strided);
    gx_array_release(a), gx_array_release(v), gx_array_release(o), gx_array_release(vc), gx_array_release(o2),
        gx_array_release(r);
}
