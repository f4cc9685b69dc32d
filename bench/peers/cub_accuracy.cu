// cub_accuracy.cu -- CUB's value for the accuracy table (bench/peers/accuracy.py):
// cub::DeviceReduce::Sum of float32 x (accumulating in float, CUB's default for
// float input), the mean as that sum / n, and the l2 distance as sqrt of the Sum
// of the float squares (x - y)^2.  Prints the JSON lines that
// accuracy.py reads from gx_accuracy: {"backend": "cuda", "op": ..., "value": ...}.
//
//   nvcc -O3 -o cub_accuracy bench/peers/cub_accuracy.cu
//   cub_accuracy [--backends cuda] x.npy y.npy   (1-d little-endian float32 .npy files, numpy.save)
#include <cub/cub.cuh>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x)                                                                                   \
  do {                                                                                          \
    cudaError_t e_ = (x);                                                                       \
    if (e_ != cudaSuccess) {                                                                    \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));       \
      exit(1);                                                                                  \
    }                                                                                           \
  } while (0)

// The float32 payload of a 1-d .npy file (format versions 1-3: a 2- or 4-byte header length).
static std::vector<float> read_npy(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) { fprintf(stderr, "cannot open %s\n", path); exit(1); }
  unsigned char magic[8];
  if (fread(magic, 1, 8, f) != 8 || memcmp(magic, "\x93NUMPY", 6) != 0) { fprintf(stderr, "%s: not .npy\n", path); exit(1); }
  size_t hlen = 0;
  unsigned char b[4] = {0, 0, 0, 0};
  size_t nb = magic[6] == 1 ? 2 : 4;
  if (fread(b, 1, nb, f) != nb) exit(1);
  hlen = b[0] | (b[1] << 8) | ((size_t)b[2] << 16) | ((size_t)b[3] << 24);
  std::vector<char> h(hlen + 1, 0);
  if (fread(h.data(), 1, hlen, f) != hlen || !strstr(h.data(), "'<f4'")) { fprintf(stderr, "%s: not float32\n", path); exit(1); }
  long start = ftell(f);
  fseek(f, 0, SEEK_END);
  size_t n = (size_t)(ftell(f) - start) / 4;
  fseek(f, start, SEEK_SET);
  std::vector<float> v(n);
  if (fread(v.data(), 4, n, f) != n) exit(1);
  fclose(f);
  return v;
}

// (x - y)^2 in float, as a transform iterator would give it to the reduction.
__global__ void sq_diff(const float* x, const float* y, float* o, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    float d = x[i] - y[i];
    o[i] = d * d;
  }
}

template <class It>
static float cub_sum(It in, long long n, float* d_out) {
  size_t tb = 0;
  CK(cub::DeviceReduce::Sum(nullptr, tb, in, d_out, n));
  void* tmp = nullptr;
  CK(cudaMalloc(&tmp, tb));
  CK(cub::DeviceReduce::Sum(tmp, tb, in, d_out, n));
  float h = 0;
  CK(cudaMemcpy(&h, d_out, sizeof h, cudaMemcpyDeviceToHost));
  CK(cudaFree(tmp));
  return h;
}

int main(int argc, char** argv) {
  int a = 1;
  if (argc > 2 && strcmp(argv[1], "--backends") == 0) a = 3;  // as gx_accuracy is called; CUB is CUDA only
  if (argc - a != 2) { fprintf(stderr, "usage: cub_accuracy [--backends cuda] x.npy y.npy\n"); return 2; }
  std::vector<float> hx = read_npy(argv[a]), hy = read_npy(argv[a + 1]);
  long long n = (long long)hx.size();
  float *x, *y, *out;
  CK(cudaMalloc(&x, n * 4));
  CK(cudaMalloc(&y, n * 4));
  CK(cudaMalloc(&out, 4));
  CK(cudaMemcpy(x, hx.data(), n * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(y, hy.data(), n * 4, cudaMemcpyHostToDevice));
  float s = cub_sum(x, n, out);
  float* sq;
  CK(cudaMalloc(&sq, n * 4));
  sq_diff<<<1024, 256>>>(x, y, sq, n);
  CK(cudaGetLastError());
  float l2 = sqrtf(cub_sum(sq, n, out));
  CK(cudaFree(sq));
  printf("{\"backend\": \"cuda\", \"op\": \"sum\", \"value\": %.17g}\n", (double)s);
  printf("{\"backend\": \"cuda\", \"op\": \"mean\", \"value\": %.17g}\n", (double)(s / (float)n));
  printf("{\"backend\": \"cuda\", \"op\": \"l2\", \"value\": %.17g}\n", (double)l2);
  cudaFree(x), cudaFree(y), cudaFree(out);
  return 0;
}
