/* kernel_prelude.h -- the CUDA vocabulary for users' kernels on the CPU backend.
 * Embedded (cmake/embed.cmake) and put in front of a user kernel's source by
 * cpu_kernel.c, which compiles the whole as C++17 into a shared object.
 *
 * The model (documented in include/gx/kernel.h):
 *  - blocks are spread over the pool's workers; a worker runs one block at a time,
 *    so `__shared__` (= thread_local) storage is the running block's shared memory;
 *  - a kernel that uses no barrier or warp intrinsic runs its threads as a loop;
 *  - otherwise each thread is a fiber with its own stack on the worker's OS thread,
 *    switched at barriers and warp intrinsics by a round-robin scheduler; when no
 *    fiber can go on and some have returned while others wait at __syncthreads, the
 *    barrier is in divergent code: the block stops and the launch reports it.
 * Everything here runs inside the loaded .so: no call back into libgx. */
#define __CUDACC__ 1
#define GX_CPU_KERNEL 1
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <cmath>
#include <assert.h>
#include <sys/mman.h>
#include <link.h>
#include <time.h>
#include <tuple>
#include <utility>
#include <type_traits>

#define __global__
#define __device__
#define __host__
#define __constant__
#define __managed__
#define __shared__ thread_local
#define __noinline__ __attribute__((noinline))
#define __forceinline__ inline __attribute__((always_inline))
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
#define __grid_constant__
#define warpSize 32

struct uint3 { unsigned x, y, z; };
struct dim3 {
    unsigned x, y, z;
    constexpr dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
    constexpr dim3(uint3 u) : x(u.x), y(u.y), z(u.z) {}
};
#define GXC_VEC(T, N)                                                                                     \
    struct N##1 { T x; };                                                                                 \
    struct N##2 { T x, y; };                                                                              \
    struct N##3 { T x, y, z; };                                                                           \
    struct alignas(sizeof(T) * 4 <= 16 ? sizeof(T) * 4 : 16) N##4 { T x, y, z, w; };                     \
    static inline N##1 make_##N##1(T a) { return N##1{a}; }                                               \
    static inline N##2 make_##N##2(T a, T b) { return N##2{a, b}; }                                       \
    static inline N##3 make_##N##3(T a, T b, T c) { return N##3{a, b, c}; }                               \
    static inline N##4 make_##N##4(T a, T b, T c, T d) { return N##4{a, b, c, d}; }
GXC_VEC(signed char, char)
GXC_VEC(unsigned char, uchar)
GXC_VEC(short, short)
GXC_VEC(unsigned short, ushort)
GXC_VEC(int, int)
GXC_VEC(float, float)
GXC_VEC(double, double)
GXC_VEC(long long, longlong)
GXC_VEC(unsigned long long, ulonglong)
struct uint1 { unsigned x; };
struct uint2 { unsigned x, y; };
struct alignas(16) uint4 { unsigned x, y, z, w; };
static inline uint2 make_uint2(unsigned a, unsigned b) { return uint2{a, b}; }
static inline uint3 make_uint3(unsigned a, unsigned b, unsigned c) { return uint3{a, b, c}; }
static inline uint4 make_uint4(unsigned a, unsigned b, unsigned c, unsigned d) { return uint4{a, b, c, d}; }

/* ------------------------------------------------------------ launch state */

/* What the backend hands each call (cpu_kernel.c has the same layout). */
struct gx_cpu_launch {
    void **params;
    int nparams;
    unsigned grid[3], block[3];
    size_t shmem;
    int error;      /* 0, else the first failure's code (1 divergent barrier, 2 deadlock, 3 params, 4 oom, 5 trap) */
    char msg[256];  /* its description */
    void *rec;      /* checked mode: the module's failure record (gx/device.h) */
};

namespace gx_cpu {
struct fiber {
    void *sp;
    uint3 tid;
    int state; /* 0 runnable, 1 at __syncthreads, 2 at a warp intrinsic, 3 returned */
    unsigned wgen;
    int pred;
};
struct tstate {
    uint3 tid, bid;
    dim3 bdim, gdim;
    unsigned char *dyn;
    size_t dyn_cap;
    uintptr_t tls_lo, tls_hi; /* this module's thread_local block: the static __shared__ arrays */
    gx_cpu_launch *L;
    /* fibers */
    fiber *f;
    int nf, nf_cap, cur;
    bool in_fiber; /* false: the thread loop (the kernel has no barrier) */
    void *main_sp;
    unsigned char *stacks;
    size_t stack_bytes, stacks_len;
    int bar_count, bar_and, bar_or;
    unsigned long long bank[2][1024];
    unsigned wmask[2][32]; /* lanes released together from each warp's last exchange, per bank */
    void (*body)(void *);
    void *body_arg;
    /* fission: per-thread slots of variables that live across barriers */
    unsigned char *chunk[16];
    size_t chunk_len[16];
    int ck;        /* the chunk being filled */
    size_t ck_top; /* bytes used in it */
};
static thread_local tstate ts;

static void fail(int code, const char *fmt, unsigned a = 0, unsigned b = 0, unsigned c = 0)
{
    gx_cpu_launch *L = ts.L;
    int z = 0;
    if (L && __atomic_compare_exchange_n(&L->error, &z, -1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        snprintf(L->msg, sizeof L->msg, fmt, a, b, c);
        __atomic_store_n(&L->error, code, __ATOMIC_RELEASE);
    }
}
} // namespace gx_cpu

namespace gx_cpu {
/* The worker's launch state.  Each thread_local access from a loaded library is a
 * call into the dynamic loader; through this const, out-of-line function the
 * compiler asks once per kernel invocation (or hoists it out of the thread loop)
 * instead of once per threadIdx.  Fibers never change OS threads, so the address
 * holds for the whole call. */
__attribute__((const, noinline)) static tstate *self(void) { return &ts; }
} // namespace gx_cpu
#define threadIdx (gx_cpu::self()->tid)
#define blockIdx (gx_cpu::self()->bid)
#define blockDim (gx_cpu::self()->bdim)
#define gridDim (gx_cpu::self()->gdim)
static inline void *gx__dyn_smem(void) { return gx_cpu::self()->dyn; }

/* ------------------------------------------------------------ fibers */

#if defined(__x86_64__)
extern "C" void gx_cpu_switch(void **save, void *to);
__asm__(".text\n.p2align 4\n.type gx_cpu_switch,@function\ngx_cpu_switch:\n"
        "pushq %rbp\npushq %rbx\npushq %r12\npushq %r13\npushq %r14\npushq %r15\n"
        "movq %rsp, (%rdi)\nmovq %rsi, %rsp\n"
        "popq %r15\npopq %r14\npopq %r13\npopq %r12\npopq %rbx\npopq %rbp\nret\n"
        ".size gx_cpu_switch,.-gx_cpu_switch\n");
#define GXC_SAVED 64 /* six registers, the entry address, a fake return address */
static void *gxc_stack_init(unsigned char *top, void (*entry)(void))
{
    void **sp = (void **)(top - GXC_SAVED);
    memset(sp, 0, GXC_SAVED);
    sp[6] = (void *)entry; /* popped by ret */
    return sp;
}
#elif defined(__aarch64__)
extern "C" void gx_cpu_switch(void **save, void *to);
__asm__(".text\n.p2align 4\n.type gx_cpu_switch,%function\ngx_cpu_switch:\n"
        "sub sp, sp, #160\n"
        "stp x19, x20, [sp, #0]\nstp x21, x22, [sp, #16]\nstp x23, x24, [sp, #32]\n"
        "stp x25, x26, [sp, #48]\nstp x27, x28, [sp, #64]\nstp x29, x30, [sp, #80]\n"
        "stp d8, d9, [sp, #96]\nstp d10, d11, [sp, #112]\nstp d12, d13, [sp, #128]\nstp d14, d15, [sp, #144]\n"
        "mov x2, sp\nstr x2, [x0]\nmov sp, x1\n"
        "ldp x19, x20, [sp, #0]\nldp x21, x22, [sp, #16]\nldp x23, x24, [sp, #32]\n"
        "ldp x25, x26, [sp, #48]\nldp x27, x28, [sp, #64]\nldp x29, x30, [sp, #80]\n"
        "ldp d8, d9, [sp, #96]\nldp d10, d11, [sp, #112]\nldp d12, d13, [sp, #128]\nldp d14, d15, [sp, #144]\n"
        "add sp, sp, #160\nret\n.size gx_cpu_switch,.-gx_cpu_switch\n");
#define GXC_SAVED 160
static void *gxc_stack_init(unsigned char *top, void (*entry)(void))
{
    void **sp = (void **)(top - GXC_SAVED);
    memset(sp, 0, GXC_SAVED);
    sp[11] = (void *)entry; /* x30, the link register ret jumps to */
    return sp;
}
#else
#error "gx: user kernels on the CPU backend need x86-64 or aarch64 (fiber switch)"
#endif

namespace gx_cpu {
/* Bytes of stack per fiber (the CPU's "local memory" per thread), plus a guard page. */
static const size_t STACK = 64 * 1024, GUARD = 4096, COLOUR = 16 * 1024;
/* Where fiber i's stack starts below its top: stack tops a whole number of pages
 * apart all fall in the same few cache sets, so a block's fibers evicted each other
 * at every switch; these offsets spread them over 64 lines x 4 pages. */
static inline size_t colour(int i) { return (size_t)(i & 63) * 64 + (size_t)((i >> 6) & 3) * 4096; }

static void fiber_main(void)
{
    tstate &t = ts;
    t.body(t.body_arg);
    t.f[t.cur].state = 3;
    gx_cpu_switch(&t.f[t.cur].sp, t.main_sp);
    __builtin_trap(); /* never resumed */
}

/* The worker's fiber stacks, made once and reused for every block. */
static bool stacks_for(int n)
{
    tstate &t = ts;
    if (n <= t.nf_cap)
        return true;
    if (t.stacks)
        munmap(t.stacks, t.stacks_len);
    free(t.f);
    t.nf_cap = 0;
    size_t per = STACK + COLOUR + GUARD, len = per * (size_t)n;
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    t.f = (fiber *)calloc((size_t)n, sizeof(fiber));
    if (m == MAP_FAILED || !t.f) {
        if (m != MAP_FAILED)
            munmap(m, len);
        t.stacks = NULL;
        return false;
    }
    t.stacks = (unsigned char *)m;
    t.stacks_len = len;
    for (int i = 0; i < n; i++) /* a fiber that overflows its stack faults, not corrupts */
        mprotect(t.stacks + per * (size_t)i, GUARD, PROT_NONE);
    t.nf_cap = n;
    return true;
}

static inline bool no_fibers(void)
{
    if (ts.in_fiber)
        return false;
    /* the source scan missed a barrier: say so rather than crash */
    fail(6, "a barrier or warp intrinsic ran in a kernel gx ran as a plain loop of threads");
    return true;
}

static inline void park(int state)
{
    tstate &t = ts;
    fiber &f = t.f[t.cur];
    f.state = state;
    gx_cpu_switch(&f.sp, t.main_sp);
}

static inline unsigned lin(uint3 u) { return u.x + ts.bdim.x * (u.y + ts.bdim.y * u.z); }

/* Releases warps whose live lanes all wait at a warp intrinsic; 1 if any. */
static int release_warps(void)
{
    tstate &t = ts;
    int any = 0;
    for (int w = 0; w * 32 < t.nf; w++) {
        int lo = w * 32, hi = lo + 32 < t.nf ? lo + 32 : t.nf, live = 0, waiting = 0;
        for (int i = lo; i < hi; i++) {
            live += t.f[i].state != 3;
            waiting += t.f[i].state == 2;
        }
        if (live && waiting == live) {
            unsigned m = 0;
            for (int i = lo; i < hi; i++)
                if (t.f[i].state == 2) {
                    t.f[i].state = 0;
                    m |= 1u << (i - lo);
                }
            /* all of them left from the same bank: (wgen - 1) & 1 */
            t.wmask[(t.f[lo + __builtin_ctz(m)].wgen - 1) & 1][w] = m;
            any = 1;
        }
    }
    return any;
}

/* Runs one block's fibers to the end; false when the block had to stop. */
static bool run_fibers(int n)
{
    tstate &t = ts;
    size_t per = STACK + COLOUR + GUARD;
    for (int i = 0; i < n; i++) {
        fiber &f = t.f[i];
        f.state = 0;
        f.wgen = 0;
        f.tid.x = (unsigned)i % t.bdim.x;
        f.tid.y = ((unsigned)i / t.bdim.x) % t.bdim.y;
        f.tid.z = (unsigned)i / (t.bdim.x * t.bdim.y);
        f.sp = gxc_stack_init(t.stacks + per * (size_t)(i + 1) - colour(i), fiber_main);
    }
    t.nf = n;
    for (;;) {
        for (int i = 0; i < n; i++)
            if (t.f[i].state == 0) {
                t.cur = i;
                t.tid = t.f[i].tid;
                gx_cpu_switch(&t.main_sp, t.f[i].sp);
            }
        if (release_warps())
            continue;
        int done = 0, bar = 0, warp = 0, cnt = 0, all = 1, orr = 0;
        for (int i = 0; i < n; i++) {
            int s = t.f[i].state;
            done += s == 3, bar += s == 1, warp += s == 2;
            if (s == 1) {
                cnt += t.f[i].pred != 0;
                all &= t.f[i].pred != 0;
                orr |= t.f[i].pred != 0;
            }
        }
        if (done == n)
            return true;
        if (bar == n) {
            t.bar_count = cnt, t.bar_and = all, t.bar_or = orr;
            for (int i = 0; i < n; i++)
                t.f[i].state = 0;
            continue;
        }
        if (warp == 0)
            fail(1,
                 "__syncthreads() in divergent code: in block (%u, %u, %u), some threads returned while others "
                 "wait at a barrier (on a GPU this hangs or corrupts shared memory)",
                 t.bid.x, t.bid.y, t.bid.z);
        else
            fail(2,
                 "deadlock in block (%u, %u, %u): part of a warp waits at a warp intrinsic (__shfl_sync, "
                 "__ballot_sync, __syncwarp...) while the rest waits at __syncthreads()",
                 t.bid.x, t.bid.y, t.bid.z);
        return false;
    }
}

/* The kernel is a template argument (not a stored pointer), so the thread loop
 * below calls it directly and the compiler can inline it, keep the launch state in
 * registers and vectorise a kernel without barriers. */
template <class Fn> struct kargs;
template <class... A> struct kargs<void (*)(A...)> {
    typedef std::tuple<typename std::decay<A>::type...> type;
    static const size_t n = sizeof...(A);
    template <size_t... I> static void load(type &t, void **params, std::index_sequence<I...>)
    {
        ((std::get<I>(t) = *(typename std::tuple_element<I, type>::type *)params[I]), ...);
    }
};

template <auto F, class Tup, size_t... I>
static inline __attribute__((always_inline)) void call(Tup &a, std::index_sequence<I...>)
{
    F(std::get<I>(a)...);
}

template <auto F> struct runner {
    typedef kargs<decltype(F)> K;
    typedef typename K::type args_t;
    static void body(void *p) { call<F>(*(args_t *)p, std::make_index_sequence<K::n>{}); }
};

/* Finds this module's thread_local block in the calling worker (once per worker):
 * the static __shared__ arrays live there. */
static int tls_range_cb(struct dl_phdr_info *info, size_t, void *)
{
    tstate &t = ts;
    uintptr_t me = (uintptr_t)&tls_range_cb;
    bool mine = false;
    const ElfW(Phdr) *tls = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) &ph = info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
        if (ph.p_type == PT_LOAD && me >= lo && me < lo + ph.p_memsz)
            mine = true;
        if (ph.p_type == PT_TLS)
            tls = &ph;
    }
    if (!mine)
        return 0;
    if (tls && info->dlpi_tls_data) {
        t.tls_lo = (uintptr_t)info->dlpi_tls_data;
        t.tls_hi = t.tls_lo + tls->p_memsz;
    }
    return 1;
}

/* Whether p is the running block's shared memory.  A block runs on one OS thread
 * and its fibers switch only at barriers and warp intrinsics, so an atomic on
 * shared memory needs no lock prefix (the CPU's cost of a GPU's cheap shared
 * atomics). */
static inline bool block_local(const void *p)
{
    tstate *t = self();
    uintptr_t a = (uintptr_t)p;
    return (a - t->tls_lo < t->tls_hi - t->tls_lo) || (a - (uintptr_t)t->dyn < t->dyn_cap);
}

static bool dyn_for(size_t bytes)
{
    tstate &t = ts;
    if (bytes <= t.dyn_cap)
        return true;
    free(t.dyn);
    t.dyn = (unsigned char *)aligned_alloc(64, (bytes + 63) & ~(size_t)63);
    t.dyn_cap = t.dyn ? bytes : 0;
    return t.dyn != NULL;
}

/* Gives a worker's stacks and shared buffer back when the worker exits (the pool's
 * threads end at gx_ctx_destroy).  glibc keeps a module loaded until its pending
 * thread_local destructors have run, so a dlclose before that is safe. */
struct owner {
    bool live = false;
    ~owner()
    {
        tstate &t = ts;
        if (t.stacks)
            munmap(t.stacks, t.stacks_len);
        free(t.f);
        free(t.dyn);
        for (int i = 0; i < 16; i++)
            free(t.chunk[i]), t.chunk[i] = NULL;
        t.stacks = NULL, t.f = NULL, t.dyn = NULL;
        t.nf_cap = 0, t.dyn_cap = 0;
    }
};
static thread_local owner own;

/* The threads of one block as a plain loop (a kernel with no barrier): the
 * thread's index lives in the worker's launch state, which the inlined kernel
 * reads; nothing else happens between two threads. */
template <auto F> static void run_loop(typename runner<F>::args_t &a)
{
    tstate &t = *self();
    const unsigned bx = t.bdim.x, by = t.bdim.y, bz = t.bdim.z;
    for (unsigned z = 0; z < bz; z++)
        for (unsigned y = 0; y < by; y++) {
            t.tid.y = y, t.tid.z = z;
            for (unsigned x = 0; x < bx; x++) {
                t.tid.x = x;
                call<F>(a, std::make_index_sequence<runner<F>::K::n>{});
            }
        }
}

/* ------------------------------------------------------------ loop fission
 * A kernel whose barriers all sit at its top level or in for/while/if/{} statements
 * with block-uniform conditions is rewritten by cpu_fission.c: each barrier-free
 * stretch runs as one loop over the block's threads (each_thread), so the compiler
 * sees ordinary loops; variables that may live across a barrier get one slot per
 * thread (slots); the conditions of the statements that hold barriers are
 * evaluated by every thread and must agree (uniform), as CUDA requires anyway. */

/* Storage for one T per thread of the block, from the worker's chunks: the same
 * sequence of requests repeats for every block, so after the first block nothing
 * is allocated.  mark/release scope the requests of a loop body. */
template <class T> static inline T *slots(void)
{
    tstate &t = *self();
    size_t n = (size_t)t.bdim.x * t.bdim.y * t.bdim.z, need = (n * sizeof(T) + 63) & ~(size_t)63;
    for (; t.ck < 16; t.ck++, t.ck_top = 0) {
        if (!t.chunk[t.ck]) {
            size_t len = need > ((size_t)1 << 20) ? need : ((size_t)1 << 20);
            t.chunk[t.ck] = (unsigned char *)aligned_alloc(64, len);
            t.chunk_len[t.ck] = t.chunk[t.ck] ? len : 0;
        }
        if (t.ck_top + need <= t.chunk_len[t.ck]) {
            T *p = (T *)(t.chunk[t.ck] + t.ck_top);
            t.ck_top += need;
            return p;
        }
    }
    fail(4, "out of memory for the per-thread variables of a block (%u threads)", (unsigned)n);
    __builtin_trap();
}
static inline size_t slots_mark(void) { return (size_t)self()->ck << 40 | self()->ck_top; }
static inline void slots_release(size_t m)
{
    self()->ck = (int)(m >> 40);
    self()->ck_top = m & (((size_t)1 << 40) - 1);
}

/* Runs body(i, tid) for each thread i of the block, x fastest.  The fission code
 * reads threadIdx from tid, a value the compiler sees, so the innermost loop over x
 * vectorises (a store to the worker's state at each x is an access pattern GCC does
 * not vectorise); Store keeps the state's threadIdx current too, for kernels that
 * call code reading it there (device functions, gx/device.h's helpers). */
template <bool Store = true, class B> static inline __attribute__((always_inline)) void each_thread(B &&body)
{
    tstate &t = *self();
    const unsigned bx = t.bdim.x, by = t.bdim.y, bz = t.bdim.z;
    size_t i = 0; /* 64-bit: a 32-bit index may wrap, which keeps GCC from vectorising */
    for (unsigned z = 0; z < bz; z++)
        for (unsigned y = 0; y < by; y++, i += bx) {
            if (Store)
                t.tid.y = y, t.tid.z = z;
            for (unsigned x = 0; x < bx; x++) {
                if (Store)
                    t.tid.x = x;
                body(i + x, uint3{x, y, z});
            }
        }
}

/* The condition of a statement that holds a barrier, by every thread: when the
 * threads disagree the barrier is in divergent code, which the launch reports
 * (on a GPU it hangs or corrupts shared memory); the block then goes on as if
 * false, so it ends. */
template <bool Store = true, class C> static inline bool uniform(C &&cond)
{
    tstate &t = *self();
    unsigned yes = 0, n = t.bdim.x * t.bdim.y * t.bdim.z;
    each_thread<Store>([&](size_t i, uint3 tid) { yes += cond(i, tid) ? 1u : 0u; });
    if (yes != 0 && yes != n) {
        fail(1,
             "__syncthreads() in divergent code: in block (%u, %u, %u), the threads disagree on the condition of "
             "a loop or if that holds a barrier (on a GPU this hangs or corrupts shared memory)",
             t.bid.x, t.bid.y, t.bid.z);
        return false;
    }
    return yes != 0 && !__atomic_load_n(&t.L->error, __ATOMIC_RELAXED);
}

/* Blocks [b, e) of the launch, in this worker.  Mode 0: the threads as a loop (no
 * barrier); 1: as fibers; 2: F is the kernel after loop fission (cpu_fission.c),
 * called once per block, running its own thread loops between barriers. */
template <int Mode, auto F> static void run_blocks(gx_cpu_launch *L, int64_t b, int64_t e)
{
    typedef runner<F> R;
    tstate &t = ts;
    if (L->nparams != (int)R::K::n) {
        t.L = L;
        fail(3, "the kernel takes %u arguments, the launch passed %u", (unsigned)R::K::n, (unsigned)L->nparams);
        return;
    }
    typename R::args_t a;
    R::K::load(a, L->params, std::make_index_sequence<R::K::n>{});
    t.L = L;
    t.bdim = dim3(L->block[0], L->block[1], L->block[2]);
    t.gdim = dim3(L->grid[0], L->grid[1], L->grid[2]);
    int n = (int)(L->block[0] * L->block[1] * L->block[2]);
    if (!dyn_for(L->shmem) || (Mode == 1 && !stacks_for(n))) {
        fail(4, "out of memory for a block's shared memory or fiber stacks (%u threads)", (unsigned)n);
        return;
    }
    t.body = R::body;
    t.body_arg = &a;
    t.in_fiber = Mode == 1;
    if (!t.tls_hi) {
        dl_iterate_phdr(tls_range_cb, NULL);
        own.live = true; /* registers the destructor for this worker */
    }
    for (int64_t i = b; i < e; i++) {
        if (__atomic_load_n(&L->error, __ATOMIC_RELAXED))
            return;
        t.bid.x = (unsigned)(i % L->grid[0]);
        t.bid.y = (unsigned)((i / L->grid[0]) % L->grid[1]);
        t.bid.z = (unsigned)(i / ((int64_t)L->grid[0] * L->grid[1]));
        if constexpr (Mode == 1) {
            if (!run_fibers(n))
                return;
        } else if constexpr (Mode == 2) {
            t.ck = 0, t.ck_top = 0;
            call<F>(a, std::make_index_sequence<R::K::n>{});
        } else {
            run_loop<F>(a);
        }
    }
}
} // namespace gx_cpu

/* ------------------------------------------------------------ barriers and warps */

static inline void __syncthreads(void)
{
    if (gx_cpu::no_fibers())
        return;
    gx_cpu::ts.f[gx_cpu::ts.cur].pred = 0;
    gx_cpu::park(1);
}
static inline int __syncthreads_count(int p)
{
    if (gx_cpu::no_fibers())
        return 0;
    gx_cpu::ts.f[gx_cpu::ts.cur].pred = p;
    gx_cpu::park(1);
    return gx_cpu::ts.bar_count;
}
static inline int __syncthreads_and(int p)
{
    if (gx_cpu::no_fibers())
        return 0;
    gx_cpu::ts.f[gx_cpu::ts.cur].pred = p;
    gx_cpu::park(1);
    return gx_cpu::ts.bar_and;
}
static inline int __syncthreads_or(int p)
{
    if (gx_cpu::no_fibers())
        return 0;
    gx_cpu::ts.f[gx_cpu::ts.cur].pred = p;
    gx_cpu::park(1);
    return gx_cpu::ts.bar_or;
}

namespace gx_cpu {
/* Every lane of the warp leaves its 64 bits in the bank of this generation, waits
 * for the warp, and reads what it needs; the next exchange uses the other bank, so
 * a lane that runs ahead cannot overwrite what a slower one still has to read. */
static inline unsigned long long *exchange(unsigned long long bits, unsigned *mask)
{
    tstate &t = ts;
    *mask = 0;
    if (no_fibers())
        return t.bank[0];
    fiber &f = t.f[t.cur];
    int p = f.wgen & 1;
    unsigned long long *bank = t.bank[p];
    f.wgen++;
    bank[t.cur] = bits;
    park(2);
    *mask = t.wmask[p][t.cur >> 5]; /* the lanes that took part (exited ones did not) */
    return bank + (t.cur & ~31);
}
static inline int lane_live(int lane) { return (ts.cur & ~31) + lane < ts.nf && ts.f[(ts.cur & ~31) + lane].state != 3; }
template <class T> static inline T shfl_from(T v, int src)
{
    static_assert(sizeof(T) <= 8, "warp shuffles move at most 64 bits (as on the GPU)");
    unsigned long long bits = 0;
    memcpy(&bits, &v, sizeof v);
    unsigned in;
    unsigned long long *w = exchange(bits, &in);
    int lane = ts.cur & 31;
    if (src < 0 || src > 31 || !(in >> src & 1))
        src = lane;
    T out;
    memcpy(&out, &w[src], sizeof out);
    return out;
}
} // namespace gx_cpu

static inline unsigned __lane_id(void) { return (unsigned)gx_cpu::ts.cur & 31; }
template <class T> static inline T __shfl_sync(unsigned m, T v, int src, int w = 32)
{
    (void)m;
    int l = gx_cpu::ts.cur & 31;
    return gx_cpu::shfl_from(v, (l & ~(w - 1)) + (src & (w - 1)));
}
template <class T> static inline T __shfl_up_sync(unsigned m, T v, unsigned d, int w = 32)
{
    (void)m;
    int l = gx_cpu::ts.cur & 31, s = l - (int)d;
    return gx_cpu::shfl_from(v, s < (l & ~(w - 1)) ? l : s);
}
template <class T> static inline T __shfl_down_sync(unsigned m, T v, unsigned d, int w = 32)
{
    (void)m;
    int l = gx_cpu::ts.cur & 31, s = l + (int)d;
    return gx_cpu::shfl_from(v, s >= (l & ~(w - 1)) + w ? l : s);
}
template <class T> static inline T __shfl_xor_sync(unsigned m, T v, int x, int w = 32)
{
    (void)m;
    int l = gx_cpu::ts.cur & 31, s = l ^ x;
    return gx_cpu::shfl_from(v, s >= (l & ~(w - 1)) + w ? l : s);
}
static inline unsigned __ballot_sync(unsigned m, int p)
{
    unsigned in;
    unsigned long long *w = gx_cpu::exchange(p != 0, &in);
    unsigned r = 0;
    for (int i = 0; i < 32; i++)
        if ((in >> i & 1) && w[i])
            r |= 1u << i;
    return r & m;
}
static inline int __any_sync(unsigned m, int p) { return __ballot_sync(m, p) != 0; }
static inline int __all_sync(unsigned m, int p)
{
    unsigned in;
    unsigned long long *w = gx_cpu::exchange(p != 0, &in);
    for (int i = 0; i < 32; i++)
        if ((m >> i & 1) && (in >> i & 1) && !w[i])
            return 0;
    return 1;
}
static inline void __syncwarp(unsigned m = 0xffffffffu)
{
    (void)m;
    unsigned in;
    gx_cpu::exchange(0, &in);
}
static inline unsigned __activemask(void)
{
    unsigned r = 0;
    for (int i = 0; i < 32; i++)
        r |= (unsigned)gx_cpu::lane_live(i) << i;
    return r;
}

/* ------------------------------------------------------------ atomics */

/* Each atomic takes the plain path on the block's shared memory (block_local). */
template <class T, class U> static inline T atomicAdd(T *p, U v)
{
    if (gx_cpu::block_local(p)) {
        T old = *p;
        *p = (T)(old + (T)v);
        return old;
    }
    if constexpr (std::is_floating_point<T>::value) {
        T old, nw;
        __atomic_load(p, &old, __ATOMIC_RELAXED);
        do
            nw = old + (T)v;
        while (!__atomic_compare_exchange(p, &old, &nw, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
        return old;
    } else {
        return __atomic_fetch_add(p, (T)v, __ATOMIC_RELAXED);
    }
}
#define GXC_ATOMIC_FETCH(NAME, OP, FETCH)                                                                    \
    template <class T, class U> static inline T NAME(T *p, U v)                                              \
    {                                                                                                        \
        if (gx_cpu::block_local(p)) {                                                                        \
            T old = *p;                                                                                      \
            *p = (T)(old OP (T)v);                                                                           \
            return old;                                                                                      \
        }                                                                                                    \
        return FETCH(p, (T)v, __ATOMIC_RELAXED);                                                             \
    }
GXC_ATOMIC_FETCH(atomicSub, -, __atomic_fetch_sub)
GXC_ATOMIC_FETCH(atomicAnd, &, __atomic_fetch_and)
GXC_ATOMIC_FETCH(atomicOr, |, __atomic_fetch_or)
GXC_ATOMIC_FETCH(atomicXor, ^, __atomic_fetch_xor)
template <class T, class U> static inline T atomicExch(T *p, U v)
{
    T nv = (T)v, old;
    __atomic_exchange(p, &nv, &old, __ATOMIC_RELAXED);
    return old;
}
template <class T, class U, class V> static inline T atomicCAS(T *p, U cmp, V v)
{
    T c = (T)cmp, nv = (T)v;
    __atomic_compare_exchange(p, &c, &nv, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    return c; /* the old value either way */
}
#define GXC_ATOMIC_LOOP(NAME, EXPR)                                                                          \
    template <class T, class U> static inline T NAME(T *p, U v_)                                             \
    {                                                                                                        \
        T v = (T)v_, old, nw;                                                                                \
        if (gx_cpu::block_local(p)) {                                                                        \
            old = *p;                                                                                        \
            *p = (EXPR);                                                                                     \
            return old;                                                                                      \
        }                                                                                                    \
        __atomic_load(p, &old, __ATOMIC_RELAXED);                                                            \
        do                                                                                                   \
            nw = (EXPR);                                                                                     \
        while (!__atomic_compare_exchange(p, &old, &nw, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));          \
        return old;                                                                                          \
    }
GXC_ATOMIC_LOOP(atomicMin, v < old ? v : old)
GXC_ATOMIC_LOOP(atomicMax, v > old ? v : old)
GXC_ATOMIC_LOOP(atomicInc, old >= v ? (T)0 : (T)(old + 1))
GXC_ATOMIC_LOOP(atomicDec, (old == 0 || old > v) ? v : (T)(old - 1))
#define atomicAdd_block atomicAdd
#define atomicAdd_system atomicAdd
#define atomicSub_block atomicSub
#define atomicExch_block atomicExch
#define atomicCAS_block atomicCAS
#define atomicMin_block atomicMin
#define atomicMax_block atomicMax
#define atomicOr_block atomicOr
#define atomicAnd_block atomicAnd
static inline void __threadfence(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_block(void) { __atomic_signal_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_system(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

/* ------------------------------------------------------------ math and bits */

template <class A, class B> static inline auto min(A a, B b) -> decltype(a < b ? a : b) { return b < a ? b : a; }
template <class A, class B> static inline auto max(A a, B b) -> decltype(a < b ? a : b) { return a < b ? b : a; }
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
/* glibc declares some of CUDA's fast-math names itself: macros keep ours apart. */
#define __expf gxc_expf
#define __logf gxc_logf
#define __log2f gxc_log2f
#define __sinf gxc_sinf
#define __cosf gxc_cosf
#define __tanf gxc_tanf
#define __powf gxc_powf
#define __exp10f gxc_exp10f
#define __sincosf gxc_sincosf
static inline float gxc_expf(float x) { return expf(x); }
static inline float gxc_logf(float x) { return logf(x); }
static inline float gxc_log2f(float x) { return log2f(x); }
static inline float gxc_sinf(float x) { return sinf(x); }
static inline float gxc_cosf(float x) { return cosf(x); }
static inline float gxc_tanf(float x) { return tanf(x); }
static inline float gxc_powf(float x, float y) { return powf(x, y); }
static inline float gxc_exp10f(float x) { return powf(10.0f, x); }
static inline void gxc_sincosf(float x, float *s, float *c) { *s = sinf(x), *c = cosf(x); }
static inline float __fdividef(float a, float b) { return a / b; }
static inline float __frcp_rn(float a) { return 1.0f / a; }
static inline float __fsqrt_rn(float a) { return sqrtf(a); }
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline float __saturatef(float x) { return x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x; }
static inline int __float2int_rn(float x) { return (int)nearbyintf(x); }
static inline int __float2int_rz(float x) { return (int)x; }
static inline int __float2int_rd(float x) { return (int)floorf(x); }
static inline int __float2int_ru(float x) { return (int)ceilf(x); }
static inline unsigned __float2uint_rn(float x) { return (unsigned)nearbyintf(x); }
static inline float __int2float_rn(int x) { return (float)x; }
static inline float __uint2float_rn(unsigned x) { return (float)x; }
static inline int __double2int_rn(double x) { return (int)nearbyint(x); }
#define GXC_PUN(NAME, FROM, TO)                                                                              \
    static inline TO NAME(FROM x)                                                                            \
    {                                                                                                        \
        TO y;                                                                                                \
        memcpy(&y, &x, sizeof y);                                                                            \
        return y;                                                                                            \
    }
GXC_PUN(__float_as_int, float, int)
GXC_PUN(__float_as_uint, float, unsigned)
GXC_PUN(__int_as_float, int, float)
GXC_PUN(__uint_as_float, unsigned, float)
GXC_PUN(__double_as_longlong, double, long long)
GXC_PUN(__longlong_as_double, long long, double)
static inline int __popc(unsigned x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __clz(int x) { return x ? __builtin_clz((unsigned)x) : 32; }
static inline int __clzll(long long x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
static inline unsigned __brev(unsigned x)
{
    unsigned r = 0;
    for (int i = 0; i < 32; i++)
        r |= ((x >> i) & 1u) << (31 - i);
    return r;
}
static inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
static inline int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
static inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b)
{
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
static inline int __mul24(int a, int b) { return a * b; }
static inline unsigned __umul24(unsigned a, unsigned b) { return a * b; }
template <class T> static inline T __ldg(const T *p) { return *p; }
static inline long long clock64(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000ll + t.tv_nsec;
}
namespace gx_cpu {
/* An unchecked assert() that fails: the CUDA backend traps the kernel; here the
 * launch reports it (GX_ERR_KERNEL_FAULT) and the remaining blocks are skipped. */
static void assert_fail(const char *e, const char *file, unsigned line)
{
    gx_cpu_launch *L = ts.L;
    int z = 0;
    if (L && __atomic_compare_exchange_n(&L->error, &z, -1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        snprintf(L->msg, sizeof L->msg, "assertion failed: %s (%s:%u), block (%u, %u, %u) thread (%u, %u, %u)", e,
                 file, line, ts.bid.x, ts.bid.y, ts.bid.z, ts.tid.x, ts.tid.y, ts.tid.z);
        __atomic_store_n(&L->error, 5, __ATOMIC_RELEASE);
    }
}
} // namespace gx_cpu
static inline void __trap(void)
{
    gx_cpu::fail(5, "__trap() in block (%u, %u, %u)", gx_cpu::ts.bid.x, gx_cpu::ts.bid.y, gx_cpu::ts.bid.z);
}
using std::isnan;
using std::isinf;
using std::isfinite;
using std::signbit;
using std::abs;
using std::sqrt;
using std::exp;
using std::log;
using std::sin;
using std::cos;
using std::pow;
using std::floor;
using std::ceil;
using std::fabs;
using std::fmin;
using std::fmax;
