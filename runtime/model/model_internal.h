/* What the model's other files (bundle.c) take from the model object (model.c). */
#ifndef HGR_MODEL_INTERNAL_H_
#define HGR_MODEL_INTERNAL_H_

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

#endif /* HGR_MODEL_INTERNAL_H_ */
