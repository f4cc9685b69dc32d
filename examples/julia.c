/* julia.c -- the Julia set: one plain C function, mapped over every pixel.
 *
 * As in the CUDA.jl chapter, the pixel function is ordinary scalar code: gx_define
 * registers it, and gx_map calls it once per (i, j) with broadcasting (a column of
 * row indices against a row of column indices).  The same text runs on the GPU and
 * on gx's CPU backend; the image is written as a PNG (--png PATH). */
#include "common.h"

#ifdef GX_HAVE_PNG
#include <png.h>
#endif

/* cf32, c32, cadd, cmul and cabs2 come from gx's prelude, on both backends. */
static const char *julia_src =
    "int juliaset_pixel(int i, int j, int n)\n"
    "{\n"
    "    cf32 c = c32(-0.79f, 0.15f);\n"
    "    cf32 z = c32(-1.5f + 3.0f * (float)j / (float)n, -1.5f + 3.0f * (float)i / (float)n);\n"
    "    for (int k = 0; k < 255; k++) {\n"
    "        z = cadd(cmul(z, z), c);\n"
    "        if (cabs2(z) > 4.0f)\n"
    "            return k;\n"
    "    }\n"
    "    return 255;\n"
    "}\n";

/* The same function as a plain C loop on the host: the reference and the baseline. */
static int julia_host(int i, int j, int n)
{
    float zr = -1.5f + 3.0f * (float)j / (float)n, zi = -1.5f + 3.0f * (float)i / (float)n;
    for (int k = 0; k < 255; k++) {
        float r = zr * zr - zi * zi - 0.79f, im = zr * zi + zi * zr + 0.15f;
        zr = r, zi = im;
        if (zr * zr + zi * zi > 4.0f)
            return k;
    }
    return 255;
}

/* The image as n x n i32 escape counts; the first call also compiles (or loads from
 * the cache), so the function is called twice and the second call is timed. */
static gx_status julia_render(gx_ctx *ctx, int n, gx_array **img, double *ms)
{
    gx_array *is = NULL, *js = NULL, *col = NULL, *row = NULL;
    int64_t col_shape[2] = {n, 1}, row_shape[2] = {1, n};
    gx_const cn = GX_CONST("n", GX_SCALAR_I32(n));
    gx_map_opts opts = {.consts = &cn, .nconsts = 1};
    gx_status s = gx_array_iota(ctx, GX_I32, n, 0, 1, &is);
    if (s == GX_OK)
        s = gx_array_iota(ctx, GX_I32, n, 0, 1, &js);
    if (s == GX_OK)
        s = gx_array_reshape(is, 2, col_shape, &col);
    if (s == GX_OK)
        s = gx_array_reshape(js, 2, row_shape, &row);
    gx_array *in[2] = {col, row};
    for (int pass = 0; pass < 2 && s == GX_OK; pass++) {
        gx_array_release(*img);
        *img = NULL;
        double t0 = ex_now();
        s = gx_map(ctx, "i, j -> juliaset_pixel(i, j, n)", 2, in, &opts, img);
        if (s == GX_OK)
            s = gx_sync(ctx);
        *ms = (ex_now() - t0) * 1e3;
    }
    gx_array_release(is);
    gx_array_release(js);
    gx_array_release(col);
    gx_array_release(row);
    return s;
}

/* Pixels that differ from the host loop, over every `step`-th row.  The CPU backend
 * matches exactly; NVRTC contracts a*b+c into fma (as nvcc does), and on the set's
 * boundary the iteration is chaotic, so there a few pixels escape a step earlier or
 * later: the check allows 1% of them. */
static int64_t julia_diff(const int32_t *v, int n, int step, int64_t *checked)
{
    int64_t bad = 0;
    *checked = 0;
    for (int i = 0; i < n; i += step)
        for (int j = 0; j < n; j++, ++*checked)
            bad += v[(int64_t)i * n + j] != julia_host(i, j, n);
    return bad;
}

#ifdef GX_HAVE_PNG
/* 8-bit grey, brighter = escapes later; sqrt spreads the many small counts.  libpng
 * reports errors by longjmp back here, so this function keeps no state of its own. */
static int julia_png_rows(png_structp png, png_infop info, FILE *f, const int32_t *v, int n, unsigned char *line)
{
    if (setjmp(png_jmpbuf(png)))
        return 0;
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)n, (png_uint_32)n, 8, PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++)
            line[j] = (unsigned char)(255.0 * sqrt(v[(int64_t)i * n + j] / 255.0));
        png_write_row(png, line);
    }
    png_write_end(png, NULL);
    return 1;
}

static int julia_png(const char *path, const int32_t *v, int n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    unsigned char *line = malloc((size_t)n);
    int ok = png && info && line && julia_png_rows(png, info, f, v, n, line);
    png_destroy_write_struct(&png, &info);
    free(line);
    return fclose(f) == 0 && ok;
}
#endif

static void julia_save(const char *path, const int32_t *v, int n)
{
#ifdef GX_HAVE_PNG
    if (julia_png(path, v, n))
        printf("  wrote %s (%d x %d)\n", path, n, n);
    else
        printf("  could not write %s (check that its folder exists and is writable)\n", path);
#else
    (void)v;
    printf("  %s not written (%d x %d): gx was built without libpng (install libpng-dev, re-run cmake)\n", path, n, n);
#endif
}

/* The same map on gx's CPU backend, through a second context: the CPU column. */
static gx_status julia_cpu_ms(int n, double *ms)
{
    gx_ctx *cpu = NULL;
    gx_array *img = NULL;
    gx_status s = gx_ctx_create(&cpu, GX_BACKEND_CPU);
    if (s == GX_OK)
        s = gx_define(cpu, "julia.c", julia_src);
    if (s == GX_OK)
        s = julia_render(cpu, n, &img, ms);
    gx_array_release(img);
    gx_ctx_destroy(cpu);
    return s;
}

/* One size: render, time against the CPU backend and a plain loop, check, save. */
static int julia_size(gx_ctx *ctx, int n, int step, const char *png)
{
    int rc = EX_PASS;
    gx_array *img = NULL;
    int32_t *v = malloc(sizeof(int32_t) * (size_t)n * (size_t)n);
    if (!v)
        return ex_skip("julia: not enough host memory");
    double ms = 0, cpu_ms = -1;
    EX_TRY("gx_map(juliaset_pixel)", julia_render(ctx, n, &img, &ms));
    EX_TRY("download", gx_array_to_host(img, v, sizeof(int32_t) * (size_t)n * (size_t)n));
    /* The CPU column is a comparison, not a check: without a C compiler it is left out. */
    if (ex_on_gpu(ctx) && n <= 1000 && julia_cpu_ms(n, &cpu_ms) != GX_OK) {
        printf("  (no CPU-backend timing: %s)\n", gx_last_error());
        cpu_ms = -1;
    }
    int64_t checked = 0;
    double t0 = ex_now();
    int64_t bad = julia_diff(v, n, step, &checked);
    double loop_ms = (ex_now() - t0) * 1e3 * (double)n * n / (double)checked;
    int exact = !ex_on_gpu(ctx);
    char fig[160];
    int len = snprintf(fig, sizeof fig, "%lld/%lld differ; gx_map %.2f ms", (long long)bad, (long long)checked, ms);
    if (cpu_ms >= 0)
        len += snprintf(fig + len, sizeof fig - (size_t)len, ", cpu backend %.1f ms", cpu_ms);
    snprintf(fig + len, sizeof fig - (size_t)len, ", plain C loop %s%.0f ms", step > 1 ? "~" : "", loop_ms);
    char name[48];
    snprintf(name, sizeof name, "julia set %d x %d", n, n);
    rc = ex_verdict(exact ? bad == 0 : bad * 100 < checked, name, "%s", fig);
    if (png)
        julia_save(png, v, n);
out:
    gx_array_release(img);
    free(v);
    return rc;
}

int example_julia(gx_ctx *ctx, int quick, const char *png)
{
    gx_status s = gx_define(ctx, "julia.c", julia_src);
    if (s != GX_OK)
        return ex_fail("gx_define(julia.c)", s);
    int gpu = ex_on_gpu(ctx);
    int rc = julia_size(ctx, quick && !gpu ? 500 : 1000, 1, gpu && !quick ? NULL : png);
    /* 16x the pixels: where a GPU pulls ahead.  The host check samples every 16th row. */
    if (rc == EX_PASS && gpu && !quick)
        rc = julia_size(ctx, 4000, 16, png);
    return rc;
}

#ifndef GX_TOUR
int main(int argc, char **argv)
{
    int quick = 0;
    const char *png = "julia.png";
    if (!ex_parse_args(argc, argv, &quick, &png))
        return 2;
    gx_ctx *ctx = ex_open("julia");
    if (!ctx)
        return 1;
    return ex_finish("julia", ctx, example_julia(ctx, quick, png));
}
#endif
