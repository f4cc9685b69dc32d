/* fuzz_lambda.c -- libFuzzer target for the lambda compiler: any bytes must give
 * either a lambda or an error message, never a crash, leak or hang.
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude -Isrc \
 *     src/core/error.c src/core/dtype.c src/jit/lambda*.c fuzz/fuzz_lambda.c -lm -o fuzz_lambda
 *   ./fuzz_lambda -max_len=256 corpus-copy/ fuzz/corpus/ */
#include "jit/lambda.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;

    static const gx_dtype args[2] = {GX_F32, GX_F32};
    static const gx_const consts[1] = {{"n", {GX_I32, {.i = 64}}}};
    static const lam_fn_sig fns[1] = {{"f", GX_I32, 3, {GX_I32, GX_F32, GX_U8}, true}};
    const lam_env env = {text, 2, args, consts, 1, fns, 1, NULL, 0};
    static const char *const pnames[2] = {"a0", "a1"};
    static const char *const cnames[1] = {"c0"};

    lam_lambda *l = NULL;
    if (lam_compile(&env, &l) == GX_OK) {
        gx__sbuf b = {0};
        (void)lam_emit(l, pnames, cnames, &b);
        gx__sb_free(&b);
        (void)lam_result_type(l);
        lam_free(l);
    }
    int n;
    (void)lam_parse_arity(text, &n);

    /* The same bytes as user C source. */
    lam_fn_sig sigs[8];
    size_t offs[8];
    int count;
    (void)lam_scan_functions(text, sigs, offs, 8, &count);
    free(text);
    return 0;
}
