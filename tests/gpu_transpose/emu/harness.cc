// CPU emulation of one NVPTX kernel (the emitted LLVM IR recompiled for the host): blocks run
// one after another, each by block_x*block_y host threads sharing a std::barrier.
#include <barrier>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

thread_local int t_x, t_y, b_x;
static std::barrier<>* g_bar;
extern "C" int emu_tid_x() { return t_x; }
extern "C" int emu_tid_y() { return t_y; }
extern "C" int emu_tid_z() { return 0; }
extern "C" int emu_ctaid_x() { return b_x; }
extern "C" int emu_ctaid_y() { return 0; }
extern "C" int emu_ctaid_z() { return 0; }
static int g_grid = 1, g_bx = 1, g_by = 1;
extern "C" int emu_nctaid_x() { return g_grid; }
extern "C" int emu_ntid_x() { return g_bx; }
extern "C" int emu_ntid_y() { return g_by; }
extern "C" void emu_barrier() { g_bar->arrive_and_wait(); }
extern "C" float __nv_expf(float x) { return expf(x); }
extern "C" float __nv_logf(float x) { return logf(x); }
extern "C" float __nv_tanhf(float x) { return tanhf(x); }


extern "C" void KERNEL(void*, void*, void*, void*, void*, void*, void*, void*);

// usage: harness grid bx by  in:FILE:SIZE ... out:FILE:SIZE ...
int main(int argc, char** argv) {
  g_grid = atoi(argv[1]); g_bx = atoi(argv[2]); g_by = atoi(argv[3]);
  std::vector<void*> args(8, nullptr);
  std::vector<std::pair<std::string, std::pair<char*, size_t>>> outs;
  int n = 0;
  for (int i = 4; i < argc; ++i) {
    std::string a = argv[i];
    size_t c1 = a.find(':'), c2 = a.rfind(':');
    std::string kind = a.substr(0, c1), file = a.substr(c1 + 1, c2 - c1 - 1);
    size_t size = std::stoull(a.substr(c2 + 1));
    char* buf = static_cast<char*>(aligned_alloc(64, (size + 63) / 64 * 64));
    memset(buf, 0xcd, size);
    if (kind == "in") {
      std::ifstream f(file, std::ios::binary);
      f.read(buf, size);
      if (!f) { fprintf(stderr, "short input %s\n", file.c_str()); return 1; }
    } else {
      outs.push_back({file, {buf, size}});
    }
    args[n++] = buf;
  }
  const int threads = g_bx * g_by;
  std::barrier<> bar(threads);
  g_bar = &bar;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      t_x = t % g_bx; t_y = t / g_bx;
      for (int b = 0; b < g_grid; ++b) {
        b_x = b;
        KERNEL(args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7]);
        bar.arrive_and_wait();
      }
    });
  }
  for (auto& th : pool) th.join();
  for (auto& o : outs) {
    std::ofstream f(o.first, std::ios::binary);
    f.write(o.second.first, o.second.second);
  }
  return 0;
}
