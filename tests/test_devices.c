/* Discovery, contexts, queues and the pair matrix on the real test bed.
 * Argument: "testbed" (one context per platform), "context-per-device", or
 * "clover" (only that Clover is skipped with a reason; 77 when it is absent). */
#include <stdlib.h>
#include <string.h>

#include "device_internal.h"
#include "testlib.h"

static bool per_device;
static hgr_instance_t* instance;

static size_t find(const char* spec) {
  size_t index = SIZE_MAX;
  ASSERT_OK(hgr_instance_find_device(instance, spec, &index));
  return index;
}

static void discovery_finds_two_pocl_devices_rusticl_and_oclgrind(void** state) {
  (void)state;
  const hgr_device_info_t* pocl0 = hgr_instance_device(instance, find("pocl:0"));
  const hgr_device_info_t* pocl1 = hgr_instance_device(instance, find("pocl:1"));
  const hgr_device_info_t* rusticl = hgr_instance_device(instance, find("rusticl:0"));
  const hgr_device_info_t* oclgrind = hgr_instance_device(instance, find("oclgrind:0"));
  assert_string_equal(pocl0->spec, "pocl:0");
  assert_string_equal(pocl1->spec, "pocl:1");
  assert_string_equal(rusticl->spec, "rusticl:0");
  assert_string_equal(oclgrind->spec, "oclgrind:0");
  assert_string_equal(pocl0->platform_name, "Portable Computing Language");
  assert_int_equal(pocl0->type, HGR_DEVICE_TYPE_CPU);
  assert_int_equal(pocl0->platform_index, pocl1->platform_index);
  assert_int_equal(pocl1->index_in_platform, 1);
  size_t found = SIZE_MAX;
  ASSERT_STATUS(hgr_instance_find_device(instance, "pocl:2", &found), HGR_STATUS_NOT_FOUND,
                "available:", "pocl:0", "rusticl:0", "oclgrind:0");
}

static void every_device_reports_its_capabilities(void** state) {
  (void)state;
  for (size_t i = 0; i < hgr_instance_device_count(instance); ++i) {
    const hgr_device_info_t* d = hgr_instance_device(instance, i);
    assert_int_equal(d->index, i);
    assert_non_null(d->spec);
    assert_true(strlen(d->name) > 0);
    assert_true(strlen(d->platform_vendor) > 0);
    assert_true(strlen(d->platform_version) > 0);
    assert_true(strlen(d->driver_version) > 0);
    assert_true(d->opencl_major >= 1);
    assert_true(d->compute_units >= 1);
    assert_true(d->global_mem_bytes > 0);
    assert_true(d->local_mem_bytes > 0);
    assert_true(d->max_alloc_bytes > 0 && d->max_alloc_bytes <= d->global_mem_bytes);
    assert_true(d->base_address_align_bits >= 8);
    assert_true(d->max_work_group_size >= 1);
  }
}

/* Clover lists no devices on this test bed: it is skipped with that reason. Run on
 * its own ("clover"), so that a machine without Clover reports the CTest entry as
 * skipped (77) rather than passed. */
static int clover_is_skipped_with_a_reason(void) {
  for (size_t i = 0; i < hgr_instance_skipped_platform_count(instance); ++i) {
    const hgr_skipped_platform_t* s = hgr_instance_skipped_platform(instance, i);
    if (!strcmp(s->name, "Clover")) {
      bool named = strstr(s->reason, "no devices") != NULL;
      printf("Clover skipped because: %s\n", s->reason);
      if (!named) fprintf(stderr, "test_devices: Clover's reason does not say \"no devices\"\n");
      return named ? 0 : 1;
    }
  }
  printf("test_devices: Clover is not registered on this machine: skipped\n");
  return HGR_TEST_SKIP;
}

static void pair_matrix_classifies_the_test_bed(void** state) {
  (void)state;
  size_t pocl0 = find("pocl:0"), pocl1 = find("pocl:1"), rusticl = find("rusticl:0"),
         oclgrind = find("oclgrind:0");
  assert_int_equal(hgr_instance_pair_class(instance, pocl0, pocl0), HGR_PAIR_SAME_QUEUE);
  assert_int_equal(hgr_instance_pair_class(instance, pocl0, pocl1),
                   per_device ? HGR_PAIR_CROSS_CONTEXT : HGR_PAIR_SAME_CONTEXT);
  assert_int_equal(hgr_instance_pair_class(instance, pocl1, pocl0),
                   per_device ? HGR_PAIR_CROSS_CONTEXT : HGR_PAIR_SAME_CONTEXT);
  assert_int_equal(hgr_instance_pair_class(instance, pocl0, rusticl), HGR_PAIR_CROSS_PLATFORM);
  assert_int_equal(hgr_instance_pair_class(instance, rusticl, oclgrind), HGR_PAIR_CROSS_PLATFORM);
  assert_int_equal(hgr_instance_pair_class(instance, oclgrind, pocl1), HGR_PAIR_CROSS_PLATFORM);
}

static void contexts_are_shared_per_platform_unless_split(void** state) {
  (void)state;
  cl_context a, b, c;
  ASSERT_OK(hgr__instance_context(instance, find("pocl:0"), &a));
  ASSERT_OK(hgr__instance_context(instance, find("pocl:1"), &b));
  ASSERT_OK(hgr__instance_context(instance, find("rusticl:0"), &c));
  if (per_device) assert_ptr_not_equal(a, b);
  else assert_ptr_equal(a, b);
  assert_ptr_not_equal(a, c);
}

static void every_device_gets_in_order_queues_with_and_without_profiling(void** state) {
  (void)state;
  for (size_t i = 0; i < hgr_instance_device_count(instance); ++i) {
    for (int profiling = 0; profiling < 2; ++profiling) {
      cl_command_queue queue = NULL;
      ASSERT_OK(hgr__instance_create_queue(instance, i, profiling, &queue));
      cl_command_queue_properties properties = 0;
      assert_int_equal(clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof(properties),
                                             &properties, NULL),
                       CL_SUCCESS);
      assert_int_equal(properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0);
      assert_int_equal(!!(properties & CL_QUEUE_PROFILING_ENABLE), profiling);
      clReleaseCommandQueue(queue);
    }
  }
}

int main(int argc, char** argv) {
  per_device = argc > 1 && !strcmp(argv[1], "context-per-device");
  bool clover = argc > 1 && !strcmp(argv[1], "clover");
  hgr_instance_options_t options;
  hgr_instance_options_init(&options);
  options.context_per_device = per_device;
  hgr_status_t status = hgr_instance_create(&options, &instance);
  if (status) {
    char* text = hgr_status_to_string(status);
    fprintf(stderr, "hgr_instance_create: %s\n", text);
    free(text);
    hgr_status_free(status);
    return 1;
  }
  if (clover) {
    int result = clover_is_skipped_with_a_reason();
    hgr_instance_release(instance);
    return result;
  }
  const char* needed[] = {"pocl:0", "pocl:1", "rusticl:0", "oclgrind:0"};
  hgr_test_require_devices(instance, needed, 4);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(discovery_finds_two_pocl_devices_rusticl_and_oclgrind),
      cmocka_unit_test(every_device_reports_its_capabilities),
      cmocka_unit_test(pair_matrix_classifies_the_test_bed),
      cmocka_unit_test(contexts_are_shared_per_platform_unless_split),
      cmocka_unit_test(every_device_gets_in_order_queues_with_and_without_profiling),
  };
  int failed = cmocka_run_group_tests_name(per_device ? "devices_context_per_device" : "devices",
                                           tests, NULL, NULL);
  hgr_instance_release(instance);
  return failed;
}
