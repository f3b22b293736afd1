/* Status objects: formatting, annotation, joining, codes, OpenCL error names. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "testlib.h"

#include <CL/cl_ext.h>
#include <CL/cl_egl.h>
#include <CL/cl_gl.h>

static void ok_status_is_null_and_formats_as_ok(void** state) {
  (void)state;
  assert_null(HGR_OK);
  assert_int_equal(hgr_status_code(HGR_OK), HGR_STATUS_OK);
  assert_string_equal(hgr_status_message(HGR_OK), "");
  char buffer[8];
  assert_int_equal(hgr_status_format(HGR_OK, buffer, sizeof(buffer)), 2);
  assert_string_equal(buffer, "OK");
  hgr_status_free(HGR_OK);
}

static void status_carries_code_message_and_location(void** state) {
  (void)state;
  int line = __LINE__ + 1;
  hgr_status_t s = HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "node %d '%s': bad", 7, "conv1");
  assert_int_equal(hgr_status_code(s), HGR_STATUS_INVALID_ARGUMENT);
  assert_string_equal(hgr_status_message(s), "node 7 'conv1': bad");
  assert_int_equal(hgr_status_line(s), line);
  assert_non_null(strstr(hgr_status_file(s), "test_status.c"));
  char* text = hgr_status_to_string(s);
  char expected[128];
  snprintf(expected, sizeof(expected), "INVALID_ARGUMENT: node 7 'conv1': bad [test_status.c:%d]", line);
  assert_string_equal(text, expected);
  free(text);
  hgr_status_free(s);
}

static void format_truncates_like_snprintf(void** state) {
  (void)state;
  hgr_status_t s = HGR_STATUS(HGR_STATUS_INTERNAL, "0123456789");
  char small[10];
  size_t needed = hgr_status_format(s, small, sizeof(small));
  assert_true(needed > sizeof(small));
  assert_int_equal(strlen(small), sizeof(small) - 1);
  assert_int_equal(hgr_status_format(s, NULL, 0), needed);
  hgr_status_free(s);
}

static void annotate_prepends_where(void** state) {
  (void)state;
  hgr_status_t s = HGR_STATUS(HGR_STATUS_NOT_FOUND, "no such file");
  s = hgr_status_annotate(s, "loading params '%s'", "w.params");
  assert_string_equal(hgr_status_message(s), "loading params 'w.params': no such file");
  assert_int_equal(hgr_status_code(s), HGR_STATUS_NOT_FOUND);
  hgr_status_free(s);
  assert_null(hgr_status_annotate(HGR_OK, "ignored"));
}

static void join_keeps_first_code_and_both_messages(void** state) {
  (void)state;
  hgr_status_t first = HGR_STATUS(HGR_STATUS_DEVICE_FAILURE, "kernel failed");
  hgr_status_t second = HGR_STATUS(HGR_STATUS_INTERNAL, "release failed");
  hgr_status_t joined = hgr_status_join(first, second);
  assert_ptr_equal(joined, first);
  assert_int_equal(hgr_status_code(joined), HGR_STATUS_DEVICE_FAILURE);
  assert_ptr_equal(hgr_status_next(joined), second);
  char* text = hgr_status_to_string(joined);
  assert_non_null(strstr(text, "DEVICE_FAILURE: kernel failed"));
  assert_non_null(strstr(text, "; also: INTERNAL: release failed"));
  free(text);
  hgr_status_free(joined);
  assert_null(hgr_status_join(HGR_OK, HGR_OK));
  hgr_status_t only = HGR_STATUS(HGR_STATUS_INTERNAL, "x");
  assert_ptr_equal(hgr_status_join(HGR_OK, only), only);
  assert_ptr_equal(hgr_status_join(only, HGR_OK), only);
  hgr_status_free(only);
}

static void every_code_has_a_name(void** state) {
  (void)state;
  for (int code = HGR_STATUS_OK; code <= HGR_STATUS_DEVICE_FAILURE; ++code)
    assert_string_not_equal(hgr_status_code_name((hgr_status_code_t)code), "UNKNOWN");
  assert_string_equal(hgr_status_code_name((hgr_status_code_t)99), "UNKNOWN");
}

#define NAMED(code) {code, #code}
static const struct {
  int32_t code;
  const char* name;
} header_codes[] = {
    NAMED(CL_SUCCESS), NAMED(CL_DEVICE_NOT_FOUND), NAMED(CL_DEVICE_NOT_AVAILABLE),
    NAMED(CL_COMPILER_NOT_AVAILABLE), NAMED(CL_MEM_OBJECT_ALLOCATION_FAILURE),
    NAMED(CL_OUT_OF_RESOURCES), NAMED(CL_OUT_OF_HOST_MEMORY), NAMED(CL_PROFILING_INFO_NOT_AVAILABLE),
    NAMED(CL_MEM_COPY_OVERLAP), NAMED(CL_IMAGE_FORMAT_MISMATCH), NAMED(CL_IMAGE_FORMAT_NOT_SUPPORTED),
    NAMED(CL_BUILD_PROGRAM_FAILURE), NAMED(CL_MAP_FAILURE), NAMED(CL_MISALIGNED_SUB_BUFFER_OFFSET),
    NAMED(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST), NAMED(CL_COMPILE_PROGRAM_FAILURE),
    NAMED(CL_LINKER_NOT_AVAILABLE), NAMED(CL_LINK_PROGRAM_FAILURE), NAMED(CL_DEVICE_PARTITION_FAILED),
    NAMED(CL_KERNEL_ARG_INFO_NOT_AVAILABLE), NAMED(CL_INVALID_VALUE), NAMED(CL_INVALID_DEVICE_TYPE),
    NAMED(CL_INVALID_PLATFORM), NAMED(CL_INVALID_DEVICE), NAMED(CL_INVALID_CONTEXT),
    NAMED(CL_INVALID_QUEUE_PROPERTIES), NAMED(CL_INVALID_COMMAND_QUEUE), NAMED(CL_INVALID_HOST_PTR),
    NAMED(CL_INVALID_MEM_OBJECT), NAMED(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR), NAMED(CL_INVALID_IMAGE_SIZE),
    NAMED(CL_INVALID_SAMPLER), NAMED(CL_INVALID_BINARY), NAMED(CL_INVALID_BUILD_OPTIONS),
    NAMED(CL_INVALID_PROGRAM), NAMED(CL_INVALID_PROGRAM_EXECUTABLE), NAMED(CL_INVALID_KERNEL_NAME),
    NAMED(CL_INVALID_KERNEL_DEFINITION), NAMED(CL_INVALID_KERNEL), NAMED(CL_INVALID_ARG_INDEX),
    NAMED(CL_INVALID_ARG_VALUE), NAMED(CL_INVALID_ARG_SIZE), NAMED(CL_INVALID_KERNEL_ARGS),
    NAMED(CL_INVALID_WORK_DIMENSION), NAMED(CL_INVALID_WORK_GROUP_SIZE), NAMED(CL_INVALID_WORK_ITEM_SIZE),
    NAMED(CL_INVALID_GLOBAL_OFFSET), NAMED(CL_INVALID_EVENT_WAIT_LIST), NAMED(CL_INVALID_EVENT),
    NAMED(CL_INVALID_OPERATION), NAMED(CL_INVALID_GL_OBJECT), NAMED(CL_INVALID_BUFFER_SIZE),
    NAMED(CL_INVALID_MIP_LEVEL), NAMED(CL_INVALID_GLOBAL_WORK_SIZE), NAMED(CL_INVALID_PROPERTY),
    NAMED(CL_INVALID_IMAGE_DESCRIPTOR), NAMED(CL_INVALID_COMPILER_OPTIONS), NAMED(CL_INVALID_LINKER_OPTIONS),
    NAMED(CL_INVALID_DEVICE_PARTITION_COUNT),
    /* OpenCL 2.x / 3.0 codes: written as numbers since the build targets 1.2. */
    {-69, "CL_INVALID_PIPE_SIZE"}, {-70, "CL_INVALID_DEVICE_QUEUE"}, {-71, "CL_INVALID_SPEC_ID"},
    {-72, "CL_MAX_SIZE_RESTRICTION_EXCEEDED"},
    /* Extension codes from cl_ext.h, cl_gl.h, cl_egl.h. */
    NAMED(CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR), NAMED(CL_PLATFORM_NOT_FOUND_KHR),
    NAMED(CL_DEVICE_PARTITION_FAILED_EXT), NAMED(CL_INVALID_PARTITION_COUNT_EXT),
    NAMED(CL_INVALID_PARTITION_NAME_EXT), NAMED(CL_EGL_RESOURCE_NOT_ACQUIRED_KHR),
    NAMED(CL_INVALID_EGL_OBJECT_KHR), NAMED(CL_INVALID_ACCELERATOR_INTEL),
    NAMED(CL_INVALID_ACCELERATOR_TYPE_INTEL), NAMED(CL_INVALID_ACCELERATOR_DESCRIPTOR_INTEL),
    NAMED(CL_ACCELERATOR_TYPE_NOT_SUPPORTED_INTEL), NAMED(CL_COMMAND_TERMINATED_ITSELF_WITH_FAILURE_ARM),
    NAMED(CL_CONTEXT_TERMINATED_KHR), NAMED(CL_INVALID_COMMAND_BUFFER_KHR),
    NAMED(CL_INVALID_SYNC_POINT_WAIT_LIST_KHR), NAMED(CL_INCOMPATIBLE_COMMAND_QUEUE_KHR),
    NAMED(CL_INVALID_MUTABLE_COMMAND_KHR), NAMED(CL_INVALID_SEMAPHORE_KHR),
    /* D3D, DX9 and VA-API sharing headers need platform headers; their codes by value. */
    {-1002, "CL_INVALID_D3D10_DEVICE_KHR"}, {-1003, "CL_INVALID_D3D10_RESOURCE_KHR"},
    {-1004, "CL_D3D10_RESOURCE_ALREADY_ACQUIRED_KHR"}, {-1005, "CL_D3D10_RESOURCE_NOT_ACQUIRED_KHR"},
    {-1006, "CL_INVALID_D3D11_DEVICE_KHR"}, {-1007, "CL_INVALID_D3D11_RESOURCE_KHR"},
    {-1008, "CL_D3D11_RESOURCE_ALREADY_ACQUIRED_KHR"}, {-1009, "CL_D3D11_RESOURCE_NOT_ACQUIRED_KHR"},
    {-1010, "CL_INVALID_DX9_MEDIA_ADAPTER_KHR"}, {-1011, "CL_INVALID_DX9_MEDIA_SURFACE_KHR"},
    {-1012, "CL_DX9_MEDIA_SURFACE_ALREADY_ACQUIRED_KHR"}, {-1013, "CL_DX9_MEDIA_SURFACE_NOT_ACQUIRED_KHR"},
    {-1098, "CL_INVALID_VA_API_MEDIA_ADAPTER_INTEL"}, {-1099, "CL_INVALID_VA_API_MEDIA_SURFACE_INTEL"},
    {-1100, "CL_VA_API_MEDIA_SURFACE_ALREADY_ACQUIRED_INTEL"},
    {-1101, "CL_VA_API_MEDIA_SURFACE_NOT_ACQUIRED_INTEL"},
};

static void every_opencl_error_code_has_its_header_name(void** state) {
  (void)state;
  for (size_t i = 0; i < sizeof(header_codes) / sizeof(header_codes[0]); ++i)
    assert_string_equal(hgr_opencl_error_name(header_codes[i].code), header_codes[i].name);
  assert_string_equal(hgr_opencl_error_name(-54), "CL_INVALID_WORK_GROUP_SIZE");
  assert_string_equal(hgr_opencl_error_name(-9999), "CL_UNKNOWN_ERROR");
  assert_string_equal(hgr_opencl_error_name(1), "CL_UNKNOWN_ERROR");
}

static void opencl_status_names_the_call_and_the_error(void** state) {
  (void)state;
  hgr_status_t s = HGR_CL_STATUS(CL_INVALID_WORK_GROUP_SIZE, "clEnqueueNDRangeKernel(%s) on %s",
                                 "conv2d", "pocl:0");
  assert_string_equal(hgr_status_message(s),
                      "clEnqueueNDRangeKernel(conv2d) on pocl:0 failed: CL_INVALID_WORK_GROUP_SIZE");
  assert_int_equal(hgr_status_code(s), HGR_STATUS_INTERNAL);
  hgr_status_free(s);
  s = HGR_CL_STATUS(CL_MEM_OBJECT_ALLOCATION_FAILURE, "clCreateBuffer");
  assert_int_equal(hgr_status_code(s), HGR_STATUS_RESOURCE_EXHAUSTED);
  hgr_status_free(s);
  s = HGR_CL_STATUS(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, "clWaitForEvents");
  assert_int_equal(hgr_status_code(s), HGR_STATUS_DEVICE_FAILURE);
  hgr_status_free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ok_status_is_null_and_formats_as_ok),
      cmocka_unit_test(status_carries_code_message_and_location),
      cmocka_unit_test(format_truncates_like_snprintf),
      cmocka_unit_test(annotate_prepends_where),
      cmocka_unit_test(join_keeps_first_code_and_both_messages),
      cmocka_unit_test(every_code_has_a_name),
      cmocka_unit_test(every_opencl_error_code_has_its_header_name),
      cmocka_unit_test(opencl_status_names_the_call_and_the_error),
  };
  return cmocka_run_group_tests_name("status", tests, NULL, NULL);
}
