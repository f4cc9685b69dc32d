#if defined(GX_VECTOR_MATH) && defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define GX__VM __attribute__((simd("notinbranch"), const))
extern float sinf(float) GX__VM; extern float cosf(float) GX__VM;
extern float expf(float) GX__VM; extern float logf(float) GX__VM;
extern float powf(float, float) GX__VM;
extern double sin(double) GX__VM; extern double cos(double) GX__VM;
extern double exp(double) GX__VM; extern double log(double) GX__VM;
extern double pow(double, double) GX__VM;
#endif
