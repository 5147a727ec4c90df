# Install rules and the CMake package (find_package(opforge)): cmake --install build --prefix P
# gives P/bin/opforge (and opforge-onnx-tests, tools/onnx_tests), P/lib/libopforge.so,
# libopforge_ops.so, libopforge_author.a (the authoring runtime op libraries link),
# P/include/opforge/*.h (the public headers) and P/lib/cmake/opforge.
# Everything is relative to P: binaries find their libraries through RUNPATH $ORIGIN/../lib.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(OPFORGE_INSTALL_CMAKEDIR lib/cmake/opforge)
set_target_properties(opforge_cli PROPERTIES EXPORT_NAME cli)

install(TARGETS opforge opforge_author opforge_cli EXPORT opforgeTargets
        RUNTIME DESTINATION bin LIBRARY DESTINATION lib ARCHIVE DESTINATION lib)
install(TARGETS opforge_ops LIBRARY DESTINATION lib)
install(DIRECTORY include/opforge DESTINATION include FILES_MATCHING PATTERN "*.h")
install(EXPORT opforgeTargets NAMESPACE opforge:: DESTINATION ${OPFORGE_INSTALL_CMAKEDIR})

# The plugin ABI version the installed headers define (opforge/plugin_abi.h); a change to that
# header configures again, so the package never states a stale version.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
                                       ${PROJECT_SOURCE_DIR}/include/opforge/plugin_abi.h)
file(STRINGS include/opforge/plugin_abi.h _abi REGEX "^#define OPFORGE_PLUGIN_ABI_VERSION ")
string(REGEX REPLACE ".*VERSION ([0-9]+)u?.*" "\\1" OPFORGE_PLUGIN_ABI_VERSION "${_abi}")

configure_package_config_file(cmake/opforgeConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/cmake/opforgeConfig.cmake
                              INSTALL_DESTINATION ${OPFORGE_INSTALL_CMAKEDIR})
# Before 1.0 a minor version may break the API: 0.1 accepts 0.1.x only.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/cmake/opforgeConfigVersionBasic.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
# ... and the plugin ABI: a project whose op libraries must load into an opforge of plugin ABI N
# sets opforge_PLUGIN_ABI_VERSION_REQUIRED to N before find_package(opforge); a package of another
# ABI is then not accepted, with CMake's message naming both ABIs in the version it shows.
set(_abi_check [=[
# opforgeConfigVersion.cmake: the version check (opforgeConfigVersionBasic.cmake, CMake's
# SameMinorVersion), then the plugin ABI (opforge/plugin_abi.h, OPFORGE_PLUGIN_ABI_VERSION).
include("${CMAKE_CURRENT_LIST_DIR}/opforgeConfigVersionBasic.cmake")
set(PACKAGE_PLUGIN_ABI_VERSION @ABI@)
if(DEFINED opforge_PLUGIN_ABI_VERSION_REQUIRED
   AND NOT "${opforge_PLUGIN_ABI_VERSION_REQUIRED}" STREQUAL "${PACKAGE_PLUGIN_ABI_VERSION}")
  set(PACKAGE_VERSION "${PACKAGE_VERSION} (plugin ABI ${PACKAGE_PLUGIN_ABI_VERSION}, not the plugin ABI \
${opforge_PLUGIN_ABI_VERSION_REQUIRED} of opforge_PLUGIN_ABI_VERSION_REQUIRED)")
  set(PACKAGE_VERSION_UNSUITABLE TRUE)
endif()
]=])
string(REPLACE "@ABI@" "${OPFORGE_PLUGIN_ABI_VERSION}" _abi_check "${_abi_check}")
file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/cmake/opforgeConfigVersion.cmake CONTENT "${_abi_check}" @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/cmake/opforgeConfig.cmake
              ${CMAKE_BINARY_DIR}/cmake/opforgeConfigVersion.cmake
              ${CMAKE_BINARY_DIR}/cmake/opforgeConfigVersionBasic.cmake
        DESTINATION ${OPFORGE_INSTALL_CMAKEDIR})
