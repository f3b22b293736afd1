/* OpenCL fault injection for tests: a wrapper around every OpenCL function the
 * library calls, linked into a test program with `-Wl,--wrap=<function>` for each
 * (tests/CMakeLists.txt, hgr_link_fault_shim()). The linker sends the library's calls to
 * __wrap_<function> here and __real_<function> to the ICD loader.
 *
 * Link-time wrapping rather than an LD_PRELOAD shim: the tests link the static
 * library, so every call hgr makes is an undefined reference the linker can
 * redirect; it works the same in sanitizer builds (no preload order to get right
 * against the ASan runtime) and sees only hgr's own calls, never the drivers' calls
 * between their own entry points.
 *
 * Environment:
 *   HGR_FAULT_AT=N       the N-th injectable call (from 1) fails without reaching the
 *                        driver; 0 or unset: nothing fails
 *   HGR_FAULT_ERROR=E    the error it returns, by name (CL_OUT_OF_RESOURCES) or
 *                        number; by default one that the function can return for
 *                        lack of resources (see default_error)
 *   HGR_FAULT_SITE=F@0xOFFSET  the first injectable call of function F from the call
 *                        site at OFFSET (a return address, as HGR_FAULT_SITES writes
 *                        it) fails; HGR_FAULT_NTH=K makes it the K-th call from
 *                        there. With HGR_FAULT_AT as well, both fail: a cleanup path
 *                        that only a first failure reaches meets a second one
 *   HGR_FAULT_SITES=path at exit, every call site seen: "function offset calls
 *                        injectable_calls" per line, the offset from the executable's
 *                        load address (for addr2line)
 *
 * Injectable calls are all but retains and releases (nothing can be done about a
 * failed release, and hgr's release paths return nothing by design) and calls made
 * from inside event callbacks (on driver threads, where nobody can be told). They are
 * still counted. Calls are numbered in the order they happen, across threads: a
 * program built on a worker thread or a poll loop that runs more or fewer times
 * shifts the numbers a little from run to run.
 *
 * Objects are counted per kind (context, queue, buffer, program, kernel, event):
 * created (by a create call or an enqueue that returns an event), retained and
 * released. At exit one line goes to stderr:
 *   hgr-fault-shim: calls=C injectable=I fault_at=N injected=FUNCTION@0xOFFSET[,...]
 *   error=NAME[,...] balance=ok|KIND:+D,... pending_callbacks=P events_left_to_driver=L
 * (injected=none error=none when nothing failed). L counts the events a test
 * accepted as left to the driver after a device failure (fault_shim.h); the
 * balance does not count them.
 * pending_callbacks counts callbacks registered and never run: their events never
 * completed.
 *
 * Test programs (fault_shim.h) also read the balance while they run, and make a named
 * kernel fail on the device: its enqueues wait on a user event the shim sets to a
 * negative status (see "kernel failures" below). With no HGR_FAULT_* variable set
 * and no kernel named, the shim only counts. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fault_shim.h"
#include "internal.h"

/* OpenCL 2.1 timers (runtime/exec/profile.c reaches them on 2.1 devices). */
#if CL_TARGET_OPENCL_VERSION < 210
extern CL_API_ENTRY cl_int CL_API_CALL clGetDeviceAndHostTimer(cl_device_id device, cl_ulong* device_timestamp,
                                                               cl_ulong* host_timestamp);
extern CL_API_ENTRY cl_int CL_API_CALL clGetHostTimer(cl_device_id device, cl_ulong* host_timestamp);
#endif

typedef enum kind_t { KIND_CONTEXT, KIND_QUEUE, KIND_MEM, KIND_PROGRAM, KIND_KERNEL, KIND_EVENT, KIND_COUNT } kind_t;
static const char* const kind_names[KIND_COUNT] = {"context", "queue", "buffer", "program", "kernel", "event"};

static atomic_long created[KIND_COUNT], retained[KIND_COUNT], released[KIND_COUNT];
static atomic_ulong total_calls, injectable_calls;
static atomic_long pending_callbacks;
/* Callbacks running now, on driver threads. */
static atomic_long running_callbacks;
/* Events that hgr_executor_release left to the driver after a device failure, which
 * the test accepted (hgr_fault_shim_balanced_after_failure): not counted as live. */
static atomic_long events_left_to_driver;
static unsigned long fault_at;
static char fault_site_function[64];
static uintptr_t fault_site_address; /* absolute */
static unsigned long fault_site_nth = 1;
static atomic_ulong fault_site_calls;
static cl_int fault_error; /* 0: the function's default */
static _Thread_local bool in_callback;

static struct {
  const char* function;
  uintptr_t offset;
  cl_int error;
} injected[2];
static atomic_int injected_count;

/* ---- call sites ------------------------------------------------------------------- */

#define SITE_CAPACITY 4096
typedef struct site_t {
  const char* function;
  void* caller;
  unsigned long count, injectable;
} site_t;
static site_t sites[SITE_CAPACITY];
static size_t site_count;
static pthread_mutex_t site_mutex = PTHREAD_MUTEX_INITIALIZER;

static void record_site(const char* function, void* caller, bool injectable) {
  pthread_mutex_lock(&site_mutex);
  size_t slot = ((uintptr_t)caller >> 2) % SITE_CAPACITY;
  for (size_t probe = 0; probe < SITE_CAPACITY; ++probe, slot = (slot + 1) % SITE_CAPACITY) {
    site_t* site = &sites[slot];
    if (!site->function) {
      *site = (site_t){function, caller, 1, injectable};
      site_count++;
      break;
    }
    if (site->caller == caller && site->function == function) {
      site->count++;
      site->injectable += injectable;
      break;
    }
  }
  pthread_mutex_unlock(&site_mutex);
}

/* The caller's offset in its module, as addr2line takes it for a PIE. */
static uintptr_t module_offset(void* caller) {
  Dl_info info;
  if (dladdr(caller, &info) && info.dli_fbase) return (uintptr_t)caller - (uintptr_t)info.dli_fbase;
  return (uintptr_t)caller;
}

/* ---- injection --------------------------------------------------------------------- */

static cl_int default_error(const char* function) {
  if (!strcmp(function, "clGetPlatformIDs") || !strcmp(function, "clGetPlatformInfo")) return CL_OUT_OF_HOST_MEMORY;
  if (!strcmp(function, "clBuildProgram")) return CL_BUILD_PROGRAM_FAILURE;
  if (!strcmp(function, "clCreateProgramWithBinary")) return CL_INVALID_BINARY;
  if (!strcmp(function, "clCreateBuffer")) return CL_MEM_OBJECT_ALLOCATION_FAILURE;
  if (!strcmp(function, "clEnqueueMapBuffer")) return CL_MAP_FAILURE;
  return CL_OUT_OF_RESOURCES;
}

/* Counts a call; true with *out_error when this one is to fail. */
static bool inject(const char* function, void* caller, cl_int* out_error) {
  atomic_fetch_add(&total_calls, 1);
  record_site(function, caller, !in_callback);
  if (in_callback) return false;
  unsigned long n = atomic_fetch_add(&injectable_calls, 1) + 1;
  bool at_site = fault_site_address && (uintptr_t)caller == fault_site_address &&
                 !strcmp(function, fault_site_function) && atomic_fetch_add(&fault_site_calls, 1) + 1 == fault_site_nth;
  if (!at_site && (!fault_at || n != fault_at)) return false;
  cl_int error = fault_error ? fault_error : default_error(function);
  int slot = atomic_fetch_add(&injected_count, 1);
  if (slot < 2) {
    injected[slot].function = function;
    injected[slot].offset = module_offset(caller);
    injected[slot].error = error;
  }
  fprintf(stderr, "hgr-fault-shim: failing call %lu: %s@0x%llx with %s\n", n, function,
          (unsigned long long)module_offset(caller), hgr_opencl_error_name(error));
  *out_error = error;
  return true;
}

static void count_only(const char* function, void* caller) {
  atomic_fetch_add(&total_calls, 1);
  record_site(function, caller, false);
}

static cl_int parse_error(const char* text) {
  char* end = NULL;
  long value = strtol(text, &end, 10);
  if (end != text && !*end) return (cl_int)value;
  for (cl_int code = -1; code > -2000; --code)
    if (!strcmp(hgr_opencl_error_name(code), text)) return code;
  fprintf(stderr, "hgr-fault-shim: unknown HGR_FAULT_ERROR '%s'; using each function's default\n", text);
  return 0;
}

__attribute__((constructor)) static void shim_start(void) {
  const char* at = getenv("HGR_FAULT_AT");
  if (at && *at) fault_at = strtoul(at, NULL, 10);
  const char* site = getenv("HGR_FAULT_SITE");
  const char* at_sign = site ? strchr(site, '@') : NULL;
  if (at_sign && (size_t)(at_sign - site) < sizeof(fault_site_function)) {
    memcpy(fault_site_function, site, (size_t)(at_sign - site));
    Dl_info info; /* this executable's load address */
    if (dladdr((void*)&shim_start, &info) && info.dli_fbase)
      fault_site_address = (uintptr_t)info.dli_fbase + (uintptr_t)strtoull(at_sign + 1, NULL, 16);
    const char* nth = getenv("HGR_FAULT_NTH");
    if (nth && *nth) fault_site_nth = strtoul(nth, NULL, 10);
  }
  const char* error = getenv("HGR_FAULT_ERROR");
  if (error && *error) fault_error = parse_error(error);
}

__attribute__((destructor)) static void shim_report(void) {
  const char* path = getenv("HGR_FAULT_SITES");
  if (path && *path) {
    FILE* file = fopen(path, "w");
    if (file) {
      pthread_mutex_lock(&site_mutex);
      for (size_t s = 0; s < SITE_CAPACITY; ++s)
        if (sites[s].function)
          fprintf(file, "%s 0x%llx %lu %lu\n", sites[s].function,
                  (unsigned long long)module_offset(sites[s].caller), sites[s].count, sites[s].injectable);
      pthread_mutex_unlock(&site_mutex);
      fclose(file);
    }
  }
  char balance[256] = "";
  size_t used = 0;
  for (int k = 0; k < KIND_COUNT; ++k) {
    long live = atomic_load(&created[k]) + atomic_load(&retained[k]) - atomic_load(&released[k]);
    if (k == KIND_EVENT) live -= atomic_load(&events_left_to_driver);
    if (live && used < sizeof(balance))
      used += (size_t)snprintf(balance + used, sizeof(balance) - used, "%s%s:%+ld", used ? "," : "", kind_names[k], live);
  }
  char where[256] = "none", errors[160] = "none";
  for (int i = 0; i < atomic_load(&injected_count) && i < 2; ++i) {
    size_t w = i ? strlen(where) : 0, e = i ? strlen(errors) : 0;
    snprintf(where + w, sizeof(where) - w, "%s%s@0x%llx", i ? "," : "", injected[i].function,
             (unsigned long long)injected[i].offset);
    snprintf(errors + e, sizeof(errors) - e, "%s%s", i ? "," : "", hgr_opencl_error_name(injected[i].error));
  }
  fprintf(stderr, "hgr-fault-shim: calls=%lu injectable=%lu fault_at=%lu injected=%s error=%s balance=%s "
          "pending_callbacks=%ld events_left_to_driver=%ld\n",
          atomic_load(&total_calls), atomic_load(&injectable_calls), fault_at, where,
          errors, used ? balance : "ok",
          atomic_load(&pending_callbacks), atomic_load(&events_left_to_driver));
}

/* ---- balance, for the tests (fault_shim.h) ----------------------------------------- */

_Static_assert(sizeof(((hgr_fault_shim_mark_t*)0)->live) / sizeof(long) == KIND_COUNT, "one count per kind");

hgr_fault_shim_mark_t hgr_fault_shim_mark(void) {
  /* A callback that sets a user event releases its own reference to it just after:
   * the command waiting on the event may finish, and the executor be released, in
   * between. Counting then would see that reference as a leak, so the count waits
   * for running callbacks to return (at most 2 s). */
  for (int polls = 0; polls < 20000 && atomic_load(&running_callbacks); ++polls) {
    struct timespec pause = {0, 100000};
    nanosleep(&pause, NULL);
  }
  hgr_fault_shim_mark_t mark;
  for (int k = 0; k < KIND_COUNT; ++k)
    mark.live[k] = atomic_load(&created[k]) + atomic_load(&retained[k]) - atomic_load(&released[k]);
  mark.live[KIND_EVENT] -= atomic_load(&events_left_to_driver);
  return mark;
}

/* Compares the live objects with mark (NULL: none); writes the differences of the
 * kinds checked (contexts only without a mark: the instance makes them on first use
 * and keeps them until its release) and returns whether there were none. */
static bool compare(const hgr_fault_shim_mark_t* mark, bool events, char* message, size_t size,
                    long* out_event_difference) {
  hgr_fault_shim_mark_t now = hgr_fault_shim_mark();
  size_t used = 0;
  if (size) message[0] = '\0';
  for (int k = 0; k < KIND_COUNT; ++k) {
    long difference = now.live[k] - (mark ? mark->live[k] : 0);
    if (k == KIND_EVENT) *out_event_difference = difference;
    if ((k == KIND_CONTEXT && mark) || (k == KIND_EVENT && !events)) continue;
    if (difference && used < size)
      used += (size_t)snprintf(message + used, size - used, "%s%s:%+ld", used ? "," : "", kind_names[k], difference);
  }
  if (used && used < size)
    snprintf(message + used, size - used, " live objects %s", mark ? "more than at the mark" : "at the end");
  return used == 0;
}

bool hgr_fault_shim_balanced_since(const hgr_fault_shim_mark_t* mark, char* message, size_t size) {
  long events = 0;
  return compare(mark, true, message, size, &events);
}

bool hgr_fault_shim_balanced_after_failure(const hgr_fault_shim_mark_t* mark, char* message, size_t size) {
  long events = 0;
  if (!compare(mark, false, message, size, &events)) return false;
  if (events < 0) {
    snprintf(message, size, "event:%+ld live objects fewer than at the mark", events);
    return false;
  }
  if (events) {
    atomic_fetch_add(&events_left_to_driver, events);
    fprintf(stderr, "hgr-fault-shim: %ld events left to the driver after the device failure\n", events);
  }
  return true;
}

int hgr_fault_shim_exit_status(const char* program) {
  char message[256];
  if (hgr_fault_shim_balanced_since(NULL, message, sizeof(message))) return 0;
  fprintf(stderr, "%s: OpenCL objects leaked: %s\n", program, message);
  return 1;
}

/* ---- kernel failures --------------------------------------------------------------- */

/* What hgr's executor did for its tests before it lost its hook: a user event in the
 * enqueue's wait list, set to a negative status once the command is enqueued, fails
 * the command on the device (OpenCL 1.2, 5.10: a command whose wait list holds an
 * event that terminated abnormally terminates too), and with it every command that
 * waits on it. The user events live until hgr_fault_shim_release_failed_events. */
cl_event __real_clCreateUserEvent(cl_context context, cl_int* errcode_ret);
cl_int __real_clSetUserEventStatus(cl_event event, cl_int status);
cl_int __real_clReleaseEvent(cl_event event);
cl_int __real_clEnqueueNDRangeKernel(cl_command_queue queue, cl_kernel kernel, cl_uint work_dim, const size_t* offset,
                                     const size_t* global, const size_t* local, cl_uint num_events,
                                     const cl_event* wait_list, cl_event* event);
cl_int __real_clEnqueueMarkerWithWaitList(cl_command_queue queue, cl_uint num_events, const cl_event* wait_list,
                                          cl_event* event);
cl_int __real_clWaitForEvents(cl_uint count, const cl_event* events);
cl_int __real_clFlush(cl_command_queue queue);
cl_int __real_clGetEventInfo(cl_event event, cl_event_info param, size_t size, void* value, size_t* size_ret);
cl_int __real_clGetDeviceInfo(cl_device_id device, cl_device_info param, size_t size, void* value, size_t* size_ret);
cl_int __real_clGetPlatformInfo(cl_platform_id platform, cl_platform_info param, size_t size, void* value,
                                size_t* size_ret);

static pthread_mutex_t fail_mutex = PTHREAD_MUTEX_INITIALIZER;
static char fail_kernel_name[128]; /* "": none */
static cl_int fail_kernel_status;
static cl_event* failed_events;
static size_t failed_event_count, failed_event_capacity;
static atomic_ulong failed_kernel_count;

void hgr_fault_shim_fail_kernel(const char* kernel_name, cl_int status) {
  pthread_mutex_lock(&fail_mutex);
  snprintf(fail_kernel_name, sizeof(fail_kernel_name), "%s", kernel_name ? kernel_name : "");
  fail_kernel_status = status;
  pthread_mutex_unlock(&fail_mutex);
}

unsigned long hgr_fault_shim_failed_kernel_count(void) { return atomic_load(&failed_kernel_count); }

void hgr_fault_shim_release_failed_events(void) {
  pthread_mutex_lock(&fail_mutex);
  for (size_t e = 0; e < failed_event_count; ++e) __real_clReleaseEvent(failed_events[e]);
  free(failed_events);
  failed_events = NULL;
  failed_event_count = failed_event_capacity = 0;
  pthread_mutex_unlock(&fail_mutex);
}

cl_int __real_clGetKernelInfo(cl_kernel kernel, cl_kernel_info param, size_t size, void* value, size_t* size_ret);

/* The status to fail this kernel's enqueue with, or 0 when it is not the one named.
 * The driver's clGetKernelInfo: the shim's own query is no call to count or fail. */
static cl_int kernel_failure(cl_kernel kernel) {
  pthread_mutex_lock(&fail_mutex);
  cl_int status = fail_kernel_status;
  bool armed = fail_kernel_name[0] != '\0';
  char wanted[sizeof(fail_kernel_name)];
  memcpy(wanted, fail_kernel_name, sizeof(wanted));
  pthread_mutex_unlock(&fail_mutex);
  if (!armed || in_callback) return 0;
  char name[sizeof(fail_kernel_name)] = "";
  if (__real_clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, sizeof(name), name, NULL) != CL_SUCCESS) return 0;
  return strcmp(name, wanted) ? 0 : status;
}

/* PoCL 3.1 races when a failed user event and another of the command's dependencies
 * finish at once: both finish the waiting command, and it aborts ("Assertion
 * `event->status == CL_SUBMITTED' failed", "PTHREAD ERROR in
 * pocl_lock_events_inorder()") or corrupts its heap (fixed in 2026, pocl PR 2216).
 * It also loses a command enqueued behind one that fails meanwhile (the command
 * never runs). So on PoCL the failing command is enqueued only once every other
 * dependency has finished, and fails at once, before anything is enqueued behind
 * it: a marker behind the same wait list stands for those dependencies (in an
 * in-order queue it also stands for the command before), every queue is flushed
 * (a dependency may come through another queue), and the enqueue waits for the
 * marker, then for PoCL to drop its own reference to it (the last thing PoCL does
 * when it finishes an event, after notifying the waiters). The failure tests'
 * dependencies all finish without the host's help, so the wait ends. */
static bool is_pocl(cl_command_queue queue) {
  cl_device_id device = NULL;
  cl_platform_id platform = NULL;
  char name[64] = "";
  return clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof(device), &device, NULL) == CL_SUCCESS &&
         __real_clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof(platform), &platform, NULL) == CL_SUCCESS &&
         __real_clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof(name) - 1, name, NULL) == CL_SUCCESS &&
         strstr(name, "Portable Computing Language") != NULL;
}

/* The command queues made and not released, for settle() to flush. */
static pthread_mutex_t queues_mutex = PTHREAD_MUTEX_INITIALIZER;
static cl_command_queue live_queues[64];
static size_t live_queue_count;

static void queue_made(cl_command_queue queue) {
  pthread_mutex_lock(&queues_mutex);
  if (queue && live_queue_count < sizeof(live_queues) / sizeof(live_queues[0]))
    live_queues[live_queue_count++] = queue;
  pthread_mutex_unlock(&queues_mutex);
}

static void queue_released(cl_command_queue queue) {
  pthread_mutex_lock(&queues_mutex);
  for (size_t q = 0; q < live_queue_count; ++q)
    if (live_queues[q] == queue) {
      live_queues[q] = live_queues[--live_queue_count];
      break;
    }
  pthread_mutex_unlock(&queues_mutex);
}

/* Waits until the commands of wait_list and, in an in-order queue, the one before
 * have finished, and PoCL has notified their waiters. */
static void settle(cl_command_queue queue, cl_uint num_events, const cl_event* wait_list) {
  cl_event before = NULL;
  if (__real_clEnqueueMarkerWithWaitList(queue, num_events, wait_list, &before) != CL_SUCCESS) return;
  pthread_mutex_lock(&queues_mutex);
  for (size_t q = 0; q < live_queue_count; ++q) __real_clFlush(live_queues[q]);
  pthread_mutex_unlock(&queues_mutex);
  __real_clWaitForEvents(1, &before);
  for (int polls = 0; polls < 20000; ++polls) { /* at most 2 s */
    cl_uint references = 0;
    if (__real_clGetEventInfo(before, CL_EVENT_REFERENCE_COUNT, sizeof(references), &references, NULL) !=
            CL_SUCCESS ||
        references <= 1)
      break;
    struct timespec pause = {0, 100000};
    nanosleep(&pause, NULL);
  }
  __real_clReleaseEvent(before);
}

/* Enqueues the kernel behind a new user event and then fails that event. An error
 * making the event is returned as the enqueue's: the test sees it, nothing hides it. */
static cl_int enqueue_failing(cl_int status, cl_command_queue queue, cl_kernel kernel, cl_uint work_dim,
                              const size_t* offset, const size_t* global, const size_t* local, cl_uint num_events,
                              const cl_event* wait_list, cl_event* event) {
  cl_context context = NULL;
  cl_int error = clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof(context), &context, NULL);
  if (error != CL_SUCCESS) return error;
  cl_event user = __real_clCreateUserEvent(context, &error);
  if (error != CL_SUCCESS) return error;
  cl_event* waits = malloc((num_events + 1) * sizeof(cl_event));
  if (!waits) {
    __real_clReleaseEvent(user);
    return CL_OUT_OF_HOST_MEMORY;
  }
  if (num_events) memcpy(waits, wait_list, num_events * sizeof(cl_event));
  waits[num_events] = user;
  if (is_pocl(queue)) settle(queue, num_events, wait_list);
  error = __real_clEnqueueNDRangeKernel(queue, kernel, work_dim, offset, global, local, num_events + 1, waits, event);
  free(waits);
  __real_clSetUserEventStatus(user, status);
  pthread_mutex_lock(&fail_mutex);
  if (failed_event_count == failed_event_capacity) {
    size_t capacity = failed_event_capacity ? 2 * failed_event_capacity : 16;
    cl_event* grown = realloc(failed_events, capacity * sizeof(cl_event));
    if (grown) {
      failed_events = grown;
      failed_event_capacity = capacity;
    }
  }
  if (failed_event_count < failed_event_capacity) failed_events[failed_event_count++] = user;
  else __real_clReleaseEvent(user); /* out of memory: released early rather than lost */
  pthread_mutex_unlock(&fail_mutex);
  if (error == CL_SUCCESS) {
    atomic_fetch_add(&failed_kernel_count, 1);
    char name[128] = "";
    clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, sizeof(name), name, NULL);
    fprintf(stderr, "hgr-fault-shim: %s fails on the device with %s\n", name, hgr_opencl_error_name(status));
  }
  return error;
}

/* ---- wrappers ---------------------------------------------------------------------- */

#define CALLER __builtin_return_address(0)
/* Declares __real_name (the driver's) and __wrap_name (ours), then defines ours. */
#define WRAP(ret, name, params) \
  ret __real_##name params;     \
  ret __wrap_##name params;     \
  ret __wrap_##name params
/* For functions returning cl_int. */
#define INJECT_INT(name)                                   \
  do {                                                     \
    cl_int injected_error_;                                \
    if (inject(#name, CALLER, &injected_error_)) return injected_error_; \
  } while (0)
/* For functions returning an object and an error through errcode_ret. */
#define INJECT_PTR(name, errcode_ret)                      \
  do {                                                     \
    cl_int injected_error_;                                \
    if (inject(#name, CALLER, &injected_error_)) {         \
      if (errcode_ret) *(errcode_ret) = injected_error_;   \
      return NULL;                                         \
    }                                                      \
  } while (0)

static void created_if(kind_t kind, const void* object) {
  if (object) atomic_fetch_add(&created[kind], 1);
}
/* An enqueue that succeeded and returned an event created one. */
static cl_int enqueued(cl_int error, const cl_event* event) {
  if (error == CL_SUCCESS && event && *event) atomic_fetch_add(&created[KIND_EVENT], 1);
  return error;
}
static cl_int released_if(kind_t kind, cl_int error) {
  if (error == CL_SUCCESS) atomic_fetch_add(&released[kind], 1);
  return error;
}

/* Platforms and devices */
WRAP(cl_int, clGetPlatformIDs, (cl_uint num_entries, cl_platform_id* platforms, cl_uint* num_platforms)) {
  INJECT_INT(clGetPlatformIDs);
  return __real_clGetPlatformIDs(num_entries, platforms, num_platforms);
}
WRAP(cl_int, clGetPlatformInfo,
     (cl_platform_id platform, cl_platform_info param, size_t size, void* value, size_t* size_ret)) {
  INJECT_INT(clGetPlatformInfo);
  return __real_clGetPlatformInfo(platform, param, size, value, size_ret);
}
WRAP(cl_int, clGetDeviceIDs,
     (cl_platform_id platform, cl_device_type type, cl_uint num_entries, cl_device_id* devices, cl_uint* num_devices)) {
  INJECT_INT(clGetDeviceIDs);
  return __real_clGetDeviceIDs(platform, type, num_entries, devices, num_devices);
}
WRAP(cl_int, clGetDeviceInfo, (cl_device_id device, cl_device_info param, size_t size, void* value, size_t* size_ret)) {
  INJECT_INT(clGetDeviceInfo);
  return __real_clGetDeviceInfo(device, param, size, value, size_ret);
}
WRAP(cl_int, clGetHostTimer, (cl_device_id device, cl_ulong* host_timestamp)) {
  INJECT_INT(clGetHostTimer);
  return __real_clGetHostTimer(device, host_timestamp);
}
WRAP(cl_int, clGetDeviceAndHostTimer, (cl_device_id device, cl_ulong* device_timestamp, cl_ulong* host_timestamp)) {
  INJECT_INT(clGetDeviceAndHostTimer);
  return __real_clGetDeviceAndHostTimer(device, device_timestamp, host_timestamp);
}

/* Contexts and queues */
WRAP(cl_context, clCreateContext,
     (const cl_context_properties* properties, cl_uint num_devices, const cl_device_id* devices,
      void(CL_CALLBACK* notify)(const char*, const void*, size_t, void*), void* user_data, cl_int* errcode_ret)) {
  INJECT_PTR(clCreateContext, errcode_ret);
  cl_context context = __real_clCreateContext(properties, num_devices, devices, notify, user_data, errcode_ret);
  created_if(KIND_CONTEXT, context);
  return context;
}
WRAP(cl_int, clReleaseContext, (cl_context context)) {
  count_only("clReleaseContext", CALLER);
  return released_if(KIND_CONTEXT, __real_clReleaseContext(context));
}
WRAP(cl_command_queue, clCreateCommandQueue,
     (cl_context context, cl_device_id device, cl_command_queue_properties properties, cl_int* errcode_ret)) {
  INJECT_PTR(clCreateCommandQueue, errcode_ret);
  cl_command_queue queue = __real_clCreateCommandQueue(context, device, properties, errcode_ret);
  created_if(KIND_QUEUE, queue);
  queue_made(queue);
  return queue;
}
WRAP(cl_int, clReleaseCommandQueue, (cl_command_queue queue)) {
  count_only("clReleaseCommandQueue", CALLER);
  queue_released(queue);
  return released_if(KIND_QUEUE, __real_clReleaseCommandQueue(queue));
}
WRAP(cl_int, clFlush, (cl_command_queue queue)) {
  INJECT_INT(clFlush);
  return __real_clFlush(queue);
}

/* Buffers */
WRAP(cl_mem, clCreateBuffer, (cl_context context, cl_mem_flags flags, size_t size, void* host_ptr, cl_int* errcode_ret)) {
  INJECT_PTR(clCreateBuffer, errcode_ret);
  cl_mem mem = __real_clCreateBuffer(context, flags, size, host_ptr, errcode_ret);
  created_if(KIND_MEM, mem);
  return mem;
}
WRAP(cl_int, clRetainMemObject, (cl_mem mem)) {
  count_only("clRetainMemObject", CALLER);
  cl_int error = __real_clRetainMemObject(mem);
  if (error == CL_SUCCESS) atomic_fetch_add(&retained[KIND_MEM], 1);
  return error;
}
WRAP(cl_int, clReleaseMemObject, (cl_mem mem)) {
  count_only("clReleaseMemObject", CALLER);
  return released_if(KIND_MEM, __real_clReleaseMemObject(mem));
}

WRAP(cl_int, clGetMemObjectInfo, (cl_mem mem, cl_mem_info param, size_t size, void* value, size_t* size_ret)) {
  INJECT_INT(clGetMemObjectInfo);
  return __real_clGetMemObjectInfo(mem, param, size, value, size_ret);
}

/* Programs and kernels */
WRAP(cl_program, clCreateProgramWithSource,
     (cl_context context, cl_uint count, const char** strings, const size_t* lengths, cl_int* errcode_ret)) {
  INJECT_PTR(clCreateProgramWithSource, errcode_ret);
  cl_program program = __real_clCreateProgramWithSource(context, count, strings, lengths, errcode_ret);
  created_if(KIND_PROGRAM, program);
  return program;
}
WRAP(cl_program, clCreateProgramWithBinary,
     (cl_context context, cl_uint num_devices, const cl_device_id* devices, const size_t* lengths,
      const unsigned char** binaries, cl_int* binary_status, cl_int* errcode_ret)) {
  INJECT_PTR(clCreateProgramWithBinary, errcode_ret);
  cl_program program =
      __real_clCreateProgramWithBinary(context, num_devices, devices, lengths, binaries, binary_status, errcode_ret);
  created_if(KIND_PROGRAM, program);
  return program;
}
WRAP(cl_int, clBuildProgram,
     (cl_program program, cl_uint num_devices, const cl_device_id* devices, const char* options,
      void(CL_CALLBACK* notify)(cl_program, void*), void* user_data)) {
  INJECT_INT(clBuildProgram);
  return __real_clBuildProgram(program, num_devices, devices, options, notify, user_data);
}
WRAP(cl_int, clGetProgramBuildInfo,
     (cl_program program, cl_device_id device, cl_program_build_info param, size_t size, void* value, size_t* size_ret)) {
  INJECT_INT(clGetProgramBuildInfo);
  return __real_clGetProgramBuildInfo(program, device, param, size, value, size_ret);
}
WRAP(cl_int, clGetProgramInfo, (cl_program program, cl_program_info param, size_t size, void* value, size_t* size_ret)) {
  INJECT_INT(clGetProgramInfo);
  return __real_clGetProgramInfo(program, param, size, value, size_ret);
}
WRAP(cl_int, clRetainProgram, (cl_program program)) {
  count_only("clRetainProgram", CALLER);
  cl_int error = __real_clRetainProgram(program);
  if (error == CL_SUCCESS) atomic_fetch_add(&retained[KIND_PROGRAM], 1);
  return error;
}
WRAP(cl_int, clReleaseProgram, (cl_program program)) {
  count_only("clReleaseProgram", CALLER);
  return released_if(KIND_PROGRAM, __real_clReleaseProgram(program));
}
WRAP(cl_kernel, clCreateKernel, (cl_program program, const char* name, cl_int* errcode_ret)) {
  INJECT_PTR(clCreateKernel, errcode_ret);
  cl_kernel kernel = __real_clCreateKernel(program, name, errcode_ret);
  created_if(KIND_KERNEL, kernel);
  return kernel;
}
WRAP(cl_int, clReleaseKernel, (cl_kernel kernel)) {
  count_only("clReleaseKernel", CALLER);
  return released_if(KIND_KERNEL, __real_clReleaseKernel(kernel));
}
WRAP(cl_int, clSetKernelArg, (cl_kernel kernel, cl_uint index, size_t size, const void* value)) {
  INJECT_INT(clSetKernelArg);
  return __real_clSetKernelArg(kernel, index, size, value);
}
WRAP(cl_int, clGetKernelInfo, (cl_kernel kernel, cl_kernel_info param, size_t size, void* value, size_t* size_ret)) {
  INJECT_INT(clGetKernelInfo);
  return __real_clGetKernelInfo(kernel, param, size, value, size_ret);
}
WRAP(cl_int, clGetKernelWorkGroupInfo,
     (cl_kernel kernel, cl_device_id device, cl_kernel_work_group_info param, size_t size, void* value,
      size_t* size_ret)) {
  INJECT_INT(clGetKernelWorkGroupInfo);
  return __real_clGetKernelWorkGroupInfo(kernel, device, param, size, value, size_ret);
}

/* Events */
WRAP(cl_event, clCreateUserEvent, (cl_context context, cl_int* errcode_ret)) {
  INJECT_PTR(clCreateUserEvent, errcode_ret);
  cl_event event = __real_clCreateUserEvent(context, errcode_ret);
  created_if(KIND_EVENT, event);
  return event;
}
WRAP(cl_int, clSetUserEventStatus, (cl_event event, cl_int status)) {
  INJECT_INT(clSetUserEventStatus);
  return __real_clSetUserEventStatus(event, status);
}
WRAP(cl_int, clRetainEvent, (cl_event event)) {
  count_only("clRetainEvent", CALLER);
  cl_int error = __real_clRetainEvent(event);
  if (error == CL_SUCCESS) atomic_fetch_add(&retained[KIND_EVENT], 1);
  return error;
}
WRAP(cl_int, clReleaseEvent, (cl_event event)) {
  count_only("clReleaseEvent", CALLER);
  return released_if(KIND_EVENT, __real_clReleaseEvent(event));
}
WRAP(cl_int, clGetEventInfo, (cl_event event, cl_event_info param, size_t size, void* value, size_t* size_ret)) {
  INJECT_INT(clGetEventInfo);
  return __real_clGetEventInfo(event, param, size, value, size_ret);
}
WRAP(cl_int, clGetEventProfilingInfo,
     (cl_event event, cl_profiling_info param, size_t size, void* value, size_t* size_ret)) {
  INJECT_INT(clGetEventProfilingInfo);
  return __real_clGetEventProfilingInfo(event, param, size, value, size_ret);
}
WRAP(cl_int, clWaitForEvents, (cl_uint count, const cl_event* events)) {
  INJECT_INT(clWaitForEvents);
  return __real_clWaitForEvents(count, events);
}

/* A callback runs through a trampoline that marks its thread as inside a callback
 * (no injection there). Registrations are kept in a list until they run, so one
 * whose event never completes is counted (pending_callbacks), not leaked. */
typedef struct callback_t {
  void(CL_CALLBACK* function)(cl_event, cl_int, void*);
  void* user_data;
  struct callback_t *prev, *next;
} callback_t;
static callback_t callbacks = {NULL, NULL, &callbacks, &callbacks};
static pthread_mutex_t callback_mutex = PTHREAD_MUTEX_INITIALIZER;

static void unlink_callback(callback_t* callback) {
  pthread_mutex_lock(&callback_mutex);
  callback->prev->next = callback->next;
  callback->next->prev = callback->prev;
  pthread_mutex_unlock(&callback_mutex);
  atomic_fetch_sub(&pending_callbacks, 1);
}

static void CL_CALLBACK trampoline(cl_event event, cl_int status, void* user_data) {
  callback_t* callback = user_data;
  atomic_fetch_add(&running_callbacks, 1);
  unlink_callback(callback);
  bool was_in_callback = in_callback;
  in_callback = true;
  callback->function(event, status, callback->user_data);
  in_callback = was_in_callback;
  free(callback);
  atomic_fetch_sub(&running_callbacks, 1);
}

WRAP(cl_int, clSetEventCallback,
     (cl_event event, cl_int type, void(CL_CALLBACK* function)(cl_event, cl_int, void*), void* user_data)) {
  INJECT_INT(clSetEventCallback);
  callback_t* callback = malloc(sizeof(*callback));
  if (!callback) return CL_OUT_OF_HOST_MEMORY;
  callback->function = function;
  callback->user_data = user_data;
  atomic_fetch_add(&pending_callbacks, 1);
  pthread_mutex_lock(&callback_mutex);
  callback->next = callbacks.next;
  callback->prev = &callbacks;
  callbacks.next->prev = callback;
  callbacks.next = callback;
  pthread_mutex_unlock(&callback_mutex);
  cl_int error = __real_clSetEventCallback(event, type, trampoline, callback);
  if (error != CL_SUCCESS) {
    unlink_callback(callback);
    free(callback);
  }
  return error;
}

/* Commands */
WRAP(cl_int, clEnqueueNDRangeKernel,
     (cl_command_queue queue, cl_kernel kernel, cl_uint work_dim, const size_t* offset, const size_t* global,
      const size_t* local, cl_uint num_events, const cl_event* wait_list, cl_event* event)) {
  INJECT_INT(clEnqueueNDRangeKernel);
  cl_int failure = kernel_failure(kernel);
  if (failure)
    return enqueued(
        enqueue_failing(failure, queue, kernel, work_dim, offset, global, local, num_events, wait_list, event), event);
  return enqueued(
      __real_clEnqueueNDRangeKernel(queue, kernel, work_dim, offset, global, local, num_events, wait_list, event),
      event);
}
WRAP(cl_int, clEnqueueCopyBuffer,
     (cl_command_queue queue, cl_mem src, cl_mem dst, size_t src_offset, size_t dst_offset, size_t size,
      cl_uint num_events, const cl_event* wait_list, cl_event* event)) {
  INJECT_INT(clEnqueueCopyBuffer);
  return enqueued(
      __real_clEnqueueCopyBuffer(queue, src, dst, src_offset, dst_offset, size, num_events, wait_list, event), event);
}
WRAP(cl_int, clEnqueueReadBuffer,
     (cl_command_queue queue, cl_mem mem, cl_bool blocking, size_t offset, size_t size, void* ptr, cl_uint num_events,
      const cl_event* wait_list, cl_event* event)) {
  INJECT_INT(clEnqueueReadBuffer);
  return enqueued(__real_clEnqueueReadBuffer(queue, mem, blocking, offset, size, ptr, num_events, wait_list, event),
                  event);
}
WRAP(cl_int, clEnqueueWriteBuffer,
     (cl_command_queue queue, cl_mem mem, cl_bool blocking, size_t offset, size_t size, const void* ptr,
      cl_uint num_events, const cl_event* wait_list, cl_event* event)) {
  INJECT_INT(clEnqueueWriteBuffer);
  return enqueued(__real_clEnqueueWriteBuffer(queue, mem, blocking, offset, size, ptr, num_events, wait_list, event),
                  event);
}
WRAP(void*, clEnqueueMapBuffer,
     (cl_command_queue queue, cl_mem mem, cl_bool blocking, cl_map_flags flags, size_t offset, size_t size,
      cl_uint num_events, const cl_event* wait_list, cl_event* event, cl_int* errcode_ret)) {
  INJECT_PTR(clEnqueueMapBuffer, errcode_ret);
  cl_int error = CL_SUCCESS;
  void* pointer =
      __real_clEnqueueMapBuffer(queue, mem, blocking, flags, offset, size, num_events, wait_list, event, &error);
  if (errcode_ret) *errcode_ret = error;
  enqueued(error, event);
  return pointer;
}
WRAP(cl_int, clEnqueueUnmapMemObject,
     (cl_command_queue queue, cl_mem mem, void* pointer, cl_uint num_events, const cl_event* wait_list,
      cl_event* event)) {
  INJECT_INT(clEnqueueUnmapMemObject);
  return enqueued(__real_clEnqueueUnmapMemObject(queue, mem, pointer, num_events, wait_list, event), event);
}
WRAP(cl_int, clEnqueueMarkerWithWaitList,
     (cl_command_queue queue, cl_uint num_events, const cl_event* wait_list, cl_event* event)) {
  INJECT_INT(clEnqueueMarkerWithWaitList);
  return enqueued(__real_clEnqueueMarkerWithWaitList(queue, num_events, wait_list, event), event);
}
