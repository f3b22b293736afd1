/* Kernel selection (runtime/exec/program_cache.c): a program built with
 * -DHGR_SELECT compiles only the kernels named by -DHGR_K_<kernel>=~,1 options;
 * without HGR_SELECT, every kernel. A kernel written out is wrapped in
 *   #if HGR_WANTED(hgr_name) ... #endif
 * one that a macro defines in HGR_KERNEL_IF(hgr_name, __kernel void hgr_name(...) {...}).
 * HGR_WANTED(k) is 1 when HGR_K_k expands to "~,1" (two arguments, the second 1),
 * else 0: HGR_K_k stays one argument and HGR_SELECT_SECOND picks the 0 after it. */
#define HGR_SELECT_CAT_(a, b) a##b
#define HGR_SELECT_CAT(a, b) HGR_SELECT_CAT_(a, b)
#define HGR_SELECT_SECOND_(a, b, ...) b
#define HGR_SELECT_SECOND(...) HGR_SELECT_SECOND_(__VA_ARGS__)
#ifdef HGR_SELECT
#define HGR_WANTED(kernel) HGR_SELECT_SECOND(HGR_K_##kernel, 0, ~)
#else
#define HGR_WANTED(kernel) 1
#endif
#define HGR_SELECT_IF_1(...) __VA_ARGS__
#define HGR_SELECT_IF_0(...)
#define HGR_KERNEL_IF(kernel, ...) HGR_SELECT_CAT(HGR_SELECT_IF_, HGR_WANTED(kernel))(__VA_ARGS__)
