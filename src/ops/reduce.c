/* reduce.c -- gx_reduce, gx_mapreduce and the conveniences: checks, operators as C
 * text, element expressions, whole-array reductions (through reduce_gen), results. */
#include "ops/reduce_priv.h"
#include "ops/opname.h"
#include "jit/lambda.h"
#include "ops/userfns.h"

#include <math.h>
#include <stdio.h>
#include <stddef.h>
#include <string.h>

/* ------------------------------------------------------------ literals */

/* A C literal of dtype t for the value of s (converted as C converts). */
static void rd_literal(gx_dtype t, gx_scalar s, char *buf, size_t n)
{
    if (gx__dtype_is_float(t)) {
        double f = gx_scalar_to_f64(s);
        if (isnan(f))
            gx__fmt(buf, n, t == GX_F32 ? "rg_f32_bits(0x7fc00000u)" : "rg_f64_bits(0x7ff8000000000000ull)");
        else if (isinf(f))
            gx__fmt(buf, n, t == GX_F32 ? "rg_f32_bits(%s)" : "rg_f64_bits(%s)",
                    t == GX_F32 ? (f > 0 ? "0x7f800000u" : "0xff800000u")
                                : (f > 0 ? "0x7ff0000000000000ull" : "0xfff0000000000000ull"));
        else
            gx__fmt(buf, n, "(rg_acc)%.17g", f);
        return;
    }
    if (t == GX_BOOL) {
        gx__fmt(buf, n, "(rg_acc)%d", gx_scalar_to_f64(s) != 0);
        return;
    }
    /* Integers: the value's bits wrapped to t's width, converted back by the cast. */
    unsigned char v[8] = {0};
    uint64_t u = 0;
    if (gx__dtype_is_float(s.dtype)) {
        gx__dtype_from_f64(t, s.v.f, v);
        memcpy(&u, v, gx_dtype_size(t));
    } else {
        u = s.dtype == GX_U64 ? s.v.u : (uint64_t)s.v.i;
        if (gx_dtype_size(t) < 8)
            u &= (1ull << (8 * gx_dtype_size(t))) - 1;
    }
    gx__fmt(buf, n, "(rg_acc)%lluull", (unsigned long long)u);
}

/* Lowest / highest value of t as text. */
static void rd_extreme(gx_dtype t, bool highest, char *buf, size_t n)
{
    if (t == GX_F32)
        gx__fmt(buf, n, "rg_f32_bits(%s)", highest ? "0x7f800000u" : "0xff800000u");
    else if (t == GX_F64)
        gx__fmt(buf, n, "rg_f64_bits(%s)", highest ? "0x7ff0000000000000ull" : "0xfff0000000000000ull");
    else if (t == GX_BOOL)
        gx__fmt(buf, n, "(rg_acc)%d", highest);
    else if (!gx__dtype_is_signed(t))
        gx__fmt(buf, n, highest ? "(rg_acc)~(rg_acc)0" : "(rg_acc)0");
    else {
        int bits = (int)gx_dtype_size(t) * 8;
        unsigned long long mx = (1ull << (bits - 1)) - 1;
        if (highest)
            gx__fmt(buf, n, "(rg_acc)%lluull", mx);
        else
            gx__fmt(buf, n, "(rg_acc)(-(int64_t)%lluull - 1)", mx);
    }
}

double gx_scalar_to_f64(gx_scalar s)
{
    if (gx__dtype_is_float(s.dtype))
        return s.v.f;
    if (gx__dtype_is_complex(s.dtype))
        return s.v.c[0];
    if (s.dtype == GX_U64)
        return (double)s.v.u;
    return (double)s.v.i;
}

/* ------------------------------------------------------------ operators */

typedef enum rd_kind {
    RK_ADD,
    RK_MUL,
    RK_MAX,
    RK_MIN,
    RK_AND,
    RK_OR,
    RK_XOR,
    RK_LAND,
    RK_LOR,
    RK_COUNT,
    RK_MEAN,
    RK_FINDMIN,
    RK_FINDMAX,
    RK_LAMBDA,
    RK_UNKNOWN
} rd_kind;

/* The names come from the one table of operator names (opname.c). */
static rd_kind rd_kind_of(const char *op)
{
    static const rd_kind of[] = {
        [OPN_ADD] = RK_ADD, [OPN_MUL] = RK_MUL,     [OPN_MAX] = RK_MAX,   [OPN_MIN] = RK_MIN,
        [OPN_AND] = RK_AND, [OPN_OR] = RK_OR,       [OPN_XOR] = RK_XOR,   [OPN_LAND] = RK_LAND,
        [OPN_LOR] = RK_LOR, [OPN_COUNT] = RK_COUNT, [OPN_MEAN] = RK_MEAN,
    };
    opn_kind k = opn_parse(op);
    if (k != OPN_NONE)
        return of[k];
    return strstr(op, "->") ? RK_LAMBDA : RK_UNKNOWN;
}

static bool rd_dtype_set(const gx_reduce_opts *o) { return o && o->dtype != GX_DTYPE_DEFAULT; }

/* f32 sums and means accumulate in f64 and round once, at the end: per-thread f32
 * accumulators lose about n * eps_f32 * mean|x| when the values share a sign (2^20
 * uniform values in [0, 1): 0.45 off, where NumPy's pairwise sum is 0.05 off).  The
 * f64 adds cost nothing at memory speed, and the result stays f32.  An explicit
 * opts->dtype of f32 asks for f32 accumulation and keeps it (as CUB's sums do). */
static void rd_widen_f32_sum(rd_op *o, gx_dtype et, const gx_reduce_opts *opts)
{
    if (et == GX_F32 && !rd_dtype_set(opts))
        o->acc = GX_F64;
}

static gx_status rd_arith(rd_op *o, rd_kind k, const char *fn)
{
    gx_dtype t = o->acc;
    const char *s = gx_dtype_name(t);
    if (t == GX_BOOL && (k == RK_ADD || k == RK_MUL))
        return gx__err(GX_ERR_DTYPE,
                       "%s: \"+\" and \"*\" need a numeric result dtype, not bool (use \"count\" or \"||\")", fn);
    if (gx__dtype_is_float(t) && (k == RK_AND || k == RK_OR || k == RK_XOR))
        return gx__err(GX_ERR_DTYPE, "%s: bitwise operators need integer or bool data, got %s", fn, s);
    bool fl = gx__dtype_is_float(t), bo = t == GX_BOOL;
    char *c = o->combine;
    size_t n = sizeof o->combine;
    switch (k) {
    case RK_ADD:
    case RK_MEAN:
        gx__fmt(c, n, fl ? "gx_l + gx_r" : "RG_WRAP(+, gx_l, gx_r)");
        gx__fmt(o->identity, sizeof o->identity, "(rg_acc)0");
        break;
    case RK_MUL:
        gx__fmt(c, n, fl ? "gx_l * gx_r" : "RG_WRAP(*, gx_l, gx_r)");
        gx__fmt(o->identity, sizeof o->identity, "(rg_acc)1");
        break;
    case RK_MAX:
    case RK_MIN:
        if (bo)
            gx__fmt(c, n, k == RK_MAX ? "gx_l || gx_r" : "gx_l && gx_r");
        else if (fl)
            gx__fmt(c, n, "rg_f%s%s(gx_l, gx_r)", k == RK_MAX ? "max" : "min", t == GX_F32 ? "32" : "64");
        else
            gx__fmt(c, n, "gx_l %s gx_r ? gx_l : gx_r", k == RK_MAX ? ">" : "<");
        if (fl) /* fmax/fmin's neutral element: all-NaN (and empty) input gives NaN */
            gx__fmt(o->identity, sizeof o->identity,
                    t == GX_F32 ? "rg_f32_bits(0x7fc00000u)" : "rg_f64_bits(0x7ff8000000000000ull)");
        else
            rd_extreme(t, k == RK_MIN, o->identity, sizeof o->identity);
        break;
    case RK_AND:
        gx__fmt(c, n, "(rg_acc)(gx_l & gx_r)");
        gx__fmt(o->identity, sizeof o->identity, "(rg_acc)-1");
        break;
    case RK_OR:
    case RK_XOR:
        gx__fmt(c, n,
                bo && k == RK_XOR ? "gx_l != gx_r"
                : k == RK_OR      ? "(rg_acc)(gx_l | gx_r)"
                                  : "(rg_acc)(gx_l ^ gx_r)");
        gx__fmt(o->identity, sizeof o->identity, "(rg_acc)0");
        break;
    default: return gx__err(GX_ERR_INTERNAL, "%s: operator kind %d has no arithmetic form", fn, (int)k);
    }
    return GX_OK;
}

static void rd_find(rd_op *o, bool want_max)
{
    gx_dtype t = o->acc;
    const char *cmp = want_max ? ">" : "<";
    if (gx__dtype_is_float(t)) {
        /* Literal texts, not formatted: formatting them was 13% of a warm argmin of 1024
         * f32 on the CPU backend (perf, 2-core VM).  Non-NaN beats NaN; the identity is
         * NaN, so all-NaN input gives its first index. */
        static const char *const better[2] = {"gx_l < gx_r || (gx_r != gx_r && gx_l == gx_l)",
                                              "gx_l > gx_r || (gx_r != gx_r && gx_l == gx_l)"};
        /* The same order as one instruction: fminf/fmaxf also prefer a number to NaN. */
        static const char *const sel[2][2] = {{"rg_fmin32(gx_l, gx_r)", "rg_fmax32(gx_l, gx_r)"},
                                              {"rg_fmin64(gx_l, gx_r)", "rg_fmax64(gx_l, gx_r)"}};
        int f64 = t != GX_F32;
        strcpy(o->better, better[want_max]);
        strcpy(o->sel, sel[f64][want_max]);
        strcpy(o->identity, f64 ? "rg_f64_bits(0x7ff8000000000000ull)" : "rg_f32_bits(0x7fc00000u)");
    } else {
        gx__fmt(o->better, sizeof o->better,
                t == GX_BOOL ? (want_max ? "gx_l && !gx_r" : "!gx_l && gx_r") : "gx_l %s gx_r", cmp);
        rd_extreme(t, !want_max, o->identity, sizeof o->identity);
    }
    o->find = true;
    o->out = t;
}

static gx_status rd_lambda_op(rd_op *o, gx_ctx *ctx, const char *op, const gx_reduce_opts *opts, const char *fn)
{
    int np = 0;
    GX__CHECK(lam_parse_arity(op, &np));
    if (np != 2)
        return gx__err(GX_ERR_INVALID_ARGUMENT,
                       "%s: an operator lambda takes two parameters (\"a, b -> ...\"); \"%s\" takes %d", fn, op, np);
    if (!opts || !opts->init)
        return gx__err(GX_ERR_INVALID_ARGUMENT,
                       "%s: the operator \"%s\" is a lambda, so gx cannot know its neutral element: "
                       "pass it as opts->init (e.g. 0 for a sum, -inf for a max)",
                       fn, op);
    o->acc = o->out = rd_dtype_set(opts) ? opts->dtype : opts->init->dtype;
    if (!gx__dtype_supported(o->acc))
        return gx__err(GX_ERR_DTYPE, "%s: accumulator dtype %s is not supported", fn, gx_dtype_name(o->acc));
    gx_dtype at[2] = {o->acc, o->acc};
    gx__userfns *u = gx__userfns_of(ctx);
    lam_env env = {op, 2, at, NULL, 0, u ? u->sigs : NULL, u ? u->count : 0, NULL, 0};
    lam_lambda *lam = NULL;
    GX__CHECK(lam_compile(&env, &lam));
    const char *pn[2] = {"gx_l", "gx_r"};
    gx_status s = lam_emit(lam, pn, NULL, &o->lam);
    lam_free(lam);
    if (s == GX_OK && o->lam.oom)
        s = gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory");
    return s; /* rd_spec_base uses o->lam as the combine expression */
}

/* Resolves `op` for elements of dtype et. */
static gx_status rd_op_make(rd_op *o, gx_ctx *ctx, const char *op, gx_dtype et, const gx_reduce_opts *opts,
                            const char *fn)
{
    GX__ARG(op, "%s: op is NULL (pass \"+\", \"max\", ... or a lambda \"a, b -> ...\")", fn);
    rd_kind k = rd_kind_of(op);
    switch (k) {
    case RK_UNKNOWN:
        return gx__err(GX_ERR_INVALID_ARGUMENT,
                       "%s: unknown operator \"%s\"; use + * max min & | ^ && || sum prod mean any "
                       "all count, or a lambda \"a, b -> ...\"",
                       fn, op);
    case RK_LAMBDA: GX__CHECK(rd_lambda_op(o, ctx, op, opts, fn)); break;
    case RK_FINDMIN:
    case RK_FINDMAX:
        o->acc = et;
        rd_find(o, k == RK_FINDMAX);
        return GX_OK;
    case RK_LAND:
    case RK_LOR:
    case RK_COUNT:
        o->truth = true;
        o->acc = o->out = k == RK_COUNT ? GX_I64 : GX_BOOL;
        gx__fmt(o->combine, sizeof o->combine,
                k == RK_COUNT  ? "gx_l + gx_r"
                : k == RK_LAND ? "gx_l && gx_r"
                               : "gx_l || gx_r");
        gx__fmt(o->identity, sizeof o->identity, "(rg_acc)%d", k == RK_LAND);
        break;
    case RK_MEAN:
        o->mean = true;
        o->acc = o->out = rd_dtype_set(opts) ? opts->dtype : et == GX_F32 ? GX_F32 : GX_F64;
        if (!gx__dtype_is_float(o->acc))
            return gx__err(GX_ERR_DTYPE, "%s: \"mean\" needs a float result dtype, not %s", fn, gx_dtype_name(o->acc));
        rd_widen_f32_sum(o, et, opts);
        GX__CHECK(rd_arith(o, RK_ADD, fn));
        break;
    default:
        o->acc = o->out = rd_dtype_set(opts) ? opts->dtype : (k == RK_ADD || k == RK_MUL) ? opn_acc(OPN_ADD, et) : et;
        if (k == RK_ADD)
            rd_widen_f32_sum(o, et, opts);
        GX__CHECK(rd_arith(o, k, fn));
    }
    if (opts && opts->init)
        rd_literal(o->acc, *opts->init, o->identity, sizeof o->identity);
    return GX_OK;
}

/* Halves: elements load as f32 and every operator computes as for f32 data, with an
 * f32 accumulator (not f32's f64: the half's own rounding dwarfs the sum's), unless
 * opts->dtype chooses one; a half result (the default for half data, or asked for)
 * is the f32 result rounded once when stored. */
static gx_status rd_op_make_half(rd_op *o, gx_ctx *ctx, const char *op, gx_dtype et, const gx_reduce_opts *opts,
                                 const char *fn)
{
    gx_dtype want = rd_dtype_set(opts) ? opts->dtype : et;
    if (!gx__dtype_is_half(et) && !gx__dtype_is_half(want))
        return rd_op_make(o, ctx, op, et, opts, fn);
    gx_reduce_opts h = {0};
    if (opts)
        h = *opts;
    if (gx__dtype_is_half(want) || !rd_dtype_set(opts))
        h.dtype = GX_F32;
    GX__CHECK(rd_op_make(o, ctx, op, gx__dtype_is_half(et) ? GX_F32 : et, &h, fn));
    if (o->out == GX_F32 && gx__dtype_is_half(want))
        o->out = want;
    return GX_OK;
}

/* ------------------------------------------------------------ whole-array reductions */

typedef struct rd_user {
    uint64_t p[RD_MAXIN];
    int64_t st[RD_MAXIN][GX_MAX_DIMS];
    int64_t shape[GX_MAX_DIMS];
    ew_cval c[EW_MAXCONST];
    double cnt;
    bd_args b; /* passed only when the map reads bound arrays */
} rd_user;

/* The argument fields' C text: a constant, spelled out at compile time.  It was
 * formatted on every call (gx__fmt of five numbers), 9% of a warm gx_reduce_into of
 * 1024 f32 (CPU backend, perf). */
#define RD_STR_(x) #x
#define RD_STR(x) RD_STR_(x)
#define RD_USER_FIELDS                                                                                     \
    "uint64_t p[" RD_STR(RD_MAXIN) "]; int64_t st[" RD_STR(RD_MAXIN) "][" RD_STR(GX_MAX_DIMS) "]; int64_t " \
    "shape[" RD_STR(GX_MAX_DIMS) "]; union { double f; int64_t i; uint64_t u; } c[" RD_STR(EW_MAXCONST) "]; double cnt;"

static const char *rd_user_fields(bool bind) { return bind ? RD_USER_FIELDS " gx_bargs b;" : RD_USER_FIELDS; }

/* The user code of a job's kernels: gx_define'd functions, then the bound arrays'
 * types and loads (element position: the row-major index i). */
static gx_status rd_user_code(rd_job *job, gx__sbuf *code, const char **out)
{
    *out = job->ucode;
    if (job->bind.n == 0)
        return GX_OK;
    if (job->ucode)
        gx__sb_puts(code, job->ucode);
    bd_gen_types(code, &job->bind);
    bd_gen(code, &job->bind, gx__target_is_cuda(job->ctx), "u->b.", "i");
    *out = code->p;
    return code->oom ? gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory") : GX_OK;
}

/* How input k of a whole-array reduction is read: streamed at index i (dense, the full
 * size, while streams last), read once (size 1), or gathered through the shape. */
enum { RD_LOAD_STREAM, RD_LOAD_ONE, RD_LOAD_GATHER };
static int rd_load_kind(const gx_array *a, int64_t total, int nstreams)
{
    if (a->size == total && gx__array_contiguous(a) && nstreams < RG_MAXSTREAMS)
        return RD_LOAD_STREAM;
    return a->size == 1 ? RD_LOAD_ONE : RD_LOAD_GATHER;
}

/* Dense inputs of the full shape stream at index i; size-1 inputs are read once;
 * anything else (broadcast, strided views) gathers through the shape.  The argument
 * fields and streams into sp / u; the element statements into elem when it is not
 * NULL (a memo front hit needs none). */
static void rd_full_inputs(const rd_job *job, int64_t total, rg_spec *sp, rd_user *u, gx__sbuf *elem)
{
    char ld[RD_MAXIN][96];
    const char *load[RD_MAXIN];
    bool gather = false;
    for (int k = 0; k < job->nin; k++) {
        const gx_array *a = job->in[k];
        const char *ct = gx__dtype_ctype(a->dtype);
        u->p[k] = (uint64_t)(uintptr_t)gx__array_ptr(a);
        int kind = rd_load_kind(a, total, sp->nstreams);
        if (kind == RD_LOAD_STREAM) {
            sp->stream_dt[sp->nstreams] = a->dtype;
            sp->stream_ptr[sp->nstreams] = u->p[k];
            if (elem)
                gx__fmt(ld[k], sizeof ld[k], "x%d", sp->nstreams);
            sp->nstreams++;
        } else if (kind == RD_LOAD_ONE) {
            if (elem)
                gx__fmt(ld[k], sizeof ld[k], "((const %s *)(rg_uptr)u->p[%d])[0]", ct, k);
        } else {
            rd_bcast_strides(job, k, u->st[k]);
            if (elem)
                gx__fmt(ld[k], sizeof ld[k], "((const %s *)(rg_uptr)u->p[%d])[go%d]", ct, k, k);
            gather = true;
        }
        load[k] = ld[k];
    }
    memcpy(u->shape, job->shape, sizeof u->shape);
    if (!elem)
        return;
    if (gather) {
        gx__sb_puts(elem, "int64_t gq = i, gc; ");
        for (int k = 0; k < job->nin; k++)
            gx__sb_printf(elem, "int64_t go%d = 0; (void)go%d; ", k, k);
        for (int d = job->ndim - 1; d >= 0; d--) {
            if (job->shape[d] == 1)
                continue;
            gx__sb_printf(elem, "gc = gq %% u->shape[%d]; gq /= u->shape[%d]; ", d, d);
            for (int k = 0; k < job->nin; k++)
                if (u->st[k][d])
                    gx__sb_printf(elem, "go%d += gc * u->st[%d][%d]; ", k, k, d);
        }
        gx__sb_puts(elem, "(void)gq; (void)gc; ");
    }
    rd_elem_text(job, load, elem);
}

/* The memo front of a whole-array reduction (rg_spec.front): everything the kernels'
 * text depends on, as plain copies: the operator's texts and dtypes, the element
 * expression, each input's dtype and load kind, the constants' dtypes, the user
 * functions.  Not for gathered inputs (their text depends on the shape and strides)
 * or bound arrays (their loads are generated code): those take the spec's own keys.
 * Why: formatting the element text and hashing it (rg_bkey) per call were ~34% of a
 * warm argmin of 1024 f32 (CPU backend, perf).  Fastest of 7 x 2000 warm calls on
 * 1024 f32, 2-core VM, one thread, work included: argmin 705 -> 494 ns, reduce into a
 * 0-d array 799 -> 614, l2 mapreduce 1194 -> 871. */
static bool rd_front_key(const rd_job *job, int64_t total, gx__bkey *k)
{
    if (job->bind.n > 0)
        return false;
    const rd_op *o = &job->op;
    k->len = 0;
    k->over = false;
    const int64_t head[] = {0x726466, o->acc, o->out, o->find, o->mean, o->truth, job->nin, job->nconst};
    gx__bkey_bytes(k, head, sizeof head);
    int ns = 0;
    for (int i = 0; i < job->nin; i++) {
        int kind = rd_load_kind(job->in[i], total, ns);
        if (kind == RD_LOAD_GATHER)
            return false;
        ns += kind == RD_LOAD_STREAM;
        gx__bkey_int(k, (int64_t)job->in[i]->dtype * 4 + kind);
    }
    for (int j = 0; j < job->nconst; j++)
        gx__bkey_int(k, (int64_t)job->cdt[j]);
    gx__bkey_str(k, o->lam.p);
    gx__bkey_str(k, o->combine);
    gx__bkey_str(k, o->better);
    gx__bkey_str(k, o->sel);
    gx__bkey_str(k, o->identity);
    gx__bkey_str(k, job->expr.p);
    gx__bkey_str(k, job->ucode);
    gx__bkey_str(k, job->fin.len ? job->fin.p : NULL);
    return !k->over;
}

typedef struct rd_fill {
    const rd_job *job;
    int64_t total;
    gx__sbuf *elem, *code;
} rd_fill;

/* rg_spec.fill: the text fields of the spec, built as without a front. */
static gx_status rd_fill_spec(rg_spec *sp, void *arg)
{
    rd_fill *f = arg;
    rd_user scratch;
    rg_spec tmp = *sp;
    tmp.nstreams = 0;
    rd_full_inputs(f->job, f->total, &tmp, &scratch, f->elem);
    if (f->elem->oom)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory");
    sp->elem = f->elem->p;
    return rd_user_code((rd_job *)f->job, f->code, &sp->user_code);
}

static gx_status rd_full(rd_job *job, uint64_t out, uint64_t out_idx, void *host_val, int64_t *host_idx)
{
    int64_t total = job->nout * job->nred;
    rg_spec sp;
    rd_spec_base(job, &sp);
    rd_user u;
    memset(&u, 0, offsetof(rd_user, b)); /* bd_begin fills b */
    for (int j = 0; j < job->nconst; j++)
        u.c[j] = job->cval[j];
    u.cnt = (double)total;
    bool bind = job->bind.n > 0;
    sp.user_fields = rd_user_fields(bind);
    gx__sbuf elem = {0}, code = {0};
    gx__bkey fk;
    rd_fill fill = {job, total, &elem, &code};
    gx_status s = GX_OK;
    if (rd_front_key(job, total, &fk)) {
        rd_full_inputs(job, total, &sp, &u, NULL);
        sp.front = &fk;
        sp.fill = rd_fill_spec;
        sp.fill_arg = &fill;
    } else {
        rd_full_inputs(job, total, &sp, &u, &elem);
        sp.elem = elem.p;
        s = elem.oom ? gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory") : GX_OK;
        if (s == GX_OK)
            s = rd_user_code(job, &code, &sp.user_code);
    }
    if (s == GX_OK)
        s = bd_begin(job->ctx, &job->bind, &u.b);
    if (s == GX_OK)
        s = bd_end(
            job->ctx, &job->bind, job->fn, "element (row-major, of the broadcast inputs)",
            rg_run(job->ctx, &sp, total, &u, bind ? sizeof u : offsetof(rd_user, b), out, out_idx, host_val, host_idx));
    gx__sb_free(&elem);
    gx__sb_free(&code);
    return s;
}

/* ------------------------------------------------------------ preparing a job */

static gx_status rd_check_inputs(gx_ctx *ctx, const char *fn, int nin, gx_array *const *in, bool mapped)
{
    if (nin < 1 || nin > RD_MAXIN)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: %d inputs; between 1 and %d are allowed", fn, nin, RD_MAXIN);
    GX__ARG(in, "%s: in is NULL", fn);
    for (int i = 0; i < nin; i++) {
        GX__CHECK(gx__array_check_nth(in[i], fn, "input", i + 1));
        if (ctx && in[i]->ctx != ctx)
            return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: input %d belongs to another context", fn, i + 1);
        if (!gx__dtype_supported(in[i]->dtype) || (gx__dtype_is_complex(in[i]->dtype) && !mapped))
            return gx__err(GX_ERR_DTYPE, "%s: input %d has dtype %s, which reductions do not support yet%s", fn, i + 1,
                           gx_dtype_name(in[i]->dtype),
                           gx__dtype_is_complex(in[i]->dtype)
                               ? " (complex arrays reduce with \"+\" / \"sum\", or "
                                 "through gx_mapreduce with a real-valued map such as \"z -> abs(z)\")"
                               : "");
    }
    return GX_OK;
}

static gx_status rd_axes(rd_job *job, const gx_reduce_opts *opts)
{
    int na = opts ? opts->naxes : 0;
    if (na < 0 || (na > 0 && !opts->axes))
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: naxes is %d (and axes %s); pass 0 and NULL to reduce every axis",
                       job->fn, na, opts && opts->axes ? "set" : "NULL");
    for (int d = 0; d < job->ndim; d++)
        job->red[d] = na == 0;
    for (int i = 0; i < na; i++) {
        int a = opts->axes[i], d = a < 0 ? a + job->ndim : a;
        if (d < 0 || d >= job->ndim)
            return gx__err(GX_ERR_INVALID_ARGUMENT,
                           "%s: axis %d is out of range for a %d-d array (use 0..%d, or -1 for the last)", job->fn, a,
                           job->ndim, job->ndim - 1);
        if (job->red[d])
            return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: axis %d is listed twice in axes", job->fn, a);
        job->red[d] = true;
    }
    job->nout = job->nred = 1;
    for (int d = 0; d < job->ndim; d++)
        *(job->red[d] ? &job->nred : &job->nout) *= job->shape[d];
    return GX_OK;
}

/* The memo key of a map lambda's emitted expression: what map.c's key holds (user
 * functions, input dtypes, constants' names and dtypes, bound arrays, the text). */
static void rd_map_key(const rd_job *job, const char *map, const gx_dtype *at, const gx_reduce_opts *opts,
                       gx__sbuf *key)
{
    gx__userfns *u = gx__userfns_of(job->ctx);
    gx__sb_printf(key, "rdmap1|%d|", u ? u->count : 0);
    for (int i = 0; i < job->nin; i++)
        gx__sb_printf(key, "%d,", (int)at[i]);
    for (int j = 0; j < job->nconst; j++)
        gx__sb_printf(key, "%s:%d,", opts->consts[j].name, (int)opts->consts[j].value.dtype);
    bd_key(&job->bind, key);
    gx__sb_printf(key, "|%s", map);
}

/* A memo front's slot for an emitted expression and its dtype (the map lambda's and
 * the finish's). */
typedef struct rd_expr_memo {
    gx_dtype et;
    char expr[500];
} rd_expr_memo;

/* An emitted expression (and its dtype) from the memo front into *expr; false on a miss. */
static bool rd_expr_get(gx_ctx *ctx, const gx__bkey *k, gx_dtype *et, gx__sbuf *expr)
{
    rd_expr_memo m;
    if (!gx__memo_bget(ctx, k, &m, sizeof m))
        return false;
    if (et)
        *et = m.et;
    gx__sb_puts(expr, m.expr);
    return true;
}

/* Keeps an expression that fits the front's fixed slot (longer ones take the slow path). */
static void rd_expr_put(gx_ctx *ctx, const gx__bkey *k, gx_dtype et, const gx__sbuf *expr)
{
    rd_expr_memo m;
    if (expr->oom || expr->len >= sizeof m.expr)
        return;
    memset(&m, 0, sizeof m);
    m.et = et;
    memcpy(m.expr, expr->p, expr->len);
    gx__memo_bput(ctx, k, &m, sizeof m);
}

/* The memo front of the map lambda (gx__bkey): rd_map_key's fields as plain copies,
 * for maps without bound arrays.  Why: formatting rd_map_key's text and hashing it as
 * a string made a warm l2 mapreduce of 1024 f32 cost ~1.5x a plain sum on the host
 * (CPU backend, 2-core VM: 701 against 481 ns). */
static bool rd_map_front_key(const rd_job *job, const char *map, const gx_dtype *at, const gx_reduce_opts *opts,
                             int nfns, gx__bkey *k)
{
    if (job->bind.n > 0)
        return false;
    k->len = 0;
    k->over = false;
    const int64_t head[] = {0x72646d, nfns, job->nin, job->nconst};
    gx__bkey_bytes(k, head, sizeof head);
    for (int i = 0; i < job->nin; i++)
        gx__bkey_int(k, (int64_t)at[i]);
    for (int j = 0; j < job->nconst; j++) {
        gx__bkey_int(k, (int64_t)opts->consts[j].value.dtype);
        gx__bkey_str(k, opts->consts[j].name);
    }
    gx__bkey_str(k, map);
    return !k->over;
}

/* The element dtype and expression from the memo (only lambdas that passed every
 * check are kept); false on a miss. */
static bool rd_map_cached(rd_job *job, const gx__sbuf *key)
{
    size_t vlen = 0;
    const char *hit = key->oom ? NULL : gx__memo_find(job->ctx, key->p, &vlen);
    if (!hit || vlen <= sizeof(gx_dtype))
        return false;
    memcpy(&job->et, hit, sizeof(gx_dtype));
    gx__sb_puts(&job->expr, hit + sizeof(gx_dtype));
    return true;
}

static void rd_map_keep(rd_job *job, const gx__sbuf *key)
{
    if (key->oom || job->expr.oom)
        return;
    size_t el = strlen(job->expr.p);
    unsigned char *v = malloc(sizeof(gx_dtype) + el + 1);
    if (!v)
        return;
    memcpy(v, &job->et, sizeof(gx_dtype));
    memcpy(v + sizeof(gx_dtype), job->expr.p, el + 1);
    gx__memo_put(job->ctx, key->p, v, sizeof(gx_dtype) + el + 1);
    free(v);
}

/* Parses, type-checks and emits the map lambda (a miss of rd_map's memo). */
static gx_status rd_map_compile(rd_job *job, const char *map, const gx_dtype *at, const gx_reduce_opts *opts,
                                gx__userfns *u)
{
    int nc = job->nconst;
    lam_env env = {map,           job->nin,   at, nc ? opts->consts : NULL, nc, u ? u->sigs : NULL, u ? u->count : 0,
                   job->bind.arr, job->bind.n};
    lam_lambda *lam = NULL;
    GX__CHECK(lam_compile(&env, &lam));
    job->et = lam_result_type(lam);
    char pn[RD_MAXIN][16], cn[EW_MAXCONST][16];
    const char *pnames[RD_MAXIN], *cnames[EW_MAXCONST];
    for (int i = 0; i < job->nin; i++)
        gx__fmt(pn[i], sizeof pn[i], "m%d", i), pnames[i] = pn[i];
    for (int j = 0; j < nc; j++)
        gx__fmt(cn[j], sizeof cn[j], "c%d", j), cnames[j] = cn[j];
    gx_status s = lam_emit(lam, pnames, cnames, &job->expr);
    lam_free(lam);
    if (s == GX_OK && (!gx__dtype_supported(job->et) || gx__dtype_is_complex(job->et)))
        s = gx__err(GX_ERR_DTYPE, "%s: the map lambda gives %s, which reductions do not support%s", job->fn,
                    gx_dtype_name(job->et),
                    gx__dtype_is_complex(job->et) ? " (reduce re(...) and im(...) separately)" : "");
    return s;
}


static gx_status rd_map(rd_job *job, const char *map, const gx_reduce_opts *opts)
{
    int nc = opts ? opts->nconsts : 0;
    if (nc < 0 || nc > EW_MAXCONST || (nc > 0 && !opts->consts))
        return gx__err(GX_ERR_INVALID_ARGUMENT,
                       "%s: %d constants; between 0 and %d are allowed (and consts must not be NULL)", job->fn, nc,
                       EW_MAXCONST);
    for (int j = 0; j < nc; j++) {
        if (!opts->consts[j].name || !gx__dtype_supported(opts->consts[j].value.dtype))
            return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: constant %d has no name or an unsupported dtype", job->fn, j);
        job->cdt[j] = opts->consts[j].value.dtype;
        ew_cval_of(&opts->consts[j].value, &job->cval[j]);
    }
    job->nconst = nc;
    GX__CHECK(bd_collect(job->ctx, job->fn, opts ? opts->arrays : NULL, opts ? opts->narrays : 0,
                         opts ? opts->unchecked : 0, nc ? opts->consts : NULL, nc, &job->bind));
    if (!map && job->bind.n)
        return gx__err(GX_ERR_INVALID_ARGUMENT,
                       "%s: opts->arrays binds arrays, but only a map lambda reads them (use gx_mapreduce)", job->fn);
    if (!map) {
        job->et = job->in[0]->dtype;
        gx__sb_puts(&job->expr, "m0");
        return job->expr.oom ? gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory") : GX_OK;
    }
    gx_dtype at[RD_MAXIN];
    for (int i = 0; i < job->nin; i++)
        at[i] = job->in[i]->dtype;
    gx__userfns *u = gx__userfns_of(job->ctx);
    gx__bkey fk;
    bool front = rd_map_front_key(job, map, at, opts, u ? u->count : 0, &fk);
    if (front && rd_expr_get(job->ctx, &fk, &job->et, &job->expr))
        return job->expr.oom ? gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory") : GX_OK;
    gx__sbuf key = {0};
    rd_map_key(job, map, at, opts, &key);
    /* Why a memo: the lambda was parsed, checked and emitted on every call, a third of
     * a warm gx_mapreduce_into of 1024 f32 (CPU backend, perf: 2.4 us a call). */
    gx_status s = GX_OK;
    if (rd_map_cached(job, &key)) {
        gx__sb_free(&key);
        return job->expr.oom ? gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory") : GX_OK;
    }
    s = rd_map_compile(job, map, at, opts, u);
    if (s == GX_OK)
        rd_map_keep(job, &key);
    gx__sb_free(&key);
    if (s == GX_OK && front)
        rd_expr_put(job->ctx, &fk, job->et, &job->expr);
    return s;
}

/* opts->finish as rg_spec.final (job->fin): the lambda's expression with its parameter
 * spelled as the folded value in the result dtype and each constant as its argument
 * field.  Memoised by a binary key (a text key's formatting and hashing would be most
 * of what a warm small reduction costs on the host). */
static void rd_finish_key(const rd_job *job, const char *f, const gx_reduce_opts *opts, int nfns, gx__bkey *k)
{
    k->len = 0;
    k->over = false;
    const int64_t head[] = {0x66696e, job->op.out, job->op.acc, job->op.mean, job->nconst, nfns};
    gx__bkey_bytes(k, head, sizeof head);
    for (int j = 0; j < job->nconst; j++) {
        gx__bkey_int(k, (int64_t)job->cdt[j]);
        gx__bkey_str(k, opts->consts[j].name);
    }
    gx__bkey_str(k, f);
}

static gx_status rd_finish_compile(rd_job *job, const char *f, const gx_reduce_opts *opts, gx__userfns *u)
{
    gx_dtype ot = job->op.out;
    int nc = job->nconst;
    lam_env env = {f, 1, &ot, nc ? opts->consts : NULL, nc, u ? u->sigs : NULL, u ? u->count : 0, NULL, 0};
    lam_lambda *lam = NULL;
    GX__CHECK(lam_compile(&env, &lam));
    gx_dtype rt = lam_result_type(lam);
    gx_status s = GX_OK;
    if (!gx__dtype_supported(rt) || gx__dtype_is_complex(rt))
        s = gx__err(GX_ERR_DTYPE, "%s: opts->finish gives %s; a finish must give a real value (the result is %s)",
                    job->fn, gx_dtype_name(rt), gx_dtype_name(ot));
    char pv[96], cn[EW_MAXCONST][64];
    const char *pn[1] = {pv}, *cnames[EW_MAXCONST];
    gx__fmt(pv, sizeof pv, "((%s)(%s))", gx__dtype_vtype(ot), job->op.mean ? "r / (rg_acc)u->cnt" : "r");
    for (int j = 0; j < nc; j++) {
        gx__fmt(cn[j], sizeof cn[j], "((%s)u->c[%d].%s)", gx__dtype_vtype(job->cdt[j]), j, rd_cval_field(job->cdt[j]));
        cnames[j] = cn[j];
    }
    if (s == GX_OK)
        s = lam_emit(lam, pn, cnames, &job->fin);
    lam_free(lam);
    if (s == GX_OK && job->fin.oom)
        s = gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory");
    return s;
}

static gx_status rd_finish(rd_job *job, const gx_reduce_opts *opts)
{
    const char *f = opts ? opts->finish : NULL;
    if (!f)
        return GX_OK;
    if (job->op.find)
        return gx__err(GX_ERR_INVALID_ARGUMENT,
                       "%s: opts->finish maps a folded value, but this call finds the best element and its index; "
                       "map its values afterwards (gx_map_into) instead",
                       job->fn);
    gx__userfns *u = gx__userfns_of(job->ctx);
    gx__bkey k;
    rd_finish_key(job, f, opts, u ? u->count : 0, &k);
    if (rd_expr_get(job->ctx, &k, NULL, &job->fin))
        return job->fin.oom ? gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory") : GX_OK;
    GX__CHECK(rd_finish_compile(job, f, opts, u));
    rd_expr_put(job->ctx, &k, job->op.out, &job->fin);
    return GX_OK;
}

/* Everything but the output: inputs, map, operator, shape, axes.  `find` selects
 * findmin (1) / findmax (2) instead of `op`. */
static gx_status rd_prepare(rd_job *job, gx_ctx *ctx, const char *fn, const char *map, const char *op, int find,
                            int nin, gx_array *const *in, const gx_reduce_opts *opts)
{
    memset(job, 0, sizeof *job);
    job->ctx = ctx;
    job->fn = fn;
    job->nin = nin;
    for (int i = 0; i < nin; i++)
        job->in[i] = in[i];
    gx__userfns *u = gx__userfns_of(ctx);
    job->ucode = u ? u->code.p : NULL;
    GX__CHECK(ew_broadcast_shape(nin, in, &job->ndim, job->shape));
    GX__CHECK(rd_map(job, map, opts));
    if (find) {
        job->op.acc = gx__dtype_is_half(job->et) ? GX_F32 : job->et; /* halves compare as f32 (exactly) */
        rd_find(&job->op, find == 2);
        if (gx__dtype_is_half(job->et))
            job->op.out = job->et;
    } else {
        GX__CHECK(rd_op_make_half(&job->op, ctx, op, job->et, opts, fn));
    }
    GX__CHECK(rd_axes(job, opts));
    GX__CHECK(rd_finish(job, opts));
    if (job->nred == 0 && (job->op.find || job->op.mean) && job->nout > 0)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: %s of an empty %s has no value (it has no neutral element)", fn,
                       job->op.mean ? "the mean" : "the best index", job->ndim && job->nout > 1 ? "axis" : "array");
    return GX_OK;
}

static void rd_job_free(rd_job *job)
{
    gx__sb_free(&job->expr);
    gx__sb_free(&job->op.lam);
    gx__sb_free(&job->fin);
}

/* ------------------------------------------------------------ results */

static void rd_to_scalar(gx_dtype t, const unsigned char *v, gx_scalar *out)
{
    out->dtype = t;
    out->v.u = 0;
    if (gx__dtype_is_float(t))
        out->v.f = gx__dtype_to_f64(t, v);
    else if (t == GX_U64)
        memcpy(&out->v.u, v, 8);
    else if (t == GX_I64)
        memcpy(&out->v.i, v, 8);
    else
        out->v.i = (int64_t)gx__dtype_to_f64(t, v);
}

/* An output array for the job: given (checked) or new with kept dims. */
static gx_status rd_out_array(rd_job *job, gx_dtype dt, gx_array **out, bool *made, const char *what)
{
    *made = false;
    if (*out) {
        GX__CHECK(gx__array_check(*out, what));
        gx_array *o = *out;
        GX__CHECK(gx__array_writable(*out, job->fn));
        if (o->ctx != job->ctx)
            return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: %s belongs to another context", job->fn, what);
        if (o->size != job->nout || !gx__array_contiguous(o))
            return gx__err(GX_ERR_SHAPE,
                           "%s: %s must be a contiguous %s array of %lld elements; it is %s with %lld elements%s",
                           job->fn, what, gx_dtype_name(dt), (long long)job->nout, gx_dtype_name(o->dtype),
                           (long long)o->size, gx__array_contiguous(o) ? "" : " (not contiguous)");
        for (int i = 0; i < job->nin; i++)
            if (gx__arrays_overlap(o, job->in[i]) || gx__array_ptr(o) == gx__array_ptr(job->in[i]))
                if (o->size && job->in[i]->size)
                    return gx__err(GX_ERR_INVALID_ARGUMENT,
                                   "%s: %s shares memory with input %d; write into a separate array", job->fn, what,
                                   i + 1);
        return GX_OK;
    }
    int64_t shape[GX_MAX_DIMS];
    for (int d = 0; d < job->ndim; d++)
        shape[d] = job->red[d] ? 1 : job->shape[d];
    GX__CHECK(gx__array_new(job->ctx, dt, job->ndim, shape, out));
    *made = true;
    return GX_OK;
}

static bool rd_all_reduced(const rd_job *job)
{
    for (int d = 0; d < job->ndim; d++)
        if (!job->red[d] && job->shape[d] != 1)
            return false;
    return true;
}

static gx_status rd_exec(rd_job *job, gx_array *vals, gx_array *idx)
{
    uint64_t o = vals ? (uint64_t)(uintptr_t)gx__array_ptr(vals) : 0;
    uint64_t q = idx ? (uint64_t)(uintptr_t)gx__array_ptr(idx) : 0;
    if (job->nout == 0)
        return GX_OK;
    if (rd_all_reduced(job)) {
        if (!o && !q)
            return GX_OK;
        unsigned char junk[16];
        int64_t jq;
        return rd_full(job, o, q, junk, &jq);
    }
    return ra_run(job, o, q);
}

/* ------------------------------------------------------------ public API */

static gx_status rd_scalar(gx_ctx *ctx, const char *fn, const char *map, const char *op, int find, int nin,
                           gx_array *const *in, const gx_reduce_opts *opts, gx_scalar *val, int64_t *idx)
{
    if (!ctx && !map && find && nin == 1 && !opts && in && (val || idx)) { /* gx_argmin... */
        unsigned char v[16];
        gx_status st;
        if (rd_small_find_host(in[0], find, v, idx, &st)) {
            if (st == GX_OK && val)
                rd_to_scalar(in[0]->dtype, v, val);
            return st;
        }
    }
    GX__OPTS_CHECK(opts, fn);
    GX__CHECK(rd_check_inputs(ctx, fn, nin, in, map != NULL));
    if (!ctx)
        ctx = in[0]->ctx;
    GX__CHECK(gx__ctx_check(ctx));
    GX__ARG(val || idx, "%s: the result pointer is NULL", fn);
    gx__lock(ctx);
    if (gx__graph_recording(ctx)) {
        gx_status r = gx__graph_refuse(ctx, fn, "reduce into a device array (gx_reduce_into / gx_reduce_to, "
                                                "gx_mapreduce_into) inside a graph and read it after gx_graph_launch");
        gx__unlock(ctx);
        return r;
    }
    rd_job job;
    gx_status s = rd_prepare(&job, ctx, fn, map, op, find, nin, in, opts);
    if (s == GX_OK && !rd_all_reduced(&job))
        s = gx__err(GX_ERR_INVALID_ARGUMENT,
                    "%s: a host scalar holds one value, but opts->axes keeps some axes; use the _to "
                    "form for reductions along axes",
                    fn);
    unsigned char v[16] = {0};
    int64_t q = -1;
    if (s == GX_OK && job.nout * job.nred == 0 && job.op.find)
        s = gx__err(GX_ERR_INVALID_ARGUMENT, "%s: the array is empty, so it has no smallest or largest element", fn);
    if (s == GX_OK && job.nout * job.nred == 0 && job.op.mean)
        s = gx__err(GX_ERR_INVALID_ARGUMENT, "%s: the mean of an empty array is undefined", fn);
    if (s == GX_OK)
        s = rd_full(&job, 0, 0, v, &q);
    if (s == GX_OK && val)
        rd_to_scalar(job.op.out, v, val);
    if (s == GX_OK && idx)
        *idx = q;
    rd_job_free(&job);
    gx__unlock(ctx);
    return s;
}

/* An *_into output whose dtype is not the result's: the result goes to a new array
 * first (*user moves to *conv), and rd_convert writes it into the user's array. */
static gx_status rd_redirect(const rd_job *job, const gx_reduce_opts *opts, gx_dtype dt, gx_array **user,
                             gx_array **conv)
{
    *conv = NULL;
    if (!*user || (*user)->dtype == dt)
        return GX_OK;
    GX__CHECK(gx__array_check(*user, job->fn));
    GX__CHECK(gx__into_dtype(job->fn, dt, (*user)->dtype, opts && opts->exact_dtype));
    *conv = *user;
    *user = NULL;
    return GX_OK;
}

/* Converts the result r into the user's array u (same element count, C casts). */
static gx_status rd_convert(gx_ctx *ctx, gx_array *r, gx_array *u)
{
    gx_array *v = NULL;
    gx_status s = gx_array_reshape(r, u->ndim, u->shape, &v);
    if (s == GX_OK)
        s = gx_map_into(ctx, "x -> x", 1, &v, NULL, u);
    gx_array_release(v);
    return s;
}

/* Results into *vals / *idx: new arrays where they are NULL, else the caller's. */
static gx_status rd_into(gx_ctx *ctx, const char *fn, const char *map, const char *op, int find, int nin,
                         gx_array *const *in, const gx_reduce_opts *opts, gx_array **vals, gx_array **idx)
{
    GX__CHECK(gx__ctx_check(ctx));
    GX__OPTS_CHECK(opts, fn);
    GX__CHECK(rd_check_inputs(ctx, fn, nin, in, map != NULL));
    GX__ARG(vals || idx, "%s: out is NULL", fn);
    gx__lock(ctx);
    rd_job job;
    bool made_v = false, made_i = false;
    gx_array *conv_v = NULL, *conv_i = NULL;
    gx_status s = rd_prepare(&job, ctx, fn, map, op, find, nin, in, opts);
    if (s == GX_OK && vals)
        s = rd_redirect(&job, opts, job.op.out, vals, &conv_v);
    if (s == GX_OK && idx)
        s = rd_redirect(&job, opts, GX_I64, idx, &conv_i);
    if (s == GX_OK && vals)
        s = rd_out_array(&job, job.op.out, vals, &made_v, find ? "values" : "out");
    if (s == GX_OK && idx)
        s = rd_out_array(&job, GX_I64, idx, &made_i, "indices");
    if (s == GX_OK)
        s = rd_exec(&job, vals ? *vals : NULL, idx ? *idx : NULL);
    if (s == GX_OK && conv_v)
        s = rd_convert(ctx, *vals, conv_v);
    if (s == GX_OK && conv_i)
        s = rd_convert(ctx, *idx, conv_i);
    if (conv_v) { /* the new array was ours: hand back the user's */
        gx_array_release(*vals);
        *vals = conv_v;
        made_v = false;
    }
    if (conv_i) {
        gx_array_release(*idx);
        *idx = conv_i;
        made_i = false;
    }
    if (s != GX_OK && made_v) {
        gx_array_release(*vals);
        *vals = NULL;
    }
    if (s != GX_OK && made_i) {
        gx_array_release(*idx);
        *idx = NULL;
    }
    rd_job_free(&job);
    gx__unlock(ctx);
    return s;
}

/* A sum of complex numbers is the sums of the real and the imaginary parts: two
 * real mapreduces (gx's reduction kernels fold scalars). */
static bool rd_complex_sum(const gx_array *x, const char *op)
{
    return x && gx__handle_live(x) && gx__dtype_is_complex(x->dtype) && op &&
           (strcmp(op, "+") == 0 || strcmp(op, "sum") == 0);
}

/* A complex sum's result dtype (x's, or opts->dtype: c64 or c128) and the options
 * of the two real sums it is made of (their dtype: the matching real one). */
static gx_status rd_complex_opts(const char *fn, const gx_array *x, const gx_reduce_opts *opts, gx_dtype *want,
                                 gx_reduce_opts *parts)
{
    *want = opts && opts->dtype != GX_DTYPE_DEFAULT ? opts->dtype : x->dtype;
    if (!gx__dtype_is_complex(*want))
        return gx__err(GX_ERR_DTYPE,
                       "%s: a complex sum gives c64 or c128, not %s (opts->dtype); take re(z) or abs(z) "
                       "with gx_mapreduce for a real result",
                       fn, gx_dtype_name(*want));
    memset(parts, 0, sizeof *parts);
    if (opts)
        *parts = *opts;
    parts->dtype = *want == GX_C64 ? GX_F32 : GX_F64;
    parts->exact_dtype = 0;
    return GX_OK;
}

static gx_status rd_complex_scalar(gx_ctx *ctx, gx_array *x, const gx_reduce_opts *opts, gx_scalar *out)
{
    GX__ARG(out, "gx_reduce: out is NULL");
    if (opts && opts->init)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "gx_reduce: a complex sum takes no init (its neutral element is 0)");
    gx_dtype want;
    gx_reduce_opts po;
    GX__CHECK(rd_complex_opts("gx_reduce", x, opts, &want, &po));
    gx_scalar re, im;
    GX__CHECK(rd_scalar(ctx, "gx_reduce", "z -> re(z)", "+", 0, 1, &x, &po, &re, NULL));
    GX__CHECK(rd_scalar(ctx, "gx_reduce", "z -> im(z)", "+", 0, 1, &x, &po, &im, NULL));
    out->dtype = want;
    out->v.c[0] = re.v.f;
    out->v.c[1] = im.v.f;
    return GX_OK;
}

/* into NULL: a new array through *out. */
static gx_status rd_complex_into(gx_ctx *ctx, const char *fn, gx_array *x, const gx_reduce_opts *opts, gx_array *into,
                                 gx_array **out)
{
    if (opts && opts->init)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: a complex sum takes no init (its neutral element is 0)", fn);
    gx_dtype want;
    gx_reduce_opts po;
    GX__CHECK(rd_complex_opts(fn, x, opts, &want, &po));
    gx_array *parts[2] = {NULL, NULL};
    gx_status s = rd_into(ctx, fn, "z -> re(z)", "+", 0, 1, &x, &po, &parts[0], NULL);
    if (s == GX_OK)
        s = rd_into(ctx, fn, "z -> im(z)", "+", 0, 1, &x, &po, &parts[1], NULL);
    gx_map_opts mo = {.dtype = want, .exact_dtype = opts ? opts->exact_dtype : 0};
    if (s == GX_OK && into)
        s = gx_map_into(ctx, "a, b -> complex(a, b)", 2, parts, &mo, into);
    else if (s == GX_OK)
        s = gx_map(ctx, "a, b -> complex(a, b)", 2, parts, &mo, out);
    gx_array_release(parts[0]);
    gx_array_release(parts[1]);
    return s;
}

gx_status gx_reduce(gx_ctx *ctx, const char *op, gx_array *x, const gx_reduce_opts *opts, gx_scalar *out)
{
    GX__CHECK(gx__ctx_check(ctx));
    if (rd_complex_sum(x, op))
        return rd_complex_scalar(ctx, x, opts, out);
    return rd_scalar(ctx, "gx_reduce", NULL, op, 0, 1, &x, opts, out, NULL);
}

gx_status gx_reduce_to(gx_ctx *ctx, const char *op, gx_array *x, const gx_reduce_opts *opts, gx_array **out)
{
    GX__ARG(out, "gx_reduce_to: out is NULL (it receives the new array; gx_reduce_into writes yours)");
    *out = NULL;
    if (rd_complex_sum(x, op)) {
        GX__CHECK(gx__ctx_check(ctx));
        return rd_complex_into(ctx, "gx_reduce_to", x, opts, NULL, out);
    }
    return rd_into(ctx, "gx_reduce_to", NULL, op, 0, 1, &x, opts, out, NULL);
}

gx_status gx_reduce_into(gx_ctx *ctx, const char *op, gx_array *x, const gx_reduce_opts *opts, gx_array *out)
{
    GX__ARG(out, "gx_reduce_into: out is NULL (gx_reduce_to makes a new array)");
    if (rd_complex_sum(x, op)) {
        GX__CHECK(gx__ctx_check(ctx));
        return rd_complex_into(ctx, "gx_reduce_into", x, opts, out, NULL);
    }
    return rd_into(ctx, "gx_reduce_into", NULL, op, 0, 1, &x, opts, &out, NULL);
}

gx_status gx_mapreduce(gx_ctx *ctx, const char *map, const char *op, int nin, gx_array *const *in,
                       const gx_reduce_opts *opts, gx_scalar *out)
{
    GX__CHECK(gx__ctx_check(ctx));
    GX__ARG(map, "gx_mapreduce: map is NULL (pass a lambda such as \"x -> x * x\")");
    return rd_scalar(ctx, "gx_mapreduce", map, op, 0, nin, in, opts, out, NULL);
}

gx_status gx_mapreduce_to(gx_ctx *ctx, const char *map, const char *op, int nin, gx_array *const *in,
                          const gx_reduce_opts *opts, gx_array **out)
{
    GX__ARG(map, "gx_mapreduce_to: map is NULL (pass a lambda such as \"x -> x * x\")");
    GX__ARG(out, "gx_mapreduce_to: out is NULL (it receives the new array; gx_mapreduce_into writes yours)");
    *out = NULL;
    return rd_into(ctx, "gx_mapreduce_to", map, op, 0, nin, in, opts, out, NULL);
}

gx_status gx_mapreduce_into(gx_ctx *ctx, const char *map, const char *op, int nin, gx_array *const *in,
                            const gx_reduce_opts *opts, gx_array *out)
{
    GX__ARG(map, "gx_mapreduce_into: map is NULL (pass a lambda such as \"x -> x * x\")");
    GX__ARG(out, "gx_mapreduce_into: out is NULL (gx_mapreduce_to makes a new array)");
    return rd_into(ctx, "gx_mapreduce_into", map, op, 0, nin, in, opts, &out, NULL);
}

gx_status gx_find_to(gx_ctx *ctx, const char *which, gx_array *x, const gx_reduce_opts *opts, gx_array **values,
                     gx_array **indices)
{
    GX__ARG(which && (strcmp(which, "min") == 0 || strcmp(which, "max") == 0),
            "gx_find_to: which must be \"min\" or \"max\", got %s%s%s", which ? "\"" : "", which ? which : "NULL",
            which ? "\"" : "");
    if (values)
        *values = NULL;
    if (indices)
        *indices = NULL;
    return rd_into(ctx, "gx_find_to", NULL, NULL, which[1] == 'a' ? 2 : 1, 1, &x, opts, values, indices);
}

gx_status gx_find_into(gx_ctx *ctx, const char *which, gx_array *x, const gx_reduce_opts *opts, gx_array *values,
                       gx_array *indices)
{
    GX__ARG(which && (strcmp(which, "min") == 0 || strcmp(which, "max") == 0),
            "gx_find_into: which must be \"min\" or \"max\", got %s%s%s", which ? "\"" : "", which ? which : "NULL",
            which ? "\"" : "");
    gx_status st;
    if (rd_small_find_into(ctx, which[1] == 'a' ? 2 : 1, x, opts, values, indices, &st))
        return st;
    return rd_into(ctx, "gx_find_into", NULL, NULL, which[1] == 'a' ? 2 : 1, 1, &x, opts, values ? &values : NULL,
                   indices ? &indices : NULL);
}

#define RD_CONV(name, opname)                                                   \
    gx_status name(gx_array *x, gx_scalar *out)                                 \
    {                                                                           \
        return rd_scalar(NULL, #name, NULL, opname, 0, 1, &x, NULL, out, NULL); \
    }
gx_status gx_sum(gx_array *x, gx_scalar *out)
{
    if (rd_complex_sum(x, "+"))
        return rd_complex_scalar(x->ctx, x, NULL, out);
    return rd_scalar(NULL, "gx_sum", NULL, "+", 0, 1, &x, NULL, out, NULL);
}
RD_CONV(gx_prod, "*")
RD_CONV(gx_maximum, "max")
RD_CONV(gx_minimum, "min")
RD_CONV(gx_mean, "mean")

gx_status gx_any(gx_array *x, bool *out)
{
    GX__ARG(out, "gx_any: out is NULL");
    gx_scalar s;
    GX__CHECK(rd_scalar(NULL, "gx_any", NULL, "||", 0, 1, &x, NULL, &s, NULL));
    *out = s.v.i != 0;
    return GX_OK;
}

gx_status gx_all(gx_array *x, bool *out)
{
    GX__ARG(out, "gx_all: out is NULL");
    gx_scalar s;
    GX__CHECK(rd_scalar(NULL, "gx_all", NULL, "&&", 0, 1, &x, NULL, &s, NULL));
    *out = s.v.i != 0;
    return GX_OK;
}

gx_status gx_count(gx_array *x, int64_t *out)
{
    GX__ARG(out, "gx_count: out is NULL");
    gx_scalar s;
    GX__CHECK(rd_scalar(NULL, "gx_count", NULL, "count", 0, 1, &x, NULL, &s, NULL));
    *out = s.v.i;
    return GX_OK;
}

gx_status gx_argmin(gx_array *x, int64_t *index)
{
    GX__ARG(index, "gx_argmin: index is NULL");
    return rd_scalar(NULL, "gx_argmin", NULL, NULL, 1, 1, &x, NULL, NULL, index);
}

gx_status gx_argmax(gx_array *x, int64_t *index)
{
    GX__ARG(index, "gx_argmax: index is NULL");
    return rd_scalar(NULL, "gx_argmax", NULL, NULL, 2, 1, &x, NULL, NULL, index);
}

gx_status gx_findmin(gx_array *x, gx_scalar *value, int64_t *index)
{
    GX__ARG(value && index, "gx_findmin: value and index must not be NULL");
    return rd_scalar(NULL, "gx_findmin", NULL, NULL, 1, 1, &x, NULL, value, index);
}

gx_status gx_findmax(gx_array *x, gx_scalar *value, int64_t *index)
{
    GX__ARG(value && index, "gx_findmax: value and index must not be NULL");
    return rd_scalar(NULL, "gx_findmax", NULL, NULL, 2, 1, &x, NULL, value, index);
}
