/* Kernel selection (kernels/select.h), on a real OpenCL compiler: for each
 * kernels/<name>.cl, built as hgr builds it (runtime/exec/program_cache.c), with
 *   - no options: every kernel (the whole library, as before selection);
 *   - -DHGR_SELECT alone: no kernel at all, so every kernel of the file is wrapped
 *     (one left out would be compiled into every program that selects from the file);
 *   - -DHGR_SELECT and every other kernel of the whole build named: exactly those,
 *     so each wrapper names its own kernel (a wrong name drops the kernel a plan asks
 *     for, or keeps one it does not);
 *   - -DHGR_SELECT and the first kernel: that kernel alone.
 * The sources are read from kernels/ (with kernels/ as the include directory, as the
 * embedding inlines its headers).
 *
 * usage: test_kernel_select KERNELS_DIR DEVICE_SPEC */
#include <dirent.h>
#include <string.h>

#include "hgr/opencl.h"
#include "testlib.h"

static const char* kernels_dir;
static const char* device_spec;
static hgr_opencl_device_t device;


static char* read_text(const char* path) {
  FILE* file = fopen(path, "rb");
  if (!file) {
    print_error("cannot open %s\n", path);
    fail();
  }
  fseek(file, 0, SEEK_END);
  long length = ftell(file);
  fseek(file, 0, SEEK_SET);
  char* text = malloc((size_t)length + 1);
  assert_non_null(text);
  assert_int_equal(fread(text, 1, (size_t)length, file), (size_t)length);
  text[length] = 0;
  fclose(file);
  return text;
}

/* The names of the kernels of text built with options, ';'-separated (malloc'd). */
static char* kernel_names(const char* name, const char* text, const char* options, size_t* out_count) {
  char all_options[20480];
  int written = snprintf(all_options, sizeof(all_options), "-I%s %s", kernels_dir, options);
  assert_true(written > 0 && (size_t)written < sizeof(all_options));
  cl_int error = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(device.context, 1, &text, NULL, &error);
  assert_int_equal(error, CL_SUCCESS);
  error = clBuildProgram(program, 1, &device.device, all_options, NULL, NULL);
  if (error != CL_SUCCESS) {
    char log[4096] = "";
    clGetProgramBuildInfo(program, device.device, CL_PROGRAM_BUILD_LOG, sizeof(log) - 1, log, NULL);
    print_error("kernels/%s.cl with '%s': clBuildProgram %d: %s\n", name, options, error, log);
    fail();
  }
  size_t count = 0, bytes = 0;
  assert_int_equal(clGetProgramInfo(program, CL_PROGRAM_NUM_KERNELS, sizeof(count), &count, NULL), CL_SUCCESS);
  assert_int_equal(clGetProgramInfo(program, CL_PROGRAM_KERNEL_NAMES, 0, NULL, &bytes), CL_SUCCESS);
  char* names = calloc(bytes + 1, 1);
  assert_non_null(names);
  if (bytes) assert_int_equal(clGetProgramInfo(program, CL_PROGRAM_KERNEL_NAMES, bytes, names, NULL), CL_SUCCESS);
  clReleaseProgram(program);
  *out_count = count;
  return names;
}

/* names (';'-separated) split in place into an array (malloc'd), sorted. */
static int compare(const void* a, const void* b) { return strcmp(*(char* const*)a, *(char* const*)b); }
static char** split(char* names, size_t count) {
  char** list = calloc(count + 1, sizeof(*list));
  assert_non_null(list);
  size_t n = 0;
  for (char* name = strtok(names, ";"); name; name = strtok(NULL, ";")) {
    assert_true(n < count);
    list[n++] = name;
  }
  assert_int_equal(n, count);
  qsort(list, count, sizeof(*list), compare);
  return list;
}

/* The names of kernels_dir's *.cl files without the suffix, sorted. */
static size_t list_sources(char sources[][64], size_t capacity) {
  DIR* dir = opendir(kernels_dir);
  assert_non_null(dir);
  size_t count = 0;
  for (struct dirent* entry; (entry = readdir(dir));) {
    size_t length = strlen(entry->d_name);
    if (length < 4 || length - 3 >= 64 || strcmp(entry->d_name + length - 3, ".cl")) continue;
    assert_true(count < capacity);
    memcpy(sources[count], entry->d_name, length - 3);
    sources[count++][length - 3] = 0;
  }
  closedir(dir);
  qsort(sources, count, sizeof(sources[0]), (int (*)(const void*, const void*))strcmp);
  return count;
}

static void each_source(void** state) {
  (void)state;
  char sources[64][64];
  size_t source_count = list_sources(sources, 64);
  assert_true(source_count > 0);
  for (size_t s = 0; s < source_count; ++s) {
    char path[1024];
    int path_length = snprintf(path, sizeof(path), "%s/%s.cl", kernels_dir, sources[s]);
    assert_true(path_length > 0 && (size_t)path_length < sizeof(path));
    char* text = read_text(path);

    size_t whole_count = 0;
    char* whole = kernel_names(sources[s], text, "", &whole_count);
    assert_true(whole_count > 0);
    char** kernels = split(whole, whole_count);

    size_t none_count = 0;
    free(kernel_names(sources[s], text, "-DHGR_SELECT", &none_count));
    if (none_count != 0) {
      print_error("kernels/%s.cl: -DHGR_SELECT alone leaves %zu kernels; wrap each in HGR_KERNEL_IF or "
                  "#if HGR_WANTED (kernels/select.h)\n",
                  sources[s], none_count);
      fail();
    }

    /* every other kernel, starting at the first and at the second in turn */
    for (size_t start = 0; start < 2 && start < whole_count; ++start) {
      char options[16384] = "-DHGR_SELECT";
      size_t length = strlen(options), expected = 0;
      for (size_t k = start; k < whole_count; k += 2, ++expected) {
        int written = snprintf(options + length, sizeof(options) - length, " -DHGR_K_%s=~,1", kernels[k]);
        assert_true(written > 0 && (size_t)written < sizeof(options) - length);
        length += (size_t)written;
      }
      size_t count = 0;
      char* names = kernel_names(sources[s], text, options, &count);
      char** selected = split(names, count);
      if (count != expected) {
        print_error("kernels/%s.cl: %zu kernels named, %zu built\n", sources[s], expected, count);
        fail();
      }
      for (size_t k = start, i = 0; k < whole_count; k += 2, ++i)
        if (strcmp(selected[i], kernels[k])) {
          print_error("kernels/%s.cl: %s named, %s built\n", sources[s], kernels[k], selected[i]);
          fail();
        }
      free(selected);
      free(names);
    }
    print_message("kernels/%s.cl: %zu kernels, each selectable\n", sources[s], whole_count);
    free(kernels);
    free(whole);
    free(text);
  }
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s KERNELS_DIR DEVICE_SPEC\n", argv[0]);
    return 2;
  }
  kernels_dir = argv[1];
  device_spec = argv[2];
  hgr_instance_t* instance = hgr_test_instance_or_exit();
  hgr_test_require_devices(instance, &device_spec, 1);
  size_t index = 0;
  if (hgr_instance_find_device(instance, device_spec, &index) ||
      hgr_instance_device_opencl(instance, index, &device))
    return 1;
  const struct CMUnitTest tests[] = {cmocka_unit_test(each_source)};
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  hgr_instance_release(instance);
  return failed;
}
