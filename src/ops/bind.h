/* bind.h -- arrays read by index inside lambdas (gx_bind, docs/LAMBDAS.md): the one
 * place that checks the bindings, keys them, generates their loads and reports an
 * index out of range, for every op that runs an element lambda (map, mapreduce over
 * everything or along axes, filter, pipeline stages and terminals).
 *
 * In the emitted lambda, bound array k's read is gx_bl<k>(j0, ...) (lambda.h).  The
 * op pastes bd_gen's text before its kernel: gx_bl<k> becomes a call of an inline
 * function given the array's pointer, extents and strides from the kernel arguments
 * (`acc` names the bd_args field: "a->b." in a C kernel, "a.b." in CUDA) and the
 * element's work position `pos` (the row-major output index of a map), which a
 * failed check records in the bounds flag (bounds.h; tag = 16 * k + axis).  A failed
 * read yields 0 of the element type and never touches memory. */
#ifndef GX_OPS_BIND_H
#define GX_OPS_BIND_H

#include "core/gx_internal.h"
#include "jit/lambda.h"

#define BD_MAX 8

/* Must match bd_gen_struct's text (8-byte fields only). */
typedef struct bd_desc {
    uint64_t p; /* address of element (0, ..., 0) */
    int64_t n[GX_MAX_DIMS], s[GX_MAX_DIMS];
} bd_desc;
typedef struct bd_args {
    uint64_t flag; /* the bounds flag (0 when unchecked) */
    bd_desc a[BD_MAX];
} bd_args;

typedef struct bd_set {
    int n;        /* bound arrays; 0: the op generates exactly what it did without them */
    bool checked; /* bounds checks (opts.unchecked == 0) */
    lam_arr arr[BD_MAX]; /* as the lambda sees them: f16 / bf16 arrays as f32 */
    gx_dtype sdt[BD_MAX]; /* the stored dtypes (loads widen halves) */
    const gx_array *a[BD_MAX];
    void *flag; /* while running: the bounds flag */
} bd_set;

/* Checks opts' bindings (names, arrays of ctx, dtypes, at most BD_MAX, no name also
 * a constant) into *set.  GX_ERR_INVALID_ARGUMENT / GX_ERR_DTYPE naming `fn`. */
gx_status bd_collect(gx_ctx *ctx, const char *fn, const gx_bind *arrays, int narrays, int unchecked,
                     const gx_const *consts, int nconsts, bd_set *set);
/* Appends what a lambda's memo key needs (names, dtypes, ranks, checks); nothing when n == 0. */
void bd_key(const bd_set *set, gx__sbuf *key);
/* The field declaration for the kernel argument struct ("gx_bargs b;"), and the
 * typedefs it needs (paste before the struct).  Nothing when n == 0. */
void bd_gen_types(gx__sbuf *b, const bd_set *set);
/* The load helpers and gx_bl<k> macros (see above).  Nothing when n == 0. */
void bd_gen(gx__sbuf *b, const bd_set *set, bool cuda, const char *acc, const char *pos);
/* Starts a run: the flag (when checked) and the arguments (pointers, extents, strides). */
gx_status bd_begin(gx_ctx *ctx, bd_set *set, bd_args *args);
/* Ends a run that returned s: reads the flag back (waits) and turns an offence into
 * GX_ERR_INDEX ("fn: ... at <poswhat> P ...").  Returns s when s is an error. */
gx_status bd_end(gx_ctx *ctx, bd_set *set, const char *fn, const char *poswhat, gx_status s);

/* bd_end for work positions pos = output * per + reduced (reductions along axes):
 * the message names both. */
gx_status bd_end_split(gx_ctx *ctx, bd_set *set, const char *fn, int64_t per, gx_status s);

/* For the calls whose only lambda is a combine operator (gx_scan, the pipeline's
 * reduce/scan terminals): bindings there are GX_ERR_INVALID_ARGUMENT whose message
 * ends with `instead` (where to read the arrays: a map).  GX_OK when narrays == 0. */
gx_status bd_no_operator(const char *fn, int narrays, const char *instead);

#endif
