#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
/* test_threads.c -- one context hammered from several threads, and separate contexts
 * in separate threads (run under ThreadSanitizer by `make tsan`). */
#include "gx_test.h"

#include <pthread.h>

typedef struct worker {
    gx_ctx *ctx;
    int id;
    int errors;
} worker;

static void *hammer(void *p)
{
    worker *w = p;
    for (int it = 0; it < 40; it++) {
        int64_t n = 1000 + 37 * w->id + it;
        gx_array *a = NULL, *b = NULL;
        float *h = malloc((size_t)n * sizeof *h), *back = malloc((size_t)n * sizeof *back);
        for (int64_t i = 0; i < n; i++)
            h[i] = (float)(w->id * 100000 + it * 1000) + (float)i;
        if (gx_array_from_host(w->ctx, GX_F32, 1, &n, h, &a) != GX_OK || gx_array_similar(a, &b) != GX_OK ||
            gx_array_copy_into(a, b) != GX_OK || gx_array_to_host(b, back, (size_t)n * sizeof *back) != GX_OK ||
            memcmp(h, back, (size_t)n * sizeof *h) != 0)
            w->errors++;
        gx_array_release(a);
        gx_array_release(b);
        free(h);
        free(back);
    }
    return NULL;
}

GXT_TEST(threads_shared_context)
{
    gx_ctx *ctx = gxt_ctx();
    pthread_t t[6];
    worker w[6];
    for (int i = 0; i < 6; i++) {
        w[i] = (worker){ctx, i, 0};
        pthread_create(&t[i], NULL, hammer, &w[i]);
    }
    for (int i = 0; i < 6; i++) {
        pthread_join(t[i], NULL);
        GXT_EQ_I64(w[i].errors, 0);
    }
    gx_memory_stats m;
    GXT_OK(gx_memory_stats_get(ctx, &m));
    GXT_EQ_I64(m.in_use, 0);
}

static void *own_context(void *p)
{
    worker *w = p;
    if (gx_ctx_create(&w->ctx, GX_BACKEND_AUTO) != GX_OK) {
        w->errors++;
        return NULL;
    }
    hammer(w);
    /* each thread has its own last error */
    gx_array *x = NULL;
    int64_t bad = -1;
    if (gx_array_empty(w->ctx, GX_F32, 1, &bad, &x) != GX_ERR_SHAPE || !strstr(gx_last_error(), "negative"))
        w->errors++;
    gx_ctx_destroy(w->ctx);
    return NULL;
}

GXT_TEST(threads_separate_contexts)
{
    gxt_ctx(); /* makes the test skip cleanly where the backend is missing */
    pthread_t t[4];
    worker w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (worker){NULL, i, 0};
        pthread_create(&t[i], NULL, own_context, &w[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        GXT_EQ_I64(w[i].errors, 0);
    }
    GXT_CHECK(gx_last_error()[0] == 0 || strstr(gx_last_error(), "negative") == NULL);
}

typedef struct mapper {
    gx_ctx *ctx;
    int errors;
} mapper;
static void *map_worker(void *p)
{
    mapper *m = p;
    for (int it = 0; it < 10; it++) {
        gx_array *x = NULL, *y = NULL;
        int32_t v[64];
        if (gx_array_iota(m->ctx, GX_I32, 64, it, 1, &x) != GX_OK ||
            gx_map(m->ctx, "x -> x * 3 + 1", 1, &x, NULL, &y) != GX_OK || gx_array_to_host(y, v, sizeof v) != GX_OK)
            m->errors++;
        else
            for (int i = 0; i < 64; i++)
                m->errors += v[i] != (it + i) * 3 + 1;
        gx_array_release(x);
        gx_array_release(y);
    }
    return NULL;
}

GXT_TEST(threads_map_shared_cache)
{
    gx_ctx *ctx = gxt_ctx();
    pthread_t t[4];
    mapper m[4];
    for (int i = 0; i < 4; i++) {
        m[i] = (mapper){ctx, 0};
        pthread_create(&t[i], NULL, map_worker, &m[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        GXT_EQ_I64(m[i].errors, 0);
    }
    gx_cache_stats cs;
    GXT_OK(gx_cache_stats_get(ctx, &cs));
    GXT_CHECK(cs.compiles + cs.disk_hits <= 2); /* iota + map, each built or loaded once */
}

/* Warm small calls from several threads on one context: gx_filter and gx_scan run on
 * a pipeline on the calling thread's stack (rp_pipe_open), whole-array reductions
 * find their kernels through the memo front; each thread's values against its own
 * host reference (TSan runs this too). */
static void *warm_small_calls(void *p)
{
    worker *w = p;
    enum { N = 300 };
    float h[N], got[N];
    for (int i = 0; i < N; i++)
        h[i] = (float)((i * 13 + w->id * 7) % 10); /* 0..9: exact sums */
    int64_t n = N;
    gx_array *x = NULL, *s = NULL, *kept = NULL;
    if (gx_array_from_host(w->ctx, GX_F32, 1, &n, h, &x) != GX_OK || gx_array_similar(x, &s) != GX_OK) {
        w->errors++;
        goto done;
    }
    for (int it = 0; it < 30; it++) {
        float t = (float)(it % 5 + 2); /* the predicate's constant varies */
        gx_const c = GX_CONST("t", GX_SCALAR_F64(t));
        gx_filter_opts fo = {0};
        fo.consts = &c;
        fo.nconsts = 1;
        int64_t nk = -1, want = 0;
        for (int i = 0; i < N; i++)
            want += h[i] > t;
        if (gx_filter(w->ctx, "x -> x > t", 1, &x, &fo, &kept) != GX_OK || gx_array_size(kept, &nk) != GX_OK ||
            nk != want)
            w->errors++;
        gx_array_release(kept);
        kept = NULL;
        if (gx_scan_into(w->ctx, it % 2 ? "max" : "+", x, NULL, s) != GX_OK ||
            gx_array_to_host(s, got, sizeof got) != GX_OK) {
            w->errors++;
            continue;
        }
        float acc = 0;
        for (int i = 0; i < N; i++) {
            acc = it % 2 ? (i == 0 || h[i] > acc ? h[i] : acc) : acc + h[i];
            w->errors += got[i] != acc;
        }
        double sum = 0;
        for (int i = 0; i < N; i++)
            sum += h[i];
        gx_scalar r;
        if (gx_reduce(w->ctx, "+", x, NULL, &r) != GX_OK || gx_scalar_to_f64(r) != sum)
            w->errors++;
    }
done:
    gx_array_release(x);
    gx_array_release(s);
    return NULL;
}

GXT_TEST(threads_warm_small_calls_shared_context)
{
    gx_ctx *ctx = gxt_ctx();
    pthread_t t[4];
    worker w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (worker){ctx, i, 0};
        pthread_create(&t[i], NULL, warm_small_calls, &w[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        GXT_EQ_I64(w[i].errors, 0);
    }
}
