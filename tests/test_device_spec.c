/* Device spec parsing and matching over a fake device list (no OpenCL involved). */
#include <stdlib.h>
#include <string.h>

#include "device_internal.h"
#include "testlib.h"

/* Two PoCL CPUs, a rusticl "GPU", Oclgrind, an NVIDIA GPU and an FPGA. */
static hgr_device_info_t fake[6];
static hgr_device_info_t* fake_list[6];

static void add(size_t i, size_t platform, size_t in_platform, const char* platform_name,
                const char* device_name, hgr_device_type_t type) {
  memset(&fake[i], 0, sizeof(fake[i]));
  fake[i].index = i;
  fake[i].platform_index = platform;
  fake[i].index_in_platform = in_platform;
  fake[i].platform_name = platform_name;
  char* short_name = NULL;
  hgr_status_t s = hgr__platform_short_name(hgr_allocator_system(), platform_name, &short_name);
  assert_null(s);
  fake[i].platform_short = short_name;
  fake[i].name = device_name;
  fake[i].type = type;
  fake_list[i] = &fake[i];
}

static int setup(void** state) {
  (void)state;
  add(0, 0, 0, "Portable Computing Language", "pthread-cpu", HGR_DEVICE_TYPE_CPU);
  add(1, 0, 1, "Portable Computing Language", "pthread-cpu", HGR_DEVICE_TYPE_CPU);
  add(2, 1, 0, "rusticl", "llvmpipe", HGR_DEVICE_TYPE_GPU);
  add(3, 2, 0, "Oclgrind", "Oclgrind Simulator", HGR_DEVICE_TYPE_ACCELERATOR);
  add(4, 3, 0, "NVIDIA CUDA", "NVIDIA H100", HGR_DEVICE_TYPE_GPU);
  add(5, 4, 0, "Intel(R) FPGA SDK for OpenCL(TM)", "fpga", HGR_DEVICE_TYPE_ACCELERATOR);
  hgr_status_t s = hgr__device_assign_specs(hgr_allocator_system(), fake_list, 6);
  assert_null(s);
  return 0;
}

static int teardown(void** state) {
  (void)state;
  for (size_t i = 0; i < 6; ++i) {
    free((char*)fake[i].platform_short);
    free((char*)fake[i].spec);
  }
  return 0;
}

static size_t match(const char* spec) {
  size_t index = SIZE_MAX;
  ASSERT_OK(hgr__device_spec_match((const hgr_device_info_t* const*)fake_list, 6, spec, &index));
  return index;
}

static void platform_name_specs_count_within_the_platform(void** state) {
  (void)state;
  assert_int_equal(match("pocl:0"), 0);
  assert_int_equal(match("pocl:1"), 1);
  assert_int_equal(match("POCL:1"), 1);
  assert_int_equal(match("portable:1"), 1);
  assert_int_equal(match("computing language:0"), 0);
  assert_int_equal(match("rusticl:0"), 2);
  assert_int_equal(match("oclgrind:0"), 3);
  assert_int_equal(match("nvidia:0"), 4);
  assert_int_equal(match("cuda:0"), 4);
}

static void type_specs_count_across_platforms(void** state) {
  (void)state;
  assert_int_equal(match("cpu:0"), 0);
  assert_int_equal(match("cpu:1"), 1);
  assert_int_equal(match("gpu:0"), 2);
  assert_int_equal(match("gpu:1"), 4);
  assert_int_equal(match("GPU:1"), 4);
  assert_int_equal(match("accelerator:0"), 3);
  assert_int_equal(match("accelerator:1"), 5);
}

static void index_pair_specs_name_platform_and_device(void** state) {
  (void)state;
  assert_int_equal(match("0.0"), 0);
  assert_int_equal(match("0.1"), 1);
  assert_int_equal(match("1.0"), 2);
  assert_int_equal(match("4.0"), 5);
}

static void canonical_specs_round_trip(void** state) {
  (void)state;
  assert_string_equal(fake[0].spec, "pocl:0");
  assert_string_equal(fake[1].spec, "pocl:1");
  assert_string_equal(fake[2].spec, "rusticl:0");
  assert_string_equal(fake[3].spec, "oclgrind:0");
  assert_string_equal(fake[4].spec, "nvidia:0");
  assert_string_equal(fake[5].spec, "intel:0");
  for (size_t i = 0; i < 6; ++i) assert_int_equal(match(fake[i].spec), i);
}

#define MATCH_STATUS(spec) \
  hgr__device_spec_match((const hgr_device_info_t* const*)fake_list, 6, (spec), &index)

static void malformed_specs_are_invalid_arguments(void** state) {
  (void)state;
  size_t index;
  ASSERT_STATUS(MATCH_STATUS(""), HGR_STATUS_INVALID_ARGUMENT, "empty device spec");
  ASSERT_STATUS(MATCH_STATUS(NULL), HGR_STATUS_INVALID_ARGUMENT, "empty device spec");
  ASSERT_STATUS(MATCH_STATUS("pocl"), HGR_STATUS_INVALID_ARGUMENT, "'pocl'", "NAME:INDEX");
  ASSERT_STATUS(MATCH_STATUS(":0"), HGR_STATUS_INVALID_ARGUMENT, "':0'");
  ASSERT_STATUS(MATCH_STATUS("pocl:"), HGR_STATUS_INVALID_ARGUMENT, "not a device index");
  ASSERT_STATUS(MATCH_STATUS("pocl:x"), HGR_STATUS_INVALID_ARGUMENT, "'x' is not a device index");
  ASSERT_STATUS(MATCH_STATUS("pocl:-1"), HGR_STATUS_INVALID_ARGUMENT, "not a device index");
  ASSERT_STATUS(MATCH_STATUS("pocl:99999999999999999999999"), HGR_STATUS_INVALID_ARGUMENT,
                "not a device index");
  ASSERT_STATUS(MATCH_STATUS("1.x"), HGR_STATUS_INVALID_ARGUMENT, "expected P.D");
  ASSERT_STATUS(MATCH_STATUS(".1"), HGR_STATUS_INVALID_ARGUMENT, "expected P.D");
  char long_spec[400];
  memset(long_spec, 'a', sizeof(long_spec) - 1);
  long_spec[sizeof(long_spec) - 1] = 0;
  ASSERT_STATUS(MATCH_STATUS(long_spec), HGR_STATUS_INVALID_ARGUMENT, "too long");
}

static void unmatched_specs_list_the_available_devices(void** state) {
  (void)state;
  size_t index;
  ASSERT_STATUS(MATCH_STATUS("pocl:2"), HGR_STATUS_NOT_FOUND, "'pocl:2'", "have 2 device(s)",
                "available: pocl:0 (pthread-cpu), pocl:1", "rusticl:0 (llvmpipe)", "intel:0 (fpga)");
  ASSERT_STATUS(MATCH_STATUS("amd:0"), HGR_STATUS_NOT_FOUND, "no platform name contains 'amd'",
                "available:");
  ASSERT_STATUS(MATCH_STATUS("cpu:2"), HGR_STATUS_NOT_FOUND, "2 cpu device(s) found");
  ASSERT_STATUS(MATCH_STATUS("custom:0"), HGR_STATUS_NOT_FOUND, "0 custom device(s) found");
  ASSERT_STATUS(MATCH_STATUS("9.0"), HGR_STATUS_NOT_FOUND, "no such platform.device pair");
  ASSERT_STATUS(MATCH_STATUS("0.2"), HGR_STATUS_NOT_FOUND, "no such platform.device pair");
  ASSERT_STATUS(hgr__device_spec_match(NULL, 0, "pocl:0", &index), HGR_STATUS_NOT_FOUND,
                "none (no OpenCL device found)");
}

/* "rN/SPEC" names rank N's device; "r" before anything but digits is a platform name
 * ("rusticl:0"); a malformed prefix is refused. */
static void rank_prefixes_split_off_the_rank(void** state) {
  (void)state;
  int rank = 7;
  const char* local = NULL;
  assert_true(hgr_spec_rank("r1/pocl:0", &rank, &local));
  assert_int_equal(rank, 1);
  assert_string_equal(local, "pocl:0");
  assert_true(hgr_spec_rank("r12/0.1", &rank, &local));
  assert_int_equal(rank, 12);
  assert_string_equal(local, "0.1");
  assert_true(hgr_spec_rank("rusticl:0", &rank, &local));
  assert_int_equal(rank, -1);
  assert_string_equal(local, "rusticl:0");
  assert_true(hgr_spec_rank("pocl:0", &rank, &local));
  assert_int_equal(rank, -1);
  assert_true(hgr_spec_rank("r2147483647/gpu:0", &rank, &local));
  assert_int_equal(rank, 2147483647);
  assert_false(hgr_spec_rank("r2147483648/gpu:0", &rank, &local)); /* past INT32_MAX */
  assert_false(hgr_spec_rank("r1pocl:0", &rank, &local));
  assert_false(hgr_spec_rank("r1", &rank, &local));
  assert_false(hgr_spec_rank("r1:0", &rank, &local));
}

static void short_platform_names_are_lower_case_first_words(void** state) {
  (void)state;
  const char* cases[][2] = {{"Portable Computing Language", "pocl"},
                            {"rusticl", "rusticl"},
                            {"Oclgrind", "oclgrind"},
                            {"NVIDIA CUDA", "nvidia"},
                            {"AMD Accelerated Parallel Processing", "amd"},
                            {"Intel(R) OpenCL Graphics", "intel"},
                            {"  ", "platform"}};
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    char* short_name = NULL;
    ASSERT_OK(hgr__platform_short_name(hgr_allocator_system(), cases[i][0], &short_name));
    assert_string_equal(short_name, cases[i][1]);
    free(short_name);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(platform_name_specs_count_within_the_platform),
      cmocka_unit_test(type_specs_count_across_platforms),
      cmocka_unit_test(index_pair_specs_name_platform_and_device),
      cmocka_unit_test(canonical_specs_round_trip),
      cmocka_unit_test(malformed_specs_are_invalid_arguments),
      cmocka_unit_test(unmatched_specs_list_the_available_devices),
      cmocka_unit_test(short_platform_names_are_lower_case_first_words),
      cmocka_unit_test(rank_prefixes_split_off_the_rank),
  };
  return cmocka_run_group_tests_name("device_spec", tests, setup, teardown);
}
