/* Makes Intel MKL (inside torch's CPU wheel) take the code path it takes on an Intel CPU, on
 * any x86-64 CPU: MKL chooses its kernels by asking whether the CPU is an Intel one, and on
 * an AMD CPU the answer is no, which sends it to its "compatible" path. Preloaded
 * (LD_PRELOAD), these definitions replace MKL's own, since libtorch_cpu.so exports them and
 * calls them through its symbol table. With MKL_CBWR=AUTO an AVX-512 CPU then runs MKL's
 * AVX-512 kernels, as an Intel Xeon with AVX-512 does (docs/robomme_upstream.md, "CPU-dependent
 * layouts"). A test tool: it only changes which of MKL's kernels run. */
int mkl_serv_intel_cpu_true(void) { return 1; }
int mkl_serv_intel_cpu(void) { return 1; }
