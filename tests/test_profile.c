#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
/* test_profile.c -- streams, events across streams, page-locked buffers and async
 * copies (both backends), and the profiler's report (labels, call counts, trace,
 * GX_PROFILE at context destroy). */
#include "gx_test.h"

#include <unistd.h>

static bool is_cuda(gx_ctx *ctx)
{
    gx_backend_kind k;
    return gx_ctx_backend(ctx, &k) == GX_OK && k == GX_BACKEND_CUDA;
}

/* ------------------------------------------------------------ streams */

GXT_TEST(stream_two_streams_event_dependency)
{
    gx_ctx *ctx = gxt_ctx();
    const int64_t n = (1 << 20) + 7;
    gx_stream *sa = NULL, *sb = NULL;
    gx_event *ev = NULL;
    GXT_OK(gx_stream_create(ctx, &sa));
    GXT_OK(gx_stream_create(ctx, &sb));
    GXT_OK(gx_event_create(ctx, &ev));
    float *in = NULL, *out = NULL;
    GXT_OK(gx_host_alloc(ctx, (size_t)n * 4, (void **)&in));
    GXT_OK(gx_host_alloc(ctx, (size_t)n * 4, (void **)&out));
    for (int64_t i = 0; i < n; i++)
        in[i] = (float)(i % 1000), out[i] = -1;
    gx_array *x = NULL, *y = NULL, *z = NULL;
    GXT_OK(gx_array_empty(ctx, GX_F32, 1, &n, &x));
    GXT_OK(gx_array_empty(ctx, GX_F32, 1, &n, &z));
    GXT_OK(gx_sync(ctx)); /* the allocations (default stream) precede both streams */
    /* Stream A: upload, y = 2x, then mark the point B must wait for. */
    GXT_OK(gx_ctx_set_stream(ctx, sa));
    gx_stream *cur = NULL;
    GXT_OK(gx_ctx_get_stream(ctx, &cur));
    GXT_CHECK(cur == sa);
    GXT_OK(gx_array_from_host_into_async(in, (size_t)n * 4, x));
    GXT_OK(gx_map(ctx, "x -> x * 2.0f", 1, &x, NULL, &y));
    GXT_OK(gx_event_record(ev));
    /* Stream B: waits for A's event, z = y + 1, download. */
    GXT_OK(gx_stream_wait_event(sb, ev));
    GXT_OK(gx_ctx_set_stream(ctx, sb));
    GXT_OK(gx_map_into(ctx, "y -> y + 1.0f", 1, &y, NULL, z));
    GXT_OK(gx_array_to_host_async(z, out, (size_t)n * 4));
    GXT_OK(gx_stream_sync(sb));
    int bad = 0;
    for (int64_t i = 0; i < n; i++)
        bad += out[i] != (float)(i % 1000) * 2.0f + 1.0f;
    GXT_EQ_I64(bad, 0);
    GXT_OK(gx_ctx_set_stream(ctx, NULL));
    GXT_OK(gx_ctx_get_stream(ctx, &cur));
    GXT_CHECK(cur == NULL);
    /* Events on a given stream; elapsed time between them. */
    gx_event *e0 = NULL;
    GXT_OK(gx_event_create(ctx, &e0));
    GXT_OK(gx_event_record_on(e0, sa));
    GXT_OK(gx_event_record_on(ev, sa));
    GXT_OK(gx_event_sync(ev));
    float ms = -1;
    GXT_OK(gx_event_elapsed_ms(e0, ev, &ms));
    GXT_CHECK(ms >= 0);
    gx_array_release(x);
    gx_array_release(y);
    gx_array_release(z);
    GXT_OK(gx_host_free(ctx, in));
    GXT_OK(gx_host_free(ctx, out));
    gx_event_destroy(ev);
    gx_event_destroy(e0);
    GXT_OK(gx_stream_destroy(sa));
    GXT_OK(gx_stream_destroy(sb));
}

GXT_TEST(stream_async_copies_pageable_and_views)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t shape[2] = {10, 12};
    double h[120], back[120];
    for (int i = 0; i < 120; i++)
        h[i] = i * 0.5;
    gx_array *a = NULL, *v = NULL;
    GXT_OK(gx_array_empty(ctx, GX_F64, 2, shape, &a));
    /* Pageable memory: the synchronous path, still correct. */
    GXT_OK(gx_array_from_host_into_async(h, sizeof h, a));
    GXT_OK(gx_array_to_host_async(a, back, sizeof back));
    GXT_CHECK(memcmp(h, back, sizeof h) == 0);
    /* A strided view from page-locked memory: also the synchronous path. */
    gx_slice sl[2] = {{0, GX_END, 2}, {1, 4, 1}};
    GXT_OK(gx_array_view(a, sl, &v));
    double *pin = NULL;
    GXT_OK(gx_host_alloc(ctx, 15 * sizeof(double), (void **)&pin));
    GXT_OK(gx_array_to_host_async(v, pin, 15 * sizeof(double)));
    GXT_OK(gx_sync(ctx));
    int bad = 0;
    for (int r = 0; r < 5; r++)
        for (int c = 0; c < 3; c++)
            bad += pin[r * 3 + c] != h[(2 * r) * 12 + 1 + c];
    GXT_EQ_I64(bad, 0);
    GXT_STATUS(gx_array_to_host_async(a, back, 8), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_host_free(ctx, back), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("gx_host_alloc");
    GXT_OK(gx_host_free(ctx, pin));
    GXT_OK(gx_host_free(ctx, NULL));
    gx_array_release(v);
    gx_array_release(a);
}

GXT_TEST(stream_bad_handles)
{
    gx_ctx *ctx = gxt_ctx();
    gx_stream *s = NULL;
    GXT_OK(gx_stream_create(ctx, &s));
    GXT_OK(gx_ctx_set_stream(ctx, s));
    GXT_OK(gx_stream_destroy(s)); /* the context falls back to its default stream */
    gx_stream *cur = (gx_stream *)1;
    GXT_OK(gx_ctx_get_stream(ctx, &cur));
    GXT_CHECK(cur == NULL);
    GXT_STATUS(gx_ctx_set_stream(ctx, s), GX_ERR_INVALID_HANDLE);
    GXT_STATUS(gx_stream_sync(s), GX_ERR_INVALID_HANDLE);
    GXT_STATUS(gx_stream_sync(NULL), GX_ERR_INVALID_ARGUMENT);
    GXT_OK(gx_stream_destroy(NULL));
    gx_event *e = NULL;
    GXT_OK(gx_event_create(ctx, &e));
    GXT_STATUS(gx_stream_wait_event(NULL, e), GX_ERR_INVALID_ARGUMENT); /* not recorded */
    GXT_STATUS(gx_event_sync(e), GX_ERR_INVALID_ARGUMENT);
    GXT_OK(gx_event_record_on(e, NULL));
    GXT_OK(gx_stream_wait_event(NULL, e));
    GXT_OK(gx_event_sync(e));
    gx_event_destroy(e);
    /* Leaving a stream and a pinned buffer to gx_ctx_destroy is allowed (freed there). */
    gx_ctx *c2 = NULL;
    void *p = NULL;
    GXT_OK(gx_ctx_create(&c2, GX_BACKEND_AUTO));
    GXT_OK(gx_stream_create(c2, &s));
    GXT_OK(gx_host_alloc(c2, 4096, &p));
    GXT_OK(gx_ctx_destroy(c2));
}

/* ------------------------------------------------------------ profiler */

static char *report(gx_ctx *ctx)
{
    size_t need = 0;
    if (gx_profile_report_text(ctx, NULL, 0, &need) != GX_OK)
        return NULL;
    char *buf = malloc(need);
    if (buf && gx_profile_report_text(ctx, buf, need, NULL) != GX_OK) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* The report row of `name` has `calls` in its Calls column. */
static bool row_has_calls(const char *rep, const char *name, int calls)
{
    for (const char *line = rep; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        size_t nn = strlen(name);
        if (len > nn && strncmp(line + len - nn, name, nn) == 0 && line[len - nn - 1] == ' ') {
            char want[32];
            snprintf(want, sizeof want, "  %d  ", calls);
            char row[512];
            snprintf(row, sizeof row, "%.*s", (int)(len < 511 ? len : 511), line);
            return strstr(row, want) != NULL;
        }
    }
    return false;
}

GXT_TEST(profile_report_labels_and_counts)
{
    gx_ctx *ctx = gxt_ctx();
    GXT_OK(gx_profile_start(ctx, 0));
    int64_t n = 100000;
    gx_array *x = NULL, *y = NULL;
    GXT_OK(gx_array_iota(ctx, GX_F32, n, 0, 1, &x));
    for (int i = 0; i < 3; i++) {
        GXT_OK(gx_map(ctx, "x -> x * 3.0f + 1.0f", 1, &x, NULL, &y));
        gx_array_release(y);
        y = NULL;
    }
    float *h = malloc((size_t)n * 4);
    GXT_OK(gx_array_to_host(x, h, (size_t)n * 4));
    GXT_OK(gx_array_to_host(x, h, (size_t)n * 4));
    free(h);
    GXT_OK(gx_profile_stop(ctx));
    GXT_OK(gx_map(ctx, "x -> x * 3.0f + 1.0f", 1, &x, NULL, &y)); /* not recorded */
    char *rep = report(ctx);
    GXT_CHECK(rep != NULL);
    if (!rep)
        return;
    GXT_CHECK(strstr(rep, "gx profile") != NULL);
    GXT_CHECK(strstr(rep, "Time (%)") != NULL);
    GXT_CHECK(row_has_calls(rep, "gx_map", 3));
    GXT_CHECK(row_has_calls(rep, "[copy DtoH]", 2));
    GXT_CHECK(strstr(rep, "[alloc]") != NULL);
    GXT_CHECK(strstr(rep, "gx_ew") == NULL); /* labels, not entry names */
    if (!row_has_calls(rep, "gx_map", 3))
        fprintf(stderr, "%s", rep);
    free(rep);
    GXT_OK(gx_profile_reset(ctx));
    rep = report(ctx);
    GXT_CHECK(rep && strstr(rep, "gx_map") == NULL);
    free(rep);
    gx_array_release(x);
    gx_array_release(y);
}

GXT_TEST(profile_trace_rows)
{
    gx_ctx *ctx = gxt_ctx();
    GXT_OK(gx_profile_start(ctx, 1));
    gx_array *x = NULL, *y = NULL;
    GXT_OK(gx_array_iota(ctx, GX_F64, 5000, 0, 1, &x));
    GXT_OK(gx_map(ctx, "x -> x + 1", 1, &x, NULL, &y));
    char *rep = report(ctx);
    GXT_CHECK(rep && strstr(rep, "Trace") != NULL && strstr(rep, "Regs") != NULL);
    if (rep && is_cuda(ctx)) {
        /* The map's row shows its grid and block ("Gx1x1  Bx1x1"). */
        const char *row = strstr(rep, "x1x1");
        GXT_CHECK(row != NULL);
    }
    free(rep);
    gx_array_release(x);
    gx_array_release(y);
}

GXT_TEST(profile_env_report_at_destroy)
{
    /* GX_PROFILE=1: the report goes to stderr when the context is destroyed. */
    char path[] = "/tmp/gx-profile-XXXXXX";
    int fd = mkstemp(path);
    GXT_CHECK(fd >= 0);
    if (fd < 0)
        return;
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    setenv("GX_PROFILE", "1", 1);
    gx_ctx *ctx = NULL;
    gx_status s = gx_ctx_create(&ctx, GX_BACKEND_AUTO);
    unsetenv("GX_PROFILE");
    gx_array *x = NULL, *y = NULL;
    if (s == GX_OK) {
        gx_array_iota(ctx, GX_F32, 1000, 0, 1, &x);
        gx_map(ctx, "x -> x - 1.0f", 1, &x, NULL, &y);
        gx_array_release(x);
        gx_array_release(y);
        gx_ctx_destroy(ctx);
    }
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    GXT_OK(s);
    char buf[8192] = {0};
    lseek(fd, 0, SEEK_SET);
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    unlink(path);
    GXT_CHECK(n > 0 && strstr(buf, "gx profile") != NULL);
    GXT_CHECK(row_has_calls(buf, "gx_map", 1));
}
