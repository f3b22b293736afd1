# cmake -DDIR=<dir> -P testbed.cmake
# Makes an OCL_ICD_VENDORS directory: the system's .icd files plus one naming
# Oclgrind's ICD library, which Debian's oclgrind package does not register.
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
file(GLOB system_icds "/etc/OpenCL/vendors/*.icd")
foreach(icd IN LISTS system_icds)
  file(COPY "${icd}" DESTINATION "${DIR}")
endforeach()
set(oclgrind_icd "/usr/lib/oclgrind/liboclgrind-rt-icd.so")
if(EXISTS "${oclgrind_icd}")
  file(WRITE "${DIR}/oclgrind.icd" "${oclgrind_icd}\n")
endif()
file(GLOB made "${DIR}/*.icd")
list(LENGTH made count)
message(STATUS "test bed: ${count} ICD file(s) in ${DIR}")
