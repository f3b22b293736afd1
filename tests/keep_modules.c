/* Linked into test programs and the hgr CLI in sanitizer builds only (see
 * tests/CMakeLists.txt). OpenCL drivers unload plug-in modules that leak (Mesa's
 * pipe loader in Clover does); LeakSanitizer then cannot name the module, so
 * lsan.supp cannot suppress it. Defined in the executable, this dlclose takes
 * precedence over libc's for every library and keeps modules mapped. */
int dlclose(void* handle);
int dlclose(void* handle) {
  (void)handle;
  return 0;
}
