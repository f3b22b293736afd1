/* The model examples (cnn, mlp), written by hgr_make_examples. */
#ifndef HGR_EXAMPLES_MODELS_H_
#define HGR_EXAMPLES_MODELS_H_

#include <stdbool.h>

/* Writes cnn.* and mlp.* (graph, params, input, expected output) into dir. */
bool hgr_examples_write_models(const char* dir);

#endif /* HGR_EXAMPLES_MODELS_H_ */
