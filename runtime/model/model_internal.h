/* What the model's other files (bundle.c) take from the model object (model.c). */
#ifndef HGR_MODEL_INTERNAL_H_
#define HGR_MODEL_INTERNAL_H_

#include "hgr/model.h"

/* The model's program pool (its specializations' programs), instance (NULL for a
 * model that only makes graphs) and allocator. */
hgr_program_pool_t* hgr__model_programs(const hgr_model_t* model);
hgr_instance_t* hgr__model_instance(const hgr_model_t* model);
hgr_allocator_t hgr__model_allocator(const hgr_model_t* model);

#endif /* HGR_MODEL_INTERNAL_H_ */
