/* Probe for `gx bench --define bench/sincos_probe.c --map "x -> sc(x)"`: how much a
 * shared range reduction (sincosf) saves over separate sinf and cosf calls. */
float sc(float x)
{
    float s, c;
    sincosf(x, &s, &c);
    return s * s + c * c;
}

float sc_twice(float x)
{
    float s1, c1, s2, c2;
    sincosf(x, &s1, &c1);
    sincosf(x, &s2, &c2);
    return s1 * s1 + c2 * c2;
}
