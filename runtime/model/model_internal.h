/* What the model's other files (model_run.c, bundle.c) take from the model object
 * (model.c). */
#ifndef HGR_MODEL_INTERNAL_H_
#define HGR_MODEL_INTERNAL_H_

#include <stdbool.h>
#include <stdint.h>

#include "hgr/model.h"

/* The model's program pool (its specializations' programs), instance (NULL for a
 * model that only makes graphs) and allocator. */
hgr_program_pool_t* hgr__model_programs(const hgr_model_t* model);
hgr_instance_t* hgr__model_instance(const hgr_model_t* model);
hgr_allocator_t hgr__model_allocator(const hgr_model_t* model);
/* Binds the model's graphs (no device_index column: key -1) to the device of spec
 * (borrowed: the instance's) where its options name no binding and no placement:
 * a bundle made for one device runs there by default. Before any specialization. */
void hgr__model_bind_default(hgr_model_t* model, const char* spec);

/* ---- for the runs (model_run.c) ---------------------------------------------------- */

/* A value the stage before read on the host: what an ONNX import in stages decides
 * with (hgr__onnx_decision_t). */
typedef struct hgr__decision_t {
  hgr_dtype_t dtype;
  int32_t ndim;
  int64_t shape[HGR_MAX_DIMS];
  void* data;
  size_t bytes;
} hgr__decision_t;

/* Where a specialization's graph ends (hgr__onnx_stage_t's out): cut, its outputs
 * are the carried values, the decision and the payloads; else the model's outputs. */
typedef struct hgr__stage_end_t {
  bool cut;
  uint32_t at;
  bool after;
  size_t at_asked;
  bool in_loop;
  size_t carried, payloads;
  char label[160];
} hgr__stage_end_t;

/* Frees count decisions and their data. */
void hgr__decisions_free(hgr_allocator_t allocator, hgr__decision_t* decisions, size_t count);
/* hgr_model_specialize's checks of the inputs (buffers NULL, or per input a device
 * value's buffer: its size too); INVALID_ARGUMENT naming the input. */
hgr_status_t hgr__model_check_inputs(const hgr_model_t* model, const hgr_model_input_t* inputs, size_t count,
                                     const struct hgr_device_buffer_t* const* buffers);
/* The first stage's specialization of checked inputs, held for the caller. */
hgr_status_t hgr__model_specialize(hgr_model_t* model, const hgr_model_input_t* inputs,
                                   hgr_specialization_t** out_specialization);
/* The specialization of the stage after s (which ends a stage), made with decisions
 * (s's and the one its run took: s's decision count + 1; taken, also on failure),
 * held for the caller: found in the cache, or made and kept. *out_retry (with an
 * error): the import found inputs that decide shapes (a new key for the first stage). */
hgr_status_t hgr__model_stage_after(hgr_model_t* model, const hgr_model_input_t* inputs, hgr_specialization_t* s,
                                    hgr__decision_t* decisions, hgr_specialization_t** out_next, bool* out_retry);
/* Where s's graph ends, and the decisions it was made with (*out_count of them). */
const hgr__stage_end_t* hgr__specialization_end(const hgr_specialization_t* s);
const hgr__decision_t* hgr__specialization_decisions(const hgr_specialization_t* s, size_t* out_count);
/* Adds to the report's decisions and stage_runs. */
void hgr__model_count_stage(hgr_model_t* model, uint64_t decisions, uint64_t stage_runs);

#endif /* HGR_MODEL_INTERNAL_H_ */
