# TestBackendTest times plans on the test back end's device-memory device
# with the tools' timer (tools/common/Timing.cpp).
target_link_libraries(${t} PRIVATE sk_tools_common)
