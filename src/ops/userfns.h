/* userfns.h -- the functions a context has been given with gx_define. */
#ifndef GX_USERFNS_H
#define GX_USERFNS_H

#include "jit/lambda.h"

typedef struct gx__userfns {
    lam_fn_sig *sigs;
    int count;
    gx__sbuf code; /* every definition, rendered for the compiler */
} gx__userfns;

/* The context's user functions (NULL: none defined yet).  Caller holds the lock. */
gx__userfns *gx__userfns_of(gx_ctx *ctx);

#endif
