#define GX__SINCOS GX__M1(sin) GX__M1(cos)
