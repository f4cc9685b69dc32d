/* accuracy.c -- gx's side of bench/peers/accuracy.py: reads two f32 arrays x, y from
 * .npy files and prints, for each backend asked for, gx_sum(x), gx_mean(x) and the
 * l2 distance sqrt(sum (x-y)^2) (gx_mapreduce "+", sqrt on the host), one JSON object
 * per line:
 *     {"lib":"gx","backend":"cpu","op":"sum","n":N,"value":V}
 * or {"lib":"gx","backend":"cuda","skipped":"why"} where a backend will not open.
 * The script compares the values with exact sums.
 *
 *   gx_accuracy [--backends cpu,cuda] x.npy y.npy
 *
 * Only what numpy.save writes for a 1-d little-endian float32 array is read: the
 * "\x93NUMPY" magic, a version 1, 2 or 3 header with 'descr': '<f4', 'fortran_order':
 * False and 'shape': (n,), then n floats. */
#include "gx.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads a 1-d '<f4' .npy file into *data (malloc'd), its length into *n; 0 on success,
 * else prints why and returns -1. */
static int acc_read_npy(const char *path, float **data, int64_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "gx_accuracy: cannot open %s\n", path);
        return -1;
    }
    unsigned char pre[10];
    int ok = fread(pre, 1, 8, f) == 8 && memcmp(pre, "\x93NUMPY", 6) == 0;
    size_t hlen = 0;
    if (ok && pre[6] == 1) {
        ok = fread(pre + 8, 1, 2, f) == 2;
        hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
    } else if (ok && (pre[6] == 2 || pre[6] == 3)) {
        unsigned char l[4];
        ok = fread(l, 1, 4, f) == 4;
        hlen = (size_t)l[0] | (size_t)l[1] << 8 | (size_t)l[2] << 16 | (size_t)l[3] << 24;
    } else {
        ok = 0;
    }
    char *hdr = ok && hlen < (1u << 20) ? calloc(hlen + 1, 1) : NULL;
    ok = hdr && fread(hdr, 1, hlen, f) == hlen;
    const char *shape = ok ? strstr(hdr, "'shape': (") : NULL;
    long long len = -1;
    int end = 0;
    /* One dimension only: "(n,)" ("(r, c)" goes on after the comma). */
    ok = ok && strstr(hdr, "'descr': '<f4'") && strstr(hdr, "'fortran_order': False") && shape &&
         sscanf(shape, "'shape': (%lld%n", &len, &end) == 1 && len >= 0 && strncmp(shape + end, ",)", 2) == 0;
    float *d = ok ? malloc((size_t)(len ? len : 1) * sizeof *d) : NULL;
    if (d && fread(d, sizeof *d, (size_t)len, f) != (size_t)len) {
        free(d);
        d = NULL;
    }
    free(hdr);
    fclose(f);
    if (!d) {
        fprintf(stderr,
                "gx_accuracy: %s is not a 1-d little-endian float32 .npy file (numpy.save of a float32 "
                "vector)\n",
                path);
        return -1;
    }
    *data = d;
    *n = len;
    return 0;
}

/* s as a JSON string (quotes, backslashes and control characters escaped). */
static void acc_json_str(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

static void acc_print(const char *backend, const char *op, int64_t n, double v)
{
    printf("{\"lib\":\"gx\",\"backend\":\"%s\",\"op\":\"%s\",\"n\":%lld,\"value\":%.17g}\n", backend, op, (long long)n,
           v);
}

/* The three results on one backend, printed; 0, or -1 after printing the failure. */
static int acc_run(gx_backend_kind kind, const char *name, const float *hx, const float *hy, int64_t n)
{
    gx_ctx *ctx = NULL;
    if (gx_ctx_create(&ctx, kind) != GX_OK) {
        printf("{\"lib\":\"gx\",\"backend\":\"%s\",\"skipped\":", name);
        acc_json_str(gx_last_error());
        printf("}\n");
        return 0;
    }
    gx_array *x = NULL, *y = NULL;
    gx_scalar s, m, q;
    gx_status st = gx_array_from_host(ctx, GX_F32, 1, &n, hx, &x);
    if (st == GX_OK)
        st = gx_array_from_host(ctx, GX_F32, 1, &n, hy, &y);
    if (st == GX_OK)
        st = gx_sum(x, &s);
    if (st == GX_OK)
        st = gx_mean(x, &m);
    gx_array *in[2] = {x, y};
    if (st == GX_OK)
        st = gx_mapreduce(ctx, "x, y -> (x-y)*(x-y)", "+", 2, in, NULL, &q);
    if (st == GX_OK) {
        acc_print(name, "sum", n, s.v.f);
        acc_print(name, "mean", n, m.v.f);
        acc_print(name, "l2", n, sqrt(q.v.f));
    } else {
        fprintf(stderr, "gx_accuracy (%s): %s\n", name, gx_last_error());
    }
    gx_array_release(x);
    gx_array_release(y);
    gx_ctx_destroy(ctx);
    return st == GX_OK ? 0 : -1;
}

int main(int argc, char **argv)
{
    const char *backends = "cpu,cuda";
    int a = 1;
    if (a + 1 < argc && strcmp(argv[a], "--backends") == 0) {
        backends = argv[a + 1];
        a += 2;
    }
    if (argc - a != 2) {
        fprintf(stderr, "usage: gx_accuracy [--backends cpu,cuda] x.npy y.npy\n");
        return 2;
    }
    float *hx = NULL, *hy = NULL;
    int64_t n = 0, ny = 0;
    if (acc_read_npy(argv[a], &hx, &n) || acc_read_npy(argv[a + 1], &hy, &ny))
        return 1;
    if (n != ny) {
        fprintf(stderr, "gx_accuracy: x has %lld elements, y %lld\n", (long long)n, (long long)ny);
        return 1;
    }
    int rc = 0;
    char list[64];
    snprintf(list, sizeof list, ",%s,", backends);
    if (strstr(list, ",cpu,"))
        rc |= acc_run(GX_BACKEND_CPU, "cpu", hx, hy, n);
    if (strstr(list, ",cuda,"))
        rc |= acc_run(GX_BACKEND_CUDA, "cuda", hx, hy, n);
    free(hx);
    free(hy);
    return rc ? 1 : 0;
}
