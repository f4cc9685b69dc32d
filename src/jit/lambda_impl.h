/* lambda_impl.h -- what the lambda_*.c files share (tokens, AST, limits).
 * Nothing here is visible outside src/jit/lambda*.c. */
#ifndef GX_LAMBDA_IMPL_H
#define GX_LAMBDA_IMPL_H

#include "jit/lambda.h"

/* Limits keep every recursion and buffer bounded whatever the input (the fuzzer
 * feeds arbitrary bytes). */
#define LAM__MAX_NEST \
    128 /* nested parentheses / unary ops / calls / ?: (bounds the parser's stack: ~2k frames worst case) */
#define LAM__MAX_HEIGHT 1024 /* AST height (long a+b+c+... chains) */
#define LAM__MAX_PARAMS 64
#define LAM__MAX_ARGS 16 /* arguments of one call (lam_fn_sig holds 16) */
#define LAM__MAX_TEXT (1 << 20)

typedef enum lam__op {
    LAM_OP_NONE = 0,
    LAM_OP_ADD,
    LAM_OP_SUB,
    LAM_OP_MUL,
    LAM_OP_DIV,
    LAM_OP_MOD,
    LAM_OP_SHL,
    LAM_OP_SHR,
    LAM_OP_LT,
    LAM_OP_LE,
    LAM_OP_GT,
    LAM_OP_GE,
    LAM_OP_EQ,
    LAM_OP_NE,
    LAM_OP_AND,
    LAM_OP_XOR,
    LAM_OP_OR,
    LAM_OP_LAND,
    LAM_OP_LOR,
    LAM_OP_NOT,
    LAM_OP_TILDE,
    LAM_OP_QUEST,
    LAM_OP_COLON,
    LAM_OP_LPAREN,
    LAM_OP_RPAREN,
    LAM_OP_COMMA,
    LAM_OP_ARROW,
    LAM_OP_ASSIGN,
    LAM_OP_LBRACK,
    LAM_OP_RBRACK,
    LAM_OP_COUNT
} lam__op;

typedef enum lam__tokkind { LAM_T_EOF, LAM_T_INT, LAM_T_FLT, LAM_T_IDENT, LAM_T_OP } lam__tokkind;

typedef struct lam__tok {
    lam__tokkind kind;
    lam__op op;
    int start, len; /* byte range in the text */
    uint64_t ival;  /* LAM_T_INT */
    double fval;    /* LAM_T_FLT */
    gx_dtype lit;   /* literal's dtype */
} lam__tok;

/* LAM_N_INDEX: name[kids...], a read of a bound array (lam_env.arrays). */
typedef enum lam__kind {
    LAM_N_LIT,
    LAM_N_NAME,
    LAM_N_UNARY,
    LAM_N_BINARY,
    LAM_N_COND,
    LAM_N_CALL,
    LAM_N_INDEX
} lam__kind;

/* What a name or a call resolved to (filled by the type checker). */
typedef enum lam__ref {
    LAM_R_NONE,
    LAM_R_PARAM,
    LAM_R_CONST,
    LAM_R_CAST,
    LAM_R_BUILTIN,
    LAM_R_USER,
    LAM_R_ARRAY
} lam__ref;

typedef struct lam__node lam__node;
struct lam__node {
    lam__kind kind;
    lam__op op; /* unary / binary operator */
    int col;    /* byte column of the node's token */
    int height;
    int id;                /* 0.. in creation order (index of per-node tables) */
    gx_dtype type;         /* result dtype (after checking) */
    gx_dtype optype;       /* dtype the operation computes in */
    gx_dtype conv;         /* dtype the parent wants this value in (set by the checker) */
    uint64_t ival;         /* integer / bool literal */
    double fval;           /* float literal */
    int name_at, name_len; /* identifier (names and calls) */
    lam__ref ref;
    int index; /* parameter / constant / builtin / user function index */
    int nkids;
    lam__node *kid[LAM__MAX_ARGS];
    lam__node *chain; /* every node of a lambda, for freeing */
};

struct lam_lambda {
    char *text; /* private copy (names in the AST point into it) */
    int len;
    int nparams;
    int pcol[LAM__MAX_PARAMS], plen[LAM__MAX_PARAMS];
    int arrow_col;
    lam__node *root;
    lam__node *nodes; /* chain of all nodes */
    int nnodes;
    gx_dtype result;
};

/* ---- lambda_lex.c */
/* Reads the token at *pos into t and advances *pos.  Errors are GX_ERR_SYNTAX with a caret. */
gx_status lam__lex(const char *text, int *pos, lam__tok *t);
const char *lam__op_text(lam__op op);
/* Sets the error: "<kind> error: <head>\n  <text>\n  <caret>\nhint: <hint>".  hint may be NULL. */
gx_status lam__fail(gx_status s, const char *text, int col, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* ---- lambda_parse.c */
gx_status lam__parse(const char *text, lam_lambda **out);

/* lambda_half.c: the environment with halves seen as f32, and the result dtype
 * that remembers them (`kind`: the one half type of all floating operands, f32 if
 * they mix, GX_DTYPE_DEFAULT if there are none). */
typedef struct lam__half_bufs {
    gx_dtype *args;
    gx_const *consts;
} lam__half_bufs;
gx_status lam__half_env(const lam_env *env, lam_env *view, lam__half_bufs *bufs, gx_dtype *kind);
void lam__half_free(lam__half_bufs *bufs);
gx_dtype lam__half_result(gx_dtype kind, gx_dtype result);

/* ---- lambda_sema.c */
typedef enum lam__bkind {
    LAM_B_FLOAT, /* computes in f32/f64; integer args compute in f64 */
    LAM_B_PRED,  /* like FLOAT but returns bool (isnan...) */
    LAM_B_KEEP,  /* abs/min/max/clamp/sign: integer args stay integer */
    LAM_B_CPLX,  /* re/im/conj/abs2/arg: computes in the complex type of its argument */
    LAM_B_MAKE,  /* complex(re, im) */
    LAM_B_RAND   /* rand(seed, i) -> f64, randf(seed, i) -> f32: gx_rand's stream */
} lam__bkind;
typedef struct lam__builtin {
    const char *name;
    int nargs;
    lam__bkind kind;
} lam__builtin;
extern const lam__builtin lam__builtins[];
extern const int lam__nbuiltins;
gx_dtype lam__promote(gx_dtype t);

/* ---- lambda_range.c: bounds of integer values (see there) */
typedef struct lam__rctx lam__rctx;
lam__rctx *lam__rctx_new(const lam_lambda *l, const lam_range *params); /* NULL: out of memory */
void lam__rctx_free(lam__rctx *c);
/* The bound of n's value in n->type; of kid k after conversion to kid->conv. */
lam_range lam__range(lam__rctx *c, const lam__node *n);
lam_range lam__range_kid(lam__rctx *c, const lam__node *n, int k);
lam_range lam__range_conv(lam_range r, gx_dtype from, gx_dtype to);
/* The bound of a op b computed in t (t's whole range where it may wrap). */
lam_range lam__range_binary(lam__op op, lam_range a, lam_range b, gx_dtype t);

#endif
