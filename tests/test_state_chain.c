/* State that stays on the device (issue 36, section 3): a streaming model, built
 * here with the builder,
 *     state_out = tanh(dense(x, W) + dense(state, U)),   y = sigmoid(state_out),
 * run chunk after chunk with the state output of run k given to run k+1 as a device
 * value (hgr_model_run_output_buffer -> hgr_model_run_with_buffers), against the
 * same model run with the state read to the host and written back every chunk, and
 * both against a plain-C reference:
 *   - every chunk's y and the last state equal the host round trip's (within 1e-5)
 *     and the reference's (within 1e-4);
 *   - the executor's traffic counters (hgr_executor_io_traffic, hgr/profile.h) show
 *     that the state never crossed to the host: no host copy of the state input
 *     after the first chunk's zeros, none of the state output but the final read;
 *     and the profile of the last run holds kernels only;
 *   - runs are ordered by events, not by host waits: the first chunk's state is a
 *     buffer whose ready event is a user event the test holds back, and every later
 *     chunk is started while nothing could run; a watchdog thread releases the event
 *     after 30 s and fails the test if any call had to wait for it (not on a
 *     host-driven device, Oclgrind, where exporting a buffer drives the queue);
 *   - with two specs, chunks alternate between a model on each device, so the state
 *     crosses contexts each time (a staged copy ordered by a bridge), also gated;
 *   - refusals: a device buffer of the wrong size, a ready event of another context;
 *   - a device buffer smaller than its input's storage (which the storage plan
 *     shares with a larger entry) is copied on the device (HGR_BINDING_DEVICE_COPY).
 * Arguments: SPEC [SPEC2] CHUNKS [context-per-device]. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "hgr/builder.h"
#include "hgr/model.h"
#include "hgr/opencl.h"
#include "testlib.h"
/* After testlib.h: its assertion macro needs cmocka. */
#include "fault_shim.h"

#define IN 16
#define HIDDEN 32
#define GATED_CHUNKS 24

static hgr_instance_t* instance;
static const char* specs[2];
static size_t spec_count;
static uint32_t chunks = 1000;

static const hgr_dtype_t f32 = {HGR_DTYPE_FLOAT, 32, 1};
static const int64_t x_shape[2] = {1, IN};
static const int64_t state_shape[2] = {1, HIDDEN};

static float weight_w[HIDDEN * IN], weight_u[HIDDEN * HIDDEN];
static float* xs;     /* chunks x IN */
static float* ref_y;      /* chunks x HIDDEN: the plain-C reference's y */
static float* ref_states; /* chunks x HIDDEN: its state after each chunk */
static float* host_y;      /* the host round trip's, likewise */
static float* host_states;

/* ---- the model and its reference ---------------------------------------------------- */

static hgr_value_t op(hgr_builder_t* builder, const char* name, const char* op_name, const hgr_value_t* inputs,
                      uint32_t count) {
  hgr_value_t out;
  ASSERT_OK(hgr_builder_add_op(builder, name, op_name, inputs, count, NULL, 1, &out));
  return out;
}

/* The streaming graph and its weights as params. */
static void build(hgr_graph_t** out_graph, hgr_params_t** out_params) {
  hgr_builder_t* builder = NULL;
  ASSERT_OK(hgr_builder_create(NULL, &builder));
  hgr_value_t x, state, w, u;
  ASSERT_OK(hgr_builder_add_input(builder, "x", f32, x_shape, 2, &x));
  ASSERT_OK(hgr_builder_add_input(builder, "state", f32, state_shape, 2, &state));
  ASSERT_OK(hgr_builder_add_constant(builder, "W", f32, (int64_t[]){HIDDEN, IN}, 2, weight_w, sizeof(weight_w), &w));
  ASSERT_OK(hgr_builder_add_constant(builder, "U", f32, (int64_t[]){HIDDEN, HIDDEN}, 2, weight_u, sizeof(weight_u),
                                     &u));
  hgr_value_t xw = op(builder, "xw", "dense", (hgr_value_t[]){x, w}, 2);
  hgr_value_t su = op(builder, "su", "dense", (hgr_value_t[]){state, u}, 2);
  hgr_value_t sum = op(builder, "sum", "add", (hgr_value_t[]){xw, su}, 2);
  hgr_value_t next = op(builder, "state_out", "tanh", &sum, 1);
  hgr_value_t y = op(builder, "y", "sigmoid", &next, 1);
  ASSERT_OK(hgr_builder_mark_output(builder, y));
  ASSERT_OK(hgr_builder_mark_output(builder, next));
  ASSERT_OK(hgr_builder_finish(builder, out_graph, out_params));
  hgr_builder_release(builder);
}

static void reference(void) {
  float state[HIDDEN] = {0};
  for (uint32_t k = 0; k < chunks; ++k) {
    float next[HIDDEN];
    for (int j = 0; j < HIDDEN; ++j) {
      double sum = 0;
      for (int i = 0; i < IN; ++i) sum += (double)xs[k * IN + i] * weight_w[j * IN + i];
      for (int i = 0; i < HIDDEN; ++i) sum += (double)state[i] * weight_u[j * HIDDEN + i];
      next[j] = (float)tanh(sum);
      ref_y[k * HIDDEN + j] = (float)(1 / (1 + exp(-(double)next[j])));
    }
    memcpy(state, next, sizeof(state));
    memcpy(&ref_states[(size_t)k * HIDDEN], state, sizeof(state));
  }
}

/* A model of the graph on spec, its executors profiled. */
static hgr_model_t* model_on(const char* spec) {
  hgr_graph_t* graph = NULL;
  hgr_params_t* params = NULL;
  build(&graph, &params);
  /* The model borrows its options' bindings for its life. */
  static hgr_device_binding_t bindings[2];
  hgr_device_binding_t* binding = &bindings[spec == specs[0] ? 0 : 1];
  *binding = (hgr_device_binding_t){-1, spec};
  hgr_model_options_t options;
  hgr_model_options_init(&options);
  options.executor.bindings = binding;
  options.executor.binding_count = 1;
  options.executor.profiling = true;
  hgr_model_t* model = NULL;
  ASSERT_OK(hgr_model_create_graph(instance, graph, params, &options, &model));
  hgr_graph_release(graph);
  hgr_params_release(params);
  return model;
}

static void expect_close(const float* got, const float* want, size_t count, float tolerance, const char* what,
                         uint32_t chunk) {
  for (size_t e = 0; e < count; ++e)
    if (!(fabsf(got[e] - want[e]) <= tolerance))
      fail_msg("%s, chunk %u, element %zu: %.9g, expected %.9g (tolerance %g)", what, chunk, e, got[e], want[e],
               tolerance);
}

static hgr_model_input_t input_x(uint32_t chunk) {
  return (hgr_model_input_t){f32, 2, x_shape, &xs[(size_t)chunk * IN], IN * sizeof(float)};
}

/* The executor behind model's specialization for the chunks' shapes (a cache hit). */
static hgr_specialization_t* specialization_of(hgr_model_t* model) {
  static const float zeros[HIDDEN];
  hgr_model_input_t inputs[2] = {input_x(0), {f32, 2, state_shape, zeros, sizeof(zeros)}};
  hgr_specialization_t* specialization = NULL;
  ASSERT_OK(hgr_model_specialize(model, inputs, 2, &specialization));
  return specialization;
}

static size_t state_input(hgr_executor_t* executor) {
  size_t index = 0;
  ASSERT_OK(hgr_executor_input_index(executor, "state", &index));
  return index;
}

static hgr_io_traffic_t traffic(hgr_executor_t* executor, hgr_io_t io, const char* name) {
  size_t index = 0;
  if (io == HGR_INPUT) {
    ASSERT_OK(hgr_executor_input_index(executor, name, &index));
  } else {
    index = !strcmp(name, "y") ? 0 : 1;
  }
  hgr_io_traffic_t t;
  ASSERT_OK(hgr_executor_io_traffic(executor, io, index, &t));
  return t;
}

/* ---- the host round trip --------------------------------------------------------------- */

/* Every chunk's y and state (host_y, host_states), the state read to the host and
 * written back each chunk. */
static void host_round_trip(void) {
  hgr_model_t* model = model_on(specs[0]);
  float state[HIDDEN] = {0};
  for (uint32_t k = 0; k < chunks; ++k) {
    hgr_model_input_t inputs[2] = {input_x(k), {f32, 2, state_shape, state, sizeof(state)}};
    hgr_model_run_t* run = NULL;
    ASSERT_OK(hgr_model_run(model, inputs, 2, &run));
    ASSERT_OK(hgr_model_run_get_output(run, 0, &host_y[(size_t)k * HIDDEN], HIDDEN * sizeof(float)));
    ASSERT_OK(hgr_model_run_get_output(run, 1, state, sizeof(state)));
    memcpy(&host_states[(size_t)k * HIDDEN], state, sizeof(state));
    hgr_model_run_release(run);
  }
  for (uint32_t k = 0; k < chunks; ++k)
    expect_close(&host_y[(size_t)k * HIDDEN], &ref_y[(size_t)k * HIDDEN], HIDDEN, 1e-4f,
                 "the host round trip's y against the reference", k);
  hgr_specialization_t* specialization = specialization_of(model);
  hgr_executor_t* executor = hgr_specialization_executor(specialization);
  hgr_io_traffic_t in = traffic(executor, HGR_INPUT, "state"), out = traffic(executor, HGR_OUTPUT, "state_out");
  assert_int_equal(in.host_copies, chunks);
  assert_int_equal(out.host_copies, chunks);
  hgr_specialization_release(specialization);
  hgr_model_release(model);
}

/* ---- the chain on the device ------------------------------------------------------------- */

/* Releases a gate (a user event) after 30 s unless told it is no longer needed,
 * and says whether it had to. */
typedef struct watchdog_t {
  cl_event gate;
  atomic_int done, fired;
  pthread_t thread;
} watchdog_t;

static void* watch(void* arg) {
  watchdog_t* watchdog = arg;
  for (int tick = 0; tick < 3000 && !atomic_load(&watchdog->done); ++tick)
    nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
  if (!atomic_load(&watchdog->done)) {
    atomic_store(&watchdog->fired, 1);
    clSetUserEventStatus(watchdog->gate, CL_COMPLETE);
  }
  return NULL;
}

/* The first chunk's state: a buffer of the first model's device holding NaNs until
 * a write of zeros, held back by the gate (a user event), fills it; the write's
 * event is the buffer's ready event. A run that did not wait for it would read the
 * NaNs. */
typedef struct gate_t {
  hgr_device_buffer_t state;
  cl_event event;
  cl_command_queue queue;
  watchdog_t watchdog;
} gate_t;

static void gate_open(gate_t* gate) {
  memset(gate, 0, sizeof(*gate));
  size_t index = 0;
  hgr_opencl_device_t device;
  ASSERT_OK(hgr_instance_find_device(instance, specs[0], &index));
  ASSERT_OK(hgr_instance_device_opencl(instance, index, &device));
  cl_int error = CL_SUCCESS;
  static const float zeros[HIDDEN];
  float nans[HIDDEN];
  for (int e = 0; e < HIDDEN; ++e) nans[e] = NAN;
  cl_mem mem = clCreateBuffer(device.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof(nans), nans, &error);
  assert_int_equal(error, CL_SUCCESS);
  gate->event = clCreateUserEvent(device.context, &error);
  assert_int_equal(error, CL_SUCCESS);
  gate->queue = clCreateCommandQueue(device.context, device.device, 0, &error);
  assert_int_equal(error, CL_SUCCESS);
  cl_event filled = NULL;
  assert_int_equal(clEnqueueWriteBuffer(gate->queue, mem, CL_FALSE, 0, sizeof(zeros), zeros, 1, &gate->event, &filled),
                   CL_SUCCESS);
  assert_int_equal(clFlush(gate->queue), CL_SUCCESS);
  gate->state = (hgr_device_buffer_t){mem, sizeof(zeros), index, device.device, device.context, filled};
  gate->watchdog.gate = gate->event;
  assert_int_equal(pthread_create(&gate->watchdog.thread, NULL, watch, &gate->watchdog), 0);
}

/* Releases the gate; fails when the watchdog had to. */
static void gate_release(gate_t* gate) {
  atomic_store(&gate->watchdog.done, 1);
  assert_int_equal(pthread_join(gate->watchdog.thread, NULL), 0);
  if (atomic_load(&gate->watchdog.fired))
    fail_msg("starting the chained runs waited on the host for the first chunk's state (the watchdog released it)");
  assert_int_equal(clSetUserEventStatus(gate->event, CL_COMPLETE), CL_SUCCESS);
}

static void gate_close(gate_t* gate) {
  assert_int_equal(clFinish(gate->queue), CL_SUCCESS);
  clReleaseCommandQueue(gate->queue);
  hgr_device_buffer_release(&gate->state);
  clReleaseEvent(gate->event);
}

/* Chunk k's run, its state the previous run's state output (or the gate's, or zeros
 * from the host for the first chunk), on models[k % count]. */
static hgr_model_run_t* start_chunk(hgr_model_t* const* models, size_t count, uint32_t k, hgr_model_run_t* previous,
                                    const hgr_device_buffer_t* first_state) {
  static const float zeros[HIDDEN];
  hgr_device_buffer_t state = {0};
  hgr_model_input_t inputs[2] = {input_x(k), {f32, 2, state_shape, zeros, sizeof(zeros)}};
  const hgr_device_buffer_t* buffers[2] = {NULL, first_state};
  if (previous) {
    ASSERT_OK(hgr_model_run_output_buffer(previous, 1, &state));
    inputs[1] = (hgr_model_input_t){f32, 2, state_shape, NULL, 0};
    buffers[1] = &state;
  }
  hgr_model_run_t* run = NULL;
  ASSERT_OK(hgr_model_run_with_buffers(models[k % count], inputs, 2, buffers, &run));
  hgr_device_buffer_release(&state); /* the binding keeps what it needs */
  return run;
}

static void check_y(hgr_model_run_t* run, uint32_t k) {
  float y[HIDDEN];
  ASSERT_OK(hgr_model_run_get_output(run, 0, y, sizeof(y)));
  expect_close(y, &host_y[(size_t)k * HIDDEN], HIDDEN, 1e-5f, "y against the host round trip", k);
  expect_close(y, &ref_y[(size_t)k * HIDDEN], HIDDEN, 1e-4f, "y against the reference", k);
}

static void check_state(hgr_model_run_t* run, uint32_t k) {
  float state[HIDDEN];
  ASSERT_OK(hgr_model_run_get_output(run, 1, state, sizeof(state)));
  expect_close(state, &host_states[(size_t)k * HIDDEN], HIDDEN, 1e-5f, "the state against the host round trip", k);
  expect_close(state, &ref_states[(size_t)k * HIDDEN], HIDDEN, 1e-4f, "the state against the reference", k);
}

/* Whether a spec names a host-driven device (Oclgrind), where exporting an output
 * drives the queue on the host. */
static bool host_driven(const char* spec) { return strstr(spec, "oclgrind") != NULL; }

/* The state checks after a chain: what crossed to the host, per model. */
static void check_traffic(hgr_model_t* const* models, size_t count, bool gated) {
  for (size_t m = 0; m < count; ++m) {
    hgr_specialization_t* specialization = specialization_of(models[m]);
    hgr_executor_t* executor = hgr_specialization_executor(specialization);
    ASSERT_OK(hgr_executor_wait(executor));
    uint64_t runs = chunks / count + (m < chunks % count);
    hgr_io_traffic_t x = traffic(executor, HGR_INPUT, "x");
    hgr_io_traffic_t in = traffic(executor, HGR_INPUT, "state");
    hgr_io_traffic_t out = traffic(executor, HGR_OUTPUT, "state_out");
    print_message("%s: %llu runs; state input: %llu host copies, %llu runs from device buffers (%llu waited on the "
                  "device, %llu copied on the device); state output: %llu host copies, %llu device buffers handed "
                  "out, %llu device copies; x: %llu host copies\n",
                  specs[m], (unsigned long long)runs, (unsigned long long)in.host_copies,
                  (unsigned long long)in.device_buffers, (unsigned long long)in.device_waits,
                  (unsigned long long)in.device_copies, (unsigned long long)out.host_copies,
                  (unsigned long long)out.device_buffers, (unsigned long long)out.device_copies,
                  (unsigned long long)x.host_copies);
    assert_int_equal(x.host_copies, runs);
    /* The state output went to the host once: the final read, on the last chunk's model. */
    assert_int_equal(out.host_copies, m == (chunks - 1) % count ? 1 : 0);
    /* Every chunk's state but the last went on as a device buffer. */
    uint64_t handed_on = runs - (m == (chunks - 1) % count ? 1 : 0);
    assert_int_equal(out.device_buffers, handed_on);
    /* The state input came from the host only for the first chunk's zeros (none when
     * gated); within a context every run took it from a device buffer without a
     * copy, and the first run after each binding waited for its event. */
    bool first = m == 0;
    uint64_t from_device = runs - (first && !gated ? 1 : 0);
    assert_int_equal(in.device_buffers, from_device);
    assert_int_equal(in.device_waits, from_device);
    if (count == 1) {
      assert_int_equal(in.host_copies, gated ? 0 : 1);
      assert_int_equal(hgr_executor_binding_kind(executor, HGR_INPUT, state_input(executor)), HGR_BINDING_BUFFER);
    } else {
      /* Across contexts each state is staged through the host (read, write), ordered
       * by a bridge; the gated first chunk's state is in the first model's context. */
      uint64_t staged = first ? runs - 1 : runs;
      assert_int_equal(in.host_copies, 2 * staged + (first && !gated ? 1 : 0));
      assert_int_equal(hgr_executor_binding_kind(executor, HGR_INPUT, state_input(executor)),
                       HGR_BINDING_STAGED_COPY);
    }
    /* The last run's profile: its nodes' kernels only, no transfer of the state. */
    size_t commands = hgr_executor_command_count(executor);
    assert_true(commands > 0);
    for (size_t c = 0; c < commands; ++c) {
      hgr_command_profile_t profile;
      ASSERT_OK(hgr_executor_command_profile(executor, c, &profile));
      if (profile.kind != HGR_COMMAND_KERNEL)
        fail_msg("%s: command %zu of the last run is a %s, not a kernel", specs[m], c,
                 hgr_command_kind_name(profile.kind));
    }
    hgr_specialization_release(specialization);
  }
}

/* The chain over chunks (or, gated, over the first GATED_CHUNKS behind the gate)
 * on the models of the specs, chunk k on model k % count. */
static void chain(bool gated) {
  hgr_fault_shim_mark_t before = hgr_fault_shim_mark();
  hgr_model_t* models[2] = {model_on(specs[0]), spec_count > 1 ? model_on(specs[1]) : NULL};
  size_t count = spec_count;
  uint32_t all_chunks = chunks;
  if (!gated) {
    hgr_model_run_t* previous = NULL;
    for (uint32_t k = 0; k < chunks; ++k) {
      hgr_model_run_t* run = start_chunk(models, count, k, previous, NULL);
      /* The previous chunk's y, read while this chunk is in flight behind it. */
      if (previous) check_y(previous, k - 1);
      hgr_model_run_release(previous);
      previous = run;
    }
    check_y(previous, chunks - 1);
    check_state(previous, chunks - 1);
    hgr_model_run_release(previous);
  } else {
    gate_t gate;
    gate_open(&gate);
    chunks = GATED_CHUNKS < chunks ? GATED_CHUNKS : chunks;
    hgr_model_run_t* runs[GATED_CHUNKS] = {0};
    /* Every chunk is started while the first one's state is held back. */
    for (uint32_t k = 0; k < chunks; ++k)
      runs[k] = start_chunk(models, count, k, k ? runs[k - 1] : NULL, k ? NULL : &gate.state);
    gate_release(&gate);
    for (uint32_t k = 0; k < chunks; ++k) check_y(runs[k], k);
    check_state(runs[chunks - 1], chunks - 1);
    for (uint32_t k = 0; k < chunks; ++k) hgr_model_run_release(runs[k]);
    gate_close(&gate);
  }
  check_traffic(models, count, gated);
  chunks = all_chunks;
  hgr_model_release(models[0]);
  hgr_model_release(models[1]);
  ASSERT_OPENCL_BALANCED(&before);
}

/* First: what the chains are compared with. */
static void host_round_trip_matches_the_reference(void** state) {
  (void)state;
  host_round_trip();
}

static void state_chained_on_the_device_matches_the_host_round_trip(void** state) {
  (void)state;
  chain(false);
}

static void chained_runs_are_ordered_by_events_not_host_waits(void** state) {
  (void)state;
  for (size_t m = 0; m < spec_count; ++m)
    if (host_driven(specs[m])) skip(); /* exporting an output drives Oclgrind's queue on the host */
  chain(true);
}

/* What hgr_executor_bind_device_buffer and the model refuse. */
static void device_values_are_checked(void** state) {
  (void)state;
  hgr_fault_shim_mark_t before = hgr_fault_shim_mark();
  hgr_model_t* model = model_on(specs[0]);
  static const float zeros[HIDDEN];
  hgr_model_input_t inputs[2] = {input_x(0), {f32, 2, state_shape, zeros, sizeof(zeros)}};
  hgr_model_run_t* run = NULL;
  ASSERT_OK(hgr_model_run(model, inputs, 2, &run));
  hgr_device_buffer_t y;
  ASSERT_OK(hgr_model_run_output_buffer(run, 0, &y));
  /* y has the state's size: bound to x, whose size differs, it is refused. */
  hgr_specialization_t* specialization = specialization_of(model);
  hgr_executor_t* executor = hgr_specialization_executor(specialization);
  ASSERT_STATUS(hgr_executor_bind_device_buffer(executor, 0, &y), HGR_STATUS_INVALID_ARGUMENT, "input 0 'x' has 64 bytes",
                "holds 128", NULL);
  ASSERT_STATUS(hgr_executor_bind_device_buffer(executor, 0, NULL), HGR_STATUS_INVALID_ARGUMENT, "buffer is NULL", NULL);
  hgr_model_input_t wrong[2] = {{f32, 2, x_shape, NULL, 0}, inputs[1]};
  const hgr_device_buffer_t* buffers[2] = {&y, NULL};
  hgr_model_run_t* refused = NULL;
  ASSERT_STATUS(hgr_model_run_with_buffers(model, wrong, 2, buffers, &refused), HGR_STATUS_INVALID_ARGUMENT,
                "input 'x': a device buffer of 128 bytes given for a shape of 64 bytes", NULL);
  /* A ready event of another context than the buffer's. */
  if (spec_count > 1) {
    size_t index = 0;
    hgr_opencl_device_t other;
    ASSERT_OK(hgr_instance_find_device(instance, specs[1], &index));
    ASSERT_OK(hgr_instance_device_opencl(instance, index, &other));
    if (other.context != y.context) {
      cl_int error = CL_SUCCESS;
      hgr_device_buffer_t mixed = y;
      mixed.ready = clCreateUserEvent(other.context, &error);
      assert_int_equal(error, CL_SUCCESS);
      ASSERT_STATUS(hgr_executor_bind_device_buffer(executor, state_input(executor), &mixed),
                    HGR_STATUS_INVALID_ARGUMENT,
                    "ready event belongs to another context", NULL);
      clSetUserEventStatus(mixed.ready, CL_COMPLETE);
      clReleaseEvent(mixed.ready);
    }
  }
  assert_null(refused);
  /* Bound and then given as host data again: the model ends the binding. */
  size_t state_index = state_input(executor);
  ASSERT_OK(hgr_executor_bind_device_buffer(executor, state_index, &y));
  assert_int_equal(hgr_executor_binding_kind(executor, HGR_INPUT, state_index), HGR_BINDING_BUFFER);
  hgr_model_run_t* again = NULL;
  ASSERT_OK(hgr_model_run(model, inputs, 2, &again));
  assert_int_equal(hgr_executor_binding_kind(executor, HGR_INPUT, state_index), HGR_BINDING_NONE);
  hgr_device_buffer_release(&y);
  hgr_model_run_release(again);
  hgr_model_run_release(run);
  hgr_specialization_release(specialization);
  hgr_model_release(model);
  ASSERT_OPENCL_BALANCED(&before);
}

/* x [4] (storage 0) -> relu -> r [4] (storage 1) -> concatenate(r, r) -> c [8],
 * which reuses storage 0: x's storage is larger than x. */
static const char larger_storage_json[] =
    "{\"nodes\":["
    "{\"op\":\"null\",\"name\":\"x\",\"inputs\":[]},"
    "{\"op\":\"tvm_op\",\"name\":\"r\",\"attrs\":{\"func_name\":\"relu\",\"num_inputs\":\"1\","
    "\"num_outputs\":\"1\",\"flatten_data\":\"0\"},\"inputs\":[[0,0,0]]},"
    "{\"op\":\"tvm_op\",\"name\":\"c\",\"attrs\":{\"func_name\":\"concatenate\",\"num_inputs\":\"2\","
    "\"num_outputs\":\"1\",\"flatten_data\":\"0\",\"axis\":\"0\"},\"inputs\":[[1,0,0],[1,0,0]]}],"
    "\"arg_nodes\":[0],\"node_row_ptr\":[0,1,2,3],\"heads\":[[2,0,0]],"
    "\"attrs\":{\"storage_id\":[\"list_int\",[0,1,0]],"
    "\"shape\":[\"list_shape\",[[4],[4],[8]]],"
    "\"dltype\":[\"list_str\",[\"float32\",\"float32\",\"float32\"]]}}";

/* A device buffer of the input's bytes but smaller than its storage (which the
 * plan shares with a larger entry) is copied into the storage on the device each
 * run, after its ready event the first time. */
static void a_buffer_smaller_than_its_storage_is_copied_on_the_device(void** state) {
  (void)state;
  hgr_fault_shim_mark_t before = hgr_fault_shim_mark();
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_graph_load_json(larger_storage_json, strlen(larger_storage_json), &graph));
  hgr_device_binding_t binding = {-1, specs[0]};
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = &binding;
  options.binding_count = 1;
  hgr_executor_t* producer = NULL;
  hgr_executor_t* consumer = NULL;
  ASSERT_OK(hgr_executor_create(instance, graph, &options, &producer));
  ASSERT_OK(hgr_executor_create(instance, graph, &options, &consumer));
  size_t index = 0;
  hgr_opencl_device_t device;
  ASSERT_OK(hgr_instance_find_device(instance, specs[0], &index));
  ASSERT_OK(hgr_instance_device_opencl(instance, index, &device));
  cl_int error = CL_SUCCESS;
  cl_command_queue queue = clCreateCommandQueue(device.context, device.device, 0, &error);
  assert_int_equal(error, CL_SUCCESS);
  const float x[4] = {-1, 2, -3, 4};
  float got[8];
  ASSERT_OK(hgr_executor_set_input(producer, 0, x, sizeof(x)));
  for (int run = 0; run < 3; ++run) {
    /* The producer's output c holds relu(x) twice; the caller's own command copies
     * its first half into a 16-byte buffer, which the consumer takes as x. */
    hgr_fence_t* fence = NULL;
    ASSERT_OK(hgr_executor_run_async(producer, &fence));
    hgr_device_buffer_t c;
    ASSERT_OK(hgr_fence_output_buffer(fence, 0, &c));
    cl_mem half = clCreateBuffer(device.context, CL_MEM_READ_WRITE, sizeof(x), NULL, &error);
    assert_int_equal(error, CL_SUCCESS);
    cl_event copied = NULL;
    assert_int_equal(clEnqueueCopyBuffer(queue, c.mem, half, 0, 0, sizeof(x), 1, &c.ready, &copied), CL_SUCCESS);
    assert_int_equal(clFlush(queue), CL_SUCCESS);
    hgr_device_buffer_t value = {half, sizeof(x), index, device.device, device.context, copied};
    ASSERT_OK(hgr_executor_bind_device_buffer(consumer, 0, &value));
    assert_int_equal(hgr_executor_binding_kind(consumer, HGR_INPUT, 0), HGR_BINDING_DEVICE_COPY);
    hgr_device_buffer_release(&value);
    hgr_device_buffer_release(&c);
    hgr_fence_release(fence);
    ASSERT_OK(hgr_executor_run(consumer));
    ASSERT_OK(hgr_executor_get_output(consumer, 0, got, sizeof(got)));
    for (int e = 0; e < 8; ++e)
      if (got[e] != (x[e % 4] > 0 ? x[e % 4] : 0)) fail_msg("run %d, element %d: %g", run, e, got[e]);
  }
  hgr_io_traffic_t traffic;
  ASSERT_OK(hgr_executor_io_traffic(consumer, HGR_INPUT, 0, &traffic));
  assert_int_equal(traffic.device_copies, 3);
  assert_int_equal(traffic.device_waits, 3);
  assert_int_equal(traffic.host_copies, 0);
  assert_int_equal(clFinish(queue), CL_SUCCESS);
  clReleaseCommandQueue(queue);
  hgr_executor_release(consumer);
  hgr_executor_release(producer);
  hgr_graph_release(graph);
  ASSERT_OPENCL_BALANCED(&before);
}

int main(int argc, char** argv) {
  int arg = 1;
  while (arg < argc && spec_count < 2 && strchr(argv[arg], ':')) specs[spec_count++] = argv[arg++];
  if (!spec_count || arg >= argc) {
    fprintf(stderr, "usage: %s SPEC [SPEC2] CHUNKS [context-per-device]\n", argv[0]);
    return 2;
  }
  chunks = (uint32_t)strtoul(argv[arg++], NULL, 10);
  if (chunks < 2) chunks = 2;
  hgr_instance_options_t options;
  hgr_instance_options_init(&options);
  options.context_per_device = arg < argc && !strcmp(argv[arg], "context-per-device");
  ASSERT_OK(hgr_instance_create(&options, &instance));
  hgr_test_require_devices(instance, specs, spec_count);
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 36);
  for (size_t e = 0; e < HIDDEN * IN; ++e) weight_w[e] = hgr_test_rng_float(&rng, -0.3f, 0.3f);
  for (size_t e = 0; e < HIDDEN * HIDDEN; ++e) weight_u[e] = hgr_test_rng_float(&rng, -0.25f, 0.25f);
  xs = malloc((size_t)chunks * IN * sizeof(float));
  ref_y = malloc((size_t)chunks * HIDDEN * sizeof(float));
  ref_states = malloc((size_t)chunks * HIDDEN * sizeof(float));
  host_y = malloc((size_t)chunks * HIDDEN * sizeof(float));
  host_states = malloc((size_t)chunks * HIDDEN * sizeof(float));
  for (size_t e = 0; e < (size_t)chunks * IN; ++e) xs[e] = hgr_test_rng_float(&rng, -2, 2);
  reference();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(host_round_trip_matches_the_reference),
      cmocka_unit_test(state_chained_on_the_device_matches_the_host_round_trip),
      cmocka_unit_test(chained_runs_are_ordered_by_events_not_host_waits),
      cmocka_unit_test(device_values_are_checked),
      cmocka_unit_test(a_buffer_smaller_than_its_storage_is_copied_on_the_device),
  };
  char name[128];
  snprintf(name, sizeof(name), "%s%s%s (%u chunks)", specs[0], spec_count > 1 ? " + " : "",
           spec_count > 1 ? specs[1] : "", chunks);
  int failed = cmocka_run_group_tests_name(name, tests, NULL, NULL);
  free(xs);
  free(ref_y);
  free(ref_states);
  free(host_y);
  free(host_states);
  hgr_instance_release(instance);
  return failed ? failed : hgr_fault_shim_exit_status(argv[0]);
}
