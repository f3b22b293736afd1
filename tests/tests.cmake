# Every CTest entry. hgr_test() is defined in CMakeLists.txt beside this file.

# Status and devices (foundation)
hgr_test(NAME status_unit SOURCE test_status.c)
hgr_test(NAME device_spec_unit SOURCE test_device_spec.c)
hgr_test(NAME devices_testbed SOURCE test_devices.c ARGS testbed)
hgr_test(NAME devices_context_per_device SOURCE test_devices.c ARGS context-per-device)

# Graph, params, npy
hgr_test(NAME graph_loader SOURCE test_graph.c)
hgr_test(NAME params_format SOURCE test_params.c)
hgr_test(NAME npy_format SOURCE test_npy.c)
hgr_test(NAME dtype_strings SOURCE test_tensor.c)
