/* lambda_parse.c -- parameters, then a precedence-climbing parser for the expression.
 * Produces an untyped AST; lambda_sema.c types it. */
#include "jit/lambda_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser {
    const char *text;
    int pos;       /* byte after `tok` */
    lam__tok tok;  /* current token */
    lam__tok prev; /* last consumed token (for "after '*'" messages) */
    int depth;
    lam_lambda *l;
} parser;

static const char *const hint_expr =
    "an expression is a literal, a parameter, a constant, a call f(...), (expr), or an operator applied to those";

static gx_status advance(parser *p)
{
    p->prev = p->tok;
    return lam__lex(p->text, &p->pos, &p->tok);
}

static bool is_op(const parser *p, lam__op op) { return p->tok.kind == LAM_T_OP && p->tok.op == op; }

static gx_status new_node(parser *p, lam__kind kind, int col, lam__node **out)
{
    lam__node *n = calloc(1, sizeof *n);
    if (!n)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory while parsing a lambda");
    n->kind = kind;
    n->col = col;
    n->height = 1;
    n->type = n->optype = n->conv = GX_DTYPE_COUNT;
    n->id = p->l->nnodes++;
    n->chain = p->l->nodes;
    p->l->nodes = n;
    *out = n;
    return GX_OK;
}

static gx_status add_kid(parser *p, lam__node *n, lam__node *kid)
{
    n->kid[n->nkids++] = kid;
    if (kid->height + 1 > n->height)
        n->height = kid->height + 1;
    if (n->height > LAM__MAX_HEIGHT)
        return lam__fail(GX_ERR_SYNTAX, p->text, n->col,
                         "split the expression, or move part of it into a user function",
                         "expression is too long or nests too deeply (more than %d levels)", LAM__MAX_HEIGHT);
    return GX_OK;
}

/* Describes the current token for messages: "end of the lambda", "')'", "'foo'". */
static void tok_desc(const parser *p, char *buf, size_t cap)
{
    if (p->tok.kind == LAM_T_EOF)
        snprintf(buf, cap, "the end of the lambda");
    else
        snprintf(buf, cap, "'%.*s'", p->tok.len > 40 ? 40 : p->tok.len, p->text + p->tok.start);
}

static gx_status expect_expr_error(parser *p)
{
    if (is_op(p, LAM_OP_ASSIGN))
        return lam__fail(GX_ERR_SYNTAX, p->text, p->tok.start, "lambdas have no assignment: use '==' to compare",
                         "unexpected '='");
    if (p->prev.kind == LAM_T_OP)
        return lam__fail(GX_ERR_SYNTAX, p->text, p->tok.start, hint_expr, "expected an expression after '%s'",
                         lam__op_text(p->prev.op));
    char d[64];
    tok_desc(p, d, sizeof d);
    return lam__fail(GX_ERR_SYNTAX, p->text, p->tok.start, hint_expr, "expected an expression, found %s", d);
}

/* One level of nesting as the user sees it: a parenthesis, a call, a unary operator
 * or a ?: branch (the caret points at it).  Counting these, not parser frames, makes
 * the limit the message states the real one; every recursion of the parser passes
 * through one of them except binary operands, which nest at most one frame per
 * precedence level, so the stack stays bounded too. */
static gx_status enter(parser *p)
{
    if (++p->depth > LAM__MAX_NEST)
        return lam__fail(GX_ERR_SYNTAX, p->text, p->tok.start,
                         "split the expression, or move part of it into a user function",
                         "expression nests too deeply: at most %d levels of parentheses, calls, unary operators "
                         "and ?: branches",
                         LAM__MAX_NEST);
    return GX_OK;
}

static gx_status parse_cond(parser *p, lam__node **out);

/* f(a, b, ...) after the name and '(' have been seen; with `index`, a[i, j, ...]
 * after the name and '[' (at least one index). */
static gx_status parse_args(parser *p, lam__node *call, int lparen_col, bool index)
{
    lam__op close = index ? LAM_OP_RBRACK : LAM_OP_RPAREN;
    if (is_op(p, close) && !index)
        return advance(p);
    if (is_op(p, close))
        return lam__fail(GX_ERR_SYNTAX, p->text, p->tok.start, "write one index per axis: a[i] or m[i, j]",
                         "expected an index inside '[]'");
    for (;;) {
        if (call->nkids == LAM__MAX_ARGS)
            return lam__fail(GX_ERR_SYNTAX, p->text, p->tok.start, NULL, "too many %s (at most %d)",
                             index ? "indices" : "arguments in one call", LAM__MAX_ARGS);
        lam__node *arg;
        GX__CHECK(parse_cond(p, &arg));
        GX__CHECK(add_kid(p, call, arg));
        if (is_op(p, LAM_OP_COMMA)) {
            GX__CHECK(advance(p));
            continue;
        }
        if (is_op(p, close))
            return advance(p);
        char d[64];
        tok_desc(p, d, sizeof d);
        if (index)
            return lam__fail(GX_ERR_SYNTAX, p->text, p->tok.start, "separate indices with ',' and close with ']'",
                             "expected ',' or ']' in the index opened at column %d, found %s", lparen_col + 1, d);
        return lam__fail(GX_ERR_SYNTAX, p->text, p->tok.start,
                         "separate arguments with ',' and close the call with ')'",
                         "expected ',' or ')' in the call opened at column %d, found %s", lparen_col + 1, d);
    }
}

static gx_status parse_primary(parser *p, lam__node **out)
{
    lam__tok t = p->tok;
    if (t.kind == LAM_T_INT || t.kind == LAM_T_FLT) {
        GX__CHECK(new_node(p, LAM_N_LIT, t.start, out));
        (*out)->ival = t.ival;
        (*out)->fval = t.fval;
        (*out)->type = t.lit;
        return advance(p);
    }
    if (t.kind == LAM_T_IDENT) {
        bool tr = t.len == 4 && memcmp(p->text + t.start, "true", 4) == 0;
        bool fa = t.len == 5 && memcmp(p->text + t.start, "false", 5) == 0;
        if (tr || fa) {
            GX__CHECK(new_node(p, LAM_N_LIT, t.start, out));
            (*out)->ival = tr;
            (*out)->type = GX_BOOL;
            return advance(p);
        }
        GX__CHECK(advance(p));
        bool call = is_op(p, LAM_OP_LPAREN), index = is_op(p, LAM_OP_LBRACK);
        GX__CHECK(new_node(p, call ? LAM_N_CALL : index ? LAM_N_INDEX : LAM_N_NAME, t.start, out));
        (*out)->name_at = t.start;
        (*out)->name_len = t.len;
        if (!call && !index)
            return GX_OK;
        int lp = p->tok.start;
        GX__CHECK(enter(p));
        GX__CHECK(advance(p));
        GX__CHECK(parse_args(p, *out, lp, index));
        p->depth--;
        return GX_OK;
    }
    if (is_op(p, LAM_OP_LPAREN)) {
        int lp = t.start;
        GX__CHECK(enter(p));
        GX__CHECK(advance(p));
        GX__CHECK(parse_cond(p, out));
        p->depth--;
        if (!is_op(p, LAM_OP_RPAREN)) {
            char d[64];
            tok_desc(p, d, sizeof d);
            return lam__fail(GX_ERR_SYNTAX, p->text, p->tok.start,
                             "add the missing ')' (or an operator if one is missing)",
                             "expected ')' to close the '(' at column %d, found %s", lp + 1, d);
        }
        return advance(p);
    }
    return expect_expr_error(p);
}

static gx_status parse_unary(parser *p, lam__node **out)
{
    if (!(p->tok.kind == LAM_T_OP &&
          (p->tok.op == LAM_OP_ADD || p->tok.op == LAM_OP_SUB || p->tok.op == LAM_OP_NOT || p->tok.op == LAM_OP_TILDE)))
        return parse_primary(p, out);
    lam__tok t = p->tok;
    GX__CHECK(enter(p));
    GX__CHECK(advance(p));
    lam__node *kid;
    GX__CHECK(parse_unary(p, &kid));
    p->depth--;
    GX__CHECK(new_node(p, LAM_N_UNARY, t.start, out));
    (*out)->op = t.op;
    return add_kid(p, *out, kid);
}

/* C precedence of binary operators (higher binds tighter); 0 = not binary. */
static int prec(lam__op op)
{
    switch (op) {
    case LAM_OP_LOR: return 1;
    case LAM_OP_LAND: return 2;
    case LAM_OP_OR: return 3;
    case LAM_OP_XOR: return 4;
    case LAM_OP_AND: return 5;
    case LAM_OP_EQ:
    case LAM_OP_NE: return 6;
    case LAM_OP_LT:
    case LAM_OP_LE:
    case LAM_OP_GT:
    case LAM_OP_GE: return 7;
    case LAM_OP_SHL:
    case LAM_OP_SHR: return 8;
    case LAM_OP_ADD:
    case LAM_OP_SUB: return 9;
    case LAM_OP_MUL:
    case LAM_OP_DIV:
    case LAM_OP_MOD: return 10;
    default: return 0;
    }
}

/* Precedence climbing: all binary operators are left-associative, so the right
 * operand is parsed at one level tighter than the operator. */
static gx_status parse_binary(parser *p, int minprec, lam__node **out)
{
    lam__node *lhs;
    GX__CHECK(parse_unary(p, &lhs));
    for (;;) {
        int pr = p->tok.kind == LAM_T_OP ? prec(p->tok.op) : 0;
        if (pr == 0 || pr < minprec)
            break;
        lam__tok t = p->tok;
        GX__CHECK(advance(p));
        lam__node *rhs = NULL, *n = NULL;
        GX__CHECK(parse_binary(p, pr + 1, &rhs)); /* deeper only by precedence: bounded */
        GX__CHECK(new_node(p, LAM_N_BINARY, t.start, &n));
        n->op = t.op;
        GX__CHECK(add_kid(p, n, lhs));
        GX__CHECK(add_kid(p, n, rhs));
        lhs = n;
    }
    *out = lhs;
    return GX_OK;
}

/* c ? a : b, right-associative; the middle operand is a full expression as in C. */
static gx_status parse_cond(parser *p, lam__node **out)
{
    lam__node *c;
    GX__CHECK(parse_binary(p, 1, &c));
    if (!is_op(p, LAM_OP_QUEST)) {
        *out = c;
        return GX_OK;
    }
    int qcol = p->tok.start;
    GX__CHECK(enter(p)); /* both branches: one level */
    GX__CHECK(advance(p));
    lam__node *a = NULL, *b = NULL, *n = NULL;
    GX__CHECK(parse_cond(p, &a));
    if (!is_op(p, LAM_OP_COLON)) {
        char d[64];
        tok_desc(p, d, sizeof d);
        return lam__fail(GX_ERR_SYNTAX, p->text, p->tok.start, "a conditional looks like c ? a : b",
                         "expected ':' for the '?' at column %d, found %s", qcol + 1, d);
    }
    GX__CHECK(advance(p));
    GX__CHECK(parse_cond(p, &b));
    GX__CHECK(new_node(p, LAM_N_COND, qcol, &n));
    GX__CHECK(add_kid(p, n, c));
    GX__CHECK(add_kid(p, n, a));
    GX__CHECK(add_kid(p, n, b));
    *out = n;
    p->depth--;
    return GX_OK;
}

static const char *const hint_params = "a lambda looks like 'x, y -> x + y'; with no parameters: '-> 1'";

static gx_status parse_params(parser *p)
{
    lam_lambda *l = p->l;
    if (is_op(p, LAM_OP_ARROW))
        return advance(p);
    for (;;) {
        if (p->tok.kind != LAM_T_IDENT) {
            if (p->tok.kind == LAM_T_EOF && p->tok.start == 0)
                return lam__fail(GX_ERR_SYNTAX, p->text, 0, hint_params, "the lambda is empty");
            return lam__fail(GX_ERR_SYNTAX, p->text, p->tok.start, hint_params,
                             l->nparams ? "expected a parameter name after ','" : "expected parameter names and '->'");
        }
        const char *name = p->text + p->tok.start;
        int len = p->tok.len;
        if ((len == 4 && memcmp(name, "true", 4) == 0) || (len == 5 && memcmp(name, "false", 5) == 0))
            return lam__fail(GX_ERR_SYNTAX, p->text, p->tok.start, "choose another name",
                             "'%.*s' cannot be a parameter name", len, name);
        for (int i = 0; i < l->nparams; i++)
            if (l->plen[i] == len && memcmp(p->text + l->pcol[i], name, (size_t)len) == 0)
                return lam__fail(GX_ERR_SYNTAX, p->text, p->tok.start, "give each parameter its own name",
                                 "parameter '%.*s' appears twice", len > 40 ? 40 : len, name);
        if (l->nparams == LAM__MAX_PARAMS)
            return lam__fail(GX_ERR_SYNTAX, p->text, p->tok.start, NULL, "too many parameters (at most %d)",
                             LAM__MAX_PARAMS);
        l->pcol[l->nparams] = p->tok.start;
        l->plen[l->nparams] = len;
        l->nparams++;
        GX__CHECK(advance(p));
        if (is_op(p, LAM_OP_ARROW))
            return advance(p);
        if (!is_op(p, LAM_OP_COMMA))
            return lam__fail(GX_ERR_SYNTAX, p->text, p->tok.start, hint_params,
                             "expected ',' or '->' after parameter '%.*s'", len > 40 ? 40 : len, name);
        GX__CHECK(advance(p));
    }
}

static gx_status parse_all(parser *p)
{
    GX__CHECK(lam__lex(p->text, &p->pos, &p->tok));
    GX__CHECK(parse_params(p));
    p->l->arrow_col = p->prev.start;
    GX__CHECK(parse_cond(p, &p->l->root));
    if (p->tok.kind != LAM_T_EOF) {
        char d[64];
        tok_desc(p, d, sizeof d);
        const char *hint = is_op(p, LAM_OP_ASSIGN)   ? "lambdas have no assignment: use '==' to compare"
                           : is_op(p, LAM_OP_RPAREN) ? "remove the extra ')'"
                                                     : "an operator may be missing before it";
        return lam__fail(GX_ERR_SYNTAX, p->text, p->tok.start, hint, "unexpected %s after the expression", d);
    }
    return GX_OK;
}

gx_status lam__parse(const char *text, lam_lambda **out)
{
    *out = NULL;
    if (!text)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "lambda text must not be NULL");
    size_t len = strlen(text);
    if (len > LAM__MAX_TEXT)
        return gx__err(GX_ERR_SYNTAX, "syntax error: the lambda is %zu bytes long (at most %d)", len, LAM__MAX_TEXT);
    lam_lambda *l = calloc(1, sizeof *l);
    if (!l || !(l->text = malloc(len + 1))) {
        free(l);
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory while parsing a lambda");
    }
    memcpy(l->text, text, len + 1);
    l->len = (int)len;
    l->result = GX_DTYPE_COUNT;
    parser p = {.text = l->text, .l = l};
    gx_status s = parse_all(&p);
    if (s != GX_OK) {
        lam_free(l);
        return s;
    }
    *out = l;
    return GX_OK;
}

gx_status lam_parse_arity(const char *text, int *nparams)
{
    if (!nparams)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "lam_parse_arity: nparams must not be NULL");
    lam_lambda *l;
    GX__CHECK(lam__parse(text, &l));
    *nparams = l->nparams;
    lam_free(l);
    return GX_OK;
}

gx_dtype lam_result_type(const lam_lambda *l) { return l ? l->result : GX_DTYPE_COUNT; }

/* Weights (elements of a vectorised f32 sum, which runs at ~0.05 ns an element on one
 * core): an integer division or remainder makes the whole loop scalar (2-core AMD VM:
 * i -> (i ^ (i >> 7)) * 2654435761 % 1000 summed over 2048 i64 took 1.4 ns an
 * element, ~16x a vectorised fold), so the first one counts 16; a transcendental call
 * of the vector prelude ~4 (sin^2 + cos^2 of f32: 0.57 ns an element, four calls); a
 * user function 8 (unknown body); everything else is in the noise of the load. */
int lam_cost(const lam_lambda *l)
{
    static const char *const heavy[] = {"sin",  "cos",  "tan",   "asin",  "acos", "atan",  "atan2", "sinh",
                                        "cosh", "tanh", "exp",   "exp2",  "expm1", "log",  "log2",  "log10",
                                        "log1p", "pow", "cbrt",  "erf",   "erfc",  "tgamma", "lgamma", "hypot"};
    if (!l)
        return 1;
    int cost = 1;
    bool idiv = false;
    for (const lam__node *n = l->nodes; n; n = n->chain) {
        if (n->kind == LAM_N_BINARY && (n->op == LAM_OP_DIV || n->op == LAM_OP_MOD) && !gx__dtype_is_float(n->optype))
            idiv = true;
        if (n->kind != LAM_N_CALL)
            continue;
        if (n->ref == LAM_R_USER) {
            cost += 8;
            continue;
        }
        for (size_t i = 0; i < sizeof heavy / sizeof heavy[0]; i++)
            if ((int)strlen(heavy[i]) == n->name_len && strncmp(l->text + n->name_at, heavy[i], (size_t)n->name_len) == 0)
                cost += 4;
    }
    return idiv ? cost + 15 : cost;
}
int lam_nparams(const lam_lambda *l) { return l ? l->nparams : 0; }

void lam_free(lam_lambda *l)
{
    if (!l)
        return;
    for (lam__node *n = l->nodes, *next; n; n = next) {
        next = n->chain;
        free(n);
    }
    free(l->text);
    free(l);
}
