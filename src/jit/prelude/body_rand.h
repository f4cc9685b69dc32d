GXF void gx__lam_philox(uint64_t blk, uint64_t seed, uint32_t *w)
{
  uint32_t c0 = (uint32_t)blk, c1 = (uint32_t)(blk >> 32), c2 = 0, c3 = 0;
  uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
  for (int r = 0; r < 10; r++) {
    const uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
    const uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
    c0 = n0; c1 = (uint32_t)p1; c2 = n2; c3 = (uint32_t)p0;
    k0 += 0x9E3779B9u; k1 += 0xBB67AE85u;
  }
  w[0] = c0; w[1] = c1; w[2] = c2; w[3] = c3;
}
GXF double gx_rand_f64(uint64_t seed, uint64_t i)
{
  uint32_t w[4]; gx__lam_philox(i >> 1, seed, w);
  const int j = (int)(i & 1);
  return (double)((((uint64_t)w[2 * j] << 32) | w[2 * j + 1]) >> 11) * 1.1102230246251565404e-16;
}
GXF float gx_randf_f32(uint64_t seed, uint64_t i)
{
  uint32_t w[4]; gx__lam_philox(i >> 2, seed, w);
  return (float)(w[i & 3] >> 8) * 5.9604644775390625e-8f;
}
