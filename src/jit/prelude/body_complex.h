typedef struct cf32 { float re, im; } cf32;
typedef struct cf64 { double re, im; } cf64;
#define GX__CPLX(C, T, MK, SFX, ASFX) \
GXF C MK(T re, T im) { C z; z.re = re; z.im = im; return z; } \
GXF C cadd##SFX(C a, C b) { return MK(a.re + b.re, a.im + b.im); } \
GXF C csub##SFX(C a, C b) { return MK(a.re - b.re, a.im - b.im); } \
GXF C cmul##SFX(C a, C b) { return MK(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re); } \
GXF C cconj##SFX(C a) { return MK(a.re, -a.im); } \
GXF T cabs2##ASFX(C a) { return a.re * a.re + a.im * a.im; }
GX__CPLX(cf32, float, c32, , )
GX__CPLX(cf64, double, c64, 64, _64)
#define abs2 cabs2
#define abs2_64 cabs2_64
