/* y = alpha * x, one work-item per element */
__kernel void scale(__global const float* x, __global float* y, uint n, float alpha) {
  size_t i = get_global_id(0);
  if (i < n) y[i] = alpha * x[i];
}
